/*
 * rule_set.h - rule files: loading, checking, compiling and evaluating.
 *
 * A rule set is every *.rules file of one directory, read in name order,
 * compiled once (PCRE2, JIT when available) and read-only afterwards, so
 * one set may be evaluated by many threads at once. The file format is
 * specified in docs/rules.md.
 */
#ifndef SLOP_RULE_SET_H
#define SLOP_RULE_SET_H

#include <stdbool.h>
#include <stddef.h>

#include "classifier.h"
#include "region.h"

struct message;
struct rule_set;

/*
 * Load every *.rules file in dir, then every *.scores file in dir (in name
 * order: a later file's score wins). Each problem found is reported through
 * diag_fn (may be NULL), and loading goes on to find the others. Returns
 * 0 and sets *ret when nothing was wrong; otherwise a negative errno
 * (-EINVAL for bad rules, -ENOENT/-EACCES for the directory) and *ret is
 * untouched. *ret_problems, when not NULL, receives the number of problems.
 * limits gives the PCRE2 match and depth limits baked into the set.
 */
int rule_set_load(const char *dir, const struct classifier_limits *limits,
                  classifier_diag_fn *diag_fn, void *diag_ctx, unsigned *ret_problems,
                  struct rule_set **ret);

/* rule_set_load() for a profile (NULL: CLASSIFIER_PROFILE_DEFAULT), then
 * the scores file at extra_scores (NULL: none), which wins over the
 * directory's. Rules marked for other profiles are loaded and checked,
 * and never hold. */
int rule_set_load_scored(const char *dir, const char *profile, const char *extra_scores,
                         const struct classifier_limits *limits, classifier_diag_fn *diag_fn,
                         void *diag_ctx, unsigned *ret_problems, struct rule_set **ret);

struct rule_set *rule_set_free(struct rule_set *set);

size_t rule_set_count(const struct rule_set *set);

/* Whether a rule of set matches or counts a pattern in region id (a pair
 * reads the diff's added and removed lines only). */
bool rule_set_reads_region(const struct rule_set *set, enum region_id id);

/* Rule i of set into *ret (strings borrowed from set). 0 or -EINVAL. */
int rule_set_info(const struct rule_set *set, size_t i, struct classifier_rule_info *ret);

/*
 * Evaluate every rule against m. Appends one struct classifier_hit per
 * reported rule that holds (helper rules, named "__*", are not reported)
 * to res->hits, and adds the scores to res->score. doc_base rewrites doc
 * links that start with "@/" (NULL: docs.kernel.org; "": such links are
 * left out). Returns 0 or -ENOMEM. Thread-safe.
 */
int rule_set_eval(const struct rule_set *set, const struct message *m, const char *doc_base,
                  unsigned max_hits, struct classifier_result *res);

/* Whether a rule file or rule names the profile the set was loaded for. */
bool rule_set_names_profile(const struct rule_set *set);

#endif
