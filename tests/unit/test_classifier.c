/*
 * test_classifier.c - the public API: loading, scanning, thresholds,
 * actions and result ownership, with a small rule set written per test.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "classifier.h"

static const char test_rules[] = "# two plain rules and a combination\n"
                                 "rule SUBJ_FOO\n"
                                 "    describe subject mentions foo\n"
                                 "    score 3\n"
                                 "    match subject /foo/i\n"
                                 "rule BODY_BAR\n"
                                 "    describe body mentions bar\n"
                                 "    score 4.5\n"
                                 "    doc @/process/x.html\n"
                                 "    match body /\\bbar\\b/\n"
                                 "rule __QUIET\n"
                                 "    match body /quiet/\n";

struct fixture {
    char dir[64];
    char path[128];
};

static void
write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");

    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static int
setup(void **state)
{
    struct fixture *fx = calloc(1, sizeof(*fx));

    strcpy(fx->dir, "/tmp/slop-test-XXXXXX");
    if (mkdtemp(fx->dir) == NULL)
        return -1;
    snprintf(fx->path, sizeof(fx->path), "%s/10-test.rules", fx->dir);
    write_file(fx->path, test_rules);
    *state = fx;
    return 0;
}

static int
teardown(void **state)
{
    struct fixture *fx = *state;

    unlink(fx->path);
    rmdir(fx->dir);
    free(fx);
    return 0;
}

static char *
make_message(const char *subject, const char *body)
{
    char *msg = NULL;

    assert_true(asprintf(&msg,
                         "From: Alice Example <alice@example.org>\n"
                         "To: security@example.org\n"
                         "Subject: %s\n"
                         "Message-ID: <abc.123@example.org>\n"
                         "\n%s\n",
                         subject, body) > 0);
    return msg;
}

static struct classifier_result *
scan(const struct classifier *c, const char *subject, const char *body)
{
    struct classifier_result *res = NULL;
    char *msg = make_message(subject, body);

    assert_int_equal(classifier_scan(c, msg, strlen(msg), NULL, &res), 0);
    free(msg);
    return res;
}

static void
test_scores_and_actions(void **state)
{
    static const struct {
        const char *subject, *body;
        double score;
        enum classifier_action action;
        size_t n_hits;
    } cases[] = {
        {"hello", "nothing to see", 0, CLASSIFIER_ACTION_NONE, 0},
        {"a FOO here", "nothing", 3, CLASSIFIER_ACTION_NONE, 1},
        {"plain", "a bar here", 4.5, CLASSIFIER_ACTION_NONE, 1},
        {"foo", "bar", 7.5, CLASSIFIER_ACTION_TAG, 2},
        {"foo", "barn quiet", 3, CLASSIFIER_ACTION_NONE, 1},
    };
    struct fixture *fx = *state;
    struct classifier *c = NULL;

    assert_int_equal(classifier_new(fx->dir, NULL, NULL, NULL, &c), 0);
    assert_int_equal(classifier_rule_count(c), 3);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct classifier_result *res = scan(c, cases[i].subject, cases[i].body);
        assert_float_equal(res->score, cases[i].score, 0.001);
        assert_int_equal(res->action, cases[i].action);
        assert_int_equal(res->n_hits, cases[i].n_hits);
        assert_float_equal(res->required, 5.0, 0.001);
        classifier_result_free(res);
    }
    classifier_free(c);
}

static void
test_result_fields(void **state)
{
    struct fixture *fx = *state;
    struct classifier *c = NULL;
    struct classifier_result *res;

    assert_int_equal(classifier_new(fx->dir, NULL, NULL, NULL, &c), 0);
    res = scan(c, "foo", "bar");
    assert_string_equal(res->message_id, "abc.123@example.org");
    assert_string_equal(res->subject, "foo");
    assert_string_equal(res->from, "alice@example.org");
    assert_string_equal(res->hits[1].rule, "BODY_BAR");
    assert_string_equal(res->hits[1].description, "body mentions bar");
    assert_string_equal(res->hits[1].doc, "https://docs.kernel.org/process/x.html");
    assert_null(res->hits[0].doc);
    classifier_result_free(res);
    classifier_free(c);
}

static void
test_thresholds(void **state)
{
    static const struct {
        double tag, reply, quarantine, reject;
        enum classifier_action want;
    } cases[] = {
        {5, 7, 20, 30, CLASSIFIER_ACTION_REPLY}, {5, 12, 7.5, 30, CLASSIFIER_ACTION_QUARANTINE},
        {1, 2, 3, 4, CLASSIFIER_ACTION_REJECT},  {0, 0, 0, 7, CLASSIFIER_ACTION_REJECT},
        {0, 0, 0, 0, CLASSIFIER_ACTION_NONE},    {8, 0, 0, 0, CLASSIFIER_ACTION_NONE},
    };
    struct fixture *fx = *state;

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct classifier_options opts;
        struct classifier *c = NULL;
        struct classifier_result *res;

        classifier_options_default(&opts);
        opts.thresholds.score[CLASSIFIER_ACTION_TAG] = cases[i].tag;
        opts.thresholds.score[CLASSIFIER_ACTION_REPLY] = cases[i].reply;
        opts.thresholds.score[CLASSIFIER_ACTION_QUARANTINE] = cases[i].quarantine;
        opts.thresholds.score[CLASSIFIER_ACTION_REJECT] = cases[i].reject;
        opts.doc_base = "https://example.org/docs/";
        assert_int_equal(classifier_new(fx->dir, &opts, NULL, NULL, &c), 0);
        res = scan(c, "foo", "bar");
        assert_int_equal(res->action, cases[i].want);
        assert_string_equal(res->hits[1].doc, "https://example.org/docs/process/x.html");
        classifier_result_free(res);
        classifier_free(c);
    }
}

static void
test_bad_arguments(void **state)
{
    struct fixture *fx = *state;
    struct classifier_options opts;
    struct classifier *c = NULL;
    struct classifier_result *res = NULL;

    assert_int_equal(classifier_new(NULL, NULL, NULL, NULL, &c), -EINVAL);
    assert_true(classifier_new("/nonexistent/slop-rules", NULL, NULL, NULL, &c) < 0);
    assert_null(c);
    classifier_options_default(&opts);
    opts.limits.max_hits = 0;
    assert_int_equal(classifier_new(fx->dir, &opts, NULL, NULL, &c), -EINVAL);

    assert_int_equal(classifier_new(fx->dir, NULL, NULL, NULL, &c), 0);
    assert_int_equal(classifier_scan(c, NULL, 10, NULL, &res), -EINVAL);
    assert_int_equal(classifier_scan(NULL, "x", 1, NULL, &res), -EINVAL);
    assert_null(res);
    /* An empty message is mail too: it scans to an empty result. */
    assert_int_equal(classifier_scan(c, "", 0, NULL, &res), 0);
    assert_int_equal(res->n_hits, 0);
    classifier_result_free(res);
    classifier_free(c);
    assert_null(classifier_free(NULL));
    assert_null(classifier_result_free(NULL));
}

