/* test_mime_view.c - decoding headers and parts into the flat MIME view. */
#include <errno.h>
#include <iconv.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <cmocka.h>

#include "classifier.h"
#include "mime_ctype.h"
#include "mime_view.h"
#include "testutil.h"
#include "utf8.h"

static struct classifier_limits limits;

/* Well-formed UTF-8 (the kit's check) without a NUL. */
static bool
utf8_ok(const char *s, size_t n)
{
    return memchr(s, '\0', n) == NULL && utf8_valid_prefix(s, n) == n;
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

/* The one part of a message made of headers and body, both given. */
static struct mime_view *
parse_part(const char *headers, const char *body, size_t body_len)
{
    size_t hl = strlen(headers);
    char *raw = malloc(hl + body_len);
    struct mime_view *v;

    assert_non_null(raw);
    memcpy(raw, headers, hl);
    memcpy(raw + hl, body, body_len);
    v = parse(raw, hl + body_len);
    free(raw);
    assert_int_equal(v->n_parts, 1);
    return v;
}

/*
 * What convert_text()'s iconv path makes of body in charset cs: glibc's
 * iconv with no final flush, a bad byte skipped as U+FFFD, and the bytes
 * as they are when iconv does not know cs. The bodies here hold no CR or
 * NUL, so the UTF-8 repair after it changes nothing.
 */
static char *
iconv_reference(const char *cs, const char *body, size_t n)
{
    iconv_t cd = iconv_open("UTF-8", cs);
    size_t cap = 4 * n + 16, olen;
    char *out = calloc(1, cap), *in = (char *)(uintptr_t)body, *o = out;
    size_t inleft = n, oleft = cap - 1;

    assert_non_null(out);
    if (cd == (iconv_t)-1) {
        memcpy(out, body, n);
        return out;
    }
    while (inleft > 0) {
        if (iconv(cd, &in, &inleft, &o, &oleft) != (size_t)-1)
            break;
        assert_true(errno == EILSEQ || errno == EINVAL);
        assert_true(oleft >= 3);
        memcpy(o, "\xef\xbf\xbd", 3);
        o += 3;
        oleft -= 3;
        in++;
        inleft--;
    }
    iconv_close(cd);
    olen = (size_t)(o - out);
    out[olen] = '\0';
    return out;
}

/* ASCII text in a charset that keeps ASCII skips iconv; the result must
 * be what iconv gives, in those charsets and in ones that do not keep it
 * (windows-1258 holds back a final letter, Shift_JIS maps the backslash,
 * UTF-16 pairs bytes), so a wrong entry in the list fails here. */
static void
test_ascii_charsets(void **state)
{
    static const char *const charsets[] = {
        "iso-8859-1",   "ISO-8859-2",   "iso-8859-15",  "iso-8859-16",  "iso8859-1", "iso_8859-5",
        "windows-1250", "Windows-1252", "windows-1257", "cp1251",       "CP1256",    "koi8-r",
        "koi8-u",       "gb2312",       "gbk",          "gb18030",      "big5",      "euc-jp",
        "euc-kr",       "euc-cn",       "euc-tw",       "windows-1258", "cp1258",    "shift_jis",
        "utf-16",       "utf-7",        "iso-2022-jp",  "ibm037",       "viscii",    "iso-8859-8-i",
        "x-unknown",
    };
    static const char *const bodies[] = {
        "abc",
        "Hello, world\n\tpath\\to\\file ~user {x} [y] |z| `q` 'a' \"b\" a+b=c-d*e/f%g^h#i@j!k?l",
        "",
        "Z",
    };
    char headers[128];

    (void)state;
    for (size_t c = 0; c < sizeof(charsets) / sizeof(charsets[0]); c++) {
        for (size_t b = 0; b < sizeof(bodies) / sizeof(bodies[0]); b++) {
            const char *body = bodies[b];
            char *want = iconv_reference(charsets[c], body, strlen(body));
            struct mime_view *v;

            print_message("charset %s, body %zu\n", charsets[c], b);
            snprintf(headers, sizeof(headers),
                     "Subject: s\nContent-Type: text/plain; charset=\"%s\"\n\n", charsets[c]);
            v = parse_part(headers, body, strlen(body));
            assert_string_equal(v->parts[0].text, want);
            mime_view_free(v);
            free(want);
        }
    }
}

/* One 8-bit byte at every position of a Latin-1 text, and none: the
 * ASCII check must send each text with one to iconv. */
static void
test_latin1_boundary(void **state)
{
    static const char *const charsets[] = {"iso-8859-1", "windows-1252"};
    const size_t n = 21;
    char body[32], want[40], headers[128];

    (void)state;
    for (size_t c = 0; c < sizeof(charsets) / sizeof(charsets[0]); c++) {
        snprintf(headers, sizeof(headers), "Content-Type: text/plain; charset=%s\n\n", charsets[c]);
        for (size_t pos = 0; pos <= n; pos++) {
            struct mime_view *v;
            size_t k = 0;

            for (size_t i = 0; i < n; i++) {
                body[i] = i == pos ? '\xe9' : (char)('a' + i);
                if (i == pos) {
                    want[k++] = '\xc3';
                    want[k++] = '\xa9';
                } else {
                    want[k++] = body[i];
                }
            }
            want[k] = '\0';
            print_message("%s, 8-bit byte at %zu\n", charsets[c], pos);
            v = parse_part(headers, body, n);
            assert_string_equal(v->parts[0].text, want);
            mime_view_free(v);
        }
    }
}

/* CR, LF and NUL in ASCII text come out the same from a charset that
 * keeps ASCII (no iconv) as from UTF-8. */
static void
test_ascii_controls(void **state)
{
    static const char body[] = "a\r\nb\0c\rd\r\n\r\n\0";
    struct mime_view *a, *b;

    (void)state;
    a = parse_part("Content-Type: text/plain; charset=utf-8\n\n", body, sizeof(body) - 1);
    b = parse_part("Content-Type: text/plain; charset=iso-8859-1\n\n", body, sizeof(body) - 1);
    assert_int_equal(a->parts[0].len, b->parts[0].len);
    assert_memory_equal(a->parts[0].text, b->parts[0].text, a->parts[0].len);
    assert_string_equal(b->parts[0].text, "a\nb\xef\xbf\xbd"
                                          "c\rd\n\n\xef\xbf\xbd");
    mime_view_free(a);
    mime_view_free(b);
}

static const char content_plain[] = "line one\r\nl\xc3\xa9ne two\n\n  indented\ttab\n"
                                    "last line without end";
/* content_plain in base64, which always goes through GMime's decoder. */
static const char content_b64[] = "bGluZSBvbmUNCmzDqW5lIHR3bwoKICBpbmRlbnRlZAl0YWIKbGFzdCBsaW5l"
                                  "IHdpdGhvdXQgZW5k\n";

/* Content read in place (identity encodings) equals content decoded by
 * GMime (base64), alone, in a multipart and in a message/rfc822. */
static void
test_content_in_place(void **state)
{
    static const char *const encodings[] = {"", "7bit", "8bit", "binary", "7-bit", "x-what"};
    /* Each form: text before the part's Content-Type, and after its content. */
    static const char *const forms[][2] = {
        {"Subject: s\n", ""},
        /* the line end before a boundary belongs to it */
        {"Subject: s\nContent-Type: multipart/mixed; boundary=\"bb\"\n\n--bb\n", "\n--bb--\n"},
        {"Subject: s\nContent-Type: multipart/mixed; boundary=\"bb\"\n\n--bb\n"
         "Content-Type: message/rfc822\n\nSubject: inner\n",
         "\n--bb--\n"},
    };
    static const char *const types[] = {"text/plain", "text/html", "application/octet-stream"};
    char raw[1024], cte[64];

    (void)state;
    for (size_t f = 0; f < sizeof(forms) / sizeof(forms[0]); f++) {
        for (size_t t = 0; t < sizeof(types) / sizeof(types[0]); t++) {
            struct mime_view *ref, *v;

            snprintf(raw, sizeof(raw), "%sContent-Type: %s; charset=utf-8\n%s\n%s%s", forms[f][0],
                     types[t], "Content-Transfer-Encoding: base64\n", content_b64, forms[f][1]);
            ref = parse(raw, strlen(raw));
            assert_int_equal(ref->n_parts, 1);
            for (size_t e = 0; e < sizeof(encodings) / sizeof(encodings[0]); e++) {
                print_message("form %zu, %s, encoding '%s'\n", f, types[t], encodings[e]);
                cte[0] = '\0';
                if (encodings[e][0] != '\0')
                    snprintf(cte, sizeof(cte), "Content-Transfer-Encoding: %s\n", encodings[e]);
                snprintf(raw, sizeof(raw), "%sContent-Type: %s; charset=utf-8\n%s\n%s%s",
                         forms[f][0], types[t], cte, content_plain, forms[f][1]);
                v = parse(raw, strlen(raw));
                assert_int_equal(v->n_parts, 1);
                assert_int_equal(v->parts[0].len, ref->parts[0].len);
                if (ref->parts[0].text == NULL)
                    assert_null(v->parts[0].text);
                else
                    assert_string_equal(v->parts[0].text, ref->parts[0].text);
                mime_view_free(v);
            }
            mime_view_free(ref);
        }
    }
}

/* Empty content in place, alone and in a multipart. */
static void
test_content_empty(void **state)
{
    static const char *const raws[] = {
        "Subject: s\nContent-Type: text/plain\n\n",
        "Subject: s\nContent-Type: text/plain\nContent-Transfer-Encoding: 8bit\n\n",
        "Subject: s\nContent-Type: multipart/mixed; boundary=bb\n\n--bb\n"
        "Content-Type: text/plain\n\n--bb\nContent-Type: application/zip\n\n--bb--\n",
    };

    (void)state;
    for (size_t i = 0; i < sizeof(raws) / sizeof(raws[0]); i++) {
        struct mime_view *v = parse(raws[i], strlen(raws[i]));

        print_message("case %zu\n", i);
        assert_true(v->n_parts >= 1);
        for (size_t k = 0; k < v->n_parts; k++)
            assert_int_equal(v->parts[k].len, 0);
        assert_string_equal(v->parts[0].text, "");
        mime_view_free(v);
    }
}

/* Header fields: the name and the unfolded value share one block. */
static const struct {
    const char *raw;
    const char *name, *value;
} header_cases[] = {
    {"Subject:   lead  and  trail   \n\nb\n", "Subject", "lead and trail"},
    {"Subject: folded\r\n\tonce\r\n  and\ttwice \r\n\r\nb\n", "Subject", "folded once and twice"},
    {"Subject:\n\nb\n", "Subject", ""},
    {"X-Ctl: a\x01"
     "b \x7f"
     "c\n\nb\n",
     "X-Ctl",
     "a\x01"
     "b \x7f"
     "c"},
    {"X-Eight: caf\xc3\xa9  au\n lait\n\nb\n", "X-Eight", "caf\xc3\xa9 au lait"},
    {"X-Latin1: caf\xe9\n\nb\n", "X-Latin1", "caf\xc3\xa9"},
    {"Subject: =?utf-8?q?a_b?=   c\n\nb\n", "Subject", "a b c"},
    {"Message-ID: <=?utf-8?q?x?=@y>\n\nb\n", "Message-ID", "<=?utf-8?q?x?=@y>"},
    {"X-Mixed-Case-Name: v\n\nb\n", "x-mixed-case-name", "v"},
};

static void
test_header_fields(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(header_cases) / sizeof(header_cases[0]); i++) {
        struct mime_view *v = parse(header_cases[i].raw, strlen(header_cases[i].raw));

        print_message("case %zu\n", i);
        assert_non_null(mime_view_header(v, header_cases[i].name));
        assert_string_equal(mime_view_header(v, header_cases[i].name), header_cases[i].value);
        assert_false(v->truncated);
        mime_view_free(v);
    }
}

