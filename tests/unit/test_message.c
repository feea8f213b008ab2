/* test_message.c - the message model: fields, kind, body split, disclosure. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "classifier.h"
#include "message.h"
#include "message_build.h"
#include "patch_parse.h"
#include "patch_subject.h"
#include "report_parse.h"
#include "mime_view.h"
#include "testutil.h"

static void
assert_regions_built(const struct message *m)
{
    for (unsigned i = 0; i < REGION__COUNT; i++) {
        assert_non_null(m->regions[i].text);
        assert_int_equal(strlen(m->regions[i].text), m->regions[i].len);
    }
}

static const struct kind_case {
    const char *fixture;
    enum classifier_kind kind;
} kind_cases[] = {
    {"msg-patch-inline.eml", CLASSIFIER_KIND_PATCH},
    {"msg-patch-attached.eml", CLASSIFIER_KIND_PATCH},
    {"mime-attachments.eml", CLASSIFIER_KIND_PATCH},
    {"msg-cover-letter.eml", CLASSIFIER_KIND_PATCH},
    {"msg-disclosure.eml", CLASSIFIER_KIND_PATCH},
    {"msg-report-kasan.eml", CLASSIFIER_KIND_REPORT},
    {"msg-reply.eml", CLASSIFIER_KIND_REPLY},
    {"mime-rfc2047.eml", CLASSIFIER_KIND_REPLY},
    {"msg-other.eml", CLASSIFIER_KIND_OTHER},
    {"mime-alternative.eml", CLASSIFIER_KIND_OTHER},
};

static void
test_kinds(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(kind_cases) / sizeof(kind_cases[0]); i++) {
        struct message *m = testutil_message_fixture(kind_cases[i].fixture);

        print_message("case %s\n", kind_cases[i].fixture);
        assert_int_equal(m->kind, kind_cases[i].kind);
        assert_regions_built(m);
        message_free(m);
    }
}

static const struct raw_kind_case {
    const char *name;
    const char *raw;
    enum classifier_kind kind;
} raw_kind_cases[] = {
    {"reply by In-Reply-To and quotes, no Re:",
     "From: a@example.org\nSubject: about your fix\nIn-Reply-To: <x@y>\n\n"
     "> the old text\n\nI agree.\n",
     CLASSIFIER_KIND_REPLY},
    {"In-Reply-To without quotes is not a reply",
     "From: a@example.org\nSubject: follow-up\nIn-Reply-To: <x@y>\n\nJust a note.\n",
     CLASSIFIER_KIND_OTHER},
    {"Re: to a patch with a quoted diff stays a reply",
     "From: a@example.org\nSubject: Re: [PATCH 2/3] mm: fix\n\n"
     "> diff --git a/mm/x.c b/mm/x.c\n> +foo\n\nLooks fine.\n",
     CLASSIFIER_KIND_REPLY},
    {"Aw: is a reply too", "From: a@example.org\nSubject: AW: question\n\nJa.\n",
     CLASSIFIER_KIND_REPLY},
    {"Re: 0/N is a reply, not a cover letter",
     "From: a@example.org\nSubject: Re: [PATCH 0/4] net: series\n\nFor the series: ok\n",
     CLASSIFIER_KIND_REPLY},
    {"tagged patch without a diff",
     "From: a@example.org\nSubject: [RFC PATCH] idea: do things\n\nWhat do you think?\n",
     CLASSIFIER_KIND_PATCH},
    {"bare unified diff inline",
     "From: a@example.org\nSubject: small fix\n\nFix it.\n\n--- a/x.c\n+++ b/x.c\n"
     "@@ -1,1 +1,1 @@\n-a\n+b\n",
     CLASSIFIER_KIND_PATCH},
    {"one strong report word",
     "From: a@example.org\nSubject: issue\n\nI found a use-after-free in the tty layer.\n",
     CLASSIFIER_KIND_REPORT},
    {"two weak report words",
     "From: a@example.org\nSubject: issue\n\nThe driver may crash, which is a security "
     "problem.\n",
     CLASSIFIER_KIND_REPORT},
    {"one weak word is not a report",
     "From: a@example.org\nSubject: issue\n\nDoes anyone know why this might crash?\n",
     CLASSIFIER_KIND_OTHER},
    {"bug report tag in the subject",
     "From: a@example.org\nSubject: [bug report] misc: foo leaks\n\nHello,\n\nsee below.\n",
     CLASSIFIER_KIND_REPORT},
    {"report words in a quote do not count",
     "From: a@example.org\nSubject: hello\n\n> KASAN: use-after-free\n\nSee you.\n",
     CLASSIFIER_KIND_OTHER},
};

static void
test_raw_kinds(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(raw_kind_cases) / sizeof(raw_kind_cases[0]); i++) {
        const struct raw_kind_case *c = &raw_kind_cases[i];
        struct message *m = testutil_message(c->raw, strlen(c->raw));

        print_message("case %s\n", c->name);
        assert_int_equal(m->kind, c->kind);
        assert_regions_built(m);
        message_free(m);
    }
}

/* A message built as the classifier builds it for mail sent to
 * security@: the To: address matches the report pattern. */
