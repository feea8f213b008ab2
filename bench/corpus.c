/*
 * corpus.c - messages read into memory once for the timing programs.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "corpus.h"
#include "mailbox.h"

uint64_t
bench_now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int
collect(void *ctx, const struct mailbox_msg *m)
{
    struct bench_corpus *c = ctx;

    if (c->n >= c->max_messages || c->bytes + m->len > c->max_bytes)
        return -E2BIG;
    if (c->n == c->cap) {
        size_t cap = c->cap ? 2 * c->cap : 256;
        char **d = realloc(c->data, cap * sizeof(*d));
        size_t *l;

        if (d == NULL)
            return -ENOMEM;
        c->data = d;
        l = realloc(c->len, cap * sizeof(*l));
        if (l == NULL)
            return -ENOMEM;
        c->len = l;
        c->cap = cap;
    }
    c->data[c->n] = malloc(m->len ? m->len : 1);
    if (c->data[c->n] == NULL)
        return -ENOMEM;
    memcpy(c->data[c->n], m->data, m->len);
    c->len[c->n] = m->len;
    c->bytes += m->len;
    c->n++;
    return 0;
}

static void
collect_error(void *ctx, const char *file, size_t index, const char *reason)
{
    const struct bench_corpus *c = ctx;

    fprintf(stderr, "%s: %s[%zu]: %s\n", c->prog ? c->prog : "bench", file, index, reason);
}

int
bench_corpus_add_path(struct bench_corpus *c, const char *path)
{
    return mailbox_walk(path, 0, collect, collect_error, c);
}

void
bench_corpus_release(struct bench_corpus *c)
{
    if (c == NULL)
        return;
    for (size_t i = 0; i < c->n; i++)
        free(c->data[i]);
    free(c->data);
    free(c->len);
    c->data = NULL;
    c->len = NULL;
    c->n = c->cap = c->bytes = 0;
}