/* Unfolding as the view defines it, a byte at a time. */
static void
unfold_reference(char *dst, const char *src)
{
    size_t j = 0;
    bool space = false;

    for (size_t i = 0; src[i] != '\0'; i++) {
        char c = src[i] == '\n' || src[i] == '\r' || src[i] == '\t' ? ' ' : src[i];

        if (c == ' ' && (space || j == 0))
            continue;
        space = c == ' ';
        dst[j++] = c;
    }
    while (j > 0 && dst[j - 1] == ' ')
        j--;
    dst[j] = '\0';
}

/* Folded values built at random from pieces that unfolding changes and
 * ones it keeps, so that every kind of piece falls at every offset of the
 * eight-byte steps. Message-ID is taken raw, so with 8-bit text it is
 * unfolded in place after the UTF-8 pass; Subject straight from GMime. */
static void
test_unfold_random(void **state)
{
    static const char *const pieces[] = {
        "a",   "bcdefghij", " ",      "  ",   "\t",
        "\n ", "\n\t",      "\r\n  ", "\x01", "x y",
        "z  ", "\xc3\xa9",  "<",      "@",    "long-token-without-spaces"};
    static const char *const names[] = {"Subject", "Message-ID"};
    char raw[1024], value[900], want[900];
    unsigned seed = 12345;

    (void)state;
    for (int round = 0; round < 3000; round++) {
        const char *name = names[round % 2];
        size_t k = 0;
        struct mime_view *v;
        int n;

        seed = seed * 1103515245u + 12345u;
        n = (int)((seed >> 16) % 40);
        /* A field value cannot start with a line end. */
        value[k++] = ' ';
        for (int p = 0; p < n; p++) {
            const char *piece;

            seed = seed * 1103515245u + 12345u;
            piece = pieces[(seed >> 16) % (sizeof(pieces) / sizeof(pieces[0]))];
            /* Only Message-ID gets 8-bit text: GMime would decode it. */
            if ((unsigned char)piece[0] >= 0x80 && round % 2 == 0)
                piece = "e";
            memcpy(value + k, piece, strlen(piece));
            k += strlen(piece);
        }
        value[k] = '\0';
        snprintf(raw, sizeof(raw), "%s:%s\n\nbody\n", name, value);
        unfold_reference(want, value);
        v = parse(raw, strlen(raw));
        print_message("round %d\n", round);
        assert_non_null(mime_view_header(v, name));
        assert_string_equal(mime_view_header(v, name), want);
        mime_view_free(v);
    }
}

/* A field's 8-bit byte is found as the value is unfolded, wherever it
 * falls among the eight-byte steps, and the field then goes to GMime's
 * decoding, which reads a Latin-1 byte as such; ASCII around it, folded
 * or not, comes out as it would without it. */