static void
test_oversize_is_truncated(void **state)
{
    struct fixture *fx = *state;
    struct classifier_options opts;
    struct classifier *c = NULL;
    struct classifier_result *res = NULL;
    char *msg = make_message("foo", "bar");
    size_t len = strlen(msg);

    classifier_options_default(&opts);
    opts.limits.max_message_bytes = len - 3; /* cuts into the body */
    assert_int_equal(classifier_new(fx->dir, &opts, NULL, NULL, &c), 0);
    assert_int_equal(classifier_scan(c, msg, len, NULL, &res), 0);
    assert_true(res->truncated);
    classifier_result_free(res);
    res = NULL;

    opts.limits.max_message_bytes = len;
    classifier_free(c);
    c = NULL;
    assert_int_equal(classifier_new(fx->dir, &opts, NULL, NULL, &c), 0);
    assert_int_equal(classifier_scan(c, msg, len, NULL, &res), 0);
    assert_false(res->truncated);
    classifier_result_free(res);
    classifier_free(c);
    free(msg);
}

struct diag_count {
    unsigned n;
    unsigned last_line;
};

static void
count_diag(void *ctx, const struct classifier_diag *d)
{
    struct diag_count *dc = ctx;

    dc->n++;
    dc->last_line = d->line;
}

static void
test_lint(void **state)
{
    struct fixture *fx = *state;
    struct diag_count dc = {0};
    struct classifier *c = NULL;
    char bad[160];

    assert_int_equal(classifier_lint(fx->dir, count_diag, &dc), 0);
    assert_int_equal(dc.n, 0);

    snprintf(bad, sizeof(bad), "%s/20-bad.rules", fx->dir);
    write_file(bad, "rule GOOD\n    describe fine\n    score 1\n    match body /x/\n"
                    "rule BAD\n    describe broken\n    score 1\n    match nowhere /x/\n");
    assert_int_equal(classifier_lint(fx->dir, count_diag, &dc), 1);
    assert_int_equal(dc.last_line, 8);
    dc.n = 0;
    assert_true(classifier_new(fx->dir, NULL, count_diag, &dc, &c) < 0);
    assert_null(c);
    assert_int_equal(dc.n, 1);
    unlink(bad);
    assert_true(classifier_lint("/nonexistent/slop-rules", NULL, NULL) < 0);
}

