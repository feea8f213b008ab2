/*
 * test_limits.c - every cap on what the input drives, set very low, cuts
 * the input without failing: the message still builds, m->truncated and
 * the limit_hit measure are set, its evidence names the limit, and a full
 * scan reports LIMIT_REACHED (score 0) with the same evidence. The same
 * messages under the default limits are not cut.
 *
 * Single-threaded; everything is freed before each test returns.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "classifier.h"
#include "message.h"
#include "message_build.h"
#include "mime_view.h"
#include "testutil.h"

#ifndef SLOP_RULES_DIR
#define SLOP_RULES_DIR "rules"
#endif

#define GEN_MAX (256u << 10)

struct gen {
    char p[GEN_MAX];
    size_t len;
};

static void __attribute__((format(printf, 2, 3))) gen_add(struct gen *g, const char *fmt, ...)
{
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(g->p + g->len, sizeof(g->p) - g->len, fmt, ap);
    va_end(ap);
    assert_true(n >= 0 && (size_t)n < sizeof(g->p) - g->len);
    g->len += (size_t)n;
}

static void
gen_headers(struct gen *g, const char *subject, const char *content_type)
{
    gen_add(g,
            "From: Ana Ruiz <ana@example.org>\nTo: security@kernel.org\n"
            "Subject: %s\nMessage-ID: <limits@example.org>\nMIME-Version: 1.0\n"
            "Content-Type: %s\n\n",
            subject, content_type);
}

/* A patch of n_files files with n_hunks hunks each. */
static void
gen_patch(struct gen *g, unsigned n_files, unsigned n_hunks)
{
    gen_headers(g, "[PATCH] net: foo: check the length before copying", "text/plain");
    gen_add(g, "The length comes from the device and was never checked.\n\n"
               "Signed-off-by: Ana Ruiz <ana@example.org>\n---\n");
    for (unsigned f = 0; f < n_files; f++) {
        gen_add(g, "diff --git a/drivers/net/foo%u.c b/drivers/net/foo%u.c\n", f, f);
        gen_add(g, "--- a/drivers/net/foo%u.c\n+++ b/drivers/net/foo%u.c\n", f, f);
        for (unsigned h = 0; h < n_hunks; h++)
            gen_add(g,
                    "@@ -%u,3 +%u,4 @@ static int foo_rx(struct foo *f)\n ctx\n+\tif (len > max)\n"
                    "+\t\treturn -EINVAL;\n ctx\n",
                    10 + h * 20, 10 + h * 20);
    }
}

static void
gen_many_headers(struct gen *g)
{
    for (unsigned i = 0; i < 20; i++)
        gen_add(g, "Received: from relay%u.example.net by mx.example.org\n", i);
    gen_headers(g, "kernel oops in foo_rx", "text/plain");
    gen_add(g, "Hello,\n\nfoo_rx() oopses on v6.9.\n");
}

static void
gen_parts(struct gen *g, unsigned n, unsigned depth)
{
    gen_headers(g, "kernel oops in foo_rx", "multipart/mixed; boundary=\"b0\"");
    for (unsigned d = 1; d <= depth; d++)
        gen_add(g, "--b%u\nContent-Type: multipart/mixed; boundary=\"b%u\"\n\n", d - 1, d);
    for (unsigned i = 0; i < n; i++)
        gen_add(g, "--b%u\nContent-Type: text/plain\n\npart %u: foo_rx() oopses on v6.9\n", depth,
                i);
    for (unsigned d = depth + 1; d-- > 0;)
        gen_add(g, "--b%u--\n", d);
}

static void
gen_lines(struct gen *g, unsigned n, unsigned width)
{
    gen_headers(g, "kernel oops in foo_rx", "text/plain");
    for (unsigned i = 0; i < n; i++) {
        for (unsigned k = 0; k < width; k++)
            gen_add(g, "%c", 'a' + (char)(k % 26));
        gen_add(g, "\n");
    }
}

