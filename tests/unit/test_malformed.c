/*
 * test_malformed.c - hostile and broken input never crashes, hangs or fails:
 * every case yields a view and a message whose regions are valid UTF-8.
 * Run under ASan/UBSan to catch what an assertion cannot.
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
#include "utf8.h"

static struct classifier_limits limits;

struct gen {
    char *p;
    size_t len, cap;
};

static void
gen_add(struct gen *g, const void *s, size_t n)
{
    if (g->len + n + 1 > g->cap) {
        g->cap = (g->len + n + 1) * 2;
        g->p = realloc(g->p, g->cap);
        assert_non_null(g->p);
    }
    memcpy(g->p + g->len, s, n);
    g->len += n;
    g->p[g->len] = '\0';
}

static void
gen_str(struct gen *g, const char *s)
{
    gen_add(g, s, strlen(s));
}

/* Well-formed UTF-8 (the kit's check) without a NUL. */
static bool
utf8_ok(const char *s, size_t n)
{
    return memchr(s, '\0', n) == NULL && utf8_valid_prefix(s, n) == n;
}

/* Parse and build; both must succeed and leave sane, bounded output. */
static void
check(const char *raw, size_t len)
{
    struct mime_view *v = NULL;
    struct message *m = NULL;

    assert_int_equal(mime_view_parse(raw, len, &limits, &v), 0);
    assert_non_null(v);
    assert_true(v->n_headers <= limits.max_headers);
    assert_true(v->n_parts <= limits.max_mime_parts);
    for (size_t i = 0; i < v->n_headers; i++)
        assert_true(utf8_ok(v->headers[i].value, strlen(v->headers[i].value)));
    for (size_t i = 0; i < v->n_parts; i++) {
        if (v->parts[i].text == NULL)
            continue;
        assert_true(v->parts[i].len <= limits.max_part_bytes);
        assert_true(utf8_ok(v->parts[i].text, v->parts[i].len));
    }
    assert_int_equal(message_build(v, &limits, &m), 0);
    assert_non_null(m);
    for (unsigned i = 0; i < REGION__COUNT; i++) {
        assert_non_null(m->regions[i].text);
        assert_int_equal(strlen(m->regions[i].text), m->regions[i].len);
        assert_true(utf8_ok(m->regions[i].text, m->regions[i].len));
    }
    message_free(m);
    mime_view_free(v);
}

static void
test_empty_and_tiny(void **state)
{
    static const char *const tiny[] = {"x", "\n",   "\r", "-",        ">",        "From ",
                                       ":", "\xff", "<",  "Subject:", "From x\n", "\n\n\n"};
    struct mime_view *v = NULL;

    (void)state;
    check("", 0);
    assert_int_equal(mime_view_parse(NULL, 0, &limits, &v), 0);
    assert_int_equal(v->n_headers, 0);
    mime_view_free(v);
    for (size_t i = 0; i < sizeof(tiny) / sizeof(tiny[0]); i++)
        check(tiny[i], strlen(tiny[i]));
}

/* xorshift32: deterministic junk, the same on every run. */
static uint32_t
next_rand(uint32_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 17;
    *s ^= *s << 5;
    return *s;
}

static void
test_binary_junk(void **state)
{
    static const size_t sizes[] = {1, 2, 16, 255, 4096, 65536, 1u << 20};
    uint32_t seed = 0x5105u;

    (void)state;
    for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
        char *buf = malloc(sizes[s]);

        assert_non_null(buf);
        for (size_t i = 0; i < sizes[s]; i++)
            buf[i] = (char)(next_rand(&seed) & 0xff);
        check(buf, sizes[s]);
        /* The same junk after a plausible header block. */
        {
            struct gen g = {0};

            gen_str(&g, "From: a@example.org\nSubject: junk\nContent-Type: text/plain; "
                        "charset=utf-8\n\n");
            gen_add(&g, buf, sizes[s]);
            check(g.p, g.len);
            free(g.p);
        }
        free(buf);
    }
}

