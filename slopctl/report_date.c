/*
 * report_date.c - the Date: header to a UTC day, without the C library's
 * time zone machinery: the zone offset is in the field itself, and the
 * day count comes from the proleptic Gregorian calendar (days_from_civil).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "report_date.h"

/* Days since 1970-01-01 of y-m-d (Howard Hinnant's algorithm). */
static int64_t
days_from_civil(int64_t y, unsigned m, unsigned d)
{
    int64_t era;
    unsigned yoe, doy, doe;

    y -= m <= 2;
    era = (y >= 0 ? y : y - 399) / 400;
    yoe = (unsigned)(y - era * 400);
    doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + (int64_t)doe - 719468;
}

static void
civil_from_days(int64_t z, int64_t *ret_y, unsigned *ret_m, unsigned *ret_d)
{
    int64_t era, y;
    unsigned doe, yoe, doy, mp, m;

    z += 719468;
    era = (z >= 0 ? z : z - 146096) / 146097;
    doe = (unsigned)(z - era * 146097);
    yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    y = (int64_t)yoe + era * 400;
    doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    mp = (5 * doy + 2) / 153;
    m = mp < 10 ? mp + 3 : mp - 9;
    *ret_d = doy - (153 * mp + 2) / 5 + 1;
    *ret_m = m;
    *ret_y = y + (m <= 2);
}

/* A field's value from msg[j..line_end) on, its continuation lines
 * unfolded (CR and tab as spaces), into buf, cut to fit. */
static void
field_unfold(const char *msg, size_t end, size_t j, size_t line_end, char *buf, size_t size)
{
    const char *nl;
    size_t o = 0;

    for (;;) {
        for (; j < line_end && o + 1 < size; j++)
            buf[o++] = msg[j] == '\r' || msg[j] == '\t' ? ' ' : msg[j];
        /* A continuation line starts with white space. */
        j = line_end + 1;
        if (j >= end || (msg[j] != ' ' && msg[j] != '\t') || o + 1 >= size)
            break;
        nl = memchr(msg + j, '\n', end - j);
        line_end = nl != NULL ? (size_t)(nl - msg) : end;
    }
    buf[o] = '\0';
}

/*
 * Copy the unfolded value of the first Date: field into buf. Header lines
 * end at '\n' (a '\r' before it is white space); the block ends at an
 * empty line.
 */
static int
date_field(const char *msg, size_t len, char *buf, size_t size)
{
    size_t end = len < REPORT_DATE_MAX_HEADER ? len : REPORT_DATE_MAX_HEADER;
    size_t i = 0;

    while (i < end) {
        const char *nl = memchr(msg + i, '\n', end - i);
        size_t line_end = nl != NULL ? (size_t)(nl - msg) : end;

        if (line_end == i || (line_end == i + 1 && msg[i] == '\r'))
            return -ENOENT;
        if (line_end - i >= 5 && strncasecmp(msg + i, "date:", 5) == 0) {
            field_unfold(msg, end, i + 5, line_end, buf, size);
            return 0;
        }
        i = line_end + 1;
    }
    return -ENOENT;
}

/* Named zones of RFC 5322 section 4.3 (obs-zone); military letters count as 0. */
static bool
zone_named(const char *z, int *ret_minutes)
{
    static const struct {
        const char *name;
        int minutes;
    } zones[] = {
        {"UT", 0},        {"UTC", 0},       {"GMT", 0},       {"Z", 0},
        {"EST", -5 * 60}, {"EDT", -4 * 60}, {"CST", -6 * 60}, {"CDT", -5 * 60},
        {"MST", -7 * 60}, {"MDT", -6 * 60}, {"PST", -8 * 60}, {"PDT", -7 * 60},
    };

    for (size_t i = 0; i < sizeof(zones) / sizeof(zones[0]); i++)
        if (strcasecmp(z, zones[i].name) == 0) {
            *ret_minutes = zones[i].minutes;
            return true;
        }
    return false;
}

int
report_date_parse_day(const char *ymd, int64_t *ret_day)
{
    unsigned y = 0, m = 0, d = 0;

    for (int i = 0; i < 10; i++) {
        char c = ymd[i];

        if (i == 4 || i == 7) {
            if (c != '-')
                return -EINVAL;
            continue;
        }
        if (c < '0' || c > '9')
            return -EINVAL;
        if (i < 4)
            y = y * 10 + (unsigned)(c - '0');
        else if (i < 7)
            m = m * 10 + (unsigned)(c - '0');
        else
            d = d * 10 + (unsigned)(c - '0');
    }
    if (ymd[10] != '\0' || m < 1 || m > 12 || d < 1 || d > 31)
        return -EINVAL;
    *ret_day = days_from_civil(y, m, d);
    return 0;
}