/* A second rule file in the fixture's directory, removed by the test. */
static const char style_rules[] = "rule STYLE_LOUD\n"
                                  "    describe loud style\n"
                                  "    score 8\n"
                                  "    class style\n"
                                  "    match subject /loud/\n"
                                  "rule STYLE_SOFT\n"
                                  "    describe soft style\n"
                                  "    score 4\n"
                                  "    class style\n"
                                  "    match subject /soft/\n"
                                  "rule GAP_BIG\n"
                                  "    describe big gap\n"
                                  "    score 6\n"
                                  "    class substance\n"
                                  "    match subject /gap/\n"
                                  "rule NOTE_ZERO\n"
                                  "    describe a note\n"
                                  "    score 0\n"
                                  "    match subject /note/\n";

/* Past the tag threshold only substance may lift the action: style alone,
 * however high, tags. Tag 5, reply 12 (the defaults). */
static void
test_style_caps_action(void **state)
{
    static const struct {
        const char *subject, *body;
        double score, substance;
        enum classifier_action action;
    } cases[] = {
        {"loud", "x", 8, 0, CLASSIFIER_ACTION_TAG},
        {"loud soft", "x", 12, 0, CLASSIFIER_ACTION_TAG},
        {"loud soft foo", "x", 15, 3, CLASSIFIER_ACTION_TAG},
        {"loud gap", "x", 14, 6, CLASSIFIER_ACTION_REPLY},
        {"gap foo", "a bar here", 13.5, 13.5, CLASSIFIER_ACTION_REPLY},
        {"soft foo", "x", 7, 3, CLASSIFIER_ACTION_TAG},
    };
    struct fixture *fx = *state;
    struct classifier *c = NULL;
    char path[160];

    snprintf(path, sizeof(path), "%s/20-style.rules", fx->dir);
    write_file(path, style_rules);
    assert_int_equal(classifier_new(fx->dir, NULL, NULL, NULL, &c), 0);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct classifier_result *res = scan(c, cases[i].subject, cases[i].body);

        assert_float_equal(res->score, cases[i].score, 0.001);
        assert_float_equal(res->substance_score, cases[i].substance, 0.001);
        assert_int_equal(res->action, cases[i].action);
        classifier_result_free(res);
    }
    classifier_free(c);
    unlink(path);
}

/* res->matched lists every reported rule that held, score 0 and past
 * max_hits included; helpers never. */
static void
test_matched(void **state)
{
    struct fixture *fx = *state;
    struct classifier_options opts;
    struct classifier_rule_info info;
    struct classifier *c = NULL;
    struct classifier_result *res;
    char path[160];

    snprintf(path, sizeof(path), "%s/20-style.rules", fx->dir);
    write_file(path, style_rules);
    classifier_options_default(&opts);
    opts.limits.max_hits = 1;
    assert_int_equal(classifier_new(fx->dir, &opts, NULL, NULL, &c), 0);
    res = scan(c, "foo note loud", "bar quiet");
    assert_int_equal(res->n_hits, 1);
    assert_int_equal(res->n_matched, 4);
    assert_float_equal(res->score, 3, 0.001);
    for (size_t i = 0; i < res->n_matched; i++) {
        assert_int_equal(classifier_rule_info(c, res->matched[i], &info), 0);
        assert_false(info.helper);
    }
    assert_int_equal(classifier_rule_info(c, res->matched[3], &info), 0);
    assert_string_equal(info.name, "NOTE_ZERO");
    assert_int_equal(classifier_rule_info(c, res->matched[2], &info), 0);
    assert_string_equal(info.name, "STYLE_LOUD");
    assert_true(info.style);
    assert_int_equal(classifier_rule_info(c, classifier_rule_count(c), &info), -EINVAL);
    classifier_result_free(res);
    classifier_free(c);
    unlink(path);
}