static void
test_fixtures(void **state)
{
    static const char *const names[] = {"malformed-truncated-base64.eml",
                                        "malformed-bad-charset.eml"};

    (void)state;
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        size_t len;
        char *raw = testutil_read_fixture(names[i], &len);

        print_message("case %s\n", names[i]);
        check(raw, len);
        /* Every prefix of a broken message is a broken message too. */
        for (size_t cut = 0; cut < len; cut += 7)
            check(raw, cut);
        free(raw);
    }
}

static void
test_truncated_base64_content(void **state)
{
    struct message *m = testutil_message_fixture("malformed-truncated-base64.eml");

    (void)state;
    /* What decodes is kept; the binary part is still counted. */
    assert_non_null(strstr(m->regions[REGION_BODY].text, "the kernel panics"));
    assert_int_equal(m->binary_attachments, 1);
    message_free(m);
}

static void
test_deep_nesting(void **state)
{
    static const int depths[] = {100, 1000};

    (void)state;
    for (size_t d = 0; d < sizeof(depths) / sizeof(depths[0]); d++) {
        struct gen g = {0};
        char line[128];

        gen_str(&g, "From: deep@example.org\nSubject: deep\nMIME-Version: 1.0\n");
        for (int i = 0; i < depths[d]; i++) {
            snprintf(line, sizeof(line),
                     "Content-Type: multipart/mixed; boundary=\"b%d\"\n\n--b%d\n", i, i);
            gen_str(&g, line);
        }
        gen_str(&g, "Content-Type: text/plain\n\ninnermost text\n");
        for (int i = depths[d] - 1; i >= 0; i--) {
            snprintf(line, sizeof(line), "--b%d--\n", i);
            gen_str(&g, line);
        }
        check(g.p, g.len);
        {
            struct mime_view *v = NULL;

            assert_int_equal(mime_view_parse(g.p, g.len, &limits, &v), 0);
            assert_true(v->truncated);
            mime_view_free(v);
        }
        free(g.p);
    }

    /* Nested message/rfc822 counts toward the depth as well. */
    {
        struct gen g = {0};

        for (int i = 0; i < 100; i++)
            gen_str(&g, "Subject: fwd\nContent-Type: message/rfc822\n\n");
        gen_str(&g, "Subject: inner\n\nbottom\n");
        check(g.p, g.len);
        free(g.p);
    }
}

static void
test_many_headers(void **state)
{
    struct gen g = {0};
    char line[64];
    struct mime_view *v = NULL;

    (void)state;
    for (int i = 0; i < 10000; i++) {
        snprintf(line, sizeof(line), "X-Header-%d: value %d\n", i, i);
        gen_str(&g, line);
    }
    gen_str(&g, "Subject: last\n\nbody\n");
    check(g.p, g.len);
    assert_int_equal(mime_view_parse(g.p, g.len, &limits, &v), 0);
    assert_int_equal(v->n_headers, limits.max_headers);
    assert_true(v->truncated);
    mime_view_free(v);
    free(g.p);

    /* Many To: addresses: recipients stay capped. */
    memset(&g, 0, sizeof(g));
    gen_str(&g, "To: ");
    for (int i = 0; i < 3000; i++) {
        snprintf(line, sizeof(line), "%su%d@example.org", i ? ", " : "", i);
        gen_str(&g, line);
    }
    gen_str(&g, "\nSubject: many\n\nbody\n");
    check(g.p, g.len);
    {
        struct message *m = testutil_message(g.p, g.len);

        assert_int_equal(m->recipients.n, 1000);
        message_free(m);
    }
    free(g.p);
}

static void
test_long_lines(void **state)
{
    size_t n = 1u << 20;
    struct gen g = {0};
    char *line = malloc(n);

    (void)state;
    assert_non_null(line);
    memset(line, 'a', n);
    /* A 1 MiB body line. */
    gen_str(&g, "Subject: long\n\n");
    gen_add(&g, line, n);
    gen_str(&g, "\n");
    check(g.p, g.len);
    free(g.p);

    /* A 1 MiB header line. */
    memset(&g, 0, sizeof(g));
    gen_str(&g, "Subject: ");
    gen_add(&g, line, n);
    gen_str(&g, "\n\nbody\n");
    check(g.p, g.len);
    free(g.p);

    /* A 1 MiB line of '>' and of "diff --git" prefixes. */
    memset(line, '>', n);
    memset(&g, 0, sizeof(g));
    gen_str(&g, "Subject: Re: x\nIn-Reply-To: <a@b>\n\n");
    gen_add(&g, line, n);
    gen_str(&g, "\ndiff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n");
    check(g.p, g.len);
    free(g.p);
    free(line);
}

