/*
 * fit_plot.h - ROC and precision-recall curves of "slopctl fit": the
 * points, the area under the ROC curve, and the data files and gnuplot
 * script that draw them as SVG. Single-threaded.
 */
#ifndef SLOPCTL_FIT_PLOT_H
#define SLOPCTL_FIT_PLOT_H

#include <stddef.h>

/* One scoring of labelled examples: score[i], positive when y[i]. */
struct fit_plot_series {
    const char *name; /* "hand-set", "fitted": file names and legend */
    const double *score;
    const unsigned char *y;
    size_t n;
};

/* Area under the ROC curve (ties count one half); 0 without both classes.
 * Returns -ENOMEM or 0. */
int fit_plot_auc(const struct fit_plot_series *s, double *ret);

/*
 * Into dir (which must exist): roc-NAME.dat and pr-NAME.dat per series,
 * fit.gp drawing roc.svg and pr.svg from them under title, then run
 * gnuplot there when it is installed (*ret_drawn says whether it drew).
 * Returns 0, or a negative errno when a file cannot be written.
 */
int fit_plot_write(const char *dir, const char *title, const struct fit_plot_series *s, size_t n,
                   int *ret_drawn);

#endif