static void
test_header_8bit_offsets(void **state)
{
    static const char *const bytes[][2] = {{"\xe9", "\xc3\xa9"}, {"\xc3\xa9", "\xc3\xa9"}};
    static const char *const fills[] = {"abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGH",
                                        "ab cd\n ef ghij\tkl mnop qr\r\n stuvwx yz01 23456789AB"};
    char raw[256], want[256], plain[128];

    (void)state;
    for (size_t b = 0; b < 2; b++) {
        for (size_t f = 0; f < 2; f++) {
            size_t n = strlen(fills[f]);

            for (size_t at = 0; at <= n; at++) {
                struct mime_view *v;

                /* Not inside a line end, nor first on a line, which would end the field. */
                if (at > 0 && (fills[f][at - 1] == '\n' || fills[f][at - 1] == '\r'))
                    continue;
                snprintf(raw, sizeof(raw), "Subject: %.*s%s%s\n\nbody\n", (int)at, fills[f],
                         bytes[b][0], fills[f] + at);
                snprintf(plain, sizeof(plain), "%.*s@%s", (int)at, fills[f], fills[f] + at);
                unfold_reference(want, plain);
                /* The marker stands for the byte in the unfolded text. */
                {
                    char *m = strchr(want, '@');
                    char tail[128];

                    snprintf(tail, sizeof(tail), "%s", m + 1);
                    snprintf(m, sizeof(want) - (size_t)(m - want), "%s%s", bytes[b][1], tail);
                }
                print_message("byte %zu, fill %zu, at %zu\n", b, f, at);
                v = parse(raw, strlen(raw));
                assert_string_equal(mime_view_header(v, "Subject"), want);
                mime_view_free(v);
            }
        }
    }
}

/* The len of the one part of a multipart whose content is b64[0..n). */
static size_t
base64_part_len(const char *type, const char *b64, size_t n)
{
    static const char tail[] = "\n--bb--\n";
    char head[256];
    size_t hl = (size_t)snprintf(head, sizeof(head),
                                 "Subject: s\nContent-Type: multipart/mixed; boundary=bb\n\n--bb\n"
                                 "Content-Type: %s\nContent-Transfer-Encoding: base64\n\n",
                                 type);
    char *raw = malloc(hl + n + sizeof(tail));
    struct mime_view *v;
    size_t len;

    assert_non_null(raw);
    memcpy(raw, head, hl);
    memcpy(raw + hl, b64, n);
    memcpy(raw + hl + n, tail, sizeof(tail) - 1);
    v = parse(raw, hl + n + sizeof(tail) - 1);
    free(raw);
    assert_int_equal(v->n_parts, 1);
    len = v->parts[0].len;
    mime_view_free(v);
    return len;
}

/* An attachment's size, counted without decoding, equals the length of
 * the same content in a text part, which GMime decodes: the encoded data
 * is printable ASCII, which a text keeps as it is, and whatever the base64
 * around it, GMime decodes a prefix of it. */
static void
check_base64_size(const char *b64, size_t n)
{
    assert_int_equal(base64_part_len("application/octet-stream", b64, n),
                     base64_part_len("text/plain; charset=utf-8", b64, n));
}

