/*
 * logreg.c - box-constrained, L2-regularised logistic regression by cyclic
 * coordinate descent (logreg.h).
 *
 * The examples come row-wise (features per example); a coordinate step
 * needs them column-wise (examples per feature), so the fit builds that
 * index once, with the margins (each example's score) kept up to date as
 * weights move. A step is the Newton step of the one-dimensional problem,
 * clipped to the bounds and halved until the objective does not grow:
 * with that safeguard every step is a descent step, and cyclic coordinate
 * descent on a smooth, strictly convex objective over a box converges.
 * Single-threaded; all memory is freed before returning.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "logreg.h"

#define LOGREG_HALVINGS 40

static double
softplus(double x)
{
    return x > 0 ? x + log1p(exp(-x)) : log1p(exp(x));
}

static double
sigmoid(double x)
{
    if (x >= 0)
        return 1.0 / (1.0 + exp(-x));
    double e = exp(x);

    return e / (1.0 + e);
}

/* Loss of one example whose score is m. */
static double
loss(const struct logreg_problem *p, size_t i, double m)
{
    double z = p->scale * (m - p->offset);

    return p->y[i] ? softplus(-z) : softplus(z);
}

static double
clip(double v, double lo, double hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

double
logreg_score(const struct logreg_problem *p, const double *w, size_t i)
{
    double s = 0;

    for (size_t k = p->row[i]; k < p->row[i + 1]; k++)
        s += w[p->feat[k]];
    return s;
}

double
logreg_objective(const struct logreg_problem *p, const double *w)
{
    double f = 0;

    for (size_t i = 0; i < p->n_examples; i++)
        if (p->c[i] > 0)
            f += p->c[i] * loss(p, i, logreg_score(p, w, i));
    for (size_t j = 0; j < p->n_features; j++)
        f += p->lambda / 2 * (w[j] - p->prior[j]) * (w[j] - p->prior[j]);
    return f;
}

static int
check(const struct logreg_problem *p)
{
    if (p->n_examples > LOGREG_MAX_EXAMPLES || p->n_features > LOGREG_MAX_FEATURES)
        return -E2BIG;
    if (!(p->lambda > 0) || !(p->scale > 0) || !isfinite(p->offset) || !(p->tol > 0))
        return -EINVAL;
    for (size_t j = 0; j < p->n_features; j++)
        if (!(p->lo[j] <= p->prior[j] && p->prior[j] <= p->hi[j]))
            return -EINVAL;
    for (size_t i = 0; i < p->n_examples; i++) {
        if (!(p->c[i] >= 0) || p->row[i] > p->row[i + 1])
            return -EINVAL;
        for (size_t k = p->row[i]; k < p->row[i + 1]; k++)
            if (p->feat[k] >= p->n_features)
                return -EINVAL;
    }
    return 0;
}

/* Change in the objective when w[j] (examples ex[0..n), margins m) moves
 * by d. */
static double
delta_objective(const struct logreg_problem *p, const size_t *ex, size_t n, const double *m,
                double wj, size_t j, double d)
{
    double before = (wj - p->prior[j]) * (wj - p->prior[j]);
    double after = (wj + d - p->prior[j]) * (wj + d - p->prior[j]);
    double f = p->lambda / 2 * (after - before);

    for (size_t k = 0; k < n; k++) {
        size_t i = ex[k];

        f += p->c[i] * (loss(p, i, m[i] + d) - loss(p, i, m[i]));
    }
    return f;
}

/* One coordinate step on w[j]; returns how far it moved. */
static double
step(const struct logreg_problem *p, const size_t *ex, size_t n, double *m, double *w, size_t j)
{
    double g = p->lambda * (w[j] - p->prior[j]), h = p->lambda, d;

    for (size_t k = 0; k < n; k++) {
        size_t i = ex[k];
        double q = sigmoid(p->scale * (m[i] - p->offset));

        g += p->c[i] * p->scale * (q - p->y[i]);
        h += p->c[i] * p->scale * p->scale * q * (1 - q);
    }
    d = clip(w[j] - g / h, p->lo[j], p->hi[j]) - w[j];
    for (unsigned t = 0; t < LOGREG_HALVINGS && d != 0; t++) {
        if (delta_objective(p, ex, n, m, w[j], j, d) <= 0)
            break;
        d /= 2;
        if (t == LOGREG_HALVINGS - 1)
            d = 0;
    }
    if (d == 0)
        return 0;
    w[j] += d;
    for (size_t k = 0; k < n; k++)
        m[ex[k]] += d;
    return fabs(d);
}

int
logreg_fit(const struct logreg_problem *p, double *w, unsigned *ret_sweeps)
{
    size_t *start = NULL, *ex = NULL, *fill = NULL, nnz;
    double *m = NULL;
    unsigned sweep = 0;
    int r;

    if (p == NULL || w == NULL)
        return -EINVAL;
    r = check(p);
    if (r < 0)
        return r;
    nnz = p->row[p->n_examples];
    start = calloc(p->n_features + 1, sizeof(*start));
    fill = calloc(p->n_features + 1, sizeof(*fill));
    ex = malloc((nnz + 1) * sizeof(*ex));
    m = calloc(p->n_examples + 1, sizeof(*m));
    if (start == NULL || fill == NULL || ex == NULL || m == NULL) {
        r = -ENOMEM;
        goto out;
    }
    /* Column index of the examples that count (c > 0), in example order. */
    for (size_t i = 0; i < p->n_examples; i++)
        if (p->c[i] > 0)
            for (size_t k = p->row[i]; k < p->row[i + 1]; k++)
                start[p->feat[k] + 1]++;
    for (size_t j = 0; j < p->n_features; j++)
        start[j + 1] += start[j];
    for (size_t i = 0; i < p->n_examples; i++)
        if (p->c[i] > 0)
            for (size_t k = p->row[i]; k < p->row[i + 1]; k++)
                ex[start[p->feat[k]] + fill[p->feat[k]]++] = i;

    for (size_t j = 0; j < p->n_features; j++)
        w[j] = clip(w[j], p->lo[j], p->hi[j]);
    for (size_t i = 0; i < p->n_examples; i++)
        m[i] = logreg_score(p, w, i);

    r = -ETIMEDOUT;
    while (sweep < p->max_sweeps) {
        double moved = 0;

        sweep++;
        for (size_t j = 0; j < p->n_features; j++) {
            double d = step(p, ex + start[j], start[j + 1] - start[j], m, w, j);

            if (d > moved)
                moved = d;
        }
        if (moved <= p->tol) {
            r = 0;
            break;
        }
    }
    if (ret_sweeps != NULL)
        *ret_sweeps = sweep;
out:
    free(start);
    free(fill);
    free(ex);
    free(m);
    return r;
}
