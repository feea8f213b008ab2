/*
 * test_logreg.c - the optimiser behind slopctl fit: the optimum it finds
 * satisfies the optimality conditions of the box-constrained problem, the
 * prior is kept without data, bounds hold, and the result is repeatable.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "logreg.h"

#define MAX_EX 64
#define MAX_FEAT 4

/* A toy problem: example i has the features whose bits are set in mask[i]. */
struct toy {
    struct logreg_problem p;
    size_t row[MAX_EX + 1];
    uint32_t feat[MAX_EX * MAX_FEAT];
    unsigned char y[MAX_EX];
    double c[MAX_EX];
    double prior[MAX_FEAT], lo[MAX_FEAT], hi[MAX_FEAT];
};

static void
toy_init(struct toy *t, const unsigned *mask, const unsigned char *y, size_t n, size_t n_feat,
         const double *prior, double lambda)
{
    size_t k = 0;

    memset(t, 0, sizeof(*t));
    for (size_t i = 0; i < n; i++) {
        t->row[i] = k;
        for (uint32_t j = 0; j < n_feat; j++)
            if (mask[i] & (1u << j))
                t->feat[k++] = j;
        t->y[i] = y[i];
        t->c[i] = 1;
    }
    t->row[n] = k;
    for (size_t j = 0; j < n_feat; j++) {
        t->prior[j] = prior[j];
        t->lo[j] = prior[j] > 0 ? 0 : prior[j];
        t->hi[j] = prior[j] > 0 ? 2 * prior[j] : 0;
    }
    t->p = (struct logreg_problem){
        .n_examples = n,
        .n_features = n_feat,
        .row = t->row,
        .feat = t->feat,
        .y = t->y,
        .c = t->c,
        .prior = t->prior,
        .lo = t->lo,
        .hi = t->hi,
        .lambda = lambda,
        .scale = 1,
        .offset = 5,
        .max_sweeps = 10000,
        .tol = 1e-10,
    };
}

/* Optimality over a box: at each weight the gradient is 0 inside, points
 * out of the box at a bound (so no feasible move lowers the objective). */
static void
assert_optimal(const struct logreg_problem *p, const double *w)
{
    for (size_t j = 0; j < p->n_features; j++) {
        double g = p->lambda * (w[j] - p->prior[j]);

        for (size_t i = 0; i < p->n_examples; i++)
            for (size_t k = p->row[i]; k < p->row[i + 1]; k++)
                if (p->feat[k] == j) {
                    double z = p->scale * (logreg_score(p, w, i) - p->offset);

                    g += p->c[i] * p->scale * (1 / (1 + exp(-z)) - p->y[i]);
                }
        assert_true(w[j] >= p->lo[j] && w[j] <= p->hi[j]);
        if (w[j] > p->lo[j] + 1e-9 && w[j] < p->hi[j] - 1e-9)
            assert_true(fabs(g) < 1e-6);
        else if (w[j] <= p->lo[j] + 1e-9)
            assert_true(g > -1e-6);
        else
            assert_true(g < 1e-6);
    }
}

static void
test_no_data_keeps_prior(void **state)
{
    static const double prior[] = {1.5, 0, 3};
    struct toy t;
    double w[3] = {7, 7, -7};

    (void)state;
    toy_init(&t, NULL, NULL, 0, 3, prior, 1);
    assert_int_equal(logreg_fit(&t.p, w, NULL), 0);
    for (size_t j = 0; j < 3; j++)
        assert_float_equal(w[j], prior[j], 1e-9);
}

/* Feature 0 only on positives, feature 1 only on negatives: 0 rises
 * above its prior, 1 falls, and with a weak penalty both reach a bound. */