/* Base64 of data[0..n), in lines of 76 characters ending in eol. */
static size_t
base64_encode(const char *data, size_t n, const char *eol, bool pad, char *out)
{
    static const char abc[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t k = 0, col = 0;

    for (size_t i = 0; i < n; i += 3) {
        unsigned v = (unsigned)(unsigned char)data[i] << 16;
        char q[4];

        if (i + 1 < n)
            v |= (unsigned)(unsigned char)data[i + 1] << 8;
        if (i + 2 < n)
            v |= (unsigned char)data[i + 2];
        q[0] = abc[v >> 18];
        q[1] = abc[(v >> 12) & 63];
        q[2] = i + 1 < n ? abc[(v >> 6) & 63] : '=';
        q[3] = i + 2 < n ? abc[v & 63] : '=';
        for (int j = 0; j < 4; j++) {
            if (q[j] == '=' && !pad)
                break;
            out[k++] = q[j];
            if (++col == 76) {
                memcpy(out + k, eol, strlen(eol));
                k += strlen(eol);
                col = 0;
            }
        }
    }
    return k;
}

static void
test_base64_sizes(void **state)
{
    static const size_t lens[] = {0, 1, 2, 3, 4, 5, 56, 57, 58, 3071, 3072, 3073, 4096, 12290};
    static const char *const eols[] = {"\n", "\r\n", " \n", "*\n", "\t\n", "\x80\xff\n", "-:.\n"};
    static const char skipped[] = {' ', '\t', '\r', '*', '-', '.', '\x80', '\xff', '\x01'};
    char *text = malloc(12290), *b64 = malloc(20000), *mut = malloc(20000);
    unsigned seed = 7;
    size_t n;

    (void)state;
    assert_non_null(text);
    assert_non_null(b64);
    assert_non_null(mut);
    for (size_t i = 0; i < 12290; i++) {
        seed = seed * 1103515245u + 12345u;
        text[i] = (char)(' ' + (seed >> 16) % 95);
    }
    /* Whole encodings, padded or not, with bytes to skip at line ends. */
    for (size_t l = 0; l < sizeof(lens) / sizeof(lens[0]); l++) {
        for (int pad = 0; pad < 2; pad++) {
            for (size_t e = 0; e < sizeof(eols) / sizeof(eols[0]); e++) {
                print_message("length %zu, pad %d, eol %zu\n", lens[l], pad, e);
                n = base64_encode(text, lens[l], eols[e], pad, b64);
                check_base64_size(b64, n);
            }
        }
    }
    /* A short encoding cut at every place, with a '=' at every place, and
     * with a byte to skip at every place. */
    n = base64_encode(text, 40, "\n", true, b64);
    for (size_t at = 0; at <= n; at++) {
        print_message("at %zu\n", at);
        check_base64_size(b64, at);
        memcpy(mut, b64, at);
        mut[at] = '=';
        memcpy(mut + at + 1, b64 + at, n - at);
        check_base64_size(mut, n + 1);
        mut[at] = skipped[at % sizeof(skipped)];
        check_base64_size(mut, n + 1);
    }
    /* A long one with a '=' on each side of the 4096-byte read boundary. */
    n = base64_encode(text, 9000, "\r\n", false, b64);
    for (size_t at = 4090; at < 4100; at++) {
        print_message("long, '=' at %zu\n", at);
        memcpy(mut, b64, n);
        mut[at] = '=';
        check_base64_size(mut, n);
    }
    free(text);
    free(b64);
    free(mut);
}

/* Caps on a field's name (1024 bytes) and value (65536 bytes). */
static void
test_header_caps(void **state)
{
    size_t big = 70000, k;
    char *raw = malloc(big + 64);
    struct mime_view *v;

    (void)state;
    assert_non_null(raw);
    /* A long value, plain ASCII: cut at 65536 bytes, its leading space
     * among them, which unfolding then drops. */
    k = (size_t)sprintf(raw, "X-Long: ");
    for (size_t i = 0; i < big; i++)
        raw[k++] = (char)('a' + i % 26);
    memcpy(raw + k, "\n\nb\n", 4);
    v = parse(raw, k + 4);
    assert_true(v->truncated);
    assert_int_equal(strlen(mime_view_header(v, "X-Long")), 65535);
    assert_memory_equal(mime_view_header(v, "X-Long"), "abcdef", 6);
    mime_view_free(v);

    /* A long name: cut at 1024 bytes; the value survives. */
    for (k = 0; k < 1500; k++)
        raw[k] = (char)('A' + k % 26);
    memcpy(raw + k, ": value\n\nb\n", 11);
    v = parse(raw, k + 11);
    assert_true(v->truncated);
    assert_int_equal(strlen(v->headers[0].name), 1024);
    assert_string_equal(v->headers[0].value, "value");
    mime_view_free(v);
    free(raw);
}

/* The message's own fields come first, then its Content-* fields, each
 * in the order written: the order of a GMimeMessage's two lists, which
 * the view keeps although it parses the top part alone. */
static void
test_header_order(void **state)
{
    static const char raw[] = "Content-Type: text/plain; charset=us-ascii\n"
                              "From: a@example.org\n"
                              "content-transfer-encoding: 7bit\n"
                              "Subject: s\n"
                              "Content-Disposition: inline\n"
                              "To: b@example.org\n"
                              "\nbody\n";
    static const char *const order[] = {"From",
                                        "Subject",
                                        "To",
                                        "Content-Type",
                                        "content-transfer-encoding",
                                        "Content-Disposition"};
    struct classifier_limits saved;
    struct mime_view *v;

    (void)state;
    v = parse(raw, strlen(raw));
    assert_false(v->malformed);
    assert_int_equal(v->n_headers, 6);
    for (size_t i = 0; i < 6; i++)
        assert_string_equal(v->headers[i].name, order[i]);
    assert_int_equal(v->n_parts, 1);
    assert_string_equal(v->parts[0].text, "body\n");
    mime_view_free(v);

    /* Over the field cap, the fields kept are the first in that order. */
    saved = limits;
    limits.max_headers = 4;
    v = parse(raw, strlen(raw));
    limits = saved;
    assert_int_equal(v->n_headers, 4);
    assert_string_equal(v->headers[3].name, "Content-Type");
    assert_true(v->truncated);
    mime_view_free(v);
}

static bool
want_some(const char *name, size_t n)
{
    return (n == 4 && strncasecmp(name, "From", 4) == 0) ||
           (n == 7 && strncasecmp(name, "Subject", 7) == 0) ||
           (n == 2 && strncasecmp(name, "To", 2) == 0);
}

/* Whether a view of only some fields is the full view's fields that
 * want_some() takes, or whose value is over 8 KB, in the same order with
 * the same values, and notes the same cut. */
static void
check_fields_wanted(const char *raw, size_t len, size_t want_n)
{
    struct mime_view *all = parse(raw, len), *some = NULL;
    size_t k = 0;

    assert_int_equal(mime_view_parse_fields(raw, len, &limits, want_some, &some), 0);
    assert_view_sane(some);
    for (size_t i = 0; i < all->n_headers; i++) {
        const struct mime_header *h = &all->headers[i];

        if (!want_some(h->name, strlen(h->name)) && strlen(h->value) <= 8192)
            continue;
        assert_true(k < some->n_headers);
        assert_string_equal(some->headers[k].name, h->name);
        assert_string_equal(some->headers[k].value, h->value);
        k++;
    }
    assert_int_equal(some->n_headers, k);
    assert_int_equal(k, want_n);
    assert_int_equal(some->truncated, all->truncated);
    assert_int_equal(some->n_parts, all->n_parts);
    mime_view_free(all);
    mime_view_free(some);
}

/* Fields a view is not asked for are left out but counted toward the
 * field cap; one too long to leave out (it could be cut) is kept. */
static void
test_fields_wanted(void **state)
{
    static const char head[] =
        "Received: from a.example.org (a.example.org [192.0.2.1])\n"
        "\tby b.example.org with ESMTP id 1; Mon, 1 Jan 2024 00:00:00 +0000\n"
        "From: =?utf-8?q?J=C3=B6rg?= <j@example.org>\n"
        "X-Mailer: m 1.0\n"
        "Subject: =?iso-8859-1?q?caf=E9?= crash\n"
        "DKIM-Signature: v=1; a=rsa-sha256;\n b=abc\n"
        "To: s@example.org\n";
    static const char multipart[] = "MIME-Version: 1.0\n"
                                    "Content-Type: multipart/mixed; boundary=\"b\"\n\n"
                                    "--b\nContent-Type: text/plain\n\nbody\n--b--\n";
    struct classifier_limits saved = limits;
    size_t big = 70000, n;
    char *raw = malloc(sizeof(head) + big + sizeof(multipart) + 32);

    (void)state;
    assert_non_null(raw);
    n = (size_t)sprintf(raw, "%s\nbody\n", head);
    check_fields_wanted(raw, n, 3);
    n = (size_t)sprintf(raw, "%s%s", head, multipart);
    check_fields_wanted(raw, n, 3);

    /* A field over 8 KB that is not asked for is kept, and cut, as in the
     * full view; one under it is left out. */
    for (size_t vlen = 8190; vlen <= 8194; vlen += 4) {
        n = (size_t)sprintf(raw, "%sX-Pad: ", head);
        memset(raw + n, 'p', vlen);
        n += vlen;
        n += (size_t)sprintf(raw + n, "\n\nbody\n");
        check_fields_wanted(raw, n, vlen > 8192 ? 4 : 3);
    }
    n = (size_t)sprintf(raw, "X-Big: ");
    memset(raw + n, 'x', big);
    n += big;
    n += (size_t)sprintf(raw + n, "\n%s\nbody\n", head);
    check_fields_wanted(raw, n, 4);

    /* Over the field cap the first fields count, asked for or not. */
    limits.max_headers = 3;
    n = (size_t)sprintf(raw, "%s\nbody\n", head);
    check_fields_wanted(raw, n, 1);
    limits = saved;

    /* More fields than the view reads itself: GMime's list gives them. */
    n = 0;
    for (unsigned i = 0; i < 300; i++)
        n += (size_t)sprintf(raw + n, "X-N%u: %u\n", i, i);
    n += (size_t)sprintf(raw + n, "%s\nbody\n", head);
    check_fields_wanted(raw, n, 3);
    limits.max_headers = 302;
    check_fields_wanted(raw, n, 1);
    limits = saved;
    free(raw);
}

/* A quoted mbox From line before the fields: a MIME entity cannot start
 * so, a message can (GMime skips it), so the message parse takes over and
 * the fields are all there. A line that is neither still makes the mail
 * malformed. */
static void
test_from_line_first(void **state)
{
    static const char quoted[] = ">From a@example.org Mon Jan  1 00:00:00 2024\n"
                                 "Subject: s\n"
                                 "Content-Type: text/plain\n"
                                 "\nbody\n";
    static const char junk[] = "this is no field\nSubject: s\n\nbody\n";
    struct mime_view *v;

    (void)state;
    v = parse(quoted, strlen(quoted));
    assert_false(v->malformed);
    assert_int_equal(v->n_headers, 2);
    assert_string_equal(v->headers[0].name, "Subject");
    assert_string_equal(v->headers[1].name, "Content-Type");
    assert_int_equal(v->n_parts, 1);
    assert_string_equal(v->parts[0].text, "body\n");
    mime_view_free(v);

    v = parse(junk, strlen(junk));
    assert_true(v->malformed);
    assert_int_equal(v->n_headers, 0);
    mime_view_free(v);
}

static void
assert_views_equal(const struct mime_view *a, const struct mime_view *b)
{
    assert_int_equal(a->n_headers, b->n_headers);
    for (size_t i = 0; i < a->n_headers; i++) {
        assert_string_equal(a->headers[i].name, b->headers[i].name);
        assert_string_equal(a->headers[i].value, b->headers[i].value);
    }
    assert_int_equal(a->n_parts, b->n_parts);
    for (size_t i = 0; i < a->n_parts; i++) {
        assert_int_equal(a->parts[i].role, b->parts[i].role);
        assert_string_equal(a->parts[i].content_type, b->parts[i].content_type);
        assert_int_equal(a->parts[i].len, b->parts[i].len);
        if (a->parts[i].text != NULL)
            assert_memory_equal(a->parts[i].text, b->parts[i].text, a->parts[i].len);
    }
    assert_int_equal(a->truncated, b->truncated);
    assert_int_equal(a->malformed, b->malformed);
}

/* A plain header block is read without GMime (header_block.h), which
 * then sees only the Content-* fields. The same message after a quoted
 * mbox From line is GMime's alone (test_from_line_first()): both views
 * must be the same, field for field, with encoded words, 8-bit values,
 * folding, CR LF, identifiers and the field cap. */
static void
test_split_matches_gmime(void **state)
{
    static const char *const cases[] = {
        "From: =?UTF-8?Q?J=C3=B6rg?= <j@example.org>\n"
        "Subject: =?UTF-8?B?w6TDtsO8?= and\n =?ISO-8859-1?Q?caf=E9?= more\n"
        "Message-ID: <=?UTF-8?Q?a?=@example.org>\n"
        "References: <a@example.org>\n\t<b@example.org>\n"
        "Content-Type: text/plain; charset=utf-8\n"
        "\nbody\n",
        "Subject: caf\xc3\xa9 \xff raw\nTo: b@example.org\nX-Empty:\nX-Odd-(1): a: b\n\nbody\n",
        "Subject: s\r\nContent-Type: multipart/mixed;\r\n\tboundary=\"zz\"\r\nFrom: a@b\r\n\r\n"
        "--zz\r\nContent-Type: text/plain\r\n\r\none\r\n"
        "--zz\r\nContent-Type: text/x-patch; name=a.patch\r\n\r\n+b\r\n--zz--\r\n",
        "Content-Type: text/plain; charset=iso-8859-1\nSubject: s\n"
        "Content-Transfer-Encoding: quoted-printable\nCONTENT-ID: <c@d>\n\ncaf=E9\n",
        "Subject: only fields\nFrom: a@b\n\n",
        "Subject: =?x-unknown?Q?abc?= =?UTF-8?B?@@@?= a =? b ?=\n\nbody\n",
        /* One text/plain part, which the view makes without GMime's part. */
        "Subject: s\nContent-Type: TEXT/PLAIN; CHARSET=ISO-8859-1\n"
        "Content-Transfer-Encoding: 8BIT\n\ncaf\xe9\n",
        "Subject: s\nContent-Type: text/plain;\n\tcharset=\"windows-1252\"; format=flowed\n\n"
        "\x93q\x94\n",
        "Subject: s\nContent-Type: text/plain; charset*=utf-8''%E2%82%AC\n\n\xe2\x82\xac\n",
        "Subject: s\r\nContent-Type: text/plain\r\n\r\nline\r\n",
        "Subject: s\n\n\n\nbody\n\n",
        "Subject: s\n\n",
        /* Not one: a file name, an encoding to undo, a second field. */
        "Subject: s\nContent-Type: text/plain; name=fix.patch\n\n+x\n",
        "Subject: s\nContent-Transfer-Encoding: =?utf-8?q?base64?=\n\nY2Fmw6kK\n",
        "Subject: s\nContent-Type: text/plain\nContent-Type: text/html\n\n<b>x</b>\n",
    };
    struct classifier_limits saved = limits;

    (void)state;
    for (unsigned cap = 0; cap < 2; cap++) {
        limits.max_headers = cap ? 3 : saved.max_headers;
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
            size_t len = strlen(cases[i]);
            char *quoted = malloc(len + 8);
            struct mime_view *a, *b;

            print_message("case %zu cap %u\n", i, cap);
            assert_non_null(quoted);
            memcpy(quoted, ">From x\n", 8);
            memcpy(quoted + 8, cases[i], len);
            a = parse(cases[i], len);
            b = parse(quoted, len + 8);
            assert_true(a->n_headers > 0);
            assert_true(a->n_parts > 0);
            assert_views_equal(a, b);
            mime_view_free(a);
            mime_view_free(b);
            free(quoted);
        }
    }
    limits = saved;
}

