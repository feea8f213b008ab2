/* test_callbacks.c - the decision pipeline shared by eom and -t. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "callbacks.h"
#include "classifier.h"
#include "conn.h"
#include "reply.h"
#include "snapshot.h"
#include "state.h"
#include "state_db.h"
#include "testutil.h"

static const struct config_paths test_paths = {
    .runtime_dir = "/tmp", .state_dir = "/tmp", .rules_dir = SLOP_RULES_DIR, .hostname = "mx.test"};

static void
diag_fail(void *ctx, const char *text)
{
    (void)ctx;
    fail_msg("snapshot: %s", text);
}

static struct snapshot *
snap_from(const char *text)
{
    char path[] = "/tmp/test_callbacks_XXXXXX";
    struct snapshot *s = NULL;
    int fd = mkstemp(path);
    FILE *f;

    assert_true(fd >= 0);
    f = fdopen(fd, "w");
    fputs(text, f);
    fclose(f);
    assert_int_equal(snapshot_build(path, &test_paths, diag_fail, NULL, &s), 0);
    unlink(path);
    return s;
}

static struct msg *
msg_from_fixture(const char *name, size_t max, const char *from)
{
    struct msg *m = msg_new(max);
    size_t len;
    char *raw = testutil_read_fixture(name, &len);

    msg_set_sender(m, from);
    msg_add_rcpt(m, "<security@kernel.org>", true);
    assert_int_equal(msg_load_raw(m, raw, len), 0);
    free(raw);
    return m;
}

static const struct verdict_header *
find_add(const struct verdict_plan *p, const char *name)
{
    for (size_t i = 0; i < p->n_add; i++)
        if (strcmp(p->add[i].name, name) == 0)
            return &p->add[i];
    return NULL;
}

static void
test_scan_and_tag(void **state)
{
    struct snapshot *s = snap_from("TagThreshold 0.5\n");
    struct msg *m = msg_from_fixture("det-report-crashed.eml", 1 << 20, "<a@example.com>");
    struct decision d;

    (void)state;
    decision_init(&d);
    callbacks_decide(s, m, NULL, NULL, &d);
    assert_non_null(d.res);
    assert_true(d.res->n_hits > 0);
    assert_int_equal(d.plan.cause, VERDICT_SCANNED);
    assert_int_equal(d.plan.result, VERDICT_ACCEPT);
    assert_true(d.res->action >= CLASSIFIER_ACTION_TAG);
    assert_non_null(find_add(&d.plan, "X-Slop-Report"));
    assert_true(strncmp(find_add(&d.plan, "X-Slop-Status")->value, "Yes,", 4) == 0);
    assert_non_null(d.plan.subject);
    /* The buffer went to the scan. */
    assert_null(m->buf);
    decision_release(&d);
    msg_free(m);
    snapshot_unref(s);
}

/* Reply: allowed for a plain sender, suppressed for <>. */
static void
test_reply_decision(void **state)
{
    static const struct {
        const char *from;
        bool allowed;
    } cases[] = {
        {"<pat@example.com>", true},
        {"<>", false},
        {"<MAILER-DAEMON@example.com>", false},
        {"<security@kernel.org>", false}, /* a protected recipient is ours */
    };
    struct snapshot *s = snap_from("TagThreshold 0.5\nReplyThreshold 1\nReplyRequires any\n");

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct msg *m = msg_from_fixture("det-report-crashed.eml", 1 << 20, cases[i].from);
        struct decision d;

        decision_init(&d);
        callbacks_decide(s, m, NULL, NULL, &d);
        assert_true(d.plan.reply);
        if (cases[i].allowed) {
            assert_null(d.reply_suppressed);
            assert_non_null(d.reply_text);
            assert_non_null(strstr(d.reply_text, "Auto-Submitted: auto-replied"));
        } else {
            if (d.reply_suppressed == NULL)
                fail_msg("case %zu: reply to %s not suppressed", i, cases[i].from);
            assert_null(d.reply_text);
        }
        decision_release(&d);
        msg_free(m);
    }
    snapshot_unref(s);
}

