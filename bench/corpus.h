/*
 * corpus.h - messages read into memory once, for the timing programs of
 * bench/ (scan-timer, state-timer), so that reading files is never part of
 * what they time. Paths are walked with slopctl's mailbox.c.
 */
#ifndef SLOP_BENCH_CORPUS_H
#define SLOP_BENCH_CORPUS_H

#include <stddef.h>
#include <stdint.h>

#include "classifier.h"

struct bench_corpus {
    char **data; /* owned copies of each message */
    size_t *len;
    size_t n, cap, bytes;
    size_t max_messages, max_bytes; /* caps, set by the caller */
    const char *prog;               /* name for error lines */
};

/* Add every message found at path; unreadable files are reported on
 * stderr and skipped. Returns 0, or a negative errno (-E2BIG past a cap). */
int bench_corpus_add_path(struct bench_corpus *c, const char *path);
void bench_corpus_release(struct bench_corpus *c);

/* Keep only the messages the classifier's message model gives kind (no
 * envelope, as the timers scan), so a timer can report one kind alone.
 * Returns 0, or -ENOMEM. */
int bench_corpus_keep_kind(struct bench_corpus *c, enum classifier_kind kind);

/* The kind named name ("patch", "report", "reply", "other") in *ret.
 * Returns 0, or -EINVAL for another name. */
int bench_kind_parse(const char *name, enum classifier_kind *ret);

/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t bench_now_ns(void);

#endif
