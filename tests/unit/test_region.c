/* test_region.c - region names and line-map look-ups. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "region.h"

static void
test_names_round_trip(void **state)
{
    enum region_id id;

    (void)state;
    for (unsigned i = 0; i < REGION__COUNT; i++) {
        const char *name = region_name((enum region_id)i);
        assert_non_null(name);
        assert_int_equal(region_parse(name, &id), 0);
        assert_int_equal(id, i);
    }
    assert_int_equal(region_parse("nosuch", &id), -EINVAL);
    assert_int_equal(region_parse("Added", &id), -EINVAL);
    assert_null(region_name(REGION__COUNT));
}

static void
test_line_at(void **state)
{
    static const struct {
        size_t offset;
        unsigned want_line;
    } cases[] = {{0, 10}, {3, 10}, {4, 11}, {9, 11}, {10, 40}, {500, 40}};
    struct region_line map[] = {
        {0, "a.c", 10},
        {4, "a.c", 11},
        {10, "b.c", 40},
    };
    struct region r = {.text = (char *)"abc\ndefgh\nij", .len = 12, .lines = map, .n_lines = 3};
    struct region plain = {.text = (char *)"x", .len = 1};

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const struct region_line *l = region_line_at(&r, cases[i].offset);
        assert_non_null(l);
        assert_int_equal(l->line, cases[i].want_line);
    }
    assert_string_equal(region_line_at(&r, 11)->file, "b.c");
    assert_null(region_line_at(&plain, 0));
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names_round_trip),
        cmocka_unit_test(test_line_at),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
