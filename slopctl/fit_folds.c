/*
 * fit_folds.c - deal messages to cross-validation folds by whole source
 * (fit_folds.h). The order is a hash of each source and the seed, so the
 * same labels give the same folds, and the position of a message in the
 * labels file does not matter.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>

#include "fit_folds.h"

struct slot {
    uint64_t source;
    size_t i; /* the item */
};

struct source {
    uint64_t key; /* hash of source and seed: the order within a group */
    uint64_t source;
    uint32_t group;  /* the lowest of its items */
    size_t first, n; /* its run of slots */
};

static uint64_t
mix(uint64_t x)
{
    /* splitmix64's finaliser: every input bit reaches every output bit. */
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

static int
slot_cmp(const void *a, const void *b)
{
    const struct slot *x = a, *y = b;

    if (x->source != y->source)
        return x->source < y->source ? -1 : 1;
    return x->i < y->i ? -1 : x->i > y->i;
}

static int
source_cmp(const void *a, const void *b)
{
    const struct source *x = a, *y = b;

    if (x->group != y->group)
        return x->group < y->group ? -1 : 1;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return x->source < y->source ? -1 : x->source > y->source;
}

int
fit_folds_deal(const struct fit_folds_item *item, size_t n, unsigned k, uint64_t seed,
               unsigned *ret_fold, unsigned *ret_n_folds)
{
    struct slot *s = NULL;
    struct source *u = NULL;
    uint64_t salt = mix(seed + 0x9e3779b97f4a7c15ull);
    size_t n_src = 0, rank = 0;
    int r = 0;

    if (n == 0 || k == 1)
        return -EINVAL;
    s = malloc(n * sizeof(*s));
    u = malloc(n * sizeof(*u));
    if (s == NULL || u == NULL) {
        r = -ENOMEM;
        goto out;
    }
    for (size_t i = 0; i < n; i++)
        s[i] = (struct slot){item[i].source, i};
    qsort(s, n, sizeof(*s), slot_cmp);
    for (size_t j = 0; j < n; j++) {
        if (j == 0 || s[j].source != s[j - 1].source)
            u[n_src++] = (struct source){mix(s[j].source ^ salt), s[j].source, UINT32_MAX, j, 0};
        u[n_src - 1].n++;
        if (item[s[j].i].group < u[n_src - 1].group)
            u[n_src - 1].group = item[s[j].i].group;
    }
    if (n_src > UINT_MAX) {
        r = -E2BIG;
        goto out;
    }
    qsort(u, n_src, sizeof(*u), source_cmp);
    for (size_t q = 0; q < n_src; q++) {
        unsigned fold;

        rank = q > 0 && u[q].group == u[q - 1].group ? rank + 1 : 0;
        fold = k == 0 ? (unsigned)q : (unsigned)((rank + u[q].group) % k);
        for (size_t j = u[q].first; j < u[q].first + u[q].n; j++)
            ret_fold[s[j].i] = fold;
    }
    *ret_n_folds = k == 0 ? (unsigned)n_src : k;
out:
    free(s);
    free(u);
    return r;
}
