/*
 * state.h - slop-milter's persistent state: one LMDB environment.
 *
 * One environment under the state directory holds named databases (a
 * schema version in "meta", the reply ledger, hourly reply counters and,
 * later, fingerprints and offline indices). Every call runs one short
 * transaction that begins and ends inside the call, so a caller never
 * holds a transaction across a milter callback. A struct state may be
 * shared by all threads of a process. No LMDB type leaks out of here.
 */
#ifndef SLOP_STATE_H
#define SLOP_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#define STATE_SCHEMA_VERSION 1

enum state_flags {
    STATE_READONLY = 1 << 0, /* open for reading only (slopctl db stats) */
    STATE_NOSYNC = 1 << 1,   /* commits skip the fsync: the owner calls state_sync() */
};

struct state;

/*
 * Open (creating when missing, unless STATE_READONLY) the environment in
 * dir. map_size is the initial map size in bytes (0: 64 MiB); the map
 * grows when full. Returns 0, or a negative errno: -ENOENT (no state and
 * read-only), -EACCES, -EPROTO (schema version from a newer release).
 */
int state_open(const char *dir, unsigned flags, size_t map_size, struct state **ret);

struct state *state_close(struct state *st);

/*
 * Flush every commit so far to disk. Under STATE_NOSYNC a commit reaches
 * the page cache only, which survives the process but not a power loss
 * or a kernel crash: the owner calls this on a timer. A reply claim is
 * flushed by state_reply_claim() itself. Returns 0 or a negative errno.
 */
int state_sync(struct state *st);

enum state_claim {
    STATE_CLAIM_GRANTED = 0, /* recorded: the caller may send one reply */
    STATE_CLAIM_RECENT,      /* addr was answered less than interval ago */
    STATE_CLAIM_CAPPED,      /* the global hourly cap is reached */
};

/*
 * Atomically decide whether a reply to addr (lower case) may be sent at
 * now, and record it when granted: at most one reply per address per
 * interval_s seconds, at most hourly_cap replies in the hour of now (0:
 * no cap). Sets *ret_claim. Returns 0 or a negative errno.
 */
int state_reply_claim(struct state *st, const char *addr, time_t now, uint32_t interval_s,
                      uint32_t hourly_cap, enum state_claim *ret_claim);

/*
 * Give back a granted claim whose reply could not be sent at all: now must
 * be the value given to the state_reply_claim() that granted it. Returns
 * 0, or -ENOENT when addr holds no claim made at now (never claimed,
 * already released, or claimed again since).
 */
int state_reply_release(struct state *st, const char *addr, time_t now);

struct state_stats {
    uint64_t map_size;   /* bytes mapped */
    uint64_t used_bytes; /* pages in use * page size */
    uint64_t ledger_entries;
    uint32_t schema_version;
};

int state_stats(struct state *st, struct state_stats *ret);

/* Drop ledger entries older than before; sets *ret_removed when not NULL. */
int state_prune(struct state *st, time_t before, uint64_t *ret_removed);

#endif
