/*
 * fit_print.c - what "slopctl fit" prints and writes: the weights before
 * and after, the cross-validated figures per group and source with Wilson
 * intervals, the plots (fit_plot.h), the scores file (-o) and the
 * per-message cross-validation rows (--cv-out). Single-threaded; writes
 * to stdout and the files named.
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fit_plot.h"
#include "fit_print.h"

/* The action level reached as classifier_scan() decides it: 0 none, 1
 * tag, 2 reply or above (which needs the substance alone to reach tag). */
static int
level(const struct fit *f, double score, double sub)
{
    if (score < f->tag)
        return 0;
    if (f->reply > 0 && score >= f->reply && sub >= f->tag)
        return 2;
    return 1;
}

static double
pct(size_t a, size_t b)
{
    return b ? 100.0 * (double)a / (double)b : 0;
}

static const char *
rule_name(const struct fit *f, size_t j)
{
    struct classifier_rule_info info;

    return classifier_rule_info(f->c, f->rule_of[j], &info) == 0 ? info.name : "?";
}

void
fit_print_weights(const struct fit *f)
{
    size_t n;

    printf("\nweights (prior -> fitted on all messages; messages matched):\n");
    printf("  %-30s %-9s %6s %7s %6s %8s\n", "rule", "class", "prior", "fitted", "slop", "genuine");
    for (size_t j = 0; j < f->n_feat; j++)
        printf("  %-30s %-9s %6.2f %7.2f %6zu %8zu\n", rule_name(f, j),
               f->prior[j] == 0 ? "note"
               : f->style[j]    ? "style"
                                : "substance",
               f->prior[j], f->w[j] + 0.0, f->hits[1][j], f->hits[0][j]);
    for (int pass = 0; pass < 2; pass++) {
        printf(pass == 0 ? "\nnever matched:" : "\nfitted to 0:");
        n = 0;
        for (size_t j = 0; j < f->n_feat; j++) {
            bool never = f->hits[0][j] + f->hits[1][j] == 0;

            if (pass == 0 ? !never : never || f->prior[j] == 0 || f->w[j] != 0)
                continue;
            printf("%s %s", n > 0 && n % 4 == 0 ? "\n " : "", rule_name(f, j));
            n++;
        }
        printf(n == 0 ? " none\n" : "\n");
    }
}

struct tally {
    size_t n, tag[2], reply[2]; /* [0] hand-set, [1] fitted */
};

static void
tally_add(const struct fit *f, const struct fit_example *e, struct tally *t)
{
    int lv[2] = {level(f, e->hand, e->hand_sub), level(f, e->fitted, e->fitted_sub)};

    t->n++;
    for (int s = 0; s < 2; s++) {
        t->tag[s] += lv[s] >= 1;
        t->reply[s] += lv[s] >= 2;
    }
}

/* The 95% Wilson score interval of k in n, in percent: unlike the normal
 * approximation it stays within 0 to 100 and is not empty at 0 of n. */
static void
wilson(size_t k, size_t n, double *lo, double *hi)
{
    const double z = 1.959963984540054;
    double p, d, c, h;

    if (n == 0) {
        *lo = 0;
        *hi = 100;
        return;
    }
    p = (double)k / (double)n;
    d = 1 + z * z / (double)n;
    c = (p + z * z / (2.0 * (double)n)) / d;
    h = z * sqrt(p * (1 - p) / (double)n + z * z / (4.0 * (double)n * (double)n)) / d;
    *lo = 100 * fmax(0, c - h);
    *hi = 100 * fmin(1, c + h);
}

static void
print_tally(const char *indent, const char *name, const char *cls, const struct tally *t)
{
    printf("%s%-*s %-7s %5zu", indent, 44 - (int)strlen(indent), name, cls, t->n);
    for (int s = 0; s < 2; s++) {
        double lo, hi;

        wilson(t->tag[s], t->n, &lo, &hi);
        printf(" | %5zu %5.1f%% [%5.1f, %5.1f] %5zu", t->tag[s], pct(t->tag[s], t->n), lo, hi,
               t->reply[s]);
    }
    putchar('\n');
}

/* One row per group and, in a group of several named sources, one per
 * source; then all slop and all genuine mail. One pass over the messages
 * per group. */
static int
print_rows(const struct fit *f, struct tally all[2])
{
    struct tally *ts = calloc(f->n_sources + 1, sizeof(*ts));

    if (ts == NULL)
        return -ENOMEM;
    for (size_t g = 0; g < f->n_groups; g++) {
        const char *cls = f->groups[g].y ? "slop" : "genuine";
        struct tally t = {0};
        size_t named = 0;

        memset(ts, 0, (f->n_sources + 1) * sizeof(*ts));
        for (size_t i = 0; i < f->n_ex; i++) {
            const struct fit_example *e = &f->ex[i];

            if (e->group != g)
                continue;
            tally_add(f, e, &t);
            tally_add(f, e, &all[f->groups[g].y]);
            if (e->named >= 0)
                tally_add(f, e, &ts[e->named]);
        }
        print_tally("  ", f->groups[g].name, cls, &t);
        for (size_t q = 0; q < f->n_sources; q++)
            named += ts[q].n > 0;
        for (size_t q = 0; q < f->n_sources && named >= 2; q++)
            if (ts[q].n > 0)
                print_tally("    ", f->source_name[q], cls, &ts[q]);
    }
    print_tally("  ", "all slop (recall)", "slop", &all[1]);
    print_tally("  ", "all genuine (false alarm)", "genuine", &all[0]);
    free(ts);
    return 0;
}

