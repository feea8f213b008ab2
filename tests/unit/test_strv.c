/* test_strv.c - the capped string vector. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "strv.h"

static void
test_add_and_contains(void **state)
{
    struct strv sv = {0};

    (void)state;
    assert_int_equal(strv_add(&sv, "alpha-beta", 5, 10), 0);
    assert_int_equal(strv_add(&sv, "beta", 4, 10), 0);
    assert_int_equal(sv.n, 2);
    assert_string_equal(sv.v[0], "alpha");
    assert_true(strv_contains(&sv, "beta"));
    assert_false(strv_contains(&sv, "alpha-beta"));
    strv_release(&sv);
    assert_null(sv.v);
    assert_int_equal(sv.n, 0);
}

static void
test_unique_and_cap(void **state)
{
    struct strv sv = {0};
    char name[16];

    (void)state;
    assert_int_equal(strv_add_unique(&sv, "x", 1, 3), 0);
    assert_int_equal(strv_add_unique(&sv, "x", 1, 3), 0);
    assert_int_equal(strv_add_unique(&sv, "xy", 1, 3), 0); /* prefix "x" again */
    assert_int_equal(sv.n, 1);
    assert_int_equal(strv_add(&sv, "y", 1, 3), 0);
    assert_int_equal(strv_add(&sv, "z", 1, 3), 0);
    assert_int_equal(strv_add(&sv, "w", 1, 3), -E2BIG);
    assert_int_equal(sv.n, 3);
    strv_release(&sv);

    /* Growth past the first allocation keeps every entry. */
    for (int i = 0; i < 100; i++) {
        int n = snprintf(name, sizeof(name), "s%d", i);
        assert_int_equal(strv_add(&sv, name, (size_t)n, 1000), 0);
    }
    assert_int_equal(sv.n, 100);
    assert_string_equal(sv.v[99], "s99");
    strv_release(&sv);
    strv_release(NULL);
}

/* strv_add_unique_first() answers as strv_add_unique() does, whatever
 * the first bytes of the entries, the empty string included. */
static void
test_unique_first(void **state)
{
    static const char *const adds[] = {"ab", "ac", "ab", "b", "", "", "abc", "a", "ba", "b"};
    struct strv a = {0}, b = {0};

    (void)state;
    for (size_t i = 0; i < sizeof(adds) / sizeof(adds[0]); i++) {
        size_t len = strlen(adds[i]);

        assert_int_equal(strv_add_unique_first(&a, adds[i], len, 7),
                         strv_add_unique(&b, adds[i], len, 7));
        assert_int_equal(a.n, b.n);
    }
    assert_int_equal(a.n, 7);
    for (size_t i = 0; i < a.n; i++)
        assert_string_equal(a.v[i], b.v[i]);
    /* Full: a new string is refused, a present one is no error. */
    assert_int_equal(strv_add_unique_first(&a, "zz", 2, 7), -E2BIG);
    assert_int_equal(strv_add_unique_first(&a, "ab", 2, 7), 0);
    strv_release(&a);
    strv_release(&b);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_add_and_contains),
        cmocka_unit_test(test_unique_and_cap),
        cmocka_unit_test(test_unique_first),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
