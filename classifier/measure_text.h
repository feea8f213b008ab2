/*
 * measure_text.h - the line and word helpers the measures share: a
 * region's text line by line, blank and prefix tests, and the counts of
 * words, columns and marked characters (measure_text.c). Pure functions
 * of their input; thread-safe.
 */
#ifndef SLOP_MEASURE_TEXT_H
#define SLOP_MEASURE_TEXT_H

#include <ctype.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "region.h"

/* A region's text not yet read; never NULL, "" when the region is empty. */
struct measure_text {
    const char *p, *end;
};

/* Em dashes, curly quotes and emoji: all multi-byte code points. */
struct measure_marks {
    size_t em_dashes, curly, emoji;
};

static inline struct measure_text
measure_text_of(const struct region *r)
{
    struct measure_text t = {"", ""};

    if (r->text != NULL) {
        t.p = r->text;
        t.end = r->text + r->len;
    }
    return t;
}

/* Next line of *t, without its '\n'; false at the end. */
static inline bool
measure_text_line(struct measure_text *t, const char **line, size_t *len)
{
    const char *nl;

    if (t->p >= t->end)
        return false;
    nl = memchr(t->p, '\n', (size_t)(t->end - t->p));
    *line = t->p;
    *len = nl ? (size_t)(nl - t->p) : (size_t)(t->end - t->p);
    t->p = nl ? nl + 1 : t->end;
    return true;
}

static inline bool
measure_text_blank(const char *p, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (!isspace((unsigned char)p[i]))
            return false;
    return true;
}

static inline bool
measure_text_has(const char *p, size_t len, const char *needle)
{
    return memmem(p, len, needle, strlen(needle)) != NULL;
}

static inline bool
measure_text_starts(const char *p, size_t len, const char *prefix)
{
    size_t n = strlen(prefix);

    return len >= n && memcmp(p, prefix, n) == 0;
}

/* Code points of p[0..len) as UTF-8, each invalid byte one. */
size_t measure_text_columns(const char *p, size_t len);

/* Words: runs of letters, digits and '_'; an apostrophe inside a word
 * ("don't", "kernel’s") does not split it. With mk (may be NULL), the
 * marked characters are counted on the way, so prose is decoded once,
 * not twice. */
size_t measure_text_words_marked(const char *p, size_t len, struct measure_marks *mk);
size_t measure_text_words(const char *p, size_t len);

#endif
