/*
 * textbuf.c - a growing, NUL-terminated text buffer (see textbuf.h).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "textbuf.h"

int
textbuf_add(struct textbuf *b, const char *s, size_t n)
{
    if (n > SIZE_MAX / 2 - b->len)
        return -ENOMEM;
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        char *p;

        while (cap < b->len + n + 1)
            cap *= 2;
        p = realloc(b->p, cap);
        if (p == NULL)
            return -ENOMEM;
        b->p = p;
        b->cap = cap;
    }
    /* p is NULL only while cap is 0, so the realloc() above ran. */
    memcpy(b->p + b->len, s, n); // NOLINT(clang-analyzer-core.NonNullParamChecker)
    b->len += n;
    b->p[b->len] = '\0';
    return 0;
}

int
textbuf_line(struct textbuf *b, const char *s, size_t n)
{
    int r = textbuf_add(b, s, n);

    return r < 0 ? r : textbuf_add(b, "\n", 1);
}

const char *
textbuf_str(const struct textbuf *b)
{
    return b->p ? b->p : "";
}

void
textbuf_release(struct textbuf *b)
{
    if (b == NULL)
        return;
    free(b->p);
    b->p = NULL;
    b->len = b->cap = 0;
}
