/*
 * state_learn.c - the learned token counts in the LMDB environment.
 *
 * Layout: "learn_token" maps a u64 token (host order) to its i64 last
 * learned time and u32 slop and genuine message counts; "learn_msg" maps
 * a u64 message key to the i64 time it was learned, its u8 class and the
 * u64 digest of its Message-ID (a hint for people reading a dump, never
 * a key); "index_meta" key "learn_totals" holds the u64 messages per
 * class and "learn_generation" a u64 that every transaction changing
 * learn_token bumps (schema 4), on which the per-process copy of the
 * counts (state_learn_cache.c) is keyed. A token whose counts both reach
 * 0 is deleted. Counts never go below 0: forgetting a message whose
 * tokens were pruned meanwhile leaves 0.
 *
 * The message key is a digest of the very tokens the message adds
 * (classifier_learn_tokens()), as rspamd's learn cache keys by its
 * tokens: the same key means the same tokens, so a move or a forget takes
 * away exactly what learning it added, and two mails that share a
 * Message-ID are two messages.
 *
 * Threading: one transaction per call through state_run(); learning
 * (a writer) never blocks the daemon's read transactions.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "state_internal.h"
#include "state_learn.h"
#include "state_learn_cache.h"

#define LEARN_TOKEN_BYTES 16
#define LEARN_MSG_BYTES 17 /* schema 3; 9 in schema 2 */

static char learn_totals_key[] = "learn_totals";
static char learn_generation_key[] = "learn_generation";

struct token_val {
    int64_t seen;
    uint32_t count[2];
};

static void
token_decode(const MDB_val *v, struct token_val *ret)
{
    memset(ret, 0, sizeof(*ret));
    if (v->mv_size < LEARN_TOKEN_BYTES)
        return;
    memcpy(&ret->seen, v->mv_data, 8);
    memcpy(ret->count, (const char *)v->mv_data + 8, 8);
}

static int
totals_get(struct state *st, MDB_txn *txn, uint64_t ret[2])
{
    MDB_val key = {sizeof(learn_totals_key) - 1, learn_totals_key}, val;
    int rc;

    ret[0] = ret[1] = 0;
    if (!st->have[STATE_T_INDEX_META])
        return MDB_SUCCESS;
    rc = mdb_get(txn, st->tables[STATE_T_INDEX_META], &key, &val);
    if (rc == MDB_SUCCESS && val.mv_size == 16)
        memcpy(ret, val.mv_data, 16);
    return rc == MDB_NOTFOUND ? MDB_SUCCESS : rc;
}

static int
totals_put(struct state *st, MDB_txn *txn, const uint64_t v[2])
{
    MDB_val key = {sizeof(learn_totals_key) - 1, learn_totals_key};
    uint64_t buf[2] = {v[0], v[1]};
    MDB_val val = {sizeof(buf), buf};

    return mdb_put(txn, st->tables[STATE_T_INDEX_META], &key, &val, 0);
}

/* The learn generation in txn; 0 when none was ever recorded. */
static int
generation_get(struct state *st, MDB_txn *txn, uint64_t *ret)
{
    MDB_val key = {sizeof(learn_generation_key) - 1, learn_generation_key}, val;
    int rc;

    *ret = 0;
    if (!st->have[STATE_T_INDEX_META])
        return MDB_SUCCESS;
    rc = mdb_get(txn, st->tables[STATE_T_INDEX_META], &key, &val);
    if (rc == MDB_SUCCESS && val.mv_size == sizeof(*ret))
        memcpy(ret, val.mv_data, sizeof(*ret));
    return rc == MDB_NOTFOUND ? MDB_SUCCESS : rc;
}

/* In a write transaction that changes learn_token: a copy of the counts
 * built before it no longer answers once it commits. */
static int
generation_bump(struct state *st, MDB_txn *txn)
{
    MDB_val key = {sizeof(learn_generation_key) - 1, learn_generation_key}, val;
    uint64_t gen;
    int rc;

    rc = generation_get(st, txn, &gen);
    if (rc != MDB_SUCCESS)
        return rc;
    gen++;
    val.mv_size = sizeof(gen);
    val.mv_data = &gen;
    return mdb_put(txn, st->tables[STATE_T_INDEX_META], &key, &val, 0);
}

