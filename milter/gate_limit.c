/*
 * gate_limit.c - how many connections the task and descriptor limits
 * leave room for (MaxConnections 0).
 *
 * systemd's TasksMax is the pids controller's pids.max of the unit's
 * cgroup; a parent slice may set a lower one. Threads count as tasks.
 * A connection holds at most GATE_TASKS_PER_CONN threads (libmilter's
 * worker and, once it has scanned, its scan thread, scanner.c); the rest
 * of the daemon (main, signal, libmilter's listener, signal and pool
 * threads, the reply sender, GLib's) stays under GATE_RESERVED_TASKS.
 *
 * Reads /proc and /sys only; thread-safe.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "gate_limit.h"

#define GATE_CGROUP_LINE 1024
/* Descriptors of the daemon itself: state, logs, replies. */
#define GATE_FDS_RESERVED ((rlim_t)64)

/* pids.max in dir; 0 when absent or "max". */
static uint64_t
read_pids_max(const char *dir)
{
    char path[PATH_MAX + 32], buf[32];
    uint64_t v = 0;
    FILE *f;

    if (snprintf(path, sizeof(path), "%s/pids.max", dir) >= (int)sizeof(path))
        return 0;
    f = fopen(path, "re");
    if (f == NULL)
        return 0;
    if (fgets(buf, sizeof(buf), f) != NULL && buf[0] >= '0' && buf[0] <= '9')
        v = strtoull(buf, NULL, 10);
    fclose(f);
    return v;
}

/* The smallest pids.max from cgroup path rel under mount up to the root. */
static uint64_t
walk_up(const char *mount, const char *rel)
{
    char dir[PATH_MAX];
    uint64_t best = 0;

    if (snprintf(dir, sizeof(dir), "%s%s", mount, rel) >= (int)sizeof(dir))
        return 0;
    for (;;) {
        uint64_t v = read_pids_max(dir);
        char *slash;

        if (v > 0 && (best == 0 || v < best))
            best = v;
        slash = strrchr(dir, '/');
        if (slash == NULL || (size_t)(slash - dir) < strlen(mount))
            break;
        *slash = '\0';
    }
    return best;
}

/* "0::/path" (cgroup v2) or "N:...pids...:/path" (v1). */
static uint64_t
cgroup_pids_max(void)
{
    char line[GATE_CGROUP_LINE];
    uint64_t best = 0;
    FILE *f = fopen("/proc/self/cgroup", "re");

    if (f == NULL)
        return 0;
    while (fgets(line, sizeof(line), f) != NULL) {
        char *c1 = strchr(line, ':'), *c2, *nl;
        uint64_t v = 0;

        if (c1 == NULL || (c2 = strchr(c1 + 1, ':')) == NULL)
            continue;
        nl = strchr(c2, '\n');
        if (nl)
            *nl = '\0';
        *c2 = '\0';
        if (c1[1] == '\0')
            v = walk_up("/sys/fs/cgroup", c2 + 1);
        else if (strstr(c1 + 1, "pids") != NULL)
            v = walk_up("/sys/fs/cgroup/pids", c2 + 1);
        if (v > 0 && (best == 0 || v < best))
            best = v;
    }
    fclose(f);
    return best;
}

uint64_t
gate_task_limit(void)
{
    uint64_t best = cgroup_pids_max();
    struct rlimit rl;

    /* RLIMIT_NPROC binds every user but root. */
    if (geteuid() != 0 && getrlimit(RLIMIT_NPROC, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
        (best == 0 || (uint64_t)rl.rlim_cur < best))
        best = (uint64_t)rl.rlim_cur;
    return best;
}

unsigned
gate_auto_cap(uint64_t limit)
{
    uint64_t cap = GATE_DEFAULT_CAP;
    struct rlimit rl;

    if (limit > 0) {
        cap = limit > GATE_RESERVED_TASKS + GATE_TASKS_PER_CONN
                  ? (limit - GATE_RESERVED_TASKS) / GATE_TASKS_PER_CONN
                  : 1;
    }
    /* Each connection is a descriptor, and its scan may open more. */
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) {
        uint64_t fds =
            rl.rlim_cur > 2 * GATE_FDS_RESERVED ? (rl.rlim_cur - GATE_FDS_RESERVED) / 2 : 1;

        if (fds < cap)
            cap = fds;
    }
    return cap > UINT_MAX ? UINT_MAX : (unsigned)cap;
}