static void
test_separable(void **state)
{
    static const double prior[] = {2, 1};
    unsigned mask[20];
    unsigned char y[20];
    struct toy t;
    double w[2] = {2, 1};
    unsigned sweeps = 0;

    (void)state;
    for (size_t i = 0; i < 20; i++) {
        y[i] = i < 10;
        mask[i] = y[i] ? 1u : 2u;
    }
    toy_init(&t, mask, y, 20, 2, prior, 1);
    assert_int_equal(logreg_fit(&t.p, w, &sweeps), 0);
    assert_true(sweeps > 1);
    assert_true(w[0] > prior[0]);
    assert_true(w[1] < prior[1]);
    assert_optimal(&t.p, w);

    toy_init(&t, mask, y, 20, 2, prior, 0.01);
    assert_int_equal(logreg_fit(&t.p, w, NULL), 0);
    assert_float_equal(w[0], 4, 1e-9);
    assert_float_equal(w[1], 0, 0);
    assert_optimal(&t.p, w);
}

/* A gap rule seen only on genuine mail goes to 0 and no further; a
 * stronger penalty keeps it nearer its prior; an example with weight 0
 * changes nothing. */
static void
test_nonnegative_and_penalty(void **state)
{
    static const double prior[] = {1, 3};
    static const unsigned mask[] = {1, 1, 1, 3, 2, 2, 2, 2};
    static const unsigned char y[] = {0, 0, 0, 0, 1, 1, 1, 0};
    struct toy t;
    double weak[2] = {0}, strong[2] = {0}, dropped[2] = {0}, obj;

    (void)state;
    toy_init(&t, mask, y, 8, 2, prior, 0.1);
    assert_int_equal(logreg_fit(&t.p, weak, NULL), 0);
    assert_true(weak[0] >= 0 && weak[0] < 0.2);
    assert_optimal(&t.p, weak);
    obj = logreg_objective(&t.p, weak);
    for (int k = -2; k <= 2; k++) {
        double d = 0.05 * k, v[2] = {weak[0] + fabs(d), weak[1] + d};

        if (v[1] >= t.lo[1] && v[1] <= t.hi[1])
            assert_true(logreg_objective(&t.p, v) >= obj - 1e-12);
    }

    toy_init(&t, mask, y, 8, 2, prior, 100);
    assert_int_equal(logreg_fit(&t.p, strong, NULL), 0);
    assert_true(fabs(strong[0] - prior[0]) < fabs(weak[0] - prior[0]));
    assert_optimal(&t.p, strong);

    t.c[7] = 0;
    assert_int_equal(logreg_fit(&t.p, dropped, NULL), 0);
    assert_optimal(&t.p, dropped);
    assert_true(dropped[1] > strong[1]);
}

static void
test_repeatable_and_bad_input(void **state)
{
    static const double prior[] = {1, 2, 0.5};
    unsigned mask[40];
    unsigned char y[40];
    struct toy t;
    double a[3] = {0}, b[3] = {5, 5, 5};

    (void)state;
    for (size_t i = 0; i < 40; i++) {
        mask[i] = (unsigned)((i * 7 + 3) % 8);
        y[i] = (i * 5) % 3 == 0;
    }
    toy_init(&t, mask, y, 40, 3, prior, 2);
    assert_int_equal(logreg_fit(&t.p, a, NULL), 0);
    assert_int_equal(logreg_fit(&t.p, b, NULL), 0);
    for (size_t j = 0; j < 3; j++)
        assert_float_equal(a[j], b[j], 1e-7);
    assert_optimal(&t.p, a);
    memset(b, 0, sizeof(b));
    assert_int_equal(logreg_fit(&t.p, b, NULL), 0);
    assert_memory_equal(a, b, sizeof(a));

    t.p.max_sweeps = 1;
    b[0] = b[1] = b[2] = 0;
    assert_int_equal(logreg_fit(&t.p, b, NULL), -ETIMEDOUT);
    t.p.max_sweeps = 100;
    t.p.lambda = 0;
    assert_int_equal(logreg_fit(&t.p, b, NULL), -EINVAL);
    t.p.lambda = 1;
    t.lo[0] = 2;
    assert_int_equal(logreg_fit(&t.p, b, NULL), -EINVAL);
    t.lo[0] = 0;
    t.feat[0] = 3;
    assert_int_equal(logreg_fit(&t.p, b, NULL), -EINVAL);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_no_data_keeps_prior),
        cmocka_unit_test(test_separable),
        cmocka_unit_test(test_nonnegative_and_penalty),
        cmocka_unit_test(test_repeatable_and_bad_input),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
