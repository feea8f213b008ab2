/* test_ascii.c - the ASCII class table, ascii_prefix() and the byte searches. */
#include <ctype.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
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

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_classes),
        cmocka_unit_test(test_prefix),
        cmocka_unit_test(test_find),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
