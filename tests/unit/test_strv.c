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

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_add_and_contains),
        cmocka_unit_test(test_unique_and_cap),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
