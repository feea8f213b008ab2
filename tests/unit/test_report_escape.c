/*
 * test_report_escape.c - the escaper every string from mail passes through
 * in slopctl report: markup characters, broken UTF-8, controls, bidi
 * overrides, caps that must not split a character.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "report_escape.h"

#define FFFD "\xEF\xBF\xBD"
#define ELLIPSIS "\xE2\x80\xA6"

static const struct {
    const char *in;
    size_t cap;
    bool keep_newlines;
    const char *out;
} cases[] = {
    {"plain text", 100, false, "plain text"},
    {"<script>alert('x')</script>", 100, false, "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;"},
    {"<img src=x onerror=\"a&b\">", 100, false, "&lt;img src=x onerror=&quot;a&amp;b&quot;&gt;"},
    {"a\tb\rc\nd", 100, false, "a b c d"},
    {"a\nb", 100, true, "a\nb"},
    {"bell\007esc\033[1m del\177", 100, false, "bell" FFFD "esc" FFFD "[1m del" FFFD},
    {"bad \xFF\xFE end", 100, false, "bad " FFFD FFFD " end"},
    {"overlong \xC0\xAF", 100, false, "overlong " FFFD FFFD},
    {"surrogate \xED\xA0\x80", 100, false, "surrogate " FFFD FFFD FFFD},
    {"c1 \xC2\x85 x", 100, false, "c1 " FFFD " x"},
    {"rlo \xE2\x80\xAE txt", 100, false, "rlo " FFFD " txt"},
    {"isolate \xE2\x81\xA6 x", 100, false, "isolate " FFFD " x"},
    {"caf\xC3\xA9 \xE2\x9C\x93", 100, false, "caf\xC3\xA9 \xE2\x9C\x93"},
    {"abcdef", 3, false, "abc" ELLIPSIS},
    {"ab\xC3\xA9", 3, false, "ab" ELLIPSIS},
    {"<<<<", 2, false, "&lt;&lt;" ELLIPSIS},
    {"", 10, false, ""},
};

static char *
escaped(const char *in, size_t cap, bool keep)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);

    assert_non_null(f);
    report_escape(f, in, cap, keep);
    assert_int_equal(fclose(f), 0);
    return buf;
}

static void
test_cases(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char *got = escaped(cases[i].in, cases[i].cap, cases[i].keep_newlines);

        if (strcmp(got, cases[i].out) != 0)
            fail_msg("case %zu: got '%s', want '%s'", i, got, cases[i].out);
        free(got);
    }
}

/* Every byte value alone: the output never holds a markup character or a
 * control other than what the input had as text. */
static void
test_every_byte(void **state)
{
    (void)state;
    for (int c = 1; c < 256; c++) {
        char in[2] = {(char)c, 0};
        char *got = escaped(in, 10, false);

        assert_null(strpbrk(got, "<>\"'"));
        for (const char *p = got; *p != '\0'; p++)
            assert_true((unsigned char)*p >= 0x20 && *p != 0x7F);
        free(got);
    }
    {
        char *got = escaped(NULL, 10, false);

        assert_string_equal(got, "");
        free(got);
    }
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cases),
        cmocka_unit_test(test_every_byte),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
