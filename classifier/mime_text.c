/*
 * mime_text.c - message text as the view keeps it: every string valid
 * UTF-8 (invalid bytes become U+FFFD, or the whole text is taken as
 * Latin-1), line ends '\n', no NUL bytes; a part converted from its
 * charset with iconv; header values unfolded. The byte loops here run
 * over every byte of every text part and header, so the plain-ASCII runs
 * go eight bytes at a time. No state; thread-safe.
 */
#include <errno.h>
#include <iconv.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <gmime/gmime.h>

#include "ascii.h"
#include "mime_text.h"
#include "textbuf.h"
#include "utf8.h"

/* End of the run of plain ASCII (no CR, no NUL) in u[i..n). Eight bytes
 * at a time: this runs over every byte of every text part and header. */
size_t
mime_text_ascii_run(const unsigned char *u, size_t i, size_t n)
{
    const uint64_t ones = 0x0101010101010101u, highs = 0x8080808080808080u;
    const uint64_t cr = 0x0d0d0d0d0d0d0d0du;

    while (n - i >= 8) {
        uint64_t x, y;

        memcpy(&x, u + i, 8);
        y = x ^ cr;
        /* A high bit flags a byte >= 0x80 (x), a zero byte (x - ones) or
         * a CR (y - ones); a subtraction flags no other byte but those
         * of 0x81 and above, which x flags anyway, and bytes after a
         * borrow, which come after a real flag. The byte loop below
         * finds the exact end. */
        if (((x | (x - ones) | (y - ones)) & highs) != 0)
            break;
        i += 8;
    }
    while (i < n && u[i] < 0x80 && u[i] != '\r' && u[i] != '\0')
        i++;
    return i;
}

/* End of the run in u[i..n) that mime_text_add() copies as it is: plain
 * ASCII and valid UTF-8 sequences. */
static size_t
text_run(const unsigned char *u, size_t i, size_t n)
{
    for (;;) {
        size_t k;

        i = mime_text_ascii_run(u, i, n);
        if (i == n || u[i] < 0x80 || (k = utf8_seq_len(u + i, n - i)) == 0)
            return i;
        i += k;
    }
}

/* The run s[i..j) as it stands, cut on a character's start at max bytes
 * of b: 0, 1 when it was cut, or -ENOMEM. */
static int
add_run(struct textbuf *b, const char *s, size_t i, size_t j, size_t max)
{
    size_t room = b->len < max ? max - b->len : 0;
    int r;

    if (j - i > room) {
        room = utf8_cut(s + i, j - i, room);
        r = textbuf_add(b, s + i, room);
        return r < 0 ? r : 1;
    }
    return textbuf_add(b, s + i, j - i);
}

/* The character at u[i] as UTF-8 into tmp (*tlen bytes): a valid
 * sequence as it is, an invalid byte as U+FFFD or, with inv
 * MIME_TEXT_INVALID_LATIN1, as its Latin-1 character. Returns the input
 * bytes it takes. */
static size_t
char_at(const unsigned char *u, size_t i, size_t n, enum mime_text_invalid inv, char tmp[4],
        size_t *tlen)
{
    static const char repl[] = "\xef\xbf\xbd";
    size_t k;

    /* A NUL becomes U+FFFD like an invalid byte, but must be caught
     * before utf8_seq_len(), which takes it as ASCII. */
    if (u[i] != '\0' && (k = utf8_seq_len(u + i, n - i)) > 0) {
        memcpy(tmp, u + i, k);
        *tlen = k;
        return k;
    }
    if (u[i] != '\0' && inv == MIME_TEXT_INVALID_LATIN1) {
        tmp[0] = (char)(0xc0 | (u[i] >> 6));
        tmp[1] = (char)(0x80 | (u[i] & 0x3f));
        *tlen = 2;
        return 1;
    }
    memcpy(tmp, repl, 3);
    *tlen = 3;
    return 1;
}

/*
 * Append s[0..n) to b as valid UTF-8 without CRs before LF and without NUL
 * bytes (a NUL would end the C string early). Invalid bytes are written
 * as inv says. Stops once b reaches max bytes, on a character boundary;
 * returns 1 when it stopped early.
 */
