/*
 * message_body.h - a mail's body text as the message model sees it: its
 * lines, the author's own apart from what is quoted, and the patch files
 * attached to it.
 */
#ifndef SLOP_MESSAGE_BODY_H
#define SLOP_MESSAGE_BODY_H

#include <stdbool.h>
#include <stddef.h>

#include "message_builder.h"
#include "text_lines.h"
#include "textbuf.h"

struct body_split {
    struct textbuf own;
    struct text_lines own_lines; /* the lines of own, for the parsers */
    struct textbuf quoted;
    unsigned quoted_lines;
    bool inline_diff;
};

/*
 * Split text into lines, at most *budget of them (decremented), each cut
 * to max_line bytes without splitting a UTF-8 sequence. Sets *trunc when
 * a cap cut something. *ret borrows from text; free ret->v. 0 or -ENOMEM.
 */
int message_body_lines(const char *text, size_t len, size_t max_line, unsigned *budget,
                       struct lines *ret, bool *trunc);

/*
 * Split the body's lines l into the author's own lines and quoted lines,
 * appended to bs. bs->own_lines.v must have room for l->n lines.
 * Attribution lines ("On ... wrote:") before a quote and everything own
 * after a signature separator are dropped. Once a diff starts, lines are
 * taken as they are: a diff context line may well begin with "  >".
 * 0 or -ENOMEM.
 */
int message_body_split(const struct lines *l, struct body_split *bs);

/* A git format-patch file: "From <sha> ..." or a Subject: line up top. */
bool message_body_format_patch(const struct lines *l);

/* Append the lines l of an attached patch to b; a format-patch file's
 * (format_patch) without its mail header block. 0 or -ENOMEM. */
int message_body_add_patch(struct textbuf *b, const struct lines *l, bool format_patch);

#endif
