/*
 * state_reply.c - the reply ledger: at most one reply per address per
 * interval and at most a cap of replies per hour, and its prune.
 *
 * Layout (LMDB): "reply_ledger" maps a lower-case address to the uint64
 * unix time of the last reply, "reply_hourly" a uint64 big-endian hour
 * number to the replies granted in that hour. The public calls check
 * their arguments and go to the backend's ops (state_internal.h); the
 * LMDB ops are here, the Redis ones in state_redis_ops.c.
 *
 * Invariants: a claim checks and records in one write transaction, which
 * LMDB serialises across threads and processes (its writer mutex is
 * robust, so a writer killed mid-transaction leaves the last committed
 * state).
 * Threading: like state.h; every call is one short transaction.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include <lmdb.h>

#include "state.h"
#include "state_internal.h"

#define STATE_ADDR_MAX 254

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
state_reply_lmdb_claim(struct state *st, const char *addr, time_t now, uint32_t interval_s,
                       uint32_t hourly_cap, enum state_claim *ret)
{
    struct state_claim_ctx c = {.now = now, .interval_s = interval_s, .hourly_cap = hourly_cap};
    char buf[STATE_ADDR_MAX + 1];
    int r;

    r = state_addr_key(addr, buf, &c.key);
    if (r < 0)
        return r;
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
    *ret = c.claim;
    return 0;
}

int
state_reply_claim(struct state *st, const char *addr, time_t now, uint32_t interval_s,
                  uint32_t hourly_cap, enum state_claim *ret_claim)
{
    char buf[STATE_ADDR_MAX + 1];
    MDB_val key;
    int r;

    if (st == NULL || ret_claim == NULL)
        return -EINVAL;
    if (st->readonly)
        return -EROFS;
    r = state_addr_key(addr, buf, &key);
    if (r < 0)
        return r;
    return st->ops->reply_claim(st, buf, now, interval_s, hourly_cap, ret_claim);
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
state_reply_lmdb_release(struct state *st, const char *addr, time_t now)
{
    struct state_release_ctx c = {.now = now};
    char buf[STATE_ADDR_MAX + 1];
    int r;

    r = state_addr_key(addr, buf, &c.key);
    if (r < 0)
        return r;
    return state_run(st, false, state_release_txn, &c);
}

int
state_reply_release(struct state *st, const char *addr, time_t now)
{
    char buf[STATE_ADDR_MAX + 1];
    MDB_val key;
    int r;

    if (st == NULL)
        return -EINVAL;
    if (st->readonly)
        return -EROFS;
    r = state_addr_key(addr, buf, &key);
    if (r < 0)
        return r;
    return st->ops->reply_release(st, buf, now);
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
