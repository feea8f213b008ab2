/*
 * fit.c - "slopctl fit LABELS": fit the rules' scores to labelled mail.
 *
 * Every message named in the labels file is scanned once with the rule
 * set (without --state, the rules that need an indexed tree or history do
 * not fire; with it, read-only); what is kept per message is the set of reported rules that
 * matched (classifier_result.matched), its class and its group. Scores are
 * then fitted by logistic regression (logreg.h) with the rule files'
 * scores as priors and the tag threshold as the fixed offset; a rule that
 * names a gap may fall to 0 but never below, may rise to twice its prior
 * (at most --max-score), and a note (score 0) stays 0. After each fit,
 * genuine training mail at or over the tag threshold beyond --fp-limit
 * has its weight multiplied by FIT_FP_BOOST and the fit is redone, at most
 * FIT_FP_ROUNDS times. The cross-validation holds out whole sources (the
 * labels' fourth column: a case, a list, a project; by default the
 * labels line, so an mbox stays whole), never single messages: one
 * source per fold (--folds all), or whole sources dealt to K folds by a
 * hash of each (and --seed), so a run is repeatable to the byte
 * (fit_folds.h). docs/scoring.md describes the method.
 *
 * This file runs one fit in order; its parts are fit_options.c (the
 * options), fit_data.c (features, labels, folds), fit_train.c (the fits)
 * and fit_print.c (figures and files), sharing struct fit (fit_run.h).
 * Single-threaded; everything allocated is freed before fit_cmd returns.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>

#include "classifier.h"
#include "cli.h"
#include "fit.h"
#include "fit_data.h"
#include "fit_options.h"
#include "fit_print.h"
#include "fit_run.h"
#include "fit_train.h"
#include "output.h"
#include "state.h"
#include "state_db.h"
#include "statedir.h"

/* Exit status when some messages could not be read or the fit did not
 * converge; the figures and scores are still written. */
#define SLOPCTL_FIT_PARTIAL 1

static void
fit_release(struct fit *f)
{
    free(f->ex);
    free(f->y);
    free(f->cw);
    free(f->row);
    free(f->feat);
    free(f->feat_of);
    free(f->rule_of);
    free(f->prior);
    free(f->lo);
    free(f->hi);
    free(f->w);
    free(f->lo_all);
    free(f->hi_all);
    free(f->style);
    free(f->paths);
    for (size_t i = 0; i < f->n_sources; i++)
        free(f->source_name[i]);
    free(f->hits[0]);
    free(f->hits[1]);
    classifier_free(f->c);
    state_close(f->st);
}

/* The rules, and the state with --state; 0 or a sysexits code. */
static int
fit_load(struct fit *f, const char *rules, struct classifier_options *opts)
{
    struct output_diag_sink sink = {.f = stderr};
    struct state_lookup_options lopts = {.trust_maintainers = true};
    int r;

    if (f->profile != NULL)
        opts->profile = f->profile;
    r = classifier_new(rules, opts, output_diag, &sink, &f->c);
    if (r < 0) {
        fprintf(stderr, "slopctl fit: cannot load rules from '%s': %s\n", rules, strerror(-r));
        return EX_CONFIG;
    }
    if (f->state_dir == NULL)
        return 0;
    r = statedir_open(f->state_dir, STATE_READONLY, &f->st);
    if (r != 0)
        return r;
    state_lookup_init(&f->sl, f->st, &lopts);
    return 0;
}

/* The features, the labelled messages and their folds; *ret_slop counts
 * the slop. 0, a sysexits code, or a negative errno. */
static int
fit_prepare(struct fit *f, size_t *ret_slop)
{
    size_t n_slop = 0;
    int r;

    r = fit_data_features(f);
    if (r == 0)
        r = fit_data_labels(f);
    if (r == 0 && f->error < 0)
        r = f->error;
    if (r != 0)
        return r;
    for (size_t i = 0; i < f->n_ex; i++)
        n_slop += f->y[i];
    if (n_slop == 0 || n_slop == f->n_ex) {
        fprintf(stderr, "slopctl fit: need slop and genuine messages\n");
        return EX_DATAERR;
    }
    r = fit_data_folds(f);
    if (r == 0 && f->n_folds > 0 && fit_data_sources(f) < 2) {
        fprintf(stderr, "slopctl fit: cross-validation needs messages of two sources or more\n");
        return EX_DATAERR;
    }
    *ret_slop = n_slop;
    return r;
}

