/*
 * report_escape.h - write text from mail into the HTML report so that it
 * stays text: the one escaper report_html.c and report_svg.c use for every
 * string, in element content and in double-quoted attribute values alike.
 *
 * & < > " ' become character references, so no tag, attribute, comment or
 * end of a <style> or <script> can start. Bytes that are not valid UTF-8,
 * C0 and C1 control characters, DEL and the bidirectional overrides and
 * isolates (which could reorder what a moderator reads) become U+FFFD; a
 * tab becomes a space, a newline too unless the caller keeps newlines.
 * Stateless; thread-safe as far as the stream is.
 */
#ifndef SLOPCTL_REPORT_ESCAPE_H
#define SLOPCTL_REPORT_ESCAPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/*
 * Write at most cap bytes of s (NUL-terminated; NULL writes nothing)
 * escaped to f; when s is longer, cut before a whole character and write
 * U+2026 after it. keep_newlines keeps '\n' (for white-space: pre-wrap).
 */
void report_escape(FILE *f, const char *s, size_t cap, bool keep_newlines);

#endif