/* Scores files: the directory's *.scores in name order, then
 * opts.scores_file, each replacing the score in effect but not the prior. */
static void
test_scores_files(void **state)
{
    static const struct {
        const char *text;
        unsigned line; /* of the one problem; 0: loads */
    } bad[] = {
        {"# fitted\nscore SUBJ_FOO 1.25\n\nscore NO_SUCH_RULE 1\n", 4},
        {"score __QUIET 1\n", 1},
        {"score NOTE_ZERO 0.5\n", 1},
        {"score BODY_BAR -1\n", 1},
        {"score BODY_BAR 1\nscore BODY_BAR 2\n", 2},
        {"score BODY_BAR one\n", 1},
        {"scores BODY_BAR 1\n", 1},
        {"score BODY_BAR 1 2\n", 1},
        {"score BODY_BAR 2 # a comment\nscore NOTE_ZERO 0\n", 0},
    };
    struct fixture *fx = *state;
    struct classifier_options opts;
    struct classifier_rule_info info;
    struct classifier *c = NULL;
    struct classifier_result *res;
    char rules[160], scores[160], extra[160];

    snprintf(rules, sizeof(rules), "%s/20-style.rules", fx->dir);
    snprintf(scores, sizeof(scores), "%s/90-fit.scores", fx->dir);
    snprintf(extra, sizeof(extra), "%s/extra.txt", fx->dir);
    write_file(rules, style_rules);
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct diag_count dc = {0};

        write_file(scores, bad[i].text);
        assert_int_equal(classifier_lint(fx->dir, count_diag, &dc), bad[i].line ? 1 : 0);
        assert_int_equal(dc.last_line, bad[i].line);
    }

    write_file(scores, "score SUBJ_FOO 1.25\nscore BODY_BAR 2\n");
    assert_int_equal(classifier_new(fx->dir, NULL, NULL, NULL, &c), 0);
    res = scan(c, "foo", "bar");
    assert_float_equal(res->score, 3.25, 0.001);
    assert_float_equal(res->hits[0].score, 1.25, 0.001);
    assert_int_equal(classifier_rule_info(c, res->matched[0], &info), 0);
    assert_float_equal(info.score, 1.25, 0.001);
    assert_float_equal(info.file_score, 3, 0.001);
    classifier_result_free(res);
    c = classifier_free(c);

    classifier_options_default(&opts);
    opts.scores_file = extra;
    write_file(extra, "score SUBJ_FOO 5\n");
    assert_int_equal(classifier_new(fx->dir, &opts, NULL, NULL, &c), 0);
    res = scan(c, "foo", "bar");
    assert_float_equal(res->score, 7, 0.001);
    classifier_result_free(res);
    c = classifier_free(c);
    write_file(extra, "score NOPE 5\n");
    assert_true(classifier_new(fx->dir, &opts, NULL, NULL, &c) < 0);
    assert_int_equal(classifier_lint_scored(fx->dir, extra, NULL, NULL), 1);

    unlink(extra);
    unlink(scores);
    unlink(rules);
}

/* Rules marked for profiles hold only under one of them; a file's
 * profile line marks all its rules, a rule's own replaces it. */
static const char profile_rules[] = "profile kernel\n"
                                    "rule KERNEL_ONLY\n"
                                    "    describe kernel\n"
                                    "    score 1\n"
                                    "    match body /bar/\n"
                                    "rule GENERIC_TOO\n"
                                    "    describe generic\n"
                                    "    score 1\n"
                                    "    profile generic\n"
                                    "    match body /bar/\n";
