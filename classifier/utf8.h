/*
 * utf8.h - the one UTF-8 helper of the tree: how long the character at a
 * position is, how much of a text is valid, and where to cut a text so
 * that no character is split. Well-formed means as RFC 3629 has it: no
 * overlong form, no surrogate, nothing past U+10FFFF. Pure functions on
 * borrowed bytes; thread-safe.
 */
#ifndef SLOP_UTF8_H
#define SLOP_UTF8_H

#include <stddef.h>

/* Bytes in the well-formed character at s[0..n): 1 for any byte below
 * 0x80 (NUL too), 2 to 4 for a multi-byte one, 0 when there is none (or n
 * is 0). Inline: the text scans call it for every character. */
static inline size_t
utf8_seq_len(const unsigned char *s, size_t n)
{
    unsigned char c, lo = 0x80, hi = 0xbf;
    size_t len;

    if (n == 0)
        return 0;
    c = s[0];
    if (c < 0x80)
        return 1;
    if (c >= 0xc2 && c <= 0xdf)
        len = 2;
    else if (c >= 0xe0 && c <= 0xef)
        len = 3;
    else if (c >= 0xf0 && c <= 0xf4)
        len = 4;
    else
        return 0;
    /* The second byte's range rules out overlong forms (E0, F0), the
     * surrogates (ED) and code points past U+10FFFF (F4). */
    if (c == 0xe0)
        lo = 0xa0;
    else if (c == 0xed)
        hi = 0x9f;
    else if (c == 0xf0)
        lo = 0x90;
    else if (c == 0xf4)
        hi = 0x8f;
    if (n < len || s[1] < lo || s[1] > hi)
        return 0;
    for (size_t i = 2; i < len; i++)
        if (s[i] < 0x80 || s[i] > 0xbf)
            return 0;
    return len;
}

/* How many bytes of s[0..n) are well-formed UTF-8 from the start. */
size_t utf8_valid_prefix(const char *s, size_t n);

/* The length to keep of s[0..n) for at most max bytes: n when it fits,
 * else max backed off to the start of the character it would split, so
 * that the first byte left out is never a continuation byte. */
size_t utf8_cut(const char *s, size_t n, size_t max);

#endif
