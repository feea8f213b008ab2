/*
 * statedir.c - find and open the state directory for slopctl's state
 * commands.
 *
 * The default is the daemon's own, so that both find the same state; a
 * writer that is not the state's owner is refused before it can leave
 * files the daemon cannot open. Single-threaded (a static buffer holds the
 * resolved path).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>
#include <unistd.h>

#include "backend.h"
#include "buildtree.h"
#include "config.h"
#include "state.h"
#include "statedir.h"

#define STATEDIR_DEFAULT "/var/lib/slop-milter"

const char *
statedir_resolve(const char *opt)
{
    static char dir[4096];
    const char *env;

    if (opt != NULL && opt[0] != '\0')
        return opt;
    env = getenv("STATE_DIRECTORY");
    if (env != NULL && env[0] == '/') {
        /* systemd passes a colon-separated list; the first is ours. */
        size_t n = strcspn(env, ":");

        if (n < sizeof(dir)) {
            memcpy(dir, env, n);
            dir[n] = '\0';
            return dir;
        }
    }
    /* The daemon's own default (config/config.c), so both find the same. */
    if (buildtree_dir() == NULL)
        return STATEDIR_DEFAULT;
    snprintf(dir, sizeof(dir), "%s/var/state", buildtree_dir());
    return dir;
}

/*
 * A writer that is not the state's owner leaves files the daemon cannot
 * open (root's learn made state.generation root:root 0640): refused, with
 * the command that works. EX_OK, or EX_NOPERM after the message.
 */
static int
owner_check(const char *dir)
{
    char path[4096], owner[160], me[160];
    uid_t uid;
    gid_t gid;
    int r = state_check_owner(dir, geteuid(), path, sizeof(path), &uid, &gid);

    if (r <= 0)
        return EX_OK; /* a file that cannot be looked at is state_open()'s to report */
    config_owner_name(uid, gid, owner, sizeof(owner));
    config_owner_name(geteuid(), getegid(), me, sizeof(me));
    fprintf(stderr,
            "slopctl: state '%s': '%s' belongs to %s, not %s; files written now would lock its "
            "owner out: run the command as %.*s (runuser -u %.*s -- slopctl ...)\n",
            dir, path, owner, me, (int)strcspn(owner, ":"), owner, (int)strcspn(owner, ":"), owner);
    return EX_NOPERM;
}

int
statedir_open(const char *dir, unsigned flags, struct state **ret)
{
    char buf[400];
    int r;

    *ret = NULL;
    if (!(flags & STATE_READONLY) && (r = owner_check(dir)) != EX_OK)
        return r;
    r = state_open(dir, flags, 0, ret);

    if (r == -EUCLEAN) {
        state_open_strerror(dir, r, buf, sizeof(buf));
        fprintf(stderr, "slopctl: state '%s': %s\n", dir, buf);
        return EX_CANTCREAT;
    }
    if (r < 0) {
        state_open_strerror(dir, r, buf, sizeof(buf));
        fprintf(stderr, "slopctl: cannot open state in '%s': %s\n", dir, buf);
        return r == -ENOENT ? EX_NOINPUT : r == -EACCES ? EX_NOPERM : EX_CANTCREAT;
    }
    r = backend_attach(*ret);
    if (r != 0)
        *ret = state_close(*ret);
    return r;
}
