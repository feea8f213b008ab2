/*
 * state_learn.h - the learned token counts of the per-site classifier
 * (slopctl learn, forget; the daemon's look-ups), kept behind an API of
 * their own so that another store (shared state) can hold them.
 *
 * A message is learned once, under a 64-bit key (classifier_learn_tokens()
 * gives it): learning it again as the same class changes nothing, as the
 * other class moves its tokens across, and forgetting it takes them away.
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
#define STATE_LEARN_MAX_TOKENS 2048

/*
 * In one read transaction: the totals, and when both classes have at least
 * minimum messages, ret[i][0] slop and ret[i][1] genuine counts of
 * tokens[i] for i < n. Returns 0, -ENOENT when a class has fewer than
 * minimum (ret untouched, *ret_totals set), or another negative errno.
 */
int state_learn_counts(struct state *st, const uint64_t *tokens, size_t n, uint64_t minimum,
                       uint32_t (*ret)[2], struct state_learn_totals *ret_totals);

/* Learn the message key with tokens[0..n) (distinct) as cls at now; sets
 * *ret (may be NULL). 0 or a negative errno (-EROFS, -E2BIG). */
int state_learn_add(struct state *st, uint64_t key, enum state_learn_class cls,
                    const uint64_t *tokens, size_t n, time_t now, enum state_learn_outcome *ret);

/* Forget the message key, whose tokens are tokens[0..n). */
int state_learn_forget(struct state *st, uint64_t key, const uint64_t *tokens, size_t n,
                       enum state_learn_outcome *ret);

int state_learn_totals(struct state *st, struct state_learn_totals *ret);

/* Drop tokens last seen at or before before, then the oldest beyond
 * max_tokens (0: no cap); sets *ret_removed (may be NULL). The message
 * records stay, so a message is still not learned twice. */
int state_learn_prune(struct state *st, time_t before, uint64_t max_tokens, uint64_t *ret_removed);

#endif