struct counts_ctx {
    const uint64_t *tokens;
    size_t n;
    uint64_t minimum;
    uint32_t (*ret)[2];
    struct state_learn_totals totals;
    bool below;
    bool answered; /* by the copy */
    uint64_t gen;  /* the learn generation the transaction read */
};

/* The counts of c's tokens from LMDB: one cursor over the sorted tokens,
 * which finds a key on the leaf page it is on without descending from
 * the root again. */
static int
counts_read(struct state *st, MDB_txn *txn, struct counts_ctx *c)
{
    MDB_cursor *cur;
    int rc = MDB_SUCCESS;

    rc = mdb_cursor_open(txn, st->tables[STATE_T_LEARN_TOKEN], &cur);
    if (rc != MDB_SUCCESS)
        return rc;
    for (size_t i = 0; i < c->n; i++) {
        uint64_t tok = c->tokens[i];
        MDB_val key = {8, &tok}, val;
        struct token_val tv;

        rc = mdb_cursor_get(cur, &key, &val, MDB_SET_KEY);
        if (rc == MDB_NOTFOUND) {
            c->ret[i][0] = c->ret[i][1] = 0;
            continue;
        }
        if (rc != MDB_SUCCESS)
            break;
        token_decode(&val, &tv);
        c->ret[i][0] = tv.count[0];
        c->ret[i][1] = tv.count[1];
    }
    mdb_cursor_close(cur);
    return rc == MDB_NOTFOUND ? MDB_SUCCESS : rc;
}

static int
counts_txn(struct state *st, MDB_txn *txn, void *ctx)
{
    struct counts_ctx *c = ctx;
    MDB_stat ms;
    int rc;

    c->answered = false;
    c->totals.tokens = 0;
    c->totals.messages[0] = c->totals.messages[1] = 0;
    if (!st->have[STATE_T_LEARN_TOKEN] || st->learn_stale) {
        c->below = true;
        return MDB_SUCCESS;
    }
    rc = totals_get(st, txn, c->totals.messages);
    if (rc != MDB_SUCCESS)
        return rc;
    if (mdb_stat(txn, st->tables[STATE_T_LEARN_TOKEN], &ms) == MDB_SUCCESS)
        c->totals.tokens = ms.ms_entries;
    c->below = c->totals.messages[0] < c->minimum || c->totals.messages[1] < c->minimum ||
               c->totals.messages[0] == 0 || c->totals.messages[1] == 0;
    if (c->below || c->ret == NULL)
        return MDB_SUCCESS;
    if (st->learn_uncached)
        return counts_read(st, txn, c);
    rc = generation_get(st, txn, &c->gen);
    if (rc != MDB_SUCCESS)
        return rc;
    c->answered = state_learn_cache_lookup(st->learn_cache, c->gen, c->totals.tokens, c->tokens,
                                           c->n, c->ret);
    return c->answered ? MDB_SUCCESS : counts_read(st, txn, c);
}

static int
cache_build_txn(struct state *st, MDB_txn *txn, void *ctx)
{
    uint64_t gen;
    int rc;

    (void)ctx;
    rc = generation_get(st, txn, &gen);
    if (rc != MDB_SUCCESS)
        return rc;
    return state_learn_cache_build(st->learn_cache, txn, st->tables[STATE_T_LEARN_TOKEN], gen);
}

/* After a look-up the copy could not answer: build it when this process
 * asks often enough under one generation (state_learn_cache_want()). A
 * failed build costs nothing but the look-ups that keep reading LMDB. */
static void
cache_maybe_build(struct state *st, const struct counts_ctx *c)
{
    int r;

    if (c->answered || c->ret == NULL || c->below || st->learn_uncached ||
        !state_learn_cache_want(st->learn_cache, c->gen, c->totals.tokens))
        return;
    r = state_run(st, true, cache_build_txn, NULL);
    if (r < 0)
        state_learn_cache_build_cancel(st->learn_cache);
}

