/*
 * rule.h - compiled rules, shared by rule_parse.c (text to structs),
 * rule_set.c (loading, checking, compiling) and rule_eval.c (matching).
 *
 * A struct rule_set owns its rules; each rule owns its conditions, each
 * condition its patterns and names. After rule_set_load() returns the set
 * is never written again, so any number of threads may evaluate it; every
 * mutable thing an evaluation needs (match data, results) is per call.
 * Combination conditions refer to earlier rules by index only, which keeps
 * the set acyclic and lets rules be evaluated in one pass, in order.
 */
#ifndef SLOP_RULE_H
#define SLOP_RULE_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifndef PCRE2_CODE_UNIT_WIDTH
#define PCRE2_CODE_UNIT_WIDTH 8
#endif
#include <pcre2.h>

#include "classifier.h"
#include "measure.h"
#include "region.h"
#include "rule_set.h"
#include "strv.h"

#define RULE_NAME_MAX 63               /* bytes in a rule name */
#define RULE_PROFILES_MAX 256          /* bytes in the profile names of one rule */
#define RULE_FILE_MAX_BYTES (1u << 20) /* one rule file */
#define RULE_MAX_FILES 1000u           /* rule files per directory */
#define RULE_MAX_RULES 10000u          /* rules per set */
#define RULE_PATTERN_MAX 4096u         /* bytes of one pattern as written */
#define RULE_MAX_CONDS 32u             /* conditions per rule */
#define RULE_MAX_REFS 256u             /* names in one combination */
#define RULE_EVIDENCE_MAX 160u         /* bytes of evidence per hit */
#define RULE_DIAG_KEEP 1000u           /* problems kept for reporting; more are only counted */

enum rule_op {
    RULE_OP_LT = 0,
    RULE_OP_LE,
    RULE_OP_GT,
    RULE_OP_GE,
    RULE_OP_EQ,
    RULE_OP_NE,
};

enum rule_cond_type {
    RULE_COND_MATCH = 0,
    RULE_COND_NOMATCH,
    RULE_COND_COUNT,
    RULE_COND_MEASURE,
    RULE_COND_PAIR,
    RULE_COND_ALL_OF,
    RULE_COND_ANY_OF,
    RULE_COND_AT_LEAST,
    RULE_COND_NONE_OF,
};

struct rule_prefix;

struct rule_pattern {
    char *source; /* as written, with "\/" turned into "/" */
    size_t len;
    uint32_t options;           /* PCRE2 option bits from the flags */
    pcre2_code *code;           /* NULL until compiled */
    uint32_t captures;          /* capture groups in the compiled pattern */
    uint32_t pf_id;             /* index in the prefilter, UINT32_MAX: always run */
    uint32_t pf_and[2];         /* further literal sets, all needed too; UINT32_MAX: none */
    enum region_id pf_region;   /* the region the prefilter scans for it */
    uint8_t pf_groups;          /* its tables: bit per kind, then the on-demand one */
    uint32_t pf_split;          /* its alternatives in the prefilter, UINT32_MAX: none */
    uint32_t pf_check;          /* a set too short for the tables, looked for before it
                                   runs; UINT32_MAX: none */
    struct rule_prefix *prefix; /* the literals its matches start with; NULL: none */
};

/* How rule_set.c compiles every pattern (and rule_prefilter.c the
 * alternatives it splits off). */
#define RULE_PCRE2_OPTIONS                                                                         \
    (PCRE2_UTF | PCRE2_MATCH_INVALID_UTF | PCRE2_MULTILINE | PCRE2_NEVER_BACKSLASH_C)

struct rule_cond {
    enum rule_cond_type type;
    unsigned line;
    enum region_id region;      /* match, nomatch, count */
    enum measure_id measure;    /* measure */
    enum rule_op op;            /* count, measure */
    double number;              /* count, measure: the right-hand side */
    unsigned at_least;          /* at_least: N */
    struct rule_pattern pat[2]; /* match/nomatch/count: [0]; pair: both */
    char **names;               /* combinations: rule names as written */
    size_t *refs;               /* combinations: resolved indices, all below the rule's own */
    size_t n_names;
};

struct rule {
    char name[RULE_NAME_MAX + 1];
    size_t file; /* index into rule_set.files */
    unsigned line;
    bool helper; /* name starts with "__": evaluated, never reported */
    char *describe;
    char *doc;
    double score;      /* in effect: the rule file's, or a scores file's */
    double file_score; /* as the rule file sets it: the hand-set prior */
    bool has_score;
    bool style;     /* "class style": says how the mail is written, names no gap */
    unsigned kinds; /* bit (1u << enum classifier_kind) per allowed kind; 0: any */
    bool off;       /* marked for other profiles than the set's: never holds */
    char *profiles; /* the profile names it is marked for, space-separated; NULL: all */
    struct rule_cond *conds;
    size_t n_conds;
};

struct rule_set {
    struct rule *rules;
    size_t n_rules;
    size_t cap_rules;
    struct strv files;         /* rule file paths, in load order */
    pcre2_match_context *mctx; /* match and depth limits; read-only */
    uint32_t ovec_pairs;       /* largest capture count + 1, for match data */
    struct rule_prefilter *pf; /* required literals per pattern; NULL: none */
    unsigned ref_depth;        /* longest chain of combination references */
    char *profile;             /* the profile loaded for; NULL: CLASSIFIER_PROFILE_DEFAULT */
    bool profile_named;        /* some file or rule names that profile */
};

