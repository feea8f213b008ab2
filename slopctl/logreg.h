/*
 * logreg.h - L2-regularised logistic regression with box constraints, the
 * optimiser behind "slopctl fit" (docs/scoring.md).
 *
 * Each example is a set of binary features (the rules that matched) and a
 * label; its score is the sum of the weights of its features, and
 *     p(slop) = sigmoid(scale * (score - offset)),
 * a fixed slope and offset (the tag threshold), so weights stay in score
 * units. The fit minimises
 *     sum_i c_i * logloss_i + lambda/2 * sum_j (w_j - prior_j)^2
 * subject to lo_j <= w_j <= hi_j, by cyclic coordinate descent with a
 * projected Newton step and halving line search per coordinate. The
 * problem is convex (strictly, for lambda > 0), so the result depends
 * only on the data, not on the start; the order of operations is fixed,
 * so the same input gives bit-identical output. No allocation escapes.
 */
#ifndef SLOPCTL_LOGREG_H
#define SLOPCTL_LOGREG_H

#include <stddef.h>
#include <stdint.h>

/* Hard caps; logreg_fit() refuses larger problems with -E2BIG. */
#define LOGREG_MAX_EXAMPLES 1000000u
#define LOGREG_MAX_FEATURES 100000u

struct logreg_problem {
    size_t n_examples;
    size_t n_features;
    /* Example i has features feat[row[i]] .. feat[row[i + 1] - 1], each
     * < n_features and listed once; row has n_examples + 1 entries. */
    const size_t *row;
    const uint32_t *feat;
    const unsigned char *y; /* 1: positive (slop), 0: negative */
    const double *c;        /* weight per example, >= 0; 0 leaves it out */
    const double *prior;    /* per feature: the mean the penalty pulls to */
    const double *lo, *hi;  /* per feature: bounds, lo <= prior <= hi */
    double lambda;          /* > 0 */
    double scale;           /* > 0 */
    double offset;
    unsigned max_sweeps; /* passes over all features */
    double tol;          /* converged when no weight moves more than this in a sweep */
};

/*
 * Fit w[0..n_features) in place; w is the start (clipped to the bounds)
 * and the result. *ret_sweeps (may be NULL) gets the passes made. Returns
 * 0 when converged, -ETIMEDOUT when max_sweeps ran out (w is then the last
 * iterate), -EINVAL or -E2BIG for a bad problem, -ENOMEM.
 */
int logreg_fit(const struct logreg_problem *p, double *w, unsigned *ret_sweeps);

/* Score of example i under w: the sum of its features' weights. */
double logreg_score(const struct logreg_problem *p, const double *w, size_t i);

/* The objective at w (for tests and reports). */
double logreg_objective(const struct logreg_problem *p, const double *w);

#endif
