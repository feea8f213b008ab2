/*
 * textbuf.h - the one growing, capped, NUL-terminated text buffer of the
 * tree (classifier, state, daemon and slopctl all use it).
 *
 * Failure policy (one for every user, as Postfix's VSTRING and curl's
 * dynbuf keep one): the first failure sticks. An append that runs out of
 * memory leaves the text as it was and sets err to -ENOMEM; an append
 * that would take len past max keeps the bytes that fit (the text is cut
 * at exactly max bytes) and sets err to -E2BIG; a bad format sets -EINVAL.
 * Once err is set, every append is a no-op that returns err, so a caller
 * may append a whole text and check once at the end; a caller that wants
 * the text cut at max takes it despite -E2BIG.
 *
 * The buffer owns p; textbuf_release() frees it, or textbuf_steal() hands
 * it over. A zeroed struct is an empty buffer without a cap of its own
 * (its callers cap their input); set max, or use textbuf_init(), for one.
 * Not thread-safe; one buffer belongs to one caller at a time.
 */
#ifndef SLOP_TEXTBUF_H
#define SLOP_TEXTBUF_H

#include <stdarg.h>
#include <stddef.h>

struct textbuf {
    char *p; /* NULL until the first add */
    size_t len;
    size_t cap; /* bytes allocated */
    size_t max; /* most bytes len may reach; 0: no cap of its own */
    int err;    /* 0, or the first failure: -ENOMEM, -E2BIG, -EINVAL */
};

/* An empty buffer of at most max bytes (0: no cap of its own). */
void textbuf_init(struct textbuf *b, size_t max);
/* Room for more bytes and a NUL without another allocation, so that a
 * caller may write them into p directly. 0 or err: -E2BIG when len + more
 * passes max, -ENOMEM; either sticks. */
int textbuf_reserve(struct textbuf *b, size_t more);
/* Append s[0..n); keeps p NUL-terminated. 0 or err (see above). */
int textbuf_add(struct textbuf *b, const char *s, size_t n);
/* Append the string s. */
int textbuf_adds(struct textbuf *b, const char *s);
/* Append s[0..n) and a '\n'. */
int textbuf_line(struct textbuf *b, const char *s, size_t n);
/* Append printf()'s output, cut at max like any append. */
int textbuf_printf(struct textbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int textbuf_vprintf(struct textbuf *b, const char *fmt, va_list ap)
    __attribute__((format(printf, 2, 0)));
/* The text so far, "" before the first add; borrowed from b. */
const char *textbuf_str(const struct textbuf *b);
/* Hand the text (possibly empty) and its length over to the caller (free()
 * it), and reset b to empty with the same max. NULL when err is -ENOMEM or
 * the empty text cannot be allocated; then b is released. Text cut by
 * -E2BIG is handed over as it is: check err first to refuse it. */
char *textbuf_steal(struct textbuf *b, size_t *ret_len);
/* Free the text and reset b to empty with the same max; NULL is fine. */
void textbuf_release(struct textbuf *b);

#endif