/* msg[0..n) starts with a quoted mbox From line, which sends it to the
 * full GMime parse: the message after that line must give the same view. */
static void
assert_like_full_parse(const char *msg, size_t n)
{
    struct mime_view *a = parse(msg + 8, n - 8), *b = parse(msg, n);

    assert_views_equal(a, b);
    mime_view_free(a);
    mime_view_free(b);
}

/* A text/plain Content-Type of the shape most mail gives it is read by
 * the view itself (mime_ctype_plain()), any other by GMime: each
 * type with each parameter list below, and text/plain with each pair of
 * lists, must give the view GMime gives the same message after a quoted
 * mbox From line (which the full parse takes). The body's bytes read
 * differently in each charset, so a wrong one shows. */
static void
test_plain_type_like_gmime(void **state)
{
    static const char *const types[] = {
        "text/plain",  "TEXT/PLAIN",  "Text/Plain",     " text/plain", "text /plain",
        "text/ plain", "text/plain ", "text/plainx",    "text/html",   "text",
        "texts/plain", "text/plai",   "text/plain\n\t",
    };
    static const char *const params[] = {
        "",
        "; charset=utf-8",
        "; charset=\"UTF-8\"",
        ";charset=iso-8859-1",
        "; CHARSET=windows-1252",
        "; charset = \"iso-8859-1\"",
        "; charset=\"\"",
        "; charset=us-ascii (Plain text)",
        "; charset*=utf-8''%E2%82%AC",
        "; charset=utf-8; charset=iso-8859-1",
        "; name=a.txt",
        "; NAME=\"b c.txt\"",
        "; format=flowed; delsp=yes",
        ";\n\tcharset=\"iso-8859-1\"",
        ";",
        ";;",
        "; charset=\"iso\\\"8859\"",
        "; charset=iso-8859-1;",
        "; x=\"a;b\"; charset=windows-1252",
        "; charset='utf-8'",
        "; charset=koi8-r",
        "; charset=bogus-charset",
        "; format=flowed",
        "; charset",
        "; =utf-8",
        "; charset=utf-8 x",
    };
    const size_t nt = sizeof(types) / sizeof(types[0]), np = sizeof(params) / sizeof(params[0]);
    const char *body = "caf\xe9 \x93q\x94 \xc3\xa9 \xd0\xb6\n";
    size_t fast = 0, checked = 0;

    (void)state;
    for (size_t t = 0; t < nt; t++) {
        for (size_t i = 0; i < np; i++) {
            /* Pairs of lists for the plain type, one list for the rest. */
            for (size_t j = 0; j < (t == 0 ? np : 1); j++) {
                char value[256], msg[512];
                char *charset = NULL;
                bool plain;
                int n, r;

                n = snprintf(value, sizeof(value), "%s%s%s", types[t], params[i], params[j]);
                assert_true(n > 0 && (size_t)n < sizeof(value));
                r = mime_ctype_plain(value, (size_t)n, &plain, &charset);
                assert_true(r == 0 || r == 1);
                fast += r == 1;
                free(charset);
                n = snprintf(msg, sizeof(msg), ">From x\nSubject: s\nContent-Type: %s\n\n%s", value,
                             body);
                assert_true(n > 0 && (size_t)n < sizeof(msg));
                print_message("Content-Type: %s\n", value);
                assert_like_full_parse(msg, (size_t)n);
                checked++;
            }
        }
    }
    /* Both readings must have been exercised. */
    print_message("%zu of %zu read by the view\n", fast, checked);
    assert_true(fast > 200);
    assert_true(checked - fast > 200);
}