static const char profile_combo_rules[] = "rule NOT_KERNEL\n"
                                          "    describe not kernel\n"
                                          "    score 0\n"
                                          "    match body /bar/\n"
                                          "    none_of KERNEL_ONLY\n"
                                          "rule SITE_ONLY\n"
                                          "    describe a site's own\n"
                                          "    score 1\n"
                                          "    profile example-site other-site\n"
                                          "    match body /no such text/\n";

/* The two profile fixtures into dir, their paths into p1 and p2. */
static void
write_profile_rules(const char *dir, char (*p1)[160], char (*p2)[160])
{
    snprintf(*p1, sizeof(*p1), "%s/20-profile.rules", dir);
    snprintf(*p2, sizeof(*p2), "%s/30-combo.rules", dir);
    write_file(*p1, profile_rules);
    write_file(*p2, profile_combo_rules);
}

static const struct classifier_hit *
hit_of(const struct classifier_result *res, const char *rule)
{
    for (size_t i = 0; i < res->n_hits; i++)
        if (strcmp(res->hits[i].rule, rule) == 0)
            return &res->hits[i];
    return NULL;
}

static void
test_profiles(void **state)
{
    static const struct {
        const char *profile;
        const char *doc_base;
        bool kernel, generic;
        const char *doc; /* BODY_BAR's link, or NULL */
    } cases[] = {
        {NULL, NULL, true, false, "https://docs.kernel.org/process/x.html"},
        {"kernel", NULL, true, false, "https://docs.kernel.org/process/x.html"},
        {"generic", NULL, false, true, NULL},
        {"generic", "https://docs.example.org", false, true,
         "https://docs.example.org/process/x.html"},
        {"example-site", NULL, false, false, NULL},
    };
    struct fixture *fx = *state;
    char p1[160], p2[160];

    write_profile_rules(fx->dir, &p1, &p2);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct classifier_options opts;
        struct classifier *c = NULL;
        struct classifier_result *res;
        const struct classifier_hit *h;

        print_message("case %zu: %s\n", i, cases[i].profile ? cases[i].profile : "(default)");
        classifier_options_default(&opts);
        opts.profile = cases[i].profile;
        opts.doc_base = cases[i].doc_base;
        assert_int_equal(classifier_new(fx->dir, &opts, NULL, NULL, &c), 0);
        res = scan(c, "foo", "bar");
        assert_int_equal(hit_of(res, "KERNEL_ONLY") != NULL, cases[i].kernel);
        assert_int_equal(hit_of(res, "GENERIC_TOO") != NULL, cases[i].generic);
        assert_int_equal(hit_of(res, "NOT_KERNEL") != NULL, !cases[i].kernel);
        h = hit_of(res, "BODY_BAR");
        assert_non_null(h);
        if (cases[i].doc == NULL)
            assert_null(h->doc);
        else
            assert_string_equal(h->doc, cases[i].doc);
        classifier_result_free(res);
        classifier_free(c);
    }
    unlink(p1);
    unlink(p2);
}

static void
keep_reason(void *ctx, const struct classifier_diag *d)
{
    char *reason = ctx;

    snprintf(reason, sizeof(((struct classifier_diag *)0)->reason), "%s", d->reason);
}

/* A profile no rule names and that is not shipped is a typo ("linux"):
 * refused with one diagnostic. The profiles each rule is marked for are
 * in its info, for `slopctl rules`. */
static void
test_unknown_profile(void **state)
{
    static const struct {
        const char *profile;
        int want;
    } cases[] = {
        {"linux", -ENOENT}, {"kernel", 0}, {"generic", 0}, {"other-site", 0}, {"Kernel", -ENOENT},
    };
    struct fixture *fx = *state;
    char p1[160], p2[160], reason[256];

    write_profile_rules(fx->dir, &p1, &p2);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct classifier_options opts;
        struct classifier *c = NULL;

        print_message("case %zu: %s\n", i, cases[i].profile);
        classifier_options_default(&opts);
        opts.profile = cases[i].profile;
        reason[0] = '\0';
        assert_int_equal(classifier_new(fx->dir, &opts, keep_reason, reason, &c), cases[i].want);
        if (cases[i].want < 0) {
            assert_null(c);
            assert_non_null(strstr(reason, "unknown profile"));
            assert_non_null(strstr(reason, cases[i].profile));
            continue;
        }
        for (size_t k = 0; k < classifier_rule_count(c); k++) {
            struct classifier_rule_info ri;

            assert_int_equal(classifier_rule_info(c, k, &ri), 0);
            if (strcmp(ri.name, "SITE_ONLY") == 0) {
                assert_string_equal(ri.profiles, "example-site other-site");
                assert_string_equal(ri.description, "a site's own");
                assert_int_equal(ri.off, strcmp(cases[i].profile, "other-site") != 0);
            } else if (strcmp(ri.name, "KERNEL_ONLY") == 0) {
                assert_string_equal(ri.profiles, "kernel");
            } else if (strcmp(ri.name, "NOT_KERNEL") == 0) {
                assert_null(ri.profiles);
            }
        }
        classifier_free(c);
    }
    unlink(p1);
    unlink(p2);
}

