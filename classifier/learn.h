/*
 * learn.h - the per-site learned classifier inside a scan: the tokens of
 * a message and the Robinson-Fisher combination of their learned counts
 * into the learned_ready and learned_slop measures.
 *
 * The counts come from the caller's lookup (learned_counts); the library
 * never stores them. Threading: no shared state.
 */
#ifndef SLOP_LEARN_H
#define SLOP_LEARN_H

#include <stddef.h>
#include <stdint.h>

#include "classifier.h"
#include "message.h"

/* Robinson's strength of the background and assumed probability of an
 * unknown token, and the most significant tokens combined (SpamBayes,
 * SpamAssassin's Bayes and rspamd use the same). */
#define LEARN_ROBINSON_S 1.0
#define LEARN_ROBINSON_X 0.5
#define LEARN_MAX_SIGNIFICANT 150
#define LEARN_MIN_DEVIATION 0.1

/* Abstention (learn.c says why): a token counts only when each class has
 * it in at least LEARN_MIN_EACH messages of the kind; the model speaks
 * only with LEARN_MIN_SIGNIFICANT such tokens away from 0.5 that make up
 * LEARN_MIN_COVERAGE of the message's tokens. */
#define LEARN_MIN_EACH 2
#define LEARN_MIN_SIGNIFICANT 10
#define LEARN_MIN_COVERAGE 0.25

/* The sorted distinct tokens of m, at most max, into ret; sets *ret_n.
 * 0 or -ENOMEM. */
int learn_tokens(const struct message *m, uint64_t *ret, size_t max, size_t *ret_n);

/* The digest of m's Message-ID, kept beside a learned message as a hint
 * (the key is its tokens' digest: state_learn.h); 0 without one. */
uint64_t learn_hint(const struct message *m);

/*
 * Combine counts[i] (slop, genuine) of n tokens with totals into the
 * probability that the message is slop, by Fisher's chi-square method on
 * Robinson's per-token estimates of the LEARN_MAX_SIGNIFICANT tokens
 * furthest from 0.5, among those both classes have LEARN_MIN_EACH times.
 * Sets *ret_used to the tokens both classes have, *ret_significant to
 * those of them away from 0.5. 0.5 when no token says anything.
 */
double learn_combine(const uint32_t (*counts)[2], size_t n, const uint64_t totals[2],
                     size_t *ret_used, size_t *ret_significant);

/* Look the tokens of m up through env's learned_counts and set the
 * learned measures and their evidence. 0 or -ENOMEM. */
int learn_apply(struct message *m, const struct classifier_envelope *env);

#endif
