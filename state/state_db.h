/*
 * state_db.h - the offline indices and the per-message history kept in
 * the state environment next to the reply ledger (state.h):
 *
 *   tree      paths, function and macro names, CONFIG_ symbols of a source
 *             tree, written by "slopctl import tree"
 *   fixes     hunk fingerprints and (function, bug class) of merged
 *             commits, written by "slopctl import fixes"
 *   maint     MAINTAINERS sections, written by "slopctl import maintainers"
 *   seen      fingerprints of scanned patches and reports (duplicates)
 *   sender    per-sender daily counts of patches and reports
 *   series    flagged cover letters and the changelog paragraphs of the
 *             patches of a series
 *   lookup    a struct classifier_lookup whose callbacks read all of it
 *
 * Every call runs its own short transaction, so readers never wait for a
 * writer and a crash leaves the last committed state. An import that
 * takes several transactions writes its label last: until then the index
 * counts as absent, never as half full. Thread-safe like state.h.
 */
#ifndef SLOP_STATE_DB_H
#define SLOP_STATE_DB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "classifier.h"
#include "state.h"

/* ---- tree index (state_index.c) ---- */

enum state_tree_kind {
    STATE_TREE_PATH = 0, /* value 'f' file, 'd' directory */
    STATE_TREE_SYMBOL,   /* value 'f' function, 'm' macro, 'e' exported, 's' syscall */
    STATE_TREE_CONFIG,   /* "CONFIG_FOO" */
};

struct state_tree_entry {
    const char *key;
    char kind;
};

/* Drop the tree index and its label, before an import. */
int state_tree_clear(struct state *st);
/*
 * Add entries, n at most a few ten thousands per call (one transaction).
 * When sorted, keys must be strictly increasing across all calls since
 * state_tree_clear() for this kind, and are appended fast.
 */
int state_tree_put(struct state *st, enum state_tree_kind kind, const struct state_tree_entry *v,
                   size_t n, bool sorted);
/* Mark the index complete: label "indexed tree of DATE". */
int state_tree_finish(struct state *st, const char *date, uint64_t files);
/* 0 and the label, or -ENOENT when no complete index exists. */
int state_tree_label(struct state *st, char *buf, size_t size);
bool state_tree_has(struct state *st, enum state_tree_kind kind, const char *key);

/* ---- merged fixes (state_fixes.c) ---- */

struct state_fix {
    uint64_t hunk_fp;     /* used when function is NULL */
    const char *function; /* with bug_class: a function fix */
    const char *bug_class;
    const char *commit;
    const char *subject;
};

/* Store n records in one transaction; the first record of a key wins. */
int state_fixes_put(struct state *st, const struct state_fix *v, size_t n);
/* Record that an import of commits finished (for db stats). */
int state_fixes_finish(struct state *st, uint64_t commits);
int state_fixes_find(struct state *st, uint64_t hunk_fp, struct classifier_fix *ret);
int state_fixes_find_function(struct state *st, const char *function, const char *bug_class,
                              struct classifier_fix *ret);

/* ---- seen mail (state_seen.c) ---- */

/* Remember the fingerprints and simhash (0: none) of message_id, sent by
 * from (its From: address; NULL: unknown), at now; a fingerprint already
 * seen after now - window_s keeps its first sender. fps[0], when present,
 * is the message's key: near-duplicate prose only counts between messages
 * with the same key or without one. */
int state_seen_record(struct state *st, const uint64_t *fps, size_t n, uint64_t simhash,
                      const char *message_id, const char *from, time_t now, uint32_t window_s);
/* 0 and the earliest match seen at or after since, other than self_id,
 * recorded before before (0: no bound) and before self_id's own record
 * (an offline scan of mail the daemon recorded: only what arrived before
 * it); or -ENOENT. ret->from is that match's sender, "" when unknown. */
int state_seen_find(struct state *st, const uint64_t *fps, size_t n, uint64_t simhash,
                    const char *self_id, time_t since, time_t before, struct classifier_seen *ret);
/* Drop seen mail recorded at or before before (inclusive, so that
 * `slopctl db prune --days 0` also removes what was recorded this second). */
int state_seen_prune(struct state *st, time_t before, uint64_t *ret_removed);

/* ---- MAINTAINERS (state_maint.c) ---- */

struct state_maint_counts {
    uint64_t sections, patterns, globs, addresses;
};

/* Parse a MAINTAINERS file and replace the stored one in one transaction.
 * The catch-all section (F: *) is left out: it would ask every patch to Cc
 * everyone. */