static void
fit_summary(struct fit *f, size_t n_slop, const struct fit_train *all, const struct fit_train *cv)
{
    printf("slopctl fit: %zu messages (%zu slop, %zu genuine) in %zu groups, %zu sources, %zu "
           "rules fitted\n",
           f->n_ex, n_slop, f->n_ex - n_slop, f->n_groups, fit_data_sources(f), f->n_feat);
    printf("lambda %g, scale %g, tag %g, reply %g, max-score %g, fp-limit %g, seed %lu, "
           "slop-weight %s\n",
           f->lambda, f->scale, f->tag, f->reply, f->max_score, f->fp_limit, f->seed,
           f->slop_weight > 0 ? "given" : "balanced");
    printf("held at the hand-set score (no labelled slop of the kinds they match): %zu rules\n",
           f->n_held);
    printf("fit on all: %s in %u sweeps, %u false-alarm refits, genuine over tag %zu/%zu%s\n",
           all->converged ? "converged" : "NOT converged", all->sweeps, all->rounds, all->fp,
           all->genuine, all->fp_met ? "" : " (over the limit)");
    printf("cross-validation: %s, %u false-alarm refits%s\n",
           cv->converged ? "converged" : "NOT converged", cv->rounds,
           cv->fp_met ? "" : ", some folds over the limit");
}

/* The weights, the figures and the files asked for; the exit code. */
static int
fit_output(const struct fit *f, size_t n_slop, const struct fit_train *all,
           const struct fit_train *cv)
{
    int r, ret = 0;

    fit_print_weights(f);
    if (fit_print_figures(f) < 0)
        ret = SLOPCTL_FIT_PARTIAL;
    if (f->cv_path != NULL && (r = fit_print_cv(f)) < 0) {
        fprintf(stderr, "slopctl fit: cannot write '%s': %s\n", f->cv_path, strerror(-r));
        return EX_CANTCREAT;
    }
    if (f->out_path != NULL) {
        r = fit_print_scores(f, n_slop, all);
        if (r < 0) {
            fprintf(stderr, "slopctl fit: cannot write '%s': %s\n", f->out_path, strerror(-r));
            return EX_CANTCREAT;
        }
        printf("\nscores written to %s\n", f->out_path);
    }
    if (ret == 0 && (f->unreadable > 0 || !all->converged || !cv->converged))
        ret = SLOPCTL_FIT_PARTIAL;
    if (fflush(stdout) != 0)
        ret = EX_IOERR;
    return ret;
}

int
fit_cmd(int argc, char **argv)
{
    struct classifier_options opts;
    struct fit f = {
        .folds = 5,
        .fp_limit = 0.005,
        .lambda = 4,
        .scale = 1,
        .max_score = 8,
    };
    struct fit_train cv = {0}, all = {0};
    const char *rules = NULL;
    size_t n_slop = 0;
    int r, ret;

    classifier_options_default(&opts);
    f.tag = opts.thresholds.score[CLASSIFIER_ACTION_TAG];
    f.reply = opts.thresholds.score[CLASSIFIER_ACTION_REPLY];
    r = fit_options_parse(&f, argc, argv, &rules);
    if (r != 0)
        return r < 0 ? 0 : r;
    ret = fit_load(&f, cli_rules_dir(rules), &opts);
    if (ret != 0)
        goto out;
    r = fit_prepare(&f, &n_slop);
    if (r == 0)
        r = fit_train_cross_validate(&f, &cv);
    if (r == 0)
        r = fit_train_run(&f, -1, f.w, &all);
    if (r > 0) {
        ret = r;
        goto out;
    }
    if (r < 0) {
        fprintf(stderr, "slopctl fit: %s\n", strerror(-r));
        ret = r == -ENOMEM ? EX_OSERR : EX_SOFTWARE;
        goto out;
    }
    fit_summary(&f, n_slop, &all, &cv);
    ret = fit_output(&f, n_slop, &all, &cv);
out:
    fit_release(&f);
    return ret;
}
