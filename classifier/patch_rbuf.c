/*
 * patch_rbuf.c - grow a region line by line while a patch text is read
 * (patch_rbuf.h).
 *
 * Limits: a region holds lines of one patch text, which the parser has
 * already capped. Threading: no shared state.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "patch_rbuf.h"

void
patch_rbuf_adopt(struct rbuf *rb, struct region *r, bool map)
{
    /* The region's allocation holds at least its text and NUL; counting
     * only the text makes the next add grow it, as it must. */
    memset(&rb->text, 0, sizeof(rb->text));
    rb->text.p = r->text;
    rb->text.len = r->text ? r->len : 0;
    rb->text.cap = rb->text.len;
    rb->lines = r->lines;
    rb->n = r->n_lines;
    rb->lcap = r->n_lines;
    rb->map = map;
    r->text = NULL;
    r->lines = NULL;
    r->len = r->n_lines = 0;
}

/* Room for len more bytes, a '\n' and a NUL; the first allocation is
 * sized from the whole patch text (first_cap), not grown to it. */
static int
reserve_text(struct rbuf *rb, size_t len)
{
    /* Most lines fit: that test stays here, in the parser's loop. */
    if (rb->text.len + len + 2 <= rb->text.cap)
        return 0;
    if (rb->text.cap == 0 && rb->first_cap > 1 && textbuf_reserve(&rb->text, rb->first_cap - 1) < 0)
        return -ENOMEM;
    return textbuf_reserve(&rb->text, len + 1) < 0 ? -ENOMEM : 0;
}

/* The map entry of the line about to be written. */
static int
map_line(struct rbuf *rb, const char *file, uint32_t line)
{
    if (rb->n == rb->lcap) {
        size_t lcap = rb->lcap ? rb->lcap * 2 : rb->first_lcap ? rb->first_lcap : 64;
        struct region_line *l = realloc(rb->lines, lcap * sizeof(*l));

        if (l == NULL)
            return -ENOMEM;
        rb->lines = l;
        rb->lcap = lcap;
    }
    rb->lines[rb->n].offset = rb->text.len;
    rb->lines[rb->n].file = file;
    rb->lines[rb->n].line = line;
    return 0;
}

int
patch_rbuf_add(struct rbuf *rb, const char *p, size_t len, const char *file, uint32_t line)
{
    if (reserve_text(rb, len) < 0)
        return -ENOMEM;
    if (rb->map && map_line(rb, file, line) < 0)
        return -ENOMEM;
    rb->n++;
    /* A NUL inside a region would end it early for every regex. Copy
     * first and mend the (rare) NULs after: memchr() beats a byte loop. */
    if (len > 0) {
        char *d = rb->text.p + rb->text.len, *z = d;

        memcpy(d, p, len);
        while (!rb->no_nul && (z = memchr(z, '\0', len - (size_t)(z - d))) != NULL)
            *z++ = ' ';
        rb->text.len += len;
    }
    rb->text.p[rb->text.len++] = '\n';
    rb->text.p[rb->text.len] = '\0';
    return 0;
}

int
patch_rbuf_finish(struct rbuf *rb, struct region *r)
{
    if (rb->text.p == NULL) {
        rb->text.p = strdup("");
        if (rb->text.p == NULL)
            return -ENOMEM;
    }
    r->text = rb->text.p;
    r->len = rb->text.len;
    r->lines = rb->map ? rb->lines : NULL;
    r->n_lines = rb->map ? rb->n : 0;
    if (!rb->map)
        free(rb->lines);
    memset(rb, 0, sizeof(*rb));
    return 0;
}

void
patch_rbuf_release(struct rbuf *rb)
{
    textbuf_release(&rb->text);
    free(rb->lines);
    memset(rb, 0, sizeof(*rb));
}
