/*
 * message_builder.h - what the builders of a message share (private to
 * message_build.c, message_field.c, message_body.c, message_kind.c and
 * message_disclosure.c): spans of the mail's text, and the two ways a
 * region under construction grows and is handed to the message.
 *
 * Invariants: a span borrows from a text that outlives it and never
 * reaches past it. Threading: no shared state.
 */
#ifndef SLOP_MESSAGE_BUILDER_H
#define SLOP_MESSAGE_BUILDER_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <strings.h>

#include "region.h"
#include "span.h"
#include "textbuf.h"

/* Lines of one text, each without its '\n'; spans borrow from the text. */
struct lines {
    struct span *v;
    size_t n;
};

static inline bool
starts_ci(const char *s, size_t n, const char *prefix)
{
    size_t k = strlen(prefix);

    return n >= k && strncasecmp(s, prefix, k) == 0;
}

static inline bool
starts(const char *s, size_t n, const char *prefix)
{
    size_t k = strlen(prefix);

    return n >= k && memcmp(s, prefix, k) == 0;
}

static inline void
span_trim(struct span *s)
{
    while (s->len > 0 && (s->p[0] == ' ' || s->p[0] == '\t')) {
        s->p++;
        s->len--;
    }
    while (s->len > 0 &&
           (s->p[s->len - 1] == ' ' || s->p[s->len - 1] == '\t' || s->p[s->len - 1] == '\r'))
        s->len--;
}

/* Hand b's text to the region rg (whose old text is freed), "" when b is
 * empty; b is left empty. 0 or -ENOMEM. */
static inline int
region_take(struct region *rg, struct textbuf *b)
{
    if (b->p == NULL && textbuf_add(b, "", 0) < 0)
        return -ENOMEM;
    region_release(rg);
    rg->text = b->p;
    rg->len = b->len;
    memset(b, 0, sizeof(*b));
    return 0;
}

/* textbuf_line() with one size check and one copy: the body and header
 * regions are built a line at a time, and this is their inner loop. Most
 * lines fit the room left, which needs no call to find out. */
static inline int
add_line(struct textbuf *b, const char *s, size_t n)
{
    if (b->len + n + 2 > b->cap && textbuf_reserve(b, n + 1) < 0)
        return -ENOMEM;
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len++] = '\n';
    b->p[b->len] = '\0';
    return 0;
}

#endif
