/*
 * measure_text.c - words, columns and marked characters of a line, for
 * the measures.
 *
 * Words are counted eight ASCII bytes at a time and the rest is decoded
 * as UTF-8 once, the marked characters (em dashes, curly quotes, emoji)
 * taken on the way. Nothing here allocates or reads past len.
 * Threading: no shared state.
 */
#include <stdbool.h>
#include <stdint.h>

#include "ascii.h"
#include "measure_text.h"

/* Decode one UTF-8 code point; invalid bytes come back as U+FFFD. */
static uint32_t
utf8_next(const char **pp, const char *end)
{
    const unsigned char *p = (const unsigned char *)*pp;
    uint32_t c = p[0];
    size_t n, i;

    if (c < 0x80) {
        *pp += 1;
        return c;
    }
    if ((c & 0xE0) == 0xC0) {
        n = 1;
        c &= 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
        n = 2;
        c &= 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
        n = 3;
        c &= 0x07;
    } else {
        *pp += 1;
        return 0xFFFD;
    }
    if ((size_t)(end - *pp) < n + 1) {
        *pp += 1;
        return 0xFFFD;
    }
    for (i = 1; i <= n; i++) {
        if ((p[i] & 0xC0) != 0x80) {
            *pp += 1;
            return 0xFFFD;
        }
        c = (c << 6) | (p[i] & 0x3F);
    }
    *pp += n + 1;
    return c;
}

size_t
measure_text_columns(const char *p, size_t len)
{
    const char *end = p + len;
    size_t n = 0;

    while (p < end) {
        utf8_next(&p, end);
        n++;
    }
    return n;
}

static bool
is_emoji(uint32_t c)
{
    return (c >= 0x1F000 && c <= 0x1F2FF) || (c >= 0x1F300 && c <= 0x1FAFF) ||
           (c >= 0x2600 && c <= 0x27BF) || c == 0x2B50 || c == 0x2B55 || c == 0x231A ||
           c == 0x231B || (c >= 0x23E9 && c <= 0x23F3);
}

/* Letters outside ASCII: everything from Latin-1 letters up, except the
 * punctuation, symbol and pictograph blocks. */
static bool
is_word_cp(uint32_t c)
{
    /* isalnum() without the locale call: ASCII is the same everywhere. */
    if (c < 0x80)
        return (c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'z') || c == '_';
    if (c < 0xC0 || c == 0xD7 || c == 0xF7 || c == 0xFFFD)
        return false;
    if (c >= 0x2000 && c <= 0x2BFF)
        return false;
    if (c >= 0x3000 && c <= 0x303F)
        return false;
    if ((c >= 0xE000 && c <= 0xF8FF) || (c >= 0xFE00 && c <= 0xFE0F) || c == 0xFEFF)
        return false;
    return !is_emoji(c);
}

/* Em dashes, curly quotes and emoji: all multi-byte code points. */
static void
marks_add(struct measure_marks *mk, uint32_t c)
{
    if (c == 0x2014 || c == 0x2013)
        mk->em_dashes++;
    else if (c >= 0x2018 && c <= 0x201D && c != 0x201A && c != 0x201B)
        mk->curly++;
    else if (is_emoji(c))
        mk->emoji++;
}

/* UINT64_C(0x0101010101010101) * b: the byte b in every lane. */
#define LANES(b) (UINT64_C(0x0101010101010101) * (uint64_t)(b))

/* Eight bytes as one number, p[k] in bits 8k to 8k + 7 on any host.
 * Spelled out, compilers see one load here (on a little-endian host). */
static uint64_t
load_le64(const char *p)
{
    const unsigned char *u = (const unsigned char *)p;

    return (uint64_t)u[0] | (uint64_t)u[1] << 8 | (uint64_t)u[2] << 16 | (uint64_t)u[3] << 24 |
           (uint64_t)u[4] << 32 | (uint64_t)u[5] << 40 | (uint64_t)u[6] << 48 |
           (uint64_t)u[7] << 56;
}

/* The lanes of x, eight ASCII bytes, that are c: the top bit of each such
 * lane set. Below 0x80, adding 0x7f to a byte sets its top bit exactly
 * when it is not zero, and carries into no other lane. */
static uint64_t
lanes_eq(uint64_t x, unsigned char c)
{
    return ~((x ^ LANES(c)) + LANES(0x7f)) & LANES(0x80);
}

/* The lanes of x, eight ASCII bytes, that are word bytes (letters,
 * digits, '_'): a byte is lo or above when adding 0x80 - lo sets its top
 * bit, again without a carry into the next lane. */
static uint64_t
word_lanes(uint64_t x)
{
    uint64_t l = x | LANES(0x20); /* a letter's two cases alike */
    uint64_t digit = (x + LANES(0x80 - '0')) & ~(x + LANES(0x80 - '9' - 1));
    uint64_t alpha = (l + LANES(0x80 - 'a')) & ~(l + LANES(0x80 - 'z' - 1));

    return ((digit | alpha) & LANES(0x80)) | lanes_eq(x, '_');
}

/* Words starting in the ASCII bytes p[0..n), byte by byte and without
 * branches: boundaries come every few bytes. *in tells whether a word
 * runs into p[0] and, on return, out of p[n - 1]. */
static size_t
ascii_words_bytes(const char *p, size_t n, bool *in)
{
    size_t words = 0;
    bool w_in = *in;

    for (size_t i = 0; i < n; i++) {
        unsigned char a = (unsigned char)p[i];
        bool w = ascii_is_word(a);

        words += (size_t)(w & !w_in);
        w_in = w | (w_in & (a == '\''));
    }
    *in = w_in;
    return words;
}

/* ascii_words_bytes() eight bytes a step: a word starts in each lane
 * that is a word byte and follows none. An apostrophe, which keeps a word
 * going, is rare enough to send its eight bytes to the byte loop. */
static size_t
ascii_words(const char *p, size_t n, bool *in)
{
    size_t words = 0, i = 0;

    for (; n - i >= 8; i += 8) {
        uint64_t x = load_le64(p + i), w, starts;

        if (lanes_eq(x, '\'') != 0) {
            words += ascii_words_bytes(p + i, 8, in);
            continue;
        }
        w = word_lanes(x);
        starts = w & ~(w << 8 | (*in ? UINT64_C(0x80) : 0));
        words += (size_t)(((starts >> 7) * LANES(1)) >> 56);
        *in = (w >> 63) != 0;
    }
    return words + ascii_words_bytes(p + i, n - i, in);
}

size_t
measure_text_words_marked(const char *p, size_t len, struct measure_marks *mk)
{
    const char *end = p + len;
    bool in = false;
    size_t n = 0;

    while (p < end) {
        /* ASCII needs no decoding: most prose is all of it. */
        size_t run = ascii_prefix(p, (size_t)(end - p));
        uint32_t c;

        n += ascii_words(p, run, &in);
        p += run;
        if (p == end)
            break;
        c = utf8_next(&p, end);
        if (mk != NULL)
            marks_add(mk, c);
        if (is_word_cp(c)) {
            if (!in)
                n++;
            in = true;
        } else if (!(in && (c == '\'' || c == 0x2019))) {
            in = false;
        }
    }
    return n;
}

size_t
measure_text_words(const char *p, size_t len)
{
    return measure_text_words_marked(p, len, NULL);
}
