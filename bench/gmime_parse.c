/*
 * gmime_parse.c - the floor a scan is measured against: walk the same
 * paths as slopctl (mailbox.c), parse each message with GMime from where
 * the scan's parse starts (mime_view_header_start()), and decode every
 * leaf part to a null stream.
 *
 *   gmime-parse PATH...           one pass, timed as a whole (reading the
 *                                 files included), as slopctl scan would be
 *   gmime-parse -r ROUNDS PATH... messages read into memory first, then
 *                                 each parse timed alone over ROUNDS rounds
 *                                 after an untimed one, as bench/scan-timer
 *                                 times each scan
 *   gmime-parse -r ROUNDS -k KIND PATH...
 *                                 the same, for the messages of one kind
 *                                 only, as scan-timer -k picks them
 *   gmime-parse -p ...            parse each message's top part alone
 *                                 (g_mime_parser_construct_part()), as
 *                                 the scan does, instead of as a
 *                                 GMimeMessage: the floor without the
 *                                 address, date and id parsing that a
 *                                 GMimeMessage adds and the scan skips
 *
 * Prints one line: messages=N bytes=N seconds=S, and with -r also
 * rounds=R mean_ms=X best_ms=X (seconds then adds up the timed parses
 * only; best_ms as scan-timer's).
 * Single-threaded benchmark program; exits 1 if any path failed.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <gmime/gmime.h>

#include "corpus.h"
#include "mailbox.h"
#include "mime_view.h"

/* Caps for -r, as scan-timer's. */
#define GMIME_PARSE_MAX_MESSAGES 200000
#define GMIME_PARSE_MAX_BYTES ((size_t)2 << 30)
#define GMIME_PARSE_MAX_ROUNDS 1000

/* message/rfc822 parts nest; GMime's foreach does not descend into them. */
#define GMIME_PARSE_MAX_DEPTH 32

struct bench {
    GMimeStream *null;
    bool part; /* -p */
    unsigned long messages;
    unsigned long long bytes;
    unsigned long errors;
    unsigned depth;
};

static void decode_part(GMimeObject *parent, GMimeObject *part, gpointer data);

/* A top part parsed alone (-p): a multipart's subparts, or the part. */
static void
decode_object(struct bench *b, GMimeObject *top)
{
    if (GMIME_IS_MULTIPART(top))
        g_mime_multipart_foreach(GMIME_MULTIPART(top), decode_part, b);
    else
        decode_part(NULL, top, b);
}

static void
decode_message(struct bench *b, GMimeMessage *msg)
{
    if (msg == NULL || b->depth >= GMIME_PARSE_MAX_DEPTH)
        return;
    b->depth++;
    g_mime_message_foreach(msg, decode_part, b);
    b->depth--;
}

static void
decode_part(GMimeObject *parent, GMimeObject *part, gpointer data)
{
    struct bench *b = data;
    GMimeDataWrapper *content;

    (void)parent;
    if (GMIME_IS_MESSAGE_PART(part)) {
        decode_message(b, g_mime_message_part_get_message((GMimeMessagePart *)part));
        return;
    }
    if (!GMIME_IS_PART(part))
        return;
    content = g_mime_part_get_content((GMimePart *)part);
    if (content != NULL)
        g_mime_data_wrapper_write_to_stream(content, b->null);
}

static int
parse_one(void *ctx, const struct mailbox_msg *m)
{
    struct bench *b = ctx;
    GMimeStream *stream;
    GMimeParser *parser;
    GMimeMessage *msg;
    size_t skip;

    /* Where the scan's own parse starts (an mbox From_ line or blank
     * lines before the header would make GMime give up on the rest), so
     * both parse the same bytes. */
    skip = mime_view_header_start(m->data, m->len);
    stream = g_mime_stream_mem_new_with_buffer(m->data + skip, m->len - skip);
    parser = g_mime_parser_new_with_stream(stream);
    g_mime_parser_set_format(parser, GMIME_FORMAT_MESSAGE);
    if (b->part) {
        GMimeObject *top = g_mime_parser_construct_part(parser, NULL);

        if (top != NULL) {
            decode_object(b, top);
            g_object_unref(top);
        }
    } else {
        msg = g_mime_parser_construct_message(parser, NULL);
        if (msg != NULL) {
            decode_message(b, msg);
            g_object_unref(msg);
        }
    }
    g_object_unref(parser);
    g_object_unref(stream);
    b->messages++;
    b->bytes += m->len;
    return 0;
}