/*
 * ReplyRequires: only a proved sender is answered. The fixture's From: is
 * pat.goodwin@example.com; the A-R fields are what a verifier would add.
 * The MTA's name is mx.test (the default AuthservID when no {j} is set is
 * the host name, so every case names AuthservID or sets m->mta_name).
 */
static void
test_reply_requires(void **state)
{
    static const char ar_ok[] = "Authentication-Results: mx.test; dmarc=pass (p=none) "
                                "header.from=example.com\n";
    static const char ar_other[] = "Authentication-Results: evil.test; dmarc=pass "
                                   "header.from=example.com\n";
    static const struct {
        const char *cfg; /* after TagThreshold and ReplyThreshold */
        const char *from;
        const char *headers;
        bool authenticated;
        const char *mta_name;
        bool verified;
    } cases[] = {
        /* the default: authenticated dmarc-pass */
        {"", "<pat.goodwin@example.com>", "", false, "mx.test", false},
        {"", "<pat.goodwin@example.com>", "", true, "mx.test", true},
        {"", "<pat.goodwin@example.com>", ar_ok, false, "mx.test", true},
        {"", "<pat.goodwin@example.com>", ar_ok, false, "other.test", false},
        {"AuthservID mx.test\n", "<pat.goodwin@example.com>", ar_ok, false, "", true},
        {"", "<pat.goodwin@example.com>", ar_other, false, "mx.test", false},
        /* a pass for From: does not vouch for another envelope domain */
        {"", "<victim@elsewhere.test>", ar_ok, false, "mx.test", false},
        {"", "<pat@lists.example.com>", ar_ok, false, "mx.test", true},
        /* a trusted fail next to a pass vetoes it */
        {"", "<pat.goodwin@example.com>",
         "Authentication-Results: mx.test; dmarc=pass header.from=example.com\n"
         "Authentication-Results: mx.test; dmarc=fail header.from=example.com\n",
         false, "mx.test", false},
        {"ReplyRequires spf-pass\n", "<pat.goodwin@example.com>",
         "Authentication-Results: mx.test; spf=pass smtp.mailfrom=pat.goodwin@example.com\n", false,
         "mx.test", true},
        {"ReplyRequires spf-pass\n", "<pat.goodwin@example.com>", ar_ok, true, "mx.test", false},
        {"ReplyRequires dkim-aligned\n", "<pat.goodwin@example.com>",
         "Authentication-Results: mx.test; dkim=pass header.d=mail.example.com\n", false, "mx.test",
         true},
        {"ReplyRequires dkim-aligned\n", "<pat.goodwin@example.com>",
         "Authentication-Results: mx.test; dkim=pass header.d=example.net\n", false, "mx.test",
         false},
        {"ReplyRequires any\n", "<pat.goodwin@example.com>", "", false, "", true},
    };

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char cfg[256];
        struct snapshot *s;
        struct msg *m = msg_new(1 << 20);
        struct decision d;
        size_t len, hl = strlen(cases[i].headers);
        char *raw = testutil_read_fixture("det-report-crashed.eml", &len);
        char *all = malloc(hl + len + 1);

        snprintf(cfg, sizeof(cfg), "TagThreshold 0.5\nReplyThreshold 1\n%s", cases[i].cfg);
        s = snap_from(cfg);
        assert_non_null(all);
        memcpy(all, cases[i].headers, hl);
        memcpy(all + hl, raw, len);
        msg_set_sender(m, cases[i].from);
        msg_add_rcpt(m, "<security@kernel.org>", true);
        m->authenticated = cases[i].authenticated;
        snprintf(m->mta_name, sizeof(m->mta_name), "%s", cases[i].mta_name);
        assert_int_equal(msg_load_raw(m, all, hl + len), 0);
        decision_init(&d);
        callbacks_decide(s, m, NULL, NULL, &d);
        assert_true(d.plan.reply);
        assert_null(d.reply_suppressed);
        if (d.reply_unverified != !cases[i].verified)
            fail_msg("case %zu: unverified=%d, expected %d", i, d.reply_unverified,
                     !cases[i].verified);
        assert_true((d.reply_text != NULL) == cases[i].verified);
        decision_release(&d);
        msg_free(m);
        snapshot_unref(s);
        free(raw);
        free(all);
    }
}

