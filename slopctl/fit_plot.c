/*
 * fit_plot.c - ROC and precision-recall points from scored, labelled
 * examples (fit_plot.h), written as gnuplot data plus a script.
 *
 * A curve has one point per distinct score, taken as the threshold: every
 * example scoring at least that much is flagged. Examples are ordered by
 * score, then by index, so equal input gives byte-identical files. The
 * SVGs are optional (gnuplot may be missing); the data files are not.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fit_plot.h"

static const double *sort_score; /* qsort has no context; single-threaded */

static int
by_score_desc(const void *a, const void *b)
{
    size_t i = *(const size_t *)a, j = *(const size_t *)b;

    if (sort_score[i] != sort_score[j])
        return sort_score[i] > sort_score[j] ? -1 : 1;
    return i < j ? -1 : i > j;
}

/* Indices of s sorted by score, highest first; the caller frees. */
static size_t *
sorted(const struct fit_plot_series *s)
{
    size_t *idx = malloc((s->n + 1) * sizeof(*idx));

    if (idx == NULL)
        return NULL;
    for (size_t i = 0; i < s->n; i++)
        idx[i] = i;
    sort_score = s->score;
    qsort(idx, s->n, sizeof(*idx), by_score_desc);
    sort_score = NULL;
    return idx;
}

/* One point per distinct score, highest first: flagged when scoring at
 * least threshold, tp positives and fp negatives are. */
struct point {
    double threshold;
    size_t tp, fp;
};

/* The points of s into *ret (the caller frees), *ret_n of them, and the
 * class sizes. Returns 0 or -ENOMEM. */
static int
curve(const struct fit_plot_series *s, struct point **ret, size_t *ret_n, size_t *pos, size_t *neg)
{
    struct point *pt = malloc((s->n + 1) * sizeof(*pt));
    size_t *idx = sorted(s), n = 0, tp = 0, fp = 0;

    if (pt == NULL || idx == NULL) {
        free(pt);
        free(idx);
        return -ENOMEM;
    }
    for (size_t k = 0; k < s->n;) {
        double v = s->score[idx[k]];

        for (; k < s->n && s->score[idx[k]] == v; k++) {
            if (s->y[idx[k]])
                tp++;
            else
                fp++;
        }
        pt[n++] = (struct point){v, tp, fp};
    }
    free(idx);
    *pos = tp;
    *neg = fp;
    *ret = pt;
    *ret_n = n;
    return 0;
}

int
fit_plot_auc(const struct fit_plot_series *s, double *ret)
{
    struct point *pt;
    size_t n, pos, neg;
    double area = 0;
    int r;

    *ret = 0;
    r = curve(s, &pt, &n, &pos, &neg);
    if (r < 0)
        return r;
    for (size_t k = 0; k < n; k++) {
        size_t tp0 = k ? pt[k - 1].tp : 0, fp0 = k ? pt[k - 1].fp : 0;

        area += (double)(pt[k].fp - fp0) * (double)(pt[k].tp + tp0) / 2;
    }
    if (pos > 0 && neg > 0)
        *ret = area / ((double)pos * (double)neg);
    free(pt);
    return 0;
}

/* roc-NAME.dat ("fpr tpr threshold") and pr-NAME.dat ("recall precision
 * threshold") for one series. */
