/*
 * state_expire.c - the prune shared by the tables whose values carry the
 * time they were written (seen mail, series): every entry at or before a
 * cut-off goes, in one write transaction over the tables given.
 *
 * Threading: like state.h; one short write transaction per call.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include <lmdb.h>

#include "state_internal.h"

struct expire_ctx {
    const struct state_expiry *v;
    size_t n;
    int64_t before;
    uint64_t removed;
};

/* Delete every entry of e->table whose value holds, at e->time_off, an
 * i64 time at or before before (a value too short counts as time 0). */
static int
expire_table(struct state *st, MDB_txn *txn, const struct state_expiry *e, struct expire_ctx *c)
{
    MDB_cursor *cur;
    MDB_val key, val;
    int rc;

    rc = mdb_cursor_open(txn, st->tables[e->table], &cur);
    if (rc != MDB_SUCCESS)
        return rc;
    for (rc = mdb_cursor_get(cur, &key, &val, MDB_FIRST); rc == MDB_SUCCESS;
         rc = mdb_cursor_get(cur, &key, &val, MDB_NEXT)) {
        int64_t when = 0;

        if (val.mv_size >= e->time_off + 8)
            memcpy(&when, (const char *)val.mv_data + e->time_off, 8);
        if (when > c->before)
            continue;
        rc = mdb_cursor_del(cur, 0);
        if (rc != MDB_SUCCESS)
            break;
        c->removed += e->counted;
    }
    mdb_cursor_close(cur);
    return rc == MDB_NOTFOUND ? MDB_SUCCESS : rc;
}

static int
expire_txn(struct state *st, MDB_txn *txn, void *ctx)
{
    struct expire_ctx *c = ctx;
    int rc = MDB_SUCCESS;

    c->removed = 0;
    for (size_t i = 0; i < c->n && rc == MDB_SUCCESS; i++)
        rc = expire_table(st, txn, &c->v[i], c);
    return rc;
}

int
state_expire(struct state *st, const struct state_expiry *v, size_t n, time_t before,
             uint64_t *ret_removed)
{
    struct expire_ctx c = {.v = v, .n = n, .before = (int64_t)before};
    int r;

    if (st == NULL || (v == NULL && n > 0))
        return -EINVAL;
    if (st->readonly)
        return -EROFS;
    r = state_run(st, false, expire_txn, &c);
    if (r == 0 && ret_removed != NULL)
        *ret_removed = c.removed;
    return r;
}