static struct message *
routed_message(const char *raw, bool as_report)
{
    static const char *const patterns[] = {"security@*"};
    struct classifier_options opts;
    struct route route = {patterns, 1, NULL, 0, as_report};
    struct mime_view *v = NULL;
    struct message *m = NULL;

    classifier_options_default(&opts);
    mime_view_global_init();
    assert_int_equal(mime_view_parse(raw, strlen(raw), &opts.limits, &v), 0);
    assert_int_equal(message_build_routed(v, &opts.limits, &route, &m), 0);
    mime_view_free(v);
    return m;
}

#define FIX_DIFF                                                                                   \
    "--- a/lib/x.c\n+++ b/lib/x.c\n@@ -1,2 +1,3 @@\n int f(void)\n+  if(n >= sizeof(b))\n"         \
    "   return 0;\n"

static const struct routed_case {
    const char *name;
    const char *raw;
    bool as_report;
    enum classifier_kind kind;
} routed_cases[] = {
    {"a diff under a report that names a problem is a report with a fix",
     "From: a@example.org\nTo: security@example.org\nSubject: overflow in f()\n\n"
     "f() copies n bytes into b without a check: a heap overflow.\nA fix:\n\n" FIX_DIFF,
     false, CLASSIFIER_KIND_REPORT},
    {"the same under a [PATCH] subject is a patch",
     "From: a@example.org\nTo: security@example.org\nSubject: [PATCH] lib: bound the copy in "
     "f()\n\nf() copies n bytes into b without a check: a heap overflow.\n\n" FIX_DIFF,
     false, CLASSIFIER_KIND_PATCH},
    {"the same with a sign-off is a commit log, a patch",
     "From: a@example.org\nTo: security@example.org\nSubject: bound the copy in f()\n\n"
     "f() copies n bytes into b without a check: a heap overflow.\n\n"
     "Signed-off-by: A <a@example.org>\n---\n" FIX_DIFF,
     false, CLASSIFIER_KIND_PATCH},
    {"the same to a list is a patch",
     "From: a@example.org\nTo: dev@lists.example.org\nSubject: overflow in f()\n\n"
     "f() copies n bytes into b without a check: a heap overflow.\nA fix:\n\n" FIX_DIFF,
     false, CLASSIFIER_KIND_PATCH},
    {"a diff that names no problem stays a patch",
     "From: a@example.org\nTo: security@example.org\nSubject: tidy f()\n\n"
     "Tidy f().\n\n" FIX_DIFF,
     false, CLASSIFIER_KIND_PATCH},
    {"a question that names a topic only is not a report",
     "From: a@example.org\nTo: security@example.org\nSubject: Bounty programme\n\n"
     "Hello,\n\ndo you run a bounty programme for security bugs?\n\nThanks,\nAna\n",
     false, CLASSIFIER_KIND_OTHER},
    {"a question that names a problem is a report",
     "From: a@example.org\nTo: security@example.org\nSubject: question\n\n"
     "Is a heap overflow in the URL parser covered by your bounty?\n",
     false, CLASSIFIER_KIND_REPORT},
    {"a statement before the question makes it a report",
     "From: a@example.org\nTo: security@example.org\nSubject: security bug\n\n"
     "I found a way to read other users' files through your upload form.\n"
     "Who should I send the details to?\n",
     false, CLASSIFIER_KIND_REPORT},
    {"a question with a command in it is a report",
     "From: a@example.org\nTo: security@example.org\nSubject: security bug?\n\n"
     "Is this a security bug?\n\n$ ./tool --name $(printf 'A%.0s' {1..5000})\n",
     false, CLASSIFIER_KIND_REPORT},
    {"a web advisory's class names a problem",
     "From: a@example.org\nTo: security@example.org\nSubject: widget\n\n"
     "The embed widget has a stored XSS in the title field.\n",
     false, CLASSIFIER_KIND_REPORT},
    {"the caller's word makes a question a report",
     "From: a@example.org\nTo: security@example.org\nSubject: Bounty programme\n\n"
     "Do you run a bounty programme for security bugs?\n",
     true, CLASSIFIER_KIND_REPORT},
};

