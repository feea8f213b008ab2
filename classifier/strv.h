/*
 * strv.h - a growable, capped vector of owned strings.
 */
#ifndef SLOP_STRV_H
#define SLOP_STRV_H

#include <stdbool.h>
#include <stddef.h>

struct strv {
    char **v;
    size_t n;
    size_t cap;
};

/* Append a copy of s[0..len); -ENOMEM on failure, -E2BIG past max entries.
 * strv_add_unique() skips strings already present (exact match). */
int strv_add(struct strv *sv, const char *s, size_t len, size_t max);
int strv_add_unique(struct strv *sv, const char *s, size_t len, size_t max);
/* strv_add_unique() by the first byte first: for lists searched often. */
int strv_add_unique_first(struct strv *sv, const char *s, size_t len, size_t max);
bool strv_contains(const struct strv *sv, const char *s);
void strv_release(struct strv *sv);

#endif