/* A single text/plain part in base64 or quoted-printable is decoded by
 * the view itself too: each encoding below, with a few charsets, must
 * give the view the full GMime parse gives. */
static void
test_plain_encoded_like_gmime(void **state)
{
    static const struct {
        const char *cte, *body;
    } cases[] = {
        {"quoted-printable", "caf=E9 =93q=94 =C3=A9 soft=\nbreak=3D=\n\nend=\n"},
        {"Quoted-Printable", "bad =ZZ escape =\r\nline\r\n= \n=C3\n"},
        {" quoted-printable ", "trailing space   \nand tab\t\n"},
        {"base64", "Y2Fmw6kg4oCUIOKAmHHigJkK\n"},
        {"BASE64", "Y2Fm6SCTcZQK\n=\nQUJD\n"},
        {"base64", "Y2Fm\n6SCT\ncZQ\n"},
        {"base64", "!!Y2Fm@@6SCT\r\ncZQK\r\n"},
        {"7bit", "plain\n"},
        {"8bit", "caf\xe9\n"},
        {"binary", "caf\xc3\xa9\n"},
        {"x-uuencode", "begin 644 a\n#86)C\n`\nend\n"},
        {"bogus", "caf\xe9\n"},
        {"", "caf\xe9\n"},
    };
    static const char *const charsets[] = {"", "; charset=utf-8", "; charset=iso-8859-1",
                                           "; charset=\"windows-1252\""};

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        for (size_t c = 0; c < sizeof(charsets) / sizeof(charsets[0]); c++) {
            char msg[512];
            int n = snprintf(msg, sizeof(msg),
                             ">From x\nSubject: s\nContent-Type: text/plain%s\n"
                             "Content-Transfer-Encoding: %s\n\n%s",
                             charsets[c], cases[i].cte, cases[i].body);

            assert_true(n > 0 && (size_t)n < sizeof(msg));
            print_message("case %zu charset %zu\n", i, c);
            assert_like_full_parse(msg, (size_t)n);
        }
    }
}

/* Content types in lower case, with GMime's defaults. */
static void
test_content_types(void **state)
{
    static const struct {
        const char *raw, *type;
    } cases[] = {
        {"Subject: s\n\nb\n", "text/plain"},
        {"Content-Type: TEXT/X-Patch\n\nb\n", "text/x-patch"},
        {"Content-Type: Application/PDF; name=x\n\nb\n", "application/pdf"},
        {"Content-Type: text\n\nb\n", "application/octet-stream"},
    };

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct mime_view *v = parse(cases[i].raw, strlen(cases[i].raw));

        print_message("case %zu\n", i);
        assert_string_equal(v->parts[0].content_type, cases[i].type);
        mime_view_free(v);
    }
}

/* HTML: text between tags and entities is copied in runs. */
static void
test_html_runs(void **state)
{
    static const struct {
        const char *html, *text;
    } cases[] = {
        {"a & b &amp; c &#x41; d &unknown; <br>e", "a & b & c A d &unknown; \ne"},
        {"&", "&"},
        {"x&", "x&"},
        {"<p>one</p><p>two", "\none\n\ntwo"},
        {"<script>var a = 1 < 2;</script>after", "after"},
        {"tail &#", "tail &#"},
    };
    char raw[256];

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct mime_view *v;

        snprintf(raw, sizeof(raw), "Content-Type: text/html\n\n%s", cases[i].html);
        v = parse(raw, strlen(raw));
        print_message("case %zu\n", i);
        assert_string_equal(v->parts[0].text, cases[i].text);
        mime_view_free(v);
    }
}

/* Length of the valid UTF-8 sequence at s[0..n), 0 if invalid: no
 * overlong forms, surrogates or code points past U+10FFFF. Written apart
 * from the kit's utf8_seq_len(), as the reference the view is held to. */
static size_t
ref_utf8_len(const unsigned char *s, size_t n)
{
    size_t k = s[0] < 0x80   ? 1
               : s[0] < 0xc2 ? 0
               : s[0] < 0xe0 ? 2
               : s[0] < 0xf0 ? 3
               : s[0] < 0xf5 ? 4
                             : 0;
    uint32_t cp = k == 2 ? s[0] & 0x1fu : k == 3 ? s[0] & 0x0fu : s[0] & 0x07u;

    if (k <= 1)
        return k;
    if (n < k)
        return 0;
    for (size_t i = 1; i < k; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        cp = (cp << 6) | (s[i] & 0x3fu);
    }
    if ((k == 3 && cp < 0x800) || (k == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
        (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    return k;
}

/* A UTF-8 text part as the view defines it, a character at a time: CR
 * before LF dropped, NUL as U+FFFD, an invalid byte as Latin-1, and cut
 * before the first character that would pass max bytes. */
static size_t
ref_utf8_text(const char *s, size_t n, size_t max, char *out, bool *cut)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t i = 0, j = 0;

    *cut = false;
    while (i < n) {
        char unit[4];
        size_t ul, k = ref_utf8_len(u + i, n - i);

        if (u[i] == '\r' && (i + 1 == n || u[i + 1] == '\n')) {
            i++;
            continue;
        }
        if (u[i] == '\0') {
            memcpy(unit, "\xef\xbf\xbd", 3);
            ul = 3;
            k = 1;
        } else if (k > 0) {
            memcpy(unit, s + i, k);
            ul = k;
        } else {
            unit[0] = (char)(0xc0 | (u[i] >> 6));
            unit[1] = (char)(0x80 | (u[i] & 0x3f));
            ul = 2;
            k = 1;
        }
        if (j + ul > max) {
            *cut = true;
            break;
        }
        memcpy(out + j, unit, ul);
        j += ul;
        i += k;
    }
    out[j] = '\0';
    return j;
}

/* Runs of ASCII and valid UTF-8 are copied whole, and a cap falling in
 * one backs off to the start of its character: random text of pieces the
 * copy keeps, drops or replaces, cut at every size. */
static void
test_text_runs_cut(void **state)
{
    static const char *const pieces[] = {"a",
                                         "bcdefghijkl",
                                         "\xc3\xa9",
                                         "\xe2\x82\xac",
                                         "\xf0\x9f\x98\x80",
                                         "\r\n",
                                         "\r",
                                         "\n",
                                         "\xff",
                                         "\xc3",
                                         "\xe2\x82",
                                         "\xed\xa0\x80",
                                         "\xc0\xaf",
                                         "\xf4\x90\x80\x80"};
    const size_t saved = limits.max_part_bytes;
    char body[256], want[1024];
    unsigned seed = 99;

    (void)state;
    for (int round = 0; round < 60; round++) {
        size_t n = 0;

        seed = seed * 1103515245u + 12345u;
        for (int p = (int)((seed >> 16) % 30); p > 0; p--) {
            const char *piece;

            seed = seed * 1103515245u + 12345u;
            piece = pieces[(seed >> 16) % (sizeof(pieces) / sizeof(pieces[0]))];
            memcpy(body + n, piece, strlen(piece));
            n += strlen(piece);
        }
        /* A NUL now and then, which must become U+FFFD. */
        if (round % 3 == 0 && n > 2)
            body[n / 2] = '\0';
        for (size_t max = 0; max <= 2 * n + 2; max++) {
            struct mime_view *v;
            bool cut;
            size_t wl;

            limits.max_part_bytes = max;
            wl = ref_utf8_text(body, n, max, want, &cut);
            print_message("round %d, max %zu\n", round, max);
            v = parse_part("Content-Type: text/plain; charset=utf-8\n\n", body, n);
            assert_int_equal(v->parts[0].len, wl);
            assert_memory_equal(v->parts[0].text, want, wl + 1);
            assert_int_equal(v->parts[0].truncated, cut);
            mime_view_free(v);
        }
    }
    limits.max_part_bytes = saved;
}

/* Quoted-printable of data[0..n): every byte as =XX when hex is set,
 * else only '=' and 8-bit bytes; a soft break ("=" eol) every step bytes
 * of output, so that breaks and escapes fall at every offset. */
static size_t
qp_encode(const char *data, size_t n, bool hex, size_t step, const char *eol, char *out)
{
    size_t k = 0, col = 0;

    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)data[i];

        if (hex || c == '=' || c >= 0x80) {
            k += (size_t)sprintf(out + k, "=%02X", c);
            col += 3;
        } else {
            out[k++] = (char)c;
            col++;
        }
        if (col >= step) {
            k += (size_t)sprintf(out + k, "=%s", eol);
            col = 0;
        }
    }
    return k;
}

