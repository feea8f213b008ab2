/*
 * patch_parser.h - what the readers of one patch text share (private to
 * patch_parse.c, patch_log.c, patch_diff.c and patch_subject.c): its lines,
 * the regions under construction, and the small span helpers they use.
 *
 * Invariants: a span never reaches past the patch text; lines[0..n) are
 * cut to the limits by patch_parse.c before any reader sees them.
 * Ownership: struct parser and its rbufs belong to one patch_parse_lines()
 * call; what a reader adds to m belongs to the message.
 * Threading: no shared state; each parser works on its own message.
 */
#ifndef SLOP_PATCH_PARSER_H
#define SLOP_PATCH_PARSER_H

#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ascii.h"
#include "message.h"
#include "message_note.h"
#include "patch_parse.h"
#include "patch_rbuf.h"
#include "text_lines.h"

/* One line of the patch text and its number: the line readers want both. */
struct patch_line {
    const char *p;
    size_t len;
    uint32_t lineno; /* 1-based in the patch text */
};

struct parser {
    struct message *m;
    const struct classifier_limits *limits;
    struct patch_line *lines;
    size_t n;
    struct rbuf rb[REGION__COUNT];
};

/* ---- small string helpers ---- */

static inline bool
span_starts(const struct patch_line *s, const char *prefix)
{
    size_t n = strlen(prefix);

    return s->len >= n && memcmp(s->p, prefix, n) == 0;
}

static inline bool
span_starts_ci(const char *p, size_t len, const char *prefix)
{
    size_t n = strlen(prefix);

    return len >= n && strncasecmp(p, prefix, n) == 0;
}

static inline bool
span_blank(const struct patch_line *s)
{
    for (size_t i = 0; i < s->len; i++)
        if (!isspace((unsigned char)s->p[i]))
            return false;
    return true;
}

static inline bool
is_word_token(const char *p, size_t len, const char *word)
{
    return strlen(word) == len && strncasecmp(p, word, len) == 0;
}

/* Make index n of *arr (elements of size sz) valid. Capacity is implied
 * by n (8, then powers of two), so a later call can keep appending.
 * Callers pass the address of a void * copy: no type punning. */
static inline int
grow_array(void **arr, size_t n, size_t sz)
{
    size_t cap;
    void *v;

    if (n == 0)
        cap = 8;
    else if (n >= 8 && (n & (n - 1)) == 0)
        cap = n * 2;
    else
        return 0;
    v = realloc(*arr, cap * sz);
    if (v == NULL)
        return -ENOMEM;
    *arr = v;
    return 0;
}

/* patch_log.c: the log lines [from, to) into the changelog and trailers
 * regions and m->trailers; the notes lines [from, to) (below "---") into
 * the notes region. Both note a diffstat in m->has_diffstat. */
int patch_log_parse(struct parser *ps, size_t from, size_t to);
int patch_log_notes(struct parser *ps, size_t from, size_t to);

/* patch_diff.c: the diff from line from on into m->files, m->hunks and the
 * added, removed, context and comments regions; then the paths of files
 * [first_file, m->n_files) into the files region, with their languages. */
int patch_diff_parse(struct parser *ps, size_t from);
int patch_diff_files(struct parser *ps, size_t first_file);

#endif
