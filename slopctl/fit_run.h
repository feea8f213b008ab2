/*
 * fit_run.h - what one "slopctl fit" run holds, shared by its parts:
 * the options (fit_options.c), the features and labelled messages
 * (fit_data.c), the training (fit_train.c) and the figures and files
 * written (fit_print.c); fit.c runs them in order. Single-threaded; one
 * struct fit per run, released by fit.c.
 */
#ifndef SLOPCTL_FIT_RUN_H
#define SLOPCTL_FIT_RUN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "classifier.h"
#include "state.h"
#include "state_db.h"

#define FIT_MAX_EXAMPLES 100000u /* messages fitted on */
#define FIT_MAX_GROUPS 64u
#define FIT_GROUP_NAME_MAX 48u /* bytes of a group name */
#define FIT_MAX_LINE 8192u     /* bytes of a labels line */
#define FIT_MAX_FOLDS 20u      /* --folds K; --folds all has one per source */
#define FIT_MAX_SOURCES 1024u  /* sources named in the labels' fourth column */
#define FIT_SOURCE_NAME_MAX 64u
#define FIT_FP_ROUNDS 12u /* refits to bring false alarms under the limit */
#define FIT_FP_BOOST 4.0  /* weight factor per refit for a false alarm */
#define FIT_MAX_SWEEPS 20000u
#define FIT_TOL 1e-7

struct fit_group {
    char name[FIT_GROUP_NAME_MAX + 1];
    unsigned char y; /* 1: slop */
    size_t n;
};

struct fit_example {
    uint64_t source; /* hash of its source's name, or of the labels line's path */
    size_t path;     /* the labels line's path as written: offset in fit.paths */
    size_t index;    /* in an mbox, from 0 */
    uint32_t group;
    int32_t named; /* its source in fit.source_name, or -1 */
    unsigned fold;
    unsigned kind; /* enum classifier_kind the scan gave it */
    /* Cross-validated scores and their substance parts. */
    double hand, hand_sub, fitted, fitted_sub;
};

/* Outcome of one training run (with its false-alarm refits). */
struct fit_train {
    unsigned sweeps;
    unsigned rounds;
    bool converged;
    bool fp_met;
    size_t fp, genuine;
};

struct fit {
    /* Options. */
    const char *labels, *out_path, *plot_dir, *state_dir, *cv_path;
    const char *profile; /* --project; NULL: the default profile */
    unsigned folds;      /* 0: one per source */
    unsigned n_folds;    /* as dealt */
    unsigned long seed;
    double fp_limit, lambda, scale, max_score, tag, reply;
    double slop_weight; /* per slop example; 0: genuine count / slop count */

    /* Features: the reported rules, in rule order. */
    struct classifier *c;
    struct state *st; /* --state, read-only; NULL: no state */
    struct state_lookup sl;
    size_t n_rules, n_feat;
    size_t *feat_of; /* per rule: its feature, or SIZE_MAX for a helper */
    size_t *rule_of; /* per feature: its rule */
    double *prior, *lo, *hi, *w;
    double *lo_all, *hi_all; /* the bounds before hold_one_sided() */
    size_t n_held;           /* by the last train() */
    size_t n_distinct;       /* sources among the messages; 0: not counted yet */
    bool *style;
    size_t *hits[2]; /* per feature: messages it matched, genuine [0] and slop [1] */

    /* Examples, rows of features as struct logreg_problem wants them. */
    struct fit_example *ex;
    unsigned char *y;
    double *cw;
    size_t *row;
    size_t n_ex, cap_ex;
    uint32_t *feat;
    size_t nnz, cap_feat;

    struct fit_group groups[FIT_MAX_GROUPS];
    size_t n_groups;
    char *source_name[FIT_MAX_SOURCES];
    uint64_t source_hash[FIT_MAX_SOURCES];
    size_t n_sources;
    char *paths; /* the labels' paths as written, each NUL-terminated */
    size_t paths_len, paths_cap, n_lines;
    uint32_t cur_group; /* of the label being scanned */
    int32_t cur_named;
    uint64_t cur_source;
    size_t cur_path;
    unsigned long unreadable;
    int error; /* first -errno of the scan callback */
};

#endif
