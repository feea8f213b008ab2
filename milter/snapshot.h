/*
 * snapshot.h - one immutable, reference-counted bundle of everything a
 * message is judged with: configuration, compiled rules (classifier) and
 * the reply template.
 *
 * One snapshot is installed at a time. A connection takes a reference when
 * it starts and keeps that snapshot to its end, so a reload (SIGUSR1)
 * never changes the rules under a message. Reload builds and checks a new
 * snapshot first and installs it only when it is complete.
 *
 * Threading: snapshot_current() and snapshot_install() serialise on one
 * mutex; reference counts are atomic; the contents are read-only.
 */
#ifndef SLOP_MILTER_SNAPSHOT_H
#define SLOP_MILTER_SNAPSHOT_H

#include <stdatomic.h>
#include <stdint.h>

#include "config.h"

struct classifier;
struct reply_template;

struct snapshot {
    atomic_uint refs;
    unsigned long generation; /* 1 for the first, +1 per installed reload */
    struct config *cfg;
    struct classifier *classifier;
    struct reply_template *reply_template;
    uint32_t *metrics_rules; /* per rule id, its metrics slot (metrics_rules_map()) */
};

/* Receives each problem as "file:line: reason"; ctx is the caller's. */
typedef void snapshot_diag_fn(void *ctx, const char *text);

/*
 * Load config_path (NULL: built-in defaults), the rules in its RulesDir
 * and its reply template. Every problem found goes to diag_fn (may be
 * NULL). Returns 0 with *ret holding one reference, or a negative errno:
 * -EINVAL for bad configuration, rules or template.
 */
int snapshot_build(const char *config_path, const struct config_paths *paths,
                   snapshot_diag_fn *diag_fn, void *diag_ctx, struct snapshot **ret);

struct snapshot *snapshot_ref(struct snapshot *s);
/* Drops one reference; the last one frees. Accepts NULL; returns NULL. */
struct snapshot *snapshot_unref(struct snapshot *s);

/* A new reference to the installed snapshot, or NULL before the first. */
struct snapshot *snapshot_current(void);

/* Install s (taking over the caller's reference) and drop the old one. */
void snapshot_install(struct snapshot *s);

#endif