static void
folds_name(const struct fit *f, char *buf, size_t size)
{
    if (f->folds == 0)
        snprintf(buf, size, "leave-one-source-out, %u folds", f->n_folds);
    else
        snprintf(buf, size, "%u folds of whole sources", f->n_folds);
}

int
fit_print_figures(const struct fit *f)
{
    struct tally all[2] = {{0}, {0}};
    struct fit_plot_series s[2];
    double *score[2] = {NULL, NULL}, auc[2];
    char how[64];
    int r;

    folds_name(f, how, sizeof(how));
    printf("\ncross-validated (%s): an action at >= %.1f (tag), answered (reply or above) at "
           ">= %.1f;\nrate of any action with its 95%% Wilson interval\n",
           how, f->tag, f->reply);
    printf("  %-42s %-7s %5s | %-35s | %-35s\n", "group / source", "class", "n",
           "hand-set: action  rate  95% CI  answered", "fitted: action  rate  95% CI  answered");
    r = print_rows(f, all);
    if (r < 0)
        return r;
    for (int k = 0; k < 2; k++) {
        score[k] = malloc((f->n_ex + 1) * sizeof(*score[k]));
        if (score[k] == NULL) {
            r = -ENOMEM;
            goto out;
        }
        for (size_t i = 0; i < f->n_ex; i++)
            score[k][i] = k == 0 ? f->ex[i].hand : f->ex[i].fitted;
        s[k] = (struct fit_plot_series){k == 0 ? "hand-set" : "fitted", score[k], f->y, f->n_ex};
        r = fit_plot_auc(&s[k], &auc[k]);
        if (r < 0)
            goto out;
    }
    printf("  precision at tag: hand-set %.1f%%, fitted %.1f%%\n",
           pct(all[1].tag[0], all[1].tag[0] + all[0].tag[0]),
           pct(all[1].tag[1], all[1].tag[1] + all[0].tag[1]));
    printf("  ROC AUC: hand-set %.3f, fitted %.3f\n", auc[0], auc[1]);
    r = 0;
    if (f->plot_dir != NULL) {
        char title[160];
        int drawn = 0;

        snprintf(title, sizeof(title), "cross-validated scores (%s), %zu slop, %zu genuine", how,
                 all[1].n, all[0].n);
        r = fit_plot_write(f->plot_dir, title, s, 2, &drawn);
        if (r < 0)
            fprintf(stderr, "slopctl fit: cannot write plots to '%s': %s\n", f->plot_dir,
                    strerror(-r));
        else
            printf("\nplots: %s/%s\n", f->plot_dir,
                   drawn ? "roc.svg, pr.svg" : "fit.gp and data (gnuplot did not run)");
    }
out:
    free(score[0]);
    free(score[1]);
    return r;
}

/* Scores rounded to what the scores file holds, kept within bounds. */
static double
rounded(const struct fit *f, size_t j)
{
    double v = round(f->w[j] * 100) / 100;

    return fmin(fmax(v, f->lo[j]), f->hi[j]) + 0.0;
}

int
fit_print_scores(const struct fit *f, size_t n_slop, const struct fit_train *t)
{
    const char *base = strrchr(f->labels, '/');
    char how[64];
    FILE *out;

    folds_name(f, how, sizeof(how));
    out = fopen(f->out_path, "w");
    if (out == NULL)
        return -errno;
    fprintf(out,
            "# Scores fitted by slopctl fit (docs/scoring.md): logistic regression with\n"
            "# the rule files' scores as priors, over %zu messages (%zu slop, %zu genuine)\n"
            "# labelled in %s. lambda %g, scale %g, tag %g, max-score %g, fp-limit %g,\n"
            "# cross-validated by source (%s), seed %lu;\n"
            "# %s, %u false-alarm refits.\n"
            "# Made by a program: refit rather than edit.\n",
            f->n_ex, n_slop, f->n_ex - n_slop, base ? base + 1 : f->labels, f->lambda, f->scale,
            f->tag, f->max_score, f->fp_limit, how, f->seed,
            t->converged ? "converged" : "NOT converged", t->rounds);
    for (size_t j = 0; j < f->n_feat; j++)
        if (f->prior[j] != 0)
            fprintf(out, "score %-30s %.2f\n", rule_name(f, j), rounded(f, j));
    if (fclose(out) != 0)
        return -errno;
    return 0;
}

static const char *
level_name(int lv)
{
    return lv >= 2 ? "answered" : lv == 1 ? "action" : "none";
}

/* --cv-out: each message's fold and its cross-validated scores, one line
 * each, for figures grouped otherwise than by the labels' groups. */
int
fit_print_cv(const struct fit *f)
{
    FILE *out = fopen(f->cv_path, "w");

    if (out == NULL)
        return -errno;
    fprintf(out, "# path\tindex\tclass\tgroup\tsource\tfold\thand\thand_level\tfitted\t"
                 "fitted_level (slopctl fit --cv-out)\n");
    for (size_t i = 0; i < f->n_ex; i++) {
        const struct fit_example *e = &f->ex[i];

        fprintf(out, "%s\t%zu\t%s\t%s\t%s\t%u\t%.2f\t%s\t%.2f\t%s\n", f->paths + e->path, e->index,
                f->y[i] ? "slop" : "genuine", f->groups[e->group].name,
                e->named >= 0 ? f->source_name[e->named] : "-", e->fold, e->hand + 0.0,
                level_name(level(f, e->hand, e->hand_sub)), e->fitted + 0.0,
                level_name(level(f, e->fitted, e->fitted_sub)));
    }
    if (fclose(out) != 0)
        return -errno;
    return 0;
}
