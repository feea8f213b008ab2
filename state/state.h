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
#include <sys/types.h>
#include <time.h>

/* 2: the learned token counts (learn_token, learn_msg). A writable open
 * of schema 1 state creates the new tables and records 2; nothing else
 * changed, so that is the whole upgrade.
 * 3: learned messages keyed by a digest of the tokens they added, with
 * the Message-ID's digest as a hint, and new tokens. A writable open of
 * schema 2 state empties learn_token and learn_msg (their keys and tokens
 * cannot be carried over: docs/state.md) and records 3.
 * 4: the learn generation in index_meta, bumped by every write of the
 * learned counts, that the per-process copy of them is keyed on
 * (state_learn.h); a release before it would write counts without
 * bumping it. A writable open of schema 3 state bumps it and records 4. */
#define STATE_SCHEMA_VERSION 4

enum state_flags {
    STATE_READONLY = 1 << 0, /* open for reading only (slopctl db stats) */
    STATE_NOSYNC = 1 << 1,   /* commits skip the fsync: the owner calls state_sync() */
};

struct state;

/* What state_check_file() found. */
struct state_check {
    bool present;        /* data.mdb exists */
    uint64_t txnid;      /* newest committed transaction (healthy file) */
    uint64_t generation; /* from state.generation; 0: none recorded */
    uint64_t file_bytes; /* size of data.mdb */
    uint64_t need_bytes; /* bytes its newest meta page says it holds */
    uint32_t page_size;
    bool walked;      /* state_check_pages() walked the pages (else known whole) */
    char reason[300]; /* why it is damaged or unreadable */
};

/*
 * Check dir's data.mdb against its meta pages without mapping it. Returns
 * 0 when it is whole, or absent with no recorded generation (a first
 * start: ret->present false); -EUCLEAN when damaged (cut short, empty,
 * bad meta pages, or missing where state.generation says state existed);
 * another negative errno when it cannot be read. ret->reason says why.
 */
int state_check_file(const char *dir, struct state_check *ret);

/*
 * state_check_file(), then every page in use walked (every table, every
 * entry, the free-page table) in a child process, unless state.checked
 * says a walk found this very file whole and it has not changed since. A damaged page makes LMDB
 * abort the process that reads it: this finds it first. What a walk finds is recorded
 * (state.checked, state.damaged). Forks: call at start-up, before threads. Returns as
 * state_check_file(): -EUCLEAN with ret->reason naming the table when a
 * page is damaged. state_open() calls it.
 */
int state_check_pages(const char *dir, struct state_check *ret);

/*
 * Called when LMDB meets a damaged page in an open state, from LMDB's
 * assertion handler, after the damage is recorded in state.damaged (so
 * that the next start finds it without walking): LMDB aborts the process
 * when fn returns. fn may end the process itself (slopctl exits 73).
 * Set once, before any state_open().
 */
void state_on_damage(void (*fn)(const char *dir, const char *reason));

/*
 * Who owns the state: dir and the files in it that LMDB and this library
 * write (data.mdb, lock.mdb, the state.* marks), each when it exists. The
 * first not owned by uid is named in ret_path (size bytes) with its owner
 * in *ret_uid and *ret_gid, and 1 is returned; 0 when all are uid's (or
 * absent), or a negative errno when one cannot be looked at. A writer that
 * is not the owner would leave files the daemon cannot open.
 */
int state_check_owner(const char *dir, uid_t uid, char *ret_path, size_t size, uid_t *ret_uid,
                      gid_t *ret_gid);

/*
 * Open (creating when missing, unless STATE_READONLY) the environment in
 * dir. map_size is the initial map size in bytes (0: 64 MiB); the map
 * grows when full. Creates dir itself when missing, never its parents.
 * Checks data.mdb first (state_check_pages(): walks its pages unless they
 * are known whole). Returns 0, or a negative
 * errno: -ENOENT (no state and read-only, or no parent directory),
 * -EACCES, -EPROTO (schema version from a newer release), -EUCLEAN
 * (data.mdb damaged: state_check_file() tells why).
 */
int state_open(const char *dir, unsigned flags, size_t map_size, struct state **ret);

struct state *state_close(struct state *st);

/*
 * The schema version dir's state records, read without a lock file (root
 * checking a state must leave nothing the daemon's user cannot open).
 * Only after state_check_file() found data.mdb whole. 0, or a negative
 * errno (-ENOENT: none recorded).
 */
int state_schema_read(const char *dir, uint32_t *ret);

/*
 * Why state_open(dir) failed with err, in the words every program prints:
 * "data.mdb damaged (...)", "data.mdb has schema 99, newer than the 2
 * this release reads (...)", or the errno's text.
 */
void state_open_strerror(const char *dir, int err, char *buf, size_t size);

struct state_redis;

/*
 * From now on keep the shared, per-message tables (reply ledger and hourly
 * count, seen fingerprints, sender counts) in r instead of the LMDB
 * environment; st owns r and frees it in state_close(). Call before st is
 * shared between threads. Returns 0 or -EINVAL.
 */
int state_attach_redis(struct state *st, struct state_redis *r);
/* The attached Redis backend, or NULL (st may be NULL). */
struct state_redis *state_redis_of(struct state *st);

/*
 * Where a state call that returned err failed, and why, for a message:
 * "Redis 'unix:/run/redis.sock': it answered with an error reply ..."
 * when it came from the attached Redis server (-EBADMSG,
 * -ENOTCONN, -ETIMEDOUT, -EACCES, -EIO or -E2BIG while one is attached),
 * else "StateDir '/var/lib/slop-milter': <strerror>". st may be NULL.
 */
void state_strerror(struct state *st, int err, char *buf, size_t size);

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
    uint64_t txnid; /* newest committed transaction: the state's generation */
};

int state_stats(struct state *st, struct state_stats *ret);

/* Drop ledger entries older than before; sets *ret_removed when not NULL. */
int state_prune(struct state *st, time_t before, uint64_t *ret_removed);

#endif
