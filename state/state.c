/*
 * state.c - the LMDB environment behind state.h.
 *
 * Layout: named databases "meta" (key "schema_version" -> uint32),
 * "reply_ledger" (lower-case address -> uint64 unix time of the last reply)
 * and "reply_hourly" (uint64 big-endian hour number -> uint64 replies
 * granted in that hour). Values are stored in host byte order; the
 * environment is not meant to move between machines.
 *
 * Invariants: every exported call opens and ends its own transaction; a
 * claim checks and records in one write transaction, which LMDB serialises
 * across threads and processes (its writer mutex is robust, so a writer
 * killed mid-transaction leaves the last committed state). The map grows
 * by doubling when a write hits MDB_MAP_FULL, up to STATE_MAP_MAX.
 *
 * Threading: a struct state is shared by every thread of a process
 * (MDB_NOTLS). mdb_env_set_mapsize() must not run while this process has
 * a transaction open, so each transaction holds resize_lock for reading
 * and a resize takes it for writing. Error codes from LMDB are turned into
 * negative errno values before they leave this file.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include <lmdb.h>

#include "state.h"
#include "state_internal.h"

#define STATE_MAP_DEFAULT ((size_t)64 << 20)
#define STATE_MAP_MIN ((size_t)32 << 10)
#define STATE_MAP_MAX ((size_t)4 << 30)
#define STATE_MAX_DBS 32 /* the ledger's 3 and state_tables.c's */
#define STATE_MAX_READERS 512
#define STATE_RETRIES 32
#define STATE_ADDR_MAX 254
#define STATE_DIR_MAX 4096

/* Not const: MDB_val.mv_data is a plain void pointer. */
static char state_key_schema[] = "schema_version";

/* Map an LMDB return code (0, positive errno or MDB_*) to 0 or -errno. */
int
state_errno(int rc)
{
    switch (rc) {
    case MDB_SUCCESS:
        return 0;
    case MDB_NOTFOUND:
        return -ENOENT;
    case MDB_KEYEXIST:
        return -EEXIST;
    case MDB_MAP_FULL:
    case MDB_DBS_FULL:
    case MDB_TXN_FULL:
    case MDB_CURSOR_FULL:
    case MDB_PAGE_FULL:
        return -ENOSPC;
    case MDB_READERS_FULL:
    case MDB_MAP_RESIZED:
        return -EAGAIN;
    case MDB_VERSION_MISMATCH:
    case MDB_INVALID:
    case MDB_INCOMPATIBLE:
        return -EPROTO;
    case MDB_CORRUPTED:
    case MDB_PAGE_NOTFOUND:
    case MDB_PANIC:
        return -EIO;
    case MDB_BAD_RSLOT:
    case MDB_BAD_TXN:
    case MDB_BAD_VALSIZE:
    case MDB_BAD_DBI:
        return -EINVAL;
    case MDB_TLS_FULL:
        return -ENOMEM;
    default:
        if (rc > 0)
            return -rc;
        return -EIO;
    }
}

/* Create dir itself, never its parents: a typo in StateDir must not grow
 * a tree of directories as root. -ENOENT when the parent is missing. */
static int
state_mkdir(const char *dir)
{
    if (strlen(dir) >= STATE_DIR_MAX)
        return -ENAMETOOLONG;
    if (mkdir(dir, 0750) < 0 && errno != EEXIST)
        return -errno;
    return 0;
}

static void
state_put_u64(MDB_val *v, uint64_t *storage)
{
    v->mv_size = sizeof(*storage);
    v->mv_data = storage;
}

static bool
state_get_u64(const MDB_val *v, uint64_t *ret)
{
    if (v->mv_size != sizeof(*ret))
        return false;
    memcpy(ret, v->mv_data, sizeof(*ret));
    return true;
}

static void
state_hour_key(time_t now, unsigned char key[8])
{
    uint64_t hour = now < 0 ? 0 : (uint64_t)now / 3600;

    /* Big-endian so that the default byte-wise order is numeric order. */
    for (int i = 7; i >= 0; i--) {
        key[i] = (unsigned char)(hour & 0xff);
        hour >>= 8;
    }
}

