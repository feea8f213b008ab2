/*
 * reply_text.h - text helpers shared by the reply modules (internal to
 * milter/reply_*.c; the public API is reply.h).
 *
 * struct reply_buf is a growing string with a sticky error that never
 * exceeds REPLY_MESSAGE_MAX; the cleaners turn input-driven text into
 * single lines of valid UTF-8 with no control characters. All pure
 * functions, thread-safe.
 */
#ifndef SLOP_MILTER_REPLY_TEXT_H
#define SLOP_MILTER_REPLY_TEXT_H

#include <stdbool.h>
#include <stddef.h>

#include "reply.h"

#define REPLY_LINE_MAX 998 /* RFC 5322 line limit, template lines too */
#define REPLY_HOST_MAX 253

struct reply_buf {
    char *p;
    size_t len;
    size_t cap;
    int err;
};

void reply_buf_add(struct reply_buf *b, const char *s, size_t n);
void reply_buf_adds(struct reply_buf *b, const char *s);
void reply_buf_printf(struct reply_buf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Length of the valid UTF-8 sequence at s (at most n bytes), 0 if none. */
size_t reply_utf8_seq(const unsigned char *s, size_t n);

/* Append s as one clean line of at most max bytes; returns bytes appended. */
size_t reply_clean(struct reply_buf *b, const char *s, size_t max);

/* reply_clean() into a new string (free()); NULL on ENOMEM. */
char *reply_clean_dup(const char *s, size_t max);

/* Mail text made fit to show as quoted data (links removed, cut to max
 * bytes); a new string (free()), NULL on ENOMEM. */
char *reply_quote_dup(const char *s, size_t max);

/* Append clean text wrapped at 72 columns, first line after first, the
 * others after indent; ends with a newline. */
void reply_wrap(struct reply_buf *b, const char *text, const char *first, const char *indent);

/* A usable address from s (with or without <>) into out; false if none. */
bool reply_addr(const char *s, char out[REPLY_ADDR_MAX + 1]);

/* given when it is a plain host name, else gethostname()'s, else
 * "localhost", into out. */
void reply_hostname(const char *given, char out[REPLY_HOST_MAX + 1]);

#endif
