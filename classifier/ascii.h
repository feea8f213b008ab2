/*
 * ascii.h - character classes of ASCII bytes, for the scans that run over
 * every byte of a text (report_parse.c, message.c, measure.c): a table
 * look-up is cheaper than range tests, and one table keeps them agreeing.
 * Bytes of 0x80 and above belong to no class. Also the byte searches the
 * line scanners share, and the AVX-512 lanes of lowered bytes that the
 * prefilter and the bug classes ask their filters of. Read-only;
 * thread-safe.
 */
#ifndef SLOP_ASCII_H
#define SLOP_ASCII_H

#include <ctype.h>
#include <stdbool.h>
#include <stddef.h>
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define ASCII_VECTOR 1
#endif

enum {
    ASCII_DIGIT = 1,
    ASCII_ALPHA = 2,
    ASCII_HEX = 4,
    ASCII_UNDER = 8,
};

extern const unsigned char ascii_class[256];

/* How many bytes of s[0..n) come before the first one of 0x80 or above
 * (n when there is none); eight bytes at a time. */
size_t ascii_prefix(const char *s, size_t n);

/* The first needle in s[0..n), or NULL (s for an empty needle), found by
 * memchr() to each candidate of needle[at] (at < strlen(needle)) and a
 * compare: on the short lines the classifier searches, memmem()'s set-up
 * costs more than the search, and a byte rarer in text than the first
 * ('x' of "next-") makes memchr() stop less often. */
const char *ascii_find_at(const char *s, size_t n, const char *needle, size_t at);

/* ascii_find_at() by the needle's first byte. */
const char *ascii_find(const char *s, size_t n, const char *needle);

/* The first "ab" in s[0..n), or NULL. */
const char *ascii_find_pair(const char *s, size_t n, char a, char b);

/* The first byte of p[0..end - p) that is the lower-case letter c in
 * either case, or NULL; sixteen bytes at a time where SSE2 is there. */
const char *ascii_find_letter(const char *p, const char *end, unsigned char c);

/* The first i in [from, to) where s[i] is a and s[i + 1] is b, or to; a
 * lower-case letter stands for both its cases, any other byte for itself.
 * s[to] must be readable. Sixteen positions at a time where SSE2 is
 * there: a pair of bytes stops far less often than one, and a literal of
 * two common letters ("ai") is otherwise a stop every few bytes. */
size_t ascii_find_pair_ci(const char *s, size_t from, size_t to, unsigned char a, unsigned char b);

/* True when s[0..len) holds U+212A (KELVIN SIGN) or U+017F (LONG S) in
 * UTF-8: the characters PCRE2 matches with k and s under caseless
 * matching, which a byte search for ASCII literals would miss. */
bool ascii_has_fold_chars(const char *s, size_t len);

/* The first needle[0..k) in s[0..n), ASCII case ignored (needle is in
 * lower case), or NULL; found as ascii_find_at() finds, by the bytes
 * needle[at] and needle[at + 1] (by needle[at] alone when at is its last
 * byte) in either case, then a compare. */
const char *ascii_find_ci_at(const char *s, size_t n, const char *needle, size_t k, size_t at);

/* *p and *len narrowed past the white space (isspace(), as the "C"
 * locale the library runs in has it) at both ends. */
static inline void
ascii_trim(const char **p, size_t *len)
{
    while (*len > 0 && isspace((unsigned char)**p)) {
        (*p)++;
        (*len)--;
    }
    while (*len > 0 && isspace((unsigned char)(*p)[*len - 1]))
        (*len)--;
}

static inline bool
ascii_is_digit(unsigned char c)
{
    return (ascii_class[c] & ASCII_DIGIT) != 0;
}

static inline bool
ascii_is_hex(unsigned char c)
{
    return (ascii_class[c] & ASCII_HEX) != 0;
}

/* Letters and digits. */
static inline bool
ascii_is_alnum(unsigned char c)
{
    return (ascii_class[c] & (ASCII_DIGIT | ASCII_ALPHA)) != 0;
}

/* Letters, digits and '_': a C identifier's characters, PCRE2's \w. */
static inline bool
ascii_is_word(unsigned char c)
{
    return (ascii_class[c] & (ASCII_DIGIT | ASCII_ALPHA | ASCII_UNDER)) != 0;
}

#ifdef ASCII_VECTOR
/* Whether this machine has what ascii_lanes_lower3() needs: AVX-512 F, BW
 * and VL (libgcc also checks that the kernel saves their registers). The
 * scans that use it keep a portable path, which tests compare with it. */
static inline bool
ascii_vector_ok(void)
{
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
           __builtin_cpu_supports("avx512vl");
}

/* The sixteen bytes at p, ASCII letters lowered, one per 32-bit lane. */
__attribute__((target("avx512f,avx512bw,avx512vl"), always_inline)) static inline __m512i
ascii_lanes_lowered(const char *p)
{
    __m128i b = _mm_loadu_si128((const __m128i *)(const void *)p);
    __mmask16 upper =
        _mm_cmp_epu8_mask(_mm_sub_epi8(b, _mm_set1_epi8('A')), _mm_set1_epi8(26), _MM_CMPINT_LT);

    return _mm512_cvtepu8_epi32(_mm_mask_add_epi8(b, upper, b, _mm_set1_epi8(0x20)));
}

/* For each of the sixteen positions p .. p + 15, its three bytes with
 * ASCII letters lowered, b0 << 16 | b1 << 8 | b2, one per 32-bit lane:
 * what a scalar scan that shifts one lowered byte in per position holds
 * in its low 24 bits. p[0..18) must lie in the text. */
__attribute__((target("avx512f,avx512bw,avx512vl"), always_inline)) static inline __m512i
ascii_lanes_lower3(const char *p)
{
    return _mm512_or_si512(_mm512_or_si512(_mm512_slli_epi32(ascii_lanes_lowered(p), 16),
                                           _mm512_slli_epi32(ascii_lanes_lowered(p + 1), 8)),
                           ascii_lanes_lowered(p + 2));
}
#endif

#endif