struct rule_diag_entry {
    size_t file;
    unsigned line;
    unsigned seq; /* keeps the sort stable */
    char reason[256];
};

/* Problems found while loading. They are kept, sorted by file and line and
 * only then passed to the caller's callback, so lint output reads in file
 * order although the checks run in several passes. */
struct rule_diag {
    unsigned problems;
    struct rule_diag_entry *v;
    size_t n, cap;
    bool nomem;        /* an entry could not be kept */
    bool rules_capped; /* RULE_MAX_RULES was reported */
};

/* rule_parse.c: parse text[0..len) of the rule file set->files.v[file] and
 * append its rules to set. text[0..len] (one byte more, for a NUL) is
 * modified: lines and words are cut in place. Each
 * problem goes to d; parsing goes on after one. Returns 0, or -ENOMEM. */
int rule_parse_text(struct rule_set *set, size_t file, char *text, size_t len, struct rule_diag *d);

/* rule_parse.c: record one problem at file:line (line 0: the whole file). */
void rule_parse_diag(struct rule_diag *d, size_t file, unsigned line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* rule_prefilter_parse.c: literals of which every match of the pattern contains
 * one (ASCII lower case) into *ret, which the caller releases; none when
 * the pattern is not understood. Returns 0 or -ENOMEM. */
int rule_prefilter_parse_literals(const char *src, size_t len, uint32_t options, struct strv *ret);

/* Literal sets a pattern can use at once (ret[0] is what
 * rule_prefilter_parse_literals() gives): every match contains a literal of
 * each of ret[0..*n). Returns 0 or -ENOMEM; the caller releases ret[]. */
#define RULE_PF_SETS 3u
int rule_prefilter_parse_sets(const char *src, size_t len, uint32_t options,
                              struct strv ret[RULE_PF_SETS], size_t *n);

/* rule_prefilter_split.c: the top-level alternatives of src[0..len) into *ret
 * (released by the caller) when there are at least two and matching them
 * one by one gives the whole pattern's match (see rule_prefilter.c);
 * none otherwise. Returns 0 or -ENOMEM. */
int rule_prefilter_split_alternatives(const char *src, size_t len, uint32_t options,
                                      struct strv *ret);

/* rule_prefilter.c: build set->pf from the compiled patterns (those that
 * failed to compile are left out); match and nomatch patterns made of
 * alternatives are also compiled one alternative at a time, each with its
 * own literals. Returns 0 or -ENOMEM. */
int rule_prefilter_build(struct rule_set *set);
struct rule_prefilter *rule_prefilter_free(struct rule_prefilter *pf);

/* Per-call prefilter state: which regions were scanned, which patterns
 * may match. Zero-initialised; release with rule_prefilter_scan_release. */
struct rule_prefilter_state {
    uint8_t *possible;
    uint32_t scanned; /* per enum region_id, two bits: its kind's table, its on-demand one */
    uint32_t fold_known, fold;       /* bit per region: checked for, holds k/s folds */
    uint8_t searched[REGION__COUNT]; /* head searches made before an on-demand pass */
    uint8_t *checked;                /* per check set: 0 not yet, PF_MAY-like 1 found, 2 not */
};

struct message;

/* rule_prefilter_scan.c: false only when pat cannot match its region of
 * m, so pcre2_match() can be skipped; scans the region on first use. */
bool rule_prefilter_scan_possible(struct rule_prefilter_state *st, const struct rule_set *set,
                                  const struct message *m, const struct rule_pattern *pat);

/* The alternatives pat was split into (*n of them, in pattern order), or
 * NULL when it was not split. At any start position PCRE2 tries them in
 * this order, so the leftmost match among them, the earliest alternative
 * on a tie, is the whole pattern's match. */
const struct rule_pattern *rule_prefilter_alternatives_of(const struct rule_set *set,
                                                          const struct rule_pattern *pat,
                                                          size_t *n);
void rule_prefilter_scan_release(struct rule_prefilter_state *st);

/* Whether the scans take the vector path of this machine (AVX-512 on
 * x86-64), which finds the same candidates as the portable one: with
 * want false, never again; with want true, when the machine has it. For
 * tests, which compare the two; not while a scan runs. */
bool rule_prefilter_scan_vector(bool want);

/* rule_parse.c: cut the next blank-separated word out of *p ("" at the
 * end of the line); parse a decimal number the locale cannot change.
 * rule_parse_number() returns 0 or -EINVAL. */
char *rule_parse_word(char **p);
int rule_parse_number(const char *s, double *ret);

/* rule_scores.c: parse text[0..len) of the scores file set->files.v[file]
 * ("score NAME N" lines, docs/rules.md) and set those rules' scores. The
 * set's names must be checked already (no duplicates). text[0..len] is
 * modified. Each problem goes to d. Returns 0, or -ENOMEM. */
int rule_scores_parse(struct rule_set *set, size_t file, char *text, size_t len,
                      struct rule_diag *d);

/* rule_parse.c: free everything r owns (not r itself). */
void rule_parse_release(struct rule *r);

#endif
