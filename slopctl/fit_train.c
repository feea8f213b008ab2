/*
 * fit_train.c - the training of "slopctl fit": scores fitted by logistic
 * regression (logreg.h) with the rule files' scores as priors and the tag
 * threshold as the fixed offset, bounded per rule (a gap may fall to 0 but
 * never below, rise to twice its prior, at most --max-score; a note stays
 * 0). After each fit, genuine training mail at or over the tag threshold
 * beyond --fp-limit has its weight multiplied by FIT_FP_BOOST and the fit
 * is redone, at most FIT_FP_ROUNDS times. Cross-validation trains on every
 * fold but one and scores the one held out. Single-threaded.
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fit_train.h"
#include "logreg.h"

static void
problem_init(const struct fit *f, struct logreg_problem *p)
{
    *p = (struct logreg_problem){
        .n_examples = f->n_ex,
        .n_features = f->n_feat,
        .row = f->row,
        .feat = f->feat,
        .y = f->y,
        .c = f->cw,
        .prior = f->prior,
        .lo = f->lo,
        .hi = f->hi,
        .lambda = f->lambda,
        .scale = f->scale,
        .offset = f->tag,
        .max_sweeps = FIT_MAX_SWEEPS,
        .tol = FIT_TOL,
    };
}

/*
 * Slop is the rare class (27 of 481 in the development corpus): unweighted,
 * the loss is nearly all genuine mail and every score is pushed down. Each
 * training slop message weighs --slop-weight, by default as much as the
 * genuine messages per slop one, so both classes count alike; the
 * false-alarm refits below still guard the genuine side.
 */
static void
class_weights(struct fit *f)
{
    size_t n_slop = 0, n_genuine = 0;
    double wt;

    for (size_t i = 0; i < f->n_ex; i++) {
        if (f->cw[i] == 0)
            continue;
        if (f->y[i])
            n_slop++;
        else
            n_genuine++;
    }
    wt = f->slop_weight;
    if (wt <= 0)
        wt = n_slop > 0 && n_genuine > 0 ? (double)n_genuine / (double)n_slop : 1;
    for (size_t i = 0; i < f->n_ex; i++)
        if (f->cw[i] > 0 && f->y[i])
            f->cw[i] = wt;
}

/*
 * A rule matched only by kinds of mail (patch, report, reply, other) that
 * no slop message in the training set has is seen on one side only: the
 * fit could learn that it fires on genuine mail, never whether it catches
 * slop of that kind. Such a rule keeps its hand-set score until slop of
 * its kinds is labelled. Decided on the training set alone (cw > 0), so a
 * held-out source does not choose its own rules. Sets f->n_held.
 */
static int
hold_one_sided(struct fit *f)
{
    unsigned slop_kinds = 0, *kinds;

    kinds = calloc(f->n_feat ? f->n_feat : 1, sizeof(*kinds));
    if (kinds == NULL)
        return -ENOMEM;
    memcpy(f->lo, f->lo_all, f->n_feat * sizeof(*f->lo));
    memcpy(f->hi, f->hi_all, f->n_feat * sizeof(*f->hi));
    f->n_held = 0;
    for (size_t i = 0; i < f->n_ex; i++) {
        unsigned bit = f->ex[i].kind < 32 ? 1u << f->ex[i].kind : 0;

        if (f->cw[i] == 0)
            continue;
        if (f->y[i])
            slop_kinds |= bit;
        for (size_t k = f->row[i]; k < f->row[i + 1]; k++)
            kinds[f->feat[k]] |= bit;
    }
    for (size_t j = 0; j < f->n_feat; j++) {
        if (kinds[j] == 0 || (kinds[j] & slop_kinds) != 0)
            continue;
        f->lo[j] = f->hi[j] = f->prior[j];
        f->n_held++;
    }
    free(kinds);
    return 0;
}

/* Genuine training mail at or over the tag threshold under w, into t. */
static void
count_false_alarms(const struct fit *f, const struct logreg_problem *p, const double *w,
                   struct fit_train *t)
{
    t->fp = t->genuine = 0;
    for (size_t i = 0; i < f->n_ex; i++) {
        if (f->cw[i] == 0 || f->y[i])
            continue;
        t->genuine++;
        if (logreg_score(p, w, i) >= f->tag)
            t->fp++;
    }
    t->fp_met = (double)t->fp <= f->fp_limit * (double)t->genuine;
}

/* Weigh each false alarm more for the next fit. */
static void
boost_false_alarms(struct fit *f, const struct logreg_problem *p, const double *w)
{
    for (size_t i = 0; i < f->n_ex; i++)
        if (f->cw[i] > 0 && !f->y[i] && logreg_score(p, w, i) >= f->tag)
            f->cw[i] *= FIT_FP_BOOST;
}

/* Fit w on every fold but held (-1: on all), then refit while genuine
 * training mail over the tag threshold exceeds the limit. */
int
fit_train_run(struct fit *f, int held, double *w, struct fit_train *t)
{
    struct logreg_problem p;

    problem_init(f, &p);
    memset(t, 0, sizeof(*t));
    t->converged = true;
    for (size_t i = 0; i < f->n_ex; i++)
        f->cw[i] = held >= 0 && f->ex[i].fold == (unsigned)held ? 0 : 1;
    if (hold_one_sided(f) < 0)
        return -ENOMEM;
    class_weights(f);
    memcpy(w, f->prior, f->n_feat * sizeof(*w));
    for (;;) {
        unsigned sweeps = 0;
        int r = logreg_fit(&p, w, &sweeps);

        t->sweeps += sweeps;
        if (r == -ETIMEDOUT)
            t->converged = false;
        else if (r < 0)
            return r;
        count_false_alarms(f, &p, w, t);
        if (t->fp_met || t->rounds == FIT_FP_ROUNDS)
            return 0;
        t->rounds++;
        boost_false_alarms(f, &p, w);
    }
}

/* Score of example i under w, and its substance part. */
static void
score_of(const struct fit *f, const double *w, size_t i, double *score, double *sub)
{
    *score = *sub = 0;
    for (size_t k = f->row[i]; k < f->row[i + 1]; k++) {
        *score += w[f->feat[k]];
        if (!f->style[f->feat[k]])
            *sub += w[f->feat[k]];
    }
}

int
fit_train_cross_validate(struct fit *f, struct fit_train *sum)
{
    double *w = calloc(f->n_feat + 1, sizeof(*w));
    struct fit_train t;
    int r = 0;

    if (w == NULL)
        return -ENOMEM;
    memset(sum, 0, sizeof(*sum));
    sum->converged = sum->fp_met = true;
    for (size_t i = 0; i < f->n_ex; i++)
        score_of(f, f->prior, i, &f->ex[i].hand, &f->ex[i].hand_sub);
    for (unsigned k = 0; k < f->n_folds && r == 0; k++) {
        r = fit_train_run(f, (int)k, w, &t);
        if (r < 0)
            break;
        sum->sweeps += t.sweeps;
        sum->rounds += t.rounds;
        sum->converged = sum->converged && t.converged;
        sum->fp_met = sum->fp_met && t.fp_met;
        for (size_t i = 0; i < f->n_ex; i++)
            if (f->ex[i].fold == k)
                score_of(f, w, i, &f->ex[i].fitted, &f->ex[i].fitted_sub);
    }
    free(w);
    return r;
}
