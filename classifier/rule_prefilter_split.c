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

int
rule_prefilter_split_alternatives(const char *src, size_t len, uint32_t options, struct strv *ret)
{
    const char *p = src, *end = src + len, *start = src;
    unsigned depth = 0;
    bool in_class = false, setting, x;
    int r = 0;

    memset(ret, 0, sizeof(*ret));
    if ((options & (PCRE2_EXTENDED | PCRE2_EXTENDED_MORE | PCRE2_LITERAL)) != 0)
        return 0;
    for (; p < end; p++) {
        char c = *p;

        if (c == '\\') {
            if (++p >= end)
                goto none;
            c = *p;
            /* Back references, \K, \G, and \Q...\E which hides a '|'. */
            if (pf_is_digit(c) || c == 'g' || c == 'k' || c == 'K' || c == 'G' || c == 'Q' ||
                c == 'E')
                goto none;
            /* \c takes the byte after it, even a '|', ')' or ']'. */
            if (c == 'c' && ++p >= end)
                goto none;
            continue;
        }
        if (in_class) {
            if (c == '[' && p + 1 < end && (p[1] == ':' || p[1] == '.' || p[1] == '=')) {
                const char *q = rule_prefix_posix_end(p, end);

                /* On its last byte, the ']': the loop steps past it. */
                if (q != NULL)
                    p = q - 1;
            } else if (c == ']') {
                in_class = false;
            }
            continue;
        }
        switch (c) {
        case '[':
            in_class = true;
            if (p + 1 < end && p[1] == '^')
                p++;
            /* A ']' first in a class is a literal. */
            if (p + 1 < end && p[1] == ']')
                p++;
            break;
        case '(':
            if (p + 1 < end && p[1] == '*')
                goto none;
            if (p + 1 < end && p[1] == '?' && p + 2 < end) {
                char q = p[2];

                if (q == '(' || q == '|' || q == 'R' || q == '&' || q == 'P' || q == '+' ||
                    q == '#' || q == 'C' || pf_is_digit(q) ||
                    (q == '-' && p + 3 < end && pf_is_digit(p[3])))
                    goto none;
                if (option_group(p + 2, end, &setting, &x) && (x || (setting && depth == 0)))
                    goto none;
            }
            if (++depth > PF_DEPTH_MAX)
                goto none;
            break;
        case ')':
            if (depth == 0)
                goto none;
            depth--;
            break;
        case '|':
            if (depth > 0)
                break;
            r = strv_add(ret, start, (size_t)(p - start), PF_REQ_MAX);
            if (r < 0)
                goto none;
            start = p + 1;
            break;
        default:
            break;
        }
    }
    if (depth != 0 || in_class || ret->n == 0)
        goto none;
    r = strv_add(ret, start, (size_t)(end - start), PF_REQ_MAX);
    if (r < 0)
        goto none;
    return 0;
none:
    strv_release(ret);
    return r;
}