int
state_learn_counts(struct state *st, const uint64_t *tokens, size_t n, uint64_t minimum,
                   uint32_t (*ret)[2], struct state_learn_totals *ret_totals)
{
    struct counts_ctx c = {.tokens = tokens, .n = n, .minimum = minimum, .ret = ret};
    int r;

    if (st == NULL || (n > 0 && (tokens == NULL || ret == NULL)))
        return -EINVAL;
    if (n > STATE_LEARN_MAX_TOKENS)
        return -E2BIG;
    r = state_run(st, true, counts_txn, &c);
    if (r < 0)
        return r;
    cache_maybe_build(st, &c);
    if (ret_totals != NULL)
        *ret_totals = c.totals;
    return c.below ? -ENOENT : 0;
}

static int
generation_txn(struct state *st, MDB_txn *txn, void *ctx)
{
    return generation_get(st, txn, ctx);
}

int
state_learn_generation(struct state *st, uint64_t *ret)
{
    uint64_t gen = 0;
    int r;

    if (st == NULL || ret == NULL)
        return -EINVAL;
    r = state_run(st, true, generation_txn, &gen);
    if (r == 0)
        *ret = gen;
    return r;
}

int
state_learn_totals(struct state *st, struct state_learn_totals *ret)
{
    struct counts_ctx c = {0};
    int r;

    if (st == NULL || ret == NULL)
        return -EINVAL;
    r = state_run(st, true, counts_txn, &c);
    if (r == 0)
        *ret = c.totals;
    return r;
}

/* Add delta (+1 or -1) to class cls of every token, stamping now when
 * adding. */
static int
tokens_update(struct state *st, MDB_txn *txn, const uint64_t *tokens, size_t n, int cls, int delta,
              int64_t now)
{
    MDB_dbi dbi = st->tables[STATE_T_LEARN_TOKEN];

    for (size_t i = 0; i < n; i++) {
        uint64_t tok = tokens[i];
        MDB_val key = {8, &tok}, val;
        unsigned char buf[LEARN_TOKEN_BYTES];
        struct token_val tv = {0};
        int rc;

        rc = mdb_get(txn, dbi, &key, &val);
        if (rc == MDB_SUCCESS)
            token_decode(&val, &tv);
        else if (rc != MDB_NOTFOUND)
            return rc;
        else if (delta < 0)
            continue;
        if (delta > 0) {
            if (tv.count[cls] < UINT32_MAX)
                tv.count[cls]++;
            tv.seen = now;
        } else if (tv.count[cls] > 0) {
            tv.count[cls]--;
        }
        if (tv.count[0] == 0 && tv.count[1] == 0) {
            rc = mdb_del(txn, dbi, &key, NULL);
            if (rc != MDB_SUCCESS && rc != MDB_NOTFOUND)
                return rc;
            continue;
        }
        memcpy(buf, &tv.seen, 8);
        memcpy(buf + 8, tv.count, 8);
        val.mv_size = sizeof(buf);
        val.mv_data = buf;
        rc = mdb_put(txn, dbi, &key, &val, 0);
        if (rc != MDB_SUCCESS)
            return rc;
    }
    return MDB_SUCCESS;
}

struct learn_ctx {
    uint64_t key;
    uint64_t hint; /* the Message-ID's digest, stored beside the class */
    int cls;       /* -1: forget */
    const uint64_t *tokens;
    size_t n;
    int64_t now;
    enum state_learn_outcome outcome;
};

/* What learning (or forgetting) c's message, stored as class old (-1:
 * not stored), does; false when nothing changes. */
static bool
learn_outcome(struct learn_ctx *c, int old)
{
    if (c->cls < 0) {
        c->outcome = old < 0 ? STATE_LEARN_UNKNOWN : STATE_LEARN_FORGOTTEN;
        return old >= 0;
    }
    if (old == c->cls) {
        c->outcome = STATE_LEARN_UNCHANGED;
        return false;
    }
    c->outcome = old < 0 ? STATE_LEARN_ADDED : STATE_LEARN_MOVED;
    return true;
}

