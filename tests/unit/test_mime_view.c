/* test_mime_view.c - decoding headers and parts into the flat MIME view. */
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
#include "mime_view.h"
#include "testutil.h"

static struct classifier_limits limits;

static bool
utf8_ok(const char *s, size_t n)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t i = 0;

    while (i < n) {
        size_t k;

        if (u[i] == 0)
            return false;
        if (u[i] < 0x80)
            k = 1;
        else if (u[i] >= 0xc2 && u[i] <= 0xdf)
            k = 2;
        else if (u[i] >= 0xe0 && u[i] <= 0xef)
            k = 3;
        else if (u[i] >= 0xf0 && u[i] <= 0xf4)
            k = 4;
        else
            return false;
        if (i + k > n)
            return false;
        for (size_t j = 1; j < k; j++)
            if ((u[i + j] & 0xc0) != 0x80)
                return false;
        i += k;
    }
    return true;
}

/* Every string of a view is NUL-terminated valid UTF-8. */
static void
assert_view_sane(const struct mime_view *v)
{
    for (size_t i = 0; i < v->n_headers; i++) {
        assert_true(utf8_ok(v->headers[i].name, strlen(v->headers[i].name)));
        assert_true(utf8_ok(v->headers[i].value, strlen(v->headers[i].value)));
    }
    for (size_t i = 0; i < v->n_parts; i++) {
        const struct mime_part *p = &v->parts[i];

        assert_non_null(p->content_type);
        if (p->text != NULL) {
            assert_int_equal(strlen(p->text), p->len);
            assert_true(utf8_ok(p->text, p->len));
        }
    }
}

static struct mime_view *
parse(const char *raw, size_t len)
{
    struct mime_view *v = NULL;

    assert_int_equal(mime_view_parse(raw, len, &limits, &v), 0);
    assert_non_null(v);
    assert_view_sane(v);
    return v;
}

static struct mime_view *
parse_fixture(const char *name)
{
    size_t len;
    char *raw = testutil_read_fixture(name, &len);
    struct mime_view *v = parse(raw, len);

    free(raw);
    return v;
}

/* Roles as letters in document order: B body, P patch, A attachment. */
static void
roles(const struct mime_view *v, char *out, size_t outsz)
{
    size_t k = 0;

    for (size_t i = 0; i < v->n_parts && k + 1 < outsz; i++)
        out[k++] = "BPA"[v->parts[i].role];
    out[k] = '\0';
}

static const struct fixture_case {
    const char *fixture;
    const char *header;   /* a header to check, or NULL */
    const char *value;    /* its decoded value */
    const char *roles;    /* part roles */
    const char *body;     /* substring of the first part's text */
    const char *not_body; /* must not be in any part's text, or NULL */
    bool html_only;
} fixture_cases[] = {
    /* RFC 2047: B and Q words, folded across lines, joined without the gap. */
    {"mime-rfc2047.eml", "Subject",
     "Re: usb: core: hub: fix double free in hub_disconnect() \xe2\x80\x94 v2", "B",
     "thanks, I will send a v2", NULL, false},
    {"mime-rfc2047.eml", "from", "J\xc3\xb6rg M\xc3\xbcller <Joerg.Mueller@Example.ORG>", "B",
     "J\xc3\xb6rg", NULL, false},
    {"mime-qp.eml", NULL, NULL, "B",
     "seventy-six characters so that it wraps.\nGr\xc3\xb6\xc3\x9f"
     "e",
     "=\n", false},
    {"mime-base64.eml", NULL, NULL, "B", "intel_display_power_get() is called", NULL, false},
    {"mime-latin1.eml", NULL, NULL, "B", "apr\xc3\xa8s une reprise", NULL, false},
    {"mime-latin1.eml", "From", "Fran\xc3\xa7ois Lef\xc3\xa8vre <francois@example.fr>", "B",
     "Fran\xc3\xa7ois", NULL, false},
    /* Unknown charset, bytes that are valid UTF-8: kept as they are. */
    {"mime-unknown-charset.eml", NULL, NULL, "B", "na\xc3\xafve question", NULL, false},
    /* Unknown charset, invalid UTF-8: read as Latin-1; NUL replaced. */
    {"mime-bad-bytes.eml", NULL, NULL, "B", "caf\xc3\xa9 and", NULL, false},
    {"mime-alternative.eml", NULL, NULL, "B", "Plain version", "HTML version", false},
    {"mime-html-only.eml", NULL, NULL, "B", "The function foo() has a bug & it <crashes>.",
     "color: red", true},
    {"mime-attachments.eml", "Content-Type", "multipart/mixed; boundary=\"mixed-b\"", "BPA",
     "freed in hub_disconnect()", NULL, false},
    {"mime-rfc822.eml", NULL, NULL, "BB", "Forwarding the original", "Inner html", false},
};

