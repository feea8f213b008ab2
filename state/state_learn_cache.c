/*
 * state_learn_cache.c - the per-process copy of the learned token counts
 * (state_learn_cache.h says when it answers and when it is rebuilt).
 *
 * A table is open addressing with linear probing: u64 token -> u32 slop
 * and u32 genuine count, 16 bytes a slot, the slots a power of two at
 * least 1.5 times the tokens (24 to 48 bytes a token; 64 MiB at the
 * default cap of 2,000,000 tokens). Slot key 0 marks a free slot; token 0
 * has a field of its own. A look-up of a scan's 512 tokens costs some 30
 * instructions a token where LMDB's cursor costs some 1,100.
 *
 * Ownership and threading: the cache owns at most one table, replaced
 * whole: a builder fills a new table outside every lock, then swaps the
 * pointer under the write side of lock and frees the old one; readers
 * hold the read side while they probe. build_lock (taken by trylock)
 * makes one builder at a time; the counters are atomics, and a race on
 * them costs at most one build more or less, never a wrong answer.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "state_internal.h"
#include "state_learn_cache.h"

#define CACHE_DEFAULT_MAX_TOKENS 2000000
#define CACHE_DEFAULT_ASKS_MIN 16
#define CACHE_DEFAULT_INTERVAL_S 10
/* The most tokens a table is sized for whatever the limit says: 2^28
 * slots of 16 bytes is 4 GiB. */
#define CACHE_HARD_MAX_TOKENS ((uint64_t)1 << 27)

struct cache_slot {
    uint64_t key;
    uint32_t count[2];
};

struct cache_table {
    uint64_t gen;
    uint64_t entries; /* tokens in LMDB when built, token 0 included */
    size_t mask;      /* slots - 1 */
    bool have_zero;
    uint32_t zero[2];
    struct cache_slot slot[];
};

struct state_learn_cache {
    pthread_rwlock_t lock; /* guards table */
    struct cache_table *table;
    pthread_mutex_t build_lock;
    _Atomic uint64_t max_tokens;
    _Atomic uint32_t asks_min;
    _Atomic uint32_t interval_s;
    _Atomic uint64_t asks_gen; /* the generation asks counts under */
    _Atomic uint32_t asks;
    _Atomic int64_t last_build; /* CLOCK_MONOTONIC seconds; INT64_MIN: never */
    _Atomic uint64_t builds, hits, misses;
};

static size_t
slot_of(uint64_t key, size_t mask)
{
    /* Fibonacci hashing: tokens are FNV hashes whose low bits are fine,
     * but the multiply costs one instruction and spreads crafted ones. */
    return (size_t)((key * UINT64_C(0x9e3779b97f4a7c15)) >> 32) & mask;
}

static int64_t
now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec;
}

struct state_learn_cache *
state_learn_cache_new(void)
{
    struct state_learn_cache *c = calloc(1, sizeof(*c));

    if (c == NULL)
        return NULL;
    if (pthread_rwlock_init(&c->lock, NULL) != 0) {
        free(c);
        return NULL;
    }
    if (pthread_mutex_init(&c->build_lock, NULL) != 0) {
        pthread_rwlock_destroy(&c->lock);
        free(c);
        return NULL;
    }
    atomic_init(&c->max_tokens, CACHE_DEFAULT_MAX_TOKENS);
    atomic_init(&c->asks_min, CACHE_DEFAULT_ASKS_MIN);
    atomic_init(&c->interval_s, CACHE_DEFAULT_INTERVAL_S);
    atomic_init(&c->last_build, INT64_MIN);
    return c;
}

struct state_learn_cache *
state_learn_cache_free(struct state_learn_cache *c)
{
    if (c == NULL)
        return NULL;
    free(c->table);
    pthread_mutex_destroy(&c->build_lock);
    pthread_rwlock_destroy(&c->lock);
    free(c);
    return NULL;
}

static void
table_get(const struct cache_table *t, uint64_t key, uint32_t ret[2])
{
    size_t j;

    if (key == 0) {
        ret[0] = t->have_zero ? t->zero[0] : 0;
        ret[1] = t->have_zero ? t->zero[1] : 0;
        return;
    }
    for (j = slot_of(key, t->mask); t->slot[j].key != 0; j = (j + 1) & t->mask)
        if (t->slot[j].key == key) {
            ret[0] = t->slot[j].count[0];
            ret[1] = t->slot[j].count[1];
            return;
        }
    ret[0] = ret[1] = 0;
}

bool
state_learn_cache_lookup(struct state_learn_cache *c, uint64_t gen, uint64_t entries,
                         const uint64_t *tokens, size_t n, uint32_t (*ret)[2])
{
    const struct cache_table *t;
    bool hit = false;

    pthread_rwlock_rdlock(&c->lock);
    t = c->table;
    /* A limit lowered since the build retires the copy too. */
    if (t != NULL && t->gen == gen && t->entries == entries &&
        t->entries <= atomic_load_explicit(&c->max_tokens, memory_order_relaxed)) {
        for (size_t i = 0; i < n; i++)
            table_get(t, tokens[i], ret[i]);
        hit = true;
    }
    pthread_rwlock_unlock(&c->lock);
    atomic_fetch_add_explicit(hit ? &c->hits : &c->misses, 1, memory_order_relaxed);
    return hit;
}

