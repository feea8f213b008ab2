/*
 * test_metrics.c - the metrics renderer (milter/metrics.c): counts in,
 * OpenMetrics and Prometheus text out; the rule name table across rule
 * sets; histogram buckets; label escaping; every line well formed.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "classifier.h"
#include "metrics.h"

static char *
render(const struct metrics_gauges *g, bool om)
{
    char *text = NULL;
    size_t len = 0;

    assert_int_equal(metrics_render(g, om, &text, &len), 0);
    assert_int_equal(strlen(text), len);
    return text;
}

/* The value of the sample line that starts with prefix (name and labels). */
static long
sample(const char *text, const char *prefix)
{
    size_t n = strlen(prefix);

    for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
        if (strncmp(p, prefix, n) == 0 && p[n] == ' ')
            return strtol(p + n + 1, NULL, 10);
    return -1;
}

static int
setup(void **state)
{
    (void)state;
    metrics_reset();
    return 0;
}

static void
test_messages(void **state)
{
    struct metrics_gauges g = {.rules_generation = 3, .n_rules = 7};
    char *t;

    (void)state;
    for (int i = 0; i < 5; i++)
        metrics_note_message(true, CLASSIFIER_KIND_PATCH, CLASSIFIER_ACTION_TAG, VERDICT_ACCEPT,
                             false);
    metrics_note_message(true, CLASSIFIER_KIND_REPORT, CLASSIFIER_ACTION_REJECT, VERDICT_REJECT,
                         false);
    /* Mode monitor: the reply was only logged, and the label says so. */
    metrics_note_message(true, CLASSIFIER_KIND_REPORT, CLASSIFIER_ACTION_REPLY, VERDICT_ACCEPT,
                         true);
    /* A failure policy: kind and action are not known. */
    metrics_note_message(false, CLASSIFIER_KIND_PATCH, CLASSIFIER_ACTION_REJECT, VERDICT_TEMPFAIL,
                         false);
    /* Out-of-range values land in a valid cell instead of past the array. */
    metrics_note_message(true, (enum classifier_kind)99, (enum classifier_action)99,
                         (enum verdict_result)99, false);
    metrics_note_error(METRICS_ERR_TIMEOUT);
    metrics_note_error(METRICS_ERR_TIMEOUT);
    metrics_note_error((enum metrics_error)999);
    metrics_note_skip(METRICS_SKIP_AUTHENTICATED);

    t = render(&g, true);
    assert_int_equal(sample(t, "slop_messages_total{kind=\"patch\",action=\"tag\",result="
                               "\"accept\",mode=\"enforce\"}"),
                     5);
    assert_int_equal(sample(t, "slop_messages_total{kind=\"report\",action=\"reject\",result="
                               "\"reject\",mode=\"enforce\"}"),
                     1);
    assert_int_equal(sample(t, "slop_messages_total{kind=\"none\",action=\"none\",result="
                               "\"tempfail\",mode=\"enforce\"}"),
                     1);
    assert_int_equal(sample(t, "slop_messages_total{kind=\"none\",action=\"none\",result="
                               "\"accept\",mode=\"enforce\"}"),
                     1);
    assert_int_equal(
        sample(t, "slop_messages_total{kind=\"report\",action=\"reply\",result=\"accept\","
                  "mode=\"monitor\"}"),
        1);
    assert_int_equal(
        sample(t, "slop_messages_total{kind=\"report\",action=\"reply\",result=\"accept\","
                  "mode=\"enforce\"}"),
        -1);
    /* Combinations never seen are left out. */
    assert_int_equal(sample(t, "slop_messages_total{kind=\"reply\",action=\"tag\",result="
                               "\"accept\",mode=\"enforce\"}"),
                     -1);
    assert_int_equal(sample(t, "slop_errors_total{class=\"timeout\"}"), 2);
    assert_int_equal(sample(t, "slop_errors_total{class=\"internal\"}"), 0);
    assert_int_equal(sample(t, "slop_messages_skipped_total{reason=\"authenticated\"}"), 1);
    assert_int_equal(sample(t, "slop_rules_generation"), 3);
    assert_int_equal(sample(t, "slop_rules_loaded"), 7);
    /* No state: no state gauges. */
    assert_null(strstr(t, "slop_state_"));
    free(t);
}

static void
test_formats(void **state)
{
    struct metrics_gauges g = {0};
    char *om, *prom;
    size_t len;

    (void)state;
    om = render(&g, true);
    prom = render(&g, false);
    len = strlen(om);
    /* OpenMetrics names a counter's family without _total and ends in # EOF. */
    assert_non_null(strstr(om, "# TYPE slop_messages counter\n"));
    assert_true(len > 6 && strcmp(om + len - 6, "# EOF\n") == 0);
    assert_non_null(strstr(prom, "# TYPE slop_messages_total counter\n"));
    assert_null(strstr(prom, "# EOF"));
    assert_non_null(strstr(prom, "# TYPE slop_eom_seconds histogram\n"));
    /* Every line: a comment, or name{labels} value; no blank line. */
    for (const char *p = om; *p; p = strchr(p, '\n') + 1) {
        const char *nl = strchr(p, '\n');

        assert_non_null(nl);
        assert_true(nl > p);
        if (*p != '#')
            assert_true(strncmp(p, "slop_", 5) == 0 && memchr(p, ' ', (size_t)(nl - p)) != NULL);
    }
    free(om);
    free(prom);
}

