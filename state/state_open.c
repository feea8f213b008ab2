/*
 * state_open.c - opening and closing the LMDB environment behind state.h:
 * the directory, the page check before LMDB maps the file, the schema
 * version and its upgrade, the handles of every table, and the
 * generation recorded beside data.mdb.
 *
 * Layout: named databases "meta" (key "schema_version" -> uint32), the
 * reply ledger's two (state_reply.c) and state_tables.c's. Values are
 * stored in host byte order; the environment is not meant to move
 * between machines.
 *
 * Threading: state_open() and state_close() run alone; in between the
 * struct state is shared (state.c).
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <lmdb.h>

#include "state.h"
#include "state_internal.h"
#include "state_learn_cache.h"

#define STATE_MAP_DEFAULT ((size_t)64 << 20)
#define STATE_MAP_MIN ((size_t)32 << 10)
#define STATE_MAX_DBS 32 /* the ledger's 3 and state_tables.c's */
#define STATE_MAX_READERS 512
#define STATE_DIR_MAX 4096

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
    /* Older releases write learned counts without bumping the learn
     * generation: a read-only open of their state never trusts a copy. */
    st->learn_uncached = c->version < 4;
    /* Upgrade older state: state_tables_open() above created the tables
     * a newer schema adds, and the learned tables of schema 2 are emptied
     * (state_learn_upgrade()); recording the version finishes it. */
    if (c->version < STATE_SCHEMA_VERSION && !st->readonly) {
        uint32_t v = STATE_SCHEMA_VERSION;

        rc = state_learn_upgrade(st, txn, c->version);
        if (rc != MDB_SUCCESS)
            return rc;
        st->learn_stale = false;
        st->learn_uncached = false;
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

/* Free what state_new() and state_env_open() made; st may be NULL. */
static void
state_free(struct state *st)
{
    if (st == NULL)
        return;
    if (st->env != NULL)
        mdb_env_close(st->env);
    state_redis_free(st->redis);
    state_learn_cache_free(st->learn_cache);
    pthread_rwlock_destroy(&st->resize_lock);
    free(st->dir);
    free(st);
}

/* A struct state for dir with its resize lock, on the LMDB backend. */
static int
state_new(const char *dir, unsigned flags, struct state **ret)
{
    pthread_rwlockattr_t attr;
    struct state *st;
    int r;

    st = calloc(1, sizeof(*st));
    if (st == NULL)
        return -ENOMEM;
    st->dir = strdup(dir);
    if (st->dir == NULL) {
        free(st);
        return -ENOMEM;
    }
    st->ops = &state_lmdb_ops;
    st->learn_cache = state_learn_cache_new();
    if (st->learn_cache == NULL) {
        free(st->dir);
        free(st);
        return -ENOMEM;
    }
    st->readonly = (flags & STATE_READONLY) != 0;
    st->nosync = (flags & STATE_NOSYNC) != 0 && !st->readonly;

    pthread_rwlockattr_init(&attr);
    /* A resize must not starve behind a steady stream of transactions. */
    pthread_rwlockattr_setkind_np(&attr, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
    r = -pthread_rwlock_init(&st->resize_lock, &attr);
    pthread_rwlockattr_destroy(&attr);
    if (r < 0) {
        state_learn_cache_free(st->learn_cache);
        free(st->dir);
        free(st);
        return r;
    }
    *ret = st;
    return 0;
}

/* Create and open st's environment in dir with a map of map_size bytes. */
static int
state_env_open(struct state *st, const char *dir, size_t map_size)
{
    unsigned env_flags;
    int r;

    r = state_errno(mdb_env_create(&st->env));
    if (r < 0) {
        st->env = NULL;
        return r;
    }
    mdb_env_set_userctx(st->env, st);
    (void)mdb_env_set_assert(st->env, state_assert);
    r = state_errno(mdb_env_set_maxdbs(st->env, STATE_MAX_DBS));
    if (r == 0)
        r = state_errno(mdb_env_set_maxreaders(st->env, STATE_MAX_READERS));
    if (r == 0)
        r = state_errno(mdb_env_set_mapsize(st->env, map_size));
    if (r < 0)
        return r;
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
        return r;
    /* Reader slots of processes that died (kill -9) would pin old pages. */
    mdb_reader_check(st->env, NULL);
    return 0;
}

static size_t
state_map_clamp(size_t map_size)
{
    if (map_size == 0)
        return STATE_MAP_DEFAULT;
    if (map_size < STATE_MAP_MIN)
        return STATE_MAP_MIN;
    if (map_size > STATE_MAP_MAX)
        return STATE_MAP_MAX;
    return map_size;
}

int
state_open(const char *dir, unsigned flags, size_t map_size, struct state **ret)
{
    struct state_open_ctx octx = {0};
    struct state_check chk;
    struct state *st = NULL;
    int r;

    if (dir == NULL || *dir == '\0' || ret == NULL)
        return -EINVAL;
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

    r = state_new(dir, flags, &st);
    if (r < 0)
        return r;
    r = state_env_open(st, dir, state_map_clamp(map_size));
    if (r < 0)
        goto out;
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
    state_free(st);
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
    state_free(st);
    return NULL;
}
