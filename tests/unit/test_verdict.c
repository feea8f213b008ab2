/* test_verdict.c - classifier result + configuration -> action plan. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "config.h"
#include "verdict.h"

static const struct config_paths test_paths = {
    .runtime_dir = "/rt", .state_dir = "/st", .rules_dir = "/rules", .hostname = "mx.example.org"};

static struct config *
cfg_from(const char *text)
{
    struct config_error err = {""};
    struct config *cfg = NULL;

    if (config_parse("t.conf", text, strlen(text), &test_paths, &cfg, &err) != 0)
        fail_msg("config: %s", err.text);
    return cfg;
}

static const char *const cfg_text = "TagThreshold 5\nReplyThreshold 10\nQuarantineThreshold 20\n"
                                    "RejectThreshold 30\nDocBase https://docs.example.org/\n";

/* A result as the classifier would return it; hits use static strings. */
struct fake {
    struct classifier_result res;
    struct classifier_hit hits[64];
};

static void
fake_init(struct fake *f, double score, enum classifier_action action, size_t n_hits)
{
    static const char *const rules[] = {"NO_VERSION", "TM_CRAFTED_IMAGE", "NO_REPRO"};

    memset(f, 0, sizeof(*f));
    f->res.score = score;
    f->res.required = 5;
    f->res.action = action;
    f->res.kind = CLASSIFIER_KIND_REPORT;
    for (size_t i = 0; i < n_hits; i++) {
        f->hits[i].rule = (char *)(uintptr_t)rules[i % 3];
        f->hits[i].description = (char *)(uintptr_t) "no affected kernel version given";
        f->hits[i].doc = (char *)(uintptr_t) "https://docs.example.org/process/x.html";
        f->hits[i].score = 2.5;
    }
    f->res.hits = f->hits;
    f->res.n_hits = n_hits;
}

static const struct verdict_header *
find_add(const struct verdict_plan *p, const char *name)
{
    for (size_t i = 0; i < p->n_add; i++)
        if (strcmp(p->add[i].name, name) == 0)
            return &p->add[i];
    return NULL;
}

/* Each physical line of a folded header value fits, and folds are "\n\t". */
static void
assert_folded_ok(const char *name, const char *value)
{
    size_t col = strlen(name) + 2;

    for (const char *p = value; *p; p++) {
        assert_true(*p != '\r');
        assert_true((unsigned char)*p >= 0x20 || *p == '\n' || *p == '\t');
        if (*p == '\n') {
            assert_true(p[1] == '\t');
            col = 0;
            continue;
        }
        col++;
        assert_true(col < VERDICT_HEADER_LINE_MAX);
    }
}

/* Per action, enforce mode: result, headers, subject, quarantine, reply. */
static void
test_actions(void **state)
{
    static const struct {
        enum classifier_action action;
        double score;
        enum verdict_result result;
        const char *status_prefix;
        bool subject;
        bool quarantine;
        bool reply;
        size_t smtp_lines_min;
    } cases[] = {
        {CLASSIFIER_ACTION_NONE, 1.0, VERDICT_ACCEPT, "No, score=1.0 required=5.0 tests=", false,
         false, false, 0},
        {CLASSIFIER_ACTION_TAG, 6.0, VERDICT_ACCEPT, "Yes, score=6.0 required=5.0 tests=", true,
         false, false, 0},
        {CLASSIFIER_ACTION_REPLY, 11.0, VERDICT_ACCEPT, "Yes, score=11.0", true, false, true, 0},
        {CLASSIFIER_ACTION_QUARANTINE, 21.0, VERDICT_QUARANTINE, "Yes, score=21.0", true, true,
         false, 0},
        {CLASSIFIER_ACTION_REJECT, 31.0, VERDICT_REJECT, NULL, false, false, false, 3},
    };
    struct config *cfg = cfg_from(cfg_text);
    struct verdict_input in = {.subject = "Kernel panic in ext4"};

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct verdict_plan plan;
        struct fake f;
        const struct verdict_header *h;

        verdict_plan_init(&plan);
        fake_init(&f, cases[i].score, cases[i].action, 2);
        assert_int_equal(verdict_build(cfg, &f.res, &in, &plan), 0);
        assert_int_equal(plan.result, cases[i].result);
        assert_int_equal(plan.action, cases[i].action);
        assert_false(plan.monitor);
        h = find_add(&plan, "X-Slop-Status");
        if (cases[i].status_prefix) {
            assert_non_null(h);
            if (strncmp(h->value, cases[i].status_prefix, strlen(cases[i].status_prefix)) != 0)
                fail_msg("case %zu: status '%s'", i, h->value);
            assert_non_null(strstr(h->value, "version=" CLASSIFIER_VERSION));
            assert_non_null(find_add(&plan, "X-Slop-Score"));
            assert_non_null(find_add(&plan, "X-Slop-Report"));
            assert_null(find_add(&plan, "X-Slop-Action"));
        } else
            assert_int_equal(plan.n_add, 0);
        if (cases[i].subject)
            assert_string_equal(plan.subject, "[SLOP] Kernel panic in ext4");
        else
            assert_null(plan.subject);
        assert_int_equal(plan.quarantine != NULL, cases[i].quarantine);
        assert_int_equal(plan.reply, cases[i].reply);
        assert_true(plan.n_smtp_lines >= cases[i].smtp_lines_min);
        if (cases[i].result == VERDICT_REJECT) {
            assert_string_equal(plan.rcode, "550");
            assert_string_equal(plan.xcode, "5.7.1");
        } else {
            assert_int_equal(plan.n_smtp_lines, 0);
        }
        verdict_plan_release(&plan);
    }
    config_free(cfg);
}

