/*
 * route.h - what the recipients say about a mail's kind.
 *
 * Mail sent to an address where reports arrive (a security contact) is a
 * report, however short, when it names a problem and is not a patch or a
 * reply in a thread; a diff there, outside a patch's form, is a suggested
 * fix, and a question that names no problem is no report. Mail to a list
 * is a report only if it reads like one (message.c decides). The patterns are globs ('*' any run,
 * '?' one byte), matched case-insensitively on the bare address. Pure functions; thread-safe.
 */
#ifndef SLOP_ROUTE_H
#define SLOP_ROUTE_H

#include <stdbool.h>
#include <stddef.h>

/* Where a mail went, borrowed for one message_build_routed() call. */
struct route {
    const char *const *patterns; /* report address patterns */
    size_t n_patterns;
    const char *const *rcpt; /* envelope recipients; none: the To: and Cc: addresses */
    size_t n_rcpt;
    bool as_report; /* the caller says it is a report */
};

/* s matches the glob pat, ignoring ASCII case. The work is bounded by
 * strlen(pat) * strlen(s). */
bool route_glob_match(const char *pat, const char *s);

/* One of addrs[0..n) (each as written: "<a@b>", "Name <a@b>" and
 * surrounding blanks are stripped) matches one of the patterns. */
bool route_any_match(const char *const *patterns, size_t n_patterns, const char *const *addrs,
                     size_t n);

#endif
