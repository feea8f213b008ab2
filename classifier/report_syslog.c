/*
 * report_syslog.c - a kernel line without the prefix its logger wrote
 * (syslog's or the journal's time stamp, host and "kernel:" tag), so that
 * it reads as dmesg prints it. Threading: no shared state.
 */
#include <stdbool.h>
#include <stddef.h>

#include "report_parser.h"

/* Bytes of s from i on that are digits, up to max. */
static size_t
digits_at(struct span s, size_t i, size_t max)
{
    size_t d = 0;

    while (i + d < s.len && d < max && is_digit(s.p[i + d]))
        d++;
    return d;
}

/* The end of "hh:mm:ss" with an optional fraction at s.p[i], or 0. */
static size_t
clock_end(struct span s, size_t i)
{
    for (int k = 0; k < 3; k++) {
        if (digits_at(s, i, 2) != 2)
            return 0;
        i += 2;
        if (k < 2 && (i >= s.len || s.p[i++] != ':'))
            return 0;
    }
    if (i < s.len && s.p[i] == '.' && digits_at(s, i + 1, 9) > 0)
        i += 1 + digits_at(s, i + 1, 9);
    return i;
}

/* The end of the time stamp a syslog or journal line starts with, or 0:
 * "Mar 25 21:40:44" (RFC 3164, journalctl's short and short-precise
 * formats) or "2021-03-25T21:40:44.123456+01:00" (RFC 3339, short-iso). */
static size_t
stamp_end(struct span s)
{
    size_t i;

    if (s.len >= 15 && s.p[0] >= 'A' && s.p[0] <= 'Z' && s.p[1] >= 'a' && s.p[1] <= 'z' &&
        s.p[2] >= 'a' && s.p[2] <= 'z' && s.p[3] == ' ') {
        i = s.p[4] == ' ' ? 5 : 4;
        if (digits_at(s, i, 2) == 0)
            return 0;
        i += digits_at(s, i, 2);
        return i < s.len && s.p[i] == ' ' ? clock_end(s, i + 1) : 0;
    }
    if (s.len < 19 || digits_at(s, 0, 4) != 4 || s.p[4] != '-' || digits_at(s, 5, 2) != 2 ||
        s.p[7] != '-' || digits_at(s, 8, 2) != 2 || s.p[10] != 'T')
        return 0;
    i = clock_end(s, 11);
    if (i == 0 || i >= s.len)
        return i;
    if (s.p[i] == 'Z')
        return i + 1;
    if ((s.p[i] == '+' || s.p[i] == '-') && digits_at(s, i + 1, 2) == 2) {
        i += 3;
        if (i < s.len && s.p[i] == ':')
            i++;
        return digits_at(s, i, 2) == 2 ? i + 2 : 0;
    }
    return i;
}

/*
 * s without the syslog or journal prefix of a kernel line, "Mar 25
 * 21:40:44 host kernel: " (stamp_end(), a host name, the kernel's tag):
 * people paste kernel logs as their logger wrote them, and past the
 * prefix each line reads as dmesg prints it, a trace's frames indented.
 * Lines of other programs, and lines without the prefix, stay whole.
 */
struct span
report_syslog_strip(struct span s)
{
    static const char tag[] = " kernel:";
    size_t i = stamp_end(s), host;

    if (i == 0 || i >= s.len || s.p[i] != ' ')
        return s;
    i++;
    for (host = 0; i + host < s.len && s.p[i + host] != ' '; host++)
        if (host == 255)
            return s;
    i += host;
    if (host == 0 || !starts(s.p + i, s.len - i, tag))
        return s;
    i += sizeof(tag) - 1;
    if (i < s.len && s.p[i] == ' ')
        i++;
    return (struct span){s.p + i, s.len - i};
}