static void
test_reply_disabled_and_subject_cases(void **state)
{
    struct config *cfg = cfg_from("ReplyEnable no\nSubjectTag [AI]\n");
    struct verdict_plan plan;
    struct verdict_input in = {0};
    struct fake f;

    (void)state;
    verdict_plan_init(&plan);
    fake_init(&f, 13, CLASSIFIER_ACTION_REPLY, 1);
    assert_int_equal(verdict_build(cfg, &f.res, &in, &plan), 0);
    assert_false(plan.reply);
    /* No Subject in the message: one is added. */
    assert_string_equal(plan.subject, "[AI]");
    assert_true(plan.subject_add);

    /* Already tagged on an earlier hop: left alone. */
    in.subject = "  [ai] Re: patch";
    assert_int_equal(verdict_build(cfg, &f.res, &in, &plan), 0);
    assert_null(plan.subject);
    verdict_plan_release(&plan);
    config_free(cfg);

    cfg = cfg_from("SubjectTag \"\"\n");
    in.subject = "hello";
    assert_int_equal(verdict_build(cfg, &f.res, &in, &plan), 0);
    assert_null(plan.subject);
    verdict_plan_release(&plan);
    config_free(cfg);
}

static void
test_escape(void **state)
{
    static const struct {
        const char *in;
        const char *out;
        int r;
    } cases[] = {
        {"plain", "plain", 5}, {"100% sure", "100%% sure", 10},
        {"%%", "%%%%", 4},     {"%s%n", "%%s%%n", 6},
        {"", "", 0},
    };
    char buf[32];

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        assert_int_equal(verdict_escape(cases[i].in, buf, sizeof(buf)), cases[i].r);
        assert_string_equal(buf, cases[i].out);
    }
    assert_int_equal(verdict_escape("abc%", buf, 5), -ENOSPC);
    assert_int_equal(verdict_escape("abcd", buf, 4), -ENOSPC);
    assert_int_equal(strlen(buf), 3);
}

