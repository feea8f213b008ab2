/*
 * ids.c - UserID resolved with the reentrant look-ups, and the drop of
 * privileges: supplementary groups, group, then user, and a check that
 * root cannot be regained. Runs at start-up only, before threads.
 */
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "ids.h"
#include "log.h"

int
ids_resolve(const char *spec, struct ids *ret)
{
    char user[64], buf[16384];
    const char *colon;
    struct passwd pw, *pwp = NULL;
    size_t ul;

    memset(ret, 0, sizeof(*ret));
    if (spec == NULL || *spec == '\0')
        return 0;
    colon = strchr(spec, ':');
    ul = colon ? (size_t)(colon - spec) : strlen(spec);
    if (ul >= sizeof(user))
        return -ENAMETOOLONG;
    memcpy(user, spec, ul);
    user[ul] = '\0';
    if (getpwnam_r(user, &pw, buf, sizeof(buf), &pwp) != 0 || pwp == NULL) {
        fprintf(stderr, "slop-milter: UserID: no user '%s'\n", user);
        return -ENOENT;
    }
    ret->uid = pw.pw_uid;
    ret->gid = pw.pw_gid;
    if (colon) {
        struct group gr, *grp = NULL;

        if (getgrnam_r(colon + 1, &gr, buf, sizeof(buf), &grp) != 0 || grp == NULL) {
            fprintf(stderr, "slop-milter: UserID: no group '%s'\n", colon + 1);
            return -ENOENT;
        }
        ret->gid = gr.gr_gid;
    }
    snprintf(ret->user, sizeof(ret->user), "%s", user);
    ret->set = true;
    return 0;
}

uid_t
ids_run_uid(const struct ids *ids)
{
    return ids->set && geteuid() == 0 ? ids->uid : geteuid();
}

gid_t
ids_run_gid(const struct ids *ids)
{
    return ids->set && geteuid() == 0 ? ids->gid : getegid();
}

int
ids_drop(const struct ids *ids)
{
    if (!ids->set) {
        if (geteuid() == 0)
            log_warning("running as root: UserID is not set, so privileges are not dropped "
                        "(set UserID, e.g. slop-milter)");
        return 0;
    }
    if (geteuid() != 0) {
        if (geteuid() != ids->uid)
            log_warning("UserID '%s' ignored: not started as root", ids->user);
        return 0;
    }
    if (initgroups(ids->user, ids->gid) != 0 || setgid(ids->gid) != 0 || setuid(ids->uid) != 0) {
        char eb[128];

        log_error("cannot change to user '%s': %s, refusing to run as root", ids->user,
                  log_strerror(errno, eb, sizeof(eb)));
        return -EPERM;
    }
    if (ids->uid != 0 && setuid(0) == 0) {
        log_error("could regain root after changing to '%s', refusing to run", ids->user);
        return -EPERM;
    }
    return 0;
}
