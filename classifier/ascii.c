/*
 * ascii.c - the table behind ascii.h, the scan for the first byte that
 * is not ASCII, and the byte searches.
 */
#include <stdint.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

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

const char *
ascii_find_letter(const char *p, const char *end, unsigned char c)
{
#ifdef __SSE2__
    const __m128i want = _mm_set1_epi8((char)c), fold = _mm_set1_epi8(0x20);

    for (; end - p >= 16; p += 16) {
        __m128i x = _mm_loadu_si128((const __m128i *)(const void *)p);
        unsigned hit = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_or_si128(x, fold), want));

        if (hit != 0)
            return p + __builtin_ctz(hit);
    }
#endif
    for (; p < end; p++)
        if (((unsigned char)*p | 0x20u) == c)
            return p;
    return NULL;
}

#ifdef ASCII_VECTOR
/* ascii_find_pair_ci() 64 positions at a time, from *i while 64 or more
 * are left; true with *i at the pair found, false with *i where fewer
 * are left. fa and fb are the case bits that the letters a and b fold. */
__attribute__((target("avx512f,avx512bw"))) static bool
find_pair_ci64(const char *s, size_t *i, size_t to, unsigned char a, unsigned char b,
               unsigned char fa, unsigned char fb)
{
    const __m512i va = _mm512_set1_epi8((char)a), vb = _mm512_set1_epi8((char)b);
    const __m512i ma = _mm512_set1_epi8((char)fa), mb = _mm512_set1_epi8((char)fb);

    for (; to - *i >= 64; *i += 64) {
        __m512i x = _mm512_loadu_si512((const void *)(s + *i));
        __m512i y = _mm512_loadu_si512((const void *)(s + *i + 1));
        uint64_t hit = _mm512_cmpeq_epi8_mask(_mm512_or_si512(x, ma), va) &
                       _mm512_cmpeq_epi8_mask(_mm512_or_si512(y, mb), vb);

        if (hit != 0) {
            *i += (size_t)__builtin_ctzll(hit);
            return true;
        }
    }
    return false;
}
#endif

size_t
ascii_find_pair_ci(const char *s, size_t from, size_t to, unsigned char a, unsigned char b)
{
    unsigned char fa = a >= 'a' && a <= 'z' ? 0x20 : 0, fb = b >= 'a' && b <= 'z' ? 0x20 : 0;
    size_t i = from;

#ifdef ASCII_VECTOR
    /* libgcc reads the CPU's features before main(); this only tests them. */
    if (i < to && to - i >= 64 && __builtin_cpu_supports("avx512bw") &&
        find_pair_ci64(s, &i, to, a, b, fa, fb))
        return i;
#endif

#ifdef __SSE2__
    const __m128i va = _mm_set1_epi8((char)a), vb = _mm_set1_epi8((char)b);
    const __m128i ma = _mm_set1_epi8((char)fa), mb = _mm_set1_epi8((char)fb);

    for (; i < to && to - i >= 16; i += 16) {
        __m128i x = _mm_loadu_si128((const __m128i *)(const void *)(s + i));
        __m128i y = _mm_loadu_si128((const __m128i *)(const void *)(s + i + 1));
        unsigned hit = (unsigned)_mm_movemask_epi8(_mm_and_si128(
            _mm_cmpeq_epi8(_mm_or_si128(x, ma), va), _mm_cmpeq_epi8(_mm_or_si128(y, mb), vb)));

        if (hit != 0)
            return i + (size_t)__builtin_ctz(hit);
    }
#endif
    for (; i < to; i++)
        if (((unsigned char)s[i] | fa) == a && ((unsigned char)s[i + 1] | fb) == b)
            return i;
    return to;
}

bool
ascii_has_fold_chars(const char *s, size_t len)
{
    const char *p = s, *end = s + len;

    if (len == 0)
        return false;
    while ((p = memchr(p, 0xe2, (size_t)(end - p))) != NULL) {
        if (end - p >= 3 && (unsigned char)p[1] == 0x84 && (unsigned char)p[2] == 0xaa)
            return true;
        p++;
    }
    p = s;
    while ((p = memchr(p, 0xc5, (size_t)(end - p))) != NULL) {
        if (end - p >= 2 && (unsigned char)p[1] == 0xbf)
            return true;
        p++;
    }
    return false;
}

static bool
eq_ci(const char *text, const char *lower, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)text[i];

        if ((c >= 'A' && c <= 'Z' ? c | 0x20u : c) != (unsigned char)lower[i])
            return false;
    }
    return true;
}

const char *
ascii_find_ci_at(const char *s, size_t n, const char *needle, size_t k, size_t at)
{
    unsigned char c = (unsigned char)needle[at];
    bool letter = c >= 'a' && c <= 'z';
    const char *p, *end;

    if (k == 0 || n < k)
        return k == 0 ? s : NULL;
    if (at + 1 < k) {
        size_t to = n - k + at + 1, i = at;

        /* s[to] is readable: to + 1 <= n as at + 2 <= k. */
        for (; (i = ascii_find_pair_ci(s, i, to, c, (unsigned char)needle[at + 1])) < to; i++)
            if (eq_ci(s + i - at, needle, k))
                return s + i - at;
        return NULL;
    }
    p = s + at;
    end = s + (n - k) + at + 1;
    while (p < end) {
        p = letter ? ascii_find_letter(p, end, c) : memchr(p, c, (size_t)(end - p));
        if (p == NULL)
            return NULL;
        if (eq_ci(p - at, needle, k))
            return p - at;
        p++;
    }
    return NULL;
}