bool
state_learn_cache_want(struct state_learn_cache *c, uint64_t gen, uint64_t entries)
{
    int64_t now, last;
    uint32_t asks;

    if (entries > atomic_load(&c->max_tokens) || entries > CACHE_HARD_MAX_TOKENS)
        return false;
    /* The asks under the generation in hand: a one-shot scan asks a few
     * times and must not pay for a table it will not use, nor must a
     * daemon whose every message is learned (AutoLearn). */
    if (atomic_exchange(&c->asks_gen, gen) != gen) {
        atomic_store(&c->asks, 1);
        asks = 1;
    } else {
        asks = atomic_fetch_add(&c->asks, 1) + 1;
    }
    if (asks < atomic_load(&c->asks_min))
        return false;
    now = now_s();
    last = atomic_load(&c->last_build);
    if (last != INT64_MIN && now - last < (int64_t)atomic_load(&c->interval_s))
        return false;
    if (pthread_mutex_trylock(&c->build_lock) != 0)
        return false;
    atomic_store(&c->last_build, now);
    return true;
}

void
state_learn_cache_build_cancel(struct state_learn_cache *c)
{
    pthread_mutex_unlock(&c->build_lock);
}

/* A table for entries tokens, counted as free; NULL without memory. */
static struct cache_table *
table_new(uint64_t gen, uint64_t entries)
{
    struct cache_table *t;
    size_t slots = 16;

    while ((uint64_t)slots < entries + entries / 2)
        slots *= 2;
    t = calloc(1, sizeof(*t) + slots * sizeof(t->slot[0]));
    if (t == NULL)
        return NULL;
    t->gen = gen;
    t->entries = entries;
    t->mask = slots - 1;
    return t;
}

static void
table_put(struct cache_table *t, uint64_t key, const uint32_t count[2])
{
    size_t j;

    if (key == 0) {
        t->have_zero = true;
        memcpy(t->zero, count, sizeof(t->zero));
        return;
    }
    for (j = slot_of(key, t->mask); t->slot[j].key != 0; j = (j + 1) & t->mask)
        ;
    t->slot[j].key = key;
    memcpy(t->slot[j].count, count, sizeof(t->slot[j].count));
}

/* Every token of dbi in txn into a new table; an LMDB code (ENOMEM). */
static int
table_fill(MDB_txn *txn, MDB_dbi dbi, uint64_t gen, struct cache_table **ret)
{
    struct cache_table *t;
    MDB_cursor *cur;
    MDB_stat ms;
    MDB_val key, val;
    uint64_t k = 0;
    int rc;

    rc = mdb_stat(txn, dbi, &ms);
    if (rc != MDB_SUCCESS)
        return rc;
    t = table_new(gen, ms.ms_entries);
    if (t == NULL)
        return ENOMEM;
    rc = mdb_cursor_open(txn, dbi, &cur);
    if (rc != MDB_SUCCESS) {
        free(t);
        return rc;
    }
    for (rc = mdb_cursor_get(cur, &key, &val, MDB_FIRST); rc == MDB_SUCCESS && k < ms.ms_entries;
         rc = mdb_cursor_get(cur, &key, &val, MDB_NEXT), k++) {
        uint64_t tok;
        uint32_t count[2] = {0, 0};

        if (key.mv_size != sizeof(tok))
            continue;
        memcpy(&tok, key.mv_data, sizeof(tok));
        /* As state_learn.c decodes a value: time, then the counts. */
        if (val.mv_size >= 16)
            memcpy(count, (const char *)val.mv_data + 8, sizeof(count));
        table_put(t, tok, count);
    }
    mdb_cursor_close(cur);
    if (rc != MDB_SUCCESS && rc != MDB_NOTFOUND) {
        free(t);
        return rc;
    }
    *ret = t;
    return MDB_SUCCESS;
}

int
state_learn_cache_build(struct state_learn_cache *c, MDB_txn *txn, MDB_dbi dbi, uint64_t gen)
{
    struct cache_table *t = NULL, *old;
    int rc;

    rc = table_fill(txn, dbi, gen, &t);
    if (rc == MDB_SUCCESS) {
        pthread_rwlock_wrlock(&c->lock);
        old = c->table;
        c->table = t;
        pthread_rwlock_unlock(&c->lock);
        free(old);
        atomic_fetch_add(&c->builds, 1);
    }
    pthread_mutex_unlock(&c->build_lock);
    return rc;
}

int
state_learn_cache_configure(struct state *st, const struct state_learn_cache_limits *l)
{
    if (st == NULL || l == NULL || st->learn_cache == NULL)
        return -EINVAL;
    atomic_store(&st->learn_cache->max_tokens, l->max_tokens);
    atomic_store(&st->learn_cache->asks_min, l->asks_min);
    atomic_store(&st->learn_cache->interval_s, l->interval_s);
    return 0;
}

int
state_learn_cache_stats(struct state *st, struct state_learn_cache_stats *ret)
{
    struct state_learn_cache *c;

    if (st == NULL || ret == NULL || st->learn_cache == NULL)
        return -EINVAL;
    c = st->learn_cache;
    memset(ret, 0, sizeof(*ret));
    pthread_rwlock_rdlock(&c->lock);
    if (c->table != NULL) {
        ret->generation = c->table->gen;
        ret->tokens = c->table->entries;
        ret->bytes = sizeof(*c->table) + (c->table->mask + 1) * sizeof(c->table->slot[0]);
    }
    pthread_rwlock_unlock(&c->lock);
    ret->builds = atomic_load(&c->builds);
    ret->hits = atomic_load(&c->hits);
    ret->misses = atomic_load(&c->misses);
    return 0;
}
