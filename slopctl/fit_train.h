/*
 * fit_train.h - the training and cross-validation of a "slopctl fit" run
 * (fit_run.h). Single-threaded.
 */
#ifndef SLOPCTL_FIT_TRAIN_H
#define SLOPCTL_FIT_TRAIN_H

#include "fit_run.h"

/* Fit w (f->n_feat weights) on every fold but held (-1: on all), then
 * refit while genuine training mail over the tag threshold exceeds the
 * limit; *t says how it went. 0 or a negative errno. */
int fit_train_run(struct fit *f, int held, double *w, struct fit_train *t);

/* Each message's hand-set score, and its score fitted without its fold;
 * *sum adds up the folds' runs. 0 or a negative errno. */
int fit_train_cross_validate(struct fit *f, struct fit_train *sum);

#endif
