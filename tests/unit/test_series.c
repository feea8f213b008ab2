/*
 * test_series.c - the cover letter measures and the series look-ups
 * (classifier/series.c), on fixtures written for them.
 *
 * Single-threaded; everything is freed before each test returns.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "classifier.h"
#include "facts.h"
#include "message.h"
#include "testutil.h"

struct cover_case {
    const char *fixture;
    enum measure_id measure;
    double min, max;
};

/* Bounds, not exact counts: the wording of a fixture may change, the
 * side of the rules' thresholds it falls on must not. */
static const struct cover_case cover_cases[] = {
    /* one small patch behind 800 words that argue case after case */
    {"det-series-cover-verbose.eml", MEASURE_COVER_WORDS, 600, 1000},
    {"det-series-cover-verbose.eml", MEASURE_COVER_CHANGED_LINES, 8, 8},
    {"det-series-cover-verbose.eml", MEASURE_COVER_WORDS_PER_CHANGED_LINE, 60, 130},
    {"det-series-cover-verbose.eml", MEASURE_COVER_CASES, 8, 30},
    /* a long cover letter of a big series: history and shortlog left out;
     * it argues a few cases, as review asked it to */
    {"det-genuine-series-big-cover.eml", MEASURE_COVER_WORDS, 250, 450},
    {"det-genuine-series-big-cover.eml", MEASURE_COVER_WORDS_PER_CHANGED_LINE, 0.2, 1},
    {"det-genuine-series-big-cover.eml", MEASURE_COVER_CASES, 4, 6},
    /* a short one of a small series */
    {"det-genuine-series-short-cover.eml", MEASURE_COVER_WORDS, 20, 60},
    {"det-genuine-series-short-cover.eml", MEASURE_COVER_RESTATED_SHARE, 0, 0},
    {"det-series-cover-restates.eml", MEASURE_COVER_RESTATED_SHARE, 1, 1},
    /* a patch is no cover letter */
    {"det-genuine-series-v2.eml", MEASURE_COVER_WORDS, 0, 0},
    {"state/series-patch.eml", MEASURE_COVER_WORDS, 0, 0},
};

static void
test_cover_measures(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(cover_cases) / sizeof(cover_cases[0]); i++) {
        const struct cover_case *c = &cover_cases[i];
        struct message *m = testutil_message_fixture(c->fixture);
        double v = m->measures[c->measure];

        if (v < c->min || v > c->max) {
            print_error("case %zu (%s, %s): %g not in [%g, %g]\n", i, c->fixture,
                        measure_name(c->measure), v, c->min, c->max);
            fail();
        }
        message_free(m);
    }
}

struct fake {
    const char *flagged_id;
    uint32_t patches, found;
    char root[CLASSIFIER_MSGID_MAX];
    uint32_t version, index;
    size_t n_fps;
    unsigned calls;
};

static bool
f_cover_flagged(void *ctx, const char *id, char *buf, size_t size)
{
    struct fake *f = ctx;

    f->calls++;
    if (f->flagged_id == NULL || strcmp(id, f->flagged_id) != 0)
        return false;
    snprintf(buf, size, "COVER_VERBOSE_FOR_SERIES, COVER_ARGUES_CASES");
    return true;
}

static uint32_t
f_series_repeats(void *ctx, const struct classifier_series *s, const uint64_t *fps, size_t n,
                 uint32_t *ret_found)
{
    struct fake *f = ctx;

    (void)fps;
    f->calls++;
    snprintf(f->root, sizeof(f->root), "%s", s->root);
    f->version = s->version;
    f->index = s->index;
    f->n_fps = n;
    *ret_found = f->found;
    return f->patches;
}

static struct message *
series_facts_for(const char *name, struct fake *f, struct classifier_result *res)
{
    struct classifier_lookup lk = {
        .ctx = f, .cover_flagged = f_cover_flagged, .series_repeats = f_series_repeats};
    struct classifier_envelope env = {.mail_from = "", .lookup = &lk};
    struct message *m = testutil_message_fixture(name);

    memset(res, 0, sizeof(*res));
    assert_int_equal(facts_apply(m, f ? &env : NULL, res), 0);
    return m;
}

