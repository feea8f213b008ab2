/* test_textbuf.c - the capped text buffer and its one failure policy. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "textbuf.h"

/* A zeroed buffer is empty, reads as "", and hands over "" when stolen. */
static void
test_empty(void **state)
{
    struct textbuf b = {0};
    size_t len = 99;
    char *s;

    (void)state;
    assert_string_equal(textbuf_str(&b), "");
    s = textbuf_steal(&b, &len);
    assert_non_null(s);
    assert_string_equal(s, "");
    assert_int_equal(len, 0);
    assert_null(b.p);
    free(s);
    textbuf_release(&b);
    textbuf_release(NULL);
}

/* Appends of every kind, across the first allocation's size. */
static void
test_appends(void **state)
{
    struct textbuf b = {0};
    char want[4096];
    size_t wl = 0;

    (void)state;
    for (int i = 0; i < 200; i++) {
        assert_int_equal(textbuf_add(&b, "ab", 2), 0);
        assert_int_equal(textbuf_adds(&b, "c"), 0);
        assert_int_equal(textbuf_line(&b, "d", 1), 0);
        assert_int_equal(textbuf_printf(&b, "%d.", i), 0);
        wl += (size_t)snprintf(want + wl, sizeof(want) - wl, "abcd\n%d.", i);
    }
    assert_int_equal(b.len, wl);
    assert_int_equal(strlen(textbuf_str(&b)), wl);
    assert_memory_equal(b.p, want, wl);
    assert_int_equal(b.err, 0);
    textbuf_release(&b);
    assert_null(b.p);
    assert_int_equal(b.len, 0);
}

/* One printf longer than anything allocated so far, and one that fits the
 * room left exactly. */
static void
test_printf_growth(void **state)
{
    struct textbuf b = {0};
    char big[1000];

    (void)state;
    memset(big, 'x', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    assert_int_equal(textbuf_adds(&b, "<"), 0);
    assert_int_equal(textbuf_printf(&b, "%s|%s", big, big), 0);
    assert_int_equal(b.len, 1 + 2 * 999 + 1);
    assert_int_equal(b.p[1 + 999], '|');
    assert_int_equal(b.p[b.len], '\0');
    while (b.len + 1 < b.cap)
        assert_int_equal(textbuf_printf(&b, "%c", 'y'), 0);
    assert_int_equal(b.len + 1, b.cap);
    assert_int_equal(textbuf_printf(&b, "%s", "z"), 0);
    assert_int_equal(b.p[b.len - 1], 'z');
    textbuf_release(&b);
}

/* "0123456789" appended in pieces of every size, by add and by printf,
 * into a buffer of every cap: the text is the whole cut at exactly max,
 * -E2BIG comes with the first piece that passes the cap and sticks, and
 * appends after it change nothing. */
static void
test_cap_cuts(void **state)
{
    static const char whole[] = "0123456789";

    (void)state;
    for (size_t max = 1; max <= 12; max++) {
        for (size_t piece = 1; piece <= 10; piece++) {
            for (int by_printf = 0; by_printf < 2; by_printf++) {
                size_t kept = max < 10 ? max : 10, len;
                struct textbuf b;
                char *s;

                textbuf_init(&b, max);
                for (size_t at = 0; at < 10; at += piece) {
                    size_t n = 10 - at < piece ? 10 - at : piece;
                    int r = by_printf ? textbuf_printf(&b, "%.*s", (int)n, whole + at)
                                      : textbuf_add(&b, whole + at, n);

                    assert_int_equal(r, at + n > max ? -E2BIG : 0);
                }
                assert_int_equal(b.len, kept);
                assert_memory_equal(b.p, whole, kept);
                assert_int_equal(b.p[kept], '\0');
                assert_true(b.cap <= max + 1);
                /* One byte more fits only under a cap past the text. */
                assert_int_equal(textbuf_adds(&b, "x"), max > 10 ? 0 : -E2BIG);
                assert_int_equal(b.len, max > 10 ? 11 : kept);
                s = textbuf_steal(&b, &len);
                assert_non_null(s);
                assert_int_equal(len, max > 10 ? 11 : kept);
                assert_memory_equal(s, max > 10 ? "0123456789x" : whole, len);
                assert_int_equal(s[len], '\0');
                free(s);
                /* Stolen: empty again, same cap, no error. */
                assert_int_equal(b.err, 0);
                assert_int_equal(b.max, max);
                assert_int_equal(b.len, 0);
            }
        }
    }
}

/* A reservation past the cap fails and sticks; one up to it lets the
 * caller write into p directly. */
static void
test_reserve(void **state)
{
    struct textbuf b;

    (void)state;
    textbuf_init(&b, 8);
    assert_int_equal(textbuf_reserve(&b, 8), 0);
    assert_true(b.cap >= 9);
    memcpy(b.p, "12345678", 9);
    b.len = 8;
    assert_int_equal(textbuf_reserve(&b, 1), -E2BIG);
    assert_int_equal(b.err, -E2BIG);
    assert_int_equal(textbuf_add(&b, "", 0), -E2BIG);
    assert_string_equal(textbuf_str(&b), "12345678");
    textbuf_release(&b);
    assert_int_equal(b.err, 0);
    assert_int_equal(b.max, 8);
}

/* Without a cap of its own, a size no allocation could hold is -ENOMEM:
 * the text stays as it was, the error sticks, and stealing frees it. */
static void
test_nomem_sticks(void **state)
{
    struct textbuf b = {0};

    (void)state;
    assert_int_equal(textbuf_adds(&b, "kept"), 0);
    assert_int_equal(textbuf_reserve(&b, SIZE_MAX - 2), -ENOMEM);
    assert_string_equal(textbuf_str(&b), "kept");
    assert_int_equal(textbuf_adds(&b, "x"), -ENOMEM);
    assert_int_equal(textbuf_printf(&b, "%d", 1), -ENOMEM);
    assert_int_equal(b.len, 4);
    assert_null(textbuf_steal(&b, NULL));
    assert_null(b.p);
    assert_int_equal(b.err, 0);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_empty),         cmocka_unit_test(test_appends),
        cmocka_unit_test(test_printf_growth), cmocka_unit_test(test_cap_cuts),
        cmocka_unit_test(test_reserve),       cmocka_unit_test(test_nomem_sticks),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
