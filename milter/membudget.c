/*
 * membudget.c - the process-wide memory budget and the return of freed
 * memory to the system.
 *
 * Invariant: mb_used is the sum of the reservations not yet released; a
 * reservation that would take it past the limit is refused, not cut.
 * The limit comes from the caller's configuration snapshot, so a reload
 * applies to the next reservation; bytes already reserved stay until
 * their message is freed.
 */
#include <errno.h>
#include <inttypes.h>
#include <malloc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "membudget.h"

#define CGROUP_LINE_MAX 4096
/* Blocks from this size up get their own mapping when trimming is on: a
 * freed message buffer goes back at once instead of staying in an arena. */
#define TRIM_MMAP_THRESHOLD (256 * 1024)

static atomic_uint_fast64_t mb_used;
static atomic_bool mb_trim;
static atomic_ulong mb_busy;      /* refusals not yet reported */
static atomic_llong mb_last_note; /* time of the last report */
static uint64_t mb_auto;
static pthread_once_t mb_auto_once = PTHREAD_ONCE_INIT;

int
membudget_reserve(uint64_t limit, size_t n)
{
    uint_fast64_t cur = atomic_load(&mb_used);

    do {
        if ((uint64_t)n > limit || cur > limit - n)
            return -ENOBUFS;
    } while (!atomic_compare_exchange_weak(&mb_used, &cur, cur + n));
    return 0;
}

void
membudget_release(size_t n)
{
    if (n > 0)
        atomic_fetch_sub(&mb_used, n);
}

uint64_t
membudget_used(void)
{
    return atomic_load(&mb_used);
}

int
membudget_cgroup_max(const char *proc_cgroup, const char *sysfs_root, uint64_t *ret)
{
    char line[CGROUP_LINE_MAX], path[CGROUP_LINE_MAX + 64], val[64];
    char *rel = NULL, *end;
    unsigned long long v;
    FILE *f = fopen(proc_cgroup, "re");
    int r = -ENOENT;

    if (f == NULL)
        return -errno;
    /* cgroup v2 is the line "0::/path"; v1 hierarchies have other ids. */
    while (fgets(line, sizeof(line), f) != NULL) {
        if (strncmp(line, "0::", 3) == 0) {
            rel = line + 3;
            rel[strcspn(rel, "\n")] = '\0';
            break;
        }
    }
    fclose(f);
    f = NULL;
    if (rel == NULL)
        goto out;
    snprintf(path, sizeof(path), "%s%s/memory.max", sysfs_root, strcmp(rel, "/") ? rel : "");
    f = fopen(path, "re");
    if (f == NULL) {
        r = -errno;
        goto out;
    }
    if (fgets(val, sizeof(val), f) == NULL) {
        r = -EINVAL;
        goto out;
    }
    val[strcspn(val, "\n")] = '\0';
    if (strcmp(val, "max") == 0) {
        r = -ERANGE;
        goto out;
    }
    errno = 0;
    v = strtoull(val, &end, 10);
    if (errno != 0 || end == val || *end != '\0' || v == 0) {
        r = -EINVAL;
        goto out;
    }
    *ret = v;
    r = 0;
out:
    if (f != NULL)
        fclose(f);
    return r;
}

static void
auto_limit(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    uint64_t phys = pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page : 0;
    uint64_t cg = 0, v;

    /* Half the unit's limit leaves the other half to scans, libraries and
     * the state map; without a limit, a quarter of the machine. */
    if (membudget_cgroup_max("/proc/self/cgroup", "/sys/fs/cgroup", &cg) == 0 &&
        (phys == 0 || cg < phys))
        v = cg / 2;
    else
        v = phys / 4;
    mb_auto = v < MEMBUDGET_FLOOR ? MEMBUDGET_FLOOR : v;
}

uint64_t
membudget_limit(uint64_t configured)
{
    if (configured != 0)
        return configured;
    pthread_once(&mb_auto_once, auto_limit);
    return mb_auto;
}

void
membudget_setup_trim(bool on)
{
    atomic_store(&mb_trim, on);
    /* A fixed threshold also stops glibc from raising it after the first
     * large free, which would put later message buffers in the arenas. */
    if (on && mallopt(M_MMAP_THRESHOLD, TRIM_MMAP_THRESHOLD) != 1)
        atomic_store(&mb_trim, false);
}

void
membudget_trim(size_t len)
{
    if (len >= MEMBUDGET_TRIM_MIN && atomic_load(&mb_trim))
        malloc_trim(0);
}

unsigned long
membudget_note_busy(time_t now, unsigned interval)
{
    long long last = atomic_load(&mb_last_note);

    atomic_fetch_add(&mb_busy, 1);
    if (now - last < (long long)interval)
        return 0;
    if (!atomic_compare_exchange_strong(&mb_last_note, &last, (long long)now))
        return 0;
    return atomic_exchange(&mb_busy, 0);
}
