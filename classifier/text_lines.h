/*
 * text_lines.h - where the lines of a text start and end.
 *
 * message_build() indexes the author's own text while it writes it, so
 * that patch_parse_lines() and report_parse_lines() need not look for its
 * '\n's again; text_lines_split() indexes a text the parsers are given
 * without one. An index holds offsets, not pointers: it borrows nothing.
 */
#ifndef SLOP_TEXT_LINES_H
#define SLOP_TEXT_LINES_H

#include <stdbool.h>
#include <stddef.h>

/* Line i is text[v[i].off .. v[i].off + v[i].len), without its '\n' (a
 * '\r' before it is kept). */
struct text_line {
    size_t off, len;
};

struct text_lines {
    struct text_line *v;
    size_t n;
};

/* Index the lines of text[0..len) into *ret (free ret->v), at most max of
 * them; sets *cut when text is left after those. 0 or -ENOMEM. */
int text_lines_split(const char *text, size_t len, size_t max, struct text_lines *ret, bool *cut);

#endif