static int
learn_txn(struct state *st, MDB_txn *txn, void *ctx)
{
    struct learn_ctx *c = ctx;
    MDB_val key = {8, &c->key}, val;
    uint64_t totals[2];
    int old = -1, rc;

    rc = totals_get(st, txn, totals);
    if (rc != MDB_SUCCESS)
        return rc;
    rc = mdb_get(txn, st->tables[STATE_T_LEARN_MSG], &key, &val);
    if (rc == MDB_SUCCESS && val.mv_size >= 9)
        old = ((const unsigned char *)val.mv_data)[8] ? 1 : 0;
    else if (rc != MDB_SUCCESS && rc != MDB_NOTFOUND)
        return rc;

    if (!learn_outcome(c, old))
        return MDB_SUCCESS;
    if (old >= 0) {
        rc = tokens_update(st, txn, c->tokens, c->n, old, -1, c->now);
        if (rc != MDB_SUCCESS)
            return rc;
        if (totals[old] > 0)
            totals[old]--;
    }
    if (c->cls < 0) {
        rc = mdb_del(txn, st->tables[STATE_T_LEARN_MSG], &key, NULL);
    } else {
        unsigned char buf[LEARN_MSG_BYTES];

        rc = tokens_update(st, txn, c->tokens, c->n, c->cls, 1, c->now);
        if (rc != MDB_SUCCESS)
            return rc;
        totals[c->cls]++;
        memcpy(buf, &c->now, 8);
        buf[8] = (unsigned char)c->cls;
        memcpy(buf + 9, &c->hint, 8);
        val.mv_size = sizeof(buf);
        val.mv_data = buf;
        rc = mdb_put(txn, st->tables[STATE_T_LEARN_MSG], &key, &val, 0);
    }
    if (rc == MDB_SUCCESS)
        rc = totals_put(st, txn, totals);
    return rc == MDB_SUCCESS ? generation_bump(st, txn) : rc;
}

/* The message's key: FNV-1a (64 bits) over its sorted tokens' bytes. */
static uint64_t
learn_key(const uint64_t *tokens, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ULL;

    for (size_t i = 0; i < n; i++)
        for (int b = 0; b < 8; b++) {
            h ^= (tokens[i] >> (8 * b)) & 0xff;
            h *= 0x100000001b3ULL;
        }
    return h;
}

static int
learn_run(struct state *st, struct learn_ctx *c, enum state_learn_outcome *ret)
{
    int r;

    if (st == NULL || (c->n > 0 && c->tokens == NULL))
        return -EINVAL;
    c->key = learn_key(c->tokens, c->n);
    if (c->n > STATE_LEARN_MAX_TOKENS)
        return -E2BIG;
    if (st->readonly)
        return -EROFS;
    r = state_run(st, false, learn_txn, c);
    if (r == 0 && ret != NULL)
        *ret = c->outcome;
    return r;
}

int
state_learn_add(struct state *st, const struct state_learn_msg *msg, enum state_learn_class cls,
                time_t now, enum state_learn_outcome *ret)
{
    struct learn_ctx c = {.hint = msg->hint,
                          .cls = cls == STATE_LEARN_GENUINE,
                          .tokens = msg->tokens,
                          .n = msg->n,
                          .now = now};

    return learn_run(st, &c, ret);
}

int
state_learn_forget(struct state *st, const struct state_learn_msg *msg,
                   enum state_learn_outcome *ret)
{
    struct learn_ctx c = {.cls = -1, .tokens = msg->tokens, .n = msg->n};

    return learn_run(st, &c, ret);
}

int
state_learn_upgrade(struct state *st, MDB_txn *txn, uint32_t from)
{
    MDB_val key = {sizeof(learn_totals_key) - 1, learn_totals_key};
    int rc;

    if (from < 2)
        return MDB_SUCCESS; /* schema 1 had no learned tables */
    if (from == 2) {
        /* Schema 2 keyed messages by Message-ID and counted other tokens:
         * a move or forget could not find what they added. Empty is
         * honest. */
        rc = mdb_drop(txn, st->tables[STATE_T_LEARN_TOKEN], 0);
        if (rc == MDB_SUCCESS)
            rc = mdb_drop(txn, st->tables[STATE_T_LEARN_MSG], 0);
        if (rc == MDB_SUCCESS)
            rc = mdb_del(txn, st->tables[STATE_T_INDEX_META], &key, NULL);
        if (rc != MDB_SUCCESS && rc != MDB_NOTFOUND)
            return rc;
    }
    /* Schema 3 releases wrote counts without a generation, and one may
     * have written since a copy was keyed on the last one (a state
     * loaded back after a downgrade). */
    return generation_bump(st, txn);
}

