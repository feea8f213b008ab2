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
#include "message.h"
#include "message_build.h"
#include "mime_view.h"

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

int
bench_kind_parse(const char *name, enum classifier_kind *ret)
{
    static const enum classifier_kind kinds[] = {CLASSIFIER_KIND_OTHER, CLASSIFIER_KIND_PATCH,
                                                 CLASSIFIER_KIND_REPORT, CLASSIFIER_KIND_REPLY};

    for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
        if (strcmp(classifier_kind_name(kinds[i]), name) == 0) {
            *ret = kinds[i];
            return 0;
        }
    }
    return -EINVAL;
}

int
bench_corpus_keep_kind(struct bench_corpus *c, enum classifier_kind kind)
{
    struct classifier_options opts;
    size_t kept = 0, bytes = 0;
    int r = 0;

    classifier_options_default(&opts);
    for (size_t i = 0; i < c->n; i++) {
        struct mime_view *view = NULL;
        struct message *m = NULL;
        size_t len = c->len[i];

        /* As classifier_scan() does: the bytes past the cap are not read. */
        if (len > opts.limits.max_message_bytes)
            len = opts.limits.max_message_bytes;
        if (r == 0)
            r = mime_view_parse(c->data[i], len, &opts.limits, &view);
        if (r == 0)
            r = message_build(view, &opts.limits, &m);
        if (r == 0 && m->kind == kind) {
            c->data[kept] = c->data[i];
            c->len[kept] = c->len[i];
            bytes += c->len[i];
            kept++;
        } else {
            free(c->data[i]);
        }
        message_free(m);
        mime_view_free(view);
    }
    c->n = kept;
    c->bytes = bytes;
    return r;
}
