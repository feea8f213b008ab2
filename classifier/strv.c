/*
 * strv.c - a growable, capped vector of owned strings.
 *
 * The vector owns every string; strv_release() frees them. The cap passed
 * to each add keeps input-driven lists bounded.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "strv.h"

static int
strv_grow(struct strv *sv)
{
    size_t cap = sv->cap ? sv->cap * 2 : 8;
    char **v;

    v = realloc(sv->v, cap * sizeof(*v));
    if (v == NULL)
        return -ENOMEM;
    sv->v = v;
    sv->cap = cap;
    return 0;
}

int
strv_add(struct strv *sv, const char *s, size_t len, size_t max)
{
    char *copy;
    int r;

    if (sv->n >= max)
        return -E2BIG;
    if (sv->n == sv->cap) {
        r = strv_grow(sv);
        if (r < 0)
            return r;
    }
    copy = strndup(s, len);
    if (copy == NULL)
        return -ENOMEM;
    sv->v[sv->n++] = copy;
    return 0;
}

bool
strv_contains(const struct strv *sv, const char *s)
{
    for (size_t i = 0; i < sv->n; i++)
        if (strcmp(sv->v[i], s) == 0)
            return true;
    return false;
}

int
strv_add_unique(struct strv *sv, const char *s, size_t len, size_t max)
{
    for (size_t i = 0; i < sv->n; i++)
        if (strncmp(sv->v[i], s, len) == 0 && sv->v[i][len] == '\0')
            return 0;
    return strv_add(sv, s, len, max);
}

void
strv_release(struct strv *sv)
{
    if (sv == NULL)
        return;
    for (size_t i = 0; i < sv->n; i++)
        free(sv->v[i]);
    free(sv->v);
    sv->v = NULL;
    sv->n = sv->cap = 0;
}

int
strv_add_unique_first(struct strv *sv, const char *s, size_t len, size_t max)
{
    /* strncmp() finds no match where the first bytes differ: most
     * entries of a list do, and are passed over without a call. */
    for (size_t i = 0; i < sv->n; i++)
        if ((len == 0 || sv->v[i][0] == s[0]) && strncmp(sv->v[i], s, len) == 0 &&
            sv->v[i][len] == '\0')
            return 0;
    return strv_add(sv, s, len, max);
}
