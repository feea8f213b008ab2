/*
 * measure_prose.h - the prose measures of a message's regions
 * (measure_prose.c), as measure_compute() gathers them. Pure functions of
 * the regions; thread-safe.
 */
#ifndef SLOP_MEASURE_PROSE_H
#define SLOP_MEASURE_PROSE_H

#include <stdbool.h>
#include <stddef.h>

#include "measure_text.h"
#include "region.h"

struct message;

struct measure_prose {
    size_t words, lines, sections, facts_line;
    struct measure_marks marks;
    size_t markdown, md_lines;
};

/* Lines and checkpatch's long lines of a changelog. */
struct measure_log {
    size_t lines, long_lines;
    bool in_dump; /* inside a stack dump, whose lines are never long */
};

/* The region whose prose is measured: a patch's changelog, otherwise the
 * report region, or the body when that is blank. Borrowed from m. */
const struct region *measure_prose_region(const struct message *m);

/* The prose measures of r added to *st, Markdown included; with lg, r is
 * the changelog and its measures are taken in the same pass. */
void measure_prose_add(struct measure_prose *st, const struct region *r, struct measure_log *lg);

/* The changelog measures when it is not the prose; returns its words. */
size_t measure_prose_changelog(struct measure_log *lg, const struct region *r);

/* The Markdown lines of r added to *st (a patch's notes). */
void measure_prose_markdown(struct measure_prose *st, const struct region *r);

/* Lines of r with something other than white space. */
size_t measure_prose_nonblank(const struct region *r);

/* The code region's lines that are not blank, and of them those of a
 * trace, in one pass: a trace-heavy report's code region is most of it. */
void measure_prose_code(const struct region *r, size_t *nonblank, size_t *trace);

#endif
