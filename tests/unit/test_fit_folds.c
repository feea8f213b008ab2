/*
 * test_fit_folds.c - cross-validation folds dealt by whole source: the
 * messages of one source never straddle folds, leave-one-source-out gives
 * one source per fold, every fold gets a share of each group's sources,
 * and the deal depends on the sources and the seed, not on the order.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fit_folds.h"

#define MAX_ITEMS 400

/* A corpus of n items: group g has sources[g] sources, each with a run of
 * near-copies (1 to 5 items); sources are numbered across groups. */
struct corpus {
    struct fit_folds_item item[MAX_ITEMS];
    size_t n;
};

static void
corpus_make(struct corpus *c, const unsigned *sources, size_t n_groups)
{
    uint64_t next = 1;

    memset(c, 0, sizeof(*c));
    for (uint32_t g = 0; g < n_groups; g++)
        for (unsigned q = 0; q < sources[g]; q++, next++)
            for (unsigned copy = 0; copy <= next % 5 && c->n < MAX_ITEMS; copy++)
                c->item[c->n++] = (struct fit_folds_item){next * 0x100000001b3ull, g};
}

/* Every source's items in one fold, and every fold below n_folds. */
static void
assert_whole(const struct corpus *c, const unsigned *fold, unsigned n_folds)
{
    for (size_t i = 0; i < c->n; i++) {
        assert_true(fold[i] < n_folds);
        for (size_t j = 0; j < i; j++)
            if (c->item[j].source == c->item[i].source)
                assert_int_equal(fold[j], fold[i]);
    }
}

static void
test_k_folds_keep_sources_whole(void **state)
{
    static const struct {
        unsigned sources[3];
        unsigned k;
    } cases[] = {
        {{14, 3, 4}, 2}, {{14, 3, 4}, 5}, {{14, 3, 4}, 20}, {{1, 1, 40}, 3}, {{30, 30, 30}, 7},
    };
    unsigned fold[MAX_ITEMS], n_folds = 0;
    struct corpus c;

    (void)state;
    for (size_t t = 0; t < sizeof(cases) / sizeof(cases[0]); t++) {
        corpus_make(&c, cases[t].sources, 3);
        assert_int_equal(fit_folds_deal(c.item, c.n, cases[t].k, 0, fold, &n_folds), 0);
        assert_int_equal(n_folds, cases[t].k);
        assert_whole(&c, fold, n_folds);
    }
}

static void
test_each_group_spread(void **state)
{
    /* A group of at least k sources has a source in every fold: each
     * fold is tested on every kind of mail. */
    const unsigned sources[3] = {14, 6, 9};
    const unsigned k = 5;
    unsigned fold[MAX_ITEMS], n_folds = 0;
    struct corpus c;

    (void)state;
    corpus_make(&c, sources, 3);
    assert_int_equal(fit_folds_deal(c.item, c.n, k, 3, fold, &n_folds), 0);
    for (uint32_t g = 0; g < 3; g++)
        for (unsigned f = 0; f < k; f++) {
            bool seen = false;

            for (size_t i = 0; i < c.n; i++)
                seen = seen || (c.item[i].group == g && fold[i] == f);
            assert_true(seen);
        }
}

static void
test_leave_one_source_out(void **state)
{
    const unsigned sources[3] = {14, 1, 3};
    unsigned fold[MAX_ITEMS], n_folds = 0;
    uint64_t owner[MAX_ITEMS];
    struct corpus c;

    (void)state;
    corpus_make(&c, sources, 3);
    assert_int_equal(fit_folds_deal(c.item, c.n, 0, 0, fold, &n_folds), 0);
    assert_int_equal(n_folds, 18);
    assert_whole(&c, fold, n_folds);
    /* One source per fold, none empty. */
    for (unsigned f = 0; f < n_folds; f++)
        owner[f] = 0;
    for (size_t i = 0; i < c.n; i++) {
        assert_true(owner[fold[i]] == 0 || owner[fold[i]] == c.item[i].source);
        owner[fold[i]] = c.item[i].source;
    }
    for (unsigned f = 0; f < n_folds; f++)
        assert_true(owner[f] != 0);
}

static void
test_source_in_two_groups(void **state)
{
    /* One project's slop and valid reports: one source, one fold. */
    struct fit_folds_item it[6] = {
        {7, 0}, {8, 0}, {9, 1}, {7, 2}, {7, 2}, {8, 1},
    };
    unsigned fold[6], n_folds = 0;

    (void)state;
    for (unsigned k = 0; k <= 3; k += 2) {
        assert_int_equal(fit_folds_deal(it, 6, k, 1, fold, &n_folds), 0);
        assert_int_equal(fold[0], fold[3]);
        assert_int_equal(fold[0], fold[4]);
        assert_int_equal(fold[1], fold[5]);
    }
    assert_int_equal(n_folds, 2);
    assert_int_equal(fit_folds_deal(it, 6, 0, 1, fold, &n_folds), 0);
    assert_int_equal(n_folds, 3);
}

static void
test_order_does_not_matter(void **state)
{
    const unsigned sources[2] = {12, 8};
    unsigned fold[MAX_ITEMS], fold_rev[MAX_ITEMS], n_folds = 0;
    struct corpus c, rev;
    bool differs = false;

    (void)state;
    corpus_make(&c, sources, 2);
    rev.n = c.n;
    for (size_t i = 0; i < c.n; i++)
        rev.item[i] = c.item[c.n - 1 - i];
    assert_int_equal(fit_folds_deal(c.item, c.n, 4, 9, fold, &n_folds), 0);
    assert_int_equal(fit_folds_deal(rev.item, rev.n, 4, 9, fold_rev, &n_folds), 0);
    for (size_t i = 0; i < c.n; i++)
        assert_int_equal(fold[i], fold_rev[c.n - 1 - i]);
    /* Another seed deals otherwise. */
    assert_int_equal(fit_folds_deal(c.item, c.n, 4, 10, fold_rev, &n_folds), 0);
    for (size_t i = 0; i < c.n; i++)
        differs = differs || fold[i] != fold_rev[i];
    assert_true(differs);
}

static void
test_errors(void **state)
{
    struct fit_folds_item it[2] = {{1, 0}, {2, 0}};
    unsigned fold[2] = {77, 77}, n_folds = 77;

    (void)state;
    assert_int_equal(fit_folds_deal(it, 0, 2, 0, fold, &n_folds), -EINVAL);
    assert_int_equal(fit_folds_deal(it, 2, 1, 0, fold, &n_folds), -EINVAL);
    assert_int_equal(n_folds, 77);
    assert_int_equal(fold[0], 77);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_k_folds_keep_sources_whole),
        cmocka_unit_test(test_each_group_spread),
        cmocka_unit_test(test_leave_one_source_out),
        cmocka_unit_test(test_source_in_two_groups),
        cmocka_unit_test(test_order_does_not_matter),
        cmocka_unit_test(test_errors),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