static void
test_oversize(void **state)
{
    static const struct {
        const char *cfg;
        enum verdict_cause cause;
        enum verdict_result result;
        bool scanned;
    } cases[] = {
        {"MaxMessageSize 64K\nOnOversize reject\n", VERDICT_OVERSIZE, VERDICT_REJECT, false},
        {"MaxMessageSize 64K\nOnOversize tempfail\n", VERDICT_OVERSIZE, VERDICT_TEMPFAIL, false},
        {"MaxMessageSize 64K\nOnOversize accept\n", VERDICT_OVERSIZE, VERDICT_ACCEPT, false},
        {"MaxMessageSize 64K\n", VERDICT_SCANNED, VERDICT_ACCEPT, true},
    };
    char *line = malloc(1001);

    (void)state;
    memset(line, 'z', 1000);
    line[1000] = '\0';
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct snapshot *s = snap_from(cases[i].cfg);
        struct msg *m = msg_new((size_t)s->cfg->max_message_size);
        struct decision d;

        msg_set_sender(m, "<a@example.com>");
        msg_add_header(m, "Subject", "big");
        msg_end_headers(m);
        for (int n = 0; n < 100; n++)
            msg_add_body(m, line, 1000);
        assert_true(m->oversize);
        decision_init(&d);
        callbacks_decide(s, m, NULL, NULL, &d);
        assert_int_equal(d.plan.cause, cases[i].cause);
        assert_int_equal(d.plan.result, cases[i].result);
        assert_int_equal(d.res != NULL, cases[i].scanned);
        if (d.res)
            assert_true(d.res->truncated);
        decision_release(&d);
        msg_free(m);
        snapshot_unref(s);
    }
    free(line);
}

/* An error while collecting becomes the internal-error policy. */
/* A scan longer than ScanTimeout gets the OnTimeout plan; the late scan
 * keeps its thread, and the next message on this thread gets a new one
 * and is judged normally. */
static void
test_timeout(void **state)
{
    static const char para[] = "The driver keeps the buffer after the device is removed, and "
                               "a later read through the old file descriptor uses it.\n";
    struct snapshot *s = snap_from("ScanTimeout 10\nOnTimeout tempfail\nMaxMessageSize 64M\n"
                                   "MaxPartSize 64M\nMaxLines 10000000\n");
    struct msg *m = msg_new((size_t)s->cfg->max_message_size);
    struct decision d;

    (void)state;
    msg_set_sender(m, "<a@example.com>");
    msg_add_rcpt(m, "<security@kernel.org>", true);
    msg_add_header(m, "Subject", "a long report");
    msg_end_headers(m);
    /* About 48 MB of prose: several times ScanTimeout on any machine. */
    for (int n = 0; n < 400000; n++)
        msg_add_body(m, para, sizeof(para) - 1);
    assert_false(m->oversize);
    decision_init(&d);
    callbacks_decide(s, m, NULL, NULL, &d);
    assert_int_equal(d.plan.cause, VERDICT_TIMEOUT);
    assert_int_equal(d.plan.result, VERDICT_TEMPFAIL);
    assert_null(d.res);
    decision_release(&d);
    msg_free(m);
    snapshot_unref(s);

    s = snap_from("");
    m = msg_from_fixture("det-genuine-driver-cleanup.eml", (size_t)s->cfg->max_message_size,
                         "<dev@example.org>");
    decision_init(&d);
    callbacks_decide(s, m, NULL, NULL, &d);
    assert_int_equal(d.plan.cause, VERDICT_SCANNED);
    assert_non_null(d.res);
    decision_release(&d);
    msg_free(m);
    snapshot_unref(s);
}

static void
test_internal_error(void **state)
{
    struct snapshot *s = snap_from("OnInternalError tempfail\n");
    struct msg *m = msg_from_fixture("det-report-crashed.eml", 1 << 20, "<a@example.com>");
    struct decision d;

    (void)state;
    m->error = -ENOMEM;
    decision_init(&d);
    callbacks_decide(s, m, NULL, NULL, &d);
    assert_null(d.res);
    assert_int_equal(d.plan.cause, VERDICT_INTERNAL_ERROR);
    assert_int_equal(d.plan.result, VERDICT_TEMPFAIL);
    assert_string_equal(d.plan.rcode, "451");
    decision_release(&d);
    msg_free(m);
    snapshot_unref(s);
}