/* Reject lines: at most 32, each under the limit once %-escaped, ASCII. */
static void
test_reject_lines(void **state)
{
    struct config *cfg = cfg_from("RejectThreshold 30\nRejectText Refused: 100% automatic\n"
                                  "DocBase https://docs.example.org/\n");
    char *long_desc = malloc(3000);
    struct verdict_plan plan;
    struct fake f;

    (void)state;
    memset(long_desc, '%', 2999);
    long_desc[2999] = '\0';
    fake_init(&f, 40, CLASSIFIER_ACTION_REJECT, 40);
    f.hits[0].description = long_desc;
    f.hits[1].description = (char *)(uintptr_t) "line\r\nbreak\tand \xc3\xa9";
    verdict_plan_init(&plan);
    assert_int_equal(verdict_build(cfg, &f.res, NULL, &plan), 0);
    assert_int_equal(plan.result, VERDICT_REJECT);
    assert_int_equal(plan.n_smtp_lines, VERDICT_MAX_SMTP_LINES);
    assert_non_null(strstr(plan.smtp_lines[0], "Refused: 100% automatic"));
    assert_non_null(strstr(plan.smtp_lines[plan.n_smtp_lines - 2], "more findings"));
    assert_non_null(strstr(plan.smtp_lines[plan.n_smtp_lines - 1],
                           "https://docs.example.org/process/threat-model.html"));
    for (size_t i = 0; i < plan.n_smtp_lines; i++) {
        char esc[VERDICT_SMTP_LINE_MAX + 1];

        assert_true(verdict_escape(plan.smtp_lines[i], esc, sizeof(esc)) >= 0);
        assert_true(strlen(esc) < VERDICT_SMTP_LINE_MAX);
        for (const char *p = plan.smtp_lines[i]; *p; p++)
            assert_true((unsigned char)*p >= 0x20 && (unsigned char)*p < 0x7f);
    }
    assert_non_null(strstr(plan.smtp_lines[2], "line  break and ??"));
    /* Headers of a rejected message would be discarded: none planned. */
    assert_int_equal(plan.n_add, 0);
    assert_int_equal(plan.n_remove, 0);
    verdict_plan_release(&plan);
    free(long_desc);
    config_free(cfg);
}

/* Under another project without a document base the refusal points to no
 * kernel page; the findings are still there. */
static void
test_reject_other_project(void **state)
{
    struct config *cfg = cfg_from("RejectThreshold 30\nProject generic\n");
    struct verdict_plan plan;
    struct fake f;

    (void)state;
    fake_init(&f, 40, CLASSIFIER_ACTION_REJECT, 2);
    verdict_plan_init(&plan);
    assert_int_equal(verdict_build(cfg, &f.res, NULL, &plan), 0);
    assert_int_equal(plan.result, VERDICT_REJECT);
    assert_int_equal(plan.n_smtp_lines, 3);
    for (size_t i = 0; i < plan.n_smtp_lines; i++)
        assert_null(strstr(plan.smtp_lines[i], "threat-model"));
    verdict_plan_release(&plan);
    config_free(cfg);
}

/* Monitor mode never changes delivery but says what it would have done. */
static void
test_monitor(void **state)
{
    static const enum classifier_action actions[] = {
        CLASSIFIER_ACTION_NONE, CLASSIFIER_ACTION_TAG, CLASSIFIER_ACTION_REPLY,
        CLASSIFIER_ACTION_QUARANTINE, CLASSIFIER_ACTION_REJECT};
    struct config *cfg = cfg_from("Mode monitor\n");
    struct verdict_input in = {.subject = "hi"};

    (void)state;
    for (size_t i = 0; i < sizeof(actions) / sizeof(actions[0]); i++) {
        struct verdict_plan plan;
        const struct verdict_header *h;
        struct fake f;

        verdict_plan_init(&plan);
        fake_init(&f, 5.0 * (double)i, actions[i], 1);
        assert_int_equal(verdict_build(cfg, &f.res, &in, &plan), 0);
        assert_true(plan.monitor);
        assert_int_equal(plan.result, VERDICT_ACCEPT);
        assert_null(plan.subject);
        assert_null(plan.quarantine);
        assert_false(plan.reply);
        assert_int_equal(plan.n_smtp_lines, 0);
        h = find_add(&plan, "X-Slop-Action");
        assert_non_null(h);
        assert_string_equal(h->value, classifier_action_name(actions[i]));
        assert_non_null(find_add(&plan, "X-Slop-Status"));
        verdict_plan_release(&plan);
    }
    config_free(cfg);
}

