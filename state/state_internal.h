/*
 * state_internal.h - what the files of slopstate share and nothing else
 * sees: struct state with its LMDB handles, the backend's table of
 * operations, the transaction runner and the LMDB-to-errno mapping.
 *
 * Invariants: every dbi handle is opened once, in state_open()'s first
 * transaction, and never closed before state_close(); a table a read-only
 * open did not find has have[t] false and is treated as empty. A callback
 * given to state_run() may be run more than once (after the map grows),
 * so it must not keep side effects outside its transaction.
 */
#ifndef SLOP_STATE_INTERNAL_H
#define SLOP_STATE_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>

#include <lmdb.h>

#include "state.h"
#include "state_redis.h"

/* Named databases beyond the reply ledger's; state_tables.c names them. */
enum state_table {
    STATE_T_INDEX_META = 0, /* "tree_label", counts and dates of the imports */
    STATE_T_TREE_PATH,      /* relative path -> 'f' or 'd' */
    STATE_T_TREE_SYM,       /* function or macro name -> kind byte */
    STATE_T_TREE_CONFIG,    /* "CONFIG_FOO" -> "" */
    STATE_T_FIX_HUNK,       /* u64 hunk fingerprint -> commit '\0' subject */
    STATE_T_FIX_FUNC,       /* function '\0' bug class -> commit '\0' subject */
    STATE_T_SEEN_FP,        /* u64 fingerprint -> i64 time, Message-ID */
    STATE_T_SEEN_BAND,      /* dupsort: band, 16 bits -> u64 simhash, i64 time, u64 key, id */
    STATE_T_MAINT_PAT,      /* dupsort: F: pattern without wildcards -> u32 section */
    STATE_T_MAINT_GLOB,     /* dupsort: directory before the wildcard -> u32 section, pattern */
    STATE_T_MAINT_SEC,      /* u32 section -> name '\0' "M\taddr\n" "L\t..." "X\t..." */
    STATE_T_MAINT_ADDR,     /* M: and R: address -> "" (trusted senders) */
    STATE_T_SENDER,         /* u32 big-endian day, address -> u32 count */
    STATE_T_SERIES_COVER,   /* flagged cover letter's Message-ID -> i64 time, note */
    STATE_T_SERIES_LOG,  /* u64 BE root hash, u64 BE id hash -> time, version, index, paragraphs */
    STATE_T_LEARN_TOKEN, /* u64 token (integer key) -> i64 last seen, u32 slop, u32 genuine */
    STATE_T_LEARN_MSG,   /* u64 content key -> i64 time, u8 class, u64 Message-ID hint (3) */
    STATE_T__COUNT,
};

/* One scanned message's part of the shared tables (state_lookup_record(),
 * state_seen_record(), state_sender_add()): the fingerprints and simhash
 * (n 0 and simhash 0: none) of message_id sent by from (NULL: unknown),
 * kept for window_s, and with count_sender one more for from today. */
struct state_mail {
    const uint64_t *fps;
    size_t n;
    uint64_t simhash;
    const char *message_id;
    const char *from;
    bool count_sender;
    time_t now;
    uint32_t window_s;
};

/*
 * What the backend decides: where the reply ledger and its hourly count,
 * the seen fingerprints and the daily count per sender live. One const
 * instance per backend; state_open() picks state_lmdb_ops and
 * state_attach_redis() state_redis_ops, before st is shared, and no call
 * asks again. The public calls (state.h, state_db.h) check their
 * arguments and lower-case the ledger's address before an op runs; an op
 * returns 0 or a negative errno. Series, learned tokens, tree, fixes and
 * MAINTAINERS are the host's own in both configurations (state_redis.h)
 * and read LMDB directly.
 */
struct state_learn_cache;

struct state_ops {
    int (*reply_claim)(struct state *st, const char *addr, time_t now, uint32_t interval_s,
                       uint32_t hourly_cap, enum state_claim *ret);
    int (*reply_release)(struct state *st, const char *addr, time_t now);
    int (*record)(struct state *st, const struct state_mail *m);
    int (*seen_find)(struct state *st, const uint64_t *fps, size_t n, uint64_t simhash,
                     const char *self_id, time_t since, time_t before, struct classifier_seen *ret);
    int (*sender_count)(struct state *st, const char *addr, time_t now, uint32_t *ret);
    /* Whether err, returned by an op, is the server's to explain; then
     * its name into buf (state_strerror()). */
    bool (*server_error)(const struct state *st, int err, char *buf, size_t size);
};

