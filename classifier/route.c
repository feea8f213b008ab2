/*
 * route.c - report addresses: glob matching of recipients (route.h).
 *
 * The glob is the iterative one with a single backtrack point for the
 * last '*': no recursion, so a hostile pattern or address costs at most
 * the product of their lengths. No state; thread-safe.
 */
#include <string.h>

#include "route.h"

#define ROUTE_ADDR_MAX 320 /* bytes of an address compared; longer ones are cut */

static unsigned char
lower(unsigned char c)
{
    return c >= 'A' && c <= 'Z' ? (unsigned char)(c - 'A' + 'a') : c;
}

bool
route_glob_match(const char *pat, const char *s)
{
    const char *star = NULL, *resume = NULL;

    while (*s != '\0') {
        if (*pat == '*') {
            star = pat++;
            resume = s;
        } else if (*pat != '\0' &&
                   (*pat == '?' || lower((unsigned char)*pat) == lower((unsigned char)*s))) {
            pat++;
            s++;
        } else if (star != NULL) {
            pat = star + 1;
            s = ++resume;
        } else {
            return false;
        }
    }
    while (*pat == '*')
        pat++;
    return *pat == '\0';
}

/* The bare address of a recipient as an MTA or a header gives it. */
static void
bare_addr(const char *in, char *out, size_t size)
{
    const char *lt = strrchr(in, '<'), *end;
    size_t n;

    if (lt != NULL)
        in = lt + 1;
    while (*in == ' ' || *in == '\t')
        in++;
    end = lt != NULL ? strchr(in, '>') : NULL;
    n = end != NULL ? (size_t)(end - in) : strlen(in);
    while (n > 0 &&
           (in[n - 1] == ' ' || in[n - 1] == '\t' || in[n - 1] == '\r' || in[n - 1] == '\n'))
        n--;
    if (n >= size)
        n = size - 1;
    memcpy(out, in, n);
    out[n] = '\0';
}

bool
route_any_match(const char *const *patterns, size_t n_patterns, const char *const *addrs, size_t n)
{
    char addr[ROUTE_ADDR_MAX + 1];

    for (size_t i = 0; i < n; i++) {
        if (addrs[i] == NULL)
            continue;
        bare_addr(addrs[i], addr, sizeof(addr));
        if (addr[0] == '\0')
            continue;
        for (size_t k = 0; k < n_patterns; k++)
            if (patterns[k] != NULL && route_glob_match(patterns[k], addr))
                return true;
    }
    return false;
}
