/*
 * state_copy.c - read an environment table by table, every key and value,
 * and optionally copy what was read into another: slopctl's "db check"
 * and "db recover" (mdb_dump semantics: named databases, their flags,
 * every key/value pair, duplicates included).
 *
 * These calls touch LMDB directly, without struct state, because the
 * environment read may be damaged: each call opens it read-only, walks
 * one table with a cursor and closes it again, so that a caller can run
 * each call in its own process and lose only that table when a damaged
 * page stops the walk. The copy commits every COPY_BATCH entries, so what
 * was read before a failure stays in the destination.
 *
 * Threading: no shared state. Never logs.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include <lmdb.h>

#include "state_db.h"
#include "state_internal.h"

#define COPY_MAX_DBS 64
#define COPY_BATCH 10000
#define COPY_NAME_MAX 255
#define COPY_MAP_MIN ((size_t)64 << 20)
#define COPY_MAP_MAX ((size_t)4 << 30)
#define COPY_PERSISTENT                                                                            \
    (MDB_REVERSEKEY | MDB_DUPSORT | MDB_INTEGERKEY | MDB_DUPFIXED | MDB_INTEGERDUP | MDB_REVERSEDUP)

static int
copy_env_open(const char *dir, bool rdonly, size_t map_size, MDB_env **ret)
{
    MDB_env *env = NULL;
    int rc;

    rc = mdb_env_create(&env);
    if (rc != MDB_SUCCESS)
        return state_errno(rc);
    rc = mdb_env_set_maxdbs(env, COPY_MAX_DBS);
    if (rc == MDB_SUCCESS && map_size > 0)
        rc = mdb_env_set_mapsize(env, map_size);
    if (rc == MDB_SUCCESS)
        rc = mdb_env_open(env, dir, MDB_NOTLS | (rdonly ? MDB_RDONLY : 0), 0640);
    if (rc != MDB_SUCCESS) {
        mdb_env_close(env);
        return state_errno(rc);
    }
    *ret = env;
    return 0;
}

struct copy_src {
    MDB_env *env;
    MDB_txn *txn;
    MDB_dbi dbi;
    MDB_cursor *cur;
};

static void
copy_src_close(struct copy_src *s)
{
    if (s->cur != NULL)
        mdb_cursor_close(s->cur);
    if (s->txn != NULL)
        mdb_txn_abort(s->txn);
    mdb_env_close(s->env);
}

/* Open src read-only with a cursor on table name (NULL: the main one);
 * returns an LMDB code, or -errno when the environment does not open. */
static int
copy_src_open(const char *src, const char *name, struct copy_src *s)
{
    int rc, r;

    memset(s, 0, sizeof(*s));
    r = copy_env_open(src, true, 0, &s->env);
    if (r < 0)
        return r;
    rc = mdb_txn_begin(s->env, NULL, MDB_RDONLY, &s->txn);
    if (rc == MDB_SUCCESS)
        rc = mdb_dbi_open(s->txn, name, 0, &s->dbi);
    if (rc == MDB_SUCCESS)
        rc = mdb_cursor_open(s->txn, s->dbi, &s->cur);
    return rc;
}

int
state_copy_list(const char *src, int (*fn)(void *ctx, const char *name), void *ctx)
{
    char name[COPY_NAME_MAX + 1];
    struct copy_src s;
    MDB_val key, val;
    int rc, r = 0;

    if (src == NULL || fn == NULL)
        return -EINVAL;
    rc = copy_src_open(src, NULL, &s);
    if (rc < 0)
        return rc;
    /* The main database's keys are the names of the named ones. */
    if (rc == MDB_SUCCESS)
        rc = mdb_cursor_get(s.cur, &key, &val, MDB_FIRST);
    for (; rc == MDB_SUCCESS; rc = mdb_cursor_get(s.cur, &key, &val, MDB_NEXT)) {
        if (key.mv_size == 0 || key.mv_size > COPY_NAME_MAX ||
            memchr(key.mv_data, '\0', key.mv_size) != NULL)
            continue;
        memcpy(name, key.mv_data, key.mv_size);
        name[key.mv_size] = '\0';
        r = fn(ctx, name);
        if (r < 0)
            break;
    }
    if (r == 0 && rc != MDB_NOTFOUND)
        r = state_errno(rc);
    copy_src_close(&s);
    return r;
}

