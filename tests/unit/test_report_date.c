/*
 * test_report_date.c - the Date: header to a UTC day for slopctl report:
 * RFC 5322 and obsolete forms, zones that move the day, folding, the end
 * of the header block, and what must not parse.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "report_date.h"

static const struct {
    const char *msg;
    int ret;
    const char *day;
} cases[] = {
    {"Date: Mon, 1 Jan 2024 10:00:00 +0000\n\nbody\n", 0, "2024-01-01"},
    {"From: a@b\nDATE: Tue, 02 Jan 2024 23:30:00 -0200\n\n", 0, "2024-01-03"},
    {"Date: Wed, 3 Jan 2024 00:30 +0100\r\n\r\n", 0, "2024-01-02"},
    {"Date: 29 Feb 2024 12:00:00 GMT\n\n", 0, "2024-02-29"},
    {"Date: Sat, 31 Dec 2022 20:00:00 EST\n\n", 0, "2023-01-01"},
    {"Date: 1 Mar 99 08:00:00 +0000\n\n", 0, "1999-03-01"},
    {"Date: 1 Mar 04 08:00:00 +0000\n\n", 0, "2004-03-01"},
    {"Date: Thu,\n 4 Jan 2024\n\t10:00:00 +0000 (UTC, really)\n\n", 0, "2024-01-04"},
    {"Date: 5 jan 2024 10:00:00 +0000 (a, b)\n\n", 0, "2024-01-05"},
    {"Date: 5 Jan 2024 10:00:00 XYZ\n\n", 0, "2024-01-05"},
    {"Subject: x\n\nDate: Mon, 1 Jan 2024 10:00:00 +0000\n", -ENOENT, ""},
    {"Subject: x\n", -ENOENT, ""},
    {"", -ENOENT, ""},
    {"Date: yesterday\n\n", -EINVAL, ""},
    {"Date: 1 Foo 2024 10:00:00 +0000\n\n", -EINVAL, ""},
    {"Date: 32 Jan 2024 10:00:00 +0000\n\n", -EINVAL, ""},
    {"Date: 1 Jan 2024 25:00:00 +0000\n\n", -EINVAL, ""},
    {"Date: 1 Jan 1969 10:00:00 +0000\n\n", -EINVAL, ""},
    {"Date: 1 Jan 1970 00:30:00 +0100\n\n", -EINVAL, ""},
    {"Date: 1 an 2024 10:00:00 +0000\n\n", -EINVAL, ""},
    /* Four digits are the year written: year 1 is no 2001. */
    {"Date: 1 Jan 0001 10:00:00 +0000\n\n", -EINVAL, ""},
    {"Date: 1 Jan 0099 10:00:00 +0000\n\n", -EINVAL, ""},
    {"Date: 1 Jan 101 10:00:00 +0000\n\n", 0, "2001-01-01"},
    {"Date: 1 Jan 49 10:00:00 +0000\n\n", 0, "2049-01-01"},
    {"Date: 1 Jan 70 10:00:00 +0000\n\n", 0, "1970-01-01"},
    /* Zones: the ends in use hold, past them the date is broken. */
    {"Date: 1 Jan 2024 10:00:00 +1400\n\n", 0, "2023-12-31"},
    {"Date: 1 Jan 2024 23:00:00 -1200\n\n", 0, "2024-01-02"},
    {"Date: 1 Jan 2024 10:00:00 -9999\n\n", -EINVAL, ""},
    {"Date: 1 Jan 2024 10:00:00 +1401\n\n", -EINVAL, ""},
    {"Date: 1 Jan 2024 10:00:00 +0060\n\n", -EINVAL, ""},
    {"Date: 1 Jan 2024 10:00:00 +01\n\n", -EINVAL, ""},
};

static void
test_cases(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int64_t day = -1;
        char buf[16] = "";
        int r = report_date_day(cases[i].msg, strlen(cases[i].msg), &day);

        if (r != cases[i].ret)
            fail_msg("case %zu: returned %d, want %d", i, r, cases[i].ret);
        if (r < 0)
            continue;
        report_date_format(day, buf, sizeof(buf));
        if (strcmp(buf, cases[i].day) != 0)
            fail_msg("case %zu: %s, want %s", i, buf, cases[i].day);
    }
}

/* The header block is read only as far as the message's length, which
 * need not end in a NUL. */
static void
test_length_bound(void **state)
{
    static const char msg[] = "Date: Mon, 1 Jan 2024 10:00:00 +0000\n\n";
    int64_t day;

    (void)state;
    assert_int_equal(report_date_day(msg, 4, &day), -ENOENT);
    assert_int_equal(report_date_day(msg, 20, &day), -EINVAL);
    assert_int_equal(report_date_day(msg, sizeof(msg) - 1, &day), 0);
    assert_int_equal(day, 19723);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cases),
        cmocka_unit_test(test_length_bound),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
