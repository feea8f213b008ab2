/*
 * state_learn_cache.h - slopstate's private, per-process copy of the
 * learned token counts (state_learn.c's look-ups answer from it); not
 * installed, not seen above slopstate.
 *
 * The copy holds every token of "learn_token" as it stood under one learn
 * generation (a counter in "index_meta" that every learn, move, forget,
 * prune and upgrade bumps in its own write transaction) and the table's
 * entry count. A look-up answers from it only when the transaction it
 * runs in reads that same generation and count, so an answer is always
 * what LMDB holds in that transaction. Otherwise the look-up reads LMDB
 * and, once the process has asked asks_min times under one generation
 * and at most once per interval_s, one thread rebuilds the copy (a
 * trylock: no scan waits for another's build).
 *
 * Threading: every call is safe from any thread; a built table is never
 * changed, only replaced under a write lock held for the swap.
 */
#ifndef SLOP_STATE_LEARN_CACHE_H
#define SLOP_STATE_LEARN_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <lmdb.h>

#include "state_learn.h"

struct state_learn_cache;

/* A new, empty cache with the default limits; NULL without memory. */
struct state_learn_cache *state_learn_cache_new(void);
/* Free c and its table; accepts NULL, returns NULL. */
struct state_learn_cache *state_learn_cache_free(struct state_learn_cache *c);

/* The counts of tokens[0..n) into ret when c holds generation gen with
 * entries tokens; false (ret untouched) otherwise. */
bool state_learn_cache_lookup(struct state_learn_cache *c, uint64_t gen, uint64_t entries,
                              const uint64_t *tokens, size_t n, uint32_t (*ret)[2]);

/* After a look-up the cache could not answer, under gen with entries
 * tokens: true when this thread should build now, and then it holds the
 * build lock until state_learn_cache_build() or _build_cancel(). */
bool state_learn_cache_want(struct state_learn_cache *c, uint64_t gen, uint64_t entries);

/* Build the table from dbi ("learn_token") in txn, in which the
 * generation reads gen; releases the build lock. An LMDB code. */
int state_learn_cache_build(struct state_learn_cache *c, MDB_txn *txn, MDB_dbi dbi, uint64_t gen);
/* Release the build lock without building. */
void state_learn_cache_build_cancel(struct state_learn_cache *c);

#endif
