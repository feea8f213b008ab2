/*
 * ascii.c - the table behind ascii.h, and the scan for the first byte
 * that is not ASCII.
 */
#include <stdint.h>
#include <string.h>

#include "ascii.h"

const unsigned char ascii_class[256] = {
    ['0'] = ASCII_DIGIT | ASCII_HEX,
    ['1'] = ASCII_DIGIT | ASCII_HEX,
    ['2'] = ASCII_DIGIT | ASCII_HEX,
    ['3'] = ASCII_DIGIT | ASCII_HEX,
    ['4'] = ASCII_DIGIT | ASCII_HEX,
    ['5'] = ASCII_DIGIT | ASCII_HEX,
    ['6'] = ASCII_DIGIT | ASCII_HEX,
    ['7'] = ASCII_DIGIT | ASCII_HEX,
    ['8'] = ASCII_DIGIT | ASCII_HEX,
    ['9'] = ASCII_DIGIT | ASCII_HEX,
    ['A'] = ASCII_ALPHA | ASCII_HEX,
    ['B'] = ASCII_ALPHA | ASCII_HEX,
    ['C'] = ASCII_ALPHA | ASCII_HEX,
    ['D'] = ASCII_ALPHA | ASCII_HEX,
    ['E'] = ASCII_ALPHA | ASCII_HEX,
    ['F'] = ASCII_ALPHA | ASCII_HEX,
    ['G'] = ASCII_ALPHA,
    ['H'] = ASCII_ALPHA,
    ['I'] = ASCII_ALPHA,
    ['J'] = ASCII_ALPHA,
    ['K'] = ASCII_ALPHA,
    ['L'] = ASCII_ALPHA,
    ['M'] = ASCII_ALPHA,
    ['N'] = ASCII_ALPHA,
    ['O'] = ASCII_ALPHA,
    ['P'] = ASCII_ALPHA,
    ['Q'] = ASCII_ALPHA,
    ['R'] = ASCII_ALPHA,
    ['S'] = ASCII_ALPHA,
    ['T'] = ASCII_ALPHA,
    ['U'] = ASCII_ALPHA,
    ['V'] = ASCII_ALPHA,
    ['W'] = ASCII_ALPHA,
    ['X'] = ASCII_ALPHA,
    ['Y'] = ASCII_ALPHA,
    ['Z'] = ASCII_ALPHA,
    ['_'] = ASCII_UNDER,
    ['a'] = ASCII_ALPHA | ASCII_HEX,
    ['b'] = ASCII_ALPHA | ASCII_HEX,
    ['c'] = ASCII_ALPHA | ASCII_HEX,
    ['d'] = ASCII_ALPHA | ASCII_HEX,
    ['e'] = ASCII_ALPHA | ASCII_HEX,
    ['f'] = ASCII_ALPHA | ASCII_HEX,
    ['g'] = ASCII_ALPHA,
    ['h'] = ASCII_ALPHA,
    ['i'] = ASCII_ALPHA,
    ['j'] = ASCII_ALPHA,
    ['k'] = ASCII_ALPHA,
    ['l'] = ASCII_ALPHA,
    ['m'] = ASCII_ALPHA,
    ['n'] = ASCII_ALPHA,
    ['o'] = ASCII_ALPHA,
    ['p'] = ASCII_ALPHA,
    ['q'] = ASCII_ALPHA,
    ['r'] = ASCII_ALPHA,
    ['s'] = ASCII_ALPHA,
    ['t'] = ASCII_ALPHA,
    ['u'] = ASCII_ALPHA,
    ['v'] = ASCII_ALPHA,
    ['w'] = ASCII_ALPHA,
    ['x'] = ASCII_ALPHA,
    ['y'] = ASCII_ALPHA,
    ['z'] = ASCII_ALPHA,
};

size_t
ascii_prefix(const char *s, size_t n)
{
    size_t i = 0;

    while (n - i >= 8) {
        uint64_t x;

        memcpy(&x, s + i, 8);
        if ((x & UINT64_C(0x8080808080808080)) != 0)
            break;
        i += 8;
    }
    while (i < n && (unsigned char)s[i] < 0x80)
        i++;
    return i;
}

const char *
ascii_find_at(const char *s, size_t n, const char *needle, size_t at)
{
    size_t k = strlen(needle);
    const char *p = s + at;

    if (k == 0 || n < k)
        return k == 0 ? s : NULL;
    while ((p = memchr(p, needle[at], (size_t)(s + n - k + at + 1 - p))) != NULL) {
        if (memcmp(p - at, needle, k) == 0)
            return p - at;
        p++;
    }
    return NULL;
}

const char *
ascii_find(const char *s, size_t n, const char *needle)
{
    return ascii_find_at(s, n, needle, 0);
}

const char *
ascii_find_pair(const char *s, size_t n, char a, char b)
{
    const char *q = s;

    if (n < 2)
        return NULL;
    while ((q = memchr(q, a, (size_t)(s + n - 1 - q))) != NULL) {
        if (q[1] == b)
            return q;
        q++;
    }
    return NULL;
}