static void
test_histogram(void **state)
{
    struct metrics_gauges g = {0};
    char *t;

    (void)state;
    metrics_note_eom(500);       /* 0.5 ms */
    metrics_note_eom(1000);      /* exactly 1 ms: in le="0.001" */
    metrics_note_eom(300000);    /* 0.3 s */
    metrics_note_eom(120000000); /* 2 min: only +Inf */
    metrics_note_scan(2000);
    t = render(&g, true);
    assert_int_equal(sample(t, "slop_eom_seconds_bucket{le=\"0.001\"}"), 2);
    assert_int_equal(sample(t, "slop_eom_seconds_bucket{le=\"0.25\"}"), 2);
    assert_int_equal(sample(t, "slop_eom_seconds_bucket{le=\"0.5\"}"), 3);
    assert_int_equal(sample(t, "slop_eom_seconds_bucket{le=\"60.0\"}"), 3);
    assert_int_equal(sample(t, "slop_eom_seconds_bucket{le=\"+Inf\"}"), 4);
    assert_int_equal(sample(t, "slop_eom_seconds_count"), 4);
    assert_non_null(strstr(t, "slop_eom_seconds_sum 120.301500\n"));
    assert_int_equal(sample(t, "slop_scan_seconds_bucket{le=\"0.001\"}"), 0);
    assert_int_equal(sample(t, "slop_scan_seconds_bucket{le=\"0.0025\"}"), 1);
    free(t);
}

static void
test_replies(void **state)
{
    static const struct {
        const char *note;
        const char *line; /* NULL: queued */
    } cases[] = {
        {"queued", NULL},
        {"recent", "slop_replies_suppressed_total{reason=\"recent\"}"},
        {"suppressed:list-header",
         "slop_replies_suppressed_total{reason=\"suppressed:list-header\"}"},
        {"suppressed:something-new", "slop_replies_suppressed_total{reason=\"other\"}"},
        {NULL, "slop_replies_suppressed_total{reason=\"other\"}"},
    };
    struct metrics_gauges g = {0};
    char *t;

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        metrics_note_reply(cases[i].note);
    metrics_note_reply_sent(true);
    metrics_note_reply_sent(false);
    metrics_note_reply_sent(false);
    t = render(&g, true);
    assert_int_equal(sample(t, "slop_replies_queued_total"), 1);
    assert_int_equal(sample(t, "slop_replies_sent_total"), 1);
    assert_int_equal(sample(t, "slop_replies_failed_total"), 2);
    assert_int_equal(sample(t, cases[1].line), 1);
    assert_int_equal(sample(t, cases[2].line), 1);
    assert_int_equal(sample(t, "slop_replies_suppressed_total{reason=\"other\"}"), 2);
    assert_int_equal(sample(t, "slop_replies_suppressed_total{reason=\"capped\"}"), 0);
    free(t);
}

/* Rule ids differ between rule sets; names keep their slots. */
static void
test_rules_across_reloads(void **state)
{
    struct classifier_options opts;
    struct classifier *c = NULL;
    struct classifier_rule_info info;
    struct metrics_gauges g = {0};
    uint32_t *map1 = NULL, *map2 = NULL;
    size_t n, first = SIZE_MAX;
    char line[128];
    char *t;

    (void)state;
    classifier_options_default(&opts);
    assert_int_equal(classifier_new(SLOP_RULES_DIR, &opts, NULL, NULL, &c), 0);
    n = classifier_rule_count(c);
    assert_true(n > 0);
    assert_int_equal(metrics_rules_map(c, &map1), 0);
    assert_int_equal(metrics_rules_map(c, &map2), 0);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(classifier_rule_info(c, i, &info), 0);
        assert_int_equal(map1[i], map2[i]);
        if (info.helper)
            assert_int_equal(map1[i], METRICS_RULE_NONE);
        else if (first == SIZE_MAX)
            first = i;
    }
    assert_true(first != SIZE_MAX);
    metrics_note_finding(map1[first]);
    metrics_note_finding(map2[first]);
    metrics_note_finding(METRICS_RULE_NONE);
    assert_int_equal(classifier_rule_info(c, first, &info), 0);
    t = render(&g, true);
    snprintf(line, sizeof(line), "slop_findings_total{rule=\"%s\"}", info.name);
    assert_int_equal(sample(t, line), 2);
    assert_int_equal(sample(t, "slop_findings_unnamed_total"), 1);
    free(t);
    free(map1);
    free(map2);
    classifier_free(c);
}

static void
test_state_gauges(void **state)
{
    struct metrics_gauges g = {.have_state = true,
                               .state_txnid = 42,
                               .state_map_bytes = 1 << 26,
                               .state_used_bytes = 8192,
                               .n_tables = 2};
    char *t;

    (void)state;
    snprintf(g.tables[0].name, sizeof(g.tables[0].name), "seen_fp");
    g.tables[0].entries = 9;
    g.tables[0].bytes = 4096;
    /* A hostile name is escaped, not allowed to end the label. */
    snprintf(g.tables[1].name, sizeof(g.tables[1].name), "a\"b\\c\nd");
    t = render(&g, true);
    assert_int_equal(sample(t, "slop_state_generation"), 42);
    assert_int_equal(sample(t, "slop_state_map_bytes"), 1 << 26);
    assert_int_equal(sample(t, "slop_state_used_bytes"), 8192);
    assert_int_equal(sample(t, "slop_state_entries{db=\"seen_fp\"}"), 9);
    assert_int_equal(sample(t, "slop_state_db_bytes{db=\"seen_fp\"}"), 4096);
    assert_int_equal(sample(t, "slop_state_entries{db=\"a\\\"b\\\\c\\nd\"}"), 0);
    free(t);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_messages, setup),
        cmocka_unit_test_setup(test_formats, setup),
        cmocka_unit_test_setup(test_histogram, setup),
        cmocka_unit_test_setup(test_replies, setup),
        cmocka_unit_test_setup(test_rules_across_reloads, setup),
        cmocka_unit_test_setup(test_state_gauges, setup),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