static void
test_routed_kinds(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(routed_cases) / sizeof(routed_cases[0]); i++) {
        const struct routed_case *c = &routed_cases[i];
        struct message *m = routed_message(c->raw, c->as_report);

        print_message("case %s\n", c->name);
        assert_int_equal(m->kind, c->kind);
        assert_regions_built(m);
        message_free(m);
    }
}

/* The bare address of a From: value as first written: strchr() on the
 * sets of bytes that end it before and after the '@'. */
static bool
ref_bare_addr(const char *v, char *out, size_t size)
{
    const char *at = strchr(v, '@'), *b, *e;
    size_t n;

    if (at == NULL)
        return false;
    for (b = at; b > v && !strchr(" \t\"'(<,;:", b[-1]); b--)
        ;
    for (e = at; *e != '\0' && !strchr(" \t\"')>,;", *e); e++)
        ;
    while (b < e && (*b == ' ' || *b == '\t'))
        b++;
    while (e > b && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '.'))
        e--;
    n = (size_t)(e - b);
    if (n == 0 || n >= size || memchr(b, '@', n) == NULL)
        return false;
    for (size_t i = 0; i < n; i++)
        out[i] = (char)(b[i] >= 'A' && b[i] <= 'Z' ? b[i] - 'A' + 'a' : b[i]);
    out[n] = '\0';
    return true;
}

/* Every printable byte around a bare address, on both sides. */
static void
test_bare_address_ends(void **state)
{
    (void)state;
    for (int c = ' '; c < 0x7f; c++) {
        char raw[64], want[64];
        int n = snprintf(raw, sizeof(raw), "From: x%cAb@Cd%cy\n\nbody\n", c, c);
        struct message *m = testutil_message(raw, (size_t)n);

        assert_non_null(m->from);
        if (ref_bare_addr(m->from, want, sizeof(want))) {
            if (m->from_addr == NULL || strcmp(m->from_addr, want) != 0) {
                print_error("'%s': '%s', reference '%s'\n", m->from,
                            m->from_addr ? m->from_addr : "(null)", want);
                fail();
            }
        } else if (m->from_addr != NULL && strchr(m->from, '<') == NULL) {
            print_error("'%s': '%s', reference none\n", m->from, m->from_addr);
            fail();
        }
        message_free(m);
    }
}

static const char header_raw[] =
    "subject: first\nSUBJECT: second\nSubjec: no\nFROM: A <A@Example.org>\nfrom: b@c.d\n"
    "message-id: <m1@x>\nMessage-Id: <m2@x>\nIN-REPLY-TO: <r@x>\nIn-Reply-To: <r2@x>\n"
    "TO: t@x.org\ncc: \"C@x, Cee\" <C@x.org>, <e@x.org>,f@x.org\nCc: d@x.org\nTx: z@x.org\n"
    "X-Cc: y@x.org\n\nbody\n";