int state_maint_import(struct state *st, const char *text, size_t len,
                       struct state_maint_counts *ret);
/* Maintainers (M:) and lists (L:) of every section whose F: matches path and
 * whose X: does not; returns how many were written (<= max). */
size_t state_maint_of(struct state *st, const char *path, struct classifier_maint *ret, size_t max);
bool state_maint_trusted(struct state *st, const char *addr);

/* ---- senders (state_sender.c) ---- */

int state_sender_add(struct state *st, const char *addr, time_t now);
uint32_t state_sender_count(struct state *st, const char *addr, time_t now);
int state_sender_prune(struct state *st, time_t before, uint64_t *ret_removed);

/* ---- patch series (state_series.c) ---- */

/* Remember that the cover letter message_id was flagged, and what for. */
int state_series_cover_put(struct state *st, const char *message_id, const char *note, time_t now);
/* 0 and the note (cut to size) when message_id was flagged at or after
 * since; -ENOENT otherwise. */
int state_series_cover_find(struct state *st, const char *message_id, time_t since, char *buf,
                            size_t size);
/* Remember the changelog paragraph fingerprints of patch s->self_id of
 * the series s->root (at most CLASSIFIER_SERIES_PARAS are kept). */
int state_series_log_put(struct state *st, const struct classifier_series *s, const uint64_t *fps,
                         size_t n, time_t now);
/* 0 when other patches of the series (same version, another index,
 * recorded at or after since) share a paragraph with fps: sets how many
 * and, in *ret_found, bit i for each fps[i] shared; -ENOENT when none. */
int state_series_log_find(struct state *st, const struct classifier_series *s, const uint64_t *fps,
                          size_t n, time_t since, uint32_t *ret_patches, uint32_t *ret_found);
/* Drop cover letters and patch paragraphs recorded at or before before. */
int state_series_prune(struct state *st, time_t before, uint64_t *ret_removed);

/* ---- everything together (state_lookup.c) ---- */

struct state_lookup_options {
    uint32_t duplicate_days; /* window for duplicates; 0: 30 */
    bool trust_maintainers;  /* senders listed in MAINTAINERS are trusted */
    time_t now;              /* 0: the clock at each call */
    /* Messages each class needs learned before the learned counts are
     * used (state_learn.h); 0: STATE_LEARN_MINIMUM_DEFAULT. */
    uint32_t learn_minimum;
};

/* As SpamAssassin's bayes_min_spam_num and bayes_min_ham_num. */
#define STATE_LEARN_MINIMUM_DEFAULT 200
#define STATE_LEARN_MINIMUM_MAX 10000000 /* LearnMinimum's and --learn-minimum's upper bound */

struct state_lookup {
    struct classifier_lookup lookup; /* pass &lookup in the envelope */
    struct state *st;                /* borrowed */
    struct state_lookup_options opts;
};

/* Fill sl so that sl->lookup reads st; st must outlive sl. */
void state_lookup_init(struct state_lookup *sl, struct state *st,
                       const struct state_lookup_options *opts);
/* After a scan: remember res's fingerprints and count its sender. */
int state_lookup_record(const struct state_lookup *sl, const struct classifier_result *res);

/* ---- whole environment (state_tables.c) ---- */

struct state_table_stats {
    const char *name;
    uint64_t entries;
    uint64_t bytes; /* pages of the table * page size */
};

/* Call fn for every named database; 0 or -errno. */
int state_tables_stats(struct state *st, void (*fn)(void *ctx, const struct state_table_stats *s),
                       void *ctx);
/* Expire seen mail, sender counts and series records older than before
 * (the ledger has state_prune()). */
int state_tables_prune(struct state *st, time_t before, uint64_t *ret_removed);

/* ---- table by table, for a damaged environment (state_copy.c) ---- */

/* Call fn with the name of every named database of the environment in
 * src (opened read-only); stops at fn's first negative return. 0 or
 * -errno. */
int state_copy_list(const char *src, int (*fn)(void *ctx, const char *name), void *ctx);
/*
 * Read every key/value of table name in src (read-only); when dst is not
 * NULL, write each into dst's table of that name and flags (the
 * environment and table are created when missing), committing in
 * batches so that what was read before a failure stays. Sets *ret_read to
 * the entries read and *ret_expected to the count the table records.
 * Returns 0, or -errno (-EIO: a damaged page, -ENOENT: no such table).
 * The walk trusts the pages it reads: check the file first
 * (state_check_file()), or run it in a process of its own.
 */
int state_copy_table(const char *src, const char *dst, const char *name, uint64_t *ret_read,
                     uint64_t *ret_expected);

#endif