static void
test_fixtures(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(fixture_cases) / sizeof(fixture_cases[0]); i++) {
        const struct fixture_case *c = &fixture_cases[i];
        struct mime_view *v = parse_fixture(c->fixture);
        char r[32];

        print_message("case %zu: %s\n", i, c->fixture);
        assert_false(v->malformed);
        if (c->header != NULL) {
            assert_non_null(mime_view_header(v, c->header));
            assert_string_equal(mime_view_header(v, c->header), c->value);
        }
        roles(v, r, sizeof(r));
        assert_string_equal(r, c->roles);
        assert_non_null(v->parts[0].text);
        assert_non_null(strstr(v->parts[0].text, c->body));
        if (c->not_body != NULL)
            for (size_t k = 0; k < v->n_parts; k++)
                assert_null(v->parts[k].text ? strstr(v->parts[k].text, c->not_body) : NULL);
        assert_int_equal(v->has_html_only, c->html_only);
        mime_view_free(v);
    }
}

static void
test_attachment_details(void **state)
{
    struct mime_view *v = parse_fixture("mime-attachments.eml");

    (void)state;
    assert_int_equal(v->n_parts, 3);
    assert_string_equal(v->parts[1].content_type, "text/x-patch");
    assert_string_equal(v->parts[1].filename, "0001-usb-hub-drop-kfree.patch");
    assert_non_null(strstr(v->parts[1].text, "-\tkfree(hub->ports);"));
    assert_string_equal(v->parts[2].content_type, "application/octet-stream");
    assert_null(v->parts[2].text);
    assert_int_equal(v->parts[2].len, 1024); /* decoded bytes, not base64 text */
    mime_view_free(v);

    /* The inner message of a message/rfc822 part is walked too. */
    v = parse_fixture("mime-rfc822.eml");
    assert_non_null(strstr(v->parts[1].text, "ext4_writepages()"));
    assert_string_equal(mime_view_header(v, "Subject"), "Fwd: crash report from our customer");
    mime_view_free(v);
}

static const struct string_case {
    const char *name;
    const char *raw;
    const char *header, *value;
    const char *body;
} string_cases[] = {
    {"adjacent Q words join", "Subject: =?ISO-8859-1?Q?Andr=E9?= =?ISO-8859-1?Q?_Pirard?=\n\nx\n",
     "Subject", "Andr\xc3\xa9 Pirard", "x"},
    {"B word between plain words",
     "Subject: [PATCH] =?UTF-8?B?w6l0w6k=?= fix\nFrom: a@b.c\n\nbody\n", "subject",
     "[PATCH] \xc3\xa9t\xc3\xa9 fix", "body"},
    {"folded header unfolded", "Subject: one\n two\n\tthree\n\nbody\n", "Subject", "one two three",
     "body"},
    {"mbox From line skipped",
     "From 1234abcd Mon Sep 17 00:00:00 2001\nFrom: a@example.org\nSubject: s\n\nhello\n", "From",
     "a@example.org", "hello"},
    {"CRLF line ends", "Subject: crlf\r\n\r\nline one\r\nline two\r\n", "Subject", "crlf",
     "line one\nline two\n"},
    {"blank and space-only lines before the headers",
     "\n   \n\t \r\nSubject: late start\nFrom: a@b.c\n\nbody\n", "Subject", "late start", "body"},
    {"entities and numeric references",
     "Subject: h\nContent-Type: text/html\n\n<p>a&lt;b&gt;c &#233;&#x41;</p>\n", "Subject", "h",
     "a<b>c \xc3\xa9"
     "A"},
};