static void
result_release(struct classifier_result *res)
{
    free(res->fingerprints);
    free(res->series_root);
    free(res->log_paragraphs);
}

/* Without a lookup: what the caller records is there, no measure moves. */
static void
test_no_lookup(void **state)
{
    struct classifier_result res;
    struct message *m = series_facts_for("state/series-patch.eml", NULL, &res);

    (void)state;
    assert_string_equal(res.series_root, "cover-v1@example.net");
    assert_int_equal(res.series_version, 2);
    assert_int_equal(res.series_index, 2);
    assert_int_equal(res.series_total, 3);
    /* two paragraphs of prose; "Short." is too short to repeat by design */
    assert_int_equal(res.n_log_paragraphs, 2);
    for (int id = MEASURE_SERIES_COVER_FLAGGED; id <= MEASURE_SERIES_REPEATING_PATCHES; id++) {
        assert_true(m->measures[id] == 0);
        assert_null(m->measure_evidence[id]);
    }
    result_release(&res);
    message_free(m);
}

static void
test_cover_flagged(void **state)
{
    struct classifier_result res;
    struct fake f = {.flagged_id = "cover-v2@example.net"};
    struct message *m = series_facts_for("state/series-patch.eml", &f, &res);

    (void)state;
    assert_true(m->measures[MEASURE_SERIES_COVER_FLAGGED] == 1);
    assert_string_equal(m->measure_evidence[MEASURE_SERIES_COVER_FLAGGED],
                        "the series' cover letter <cover-v2@example.net> was flagged: "
                        "COVER_VERBOSE_FOR_SERIES, COVER_ARGUES_CASES");
    result_release(&res);
    message_free(m);

    f = (struct fake){.flagged_id = "unrelated@example.net"};
    m = series_facts_for("state/series-patch.eml", &f, &res);
    assert_true(m->measures[MEASURE_SERIES_COVER_FLAGGED] == 0);
    assert_null(m->measure_evidence[MEASURE_SERIES_COVER_FLAGGED]);
    assert_true(f.calls > 0);
    result_release(&res);
    message_free(m);

    /* A cover letter looks nothing up. */
    f = (struct fake){.flagged_id = "cover-v2@example.net", .patches = 2, .found = 1};
    m = series_facts_for("det-series-cover-verbose.eml", &f, &res);
    assert_int_equal(f.calls, 0);
    assert_int_equal(res.n_log_paragraphs, 0);
    assert_non_null(res.series_root);
    result_release(&res);
    message_free(m);
}

static void
test_repeats(void **state)
{
    struct classifier_result res;
    struct fake f = {.patches = 2, .found = 0x2};
    struct message *m = series_facts_for("state/series-patch.eml", &f, &res);

    (void)state;
    assert_string_equal(f.root, "cover-v1@example.net");
    assert_int_equal(f.version, 2);
    assert_int_equal(f.index, 2);
    assert_int_equal(f.n_fps, 2);
    assert_true(m->measures[MEASURE_SERIES_REPEATING_PATCHES] == 2);
    /* the second paragraph: 19 words of a log of about 45 */
    assert_true(m->measures[MEASURE_SERIES_REPEATED_WORDS] >= 15 &&
                m->measures[MEASURE_SERIES_REPEATED_WORDS] <= 25);
    assert_true(m->measures[MEASURE_SERIES_REPEATED_SHARE] > 0.3 &&
                m->measures[MEASURE_SERIES_REPEATED_SHARE] < 0.6);
    assert_non_null(
        strstr(m->measure_evidence[MEASURE_SERIES_REPEATED_WORDS], "1 of 2 changelog paragraphs"));
    result_release(&res);
    message_free(m);

    f = (struct fake){.patches = 0};
    m = series_facts_for("state/series-patch.eml", &f, &res);
    assert_true(m->measures[MEASURE_SERIES_REPEATED_WORDS] == 0);
    assert_null(m->measure_evidence[MEASURE_SERIES_REPEATED_WORDS]);
    result_release(&res);
    message_free(m);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cover_measures),
        cmocka_unit_test(test_no_lookup),
        cmocka_unit_test(test_cover_flagged),
        cmocka_unit_test(test_repeats),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
