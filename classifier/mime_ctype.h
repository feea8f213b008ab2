/*
 * mime_ctype.h - a text/plain Content-Type of the usual shape read
 * without GMime (see mime_ctype.c).
 */
#ifndef SLOP_MIME_CTYPE_H
#define SLOP_MIME_CTYPE_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Whether the Content-Type value raw[0..n) names text/plain without a
 * file name (*plain), and its charset parameter (*charset, to free; NULL
 * when it has none), read here when the value has the shape most mail
 * gives it: "text/plain" and parameters whose values are tokens or
 * quoted strings without escapes. Returns 1 then, 0 when the value has
 * another shape (comments, RFC 2231, a second charset...) and GMime must
 * read it, -ENOMEM. Tests compare it with GMime's reading.
 */
int mime_ctype_plain(const char *raw, size_t n, bool *plain, char **charset);

#endif