static void
test_header_fields(void **state)
{
    struct message *m = testutil_message_fixture("mime-rfc2047.eml");

    (void)state;
    assert_string_equal(m->subject,
                        "Re: usb: core: hub: fix double free in hub_disconnect() \xe2\x80\x94 v2");
    assert_string_equal(m->from_addr, "joerg.mueller@example.org");
    assert_string_equal(m->message_id, "20260512081402.4711-1-joerg@example.org");
    assert_string_equal(m->in_reply_to, "20260511190000.1234-1-alice@example.org");
    /* To with a quoted comma in a display name, plus Cc; lower case. */
    assert_int_equal(m->recipients.n, 3);
    assert_true(strv_contains(&m->recipients, "alice@example.org"));
    assert_true(strv_contains(&m->recipients, "bob@example.net"));
    assert_true(strv_contains(&m->recipients, "linux-usb@vger.kernel.org"));
    assert_string_equal(m->regions[REGION_SUBJECT].text, m->subject);
    assert_non_null(strstr(m->regions[REGION_HEADERS].text,
                           "\nMessage-ID: <20260512081402.4711-1-joerg@example.org>\n"));
    message_free(m);

    m = testutil_message("Subject: x\n\nbody\n", 17);
    assert_null(m->from);
    assert_null(m->from_addr);
    assert_null(m->message_id);
    assert_int_equal(m->recipients.n, 0);
    message_free(m);

    /* The first of each field wins, names in any case; names of the same
     * length as a kept one are not it. */
    m = testutil_message(header_raw, strlen(header_raw));
    assert_string_equal(m->subject, "first");
    assert_string_equal(m->from, "A <A@Example.org>");
    assert_string_equal(m->from_addr, "a@example.org");
    assert_string_equal(m->message_id, "m1@x");
    assert_string_equal(m->in_reply_to, "r@x");
    assert_int_equal(m->recipients.n, 5);
    assert_true(strv_contains(&m->recipients, "t@x.org"));
    assert_true(strv_contains(&m->recipients, "c@x.org"));
    assert_true(strv_contains(&m->recipients, "d@x.org"));
    assert_true(strv_contains(&m->recipients, "e@x.org"));
    assert_true(strv_contains(&m->recipients, "f@x.org"));
    assert_non_null(strstr(m->regions[REGION_HEADERS].text, "Tx: z@x.org\nX-Cc: y@x.org\n"));
    assert_regions_built(m);
    message_free(m);

    /* No body at all: the body region is still "". */
    m = testutil_message("Subject: x\n\n", 12);
    assert_int_equal(m->regions[REGION_BODY].len, 0);
    assert_string_equal(m->regions[REGION_BODY].text, "");
    message_free(m);
}

static void
test_reply_split(void **state)
{
    struct message *m = testutil_message_fixture("msg-reply.eml");
    const char *body = m->regions[REGION_BODY].text;
    const char *quoted = m->regions[REGION_QUOTED].text;

    (void)state;
    assert_non_null(strstr(body, "How did you test this?"));
    assert_non_null(strstr(body, "greg k-h"));
    /* Attribution, quotes and signature are not the author's own text. */
    assert_null(strstr(body, "wrote:"));
    assert_null(strstr(body, "hub_release() frees it again"));
    assert_null(strstr(body, "signature line"));
    assert_null(strstr(body, "\n>"));
    assert_non_null(strstr(quoted, "hub_disconnect() frees hub->ports, and"));
    assert_non_null(strstr(quoted, "-\tkfree(hub->ports);"));
    assert_non_null(strstr(quoted, "\nnested quote line"));
    assert_null(strstr(quoted, "\n>"));
    assert_true(quoted[0] != '>');
    /* The report region holds own text only. */
    assert_null(strstr(m->regions[REGION_REPORT].text, "hub_release() frees"));
    message_free(m);
}

