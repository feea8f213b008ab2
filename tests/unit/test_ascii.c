/* test_ascii.c - the ASCII class table and ascii_prefix(). */
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

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_classes),
        cmocka_unit_test(test_prefix),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
