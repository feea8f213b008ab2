/* test_membudget.c - the MaxMemory budget: reservations, a message's
 * share of it, and reading the cgroup's memory.max. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "conn.h"
#include "membudget.h"

static void
test_reserve_release(void **state)
{
    (void)state;
    assert_int_equal(membudget_used(), 0);
    assert_int_equal(membudget_reserve(1000, 600), 0);
    assert_int_equal(membudget_reserve(1000, 401), -ENOBUFS);
    assert_int_equal(membudget_reserve(1000, 400), 0);
    assert_int_equal(membudget_used(), 1000);
    /* A refusal reserves nothing, and more than the whole never fits. */
    assert_int_equal(membudget_reserve(1000, 1), -ENOBUFS);
    assert_int_equal(membudget_reserve(1000, SIZE_MAX), -ENOBUFS);
    membudget_release(600);
    membudget_release(400);
    assert_int_equal(membudget_used(), 0);
}

/* A message reserves MEMBUDGET_CHARGE per byte as it grows; past the
 * budget it turns busy, drops bytes, and msg_free() gives everything back. */
static void
test_message_share(void **state)
{
    char chunk[4096];
    struct msg *a = msg_new(1 << 20), *b = msg_new(1 << 20);
    uint64_t limit = (uint64_t)3 << 20; /* 1.5 messages of 1 MB at charge 2 */

    (void)state;
    assert_non_null(a);
    assert_non_null(b);
    memset(chunk, 'x', sizeof(chunk));
    a->budget = b->budget = limit;
    msg_end_headers(a);
    msg_end_headers(b);
    for (int i = 0; i < 256; i++)
        assert_int_equal(msg_add_body(a, chunk, sizeof(chunk)), 0);
    assert_false(a->busy);
    assert_true(membudget_used() >= a->len * MEMBUDGET_CHARGE);
    assert_true(membudget_used() <= limit);
    for (int i = 0; i < 256; i++)
        assert_int_equal(msg_add_body(b, chunk, sizeof(chunk)), 0);
    assert_true(b->busy);
    assert_true(b->len < (size_t)1 << 20);
    assert_true(membudget_used() <= limit);
    msg_free(a);
    msg_free(b);
    assert_int_equal(membudget_used(), 0);
}

/* An announced size is reserved at once, capped at the message's max. */
static void
test_announced(void **state)
{
    struct msg *a = msg_new(1 << 20), *b = msg_new(1 << 20);

    (void)state;
    a->budget = b->budget = (uint64_t)3 << 20;
    assert_int_equal(msg_reserve(a, (size_t)50 << 20), 0);
    assert_int_equal(a->reserved, (size_t)MEMBUDGET_CHARGE << 20);
    assert_int_equal(msg_reserve(b, 900000), -ENOBUFS);
    assert_true(b->busy);
    msg_free(b);
    assert_int_equal(membudget_used(), (uint64_t)MEMBUDGET_CHARGE << 20);
    msg_free(a);
    assert_int_equal(membudget_used(), 0);
    /* No budget (the offline mode): nothing is reserved. */
    a = msg_new(1 << 20);
    assert_int_equal(msg_reserve(a, 1 << 20), 0);
    assert_int_equal(a->reserved, 0);
    msg_free(a);
}

static void
write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");

    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void
test_cgroup_max(void **state)
{
    char dir[] = "/tmp/slop-membudget.XXXXXX", p[256], unit[256];
    uint64_t v = 0;

    (void)state;
    assert_non_null(mkdtemp(dir));
    snprintf(unit, sizeof(unit), "%s/system.slice", dir);
    assert_int_equal(mkdir(unit, 0755), 0);
    snprintf(unit, sizeof(unit), "%s/system.slice/slop-milter.service", dir);
    assert_int_equal(mkdir(unit, 0755), 0);
    snprintf(p, sizeof(p), "%s/cgroup", dir);

    write_file(p, "0::/system.slice/slop-milter.service\n");
    snprintf(unit, sizeof(unit), "%s/system.slice/slop-milter.service/memory.max", dir);
    write_file(unit, "1073741824\n");
    assert_int_equal(membudget_cgroup_max(p, dir, &v), 0);
    assert_int_equal(v, 1073741824);
    write_file(unit, "max\n");
    assert_int_equal(membudget_cgroup_max(p, dir, &v), -ERANGE);
    write_file(unit, "12abc\n");
    assert_int_equal(membudget_cgroup_max(p, dir, &v), -EINVAL);
    /* cgroup v1 only: no "0::" line. */
    write_file(p, "12:memory:/x\n");
    assert_int_equal(membudget_cgroup_max(p, dir, &v), -ENOENT);
    /* The root cgroup has no memory.max. */
    write_file(p, "0::/\n");
    assert_int_equal(membudget_cgroup_max(p, dir, &v), -ENOENT);

    remove(unit);
    snprintf(unit, sizeof(unit), "%s/system.slice/slop-milter.service", dir);
    rmdir(unit);
    snprintf(unit, sizeof(unit), "%s/system.slice", dir);
    rmdir(unit);
    remove(p);
    rmdir(dir);
}

/* The automatic budget is never below the floor; a set one stays. */
static void
test_limit(void **state)
{
    (void)state;
    assert_true(membudget_limit(0) >= MEMBUDGET_FLOOR);
    assert_int_equal(membudget_limit(12345), 12345);
}

static void
test_note_busy(void **state)
{
    (void)state;
    /* The first refusal reports; the next within the interval wait and
     * are counted in the following report. */
    assert_int_equal(membudget_note_busy(1000, 60), 1);
    assert_int_equal(membudget_note_busy(1010, 60), 0);
    assert_int_equal(membudget_note_busy(1020, 60), 0);
    assert_int_equal(membudget_note_busy(1060, 60), 3);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reserve_release), cmocka_unit_test(test_message_share),
        cmocka_unit_test(test_announced),       cmocka_unit_test(test_cgroup_max),
        cmocka_unit_test(test_limit),           cmocka_unit_test(test_note_busy),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