/* A snapshot outlives its installation while a connection holds it. */
static void
test_snapshot_refcount(void **state)
{
    struct snapshot *a = snap_from(""), *b = snap_from("Mode monitor\n"), *held;

    (void)state;
    assert_null(snapshot_current());
    snapshot_install(a);
    held = snapshot_current();
    assert_ptr_equal(held, a);
    snapshot_install(b);
    /* The old one is still usable through the held reference. */
    assert_int_equal(held->cfg->mode, CONFIG_MODE_ENFORCE);
    assert_true(held->generation < b->generation);
    snapshot_unref(held);
    held = snapshot_current();
    assert_int_equal(held->cfg->mode, CONFIG_MODE_MONITOR);
    snapshot_unref(held);
    snapshot_install(NULL);
    assert_null(snapshot_current());
}

/* A fresh state in a temporary directory; state_dir_remove() cleans up. */
static struct state *
state_dir_new(char *dir)
{
    struct state *st = NULL;

    assert_non_null(mkdtemp(dir));
    assert_int_equal(state_open(dir, 0, 0, &st), 0);
    return st;
}

static void
state_dir_remove(struct state *st, const char *dir)
{
    char path[256];

    state_close(st);
    snprintf(path, sizeof(path), "%s/data.mdb", dir);
    unlink(path);
    snprintf(path, sizeof(path), "%s/lock.mdb", dir);
    unlink(path);
    snprintf(path, sizeof(path), "%s/state.generation", dir);
    unlink(path);
    assert_int_equal(rmdir(dir), 0);
}

/* A fixture whose Message-ID is replaced by id: the same mail sent again;
 * with author, by someone else (its From: line). */
static struct msg *
msg_with_id(const char *name, const char *id, const char *from, const char *author)
{
    struct msg *m = msg_new(1 << 20);
    size_t len;
    char *raw = testutil_read_fixture(name, &len);
    char *hdr = strstr(raw, "Message-ID: <"), *end, *copy;

    assert_non_null(hdr);
    end = strchr(hdr, '\n');
    assert_non_null(end);
    assert_true(asprintf(&copy, "%.*sMessage-ID: <%s>%s", (int)(hdr - raw), raw, id, end) > 0);
    if (author != NULL) {
        char *again;

        free(raw);
        raw = copy;
        hdr = strstr(raw, "From: ");
        assert_non_null(hdr);
        end = strchr(hdr, '\n');
        assert_non_null(end);
        assert_true(asprintf(&again, "%.*sFrom: %s%s", (int)(hdr - raw), raw, author, end) > 0);
        copy = again;
    }
    msg_set_sender(m, from);
    msg_add_rcpt(m, "<security@kernel.org>", true);
    assert_int_equal(msg_load_raw(m, copy, strlen(copy)), 0);
    free(copy);
    free(raw);
    return m;
}

static bool
has_hit(const struct classifier_result *res, const char *rule)
{
    for (size_t i = 0; res != NULL && i < res->n_hits; i++)
        if (strcmp(res->hits[i].rule, rule) == 0)
            return true;
    return false;
}

/*
 * The same patch under a new Message-ID from someone else is a duplicate
 * once the first was recorded at eom; the same author sending it again is
 * a resend, never a duplicate (issue 31, finding 2); nothing is recorded
 * with RecordState no or when the state is only read (-t).
 */