/* The destination's map: room for all of the source and more. */
static size_t
copy_map_size(const char *src)
{
    char path[4096];
    struct stat sb;
    size_t size = COPY_MAP_MIN;

    if (snprintf(path, sizeof(path), "%s/data.mdb", src) < (int)sizeof(path) &&
        stat(path, &sb) == 0 && (uint64_t)sb.st_size < COPY_MAP_MAX / 2)
        size += (size_t)sb.st_size * 2;
    return size < COPY_MAP_MAX ? size : COPY_MAP_MAX;
}

struct copy_dst {
    MDB_env *env;
    MDB_txn *txn;
    MDB_dbi dbi;
    unsigned flags;
    const char *name;
    size_t pending;
};

static int
copy_dst_begin(struct copy_dst *d)
{
    int rc = mdb_txn_begin(d->env, NULL, 0, &d->txn);

    if (rc == MDB_SUCCESS)
        rc = mdb_dbi_open(d->txn, d->name, d->flags | MDB_CREATE, &d->dbi);
    if (rc != MDB_SUCCESS && d->txn != NULL) {
        mdb_txn_abort(d->txn);
        d->txn = NULL;
    }
    return rc;
}

static int
copy_dst_commit(struct copy_dst *d)
{
    int rc = mdb_txn_commit(d->txn);

    d->txn = NULL;
    d->pending = 0;
    return rc;
}

/* One entry into d, committing every COPY_BATCH; an LMDB code. */
static int
copy_dst_put(struct copy_dst *d, MDB_val *key, MDB_val *val)
{
    int rc = mdb_put(d->txn, d->dbi, key, val, 0);

    if (rc != MDB_SUCCESS || ++d->pending < COPY_BATCH)
        return rc;
    rc = copy_dst_commit(d);
    if (rc == MDB_SUCCESS)
        rc = copy_dst_begin(d);
    return rc;
}

/* Every entry of s's table counted in *ret_read and, while d has a
 * transaction, written to d; an LMDB code. */
static int
copy_entries(struct copy_src *s, struct copy_dst *d, uint64_t *ret_read)
{
    MDB_val key, val;
    uint64_t n = 0;
    int rc;

    /* MDB_NEXT also steps through the duplicates of a dupsort table. */
    for (rc = mdb_cursor_get(s->cur, &key, &val, MDB_FIRST); rc == MDB_SUCCESS;
         rc = mdb_cursor_get(s->cur, &key, &val, MDB_NEXT)) {
        *ret_read = ++n;
        if (d->txn == NULL)
            continue;
        rc = copy_dst_put(d, &key, &val);
        if (rc != MDB_SUCCESS)
            break;
    }
    if (rc == MDB_NOTFOUND)
        return d->txn != NULL ? copy_dst_commit(d) : MDB_SUCCESS;
    /* What was read before the failure is worth keeping. */
    if (d->txn != NULL)
        (void)copy_dst_commit(d);
    return rc;
}

int
state_copy_table(const char *src, const char *dst, const char *name, uint64_t *ret_read,
                 uint64_t *ret_expected)
{
    struct copy_dst d = {.name = name};
    struct copy_src s;
    MDB_stat ms;
    int rc, r = 0;

    if (src == NULL || name == NULL || ret_read == NULL || ret_expected == NULL)
        return -EINVAL;
    *ret_read = 0;
    *ret_expected = 0;
    rc = copy_src_open(src, name, &s);
    if (rc < 0)
        return rc;
    if (rc == MDB_SUCCESS)
        rc = mdb_stat(s.txn, s.dbi, &ms);
    if (rc == MDB_SUCCESS)
        rc = mdb_dbi_flags(s.txn, s.dbi, &d.flags);
    if (rc != MDB_SUCCESS)
        goto out;
    *ret_expected = ms.ms_entries;
    d.flags &= COPY_PERSISTENT;
    if (dst != NULL) {
        r = copy_env_open(dst, false, copy_map_size(src), &d.env);
        if (r < 0)
            goto out;
        rc = copy_dst_begin(&d);
        if (rc != MDB_SUCCESS)
            goto out;
    }
    rc = copy_entries(&s, &d, ret_read);
out:
    if (r == 0)
        r = state_errno(rc);
    if (d.txn != NULL)
        mdb_txn_abort(d.txn);
    if (d.env != NULL)
        mdb_env_close(d.env);
    copy_src_close(&s);
    return r;
}