static void
parse_error(void *ctx, const char *file, size_t index, const char *reason)
{
    struct bench *b = ctx;

    b->errors++;
    fprintf(stderr, "gmime-parse: %s#%zu: %s\n", file, index, reason);
}

static double
now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* -r: every message in memory, each parse timed alone. */
static int
timed_rounds(struct bench *b, char **paths, int n_paths, unsigned long rounds,
             const enum classifier_kind *kind)
{
    struct bench_corpus corpus = {.max_messages = GMIME_PARSE_MAX_MESSAGES,
                                  .max_bytes = GMIME_PARSE_MAX_BYTES,
                                  .prog = "gmime-parse"};
    uint64_t total = 0, *best = NULL;
    double best_sum = 0;
    int status = 1;

    for (int i = 0; i < n_paths; i++)
        if (bench_corpus_add_path(&corpus, paths[i]) < 0)
            break;
    if (kind != NULL && bench_corpus_keep_kind(&corpus, *kind) < 0)
        goto out;
    if (corpus.n == 0) {
        fprintf(stderr, "gmime-parse: no messages\n");
        status = 66;
        goto out;
    }
    best = malloc(corpus.n * sizeof(*best));
    if (best == NULL)
        goto out;
    /* Untimed, as scan-timer's first round. */
    for (size_t i = 0; i < corpus.n; i++) {
        struct mailbox_msg m = {.file = "", .data = corpus.data[i], .len = corpus.len[i]};

        parse_one(b, &m);
    }
    for (unsigned long k = 0; k < rounds; k++) {
        for (size_t i = 0; i < corpus.n; i++) {
            struct mailbox_msg m = {.file = "", .data = corpus.data[i], .len = corpus.len[i]};
            uint64_t t = bench_now_ns();

            parse_one(b, &m);
            t = bench_now_ns() - t;
            total += t;
            if (k == 0 || t < best[i])
                best[i] = t;
        }
    }
    for (size_t i = 0; i < corpus.n; i++)
        best_sum += (double)best[i];
    printf("messages=%zu bytes=%zu rounds=%lu seconds=%.4f mean_ms=%.4f best_ms=%.4f\n", corpus.n,
           corpus.bytes, rounds, (double)total / 1e9,
           (double)total / 1e6 / (double)(corpus.n * rounds), best_sum / 1e6 / (double)corpus.n);
    status = 0;
out:
    free(best);
    bench_corpus_release(&corpus);
    return status;
}

int
main(int argc, char **argv)
{
    struct bench b = {0};
    unsigned long rounds = 0;
    enum classifier_kind kind;
    bool by_kind = false;
    double start;
    int opt, status;

    while ((opt = getopt(argc, argv, "k:pr:")) != -1) {
        if (opt == 'k' && bench_kind_parse(optarg, &kind) == 0) {
            by_kind = true;
            continue;
        }
        if (opt == 'p') {
            b.part = true;
            continue;
        }
        if (opt != 'r')
            goto usage;
        rounds = strtoul(optarg, NULL, 10);
        if (rounds == 0 || rounds > GMIME_PARSE_MAX_ROUNDS)
            goto usage;
    }
    if (argc - optind < 1 || (by_kind && rounds == 0))
        goto usage;
    /* The scan's process settings, so that only the work differs. */
    classifier_tune_allocator();
    g_mime_init();
    b.null = g_mime_stream_null_new();
    if (rounds > 0) {
        status = timed_rounds(&b, argv + optind, argc - optind, rounds, by_kind ? &kind : NULL);
    } else {
        start = now();
        for (int i = optind; i < argc; i++)
            mailbox_walk(argv[i], 0, parse_one, parse_error, &b);
        printf("messages=%lu bytes=%llu seconds=%.3f\n", b.messages, b.bytes, now() - start);
        status = b.errors > 0 ? 1 : 0;
    }
    g_object_unref(b.null);
    g_mime_shutdown();
    return status;
usage:
    fputs("usage: gmime-parse [-p] [-r ROUNDS [-k KIND]] PATH...\n", stderr);
    return 64;
}