static const char *const odd_cases[] = {
    /* Unterminated multipart, missing boundary parameter, empty boundary. */
    "Content-Type: multipart/mixed; boundary=\"x\"\n\n--x\nContent-Type: text/plain\n\nopen\n",
    "Content-Type: multipart/mixed\n\n--x\n\nno boundary\n",
    "Content-Type: multipart/alternative; boundary=\"\"\n\n--\n\n----\n",
    /* HTML that ends inside a tag, an entity and a script. */
    "Content-Type: text/html\n\n<p>text <b",
    "Content-Type: text/html\n\nA &#",
    "Content-Type: text/html\n\n&#x110000; &#0; &#xd800; <script>never closed",
    /* Encodings that are wrong for the content. */
    "Content-Transfer-Encoding: base64\n\n!!!!====@@@@\n",
    "Content-Transfer-Encoding: quoted-printable\n\n=\n=4\n=ZZ\n",
    "Content-Transfer-Encoding: x-uuencode\n\nbegin 644 x\nM\n",
    /* Empty and odd headers. */
    "Subject:\nFrom:\nTo: ,,,<>,@,\"\nCc: \"unterminated\nMessage-ID: <\nIn-Reply-To: >\n\nb\n",
    "Subject: =?utf-8?B?????\n\n=?utf-8?Q?=\n",
    /* A message/rfc822 part with nothing inside. */
    "Content-Type: multipart/mixed; boundary=b\n\n--b\nContent-Type: message/rfc822\n\n--b--\n",
    /* Patch-looking pieces without the rest. */
    "Subject: [PATCH 0/0]\n\n---\n",
    "Subject: [PATCH 99999999999/1]\n\ndiff --git\n",
    "Subject: x\n\n--- a\n+++ b\n@@ -\n",
    "Content-Type: text/x-patch\n\n",
    "Content-Type: text/plain; name=a.patch\nContent-Disposition: attachment\n\nFrom x\n",
};

static void
test_odd_structures(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(odd_cases) / sizeof(odd_cases[0]); i++) {
        print_message("case %zu\n", i);
        check(odd_cases[i], strlen(odd_cases[i]));
    }
}

/* Text GMime cannot read as a message is kept whole as the body. */
static void
test_no_headers(void **state)
{
    static const char raw[] = "no header here, just a crash report\nsecond line\n";
    struct mime_view *v = NULL;

    (void)state;
    check(raw, sizeof(raw) - 1);
    assert_int_equal(mime_view_parse(raw, sizeof(raw) - 1, &limits, &v), 0);
    assert_true(v->malformed);
    assert_int_equal(v->n_headers, 0);
    assert_int_equal(v->n_parts, 1);
    assert_string_equal(v->parts[0].text, raw);
    mime_view_free(v);
}

static void
test_nul_bytes(void **state)
{
    static const char raw[] = "Subject: a\0b\nFrom: x\0@y\n\nbody\0with\0nuls\n";

    (void)state;
    check(raw, sizeof(raw) - 1);
}

static int
setup(void **state)
{
    struct classifier_options opts;

    (void)state;
    classifier_options_default(&opts);
    limits = opts.limits;
    mime_view_global_init();
    return 0;
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_empty_and_tiny), cmocka_unit_test(test_binary_junk),
        cmocka_unit_test(test_fixtures),       cmocka_unit_test(test_truncated_base64_content),
        cmocka_unit_test(test_deep_nesting),   cmocka_unit_test(test_many_headers),
        cmocka_unit_test(test_long_lines),     cmocka_unit_test(test_odd_structures),
        cmocka_unit_test(test_no_headers),     cmocka_unit_test(test_nul_bytes),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