/* One part of the given type whose content is body[0..n) in encoding cte. */
static struct mime_view *
parse_encoded(const char *type, const char *cte, const char *body, size_t n)
{
    char headers[256];

    snprintf(headers, sizeof(headers),
             "Content-Type: %s\nContent-Disposition: attachment; filename=a.bin\n"
             "Content-Transfer-Encoding: %s\n\n",
             type, cte);
    return parse_part(headers, body, n);
}

/* Text and attachments in quoted-printable and base64, which the view
 * decodes with GMime's decoder straight from the message, come out as the
 * same content in 8bit, which it reads as it is: at sizes around GMime's
 * 4096-byte reads, with soft breaks and escapes at every offset. */
static void
test_decode_direct(void **state)
{
    static const size_t lens[] = {0, 1, 2, 3, 75, 76, 77, 1365, 1366, 4095, 4096, 4097, 9001};
    static const size_t steps[] = {1, 2, 3, 7, 76};
    static const char *const eols[] = {"\n", "\r\n"};
    char *text = malloc(9001), *enc = malloc(9001 * 8);
    unsigned seed = 5;

    (void)state;
    assert_non_null(text);
    assert_non_null(enc);
    for (size_t i = 0; i < 9001; i++) {
        seed = seed * 1103515245u + 12345u;
        /* Printable ASCII and some '=' and UTF-8 (é): no CR, LF or NUL,
         * which a text part would change. */
        text[i] = (char)(' ' + (seed >> 16) % 95);
        if ((seed >> 8) % 17 == 0 && i + 1 < 9001) {
            text[i++] = '\xc3';
            text[i] = '\xa9';
        }
    }
    for (size_t l = 0; l < sizeof(lens) / sizeof(lens[0]); l++) {
        size_t n = lens[l];
        struct mime_view *ref;

        /* Do not end inside the two bytes of an é. */
        if (n > 0 && text[n - 1] == '\xc3')
            n--;
        ref = parse_encoded("text/plain; charset=utf-8", "8bit", text, n);
        assert_int_equal(ref->parts[0].len, n);
        for (size_t s = 0; s < sizeof(steps) / sizeof(steps[0]); s++) {
            for (size_t e = 0; e < 2; e++) {
                for (int hex = 0; hex < 2; hex++) {
                    size_t k = qp_encode(text, n, hex, steps[s], eols[e], enc);
                    struct mime_view *v;

                    print_message("qp: length %zu, step %zu, eol %zu, hex %d\n", n, steps[s], e,
                                  hex);
                    v = parse_encoded("text/plain; charset=utf-8", "quoted-printable", enc, k);
                    assert_int_equal(v->parts[0].len, n);
                    assert_memory_equal(v->parts[0].text, ref->parts[0].text, n);
                    mime_view_free(v);
                    v = parse_encoded("application/octet-stream", "quoted-printable", enc, k);
                    assert_int_equal(v->parts[0].len, n);
                    mime_view_free(v);
                }
            }
        }
        for (size_t e = 0; e < 2; e++) {
            size_t k = base64_encode(text, n, eols[e], true, enc);
            struct mime_view *v;

            print_message("base64: length %zu, eol %zu\n", n, e);
            v = parse_encoded("text/plain; charset=utf-8", "base64", enc, k);
            assert_int_equal(v->parts[0].len, n);
            assert_memory_equal(v->parts[0].text, ref->parts[0].text, n);
            mime_view_free(v);
        }
        mime_view_free(ref);
    }
    free(text);
    free(enc);
}

/* Quoted-printable GMime does not take as an escape, and what it makes of
 * it; the expected texts were taken from GMime's own streams, which the
 * view used before it decoded straight from the message. */
static void
test_decode_qp_malformed(void **state)
{
    static const struct {
        const char *qp, *text;
    } cases[] = {
        {"a=ZZb", "a=ZZb"},      {"a=4", "a"},     {"a=", "a"},          {"a=\rb", "a=\rb"},
        {"a= \nb", "a= \nb"},    {"=3d=3D", "=="}, {"a=\n=\r\nb", "ab"}, {"=4\n", "=4\n"},
        {"x=e9y", "x\xc3\xa9y"}, {"==41", "==41"}, {"=\n\n", "\n"},      {"tail=\r", "tail"},
    };

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct mime_view *v;

        print_message("case %zu: %s\n", i, cases[i].qp);
        v = parse_encoded("text/plain; charset=iso-8859-1", "quoted-printable", cases[i].qp,
                          strlen(cases[i].qp));
        assert_string_equal(v->parts[0].text, cases[i].text);
        mime_view_free(v);
    }
}

/*
 * Messages that leave GMime's parser in an unusual state: each parse
 * re-initialises this thread's parser, so what one leaves behind must not
 * change the view of the next.
 */
static const char *const reuse_msgs[] = {
    "From: a@example.org\nSubject: plain\n\nA normal body.\n",
    /* Headers cut mid-field, no body. */
    "From: a@example.org\nSubject: cut in the mid",
    /* A folded field cut in its continuation. */
    "Subject: folded\n  and cut",
    /* mbox From_ line, and From lines in the body. */
    "From sender@example.org Mon Jan  1 00:00:00 2024\nFrom: b@example.org\n"
    "Subject: mbox\n\nFirst line.\nFrom here on\n>From there\nFrom x@y Tue Jan  2\n\nTail.\n",
    /* Nested multipart cut in the middle of an inner part. */
    "From: c@example.org\nMIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=outer\n\n"
    "preamble\n--outer\nContent-Type: multipart/alternative; boundary=inner\n\n--inner\n"
    "Content-Type: text/plain\n\nplain half\n--inner\nContent-Type: text/html\n\n<p>cut he",
    /* A forwarded message cut inside its headers. */
    "From: d@example.org\nMIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=b\n\n"
    "--b\nContent-Type: text/plain\n\nsee below\n--b\nContent-Type: message/rfc822\n\n"
    "From: e@example.org\nSubject: inner, cut\nContent-Type: multipart/mixed; bound",
    /* Content-Length that does not match (the parser ignores it). */
    "From: f@example.org\nContent-Length: 3\n\nlonger than three bytes\n",
    /* An OpenPGP block the parser notes while reading content. */
    "From: g@example.org\n\n-----BEGIN PGP SIGNED MESSAGE-----\nHash: SHA256\n\nsigned\n"
    "-----BEGIN PGP SIGNATURE-----\nabc\n",
    /* A base64 attachment without its closing boundary. */
    "From: h@example.org\nMIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=zz\n\n"
    "--zz\nContent-Type: text/plain; charset=utf-8\nContent-Transfer-Encoding: base64\n\n"
    "aGVsbG8gd29ybGQK\n--zz\nContent-Type: application/octet-stream; name=x.bin\n"
    "Content-Transfer-Encoding: base64\n\nAAECAwQF",
    "not a message at all",
    "\n\n   \n",
};

