/*
 * fit_data.h - the features and labelled messages of a "slopctl fit" run
 * (fit_run.h). Single-threaded.
 */
#ifndef SLOPCTL_FIT_DATA_H
#define SLOPCTL_FIT_DATA_H

#include <stddef.h>

#include "fit_run.h"

/* The features and their priors and bounds, from f->c's rules. 0 or
 * -ENOMEM. */
int fit_data_features(struct fit *f);

/* Read the labels file f->labels and scan every message it names.
 * Returns 0, a sysexits code for bad labels, or -errno. */
int fit_data_labels(struct fit *f);

/* Whole sources to folds (fit_folds.h); 0 or a negative errno. */
int fit_data_folds(struct fit *f);

/* Messages of distinct sources, counted once (cached in f->n_distinct). */
size_t fit_data_sources(struct fit *f);

#endif
