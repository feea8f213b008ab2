/*
 * ascii.h - character classes of ASCII bytes, for the scans that run over
 * every byte of a text (report_parse.c, message.c, measure.c): a table
 * look-up is cheaper than range tests, and one table keeps them agreeing.
 * Bytes of 0x80 and above belong to no class. Also the byte searches the
 * line scanners share. Read-only; thread-safe.
 */
#ifndef SLOP_ASCII_H
#define SLOP_ASCII_H

#include <stdbool.h>
#include <stddef.h>

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

#endif
