/*
 * textbuf.c - the growing, capped text buffer (see textbuf.h for the
 * failure policy every caller relies on).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "textbuf.h"

#define TEXTBUF_FIRST 256 /* bytes of the first allocation */

void
textbuf_init(struct textbuf *b, size_t max)
{
    *b = (struct textbuf){.max = max};
}

static int
textbuf_fail(struct textbuf *b, int err)
{
    if (b->err == 0)
        b->err = err;
    return b->err;
}

/* Bytes that may still be added before len reaches max. */
static size_t
textbuf_room(const struct textbuf *b)
{
    return b->max == 0 ? SIZE_MAX / 2 - b->len : b->max - b->len;
}

/* Make the allocation hold need bytes (text and NUL). */
static int
textbuf_grow(struct textbuf *b, size_t need)
{
    size_t cap;
    char *p;

    if (need <= b->cap)
        return 0;
    cap = b->cap ? b->cap : TEXTBUF_FIRST;
    while (cap < need)
        cap *= 2;
    /* A capped buffer never holds more than its text can use. */
    if (b->max != 0 && cap > b->max + 1)
        cap = b->max + 1;
    p = realloc(b->p, cap);
    if (p == NULL)
        return textbuf_fail(b, -ENOMEM);
    b->p = p;
    b->cap = cap;
    return 0;
}

int
textbuf_reserve(struct textbuf *b, size_t more)
{
    if (b->err != 0)
        return b->err;
    if (more > textbuf_room(b))
        return textbuf_fail(b, b->max == 0 ? -ENOMEM : -E2BIG);
    return textbuf_grow(b, b->len + more + 1);
}

int
textbuf_add(struct textbuf *b, const char *s, size_t n)
{
    size_t room;
    int r;

    if (b->err != 0)
        return b->err;
    room = textbuf_room(b);
    if (n > room) {
        if (b->max == 0)
            return textbuf_fail(b, -ENOMEM);
        r = textbuf_add(b, s, room);
        return r < 0 ? r : textbuf_fail(b, -E2BIG);
    }
    r = textbuf_grow(b, b->len + n + 1);
    if (r < 0)
        return r;
    /* p is NULL only while cap is 0, so textbuf_grow() allocated it. */
    memcpy(b->p + b->len, s, n); // NOLINT(clang-analyzer-core.NonNullParamChecker)
    b->len += n;
    b->p[b->len] = '\0';
    return 0;
}

int
textbuf_adds(struct textbuf *b, const char *s)
{
    return textbuf_add(b, s, strlen(s));
}

int
textbuf_line(struct textbuf *b, const char *s, size_t n)
{
    int r = textbuf_add(b, s, n);

    return r < 0 ? r : textbuf_add(b, "\n", 1);
}

int
textbuf_vprintf(struct textbuf *b, const char *fmt, va_list ap)
{
    size_t room, want;
    va_list again;
    int w, r;

    if (b->err != 0)
        return b->err;
    va_copy(again, ap);
    w = vsnprintf(b->p ? b->p + b->len : NULL, b->p ? b->cap - b->len : 0, fmt, ap);
    if (w < 0) {
        r = textbuf_fail(b, -EINVAL);
        goto out;
    }
    room = textbuf_room(b);
    if (b->p != NULL && (size_t)w < b->cap - b->len && (size_t)w <= room) {
        b->len += (size_t)w;
        r = 0;
        goto out;
    }
    /* It did not fit: make room for what fits under max and write again. */
    want = (size_t)w < room ? (size_t)w : room;
    r = textbuf_grow(b, b->len + want + 1);
    if (r < 0)
        goto out;
    (void)vsnprintf(b->p + b->len, want + 1, fmt, again);
    b->len += want;
    r = want < (size_t)w ? textbuf_fail(b, b->max == 0 ? -ENOMEM : -E2BIG) : 0;
out:
    va_end(again);
    return r;
}

int
textbuf_printf(struct textbuf *b, const char *fmt, ...)
{
    va_list ap;
    int r;

    va_start(ap, fmt);
    r = textbuf_vprintf(b, fmt, ap);
    va_end(ap);
    return r;
}

const char *
textbuf_str(const struct textbuf *b)
{
    return b->p ? b->p : "";
}

char *
textbuf_steal(struct textbuf *b, size_t *ret_len)
{
    size_t max = b->max;
    char *p;

    if (b->err == -ENOMEM || (b->p == NULL && textbuf_grow(b, 1) < 0)) {
        textbuf_release(b);
        return NULL;
    }
    /* p is NULL only while cap is 0, so textbuf_grow() allocated it. */
    if (b->len == 0)
        b->p[0] = '\0'; // NOLINT(clang-analyzer-core.NullDereference)
    p = b->p;
    if (ret_len)
        *ret_len = b->len;
    textbuf_init(b, max);
    return p;
}

void
textbuf_release(struct textbuf *b)
{
    if (b == NULL)
        return;
    free(b->p);
    textbuf_init(b, b->max);
}