/* Inbound X-Slop-* copies go first, highest index first per name. */
static void
test_inbound_removal(void **state)
{
    static const struct verdict_seen seen[] = {{"X-Slop-Status", 3}, {"x-slop-score", 1}};
    static const struct {
        const char *name;
        unsigned index;
    } want[] = {
        {"X-Slop-Status", 3}, {"X-Slop-Status", 2}, {"X-Slop-Status", 1}, {"x-slop-score", 1}};
    struct config *cfg = cfg_from("");
    struct verdict_input in = {.seen = seen, .n_seen = 2};
    struct verdict_plan plan;
    struct fake f;

    (void)state;
    verdict_plan_init(&plan);
    fake_init(&f, 0, CLASSIFIER_ACTION_NONE, 0);
    assert_int_equal(verdict_build(cfg, &f.res, &in, &plan), 0);
    assert_int_equal(plan.n_remove, 4);
    for (size_t i = 0; i < 4; i++) {
        assert_string_equal(plan.remove[i].name, want[i].name);
        assert_int_equal(plan.remove[i].index, want[i].index);
    }
    /* No hits: status says so, no report header. */
    assert_non_null(strstr(find_add(&plan, "X-Slop-Status")->value, "tests=none"));
    assert_null(find_add(&plan, "X-Slop-Report"));

    /* Failure plans strip inbound copies too. */
    assert_int_equal(verdict_build_failure(cfg, VERDICT_TIMEOUT, &in, &plan), 0);
    assert_int_equal(plan.n_remove, 4);

    /* More occurrences than the cap: flagged, never overflowing. */
    {
        struct verdict_seen many = {"X-Slop-Status", VERDICT_MAX_REMOVE + 50};
        struct verdict_input in2 = {.seen = &many, .n_seen = 1};

        assert_int_equal(verdict_build(cfg, &f.res, &in2, &plan), 0);
        assert_int_equal(plan.n_remove, VERDICT_MAX_REMOVE);
        assert_true(plan.remove_truncated);
        assert_int_equal(plan.remove[0].index, VERDICT_MAX_REMOVE + 50);
    }
    verdict_plan_release(&plan);
    config_free(cfg);
}

static void
test_folding(void **state)
{
    struct config *cfg = cfg_from("");
    char *huge = malloc(5000);
    struct verdict_plan plan;
    const struct verdict_header *h;
    struct fake f;
    char *v;

    (void)state;
    /* Short words: lines near VERDICT_FOLD_AT, continuation with a tab. */
    v = verdict_fold(13, "Yes, score=11.5 required=5.0 tests=AAAAAAAAAA,BBBBBBBBBB,CCCCCCCCCC,"
                         "DDDDDDDDDD,EEEEEEEEEE,FFFFFFFFFF version=0.1.0");
    assert_non_null(v);
    assert_non_null(strchr(v, '\n'));
    for (char *p = v; *p;) {
        size_t len = strcspn(p, "\n");

        assert_true(len <= VERDICT_FOLD_AT);
        p += len;
        if (*p) {
            assert_int_equal(p[1], '\t');
            p++;
        }
    }
    assert_folded_ok("X-Slop-Status", v);
    free(v);

    /* An explicit newline starts a new item line. */
    v = verdict_fold(13, "2.0 A one\n3.0 B two");
    assert_string_equal(v, "2.0 A one\n\t3.0 B two");
    free(v);

    /* A word longer than a header line is cut, never overflowing. */
    memset(huge, 'x', 4999);
    huge[4999] = '\0';
    v = verdict_fold(13, huge);
    assert_folded_ok("X-Slop-Report", v);
    assert_true(strlen(v) < VERDICT_HEADER_LINE_MAX);
    free(v);

    /* A report with many hits and hostile descriptions stays well-formed. */
    fake_init(&f, 12, CLASSIFIER_ACTION_TAG, 60);
    f.hits[3].description = huge;
    f.hits[4].description = (char *)(uintptr_t) "evil\r\nBcc: victim@example.org";
    verdict_plan_init(&plan);
    assert_int_equal(verdict_build(cfg, &f.res, NULL, &plan), 0);
    for (size_t i = 0; i < plan.n_add; i++)
        assert_folded_ok(plan.add[i].name, plan.add[i].value);
    h = find_add(&plan, "X-Slop-Report");
    assert_non_null(h);
    assert_null(strstr(h->value, "\nBcc:"));
    assert_non_null(strstr(h->value, "2.5 NO_VERSION no affected kernel version given"));
    verdict_plan_release(&plan);
    free(huge);
    config_free(cfg);
}

