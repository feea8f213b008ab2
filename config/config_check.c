/*
 * config_check.c - what `slop-milter -n` checks beyond the file itself:
 * that the paths the daemon needs after start-up are there, so that a
 * "configuration OK" is not followed by a reply that cannot be sent or a
 * StateDir that cannot be made.
 *
 * Reads the file system and the user database only (stat, access,
 * getpwuid_r); never logs. Thread-safe.
 */
#include <errno.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "state.h"

int
config_check_sendmail(const struct config *cfg, struct config_error *err)
{
    struct stat sb;

    if (!cfg->reply_enable || cfg->reply_transport != CONFIG_TRANSPORT_SENDMAIL)
        return 0;
    if (stat(cfg->sendmail_path, &sb) < 0) {
        int e = errno;

        snprintf(err->text, sizeof(err->text), "SendmailPath '%s': %s", cfg->sendmail_path,
                 strerror(e));
        return -e;
    }
    if (!S_ISREG(sb.st_mode) || access(cfg->sendmail_path, X_OK) < 0) {
        snprintf(err->text, sizeof(err->text),
                 "SendmailPath '%s': not an executable file (ReplyTransport sendmail runs it)",
                 cfg->sendmail_path);
        return -EACCES;
    }
    return 0;
}

int
config_check_state_parent(const struct config *cfg, struct config_error *err)
{
    char parent[PATH_MAX];
    struct stat sb;
    size_t len;
    char *slash;

    if (stat(cfg->state_dir, &sb) == 0) {
        if (S_ISDIR(sb.st_mode))
            return 0;
        snprintf(err->text, sizeof(err->text), "StateDir '%s': not a directory", cfg->state_dir);
        return -ENOTDIR;
    }
    len = strlen(cfg->state_dir);
    if (len >= sizeof(parent))
        return -ENAMETOOLONG;
    memcpy(parent, cfg->state_dir, len + 1);
    while (len > 1 && parent[len - 1] == '/')
        parent[--len] = '\0';
    slash = strrchr(parent, '/');
    if (slash == NULL)
        return 0; /* the parser takes absolute paths only */
    if (slash == parent)
        slash[1] = '\0';
    else
        *slash = '\0';
    if (stat(parent, &sb) == 0 && S_ISDIR(sb.st_mode))
        return 0;
    snprintf(err->text, sizeof(err->text),
             "StateDir '%s': its parent '%s' is not a directory (only StateDir itself is "
             "created)",
             cfg->state_dir, parent);
    return -ENOENT;
}

void
config_owner_name(uid_t uid, gid_t gid, char *buf, size_t size)
{
    char pwbuf[4096], grbuf[4096];
    struct passwd pw, *pwp = NULL;
    struct group gr, *grp = NULL;
    char us[32], gs[32];

    snprintf(us, sizeof(us), "%lu", (unsigned long)uid);
    snprintf(gs, sizeof(gs), "%lu", (unsigned long)gid);
    (void)getpwuid_r(uid, &pw, pwbuf, sizeof(pwbuf), &pwp);
    (void)getgrgid_r(gid, &gr, grbuf, sizeof(grbuf), &grp);
    snprintf(buf, size, "%s:%s", pwp != NULL ? pwp->pw_name : us, grp != NULL ? grp->gr_name : gs);
}

int
config_check_state_owner(const struct config *cfg, uid_t uid, gid_t gid, struct config_error *err)
{
    char path[PATH_MAX], owner[64], runner[64];
    uid_t fuid;
    gid_t fgid;
    int r;

    if (uid == 0)
        return 0; /* root opens anything */
    r = state_check_owner(cfg->state_dir, uid, path, sizeof(path), &fuid, &fgid);
    if (r <= 0)
        return r;
    config_owner_name(fuid, fgid, owner, sizeof(owner));
    config_owner_name(uid, gid, runner, sizeof(runner));
    snprintf(err->text, sizeof(err->text),
             "StateDir '%.150s': '%.150s' belongs to %s, but the daemon runs as %.*s and "
             "could not write it; run: chown -R %s %.150s",
             cfg->state_dir, path, owner, (int)strcspn(runner, ":"), runner, runner,
             cfg->state_dir);
    return -EACCES;
}