static const struct split_case {
    const char *name;
    const char *raw;
    const char *in_body, *not_in_body, *in_quoted;
} split_cases[] = {
    {"wrapped attribution",
     "Subject: Re: x\n\nOn Tue, 5 May 2026 at 10:00, Some Person\n<some@example.org> wrote:\n"
     "> quoted\n\nmine\n",
     "mine", "Some Person", "quoted"},
    {"Outlook separator",
     "Subject: Re: x\n\nmine on top\n\n-----Original Message-----\nFrom: b@c\nold text\n",
     "mine on top", "old text", "old text"},
    {"Outlook separator after more dashes, any case",
     "Subject: Re: x\n\nmine on top\n ------original MESSAGE----- \nold text\n", "mine on top",
     "old text", "old text"},
    {"not quite an Outlook separator",
     "Subject: Re: x\n\nmine on top\n-----Original Message----\nold text\n", "old text", NULL,
     NULL},
    {"underscore rule separator",
     "Subject: Re: x\n\nmine\n  ________________________________\nFrom: b@c\nold text\n", "mine",
     "old text", "old text"},
    {"short underscore rule", "Subject: Re: x\n\nmine\n_______________________________\nold text\n",
     "old text", NULL, NULL},
    {"attribution in capitals", "Subject: Re: x\n\nmine\nOn Tue, A B WROTE: \r\n> quoted\n", "mine",
     "WROTE", "quoted"},
    {"a colon is not an attribution", "Subject: Re: x\n\nmine\nHe wrote it:\n> quoted\n",
     "He wrote it:", NULL, "quoted"},
    {"signature without trailing space", "Subject: x\n\nmy text\n--\nJohn Doe | ACME Corp\n",
     "my text", "ACME", NULL},
    {"KASAN shadow row is not a quote",
     "Subject: x\n\nMemory state:\n>ffff888012345600: fa fb fb fb\n", ">ffff888012345600", NULL,
     NULL},
    {"diff context line with '>' is not a quote",
     "Subject: [PATCH] x\n\nlog\n---\ndiff --git a/x.c b/x.c\n--- a/x.c\n+++ b/x.c\n"
     "@@ -1,2 +1,2 @@\n   > 0)\n-a\n+b\n",
     "   > 0)", NULL, NULL},
};

static void
test_body_split(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(split_cases) / sizeof(split_cases[0]); i++) {
        const struct split_case *c = &split_cases[i];
        struct message *m = testutil_message(c->raw, strlen(c->raw));

        print_message("case %s\n", c->name);
        assert_non_null(strstr(m->regions[REGION_BODY].text, c->in_body));
        if (c->not_in_body)
            assert_null(strstr(m->regions[REGION_BODY].text, c->not_in_body));
        if (c->in_quoted)
            assert_non_null(strstr(m->regions[REGION_QUOTED].text, c->in_quoted));
        message_free(m);
    }
}

static void
test_attachments(void **state)
{
    struct message *m = testutil_message_fixture("mime-attachments.eml");

    (void)state;
    assert_int_equal(m->kind, CLASSIFIER_KIND_PATCH);
    assert_int_equal(m->attachments, 1);
    assert_int_equal(m->binary_attachments, 1);
    assert_false(m->html_only);
    message_free(m);

    m = testutil_message_fixture("mime-html-only.eml");
    assert_true(m->html_only);
    assert_int_equal(m->attachments, 0);
    assert_null(strstr(m->regions[REGION_BODY].text, "<p>"));
    message_free(m);
}

/* An attached git format-patch file carries its own log; its mail header
 * block is not part of it, and the covering mail's text is not either. */
static void
test_format_patch_attachment(void **state)
{
    static const char raw[] =
        "From: a@example.org\nSubject: fix for the leak\nMIME-Version: 1.0\n"
        "Content-Type: multipart/mixed; boundary=\"b\"\n\n"
        "--b\nContent-Type: text/plain\n\nCover words here.\n\n"
        "--b\nContent-Type: application/octet-stream; name=\"0001-fix.patch\"\n"
        "Content-Disposition: attachment; filename=\"0001-fix.patch\"\n\n"
        "From 0123456789abcdef0123456789abcdef01234567 Mon Sep 17 00:00:00 2001\n"
        "From: A <a@example.org>\nSubject: [PATCH] mm: fix leak in foo_alloc()\n\n"
        "foo_alloc() leaks the page on the error path.\n\n"
        "Signed-off-by: A <a@example.org>\n---\n"
        "diff --git a/mm/foo.c b/mm/foo.c\n--- a/mm/foo.c\n+++ b/mm/foo.c\n"
        "@@ -1,2 +1,3 @@\n a\n+b\n c\n"
        "--b--\n";
    struct message *m = testutil_message(raw, sizeof(raw) - 1);
    const char *cl = m->regions[REGION_CHANGELOG].text;

    (void)state;
    assert_int_equal(m->kind, CLASSIFIER_KIND_PATCH);
    /* A .patch file is a patch, not a binary attachment. */
    assert_int_equal(m->attachments, 0);
    assert_int_equal(m->binary_attachments, 0);
    assert_non_null(strstr(cl, "leaks the page on the error path"));
    assert_null(strstr(cl, "Subject:"));
    assert_null(strstr(cl, "Cover words"));
    assert_true(strv_contains(&m->functions, "foo_alloc"));
    message_free(m);
}

