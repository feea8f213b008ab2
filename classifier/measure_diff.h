/*
 * measure_diff.h - the measures of a patch's added lines
 * (measure_diff.c). Pure functions of the message; thread-safe.
 */
#ifndef SLOP_MEASURE_DIFF_H
#define SLOP_MEASURE_DIFF_H

#include <stddef.h>

struct message;

struct measure_diff {
    size_t comment;   /* added comment lines */
    size_t code;      /* added lines of code, blank and RST lines aside */
    size_t restating; /* one-line comments that say what the next statement does */
    size_t heavy;     /* comment blocks of 3+ lines over one or two statements */
};

/* Adds the measures of m's added lines to *st, which starts zeroed. */
void measure_diff_compute(struct measure_diff *st, const struct message *m);

#endif
