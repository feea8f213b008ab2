/*
 * state_sender.c - how many patches and reports each sender sent per day.
 *
 * Keys are the UTC day number (big-endian, so days sort in order) followed
 * by the lower-case address; prune deletes whole days from the front.
 * Threading: like state.h; every call is one short transaction.
 */
#include <ctype.h>
#include <errno.h>
#include <string.h>

#include "state_db.h"
#include "state_internal.h"

#define SENDER_ADDR_MAX 254

/* Day number and lower-cased addr into key; -EINVAL for a bad address. */
static int
sender_key(const char *addr, time_t now, unsigned char buf[4 + SENDER_ADDR_MAX], MDB_val *key)
{
    uint32_t day = now < 0 ? 0 : (uint32_t)(now / 86400);
    size_t n;

    if (addr == NULL)
        return -EINVAL;
    n = strnlen(addr, SENDER_ADDR_MAX + 1);
    if (n == 0 || n > SENDER_ADDR_MAX)
        return -EINVAL;
    buf[0] = (unsigned char)(day >> 24);
    buf[1] = (unsigned char)(day >> 16);
    buf[2] = (unsigned char)(day >> 8);
    buf[3] = (unsigned char)day;
    for (size_t i = 0; i < n; i++)
        buf[4 + i] = (unsigned char)tolower((unsigned char)addr[i]);
    key->mv_size = 4 + n;
    key->mv_data = buf;
    return 0;
}

static int
add_txn(struct state *st, MDB_txn *txn, void *ctx)
{
    MDB_val *key = ctx, val;
    uint32_t count = 0;
    int rc;

    rc = mdb_get(txn, st->tables[STATE_T_SENDER], key, &val);
    if (rc == MDB_SUCCESS && val.mv_size == sizeof(count))
        memcpy(&count, val.mv_data, sizeof(count));
    else if (rc != MDB_SUCCESS && rc != MDB_NOTFOUND)
        return rc;
    if (count < UINT32_MAX)
        count++;
    val = (MDB_val){sizeof(count), &count};
    return mdb_put(txn, st->tables[STATE_T_SENDER], key, &val, 0);
}

int
state_sender_lmdb_add(struct state *st, const char *addr, time_t now)
{
    unsigned char buf[4 + SENDER_ADDR_MAX];
    MDB_val key;
    int r;

    if (st->readonly)
        return -EROFS;
    r = sender_key(addr, now, buf, &key);
    if (r < 0)
        return r;
    return state_run(st, false, add_txn, &key);
}

int
state_sender_add(struct state *st, const char *addr, time_t now)
{
    struct state_mail m = {.from = addr, .count_sender = true, .now = now};
    unsigned char buf[4 + SENDER_ADDR_MAX];
    MDB_val key;
    int r;

    if (st == NULL)
        return -EINVAL;
    if (st->readonly)
        return -EROFS;
    r = sender_key(addr, now, buf, &key);
    if (r < 0)
        return r;
    return st->ops->record(st, &m);
}

struct count_ctx {
    MDB_val key;
    uint32_t count;
};

static int
count_txn(struct state *st, MDB_txn *txn, void *ctx)
{
    struct count_ctx *c = ctx;
    MDB_val val;
    int rc;

    rc = mdb_get(txn, st->tables[STATE_T_SENDER], &c->key, &val);
    if (rc == MDB_SUCCESS && val.mv_size == sizeof(c->count))
        memcpy(&c->count, val.mv_data, sizeof(c->count));
    return rc == MDB_NOTFOUND ? MDB_SUCCESS : rc;
}

int
state_sender_lmdb_count(struct state *st, const char *addr, time_t now, uint32_t *ret)
{
    unsigned char buf[4 + SENDER_ADDR_MAX];
    struct count_ctx c = {0};
    int r;

    if (!st->have[STATE_T_SENDER] || sender_key(addr, now, buf, &c.key) < 0)
        return -ENOENT;
    r = state_run(st, true, count_txn, &c);
    if (r < 0)
        return r;
    *ret = c.count;
    return 0;
}

uint32_t
state_sender_count(struct state *st, const char *addr, time_t now)
{
    uint32_t n = 0;

    /* Unreachable counts as no count: the scan goes on without it. */
    if (st == NULL || st->ops->sender_count(st, addr, now, &n) < 0)
        return 0;
    return n;
}

struct prune_ctx {
    unsigned char cut[4];
    uint64_t removed;
};

static int
prune_txn(struct state *st, MDB_txn *txn, void *ctx)
{
    struct prune_ctx *c = ctx;
    MDB_cursor *cur;
    MDB_val key, val;
    int rc;

    c->removed = 0;
    rc = mdb_cursor_open(txn, st->tables[STATE_T_SENDER], &cur);
    if (rc != MDB_SUCCESS)
        return rc;
    for (rc = mdb_cursor_get(cur, &key, &val, MDB_FIRST); rc == MDB_SUCCESS;
         rc = mdb_cursor_get(cur, &key, &val, MDB_NEXT)) {
        if (key.mv_size >= 4 && memcmp(key.mv_data, c->cut, 4) >= 0)
            break;
        rc = mdb_cursor_del(cur, 0);
        if (rc != MDB_SUCCESS)
            break;
        c->removed++;
    }
    mdb_cursor_close(cur);
    return rc == MDB_NOTFOUND ? MDB_SUCCESS : rc;
}

int
state_sender_prune(struct state *st, time_t before, uint64_t *ret_removed)
{
    struct prune_ctx c = {{0}, 0};
    uint32_t day = before < 0 ? 0 : (uint32_t)(before / 86400);
    int r;

    if (st == NULL)
        return -EINVAL;
    if (st->readonly)
        return -EROFS;
    c.cut[0] = (unsigned char)(day >> 24);
    c.cut[1] = (unsigned char)(day >> 16);
    c.cut[2] = (unsigned char)(day >> 8);
    c.cut[3] = (unsigned char)day;
    r = state_run(st, false, prune_txn, &c);
    if (r == 0 && ret_removed != NULL)
        *ret_removed = c.removed;
    return r;
}