struct prune_ctx {
    int64_t before;
    uint64_t max_tokens;
    uint64_t removed;
};

static int
cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

    return x < y ? -1 : x > y;
}

/* The stamp at or before which tokens go so that at most max stay. */
static int
cap_cutoff(MDB_cursor *cur, uint64_t entries, uint64_t max, int64_t *ret)
{
    MDB_val key, val;
    int64_t *stamps;
    size_t k = 0;
    int rc;

    stamps = malloc(entries * sizeof(*stamps));
    if (stamps == NULL)
        return ENOMEM;
    for (rc = mdb_cursor_get(cur, &key, &val, MDB_FIRST); rc == MDB_SUCCESS && k < entries;
         rc = mdb_cursor_get(cur, &key, &val, MDB_NEXT)) {
        struct token_val tv;

        token_decode(&val, &tv);
        stamps[k++] = tv.seen;
    }
    qsort(stamps, k, sizeof(*stamps), cmp_i64);
    /* The newest stamp among the k - max oldest tokens. */
    *ret = k > max ? stamps[k - max - 1] : INT64_MIN;
    free(stamps);
    return rc == MDB_NOTFOUND || rc == MDB_SUCCESS ? MDB_SUCCESS : rc;
}

/* One pass of prune_txn() over the tokens, *left of them in the table;
 * an LMDB code. */
static int
prune_pass(MDB_cursor *cur, struct prune_ctx *c, int pass, int64_t cap, uint64_t *left)
{
    MDB_val key, val;
    int rc;

    for (rc = mdb_cursor_get(cur, &key, &val, MDB_FIRST); rc == MDB_SUCCESS;
         rc = mdb_cursor_get(cur, &key, &val, MDB_NEXT)) {
        struct token_val tv;
        bool drop;

        token_decode(&val, &tv);
        if (pass == 0)
            drop = tv.seen <= c->before || tv.seen < cap;
        else
            drop = tv.seen == cap && *left > c->max_tokens;
        if (!drop)
            continue;
        rc = mdb_cursor_del(cur, 0);
        if (rc != MDB_SUCCESS)
            break;
        c->removed++;
        (*left)--;
    }
    return rc;
}

static int
prune_txn(struct state *st, MDB_txn *txn, void *ctx)
{
    struct prune_ctx *c = ctx;
    MDB_cursor *cur;
    MDB_stat ms;
    int64_t cap = INT64_MIN;
    uint64_t left;
    int rc;

    c->removed = 0;
    rc = mdb_stat(txn, st->tables[STATE_T_LEARN_TOKEN], &ms);
    if (rc != MDB_SUCCESS)
        return rc;
    left = ms.ms_entries;
    rc = mdb_cursor_open(txn, st->tables[STATE_T_LEARN_TOKEN], &cur);
    if (rc != MDB_SUCCESS)
        return rc;
    if (c->max_tokens > 0 && left > c->max_tokens) {
        rc = cap_cutoff(cur, left, c->max_tokens, &cap);
        if (rc != MDB_SUCCESS)
            goto out;
    }
    /* Pass 0 drops what is too old and what is older than the cap's
     * stamp; pass 1 the tokens stamped at the cap's own second, only while
     * too many are left (a whole learning run shares one stamp). */
    for (int pass = 0; pass < 2 && (rc == MDB_SUCCESS || rc == MDB_NOTFOUND); pass++) {
        rc = prune_pass(cur, c, pass, cap, &left);
        if (pass == 0 && cap == INT64_MIN)
            break;
    }
    if (rc == MDB_NOTFOUND)
        rc = MDB_SUCCESS;
out:
    mdb_cursor_close(cur);
    if (rc == MDB_SUCCESS && c->removed > 0)
        rc = generation_bump(st, txn);
    return rc;
}

int
state_learn_prune(struct state *st, time_t before, uint64_t max_tokens, uint64_t *ret_removed)
{
    struct prune_ctx c = {.before = (int64_t)before, .max_tokens = max_tokens};
    int r;

    if (st == NULL)
        return -EINVAL;
    if (st->readonly)
        return -EROFS;
    r = state_run(st, false, prune_txn, &c);
    if (r == 0 && ret_removed != NULL)
        *ret_removed = c.removed;
    return r;
}
