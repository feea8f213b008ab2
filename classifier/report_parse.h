/*
 * report_parse.h - read a report into the message model: its prose apart
 * from its code and traces, and the facts a maintainer looks for first
 * (versions, function names, source paths, CONFIG_ symbols, URLs).
 */
#ifndef SLOP_REPORT_PARSE_H
#define SLOP_REPORT_PARSE_H

#include <stdbool.h>
#include <stddef.h>

#include "classifier.h"
#include "message.h"
#include "text_lines.h"

/* Split prose from code and traces, extract versions, identifiers and
 * URLs from text[0..len) (own text, quotes removed) into m. 0 or -ENOMEM. */
int report_parse(struct message *m, const char *text, size_t len,
                 const struct classifier_limits *limits);
/* report_parse() with the lines of text already indexed, as for
 * patch_parse_lines(); lines NULL indexes them here. */
int report_parse_lines(struct message *m, const char *text, size_t len,
                       const struct text_lines *lines, const struct classifier_limits *limits);

#endif
