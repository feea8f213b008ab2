/*
 * mime_html.h - the text of an HTML part (see mime_html.c).
 */
#ifndef SLOP_MIME_HTML_H
#define SLOP_MIME_HTML_H

#include <stddef.h>

struct textbuf;

/* Append the text of the HTML s[0..n) (valid UTF-8) to out: tags out,
 * block tags as line breaks, comments, declarations, script and style
 * out, character references decoded. Returns 0 or -ENOMEM. */
int mime_html_to_text(const char *s, size_t n, struct textbuf *out);

#endif