static void
test_state_duplicate(void **state)
{
    static const struct {
        const char *cfg;
        bool record; /* callbacks_setup(): the daemon, not -t */
        bool duplicate;
    } cases[] = {
        {"TagThreshold 0.5\n", true, true},
        {"TagThreshold 0.5\nDuplicateWindow 1d\n", true, true},
        {"TagThreshold 0.5\nRecordState no\n", true, false},
        {"TagThreshold 0.5\n", false, false},
    };

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char dir[] = "/tmp/test_callbacks_state_XXXXXX";
        struct state *st = state_dir_new(dir);
        struct snapshot *s = snap_from(cases[i].cfg);
        static const char *const ids[] = {"first-send@sender.example", "second-send@sender.example",
                                          "copy@other.example"};
        static const char *const authors[] = {NULL, NULL, "Other Person <other@other.example>"};

        callbacks_setup(st, cases[i].record, NULL);
        for (size_t n = 0; n < 3; n++) {
            struct msg *m =
                msg_with_id("state/patch-unfixed.eml", ids[n], "<pat@sender.example>", authors[n]);
            struct decision d;

            decision_init(&d);
            callbacks_decide(s, m, NULL, NULL, &d);
            assert_non_null(d.res);
            assert_int_equal(d.res->kind, CLASSIFIER_KIND_PATCH);
            assert_true(d.res->n_fingerprints > 0);
            if (has_hit(d.res, "DUPLICATE") != (n == 2 && cases[i].duplicate))
                fail_msg("case %zu, message %zu: DUPLICATE %s", i, n,
                         has_hit(d.res, "DUPLICATE") ? "hit" : "missing");
            decision_release(&d);
            msg_free(m);
        }
        /* Both were counted for their sender, or neither. */
        assert_int_equal(state_sender_count(st, "pat@sender.example", time(NULL)),
                         cases[i].duplicate ? 2 : 0);
        callbacks_setup(NULL, false, NULL);
        snapshot_unref(s);
        state_dir_remove(st, dir);
    }
}

/* A MAINTAINERS address is never answered, yet its findings are shown. */
static void
test_state_trusted_no_reply(void **state)
{
    static const char maintainers[] = "USB SUBSYSTEM\n"
                                      "M:\tPat Goodwin <pat.goodwin@example.com>\n"
                                      "L:\tlinux-usb@vger.kernel.org\n"
                                      "S:\tMaintained\n"
                                      "F:\tdrivers/usb/\n";
    static const struct {
        const char *cfg;
        bool trusted;
    } cases[] = {
        {"TagThreshold 0.5\nReplyThreshold 1\n", true},
        {"TagThreshold 0.5\nReplyThreshold 1\nTrustMaintainers yes\n", true},
        {"TagThreshold 0.5\nReplyThreshold 1\nTrustMaintainers no\nReplyRequires any\n", false},
    };
    char dir[] = "/tmp/test_callbacks_state_XXXXXX";
    struct state *st = state_dir_new(dir);

    (void)state;
    assert_int_equal(state_maint_import(st, maintainers, strlen(maintainers), NULL), 0);
    callbacks_setup(st, true, NULL);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct snapshot *s = snap_from(cases[i].cfg);
        struct msg *m =
            msg_from_fixture("det-report-crashed.eml", 1 << 20, "<pat.goodwin@example.com>");
        struct decision d;

        decision_init(&d);
        callbacks_decide(s, m, NULL, NULL, &d);
        assert_non_null(d.res);
        assert_int_equal(d.res->trusted_sender, cases[i].trusted);
        assert_true(d.res->n_hits > 0);
        assert_non_null(find_add(&d.plan, "X-Slop-Report"));
        if (cases[i].trusted) {
            assert_null(d.reply_text);
            assert_true(!d.plan.reply || d.reply_suppressed != NULL);
            assert_true(d.res->action <= CLASSIFIER_ACTION_TAG);
        } else {
            assert_true(d.plan.reply);
            assert_non_null(d.reply_text);
        }
        decision_release(&d);
        msg_free(m);
        snapshot_unref(s);
    }
    callbacks_setup(NULL, false, NULL);
    state_dir_remove(st, dir);
}

/* A message of raw text from sender to the reporter. */
static struct msg *
msg_from_text(const char *raw, const char *from)
{
    struct msg *m = msg_new(1 << 20);

    msg_set_sender(m, from);
    msg_add_rcpt(m, "<pat@example.com>", false);
    assert_int_equal(msg_load_raw(m, raw, strlen(raw)), 0);
    return m;
}

