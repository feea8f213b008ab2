/*
 * membudget.h - the memory budget shared by all connections (MaxMemory).
 *
 * Every message buffer reserves its bytes here before it grows and gives
 * them back when it is freed, so the bytes buffered by all connections
 * together stay under MaxMemory. A message that cannot reserve is handled
 * by OnBusy instead of being buffered. Also how freed scan memory goes
 * back to the kernel (TrimMemory).
 *
 * Threading: the counter is atomic; every function may be called from any
 * thread. Nothing here logs.
 */
#ifndef SLOP_MILTER_MEMBUDGET_H
#define SLOP_MILTER_MEMBUDGET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#define MEMBUDGET_FLOOR ((uint64_t)64 << 20) /* smallest automatic budget */
#define MEMBUDGET_TRIM_MIN ((size_t)1 << 20) /* buffers this large trim on free */
/* A buffered byte is charged this many times: once for the buffer, once
 * for its scan (GMime's copy and the decoded text), measured at about
 * 1.2 bytes per byte of a 10 MB text message, 0.6 for a base64 one. */
#define MEMBUDGET_CHARGE 2

/* Reserve n bytes under limit; 0, or -ENOBUFS when they do not fit. */
int membudget_reserve(uint64_t limit, size_t n);
void membudget_release(size_t n);
/* Bytes reserved now by all messages. */
uint64_t membudget_used(void);

/*
 * MaxMemory's effective value: set (non-zero) stays as it is; 0 means half
 * the cgroup's memory.max (the unit's MemoryMax), or a quarter of the
 * physical memory when there is no cgroup limit, never below
 * MEMBUDGET_FLOOR. Computed once and cached.
 */
uint64_t membudget_limit(uint64_t configured);

/*
 * The memory.max of the cgroup v2 named in proc_cgroup (a
 * /proc/PID/cgroup file) below sysfs_root (/sys/fs/cgroup). 0 with *ret
 * set, -ENOENT when there is no cgroup v2 entry or file, -ERANGE for
 * "max" (no limit), -EINVAL for a malformed file.
 */
int membudget_cgroup_max(const char *proc_cgroup, const char *sysfs_root, uint64_t *ret);

/*
 * TrimMemory: with on, large blocks are given their own mappings (a fixed
 * mmap threshold, so a freed message buffer is unmapped at once) and
 * membudget_trim() hands freed heap pages back. Call once before threads
 * start.
 */
void membudget_setup_trim(bool on);
/* After freeing a buffer of len bytes: return free memory to the system. */
void membudget_trim(size_t len);

/*
 * Count one message refused for lack of budget. Returns the number
 * refused since the last time it returned non-zero, at most once per
 * interval seconds, else 0: the caller logs when it is non-zero.
 */
unsigned long membudget_note_busy(time_t now, unsigned interval);

#endif