static void
gen_long_part(struct gen *g)
{
    gen_headers(g, "kernel oops in foo_rx", "text/plain");
    for (unsigned i = 0; i < 200; i++)
        gen_add(g, "line %u of the log: foo_rx: length %u over the limit\n", i, i * 7);
}

enum which {
    W_MESSAGE_BYTES,
    W_MIME_DEPTH,
    W_MIME_PARTS,
    W_PART_BYTES,
    W_HEADERS,
    W_LINES,
    W_LINE_BYTES,
    W_FILES,
    W_HUNKS,
};

static const struct {
    const char *name;
    enum which which;
    size_t value;
    const char *evidence; /* the measure's evidence: name=value */
} cases[] = {
    {"message bytes", W_MESSAGE_BYTES, 300, "max_message_bytes=300"},
    {"mime depth", W_MIME_DEPTH, 2, "max_mime_depth=2"},
    {"mime parts", W_MIME_PARTS, 3, "max_mime_parts=3"},
    {"part bytes", W_PART_BYTES, 512, "max_part_bytes=512"},
    {"headers", W_HEADERS, 5, "max_headers=5"},
    {"lines", W_LINES, 10, "max_lines=10"},
    {"line bytes", W_LINE_BYTES, 100, "max_line_bytes=100"},
    {"patch files", W_FILES, 2, "max_files=2"},
    {"patch hunks", W_HUNKS, 3, "max_hunks=3"},
};

static void
case_setup(size_t i, struct classifier_limits *l, struct gen *g)
{
    size_t v = cases[i].value;

    switch (cases[i].which) {
    case W_MESSAGE_BYTES:
        l->max_message_bytes = v;
        gen_long_part(g);
        break;
    case W_MIME_DEPTH:
        l->max_mime_depth = (unsigned)v;
        gen_parts(g, 2, 5);
        break;
    case W_MIME_PARTS:
        l->max_mime_parts = (unsigned)v;
        gen_parts(g, 10, 0);
        break;
    case W_PART_BYTES:
        l->max_part_bytes = v;
        gen_long_part(g);
        break;
    case W_HEADERS:
        l->max_headers = (unsigned)v;
        gen_many_headers(g);
        break;
    case W_LINES:
        l->max_lines = (unsigned)v;
        gen_lines(g, 50, 20);
        break;
    case W_LINE_BYTES:
        l->max_line_bytes = v;
        gen_lines(g, 3, 500);
        break;
    case W_FILES:
        l->max_files = (unsigned)v;
        gen_patch(g, 5, 1);
        break;
    case W_HUNKS:
        l->max_hunks = (unsigned)v;
        gen_patch(g, 1, 8);
        break;
    }
}

static const struct classifier_hit *
find_hit(const struct classifier_result *r, const char *rule)
{
    for (size_t i = 0; i < r->n_hits; i++)
        if (strcmp(r->hits[i].rule, rule) == 0)
            return &r->hits[i];
    return NULL;
}

static struct classifier_result *
scan(const struct classifier_options *opts, const struct gen *g)
{
    struct classifier *c = NULL;
    struct classifier_result *r = NULL;

    assert_int_equal(classifier_new(SLOP_RULES_DIR, opts, NULL, NULL, &c), 0);
    assert_int_equal(classifier_scan(c, g->p, g->len, NULL, &r), 0);
    classifier_free(c);
    return r;
}

/* The model: cut, measured, evidence naming the limit. */
static void
test_limit_sets_measure(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct classifier_options opts;
        struct mime_view *v = NULL;
        struct message *m = NULL;
        static struct gen g;
        const char *ev;

        print_message("case '%s'\n", cases[i].name);
        g.len = 0;
        classifier_options_default(&opts);
        case_setup(i, &opts.limits, &g);
        /* classifier_scan() cuts the bytes itself; the rest go through the model. */
        if (cases[i].which == W_MESSAGE_BYTES)
            continue;
        assert_int_equal(mime_view_parse(g.p, g.len, &opts.limits, &v), 0);
        assert_int_equal(message_build(v, &opts.limits, &m), 0);
        assert_true(m->truncated);
        assert_true(m->measures[MEASURE_LIMIT_HIT] == 1.0);
        ev = m->measure_evidence[MEASURE_LIMIT_HIT];
        assert_non_null(ev);
        if (strcmp(ev, cases[i].evidence) != 0)
            fail_msg("case '%s': evidence '%s', want '%s'", cases[i].name, ev, cases[i].evidence);
        message_free(m);
        mime_view_free(v);
    }
}

