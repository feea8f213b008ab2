/*
 * import_fixes.h - the fixes index of "slopctl import fixes": read
 * `git log -p` text and store each commit's hunk fingerprints and its
 * (function, bug class) pairs. Single-threaded.
 */
#ifndef SLOPCTL_IMPORT_FIXES_H
#define SLOPCTL_IMPORT_FIXES_H

#include <stdint.h>
#include <stdio.h>

struct state;
struct import_fixes;

struct import_fixes_counts {
    uint64_t commits, hunks, functions;
};

/* A reader that stores into st (borrowed: it must outlive the reader).
 * 0 or -ENOMEM; free *ret with import_fixes_free(). */
int import_fixes_new(struct state *st, struct import_fixes **ret);

/* Read `git log -p --format=medium` text from in to its end and store it
 * all. 0 or a negative errno (the first storing error); what was counted
 * is in *ret_counts either way. */
int import_fixes_read(struct import_fixes *fi, FILE *in, struct import_fixes_counts *ret_counts);

/* Accepts NULL; returns NULL. */
struct import_fixes *import_fixes_free(struct import_fixes *fi);

#endif