/* raw without its line that starts with prefix; free() it. */
static char *
without_line(const char *raw, const char *prefix)
{
    const char *at = strstr(raw, prefix), *end;
    char *copy;

    assert_non_null(at);
    end = strchr(at, '\n');
    assert_non_null(end);
    assert_true(asprintf(&copy, "%.*s%s", (int)(at - raw), raw, end + 1) > 0);
    return copy;
}

/*
 * Issue 31, finding 1: our own auto-reply comes back through the milter.
 * Signed with our key it is passed unscanned as other mail, untagged and
 * unanswered; without the token (another host's key, or none) its
 * Auto-Submitted still keeps it from being a report or being answered.
 */
static void
test_own_reply(void **state)
{
    struct reply_key key = {{1, 2, 3, 4, 5, 6, 7, 8}}, other = {{9}};
    struct snapshot *s = snap_from("TagThreshold 0.5\nReplyThreshold 1\nReplyRequires any\n");
    struct msg *m = msg_from_fixture("det-report-crashed.eml", 1 << 20, "<pat@example.com>");
    const struct verdict_header *h;
    struct decision d, back;
    char *reply, *bare;

    (void)state;
    callbacks_set_reply_key(&key);
    decision_init(&d);
    callbacks_decide(s, m, NULL, NULL, &d);
    assert_non_null(d.reply_text);
    assert_non_null(strstr(d.reply_text, "\nX-Slop-Reply-Token: "));
    reply = strdup(d.reply_text);
    assert_non_null(reply);
    decision_release(&d);
    msg_free(m);

    /* Signed: passed as other mail, nothing found, no reply. */
    m = msg_from_text(reply, "<>");
    decision_init(&back);
    callbacks_decide(s, m, NULL, NULL, &back);
    assert_true(back.own_reply);
    assert_non_null(back.res);
    assert_int_equal(back.res->kind, CLASSIFIER_KIND_OTHER);
    assert_int_equal(back.res->action, CLASSIFIER_ACTION_NONE);
    assert_int_equal(back.res->n_hits, 0);
    assert_false(back.plan.reply);
    assert_null(back.reply_text);
    h = find_add(&back.plan, "X-Slop-Status");
    assert_non_null(h);
    assert_true(strncmp(h->value, "No", 2) == 0);
    decision_release(&back);
    msg_free(m);

    /* Another key, or no token at all: scanned, but never as a report and
     * never answered. */
    bare = without_line(reply, "X-Slop-Reply-Token: ");
    for (int i = 0; i < 2; i++) {
        callbacks_set_reply_key(i == 0 ? &other : &key);
        m = msg_from_text(i == 0 ? reply : bare, "<>");
        decision_init(&back);
        callbacks_decide(s, m, NULL, NULL, &back);
        assert_false(back.own_reply);
        assert_non_null(back.res);
        assert_int_not_equal(back.res->kind, CLASSIFIER_KIND_REPORT);
        assert_null(back.reply_text);
        decision_release(&back);
        msg_free(m);
    }
    callbacks_set_reply_key(NULL);
    free(bare);
    free(reply);
    snapshot_unref(s);
}

static void
diag_count(void *ctx, const char *text)
{
    (void)text;
    (*(int *)ctx)++;
}

static void
test_snapshot_bad_config(void **state)
{
    char path[] = "/tmp/test_callbacks_XXXXXX";
    struct snapshot *s = NULL;
    int fd = mkstemp(path), n = 0;

    (void)state;
    assert_int_equal(write(fd, "Mode loud\n", 10), 10);
    close(fd);
    assert_int_equal(snapshot_build(path, &test_paths, diag_count, &n, &s), -EINVAL);
    assert_null(s);
    assert_int_equal(n, 1);
    unlink(path);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_scan_and_tag),      cmocka_unit_test(test_reply_decision),
        cmocka_unit_test(test_reply_requires),    cmocka_unit_test(test_oversize),
        cmocka_unit_test(test_timeout),           cmocka_unit_test(test_internal_error),
        cmocka_unit_test(test_snapshot_refcount), cmocka_unit_test(test_snapshot_bad_config),
        cmocka_unit_test(test_state_duplicate),   cmocka_unit_test(test_state_trusted_no_reply),
        cmocka_unit_test(test_own_reply),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
