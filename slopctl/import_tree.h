/*
 * import_tree.h - the source-tree index of "slopctl import tree": walk a
 * tree, gather the paths and the names its files define (import_scan.h),
 * and replace the state's tree index with them. Single-threaded.
 */
#ifndef SLOPCTL_IMPORT_TREE_H
#define SLOPCTL_IMPORT_TREE_H

#include <stddef.h>

struct state;
struct import_tree;

struct import_tree_counts {
    size_t files, dirs;   /* walked (.git skipped) */
    size_t scanned_bytes; /* of the C, assembler and Kconfig files read */
    size_t symbols;       /* distinct names stored, after import_tree_store() */
    size_t configs;       /* distinct CONFIG_ names stored, likewise */
};

/* Walk the directory open at dirfd (the caller keeps and closes it). On
 * success *ret owns what was gathered: store it with import_tree_store()
 * and free it with import_tree_free(). -ENOMEM when a cap or memory ran
 * out, or a negative errno when the top directory cannot be read. */
int import_tree_walk(int dirfd, struct import_tree **ret);

/* Replace st's tree index with t's paths and names, dated date
 * (YYYY-MM-DD). 0 or a negative errno. */
int import_tree_store(struct import_tree *t, struct state *st, const char *date);

/* What was walked and stored so far; lives as long as t. */
const struct import_tree_counts *import_tree_counts(const struct import_tree *t);

/* Accepts NULL; returns NULL. */
struct import_tree *import_tree_free(struct import_tree *t);

#endif
