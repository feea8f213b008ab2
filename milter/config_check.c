/*
 * config_check.c - what `slop-milter -n` checks beyond the file itself:
 * that the paths the daemon needs after start-up are there, so that a
 * "configuration OK" is not followed by a reply that cannot be sent or a
 * StateDir that cannot be made.
 *
 * Reads the file system only (stat, access); never logs. Thread-safe.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"

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
