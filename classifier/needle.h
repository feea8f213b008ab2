/*
 * needle.h - a literal to search for, with its length, so a search over
 * many lines needs no strlen(): NEEDLE("Call Trace:") in a table. The
 * report parsers and the prose measures search with them.
 */
#ifndef SLOP_NEEDLE_H
#define SLOP_NEEDLE_H

#include <stddef.h>

struct needle {
    const char *s;
    size_t n;
};

#define NEEDLE(lit)                                                                                \
    {                                                                                              \
        lit, sizeof(lit) - 1                                                                       \
    }

#endif