/* Lower-case addr into buf; -EINVAL when empty, too long or not plain. */
static int
state_addr_key(const char *addr, char buf[STATE_ADDR_MAX + 1], MDB_val *key)
{
    size_t len;

    if (addr == NULL)
        return -EINVAL;
    len = strnlen(addr, STATE_ADDR_MAX + 1);
    if (len == 0 || len > STATE_ADDR_MAX)
        return -EINVAL;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)addr[i];
        if (c < 0x20 || c == 0x7f)
            return -EINVAL;
        buf[i] = (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : (char)c;
    }
    buf[len] = '\0';
    key->mv_size = len;
    key->mv_data = buf;
    return 0;
}

/*
 * Grow the map after MDB_MAP_FULL. seen is the size the failed
 * transaction ran with: when another thread already grew past it, there is
 * nothing to do.
 */
static int
state_grow(struct state *st, size_t seen)
{
    MDB_envinfo info;
    int rc = 0;

    pthread_rwlock_wrlock(&st->resize_lock);
    mdb_env_info(st->env, &info);
    if (info.me_mapsize <= seen) {
        if (seen >= STATE_MAP_MAX)
            rc = -ENOSPC;
        else
            rc = state_errno(
                mdb_env_set_mapsize(st->env, seen * 2 > STATE_MAP_MAX ? STATE_MAP_MAX : seen * 2));
    }
    pthread_rwlock_unlock(&st->resize_lock);
    return rc;
}

/* Adopt the size another process grew the map to. */
static int
state_adopt_size(struct state *st)
{
    int rc;

    pthread_rwlock_wrlock(&st->resize_lock);
    rc = mdb_env_set_mapsize(st->env, 0);
    pthread_rwlock_unlock(&st->resize_lock);
    return state_errno(rc);
}

/*
 * Run fn in one transaction (read-only when rdonly), committing when it
 * returns 0 and aborting otherwise. fn returns an LMDB code; a write that
 * fills the map is retried after growing it, and a map resized by another
 * process is adopted. Returns 0 or a negative errno.
 */
int
state_run(struct state *st, bool rdonly, state_txn_fn *fn, void *ctx)
{
    int rc = MDB_SUCCESS;

    for (int attempt = 0; attempt < STATE_RETRIES; attempt++) {
        MDB_envinfo info;
        MDB_txn *txn = NULL;

        pthread_rwlock_rdlock(&st->resize_lock);
        mdb_env_info(st->env, &info);
        rc = mdb_txn_begin(st->env, NULL, rdonly ? MDB_RDONLY : 0, &txn);
        if (rc == MDB_SUCCESS) {
            rc = fn(st, txn, ctx);
            if (rc == MDB_SUCCESS)
                rc = mdb_txn_commit(txn);
            else
                mdb_txn_abort(txn);
        }
        pthread_rwlock_unlock(&st->resize_lock);

        if (rc == MDB_MAP_RESIZED) {
            int r = state_adopt_size(st);
            if (r < 0)
                return r;
            continue;
        }
        if (rc == MDB_MAP_FULL && !rdonly) {
            int r = state_grow(st, info.me_mapsize);
            if (r < 0)
                return r;
            continue;
        }
        break;
    }
    return state_errno(rc);
}

struct state_open_ctx {
    unsigned db_flags;
    uint32_t version;
};

