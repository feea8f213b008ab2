/*
 * utf8.c - the UTF-8 helper (see utf8.h).
 */
#include "utf8.h"

size_t
utf8_valid_prefix(const char *s, size_t n)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t i = 0, k;

    while (i < n && (k = utf8_seq_len(u + i, n - i)) > 0)
        i += k;
    return i;
}

size_t
utf8_cut(const char *s, size_t n, size_t max)
{
    const unsigned char *u = (const unsigned char *)s;

    if (n <= max)
        return n;
    while (max > 0 && (u[max] & 0xc0) == 0x80)
        max--;
    return max;
}