/* A short text is a report when it went to a report address, or the
 * caller says it is one; patches and replies stay what they are. */
static void
test_report_routing(void **state)
{
    static const char *const list_only[] = {"*@security.example.org", NULL};
    static const char *const none[] = {NULL};
    static const struct {
        const char *to;
        const char *rcpt; /* envelope recipient, or NULL */
        const char *const *patterns;
        bool as_report;
        const char *subject;
        const char *extra; /* more header lines */
        enum classifier_kind want;
    } cases[] = {
        {"security@example.org", NULL, NULL, false, "oops", "", CLASSIFIER_KIND_REPORT},
        {"Sec <SECURITY@example.org>", NULL, NULL, false, "oops", "", CLASSIFIER_KIND_REPORT},
        {"dev@lists.example.org", NULL, NULL, false, "oops", "", CLASSIFIER_KIND_OTHER},
        {"dev@lists.example.org", "<Security@Example.ORG>", NULL, false, "oops", "",
         CLASSIFIER_KIND_REPORT},
        /* The envelope decides: this copy went to the list. */
        {"security@example.org", "dev@lists.example.org", NULL, false, "oops", "",
         CLASSIFIER_KIND_OTHER},
        {"dev@lists.example.org", NULL, NULL, true, "oops", "", CLASSIFIER_KIND_REPORT},
        {"security@example.org", NULL, NULL, true, "[PATCH] foo: fix bar", "",
         CLASSIFIER_KIND_PATCH},
        {"security@example.org", NULL, NULL, false, "Re: oops", "In-Reply-To: <a@b>\n",
         CLASSIFIER_KIND_REPLY},
        /* A follow-up in a thread, neither quoting nor "Re:". */
        {"security@example.org", NULL, NULL, true, "oops", "In-Reply-To: <a@b>\n",
         CLASSIFIER_KIND_OTHER},
        {"security@example.org", NULL, list_only, false, "oops", "", CLASSIFIER_KIND_OTHER},
        {"team@security.example.org", NULL, list_only, false, "oops", "", CLASSIFIER_KIND_REPORT},
        {"security@example.org", NULL, none, false, "oops", "", CLASSIFIER_KIND_OTHER},
        /* A question names no problem: it is no report that lacks everything. */
        {"security@example.org", NULL, NULL, false, "Question", "", CLASSIFIER_KIND_OTHER},
        {"security@example.org", NULL, NULL, true, "Question", "", CLASSIFIER_KIND_REPORT},
    };
    struct fixture *fx = *state;

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct classifier_options opts;
        struct classifier_envelope env = {.mail_from = "a@example.net"};
        struct classifier *c = NULL;
        struct classifier_result *res = NULL;
        const char *rcpt[1] = {cases[i].rcpt};
        char *msg = NULL;

        print_message("case %zu\n", i);
        classifier_options_default(&opts);
        opts.report_recipients = cases[i].patterns;
        assert_int_equal(classifier_new(fx->dir, &opts, NULL, NULL, &c), 0);
        assert_true(asprintf(&msg,
                             "From: Alice <alice@example.net>\nTo: %s\nSubject: %s\n%s\n"
                             "%s\n",
                             cases[i].to, cases[i].subject, cases[i].extra,
                             strncmp(cases[i].subject, "Question", 8) == 0
                                 ? "Which PGP key should I use for you?"
                                 : "The parser crashes.") > 0);
        env.rcpt = cases[i].rcpt ? rcpt : NULL;
        env.n_rcpt = cases[i].rcpt ? 1 : 0;
        env.as_report = cases[i].as_report;
        assert_int_equal(classifier_scan(c, msg, strlen(msg), &env, &res), 0);
        assert_int_equal(res->kind, cases[i].want);
        classifier_result_free(res);
        free(msg);
        classifier_free(c);
    }
}