static void
test_report_facts_and_regions(void **state)
{
    struct message *m = testutil_message_fixture("msg-report-kasan.eml");

    (void)state;
    assert_true(strv_contains(&m->versions, "6.9"));
    assert_true(strv_contains(&m->functions, "ext4_xattr_set_entry"));
    assert_true(strv_contains(&m->paths, "fs/ext4/xattr.c"));
    assert_true(strv_contains(&m->configs, "CONFIG_KASAN"));
    assert_non_null(strstr(m->regions[REGION_CODE].text, "Call Trace:"));
    assert_null(strstr(m->regions[REGION_REPORT].text, "Call Trace:"));
    assert_non_null(strstr(m->regions[REGION_REPORT].text, "available on request"));
    message_free(m);

    /* For a patch, report facts come from the changelog. */
    m = testutil_message_fixture("msg-patch-inline.eml");
    assert_true(strv_contains(&m->functions, "hub_disconnect"));
    assert_true(strv_contains(&m->versions, "commit 0a1b2c3d4e5f"));
    assert_non_null(strstr(m->regions[REGION_REPORT].text, "Drop the kfree()"));
    assert_null(strstr(m->regions[REGION_REPORT].text, "diff --git"));
    assert_false(m->disclosure);
    message_free(m);
}

static const struct disclosure_case {
    const char *body;
    bool disclosed;
} disclosure_cases[] = {
    {"Fix it.\n\nAssisted-by: Claude:claude-3-opus\nSigned-off-by: A <a@b.c>\n", true},
    {"Fix it.\nGenerated-by: some-tool 1.0\n", true},
    {"Fix it.\nai-assisted-by: x\n", true},
    {"Fix it.\nCo-Authored-By: Claude <noreply@anthropic.com>\n", true},
    {"Summary.\n\nGenerated with [Claude Code](https://claude.ai/code)\n", true},
    {"This report was generated using ChatGPT and reviewed by me.\n", true},
    {"The analysis was generated by an LLM.\n", true},
    {"To be honest I used AI to find this.\n", true},
    {"Co-developed-by: Claude claude-4-sonnet\nSigned-off-by: A <a@b.c>\n", true},
    {"Co-authored-by: Jane Doe <jane@example.org>\n", false},
    {"Co-developed-by: Ai Tanaka <ai@example.jp>\n", false},
    {"The table is generated by a script; I used airflow for the jobs.\n", false},
    {"> Assisted-by: quoted from someone else\n\nok\n", false},
    /* Any case: "ed" is looked for as "ed", "eD", "Ed" and "ED". */
    {"GENERATED BY CHATGPT.\n", true},
    {"ASSISTED-BY: x\n", true},
    {"I USED AI here.\n", true},
    {"CO-DEVELOPED-BY: ChatGPT\n", true},
    {"Co-AuthoreD-by: Gemini\n", true},
    {"generated with claude", true},
    /* The "ed" across the first sixteen bytes' end, then past them. */
    {"It says generated by ChatGPT.\n", true},
    {"Plain text for sixteen bytes and more; Generated with ChatGPT", true},
    {"d\nGenerated-by: x", true},
    {"The table is generated by a script, the text generated by ChatGPT.\n", true},
    {"Generated by a script.\nIt was generated by ChatGPT.\n", true},
    {"Generated by a script.\nNothing else used.\n", false},
    {"xgenerated by ChatGPT\n", false},
    {"ed d D edd ED\nused\n", false},
    {"Reviewed-by: A <a@b.c>\nUsed AI: no\n", false},
};

static void
test_disclosure(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(disclosure_cases) / sizeof(disclosure_cases[0]); i++) {
        char raw[1024];
        struct message *m;
        int n = snprintf(raw, sizeof(raw), "From: a@example.org\nSubject: s\n\n%s",
                         disclosure_cases[i].body);

        print_message("case %zu\n", i);
        m = testutil_message(raw, (size_t)n);
        assert_int_equal(m->disclosure, disclosure_cases[i].disclosed);
        message_free(m);
    }
}

/* A disclosing and a plain line behind every cut of a text full of d's
 * and e's, so that a candidate falls at every offset from the start. */
