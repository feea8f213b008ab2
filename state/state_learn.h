/*
 * state_learn.h - the learned token counts of the per-site classifier
 * (slopctl learn, forget; the daemon's look-ups), kept behind an API of
 * their own so that another store (shared state) can hold them.
 *
 * A message is learned once, under a 64-bit digest of the tokens it adds
 * (classifier_learn_tokens() gives them), as rspamd's learn cache keys
 * by content: learning it again as the same class changes nothing, as the
 * other class moves exactly those tokens across, and forgetting it takes
 * them away. Two mails with one Message-ID are two messages; the
 * Message-ID's digest is kept beside the class only as a hint.
 * Every call is one transaction, so a learner killed half-way leaves the
 * counts of the messages it committed and nothing of the one it was in.
 * Thread-safe like state.h.
 */
#ifndef SLOP_STATE_LEARN_H
#define SLOP_STATE_LEARN_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "state.h"

enum state_learn_class {
    STATE_LEARN_SLOP = 0,
    STATE_LEARN_GENUINE = 1,
};

enum state_learn_outcome {
    STATE_LEARN_ADDED = 0, /* a message not learned before */
    STATE_LEARN_MOVED,     /* learned before as the other class */
    STATE_LEARN_UNCHANGED, /* learned before as this class */
    STATE_LEARN_FORGOTTEN, /* forget: its counts were taken away */
    STATE_LEARN_UNKNOWN,   /* forget: it was never learned */
};

struct state_learn_totals {
    uint64_t messages[2]; /* by enum state_learn_class */
    uint64_t tokens;      /* distinct tokens stored */
};

/* Most tokens one call takes (a message's cap, CLASSIFIER_LEARN_MAX_TOKENS). */
#define STATE_LEARN_MAX_TOKENS 512

/* One message to learn or forget: its distinct tokens, sorted (the key is
 * their digest), and the digest of its Message-ID (0: none). */
struct state_learn_msg {
    const uint64_t *tokens;
    size_t n;
    uint64_t hint;
};

/*
 * In one read transaction: the totals, and when both classes have at least
 * minimum messages, ret[i][0] slop and ret[i][1] genuine counts of
 * tokens[i] for i < n. Returns 0, -ENOENT when a class has fewer than
 * minimum (ret untouched, *ret_totals set), or another negative errno.
 */
int state_learn_counts(struct state *st, const uint64_t *tokens, size_t n, uint64_t minimum,
                       uint32_t (*ret)[2], struct state_learn_totals *ret_totals);

/* Learn msg as cls at now; sets *ret (may be NULL). 0 or a negative
 * errno (-EROFS, -E2BIG). */
int state_learn_add(struct state *st, const struct state_learn_msg *msg, enum state_learn_class cls,
                    time_t now, enum state_learn_outcome *ret);

/* Forget msg: take away what learning it added. */
int state_learn_forget(struct state *st, const struct state_learn_msg *msg,
                       enum state_learn_outcome *ret);

int state_learn_totals(struct state *st, struct state_learn_totals *ret);

/* Drop tokens last seen at or before before, then the oldest beyond
 * max_tokens (0: no cap); sets *ret_removed (may be NULL). The message
 * records stay, so a message is still not learned twice. */
int state_learn_prune(struct state *st, time_t before, uint64_t max_tokens, uint64_t *ret_removed);

/*
 * The per-process copy of the learned counts that the look-ups answer
 * from (state_learn_cache.c): it holds every token as of one learn
 * generation, which each learn, move, forget and prune bumps, and a
 * look-up uses it only when its own read transaction sees that very
 * generation, so every answer is what LMDB holds then. Built by a cursor
 * walk once the process has asked asks_min times under one generation,
 * at most once per interval_s seconds, by one thread while the others
 * read LMDB; never for more than max_tokens tokens (0: never), and 24 to
 * 48 bytes a token. Defaults: 2,000,000 tokens (64 MiB at most), 16
 * asks, 10 s.
 */
struct state_learn_cache_limits {
    uint64_t max_tokens;
    uint32_t asks_min;
    uint32_t interval_s;
};

struct state_learn_cache_stats {
    uint64_t generation; /* of the copy held */
    uint64_t tokens;     /* in the copy held; 0: none */
    size_t bytes;        /* the copy's memory */
    uint64_t builds;     /* copies built since open */
    uint64_t hits;       /* look-ups the copy answered */
    uint64_t misses;     /* look-ups that read LMDB */
};

/* Set st's limits (state_open() sets the defaults). 0 or -EINVAL. */
int state_learn_cache_configure(struct state *st, const struct state_learn_cache_limits *l);

/* What st's copy holds and did. 0 or -EINVAL. */
int state_learn_cache_stats(struct state *st, struct state_learn_cache_stats *ret);

/* The learn generation st's state holds (0 before anything was learned
 * under schema 4). 0 or a negative errno. */
int state_learn_generation(struct state *st, uint64_t *ret);

#endif
