/*
 * text_lines.c - index the lines of a text (text_lines.h).
 *
 * Limits: at most the caller's max lines. Ownership: the index is the
 * caller's to free and holds offsets only. Threading: no shared state.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "text_lines.h"

int
text_lines_split(const char *text, size_t len, size_t max, struct text_lines *ret, bool *cut)
{
    struct text_lines l = {0};
    size_t cap = 0, i = 0;

    *cut = false;
    while (i < len) {
        const char *nl = memchr(text + i, '\n', len - i);
        size_t n = nl ? (size_t)(nl - (text + i)) : len - i;

        if (l.n == max) {
            *cut = true;
            break;
        }
        if (l.n == cap) {
            size_t ncap = cap ? cap * 2 : 64;
            struct text_line *nv = realloc(l.v, ncap * sizeof(*nv));

            if (nv == NULL) {
                free(l.v);
                return -ENOMEM;
            }
            l.v = nv;
            cap = ncap;
        }
        l.v[l.n++] = (struct text_line){i, n};
        i += n + 1;
    }
    *ret = l;
    return 0;
}