/* A scan of raw mail with the rules in dir, loaded for it alone. */
static struct classifier_result *
scan_with(const char *dir, const char *msg)
{
    struct classifier *c = NULL;
    struct classifier_result *res = NULL;

    assert_int_equal(classifier_new(dir, NULL, NULL, NULL, &c), 0);
    assert_int_equal(classifier_scan(c, msg, strlen(msg), NULL, &res), 0);
    classifier_free(c);
    return res;
}

/* The headers region holds every field when a rule reads it; a scan of
 * the same mail with no such rule gives the same result for the rest. */
static void
test_headers_region(void **state)
{
    static const char msg[] = "Received: from a.example.org by b.example.org;\n"
                              "\tMon, 1 Jan 2024 00:00:00 +0000\n"
                              "From: Alice Example <alice@example.org>\n"
                              "X-Mailer: mutt 2.2\n"
                              "To: security@example.org\n"
                              "Subject: foo\n"
                              "\nbar\n";
    struct fixture *fx = *state;
    struct classifier_result *res;
    char path[160];

    snprintf(path, sizeof(path), "%s/20-headers.rules", fx->dir);
    write_file(path,
               "rule MAILER\n"
               "    describe the mailer\n"
               "    score 1\n"
               "    match headers /^X-Mailer: mutt\\b/\n"
               "rule FOLDED\n"
               "    describe a folded field, unfolded\n"
               "    score 1\n"
               "    match headers /^Received: from a\\.example\\.org by b\\.example\\.org; Mon/\n");
    res = scan_with(fx->dir, msg);
    assert_float_equal(res->score, 3 + 4.5 + 1 + 1, 0.001);
    assert_int_equal(res->n_hits, 4);
    classifier_result_free(res);
    assert_int_equal(unlink(path), 0);

    res = scan_with(fx->dir, msg);
    assert_float_equal(res->score, 3 + 4.5, 0.001);
    assert_int_equal(res->n_hits, 2);
    classifier_result_free(res);
}

/* A series' root is the first id of References:, a field the scan reads
 * whether or not a rule reads the headers region. */
static void
test_series_root(void **state)
{
    static const char msg[] = "From: Alice Example <alice@example.org>\n"
                              "To: linux-input@example.org\n"
                              "Subject: [PATCH 2/3] hid: check the length\n"
                              "Message-ID: <p2@example.org>\n"
                              "In-Reply-To: <p1@example.org>\n"
                              "References: <cover@example.org>\n <p1@example.org>\n"
                              "\n"
                              "Check the report length first.\n\n"
                              "Signed-off-by: Alice Example <alice@example.org>\n"
                              "---\n"
                              "diff --git a/a.c b/a.c\n"
                              "--- a/a.c\n"
                              "+++ b/a.c\n"
                              "@@ -1,2 +1,3 @@\n"
                              " int f(int n)\n"
                              "+\tif (n < 8) return 0;\n"
                              " \treturn n;\n";
    struct fixture *fx = *state;
    struct classifier_result *res = scan_with(fx->dir, msg);

    assert_int_equal(res->kind, CLASSIFIER_KIND_PATCH);
    assert_non_null(res->series_root);
    assert_string_equal(res->series_root, "cover@example.org");
    classifier_result_free(res);
}

static void
test_names(void **state)
{
    enum classifier_action a;

    (void)state;
    for (int i = 0; i < CLASSIFIER_ACTION__COUNT; i++) {
        assert_int_equal(classifier_action_parse(classifier_action_name(i), &a), 0);
        assert_int_equal(a, i);
    }
    assert_int_equal(classifier_action_parse("discard", &a), -EINVAL);
    assert_string_equal(classifier_kind_name(CLASSIFIER_KIND_PATCH), "patch");
    assert_string_equal(classifier_kind_name(CLASSIFIER_KIND_REPLY), "reply");
    assert_string_equal(classifier_kind_name(99), "other");
    assert_string_equal(classifier_action_name(99), "none");
}

