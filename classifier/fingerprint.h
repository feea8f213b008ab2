/*
 * fingerprint.h - stable 64-bit fingerprints of patches and reports.
 *
 * A hunk's fingerprint hashes its path and its removed and added lines
 * with all white space dropped (context and line numbers never count), so
 * the same change mailed, rebased or merged hashes the same. A report's
 * key hashes its sorted cited functions and files and its bug classes; its
 * simhash over word shingles finds near duplicates. The hash is 64-bit
 * FNV-1a: the values are stored on disk by the callers, so the function
 * and the normalisation must never change without a schema bump.
 * Threading: no shared state.
 */
#ifndef SLOP_FINGERPRINT_H
#define SLOP_FINGERPRINT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FINGERPRINT_FNV_INIT UINT64_C(0xcbf29ce484222325)
/* Non-blank bytes a hunk needs to be fingerprinted at all. */
#define FINGERPRINT_HUNK_MIN 8
/* Prose words a report needs for a simhash. */
#define FINGERPRINT_SIMHASH_MIN_WORDS 30
/* Bits two simhashes may differ in and still be near duplicates. */
#define FINGERPRINT_SIMHASH_DISTANCE 3

struct message;
struct strv;

uint64_t fingerprint_fnv(uint64_t h, const void *p, size_t n);

/* Names of the functions a diff touches, from the hunk headers
 * ("@@ -1,2 +1,3 @@ int foo_bar(...)") and from "name()" in text; fn is
 * called once per distinct name, at most max names. Returns the count,
 * -EINVAL or -ENOMEM. */
int fingerprint_diff_functions(const char *text, size_t len, size_t max,
                               void (*fn)(void *ctx, const char *name), void *ctx);

/* Bug classes named in text (use-after-free, null-deref, ...) as a bit
 * mask; fingerprint_bug_class_name() names bit i ("use-after-free"), NULL
 * past the last. */
unsigned fingerprint_bug_classes(const char *text, size_t len);
const char *fingerprint_bug_class_name(unsigned bit);

/* Phrase i of those fingerprint_bug_classes() looks for: the class bit,
 * the lower-case text, and whether it must stand as a word. Returns
 * false past the last. For tests that check the scan against a plain
 * search of the same phrases. */
bool fingerprint_bug_phrase(size_t i, unsigned *bit, const char **text, bool *word);

/* Call fn with the fingerprint of each hunk of m that is big enough;
 * returns the number of calls. */
size_t fingerprint_hunks(const struct message *m, void (*fn)(void *ctx, uint64_t fp), void *ctx);

/* One fingerprint of a whole patch from its hunk fingerprints (order does
 * not matter); 0 when n is 0. fps is sorted in place. */
uint64_t fingerprint_patch(uint64_t *fps, size_t n);

/* A report's key from its cited (and traced) functions, its paths and its
 * bug classes; 0 when it names no function and no path. */
uint64_t fingerprint_report_key(const struct strv *functions, const struct strv *paths,
                                unsigned bug_classes);

/* Simhash of the words of text[0..len); 0 when it has too few words.
 * It hashes eight shingles at once where the CPU has AVX-512DQ; the
 * portable path gives the same value everywhere, and tests compare the
 * two. */
uint64_t fingerprint_simhash(const char *text, size_t len);
uint64_t fingerprint_simhash_portable(const char *text, size_t len);

/* fingerprint_bug_classes() the portable way; where the CPU has AVX-512
 * BW, that one rules out most positions sixteen at a time, and tests
 * compare the two. */
unsigned fingerprint_bug_classes_portable(const char *text, size_t len);

#endif