static int
state_open_txn(struct state *st, MDB_txn *txn, void *ctx)
{
    struct state_open_ctx *c = ctx;
    MDB_val key = {sizeof(state_key_schema) - 1, state_key_schema};
    MDB_val val;
    int rc;

    rc = mdb_dbi_open(txn, "meta", c->db_flags, &st->meta);
    if (rc == MDB_SUCCESS)
        rc = mdb_dbi_open(txn, "reply_ledger", c->db_flags, &st->ledger);
    if (rc == MDB_SUCCESS)
        rc = mdb_dbi_open(txn, "reply_hourly", c->db_flags, &st->hourly);
    if (rc == MDB_SUCCESS)
        rc = state_tables_open(st, txn, st->readonly);
    if (rc != MDB_SUCCESS)
        return rc;

    rc = mdb_get(txn, st->meta, &key, &val);
    if (rc == MDB_NOTFOUND && !st->readonly) {
        uint32_t v = STATE_SCHEMA_VERSION;

        val.mv_size = sizeof(v);
        val.mv_data = &v;
        c->version = v;
        return mdb_put(txn, st->meta, &key, &val, 0);
    }
    if (rc != MDB_SUCCESS)
        return rc;
    if (val.mv_size != sizeof(c->version))
        return MDB_INCOMPATIBLE;
    memcpy(&c->version, val.mv_data, sizeof(c->version));
    /* A read-only open of older state reads its learned tables as empty:
     * their keys and tokens are not the ones this release computes. */
    st->learn_stale = c->version < 3;
    /* Upgrade older state: state_tables_open() above created the tables
     * a newer schema adds, and the learned tables of schema 2 are emptied
     * (state_learn_upgrade()); recording the version finishes it. */
    if (c->version < STATE_SCHEMA_VERSION && !st->readonly) {
        uint32_t v = STATE_SCHEMA_VERSION;

        rc = state_learn_upgrade(st, txn, c->version);
        if (rc != MDB_SUCCESS)
            return rc;
        st->learn_stale = false;
        val.mv_size = sizeof(v);
        val.mv_data = &v;
        c->version = v;
        return mdb_put(txn, st->meta, &key, &val, 0);
    }
    return MDB_SUCCESS;
}

static void (*state_damage_fn)(const char *dir, const char *reason);

void
state_on_damage(void (*fn)(const char *dir, const char *reason))
{
    state_damage_fn = fn;
}

/*
 * LMDB's assertion handler: a page that breaks LMDB's invariants, which in
 * a state that passed its page walk means damage since. LMDB aborts the
 * process when this returns; recorded first, the damage makes the next
 * start degrade (OnStateError) instead of aborting again.
 */
static void
state_assert(MDB_env *env, const char *msg)
{
    struct state *st = mdb_env_get_userctx(env);
    char reason[300];

    snprintf(reason, sizeof(reason), "LMDB stopped on a damaged page: %s", msg);
    if (st == NULL)
        return;
    (void)state_mark_damaged_write(st->dir, reason);
    if (state_damage_fn != NULL)
        state_damage_fn(st->dir, reason);
}

/* Record the newest committed transaction as the state's generation. */
static int
state_generation_note(struct state *st)
{
    MDB_envinfo info;

    pthread_rwlock_rdlock(&st->resize_lock);
    mdb_env_info(st->env, &info);
    pthread_rwlock_unlock(&st->resize_lock);
    return state_generation_write(st->dir, (uint64_t)info.me_last_txnid);
}