static void
test_strings(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(string_cases) / sizeof(string_cases[0]); i++) {
        const struct string_case *c = &string_cases[i];
        struct mime_view *v = parse(c->raw, strlen(c->raw));

        print_message("case %s\n", c->name);
        assert_string_equal(mime_view_header(v, c->header), c->value);
        assert_true(v->n_parts >= 1);
        assert_non_null(strstr(v->parts[0].text, c->body));
        mime_view_free(v);
    }
}

/* Where the parse starts: what mime_view_header_start() skips. */
static const struct {
    const char *raw;
    size_t start;
} start_cases[] = {
    {"Subject: x\n\nbody\n", 0},
    {"From a@b.c Mon Jan  1 00:00:00 2024\nSubject: x\n", 36},
    {"\n\nSubject: x\n", 2},
    {" \t\r\n\r\nSubject: x\n", 6},
    {"From x\n\nSubject: y\n", 8},
    {"   Subject: folded, not blank\n", 0},
    {"\n \n", 3},
    {"From no newline", 15},
    {"", 0},
};

static void
test_header_start(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(start_cases) / sizeof(start_cases[0]); i++) {
        print_message("case %zu\n", i);
        assert_int_equal(mime_view_header_start(start_cases[i].raw, strlen(start_cases[i].raw)),
                         start_cases[i].start);
    }
    assert_int_equal(mime_view_header_start(NULL, 10), 0);
}

static void
test_limits(void **state)
{
    struct classifier_limits saved = limits;
    struct mime_view *v;
    char *raw;
    size_t len;

    (void)state;
    /* Header cap. */
    limits.max_headers = 3;
    v = parse_fixture("msg-patch-inline.eml");
    assert_int_equal(v->n_headers, 3);
    assert_true(v->truncated);
    mime_view_free(v);
    limits = saved;

    /* Part cap: the text is cut on a character boundary. */
    limits.max_part_bytes = 25;
    raw = testutil_read_fixture("mime-latin1.eml", &len);
    v = parse(raw, len);
    assert_true(v->parts[0].truncated);
    assert_true(v->truncated);
    assert_true(v->parts[0].len <= 25);
    mime_view_free(v);
    free(raw);
    limits = saved;

    /* Parts walked cap. */
    limits.max_mime_parts = 2;
    v = parse_fixture("mime-attachments.eml");
    assert_int_equal(v->n_parts, 1);
    assert_true(v->truncated);
    mime_view_free(v);
    limits = saved;

    /* Message byte cap: the tail is not parsed. */
    limits.max_message_bytes = 300;
    v = parse_fixture("msg-report-kasan.eml");
    assert_true(v->truncated);
    assert_null(strstr(v->parts[0].text, "Nora"));
    mime_view_free(v);
    limits = saved;
}

static void
test_header_lookup(void **state)
{
    struct mime_view *v = parse_fixture("msg-reply.eml");

    (void)state;
    assert_non_null(mime_view_header(v, "IN-REPLY-TO"));
    assert_null(mime_view_header(v, "X-Not-There"));
    assert_null(mime_view_header(NULL, "Subject"));
    mime_view_free(v);
    assert_null(mime_view_free(NULL));
}

static int
setup(void **state)
{
    struct classifier_options opts;

    (void)state;
    classifier_options_default(&opts);
    limits = opts.limits;
    mime_view_global_init();
    mime_view_global_init(); /* idempotent */
    return 0;
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fixtures),      cmocka_unit_test(test_attachment_details),
        cmocka_unit_test(test_strings),       cmocka_unit_test(test_limits),
        cmocka_unit_test(test_header_lookup), cmocka_unit_test(test_header_start),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