enum { REUSE_LONG = 2, REUSE_N = sizeof(reuse_msgs) / sizeof(reuse_msgs[0]) + REUSE_LONG };

/* Message i of the reuse set; the last two are built: a header field and a
 * preamble longer than the parser's buffers. Free with free(). */
static char *
reuse_msg(size_t i)
{
    size_t n_fixed = sizeof(reuse_msgs) / sizeof(reuse_msgs[0]);
    char *m = malloc(20000);
    size_t k;

    assert_non_null(m);
    if (i < n_fixed) {
        strcpy(m, reuse_msgs[i]);
        return m;
    }
    k = (size_t)sprintf(m, i == n_fixed ? "Subject: "
                                        : "Content-Type: multipart/mixed; boundary=q\n\n");
    memset(m + k, 'x', 12000);
    k += 12000;
    strcpy(m + k, i == n_fixed ? "\nFrom: i@example.org\n\nbody\n"
                               : "\n--q\nContent-Type: text/plain\n\ninside\n--q--\n");
    return m;
}

/* Everything in a view as text, to compare two views. Free with free(). */
static char *
view_dump(const struct mime_view *v)
{
    char *out = NULL;
    size_t outlen = 0;
    FILE *f = open_memstream(&out, &outlen);

    assert_non_null(f);
    fprintf(f, "html_only=%d truncated=%d limit=%s/%zu malformed=%d\n", v->has_html_only,
            v->truncated, v->limit ? v->limit : "-", v->limit_value, v->malformed);
    for (size_t i = 0; i < v->n_headers; i++)
        fprintf(f, "H %s: %s\n", v->headers[i].name, v->headers[i].value);
    for (size_t i = 0; i < v->n_parts; i++) {
        const struct mime_part *p = &v->parts[i];

        fprintf(f, "P %d %s %s len=%zu html=%d cut=%d\n", (int)p->role, p->content_type,
                p->filename ? p->filename : "-", p->len, p->is_html, p->truncated);
        if (p->text != NULL)
            fwrite(p->text, 1, p->len, f);
        fputc('\n', f);
    }
    assert_int_equal(fclose(f), 0);
    return out;
}

static char *
parse_dump(size_t i)
{
    char *m = reuse_msg(i);
    struct mime_view *v = parse(m, strlen(m));
    char *d = view_dump(v);

    mime_view_free(v);
    free(m);
    return d;
}

struct fresh_job {
    size_t i;
    char *dump;
};

/* A new thread's first parse uses a parser nothing has used before. */
static void *
fresh_parse(void *arg)
{
    struct fresh_job *job = arg;

    job->dump = parse_dump(job->i);
    return NULL;
}

static void
fresh_dumps(char **dumps)
{
    for (size_t i = 0; i < REUSE_N; i++) {
        struct fresh_job job = {.i = i};
        pthread_t t;

        assert_int_equal(pthread_create(&t, NULL, fresh_parse, &job), 0);
        assert_int_equal(pthread_join(t, NULL), 0);
        dumps[i] = job.dump;
    }
}

static void
free_dumps(char **dumps)
{
    for (size_t i = 0; i < REUSE_N; i++)
        free(dumps[i]);
}

/* Every message parsed right after every other gives the view a fresh
 * parser gives. */
static void
test_parser_reuse(void **state)
{
    char *fresh[REUSE_N];

    (void)state;
    fresh_dumps(fresh);
    for (size_t a = 0; a < REUSE_N; a++) {
        for (size_t b = 0; b < REUSE_N; b++) {
            char *da = parse_dump(a);
            char *db = parse_dump(b);

            print_message("after %zu: %zu\n", a, b);
            assert_string_equal(da, fresh[a]);
            assert_string_equal(db, fresh[b]);
            free(da);
            free(db);
        }
    }
    free_dumps(fresh);
}

struct thread_job {
    char **fresh;
    size_t start;
    int mismatches;
};

static void *
parse_all(void *arg)
{
    struct thread_job *job = arg;

    for (size_t round = 0; round < 20; round++) {
        for (size_t k = 0; k < REUSE_N; k++) {
            size_t i = (job->start + k) % REUSE_N;
            char *d = parse_dump(i);

            if (strcmp(d, job->fresh[i]) != 0)
                job->mismatches++;
            free(d);
        }
    }
    return NULL;
}

/* Threads parsing at once each get the views of a fresh parser; each
 * thread's parser goes when the thread ends (the sanitizer build and
 * valgrind --leak-check=full report it if not). */
static void
test_parse_threads(void **state)
{
    enum { N_THREADS = 8 };
    char *fresh[REUSE_N];
    struct thread_job jobs[N_THREADS];
    pthread_t t[N_THREADS];

    (void)state;
    fresh_dumps(fresh);
    for (size_t i = 0; i < N_THREADS; i++) {
        jobs[i] = (struct thread_job){.fresh = fresh, .start = i};
        assert_int_equal(pthread_create(&t[i], NULL, parse_all, &jobs[i]), 0);
    }
    for (size_t i = 0; i < N_THREADS; i++) {
        assert_int_equal(pthread_join(t[i], NULL), 0);
        assert_int_equal(jobs[i].mismatches, 0);
    }
    free_dumps(fresh);
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
        cmocka_unit_test(test_fixtures),
        cmocka_unit_test(test_attachment_details),
        cmocka_unit_test(test_strings),
        cmocka_unit_test(test_limits),
        cmocka_unit_test(test_header_lookup),
        cmocka_unit_test(test_header_start),
        cmocka_unit_test(test_ascii_charsets),
        cmocka_unit_test(test_latin1_boundary),
        cmocka_unit_test(test_ascii_controls),
        cmocka_unit_test(test_content_in_place),
        cmocka_unit_test(test_content_empty),
        cmocka_unit_test(test_header_fields),
        cmocka_unit_test(test_header_caps),
        cmocka_unit_test(test_content_types),
        cmocka_unit_test(test_html_runs),
        cmocka_unit_test(test_unfold_random),
        cmocka_unit_test(test_base64_sizes),
        cmocka_unit_test(test_text_runs_cut),
        cmocka_unit_test(test_decode_direct),
        cmocka_unit_test(test_decode_qp_malformed),
        cmocka_unit_test(test_header_8bit_offsets),
        cmocka_unit_test(test_parser_reuse),
        cmocka_unit_test(test_header_order),
        cmocka_unit_test(test_fields_wanted),
        cmocka_unit_test(test_from_line_first),
        cmocka_unit_test(test_split_matches_gmime),
        cmocka_unit_test(test_plain_type_like_gmime),
        cmocka_unit_test(test_plain_encoded_like_gmime),
        cmocka_unit_test(test_parse_threads),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
