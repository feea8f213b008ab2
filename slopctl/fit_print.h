/*
 * fit_print.h - the figures and files a "slopctl fit" run (fit_run.h)
 * writes. Single-threaded.
 */
#ifndef SLOPCTL_FIT_PRINT_H
#define SLOPCTL_FIT_PRINT_H

#include <stddef.h>

#include "fit_run.h"

/* Each rule's prior and fitted weight, and the messages it matched. */
void fit_print_weights(const struct fit *f);

/* The cross-validated figures and, with --plot-dir, the plots. 0, or a
 * negative errno when the plots could not be written (said on stderr). */
int fit_print_figures(const struct fit *f);

/* The scores file f->out_path; 0 or a negative errno. */
int fit_print_scores(const struct fit *f, size_t n_slop, const struct fit_train *t);

/* --cv-out: one row per message to f->cv_path; 0 or a negative errno. */
int fit_print_cv(const struct fit *f);

#endif
