/*
 * textbuf.h - a growing, NUL-terminated text buffer.
 *
 * The parsers build region texts line by line with it. The buffer owns
 * p; textbuf_release() frees it, or the caller takes p over and resets
 * the buffer. Sizes are bounded by the callers' line and byte caps.
 */
#ifndef SLOP_TEXTBUF_H
#define SLOP_TEXTBUF_H

#include <stddef.h>

struct textbuf {
    char *p; /* NULL until the first add */
    size_t len;
    size_t cap;
};

/* Room for more bytes and a NUL without another allocation. 0 or -ENOMEM. */
int textbuf_reserve(struct textbuf *b, size_t more);
/* Append s[0..n); keeps p NUL-terminated. 0 or -ENOMEM. */
int textbuf_add(struct textbuf *b, const char *s, size_t n);
/* Append s[0..n) and a '\n'. 0 or -ENOMEM. */
int textbuf_line(struct textbuf *b, const char *s, size_t n);
/* The text so far, "" before the first add; borrowed from b. */
const char *textbuf_str(const struct textbuf *b);
/* Hand the text (possibly empty, never NULL but on -ENOMEM) and its
 * length over to the caller, and reset b. */
char *textbuf_steal(struct textbuf *b, size_t *ret_len);
void textbuf_release(struct textbuf *b);

#endif