int
state_open(const char *dir, unsigned flags, size_t map_size, struct state **ret)
{
    struct state_open_ctx octx = {0};
    struct state_check chk;
    struct state *st = NULL;
    unsigned env_flags;
    bool lock_init = false;
    int r;

    if (dir == NULL || *dir == '\0' || ret == NULL)
        return -EINVAL;
    if (map_size == 0)
        map_size = STATE_MAP_DEFAULT;
    if (map_size < STATE_MAP_MIN)
        map_size = STATE_MAP_MIN;
    if (map_size > STATE_MAP_MAX)
        map_size = STATE_MAP_MAX;

    if (!(flags & STATE_READONLY)) {
        r = state_mkdir(dir);
        if (r < 0)
            return r;
    }
    /* Before LMDB maps it: a data file cut short would fault there, and
     * a damaged page abort the process that reads it. */
    r = state_check_pages(dir, &chk);
    if (r < 0)
        return r;
    if (!chk.present && (flags & STATE_READONLY))
        return -ENOENT;

    st = calloc(1, sizeof(*st));
    if (st == NULL)
        return -ENOMEM;
    st->dir = strdup(dir);
    if (st->dir == NULL) {
        r = -ENOMEM;
        goto out;
    }
    st->readonly = (flags & STATE_READONLY) != 0;
    st->nosync = (flags & STATE_NOSYNC) != 0 && !st->readonly;

    {
        pthread_rwlockattr_t attr;

        pthread_rwlockattr_init(&attr);
        /* A resize must not starve behind a steady stream of transactions. */
        pthread_rwlockattr_setkind_np(&attr, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
        r = -pthread_rwlock_init(&st->resize_lock, &attr);
        pthread_rwlockattr_destroy(&attr);
        if (r < 0)
            goto out;
        lock_init = true;
    }

    r = state_errno(mdb_env_create(&st->env));
    if (r < 0) {
        st->env = NULL;
        goto out;
    }
    mdb_env_set_userctx(st->env, st);
    (void)mdb_env_set_assert(st->env, state_assert);
    r = state_errno(mdb_env_set_maxdbs(st->env, STATE_MAX_DBS));
    if (r < 0)
        goto out;
    r = state_errno(mdb_env_set_maxreaders(st->env, STATE_MAX_READERS));
    if (r < 0)
        goto out;
    r = state_errno(mdb_env_set_mapsize(st->env, map_size));
    if (r < 0)
        goto out;
    /* MDB_NOMETASYNC: a commit syncs its data pages but writes the meta
     * page without waiting for the disk, which halves the syncs per
     * message. LMDB keeps the database consistent under it; a power loss
     * may undo the last commit, which for this state (seen fingerprints,
     * sender counts) costs at most one missed duplicate. The next commit,
     * or state_close(), syncs the meta page too. MDB_NOSYNC leaves even
     * the data pages to the page cache until state_sync(): the fsync is
     * most of a commit's time (about 0.2 ms a message on a virtual disk),
     * and it sits between the end of a message and the MTA's answer. */
    env_flags = MDB_NOTLS | (st->nosync ? MDB_NOSYNC : MDB_NOMETASYNC);
    if (st->readonly)
        env_flags |= MDB_RDONLY;
    r = state_errno(mdb_env_open(st->env, dir, env_flags, 0640));
    if (r < 0)
        goto out;
    /* Reader slots of processes that died (kill -9) would pin old pages. */
    mdb_reader_check(st->env, NULL);

    octx.db_flags = st->readonly ? 0 : MDB_CREATE;
    r = state_run(st, st->readonly, state_open_txn, &octx);
    if (r < 0)
        goto out;
    if (octx.version > STATE_SCHEMA_VERSION) {
        r = -EPROTO;
        goto out;
    }
    /* Best effort: without it only an emptied file goes unexplained. */
    if (!st->readonly)
        (void)state_generation_note(st);

    *ret = st;
    st = NULL;
    r = 0;
out:
    if (st != NULL) {
        if (st->env != NULL)
            mdb_env_close(st->env);
        if (lock_init)
            pthread_rwlock_destroy(&st->resize_lock);
        free(st->dir);
        free(st);
    }
    return r;
}

int
state_schema_read(const char *dir, uint32_t *ret)
{
    MDB_val key = {sizeof(state_key_schema) - 1, state_key_schema}, val;
    MDB_env *env = NULL;
    MDB_txn *txn = NULL;
    MDB_dbi dbi;
    int rc;

    if (dir == NULL || ret == NULL)
        return -EINVAL;
    rc = mdb_env_create(&env);
    if (rc != MDB_SUCCESS)
        return state_errno(rc);
    rc = mdb_env_set_maxdbs(env, STATE_MAX_DBS);
    /* MDB_NOLOCK: root checking the state (slop-milter -n) must not leave
     * a lock file behind that the daemon's user cannot open. */
    if (rc == MDB_SUCCESS)
        rc = mdb_env_open(env, dir, MDB_RDONLY | MDB_NOLOCK | MDB_NOTLS, 0640);
    if (rc == MDB_SUCCESS)
        rc = mdb_txn_begin(env, NULL, MDB_RDONLY, &txn);
    if (rc == MDB_SUCCESS)
        rc = mdb_dbi_open(txn, "meta", 0, &dbi);
    if (rc == MDB_SUCCESS)
        rc = mdb_get(txn, dbi, &key, &val);
    if (rc == MDB_SUCCESS && val.mv_size != sizeof(*ret))
        rc = MDB_INCOMPATIBLE;
    if (rc == MDB_SUCCESS)
        memcpy(ret, val.mv_data, sizeof(*ret));
    if (txn != NULL)
        mdb_txn_abort(txn);
    mdb_env_close(env);
    return state_errno(rc);
}

void
state_open_strerror(const char *dir, int err, char *buf, size_t size)
{
    struct state_check chk;
    uint32_t v = 0;
    char eb[128];

    if (err == -EUCLEAN && state_check_pages(dir, &chk) == -EUCLEAN)
        snprintf(buf, size, "data.mdb damaged (%s)", chk.reason);
    else if (err == -EPROTO && state_schema_read(dir, &v) == 0 && v > STATE_SCHEMA_VERSION)
        snprintf(buf, size,
                 "data.mdb has schema %" PRIu32 ", newer than the %d this release reads "
                 "(written by a newer slop-milter: run that release, or move the state aside)",
                 v, STATE_SCHEMA_VERSION);
    else if (err == -EPROTO)
        snprintf(buf, size, "data.mdb is no LMDB environment this release reads (%s)",
                 strerror_r(-err, eb, sizeof(eb)));
    else
        snprintf(buf, size, "%s", strerror_r(-err, eb, sizeof(eb)));
}

int
state_sync(struct state *st)
{
    if (st == NULL)
        return -EINVAL;
    if (st->readonly)
        return 0;
    return state_errno(mdb_env_sync(st->env, 1));
}

struct state *
state_close(struct state *st)
{
    if (st == NULL)
        return NULL;
    /* The last commits (MDB_NOSYNC) or the last meta page
     * (MDB_NOMETASYNC); nothing to report. */
    if (st->env != NULL && !st->readonly && mdb_env_sync(st->env, 1) == MDB_SUCCESS)
        (void)state_generation_note(st);
    /* No state.checked here: a clean close cannot vouch for pages another
     * process or the disk changed meanwhile, so the next open walks. */
    mdb_env_close(st->env);
    state_redis_free(st->redis);
    pthread_rwlock_destroy(&st->resize_lock);
    free(st->dir);
    free(st);
    return NULL;
}

int
state_attach_redis(struct state *st, struct state_redis *r)
{
    if (st == NULL || r == NULL || st->redis != NULL)
        return -EINVAL;
    st->redis = r;
    return 0;
}

struct state_redis *
state_redis_of(struct state *st)
{
    return st != NULL ? st->redis : NULL;
}

void
state_strerror(struct state *st, int err, char *buf, size_t size)
{
    char name[300], eb[128];
    const char *why;
    bool redis = st != NULL && st->redis != NULL &&
                 (err == -EBADMSG || err == -ENOTCONN || err == -ETIMEDOUT || err == -EACCES ||
                  err == -EIO || err == -E2BIG);

    if (err == -EBADMSG && redis)
        why = "it answered with an error reply or a reply of the wrong type (a Redis protocol "
              "error)";
    else if (err == -ENOTCONN && redis)
        why = "down, waiting out the back-off";
    else if (err == -E2BIG && redis)
        why = "the command would be too long";
    else
        why = strerror_r(-err, eb, sizeof(eb));
    if (redis)
        state_redis_name(st->redis, name, sizeof(name));
    else
        snprintf(name, sizeof(name), "StateDir '%s'", st != NULL ? st->dir : "?");
    snprintf(buf, size, "%s: %s", name, why);
}

struct state_claim_ctx {
    MDB_val key;
    time_t now;
    uint32_t interval_s;
    uint32_t hourly_cap;
    enum state_claim claim;
};

static int
state_claim_txn(struct state *st, MDB_txn *txn, void *ctx)
{
    struct state_claim_ctx *c = ctx;
    unsigned char hour_key[8];
    MDB_val hkey = {sizeof(hour_key), hour_key};
    MDB_val val;
    uint64_t last, count = 0, stamp;
    int rc;

    rc = mdb_get(txn, st->ledger, &c->key, &val);
    if (rc == MDB_SUCCESS && state_get_u64(&val, &last)) {
        uint64_t now = c->now < 0 ? 0 : (uint64_t)c->now;

        /* A stamp in the future means the clock went back: stay quiet. */
        if (last > now || now - last < c->interval_s) {
            c->claim = STATE_CLAIM_RECENT;
            return MDB_SUCCESS;
        }
    } else if (rc != MDB_SUCCESS && rc != MDB_NOTFOUND) {
        return rc;
    }

    state_hour_key(c->now, hour_key);
    rc = mdb_get(txn, st->hourly, &hkey, &val);
    if (rc == MDB_SUCCESS)
        state_get_u64(&val, &count);
    else if (rc != MDB_NOTFOUND)
        return rc;
    if (c->hourly_cap > 0 && count >= c->hourly_cap) {
        c->claim = STATE_CLAIM_CAPPED;
        return MDB_SUCCESS;
    }

    count++;
    state_put_u64(&val, &count);
    rc = mdb_put(txn, st->hourly, &hkey, &val, 0);
    if (rc != MDB_SUCCESS)
        return rc;
    stamp = c->now < 0 ? 0 : (uint64_t)c->now;
    state_put_u64(&val, &stamp);
    rc = mdb_put(txn, st->ledger, &c->key, &val, 0);
    if (rc != MDB_SUCCESS)
        return rc;
    c->claim = STATE_CLAIM_GRANTED;
    return MDB_SUCCESS;
}

int
state_reply_claim(struct state *st, const char *addr, time_t now, uint32_t interval_s,
                  uint32_t hourly_cap, enum state_claim *ret_claim)
{
    struct state_claim_ctx c = {.now = now, .interval_s = interval_s, .hourly_cap = hourly_cap};
    char buf[STATE_ADDR_MAX + 1];
    int r;

    if (st == NULL || ret_claim == NULL)
        return -EINVAL;
    if (st->readonly)
        return -EROFS;
    r = state_addr_key(addr, buf, &c.key);
    if (r < 0)
        return r;
    if (st->redis != NULL)
        return state_redis_reply_claim(st->redis, buf, now, interval_s, hourly_cap, ret_claim);
    r = state_run(st, false, state_claim_txn, &c);
    if (r < 0)
        return r;
    /* A granted claim must outlive a power loss before its reply goes
     * out, or the sender could be answered twice. */
    if (c.claim == STATE_CLAIM_GRANTED && st->nosync) {
        r = state_sync(st);
        if (r < 0)
            return r;
    }
    *ret_claim = c.claim;
    return 0;
}

struct state_release_ctx {
    MDB_val key;
    time_t now;
    bool released;
};

static int
state_release_txn(struct state *st, MDB_txn *txn, void *ctx)
{
    struct state_release_ctx *c = ctx;
    unsigned char hour_key[8];
    MDB_val hkey = {sizeof(hour_key), hour_key};
    MDB_val val;
    uint64_t last, count;
    uint64_t stamp = c->now < 0 ? 0 : (uint64_t)c->now;
    int rc;

    rc = mdb_get(txn, st->ledger, &c->key, &val);
    if (rc != MDB_SUCCESS)
        return rc;
    /* Only the claim made at now is ours to give back; a later claim by
     * someone else stays. */
    if (!state_get_u64(&val, &last) || last != stamp)
        return MDB_NOTFOUND;
    rc = mdb_del(txn, st->ledger, &c->key, NULL);
    if (rc != MDB_SUCCESS)
        return rc;

    state_hour_key(c->now, hour_key);
    rc = mdb_get(txn, st->hourly, &hkey, &val);
    if (rc == MDB_SUCCESS && state_get_u64(&val, &count) && count > 0) {
        count--;
        if (count == 0) {
            rc = mdb_del(txn, st->hourly, &hkey, NULL);
        } else {
            state_put_u64(&val, &count);
            rc = mdb_put(txn, st->hourly, &hkey, &val, 0);
        }
        if (rc != MDB_SUCCESS)
            return rc;
    } else if (rc != MDB_SUCCESS && rc != MDB_NOTFOUND) {
        return rc;
    }
    c->released = true;
    return MDB_SUCCESS;
}

int
state_reply_release(struct state *st, const char *addr, time_t now)
{
    struct state_release_ctx c = {.now = now};
    char buf[STATE_ADDR_MAX + 1];
    int r;

    if (st == NULL)
        return -EINVAL;
    if (st->readonly)
        return -EROFS;
    r = state_addr_key(addr, buf, &c.key);
    if (r < 0)
        return r;
    if (st->redis != NULL)
        return state_redis_reply_release(st->redis, buf, now);
    return state_run(st, false, state_release_txn, &c);
}

struct state_stats_ctx {
    struct state_stats stats;
};

static int
state_stats_txn(struct state *st, MDB_txn *txn, void *ctx)
{
    struct state_stats_ctx *c = ctx;
    MDB_val key = {sizeof(state_key_schema) - 1, state_key_schema};
    MDB_val val;
    MDB_stat ms;
    int rc;

    rc = mdb_stat(txn, st->ledger, &ms);
    if (rc != MDB_SUCCESS)
        return rc;
    c->stats.ledger_entries = ms.ms_entries;
    rc = mdb_get(txn, st->meta, &key, &val);
    if (rc == MDB_SUCCESS && val.mv_size == sizeof(c->stats.schema_version))
        memcpy(&c->stats.schema_version, val.mv_data, sizeof(c->stats.schema_version));
    else if (rc != MDB_SUCCESS && rc != MDB_NOTFOUND)
        return rc;
    return MDB_SUCCESS;
}

int
state_stats(struct state *st, struct state_stats *ret)
{
    struct state_stats_ctx c = {0};
    MDB_envinfo info;
    MDB_stat env_stat;
    int r;

    if (st == NULL || ret == NULL)
        return -EINVAL;
    r = state_run(st, true, state_stats_txn, &c);
    if (r < 0)
        return r;
    pthread_rwlock_rdlock(&st->resize_lock);
    mdb_env_info(st->env, &info);
    r = state_errno(mdb_env_stat(st->env, &env_stat));
    pthread_rwlock_unlock(&st->resize_lock);
    if (r < 0)
        return r;
    c.stats.map_size = info.me_mapsize;
    c.stats.txnid = (uint64_t)info.me_last_txnid;
    c.stats.used_bytes = ((uint64_t)info.me_last_pgno + 1) * env_stat.ms_psize;
    *ret = c.stats;
    return 0;
}

struct state_prune_ctx {
    time_t before;
    uint64_t removed;
};

/* The ledger is keyed by address, so it is walked whole; a ledger of
 * millions of entries makes this one long write transaction, which is
 * why prune runs from slopctl or a timer, not per message. */
static int
state_prune_txn(struct state *st, MDB_txn *txn, void *ctx)
{
    struct state_prune_ctx *c = ctx;
    uint64_t before = c->before < 0 ? 0 : (uint64_t)c->before;
    unsigned char cut_hour[8];
    MDB_cursor *cur = NULL;
    MDB_val key, val;
    int rc;

    c->removed = 0;
    rc = mdb_cursor_open(txn, st->ledger, &cur);
    if (rc != MDB_SUCCESS)
        return rc;
    for (rc = mdb_cursor_get(cur, &key, &val, MDB_FIRST); rc == MDB_SUCCESS;
         rc = mdb_cursor_get(cur, &key, &val, MDB_NEXT)) {
        uint64_t last;

        if (state_get_u64(&val, &last) && last >= before)
            continue;
        rc = mdb_cursor_del(cur, 0);
        if (rc != MDB_SUCCESS)
            break;
        c->removed++;
    }
    mdb_cursor_close(cur);
    if (rc != MDB_NOTFOUND)
        return rc;

    /* Hour keys sort numerically; everything before the cut-off hour goes. */
    state_hour_key(c->before, cut_hour);
    rc = mdb_cursor_open(txn, st->hourly, &cur);
    if (rc != MDB_SUCCESS)
        return rc;
    for (rc = mdb_cursor_get(cur, &key, &val, MDB_FIRST); rc == MDB_SUCCESS;
         rc = mdb_cursor_get(cur, &key, &val, MDB_NEXT)) {
        if (key.mv_size == sizeof(cut_hour) && memcmp(key.mv_data, cut_hour, 8) >= 0)
            break;
        rc = mdb_cursor_del(cur, 0);
        if (rc != MDB_SUCCESS)
            break;
    }
    mdb_cursor_close(cur);
    if (rc != MDB_SUCCESS && rc != MDB_NOTFOUND)
        return rc;
    return MDB_SUCCESS;
}

int
state_prune(struct state *st, time_t before, uint64_t *ret_removed)
{
    struct state_prune_ctx c = {.before = before};
    int r;

    if (st == NULL)
        return -EINVAL;
    if (st->readonly)
        return -EROFS;
    r = state_run(st, false, state_prune_txn, &c);
    if (r < 0)
        return r;
    if (ret_removed != NULL)
        *ret_removed = c.removed;
    return 0;
}
