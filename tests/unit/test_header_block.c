/* test_header_block.c - the plain header blocks taken, and every other
 * kind left to GMime. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "header_block.h"

#define MAX_FIELDS 8

/* want: the fields as "name=raw value" joined by '|', then "#" and the
 * text from the blank line on; NULL when the block is not taken. len: of
 * raw, where it holds a NUL; 0 for strlen(). */
static const struct {
    const char *raw, *want;
    size_t len;
} cases[] = {
    {"Subject: s\nFrom: a@b\n\nbody\n", "Subject= s\n|From= a@b\n#\nbody\n", 0},
    {"Subject: s\r\nFrom: a@b\r\n\r\nbody\r\n", "Subject= s\r\n|From= a@b\r\n#\r\nbody\r\n", 0},
    /* Folding stays in the raw value, with its line breaks. */
    {"Subject: a\n b\n\tc\nTo: x\n\n", "Subject= a\n b\n\tc\n|To= x\n#\n", 0},
    {"X:\nY:v\n\nb", "X=\n|Y=v\n#\nb", 0},
    {"X-(a)~: 1: 2\n\nb", "X-(a)~= 1: 2\n#\nb", 0},
    {"Subject: a\rb\n\nb", "Subject= a\rb\n#\nb", 0},
    {"Subject: caf\xc3\xa9\n\nb", "Subject= caf\xc3\xa9\n#\nb", 0},
    {"Subject: s\n \n\nb", "Subject= s\n \n#\nb", 0},
    /* A lone CR LF ends the block; a CR before other bytes does not. */
    {"A: 1\n\r\nB: 2\n\nb", "A= 1\n#\r\nB: 2\n\nb", 0},
    {"A: 1\n\rB: 2\n\nb", NULL, 0},
    {"\nbody\n", "#\nbody\n", 0},
    /* Left to GMime: it skips, trims or fails on these. */
    {" Subject: s\n\nb", NULL, 0},
    {"Subject : s\n\nb", NULL, 0},
    {"Subject\t: s\n\nb", NULL, 0},
    {"no field here\nSubject: s\n\nb", NULL, 0},
    {": empty name\n\nb", NULL, 0},
    {"X-\xc3\xa9: v\n\nb", NULL, 0},
    {"X-A\x7f: v\n\nb", NULL, 0},
    {"X-A\x01: v\n\nb", NULL, 0},
    {"Subject: a\0b\n\nb", NULL, 16},
    {"Subject: s\nFrom: a@b\n", NULL, 0},
    {"Subject: s\nFrom: a@b", NULL, 0},
    {"", NULL, 0},
    {"A: 1\nB: 2\nC: 3\nD: 4\nE: 5\nF: 6\nG: 7\nH: 8\nI: 9\n\nb", NULL, 0},
};

static void
test_split(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const char *raw = cases[i].raw;
        size_t len = cases[i].len ? cases[i].len : strlen(raw), n = 99, blank = 99;
        struct header_field f[MAX_FIELDS];
        char got[256] = "";
        int r;

        print_message("case %zu\n", i);
        r = header_block_split(raw, len, f, MAX_FIELDS, &n, &blank);
        if (cases[i].want == NULL) {
            assert_true(r == -EINVAL || r == -E2BIG);
            assert_int_equal(n, 99);
            assert_int_equal(blank, 99);
            continue;
        }
        assert_int_equal(r, 0);
        for (size_t k = 0; k < n; k++) {
            size_t vstart = f[k].start + f[k].nlen + 1;

            assert_int_equal(raw[f[k].start + f[k].nlen], ':');
            snprintf(got + strlen(got), sizeof(got) - strlen(got), "%s%.*s=%.*s", k ? "|" : "",
                     (int)f[k].nlen, raw + f[k].start, (int)(f[k].end - vstart), raw + vstart);
        }
        snprintf(got + strlen(got), sizeof(got) - strlen(got), "#%.*s", (int)(len - blank),
                 raw + blank);
        assert_string_equal(got, cases[i].want);
    }
}

/* The cap on fields is its own error, so the caller can tell it apart. */
static void
test_cap(void **state)
{
    static const char raw[] = "A: 1\nB: 2\nC: 3\n\nb";
    struct header_field f[3];
    size_t n = 0, blank = 0;

    (void)state;
    assert_int_equal(header_block_split(raw, strlen(raw), f, 2, &n, &blank), -E2BIG);
    assert_int_equal(header_block_split(raw, strlen(raw), f, 3, &n, &blank), 0);
    assert_int_equal(n, 3);
    assert_int_equal(blank, 15);
    assert_int_equal(header_block_split(NULL, 0, f, 3, &n, &blank), -EINVAL);
}

/* Names up to a line's length are taken; longer ones are GMime's. */
static void
test_long_name(void **state)
{
    struct header_field f[2];
    size_t n = 0, blank = 0;

    (void)state;
    for (size_t nlen = 997; nlen <= 1000; nlen++) {
        char *raw = malloc(nlen + 16);

        assert_non_null(raw);
        memset(raw, 'x', nlen);
        memcpy(raw + nlen, ": v\n\nbody", 10);
        assert_int_equal(header_block_split(raw, nlen + 9, f, 2, &n, &blank),
                         nlen <= 998 ? 0 : -EINVAL);
        free(raw);
    }
}

static void
test_is_content(void **state)
{
    (void)state;
    assert_true(header_block_is_content("Content-Type", 12));
    assert_true(header_block_is_content("CONTENT-transfer-encoding", 25));
    assert_true(header_block_is_content("content-", 8));
    assert_false(header_block_is_content("Content", 7));
    assert_false(header_block_is_content("Content-Type", 7));
    assert_false(header_block_is_content("Contents-Type", 13));
    assert_false(header_block_is_content("X-Content-Type", 14));
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_split),
        cmocka_unit_test(test_cap),
        cmocka_unit_test(test_long_name),
        cmocka_unit_test(test_is_content),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
