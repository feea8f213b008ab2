/*
 * report_date.h - the day a message was sent, from its Date: header, for
 * the report's actions-over-time chart.
 *
 * Reads only the raw header block (at most REPORT_DATE_MAX_HEADER bytes),
 * the first Date: field, unfolded, at most REPORT_DATE_MAX_FIELD bytes of
 * it. Understands RFC 5322 dates and their obsolete forms (no weekday, two-
 * or three-digit years, named zones); the day is the UTC day. No state;
 * thread-safe.
 */
#ifndef SLOPCTL_REPORT_DATE_H
#define SLOPCTL_REPORT_DATE_H

#include <stddef.h>
#include <stdint.h>

#define REPORT_DATE_MAX_HEADER ((size_t)256 << 10)
#define REPORT_DATE_MAX_FIELD 256
#define REPORT_DATE_ZONE_MAX 1400 /* hhmm: UTC+14 (Kiribati) and UTC-12 are the ends in use */

/*
 * The UTC day of the message's Date: as days since 1970-01-01 into
 * *ret_day. Returns 0, -ENOENT when there is no Date: field, or -EINVAL
 * when it does not parse (or lies before 1970 or after 9999, or names a
 * numeric zone past +-1400).
 */
int report_date_day(const char *msg, size_t len, int64_t *ret_day);

/* "YYYY-MM-DD" (as report_date_format() writes it) back into days since
 * 1970-01-01. Returns 0 or -EINVAL. */
int report_date_parse_day(const char *ymd, int64_t *ret_day);

/* Write day (as report_date_day() gives it) as "YYYY-MM-DD" into buf, at
 * least 11 bytes. */
void report_date_format(int64_t day, char *buf, size_t size);

#endif
