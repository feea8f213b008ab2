/*
 * state.c - the LMDB environment behind state.h once it is open: the
 * transaction runner every table's file calls, the map that grows, the
 * LMDB-to-errno mapping, the backend's choice and the error text.
 *
 * Invariants: every exported call of slopstate opens and ends its own
 * transaction through state_run(). The map grows by doubling when a
 * write hits MDB_MAP_FULL, up to STATE_MAP_MAX. The backend's table of
 * operations (st->ops) is set once, by state_open() and
 * state_attach_redis(), before st is shared.
 *
 * Threading: a struct state is shared by every thread of a process
 * (MDB_NOTLS). mdb_env_set_mapsize() must not run while this process has
 * a transaction open, so each transaction holds resize_lock for reading
 * and a resize takes it for writing. Error codes from LMDB are turned into
 * negative errno values before they leave slopstate.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include <lmdb.h>

#include "state.h"
#include "state_internal.h"

#define STATE_RETRIES 32

char state_key_schema[sizeof(STATE_KEY_SCHEMA)] = STATE_KEY_SCHEMA;

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

int
state_sync(struct state *st)
{
    if (st == NULL)
        return -EINVAL;
    if (st->readonly)
        return 0;
    return state_errno(mdb_env_sync(st->env, 1));
}

int
state_attach_redis(struct state *st, struct state_redis *r)
{
    if (st == NULL || r == NULL || st->redis != NULL)
        return -EINVAL;
    st->redis = r;
    st->ops = &state_redis_ops;
    return 0;
}

struct state_redis *
state_redis_of(struct state *st)
{
    return st != NULL ? st->redis : NULL;
}

/* A server's own words for the errors no local file gives; NULL: errno's. */
static const char *
state_server_why(int err)
{
    switch (err) {
    case -EBADMSG:
        return "it answered with an error reply or a reply of the wrong type (a Redis protocol "
               "error)";
    case -ENOTCONN:
        return "down, waiting out the back-off";
    case -E2BIG:
        return "the command would be too long";
    default:
        return NULL;
    }
}

void
state_strerror(struct state *st, int err, char *buf, size_t size)
{
    char name[300], eb[128];
    const char *why = NULL;
    bool server = st != NULL && st->ops->server_error(st, err, name, sizeof(name));

    if (server)
        why = state_server_why(err);
    else
        snprintf(name, sizeof(name), "StateDir '%s'", st != NULL ? st->dir : "?");
    if (why == NULL)
        why = strerror_r(-err, eb, sizeof(eb));
    snprintf(buf, size, "%s: %s", name, why);
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
