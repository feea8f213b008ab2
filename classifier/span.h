/*
 * span.h - a borrowed piece of a text: a pointer and a length, no NUL
 * needed. The one span type of the tree; a span lives no longer than the
 * text it points into.
 */
#ifndef SLOP_SPAN_H
#define SLOP_SPAN_H

#include <stddef.h>

struct span {
    const char *p;
    size_t len;
};

#endif