void
report_date_format(int64_t day, char *buf, size_t size)
{
    int64_t y;
    unsigned m, d;

    civil_from_days(day, &y, &m, &d);
    snprintf(buf, size, "%04d-%02u-%02u", (int)y, m, d);
}

/* Skip blanks, then read 1 to max decimal digits; how many were read,
 * 0 when none. */
static unsigned
take_number(const char **pp, unsigned max, unsigned *ret)
{
    const char *p = *pp;
    unsigned v = 0, n = 0;

    while (*p == ' ')
        p++;
    for (; n < max && *p >= '0' && *p <= '9'; n++, p++)
        v = v * 10 + (unsigned)(*p - '0');
    if (n == 0)
        return 0;
    *pp = p;
    *ret = v;
    return n;
}

/*
 * A numeric zone "+hhmm" or "-hhmm" into minutes east of UTC. false when
 * it is not one, or lies past the zones in use (UTC-12 to UTC+14): RFC
 * 5322 gives the form, not a range, and "-9999" is no place on Earth.
 */
static bool
zone_numeric(const char *z, int *ret_minutes)
{
    int hh, mm;

    if ((z[0] != '+' && z[0] != '-') || strlen(z) != 5 || strspn(z + 1, "0123456789") != 4)
        return false;
    hh = (z[1] - '0') * 10 + (z[2] - '0');
    mm = (z[3] - '0') * 10 + (z[4] - '0');
    if (mm > 59 || hh * 100 + mm > REPORT_DATE_ZONE_MAX)
        return false;
    *ret_minutes = z[0] == '-' ? -(hh * 60 + mm) : hh * 60 + mm;
    return true;
}

/* Skip blanks, then take a run of other characters: copied into buf as
 * far as it fits, its whole length returned. */
static size_t
take_word(const char **pp, char *buf, size_t size)
{
    const char *p = *pp;
    size_t n = 0;

    while (*p == ' ')
        p++;
    for (; p[n] != '\0' && p[n] != ' '; n++)
        if (n + 1 < size)
            buf[n] = p[n];
    buf[n + 1 < size ? n : size - 1] = '\0';
    *pp = p + n;
    return n;
}

int
report_date_day(const char *msg, size_t len, int64_t *ret_day)
{
    static const char months[] = "janfebmaraprmayjunjulaugsepoctnovdec";
    char field[REPORT_DATE_MAX_FIELD + 1], mon[4], zone[16];
    const char *p, *m;
    unsigned d, y, h, mi, s = 0, y_digits;
    int off = 0, r;
    int64_t days, minutes;

    r = date_field(msg, len, field, sizeof(field));
    if (r < 0)
        return r;
    p = field;
    /* An optional "Mon," weekday; a comma further on is in a comment. */
    m = strchr(p, ',');
    if (m != NULL && m - p < 12)
        p = m + 1;
    if (!take_number(&p, 2, &d) || take_word(&p, mon, sizeof(mon)) != 3 ||
        (y_digits = take_number(&p, 4, &y)) == 0 || !take_number(&p, 2, &h) || *p++ != ':' ||
        !take_number(&p, 2, &mi))
        return -EINVAL;
    if (*p == ':' && (p++, !take_number(&p, 2, &s)))
        return -EINVAL;
    if (take_word(&p, zone, sizeof(zone)) > 0) {
        if (zone[0] == '+' || zone[0] == '-') {
            /* A number out of range is a broken date, not an unknown
             * zone name: it would move the day. */
            if (!zone_numeric(zone, &off))
                return -EINVAL;
        } else if (!zone_named(zone, &off)) {
            off = 0; /* an unknown zone is "-0000": UTC, as RFC 5322 says */
        }
    }
    m = strcasestr(months, mon);
    if (m == NULL || (m - months) % 3 != 0)
        return -EINVAL;
    /* RFC 5322 section 4.3 goes by the digits written, not the value:
     * two digits below 50 are 20xx, two or three others 1900 plus; a
     * year of four digits is that year ("0001" is year 1, no 2001). */
    if (y_digits == 2 && y < 50)
        y += 2000;
    else if (y_digits <= 3)
        y += 1900;
    if (d < 1 || d > 31 || h > 23 || mi > 59 || s > 60)
        return -EINVAL;
    days = days_from_civil(y, (unsigned)((m - months) / 3 + 1), d);
    minutes = days * 1440 + (int64_t)h * 60 + mi - off;
    days = minutes >= 0 ? minutes / 1440 : -((-minutes + 1439) / 1440);
    /* 2932896 is 10000-01-01. */
    if (days < 0 || days >= 2932896)
        return -EINVAL;
    *ret_day = days;
    return 0;
}