static void
test_disclosure_offsets(void **state)
{
    static const char pad[] = "ed. Ed;d-E D\nde dD\tee,d";
    static const struct {
        const char *line;
        bool disclosed;
    } lines[] = {
        {" I used AI.\n", true},
        {"\nAssisted-by: x\n", true},
        {" generated by hand\n", false},
        {" co-authored-by: Ann\n", false},
    };

    (void)state;
    for (size_t l = 0; l < sizeof(lines) / sizeof(lines[0]); l++) {
        for (size_t cut = 0; cut < sizeof(pad); cut++) {
            char raw[256];
            struct message *m;
            int n = snprintf(raw, sizeof(raw), "From: a@example.org\nSubject: s\n\n%.*s%s",
                             (int)cut, pad, lines[l].line);

            print_message("line %zu cut %zu\n", l, cut);
            m = testutil_message(raw, (size_t)n);
            assert_int_equal(m->disclosure, lines[l].disclosed);
            message_free(m);
        }
    }
}

static void
test_line_caps(void **state)
{
    struct classifier_options opts;
    struct mime_view *v = NULL;
    struct message *m = NULL;
    char *raw = malloc(200000);
    size_t n = 0;

    (void)state;
    assert_non_null(raw);
    n += (size_t)sprintf(raw, "Subject: caps\nContent-Type: text/plain; charset=utf-8\n\n");
    for (int i = 0; i < 50; i++)
        n += (size_t)sprintf(raw + n, "line %d\n", i);
    /* A long line of two-byte characters: the cut must not split one. */
    for (int i = 0; i < 3000; i++) {
        memcpy(raw + n, "\xc3\xa9", 2);
        n += 2;
    }
    raw[n++] = '\n';

    classifier_options_default(&opts);
    opts.limits.max_lines = 20;
    opts.limits.max_line_bytes = 101;
    assert_int_equal(mime_view_parse(raw, n, &opts.limits, &v), 0);
    assert_int_equal(message_build(v, &opts.limits, &m), 0);
    assert_true(m->truncated);
    assert_non_null(strstr(m->regions[REGION_BODY].text, "line 19\n"));
    assert_null(strstr(m->regions[REGION_BODY].text, "line 20\n"));
    message_free(m);
    m = NULL;

    opts.limits.max_lines = 1000;
    assert_int_equal(message_build(v, &opts.limits, &m), 0);
    {
        const char *last = strstr(m->regions[REGION_BODY].text, "line 49\n") + 8;
        size_t len = strcspn(last, "\n");

        assert_true(len <= 101);
        assert_int_equal(len % 2, 0);
    }
    message_free(m);
    mime_view_free(v);
    free(raw);
    assert_null(message_free(NULL));
}

static void
assert_same_strv(const struct strv *a, const struct strv *b)
{
    assert_int_equal(a->n, b->n);
    for (size_t i = 0; i < a->n; i++)
        assert_string_equal(a->v[i], b->v[i]);
}

/* Bodies whose own text message_build() indexes as it writes it: lines
 * dropped (a wrapped attribution), quoted, signed, "\r\n", cut. */
static const char *const own_lines_raws[] = {
    "Subject: Re: x\n\nOn Tue, 5 May 2026 at 10:00, Some Person\n<some@example.org> wrote:\n"
    "> quoted\n\nmine, see drivers/usb/core/hub.c and hub_event()\n",
    "Subject: Re: x\n\nfirst\nOn Tue, 5 May 2026, A B wrote:\n> q\nOn Wed, C wrote:\n> r\n"
    "last on 6.9.0-rc2\n-- \nsig\n",
    "Subject: bug\r\n\r\nKASAN: use-after-free in foo_bar+0x1/0x2\r\nCall Trace:\r\n"
    " foo_bar+0x1/0x2\r\n\r\nCONFIG_FOO=y on v6.9\r\n",
    "Subject: [PATCH] x: fix y\n\nlog line\n> not a quote?\nSigned-off-by: A <a@b.c>\n---\n"
    " x.c | 2 +-\n\ndiff --git a/x.c b/x.c\n--- a/x.c\n+++ b/x.c\n@@ -1,2 +1,2 @@\n"
    " ctx\r\n-a\n+b /* new */\n-- \nsig\n",
    "Subject: x\n\n" /* a line longer than the cap, of two-byte characters */
    "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\nshort\n",
};