int
mime_text_add(struct textbuf *b, const char *s, size_t n, enum mime_text_invalid inv, size_t max)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t i = 0;
    int r;

    r = textbuf_reserve(b, n < max ? n : max);
    if (r < 0)
        return r;
    while (i < n) {
        char tmp[4];
        size_t tlen, j, k;

        /* Runs of text that stays as it is are copied whole: this is
         * most text. A cut backs off to the start of the character. */
        j = text_run(u, i, n);
        if (j > i) {
            r = add_run(b, s, i, j, max);
            if (r != 0)
                return r;
            i = j;
            continue;
        }
        if (u[i] == '\r' && (i + 1 == n || u[i + 1] == '\n')) {
            i++;
            continue;
        }
        k = char_at(u, i, n, inv, tmp, &tlen);
        if (b->len + tlen > max)
            return 1;
        r = textbuf_add(b, tmp, tlen);
        if (r < 0)
            return r;
        i += k;
    }
    return 0;
}

/* A valid UTF-8 copy of s[0..n) cut at max bytes; *cut tells if it was. */
char *
mime_text_dup(const char *s, size_t n, size_t max, bool *cut)
{
    struct textbuf b = {0};
    int r;

    if (s == NULL)
        s = "";
    r = mime_text_add(&b, s, n, MIME_TEXT_INVALID_REPLACE, max);
    if (r < 0) {
        free(b.p);
        return NULL;
    }
    if (r == 1 && cut != NULL)
        *cut = true;
    return textbuf_steal(&b, NULL);
}

/* True if the eight bytes at s are plain ASCII that unfolding keeps: no
 * tab, CR, LF or other control byte, no byte of 0x80 or above, and no two
 * spaces in a row among them. */
static bool
unfold_plain8(const char *s)
{
    const uint64_t ones = 0x0101010101010101u, highs = 0x8080808080808080u;
    uint64_t x, sp;

    memcpy(&x, s, 8);
    /* Any byte below 0x20 or of 0x80 and above. */
    if ((((x - 0x20 * ones) | x) & highs) != 0)
        return false;
    /* The high bit of each byte that is a space, exactly: no carries. */
    sp = x ^ (0x20 * ones);
    sp = ~(((sp & ~highs) + ~highs) | sp | ~highs);
    return (sp & (sp << 8)) == 0;
}

/* Unfold src[0..n) into dst (which may be src) and NUL-terminate it: CR,
 * LF and tab become spaces, runs of spaces one, none at either end.
 * Returns the length written; *eight_bit tells if src held a byte of 0x80
 * or above, which saves its callers a pass to find out. Folded fields
 * (Received:, DKIM-Signature:) are most header bytes, and most of their
 * bytes stay as they are: those go eight at a time. */
size_t
mime_text_unfold(char *dst, const char *src, size_t n, bool *eight_bit)
{
    size_t i = 0, j = 0;
    bool space = false;
    unsigned char any = 0;

    while (i < n) {
        size_t end;

        /* A space first in the eight must not follow one just written. */
        if (n - i >= 8 && j > 0 && !(space && src[i] == ' ') && unfold_plain8(src + i)) {
            space = src[i + 7] == ' ';
            memmove(dst + j, src + i, 8);
            i += 8;
            j += 8;
            continue;
        }
        /* Else these eight one at a time: the next eight may pass. */
        end = n - i >= 8 ? i + 8 : n;
        for (; i < end; i++) {
            unsigned char c = (unsigned char)src[i];

            any |= c;
            if (c > ' ' || (c != ' ' && c != '\t' && c != '\n' && c != '\r')) {
                dst[j++] = (char)c;
                space = false;
            } else if (!space && j > 0) {
                dst[j++] = ' ';
                space = true;
            }
        }
    }
    while (j > 0 && dst[j - 1] == ' ')
        j--;
    dst[j] = '\0';
    *eight_bit = any >= 0x80;
    return j;
}

bool
mime_text_ends_with_ci(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);

    return n >= k && strcasecmp(s + n - k, suffix) == 0;
}

static bool
charset_is_utf8ish(const char *cs)
{
    return cs == NULL || strcasecmp(cs, "utf-8") == 0 || strcasecmp(cs, "utf8") == 0 ||
           strcasecmp(cs, "us-ascii") == 0 || strcasecmp(cs, "ascii") == 0;
}

/*
 * True if cs writes every ASCII byte as itself, so that iconv from it is
 * the identity on ASCII text. Not windows-1258: glibc holds back a final
 * letter, waiting for a combining mark, and never gets a flush here.
 * Not Shift_JIS (yen sign), UTF-7/16/32, ISO-2022-*, EBCDIC and the like.
 */
