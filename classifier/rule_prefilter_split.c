/*
 * rule_prefilter_split.c - cut a pattern into its top-level
 * alternatives, when each matches alone as it does inside the whole, so
 * that rule_prefilter.c can give each its own literals (see the design
 * there). Patterns with back references, subroutine calls, \K, \G, verbs,
 * conditionals or a top-level option setting are not cut. No state;
 * thread-safe.
 */
#include <errno.h>
#include <string.h>

#include "rule.h"
#include "rule_prefilter_parse.h"
#include "rule_prefix.h"

/* Options in "(?...)" at p (just after "(?"), up to ':' or ')': sets
 * *setting when it is "(?flags)", *x when it turns on x mode. False when
 * p is not an option group. */
static bool
option_group(const char *p, const char *end, bool *setting, bool *x)
{
    const char *q = p;
    bool off = false;

    *setting = *x = false;
    while (q < end &&
           ((*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z') || *q == '-' || *q == '^')) {
        if (*q == '-')
            off = true;
        else if (*q == 'x' && !off)
            *x = true;
        q++;
    }
    if (q == p || q >= end || (*q != ':' && *q != ')'))
        return false;
    *setting = *q == ')';
    return true;
}

/* Where the scan of a pattern is: p at the byte being read, start at
 * the current alternative's first byte. */
struct split_scan {
    const char *p, *end, *start;
    unsigned depth;
    bool in_class;
};

/* An escape, p at its '\'. False when the pattern cannot be cut. */
static bool
split_escape(struct split_scan *sc)
{
    char c;

    if (++sc->p >= sc->end)
        return false;
    c = *sc->p;
    /* Back references, \K, \G, and \Q...\E which hides a '|'. */
    if (pf_is_digit(c) || c == 'g' || c == 'k' || c == 'K' || c == 'G' || c == 'Q' || c == 'E')
        return false;
    /* \c takes the byte after it, even a '|', ')' or ']'. */
    if (c == 'c' && ++sc->p >= sc->end)
        return false;
    return true;
}

/* A byte inside a character class: only its end matters. */
static void
split_class_byte(struct split_scan *sc)
{
    const char *p = sc->p, *end = sc->end;

    if (*p == '[' && p + 1 < end && (p[1] == ':' || p[1] == '.' || p[1] == '=')) {
        const char *q = rule_prefix_posix_end(p, end);

        /* On its last byte, the ']': the loop steps past it. */
        if (q != NULL)
            sc->p = q - 1;
    } else if (*p == ']') {
        sc->in_class = false;
    }
}

/* The start of a class, p at its '['. */
static void
split_class_open(struct split_scan *sc)
{
    sc->in_class = true;
    if (sc->p + 1 < sc->end && sc->p[1] == '^')
        sc->p++;
    /* A ']' first in a class is a literal. */
    if (sc->p + 1 < sc->end && sc->p[1] == ']')
        sc->p++;
}

/* After "(?" at p: a construct that keeps the pattern whole, or an option
 * group that turns on x mode or sets options at the top level. */
static bool
split_group_whole(const struct split_scan *sc)
{
    const char *p = sc->p, *end = sc->end;
    char q = p[2];
    bool setting, x;

    if (q == '(' || q == '|' || q == 'R' || q == '&' || q == 'P' || q == '+' || q == '#' ||
        q == 'C' || pf_is_digit(q) || (q == '-' && p + 3 < end && pf_is_digit(p[3])))
        return true;
    return option_group(p + 2, end, &setting, &x) && (x || (setting && sc->depth == 0));
}

/* A group's '(' at p. False when the pattern cannot be cut. */
static bool
split_group_open(struct split_scan *sc)
{
    const char *p = sc->p, *end = sc->end;

    if (p + 1 < end && p[1] == '*')
        return false;
    if (p + 1 < end && p[1] == '?' && p + 2 < end && split_group_whole(sc))
        return false;
    return ++sc->depth <= PF_DEPTH_MAX;
}

/* A byte outside any class. A top-level '|' ends an alternative, added to
 * ret. False when the pattern cannot be cut, with *r set when that is
 * for want of memory. */
static bool
split_top_byte(struct split_scan *sc, struct strv *ret, int *r)
{
    switch (*sc->p) {
    case '[':
        split_class_open(sc);
        return true;
    case '(':
        return split_group_open(sc);
    case ')':
        if (sc->depth == 0)
            return false;
        sc->depth--;
        return true;
    case '|':
        if (sc->depth > 0)
            return true;
        *r = strv_add(ret, sc->start, (size_t)(sc->p - sc->start), PF_REQ_MAX);
        if (*r < 0)
            return false;
        sc->start = sc->p + 1;
        return true;
    default:
        return true;
    }
}

int
rule_prefilter_split_alternatives(const char *src, size_t len, uint32_t options, struct strv *ret)
{
    struct split_scan sc = {.p = src, .end = src + len, .start = src};
    int r = 0;

    memset(ret, 0, sizeof(*ret));
    if ((options & (PCRE2_EXTENDED | PCRE2_EXTENDED_MORE | PCRE2_LITERAL)) != 0)
        return 0;
    for (; sc.p < sc.end; sc.p++) {
        if (*sc.p == '\\') {
            if (!split_escape(&sc))
                goto none;
        } else if (sc.in_class) {
            split_class_byte(&sc);
        } else if (!split_top_byte(&sc, ret, &r)) {
            goto none;
        }
    }
    if (sc.depth != 0 || sc.in_class || ret->n == 0)
        goto none;
    r = strv_add(ret, sc.start, (size_t)(sc.end - sc.start), PF_REQ_MAX);
    if (r < 0)
        goto none;
    return 0;
none:
    strv_release(ret);
    return r;
}
