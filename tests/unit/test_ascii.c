/* test_ascii.c - the ASCII class table, ascii_prefix() and the byte searches. */
#include <ctype.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ascii.h"

/* Every byte against the C library's "C" locale classes. */
static void
test_classes(void **state)
{
    (void)state;
    for (unsigned c = 0; c < 256; c++) {
        bool ascii = c < 0x80;

        assert_int_equal(ascii_is_digit((unsigned char)c), ascii && isdigit((int)c));
        assert_int_equal(ascii_is_hex((unsigned char)c), ascii && isxdigit((int)c));
        assert_int_equal(ascii_is_alnum((unsigned char)c), ascii && isalnum((int)c));
        assert_int_equal(ascii_is_word((unsigned char)c), ascii && (isalnum((int)c) || c == '_'));
    }
}

/* A byte of 0x80 or above at every position of texts around the 8-byte
 * stride, and none at all. */
static void
test_prefix(void **state)
{
    char s[40];

    (void)state;
    for (size_t n = 0; n <= 24; n++) {
        memset(s, 'a', sizeof(s));
        assert_int_equal(ascii_prefix(s, n), n);
        for (size_t at = 0; at < n; at++) {
            memset(s, 'a', sizeof(s));
            s[at] = (char)(at % 2 ? 0x80 : 0xff);
            if (at + 1 < n)
                s[at + 1] = (char)0xc3; /* a later one must not matter */
            assert_int_equal(ascii_prefix(s, n), at);
        }
    }
    assert_int_equal(ascii_prefix("", 0), 0);
}

/* The searches against memmem() for every needle, by every anchor byte,
 * over every piece of a text with near misses, repeats and a match at
 * either end. */
static void
test_find(void **state)
{
    static const char text[] = "nex next- xnext-next- ommit commit  */ /*/ **/";
    static const char *const needles[] = {"next-", "ommit ", "*/", "/*", "x", "t- ", "zz"};
    size_t len = strlen(text);

    (void)state;
    for (size_t start = 0; start <= len; start++) {
        for (size_t n = 0; start + n <= len; n++) {
            const char *s = text + start;

            for (size_t k = 0; k < sizeof(needles) / sizeof(needles[0]); k++) {
                const char *w = needles[k];
                const char *want = memmem(s, n, w, strlen(w));

                for (size_t at = 0; at < strlen(w); at++)
                    assert_ptr_equal(ascii_find_at(s, n, w, at), want);
                assert_ptr_equal(ascii_find(s, n, w), want);
                if (strlen(w) == 2)
                    assert_ptr_equal(ascii_find_pair(s, n, w[0], w[1]), want);
            }
        }
    }
}

/* ascii_find_pair_ci() against a byte-by-byte search: random texts of
 * up to 300 bytes (the vector path takes 64 positions at a time, the
 * rest 16 or one), every start and a few ends, letter and other pairs. */
static void
test_find_pair_ci(void **state)
{
    static const char alphabet[] = "abAB-_e\xc3\xa9"
                                   "dD ";
    static const unsigned char pairs[][2] = {{'a', 'b'}, {'e', 'd'},   {'g', ':'}, {'-', '_'},
                                             {'b', 'a'}, {0xc3, 0xa9}, {'d', 'd'}};
    unsigned seed = 7;
    char text[301];

    (void)state;
    for (unsigned round = 0; round < 200; round++) {
        size_t len = (size_t)rand_r(&seed) % sizeof(text);

        for (size_t i = 0; i < len; i++)
            text[i] = alphabet[(size_t)rand_r(&seed) % (sizeof(alphabet) - 1)];
        text[len] = '\0';
        for (size_t from = 0; from < len; from += 1 + from / 16) {
            size_t ends[] = {from, from + 1, from + 63, from + 64, from + 65, len - 1};

            for (size_t e = 0; e < sizeof(ends) / sizeof(ends[0]); e++) {
                size_t to = ends[e] < len ? ends[e] : len - 1;

                for (size_t k = 0; k < sizeof(pairs) / sizeof(pairs[0]) && from <= to; k++) {
                    unsigned char a = pairs[k][0], b = pairs[k][1];
                    size_t want = to;

                    for (size_t i = from; i < to && want == to; i++) {
                        unsigned char x = (unsigned char)text[i], y = (unsigned char)text[i + 1];

                        if ((a >= 'a' && a <= 'z' ? (x | 0x20) == a : x == a) &&
                            (b >= 'a' && b <= 'z' ? (y | 0x20) == b : y == b))
                            want = i;
                    }
                    assert_int_equal(ascii_find_pair_ci(text, from, to, a, b), want);
                }
            }
        }
    }
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_classes),
        cmocka_unit_test(test_prefix),
        cmocka_unit_test(test_find),
        cmocka_unit_test(test_find_pair_ci),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