static int
write_curves(const char *dir, const struct fit_plot_series *s)
{
    char path[4096];
    FILE *roc = NULL, *pr = NULL;
    struct point *pt;
    size_t n, pos, neg;
    int r;

    r = curve(s, &pt, &n, &pos, &neg);
    if (r < 0)
        return r;
    snprintf(path, sizeof(path), "%s/roc-%s.dat", dir, s->name);
    roc = fopen(path, "w");
    snprintf(path, sizeof(path), "%s/pr-%s.dat", dir, s->name);
    pr = fopen(path, "w");
    if (roc == NULL || pr == NULL) {
        r = -errno;
        goto out;
    }
    fprintf(roc, "# %s scores: false-alarm rate, recall, threshold\n0 0 inf\n", s->name);
    fprintf(pr, "# %s scores: recall, precision, threshold\n", s->name);
    for (size_t k = 0; k < n; k++) {
        double recall = pos ? (double)pt[k].tp / (double)pos : 0;

        fprintf(roc, "%.6f %.6f %.2f\n", neg ? (double)pt[k].fp / (double)neg : 0, recall,
                pt[k].threshold);
        fprintf(pr, "%.6f %.6f %.2f\n", recall, (double)pt[k].tp / (double)(pt[k].tp + pt[k].fp),
                pt[k].threshold);
    }
out:
    if (roc != NULL && fclose(roc) != 0 && r == 0)
        r = -errno;
    if (pr != NULL && fclose(pr) != 0 && r == 0)
        r = -errno;
    free(pt);
    return r;
}

static int
write_script(const char *dir, const char *title, const struct fit_plot_series *s, size_t n)
{
    static const char *const curves[2][4] = {
        {"roc", "false alarms (share of genuine mail flagged)", "recall (share of slop flagged)",
         "bottom right"},
        {"pr", "recall (share of slop flagged)", "precision (share of flagged that is slop)",
         "bottom left"},
    };
    char path[4096];
    FILE *f;

    snprintf(path, sizeof(path), "%s/fit.gp", dir);
    f = fopen(path, "w");
    if (f == NULL)
        return -errno;
    fprintf(f, "# written by slopctl fit; run: gnuplot fit.gp\n"
               "set terminal svg size 640,480 dynamic font 'sans,12' background '#ffffff'\n"
               "set grid\nset xrange [0:1]\nset yrange [0:1.02]\n");
    for (size_t c = 0; c < 2; c++) {
        fprintf(f, "set output '%s.svg'\nset title \"%s\"\nset xlabel '%s'\nset ylabel '%s'\n",
                curves[c][0], title, curves[c][1], curves[c][2]);
        fprintf(f, "set key %s\nplot ", curves[c][3]);
        for (size_t i = 0; i < n; i++) {
            double auc = 0;

            (void)fit_plot_auc(&s[i], &auc);
            if (c == 0)
                fprintf(f, "%s'roc-%s.dat' using 1:2 with lines lw 2 title '%s (AUC %.3f)'",
                        i ? ", " : "", s[i].name, s[i].name, auc);
            else
                fprintf(f, "%s'pr-%s.dat' using 1:2 with lines lw 2 title '%s'", i ? ", " : "",
                        s[i].name, s[i].name);
        }
        fputc('\n', f);
    }
    if (fclose(f) != 0)
        return -errno;
    return 0;
}

/* gnuplot fit.gp in dir; 1 when it ran and succeeded, 0 when it is not
 * installed or failed. */
static int
run_gnuplot(const char *dir)
{
    int status;
    pid_t pid;

    fflush(NULL);
    pid = fork();
    if (pid < 0)
        return 0;
    if (pid == 0) {
        int fd = open("/dev/null", O_WRONLY);

        /* Its chatter (font warnings) is not ours to print. */
        if (fd >= 0) {
            dup2(fd, STDOUT_FILENO);
            dup2(fd, STDERR_FILENO);
        }
        if (chdir(dir) == 0)
            execlp("gnuplot", "gnuplot", "fit.gp", (char *)NULL);
        _exit(127);
    }
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return 0;
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

int
fit_plot_write(const char *dir, const char *title, const struct fit_plot_series *s, size_t n,
               int *ret_drawn)
{
    int r = 0;

    for (size_t i = 0; i < n && r == 0; i++)
        r = write_curves(dir, &s[i]);
    if (r == 0)
        r = write_script(dir, title, s, n);
    if (r < 0)
        return r;
    *ret_drawn = run_gnuplot(dir);
    return 0;
}
