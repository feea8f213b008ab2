/*
 * report_tally.c - a bounded counter per name: an open-addressing hash
 * table (FNV-1a, linear probing) that is never more than half full, so
 * every probe ends. Owns the names it copies.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "report_tally.h"

#define REPORT_TALLY_MAX_NAMES ((size_t)1 << 20)

static uint64_t
name_hash(const char *s, size_t n)
{
    uint64_t h = 14695981039346656037ull;

    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)s[i];
        h *= 1099511628211ull;
    }
    return h;
}

int
report_tally_init(struct report_tally *t, size_t max)
{
    size_t slots = 2;

    memset(t, 0, sizeof(*t));
    if (max == 0 || max > REPORT_TALLY_MAX_NAMES)
        return -EINVAL;
    while (slots < 2 * max)
        slots *= 2;
    t->v = calloc(slots, sizeof(*t->v));
    if (t->v == NULL)
        return -ENOMEM;
    t->slots = slots;
    t->max = max;
    return 0;
}

void
report_tally_release(struct report_tally *t)
{
    if (t == NULL || t->v == NULL)
        return;
    for (size_t i = 0; i < t->slots; i++)
        free(t->v[i].name);
    free(t->v);
    memset(t, 0, sizeof(*t));
}

int
report_tally_add(struct report_tally *t, const char *name, enum classifier_action action)
{
    size_t n = strnlen(name, REPORT_TALLY_NAME_MAX);
    size_t i = (size_t)name_hash(name, n) & (t->slots - 1);
    struct report_tally_entry *e;

    if ((unsigned)action >= CLASSIFIER_ACTION__COUNT)
        action = CLASSIFIER_ACTION_NONE;
    for (;; i = (i + 1) & (t->slots - 1)) {
        e = &t->v[i];
        if (e->name == NULL)
            break;
        if (strncmp(e->name, name, n) == 0 && e->name[n] == '\0')
            goto count;
    }
    if (t->n == t->max) {
        t->other++;
        return 0;
    }
    e->name = strndup(name, n);
    if (e->name == NULL)
        return -ENOMEM;
    t->n++;
count:
    e->n++;
    e->by_action[action]++;
    return 0;
}

static int
cmp_count(const void *a, const void *b)
{
    const struct report_tally_entry *x = a, *y = b;

    if (x->n != y->n)
        return x->n > y->n ? -1 : 1;
    return strcmp(x->name, y->name);
}

static int
cmp_name(const void *a, const void *b)
{
    const struct report_tally_entry *x = a, *y = b;

    return strcmp(x->name, y->name);
}

int
report_tally_sorted(const struct report_tally *t, bool by_name, struct report_tally_entry **ret_v,
                    size_t *ret_n)
{
    struct report_tally_entry *v;
    size_t n = 0;

    v = malloc((t->n ? t->n : 1) * sizeof(*v));
    if (v == NULL)
        return -ENOMEM;
    for (size_t i = 0; i < t->slots && n < t->n; i++)
        if (t->v[i].name != NULL)
            v[n++] = t->v[i];
    qsort(v, n, sizeof(*v), by_name ? cmp_name : cmp_count);
    *ret_v = v;
    *ret_n = n;
    return 0;
}
