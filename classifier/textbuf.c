/*
 * textbuf.c - a growing, NUL-terminated text buffer (see textbuf.h).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "textbuf.h"

int
textbuf_reserve(struct textbuf *b, size_t more)
{
    size_t cap;
    char *p;

    if (more > SIZE_MAX / 2 - b->len)
        return -ENOMEM;
    if (b->len + more + 1 <= b->cap)
        return 0;
    cap = b->cap ? b->cap : 256;
    while (cap < b->len + more + 1)
        cap *= 2;
    p = realloc(b->p, cap);
    if (p == NULL)
        return -ENOMEM;
    b->p = p;
    b->cap = cap;
    return 0;
}

int
textbuf_add(struct textbuf *b, const char *s, size_t n)
{
    int r = textbuf_reserve(b, n);

    if (r < 0)
        return r;
    /* p is NULL only while cap is 0, so textbuf_reserve() allocated it. */
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

char *
textbuf_steal(struct textbuf *b, size_t *ret_len)
{
    char *p;

    if (b->p == NULL && textbuf_reserve(b, 0) < 0)
        return NULL;
    /* p is NULL only while cap is 0, so textbuf_reserve() allocated it. */
    if (b->len == 0)
        b->p[0] = '\0'; // NOLINT(clang-analyzer-core.NullDereference)
    p = b->p;
    if (ret_len)
        *ret_len = b->len;
    b->p = NULL;
    b->len = b->cap = 0;
    return p;
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
