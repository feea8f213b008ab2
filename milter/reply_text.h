/*
 * reply_text.h - text helpers shared by the reply modules (internal to
 * milter/reply_*.c; the public API is reply.h).
 *
 * The reply modules build text in struct textbuf (the kit's buffer, its
 * error sticky), capped at REPLY_MESSAGE_MAX by reply_buf_init(); the
 * cleaners turn input-driven text into single lines of valid UTF-8 with
 * no control characters. All pure functions, thread-safe.
 */
#ifndef SLOP_MILTER_REPLY_TEXT_H
#define SLOP_MILTER_REPLY_TEXT_H

#include <stdbool.h>
#include <stddef.h>

#include "reply.h"
#include "textbuf.h"

#define REPLY_LINE_MAX 998 /* RFC 5322 line limit, template lines too */
#define REPLY_HOST_MAX 253

/* An empty buffer for reply text: at most REPLY_MESSAGE_MAX bytes. */
void reply_buf_init(struct textbuf *b);

/* The buffer's error as the reply functions report it: -EMSGSIZE past
 * REPLY_MESSAGE_MAX (the kit says -E2BIG), else as it is. */
int reply_buf_err(const struct textbuf *b);

/* Length of the character at s (at most n bytes) that reply text may
 * carry: well-formed UTF-8 and no C1 control; 0 if none. */
size_t reply_char_len(const unsigned char *s, size_t n);

/* Append s as one clean line of at most max bytes; returns bytes appended. */
size_t reply_clean(struct textbuf *b, const char *s, size_t max);

/* reply_clean() into a new string (free()); NULL on ENOMEM. */
char *reply_clean_dup(const char *s, size_t max);

/* Mail text made fit to show as quoted data (links removed, cut to max
 * bytes); a new string (free()), NULL on ENOMEM. */
char *reply_quote_dup(const char *s, size_t max);

/* Append clean text wrapped at 72 columns, first line after first, the
 * others after indent; ends with a newline. */
void reply_wrap(struct textbuf *b, const char *text, const char *first, const char *indent);

/* A usable address from s (with or without <>) into out; false if none. */
bool reply_addr(const char *s, char out[REPLY_ADDR_MAX + 1]);

/* given when it is a plain host name, else gethostname()'s, else
 * "localhost", into out. */
void reply_hostname(const char *given, char out[REPLY_HOST_MAX + 1]);

#endif