/* state_lmdb.c: the local environment. */
extern const struct state_ops state_lmdb_ops;
/* state_redis_ops.c: the shared tables in st->redis. */
extern const struct state_ops state_redis_ops;

struct state {
    const struct state_ops *ops; /* never NULL once open */
    MDB_env *env;
    char *dir; /* for state.generation */
    MDB_dbi meta;
    MDB_dbi ledger;
    MDB_dbi hourly;
    bool readonly;
    bool nosync;         /* STATE_NOSYNC: the owner calls state_sync() */
    bool learn_stale;    /* schema < 3 opened read-only: learned tables read as empty */
    bool learn_uncached; /* schema < 4 opened read-only: no learn generation, no copy */
    pthread_rwlock_t resize_lock;
    MDB_dbi tables[STATE_T__COUNT];
    bool have[STATE_T__COUNT];
    struct state_redis *redis;             /* owned; the shared tables live there when set */
    struct state_learn_cache *learn_cache; /* owned, never NULL once open */
};

typedef int state_txn_fn(struct state *st, MDB_txn *txn, void *ctx);

#define STATE_MAP_MAX ((size_t)4 << 30)

/* state.c */
/* The schema version's key in "meta"; not const: MDB_val.mv_data is a
 * plain void pointer. */
#define STATE_KEY_SCHEMA "schema_version"
extern char state_key_schema[sizeof(STATE_KEY_SCHEMA)];
int state_errno(int rc);
int state_run(struct state *st, bool rdonly, state_txn_fn *fn, void *ctx);

/* The LMDB backend's ops (state_lmdb.c binds them), each beside its
 * table; arguments as struct state_ops says. */
int state_reply_lmdb_claim(struct state *st, const char *addr, time_t now, uint32_t interval_s,
                           uint32_t hourly_cap, enum state_claim *ret);
int state_reply_lmdb_release(struct state *st, const char *addr, time_t now);
int state_seen_lmdb_record(struct state *st, const struct state_mail *m);
int state_seen_lmdb_find(struct state *st, const uint64_t *fps, size_t n, uint64_t simhash,
                         const char *self_id, time_t since, time_t before,
                         struct classifier_seen *ret);
int state_sender_lmdb_add(struct state *st, const char *addr, time_t now);
int state_sender_lmdb_count(struct state *st, const char *addr, time_t now, uint32_t *ret);

/* state_check.c: record txnid in dir/state.generation, atomically. */
int state_generation_write(const char *dir, uint64_t txnid);

/* state_learn.c: in state_open()'s write transaction, bring the learned
 * tables of schema version from up to STATE_SCHEMA_VERSION; an LMDB code. */
int state_learn_upgrade(struct state *st, MDB_txn *txn, uint32_t from);

/* state_walk.c: every page of dir's state walked in a child process; 0,
 * -EUCLEAN with reason, or another negative errno. */
int state_walk(const char *dir, char *reason, size_t size);

/* state_mark.c: the marks beside data.mdb (state.checked, state.damaged). */
struct stat;
int state_mark_write(const char *dir, const char *name, const char *text);
/* Whether state.checked names this very data.mdb (sb from its fstat). */
bool state_mark_checked(const char *dir, const struct stat *sb);
/* Record data.mdb, as stat() gave sb, as found whole. */
int state_mark_checked_write(const char *dir, const struct stat *sb);
int state_mark_damaged_write(const char *dir, const char *reason);
/* Whether state.damaged names this data.mdb; its reason into reason. */
bool state_mark_damaged(const char *dir, const struct stat *sb, char *reason, size_t size);

/* state_tables.c: open (creating unless read-only) every table of enum
 * state_table inside state_open()'s transaction; returns an LMDB code. */
int state_tables_open(struct state *st, MDB_txn *txn, bool readonly);
const char *state_table_name(enum state_table t);
/* A table whose values hold the i64 time they were written at time_off;
 * counted: its deletions count in what a prune reports. */
struct state_expiry {
    enum state_table table;
    size_t time_off;
    bool counted;
};

/* state_expire.c: in one write transaction, delete every entry of the n
 * tables of v whose time is at or before before; sets *ret_removed (may be
 * NULL). Returns 0 or a negative errno (-EROFS when read-only). */
int state_expire(struct state *st, const struct state_expiry *v, size_t n, time_t before,
                 uint64_t *ret_removed);

#endif
