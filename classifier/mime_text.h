/*
 * mime_text.h - message text as the view keeps it: valid UTF-8 without
 * CRs before LF or NUL bytes, converted from a part's charset, header
 * values unfolded. Used by the MIME view (mime_view.c) and its header
 * reader. No state; thread-safe.
 */
#ifndef SLOP_MIME_TEXT_H
#define SLOP_MIME_TEXT_H

#include <stdbool.h>
#include <stddef.h>

struct textbuf;

/* How mime_text_add() writes a byte that is not valid UTF-8. */
enum mime_text_invalid {
    MIME_TEXT_INVALID_REPLACE, /* U+FFFD */
    /* Latin-1 when the text holds any invalid sequence, which is known
     * at the first one met: before it there was nothing to convert, so
     * this equals deciding up front from a validating pass over all of
     * s, without that pass. */
    MIME_TEXT_INVALID_LATIN1,
};

/* End of the run of plain ASCII (no CR, no NUL) in u[i..n). */
size_t mime_text_ascii_run(const unsigned char *u, size_t i, size_t n);

/* Append s[0..n) to b as valid UTF-8 without CRs before LF and NUL bytes,
 * invalid bytes written as inv says, stopping on a character boundary
 * once b reaches max bytes. Returns 0, 1 when it stopped early, or
 * -ENOMEM. */
int mime_text_add(struct textbuf *b, const char *s, size_t n, enum mime_text_invalid inv,
                  size_t max);

/* A valid UTF-8 copy of s[0..n) cut at max bytes (malloc'd; NULL on
 * -ENOMEM); *cut tells if it was. */
char *mime_text_dup(const char *s, size_t n, size_t max, bool *cut);

/* Unfold src[0..n) into dst (which may be src), NUL-terminated: CR, LF
 * and tab become spaces, runs of spaces one, none at either end. Returns
 * the length; *eight_bit tells if src held a byte of 0x80 or above. */
size_t mime_text_unfold(char *dst, const char *src, size_t n, bool *eight_bit);

/* True when s ends with suffix, ASCII case ignored. */
bool mime_text_ends_with_ci(const char *s, const char *suffix);

/* raw[0..n) in charset cs (NULL: none given) as UTF-8 into out, capped at
 * max bytes. Returns 0, 1 when the cap cut it, or -ENOMEM. */
int mime_text_convert(const char *raw, size_t n, const char *cs, size_t max, struct textbuf *out);

#endif