/* The arrival: the topmost Received: that gives a date, else Date:. */
static void
test_arrival(void **state)
{
    static const struct {
        const char *msg;
        int64_t want;
    } cases[] = {
        {"Received: from a by b; Mon, 30 Nov 2026 10:00:00 +0000\n"
         "Received: from c by a; Sun, 29 Nov 2026 08:30:00 +0000\n"
         "Date: Sat, 28 Nov 2026 12:00:00 +0000\n\nbody\n",
         1796032800},
        /* a Received: without a date is passed over */
        {"Received: from a by b\n"
         "Received: from c by a;\n Sun, 29 Nov 2026 08:30:00 +0000\n"
         "Date: Sat, 28 Nov 2026 12:00:00 +0000\n\nbody\n",
         1795941000},
        {"Subject: x\nDate: Sat,\n\t28 Nov 2026 12:00:00 +0000\n\nbody\n", 1795867200},
        /* only the header block counts */
        {"Subject: x\n\nDate: Sat, 28 Nov 2026 12:00:00 +0000\n", 0},
        {"Subject: x\nnot a field\nDate: Sat, 28 Nov 2026 12:00:00 +0000\n\n", 0},
        {"Date: not a date\n\n", 0},
        {"", 0},
    };

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int64_t got = classifier_arrival(cases[i].msg, strlen(cases[i].msg));

        if (got != cases[i].want)
            fail_msg("case %zu: %lld, want %lld", i, (long long)got, (long long)cases[i].want);
    }
    assert_int_equal(classifier_arrival(NULL, 0), 0);
}

struct names {
    char text[256];
    size_t len;
};

static void
collect_name(void *ctx, const char *name)
{
    struct names *n = ctx;
    int w = snprintf(n->text + n->len, sizeof(n->text) - n->len, "%s ", name);

    if (w > 0 && n->len + (size_t)w < sizeof(n->text))
        n->len += (size_t)w;
}

/* Names from hunk headers and from "name()" in prose, each once; prose
 * after "diff --git" is code, not prose. */
static void
test_diff_functions(void **state)
{
    static const char text[] = "Fix foo_bar() and baz() in qux (not this).\n"
                               "Calls foo_bar() again and 9x() too.\n"
                               "diff --git a/x.c b/x.c\n"
                               "@@ -1,2 +1,3 @@ static int frob(struct x *y)\n"
                               "+\tnot_a_name();\n"
                               "@@ -9 +9 @@\n"
                               "@@ -20 +20 @@ void baz(void)\n";
    struct names n = {0};

    (void)state;
    assert_int_equal(classifier_diff_functions(text, strlen(text), 16, collect_name, &n), 3);
    assert_string_equal(n.text, "foo_bar baz frob ");
    n = (struct names){0};
    assert_int_equal(classifier_diff_functions(text, strlen(text), 1, collect_name, &n), 1);
    assert_string_equal(n.text, "foo_bar ");
    assert_int_equal(classifier_diff_functions(text, strlen(text), 0, collect_name, &n), 0);
    assert_int_equal(classifier_diff_functions(NULL, 1, 4, collect_name, &n), -EINVAL);
    assert_int_equal(classifier_diff_functions(text, strlen(text), 4, NULL, &n), -EINVAL);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_scores_and_actions, setup, teardown),
        cmocka_unit_test_setup_teardown(test_result_fields, setup, teardown),
        cmocka_unit_test_setup_teardown(test_thresholds, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_arguments, setup, teardown),
        cmocka_unit_test_setup_teardown(test_style_caps_action, setup, teardown),
        cmocka_unit_test_setup_teardown(test_matched, setup, teardown),
        cmocka_unit_test_setup_teardown(test_scores_files, setup, teardown),
        cmocka_unit_test_setup_teardown(test_oversize_is_truncated, setup, teardown),
        cmocka_unit_test_setup_teardown(test_lint, setup, teardown),
        cmocka_unit_test_setup_teardown(test_profiles, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unknown_profile, setup, teardown),
        cmocka_unit_test_setup_teardown(test_report_routing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_headers_region, setup, teardown),
        cmocka_unit_test_setup_teardown(test_series_root, setup, teardown),
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_arrival),
        cmocka_unit_test(test_diff_functions),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
