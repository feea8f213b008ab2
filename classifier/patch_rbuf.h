/*
 * patch_rbuf.h - a region of the message under construction while one
 * patch text is read (private to the patch_*.c readers): its text and, for
 * the diff regions, the map from each line to its file and line number.
 *
 * Ownership: an rbuf owns its text and map until patch_rbuf_finish()
 * hands them to the region; the map borrows the file names.
 */
#ifndef SLOP_PATCH_RBUF_H
#define SLOP_PATCH_RBUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "region.h"
#include "textbuf.h"

struct rbuf {
    struct textbuf text; /* the region's text, no cap of its own */
    struct region_line *lines;
    size_t n, lcap;
    bool map;
    bool no_nul;       /* the text lines come from holds no NUL to mend */
    size_t first_cap;  /* bytes of the first allocation, 0 for the default */
    size_t first_lcap; /* map entries of the first allocation, likewise */
};

/* Take over what region r already holds (a second patch text appends to
 * the first's), with a line map when map; r is left empty. */
void patch_rbuf_adopt(struct rbuf *rb, struct region *r, bool map);

/* Append line p[0..len) and a '\n' to rb (mapped to file and line when
 * the region keeps a line map). NULs in the line become spaces. 0 or
 * -ENOMEM. */
int patch_rbuf_add(struct rbuf *rb, const char *p, size_t len, const char *file, uint32_t line);

/* Hand rb's text (at least "") and map to region r; rb is left empty.
 * 0 or -ENOMEM. */
int patch_rbuf_finish(struct rbuf *rb, struct region *r);

/* Free what rb still owns. */
void patch_rbuf_release(struct rbuf *rb);

#endif
