/*
 * gmime_parse.c - the floor a scan is measured against: walk the same
 * paths as slopctl (mailbox.c), parse each message with GMime from where
 * the scan's parse starts (mime_view_header_start()), and decode every
 * leaf part to a null stream. Prints one line:
 *   messages=N bytes=N seconds=S
 * where seconds covers the whole walk (reading, parsing, decoding), as a
 * slopctl scan over the same paths would.
 * Single-threaded benchmark program; exits 1 if any path failed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <gmime/gmime.h>

#include "mailbox.h"
#include "mime_view.h"

/* message/rfc822 parts nest; GMime's foreach does not descend into them. */
#define GMIME_PARSE_MAX_DEPTH 32

struct bench {
    GMimeStream *null;
    unsigned long messages;
    unsigned long long bytes;
    unsigned long errors;
    unsigned depth;
};

static void decode_part(GMimeObject *parent, GMimeObject *part, gpointer data);

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
    msg = g_mime_parser_construct_message(parser, NULL);
    if (msg != NULL) {
        decode_message(b, msg);
        g_object_unref(msg);
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

int
main(int argc, char **argv)
{
    struct bench b = {0};
    double start;
    int i;

    if (argc < 2) {
        fputs("usage: gmime-parse PATH...\n", stderr);
        return 64;
    }
    g_mime_init();
    b.null = g_mime_stream_null_new();
    start = now();
    for (i = 1; i < argc; i++)
        mailbox_walk(argv[i], parse_one, parse_error, &b);
    printf("messages=%lu bytes=%llu seconds=%.3f\n", b.messages, b.bytes, now() - start);
    g_object_unref(b.null);
    g_mime_shutdown();
    return b.errors > 0 ? 1 : 0;
}
