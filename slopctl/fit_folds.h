/*
 * fit_folds.h - deal labelled messages to the folds of a cross-validation
 * by source: every message of one source (a case, a thread, a sender, a
 * list, a project) lands in the same fold, so near-copies never sit on
 * both sides of a split (docs/scoring.md, "Cross-validation").
 * Pure computation: no I/O, no state kept between calls.
 */
#ifndef SLOPCTL_FIT_FOLDS_H
#define SLOPCTL_FIT_FOLDS_H

#include <stddef.h>
#include <stdint.h>

struct fit_folds_item {
    uint64_t source; /* any hash naming the source; equal means one source */
    uint32_t group;  /* the row the figures are given in */
};

/*
 * Deal the n items. With k >= 2, the sources first seen in each group
 * (the lowest group among their items), in the order of a hash of the
 * source and seed, go to the k folds in turn, starting one fold further
 * for each group, so every fold gets its share of every group's sources.
 * With k == 0, each source is its own fold (leave one source out), the
 * folds numbered in that same order. Writes ret_fold[i] (below
 * *ret_n_folds) for each item and *ret_n_folds (k, or the number of
 * sources). Returns 0, -EINVAL when n is 0 or k is 1, -E2BIG past UINT_MAX
 * sources, or -ENOMEM; the outputs are written only on success.
 */
int fit_folds_deal(const struct fit_folds_item *item, size_t n, unsigned k, uint64_t seed,
                   unsigned *ret_fold, unsigned *ret_n_folds);

#endif
