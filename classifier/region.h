/*
 * region.h - named regions of text that rules match against.
 *
 * A region is a NUL-terminated UTF-8 text buffer of '\n'-separated lines.
 * Regions built from a diff (added, removed, comments, context) also carry
 * a line map, so a match offset can be turned into "file:line" evidence.
 * A region owns its text and map; file names in the map are borrowed from
 * the patch model that built it.
 */
#ifndef SLOP_REGION_H
#define SLOP_REGION_H

#include <stddef.h>
#include <stdint.h>

enum region_id {
    REGION_SUBJECT = 0, /* decoded Subject */
    REGION_HEADERS,     /* all header fields, "Name: value" per line */
    REGION_BODY,        /* all inline text, quotes and signature removed */
    REGION_QUOTED,      /* quoted lines ("> ...") of the body, markers removed */
    REGION_CHANGELOG,   /* patch: commit log above trailers and "---" */
    REGION_TRAILERS,    /* patch: "Tag: value" lines of the log */
    REGION_NOTES,       /* patch: text between "---" and the diff, diffstat excluded */
    REGION_REPORT,      /* report/other/reply: body without code, trace and quotes */
    REGION_CODE,        /* report: code blocks and traces (Oops, KASAN, Call Trace) */
    REGION_ADDED,       /* patch: added lines, without the leading '+' */
    REGION_REMOVED,     /* patch: removed lines, without the leading '-' */
    REGION_CONTEXT,     /* patch: context lines */
    REGION_COMMENTS,    /* patch: added comment text (C, shell, Kconfig, Makefile, rst) */
    REGION_FILES,       /* patch: one changed path per line */
    REGION__COUNT,
};

struct region_line {
    size_t offset;    /* where the line starts in region text */
    const char *file; /* borrowed; NULL when the region has no file map */
    uint32_t line;    /* line number in the new (added/context) or old file */
};

struct region {
    char *text; /* never NULL once built: "" for an empty region */
    size_t len;
    struct region_line *lines; /* NULL unless the region has a line map */
    size_t n_lines;
};

const char *region_name(enum region_id id);
/* Returns 0 and sets *ret, or -EINVAL for an unknown name. */
int region_parse(const char *name, enum region_id *ret);

/* The map entry covering offset, or NULL when there is no map. */
const struct region_line *region_line_at(const struct region *r, size_t offset);

/* Line i of r's line map (i < r->n_lines), without its '\n': *ret_p
 * borrows from r->text. */
void region_line_text(const struct region *r, size_t i, const char **ret_p, size_t *ret_len);

void region_release(struct region *r);

#endif