/* Each failure policy, for each cause. */
static void
test_failure_policies(void **state)
{
    static const struct {
        const char *cfg;
        enum verdict_cause cause;
        enum verdict_result result;
        const char *rcode;
        bool unknown_header;
        bool quarantine;
    } cases[] = {
        {"", VERDICT_INTERNAL_ERROR, VERDICT_ACCEPT, "", true, false},
        {"OnInternalError tempfail", VERDICT_INTERNAL_ERROR, VERDICT_TEMPFAIL, "451", false, false},
        {"OnInternalError reject", VERDICT_INTERNAL_ERROR, VERDICT_REJECT, "550", false, false},
        {"OnInternalError quarantine", VERDICT_INTERNAL_ERROR, VERDICT_QUARANTINE, "", true, true},
        {"OnTimeout tempfail", VERDICT_TIMEOUT, VERDICT_TEMPFAIL, "451", false, false},
        {"OnTimeout reject\nOnInternalError tempfail", VERDICT_TIMEOUT, VERDICT_REJECT, "550",
         false, false},
        {"", VERDICT_TIMEOUT, VERDICT_ACCEPT, "", true, false},
        {"OnOversize reject", VERDICT_OVERSIZE, VERDICT_REJECT, "552", false, false},
        {"OnOversize quarantine", VERDICT_OVERSIZE, VERDICT_QUARANTINE, "", true, true},
        {"OnOversize accept", VERDICT_OVERSIZE, VERDICT_ACCEPT, "", true, false},
        {"Mode monitor\nOnTimeout reject", VERDICT_TIMEOUT, VERDICT_ACCEPT, "", true, false},
        {"Mode monitor\nOnInternalError tempfail", VERDICT_INTERNAL_ERROR, VERDICT_ACCEPT, "", true,
         false},
    };

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct config *cfg = cfg_from(cases[i].cfg);
        struct verdict_plan plan;
        const struct verdict_header *h;

        verdict_plan_init(&plan);
        assert_int_equal(verdict_build_failure(cfg, cases[i].cause, NULL, &plan), 0);
        if (plan.result != cases[i].result)
            fail_msg("case %zu: result %s", i, verdict_result_name(plan.result));
        assert_string_equal(plan.rcode, cases[i].rcode);
        assert_int_equal(plan.n_smtp_lines > 0, cases[i].rcode[0] != '\0');
        h = find_add(&plan, "X-Slop-Status");
        assert_int_equal(h != NULL, cases[i].unknown_header);
        if (h) {
            char want[64];

            snprintf(want, sizeof(want), "Unknown, reason=%s", verdict_cause_name(cases[i].cause));
            assert_true(strncmp(h->value, want, strlen(want)) == 0);
        }
        assert_int_equal(plan.quarantine != NULL, cases[i].quarantine);
        assert_int_equal(find_add(&plan, "X-Slop-Action") != NULL,
                         cfg->mode == CONFIG_MODE_MONITOR);
        assert_false(plan.reply);
        verdict_plan_release(&plan);
        config_free(cfg);
    }
}

static void
test_print(void **state)
{
    struct config *cfg = cfg_from(cfg_text);
    static const struct verdict_seen seen[] = {{"X-Slop-Status", 1}};
    struct verdict_input in = {.seen = seen, .n_seen = 1, .subject = "Oops"};
    struct verdict_plan plan;
    char *out = NULL;
    size_t size = 0;
    struct fake f;
    FILE *fp;

    (void)state;
    fake_init(&f, 21, CLASSIFIER_ACTION_QUARANTINE, 1);
    verdict_plan_init(&plan);
    assert_int_equal(verdict_build(cfg, &f.res, &in, &plan), 0);
    fp = open_memstream(&out, &size);
    verdict_print(&plan, fp);
    fclose(fp);
    assert_non_null(strstr(out, "header-remove: X-Slop-Status[1]\n"));
    assert_non_null(strstr(out, "header-add: X-Slop-Status: Yes, score=21.0"));
    assert_non_null(strstr(out, "subject: [SLOP] Oops\n"));
    assert_non_null(strstr(out, "quarantine: slop-milter: score 21.0 tests=NO_VERSION\n"));
    free(out);
    verdict_plan_release(&plan);
    config_free(cfg);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_actions), cmocka_unit_test(test_reply_disabled_and_subject_cases),
        cmocka_unit_test(test_escape),  cmocka_unit_test(test_reject_lines),
        cmocka_unit_test(test_monitor), cmocka_unit_test(test_inbound_removal),
        cmocka_unit_test(test_folding), cmocka_unit_test(test_failure_policies),
        cmocka_unit_test(test_print),   cmocka_unit_test(test_reject_other_project),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