/* A full scan: LIMIT_REACHED with no score; the defaults cut nothing. */
static void
test_limit_reached_finding(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct classifier_options opts, defaults;
        struct classifier_result *r;
        const struct classifier_hit *h;
        static struct gen g;

        print_message("case '%s'\n", cases[i].name);
        g.len = 0;
        classifier_options_default(&opts);
        classifier_options_default(&defaults);
        case_setup(i, &opts.limits, &g);

        r = scan(&opts, &g);
        assert_true(r->truncated);
        h = find_hit(r, "LIMIT_REACHED");
        assert_non_null(h);
        assert_true(h->score == 0.0);
        assert_non_null(h->evidence);
        assert_string_equal(h->evidence, cases[i].evidence);
        classifier_result_free(r);

        r = scan(&defaults, &g);
        assert_false(r->truncated);
        assert_null(find_hit(r, "LIMIT_REACHED"));
        classifier_result_free(r);
    }
}

/* A pattern that runs out of PCRE2 steps does not match, and says so;
 * and since it proves nothing absent, the rules that report a missing
 * thing ("no reproducer") must not fire on it and raise the score. */
static void
test_regex_match_limit(void **state)
{
    static const char *const fixtures[] = {
        "det-genuine-report.eml",
        "det-tm-memcg-escape.eml",
        "det-rc-binary-with-source.eml",
        "det-limit-wrapped-line.eml",
    };
    static struct gen g;

    (void)state;
    for (size_t i = 0; i < sizeof(fixtures) / sizeof(fixtures[0]); i++) {
        struct classifier_options opts;
        struct classifier_result *r;
        const struct classifier_hit *h;
        double full_score;
        size_t len;
        char *raw = testutil_read_fixture(fixtures[i], &len);

        assert_non_null(raw);
        assert_true(len < sizeof(g.p));
        memcpy(g.p, raw, len);
        g.len = len;
        free(raw);

        classifier_options_default(&opts);
        r = scan(&opts, &g);
        full_score = r->score;
        classifier_result_free(r);

        opts.limits.match_limit = 1;
        r = scan(&opts, &g);
        assert_true(r->truncated);
        h = find_hit(r, "LIMIT_REACHED");
        assert_non_null(h);
        assert_true(h->score == 0.0);
        assert_string_equal(h->evidence, "match_limit");
        if (r->score > full_score)
            fail_msg("%s: score %.1f with a match limit of 1, %.1f without", fixtures[i], r->score,
                     full_score);
        classifier_result_free(r);
    }
}

/* Zero is not a limit: the library refuses it rather than cap nothing. */
static void
test_zero_limit_refused(void **state)
{
    struct classifier_options opts;
    struct classifier *c = NULL;

    (void)state;
    classifier_options_default(&opts);
    opts.limits.max_mime_parts = 0;
    assert_int_equal(classifier_new(SLOP_RULES_DIR, &opts, NULL, NULL, &c), -EINVAL);
    assert_null(c);
    classifier_options_default(&opts);
    opts.limits.depth_limit = 0;
    assert_int_equal(classifier_new(SLOP_RULES_DIR, &opts, NULL, NULL, &c), -EINVAL);
    assert_null(c);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_limit_sets_measure),
        cmocka_unit_test(test_limit_reached_finding),
        cmocka_unit_test(test_regex_match_limit),
        cmocka_unit_test(test_zero_limit_refused),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