/* The own text's lines message_build() hands to patch_parse_lines() and
 * report_parse_lines() give what both parsers find on their own in that
 * text (REGION_BODY), under tight and default caps. */
static void
test_own_lines_reused(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(own_lines_raws) / sizeof(own_lines_raws[0]); i++) {
        for (int tight = 0; tight < 2; tight++) {
            const char *raw = own_lines_raws[i];
            struct classifier_options opts;
            struct mime_view *v = NULL;
            struct message *m = NULL, *ref = calloc(1, sizeof(*ref));
            const struct region *body;

            print_message("case %zu tight %d\n", i, tight);
            assert_non_null(ref);
            classifier_options_default(&opts);
            if (tight) {
                opts.limits.max_line_bytes = 7;
                opts.limits.max_lines = 6;
            }
            assert_int_equal(mime_view_parse(raw, strlen(raw), &opts.limits, &v), 0);
            assert_int_equal(message_build(v, &opts.limits, &m), 0);
            body = &m->regions[REGION_BODY];
            if (m->kind == CLASSIFIER_KIND_PATCH) {
                ref->subject = m->subject ? strdup(m->subject) : NULL;
                assert_int_equal(patch_subject_parse(ref), 0);
                assert_int_equal(patch_parse(ref, body->text, body->len, &opts.limits), 0);
                for (unsigned k = REGION_CHANGELOG; k < REGION__COUNT; k++)
                    if (k != REGION_REPORT && k != REGION_CODE)
                        assert_string_equal(m->regions[k].text, ref->regions[k].text);
                assert_int_equal(m->n_hunks, ref->n_hunks);
                assert_int_equal(m->n_trailers, ref->n_trailers);
            } else {
                assert_int_equal(report_parse(ref, body->text, body->len, &opts.limits), 0);
                assert_string_equal(m->regions[REGION_REPORT].text,
                                    ref->regions[REGION_REPORT].text);
                assert_string_equal(m->regions[REGION_CODE].text, ref->regions[REGION_CODE].text);
                assert_same_strv(&m->versions, &ref->versions);
                assert_same_strv(&m->functions, &ref->functions);
                assert_same_strv(&m->paths, &ref->paths);
                assert_same_strv(&m->configs, &ref->configs);
            }
            message_free(ref);
            message_free(m);
            mime_view_free(v);
        }
    }
}

/* Message identifiers carry no encoded words: an encoded one stays as
 * written, so a line break or a second id cannot be smuggled through it
 * into the In-Reply-To of our reply. */
static void
test_msgid_not_decoded(void **state)
{
    static const char raw[] =
        "From: a@b.example\n"
        "Subject: =?utf-8?q?caf=C3=A9?=\n"
        "Message-ID: =?utf-8?b?PGFAZXhhbXBsZS50ZXN0Pg0KQmNjOiB2QGV2aWwuZXhhbXBsZQ==?=\n"
        "In-Reply-To: <x@y.example>\n"
        "\n"
        "body\n";
    struct message *m;

    (void)state;
    m = testutil_message(raw, sizeof(raw) - 1);
    assert_string_equal(m->subject, "caf\xc3\xa9");
    assert_non_null(m->message_id);
    assert_null(strchr(m->message_id, '\n'));
    assert_null(strstr(m->message_id, "Bcc"));
    assert_string_equal(m->in_reply_to, "x@y.example");
    message_free(m);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kinds),
        cmocka_unit_test(test_raw_kinds),
        cmocka_unit_test(test_routed_kinds),
        cmocka_unit_test(test_header_fields),
        cmocka_unit_test(test_bare_address_ends),
        cmocka_unit_test(test_msgid_not_decoded),
        cmocka_unit_test(test_reply_split),
        cmocka_unit_test(test_body_split),
        cmocka_unit_test(test_attachments),
        cmocka_unit_test(test_format_patch_attachment),
        cmocka_unit_test(test_report_facts_and_regions),
        cmocka_unit_test(test_disclosure),
        cmocka_unit_test(test_disclosure_offsets),
        cmocka_unit_test(test_line_caps),
        cmocka_unit_test(test_own_lines_reused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