static bool
charset_keeps_ascii(const char *cs)
{
    static const char *const numbered[] = {"iso-8859-", "iso8859-", "iso_8859-"};
    static const char *const names[] = {
        "windows-1250", "windows-1251", "windows-1252", "windows-1253", "windows-1254",
        "windows-1255", "windows-1256", "windows-1257", "cp1250",       "cp1251",
        "cp1252",       "cp1253",       "cp1254",       "cp1255",       "cp1256",
        "cp1257",       "koi8-r",       "koi8-u",       "gb2312",       "gbk",
        "gb18030",      "big5",         "euc-jp",       "euc-kr",       "euc-cn",
        "euc-tw"};

    for (size_t i = 0; i < sizeof(numbered) / sizeof(numbered[0]); i++) {
        size_t k = strlen(numbered[i]);

        if (strncasecmp(cs, numbered[i], k) == 0)
            return cs[k] != '\0' && strspn(cs + k, "0123456789") == strlen(cs + k);
    }
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (strcasecmp(cs, names[i]) == 0)
            return true;
    return false;
}

/* raw[0..n) through cd into conv until it holds max bytes; a byte iconv
 * cannot read becomes U+FFFD. *ret_left: the input bytes left unread;
 * *ret_failed: iconv stopped for another reason. 0 or -ENOMEM. */
static int
run_iconv(iconv_t cd, const char *raw, size_t n, size_t max, struct textbuf *conv, size_t *ret_left,
          bool *ret_failed)
{
    /* iconv() takes char ** but does not write through it. */
    char *in = (char *)(uintptr_t)raw;
    size_t inleft = n;
    int r;

    *ret_failed = false;
    r = textbuf_reserve(conv, n + n / 2 + 16);
    while (r >= 0 && inleft > 0 && conv->len < max) {
        char *o;
        size_t oleft, rc;

        r = textbuf_reserve(conv, inleft + 16);
        if (r < 0)
            break;
        o = conv->p + conv->len;
        oleft = conv->cap - conv->len - 1;
        rc = iconv(cd, &in, &inleft, &o, &oleft);
        conv->len = (size_t)(o - conv->p);
        if (rc != (size_t)-1)
            break;
        if (errno == E2BIG)
            continue;
        if (errno != EILSEQ && errno != EINVAL) {
            *ret_failed = true;
            break;
        }
        /* Skip the bad byte and mark it; EINVAL is a cut sequence. */
        r = textbuf_add(conv, "\xef\xbf\xbd", 3);
        in++;
        inleft--;
    }
    *ret_left = inleft;
    return r < 0 ? r : 0;
}

/*
 * Convert raw bytes in charset cs to UTF-8 into out, capped at max bytes.
 * Returns 1 when the cap cut it. A charset iconv does not know, or a
 * conversion that fails midway, falls back to the byte-level repair.
 */
int
mime_text_convert(const char *raw, size_t n, const char *cs, size_t max, struct textbuf *out)
{
    struct textbuf conv = {0};
    iconv_t cd = (iconv_t)-1;
    int r;

    if (!charset_is_utf8ish(cs)) {
        /* ASCII text in such a charset converts to itself: skip iconv.
         * Not with max 0, where the loop below reports a cut unread. */
        if (max > 0 && charset_keeps_ascii(cs) && ascii_prefix(raw, n) == n)
            return mime_text_add(out, raw, n, MIME_TEXT_INVALID_REPLACE, max);
        cd = g_mime_iconv_open("UTF-8", cs);
    }
    if (cd != (iconv_t)-1) {
        size_t inleft;
        bool failed;

        r = run_iconv(cd, raw, n, max, &conv, &inleft, &failed);
        if (r < 0)
            goto out;
        if (!failed) {
            r = mime_text_add(out, conv.p ? conv.p : "", conv.len, MIME_TEXT_INVALID_REPLACE, max);
            if (r == 0 && inleft > 0)
                r = 1;
            goto out;
        }
    }
    /* Unknown or unusable charset: UTF-8 if it validates, else Latin-1. */
    r = mime_text_add(out, raw, n, MIME_TEXT_INVALID_LATIN1, max);
out:
    if (cd != (iconv_t)-1)
        g_mime_iconv_close(cd);
    free(conv.p);
    return r;
}
