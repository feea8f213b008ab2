/*
 * output.h - print scan results and per-message errors for slopctl, as
 * text for people or as JSON lines for programs.
 *
 * JSON output is one object per line, keys in a fixed order, numbers with
 * one decimal whatever the locale, and always valid UTF-8 (invalid bytes
 * become U+FFFD). Text output escapes control characters so mail cannot
 * drive the terminal. Writes go through the caller's FILE streams, which
 * the caller buffers and flushes. Not thread-safe: one writer per stream.
 */
#ifndef SLOPCTL_OUTPUT_H
#define SLOPCTL_OUTPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "classifier.h"

enum output_format {
    OUTPUT_TEXT = 0,
    OUTPUT_JSON,
};

struct output {
    FILE *out; /* results (and, in JSON, error objects) */
    FILE *err; /* error lines for people */
    enum output_format format;
    bool only_actions; /* skip results whose action is none */
};

/* Where a message came from, as mailbox.h describes it. */
struct output_source {
    const char *file;
    size_t index;
    bool in_mbox;
};

/* Print one result. Returns 0, or a negative errno once a write to out has
 * failed. */
int output_result(const struct output *o, const struct output_source *src,
                  const struct classifier_result *r);

/* Report one message or path that could not be scanned: a line on err, and
 * in JSON also {"file":...,"index":N,"error":...} on out. Returns 0 or a
 * negative errno, as output_result(). */
int output_error(const struct output *o, const struct output_source *src, const char *reason);

/* Format score as "%.1f" would in the C locale; buf holds at least 32. */
const char *output_score(double score, char *buf, size_t size);

/* Where rule problems go: file:line: reason lines on f, counted. */
struct output_diag_sink {
    FILE *f;
    unsigned count;
};

/* A classifier_diag_fn; ctx is a struct output_diag_sink. */
void output_diag(void *ctx, const struct classifier_diag *d);

/* Write s as a JSON string (with quotes), or null for NULL. */
void output_json_string(FILE *f, const char *s);

#endif
