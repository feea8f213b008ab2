/*
 * patch_parse.h - read a patch text into the message model: changelog,
 * trailers, notes, diffstat and diff (patch_parse.c with patch_log.c and
 * patch_diff.c; patch_subject.h reads the subject's tag).
 */
#ifndef SLOP_PATCH_PARSE_H
#define SLOP_PATCH_PARSE_H

#include <stddef.h>

#include "classifier.h"
#include "message.h"
#include "text_lines.h"

/* Parse a patch text (changelog, trailers, notes, diffstat, diff) from
 * text[0..len) into m; fills the patch regions and fields. 0 or -ENOMEM. */
int patch_parse(struct message *m, const char *text, size_t len,
                const struct classifier_limits *limits);
/* patch_parse() with the lines of text already indexed (all of them, as
 * text_lines_split() would find them); lines NULL indexes them here. */
int patch_parse_lines(struct message *m, const char *text, size_t len,
                      const struct text_lines *lines, const struct classifier_limits *limits);

#endif
