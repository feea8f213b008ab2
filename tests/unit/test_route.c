/* test_route.c - report address patterns: the glob and the address forms. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "route.h"

static const struct {
    const char *pat, *s;
    bool want;
} glob_cases[] = {
    {"security@*", "security@kernel.org", true},
    {"security@*", "SECURITY@Kernel.Org", true},
    {"Security@*", "security@kernel.org", true},
    {"security@*", "xsecurity@kernel.org", false},
    {"security@*", "security-team@kernel.org", false},
    {"security@*", "security", false},
    {"*@security.example.org", "team@security.example.org", true},
    {"*@security.example.org", "team@security.example.org.evil", false},
    {"sec?rity@*.org", "secUrity@a.b.org", true},
    {"sec?rity@*.org", "secrity@a.org", false},
    {"*", "", true},
    {"", "", true},
    {"", "a", false},
    {"a**b*c", "aXXbYYbZc", true},
    {"a*b*c", "aXXbYYbZ", false},
    {"*a*a*a*a*a*a*a*a*b", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", false},
};

static void
test_glob(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(glob_cases) / sizeof(glob_cases[0]); i++) {
        print_message("case %zu: '%s' '%s'\n", i, glob_cases[i].pat, glob_cases[i].s);
        assert_int_equal(route_glob_match(glob_cases[i].pat, glob_cases[i].s), glob_cases[i].want);
    }
}

/* Addresses as the MTA or a header gives them match by their bare form. */
static void
test_any_match(void **state)
{
    static const char *const pats[] = {"security@*", "*@psirt.example.org"};
    static const char *const hit1[] = {"list@lists.example.org", "<Security@Example.org>"};
    static const char *const hit2[] = {"Team <team@psirt.example.org> "};
    static const char *const miss[] = {"<>", "", "list@lists.example.org", NULL,
                                       "\"security@x\" <other@example.org>"};

    (void)state;
    assert_true(route_any_match(pats, 2, hit1, 2));
    assert_true(route_any_match(pats, 2, hit2, 1));
    assert_false(route_any_match(pats, 2, miss, 5));
    assert_false(route_any_match(pats, 0, hit1, 2));
    assert_false(route_any_match(pats, 2, hit1, 0));
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_glob),
        cmocka_unit_test(test_any_match),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
