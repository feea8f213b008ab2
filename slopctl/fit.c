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
 * Single-threaded; everything allocated is freed before fit_cmd returns.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sysexits.h>
#include <time.h>

#include "classifier.h"
#include "fit.h"
#include "fit_folds.h"
#include "fit_plot.h"
#include "logreg.h"
#include "mailbox.h"
#include "output.h"
#include "state.h"
#include "state_db.h"
#include "statedir.h"

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
/* Exit status when some messages could not be read or the fit did not
 * converge; the figures and scores are still written. */
#define SLOPCTL_FIT_PARTIAL 1

static int
u64_cmp(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

    return x < y ? -1 : x > y;
}

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

static const char fit_usage[] =
    "usage: slopctl fit [--rules DIR] [-o FILE] [--folds K|all] [--fp-limit P]\n"
    "                   [--lambda L] [--scale S] [--max-score N] [--seed N]\n"
    "                   [--threshold tag=N] [--threshold reply=N] [--plot-dir DIR]\n"
    "                   [--slop-weight W] [--state DIR] [--cv-out FILE]\n"
    "                   [--project NAME] LABELS\n"
    "LABELS: one message per line, 'path<TAB>class[<TAB>group[<TAB>source]]' (or\n"
    "commas), class slop or genuine; paths relative to the labels file's directory;\n"
    "messages of one source (default: of one line) are held out together;\n"
    "--folds K or all (one source per fold)\n";

static int fit_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int
fit_usage_error(const char *fmt, ...)
{
    va_list ap;

    fputs("slopctl fit: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    fputs(fit_usage, stderr);
    return EX_USAGE;
}

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

/* The features and their priors and bounds, from the loaded rules. */
static int
features_init(struct fit *f)
{
    size_t n = classifier_rule_count(f->c);

    f->n_rules = n;
    f->feat_of = calloc(n + 1, sizeof(*f->feat_of));
    f->rule_of = calloc(n + 1, sizeof(*f->rule_of));
    f->prior = calloc(n + 1, sizeof(*f->prior));
    f->lo = calloc(n + 1, sizeof(*f->lo));
    f->hi = calloc(n + 1, sizeof(*f->hi));
    f->w = calloc(n + 1, sizeof(*f->w));
    f->lo_all = calloc(n + 1, sizeof(*f->lo_all));
    f->hi_all = calloc(n + 1, sizeof(*f->hi_all));
    f->style = calloc(n + 1, sizeof(*f->style));
    f->hits[0] = calloc(n + 1, sizeof(*f->hits[0]));
    f->hits[1] = calloc(n + 1, sizeof(*f->hits[1]));
    if (f->feat_of == NULL || f->rule_of == NULL || f->prior == NULL || f->lo == NULL ||
        f->hi == NULL || f->w == NULL || f->lo_all == NULL || f->hi_all == NULL ||
        f->style == NULL || f->hits[0] == NULL || f->hits[1] == NULL)
        return -ENOMEM;
    for (size_t i = 0; i < n; i++) {
        struct classifier_rule_info info;
        size_t j = f->n_feat;
        double p;

        f->feat_of[i] = SIZE_MAX;
        if (classifier_rule_info(f->c, i, &info) < 0 || info.helper)
            continue;
        p = info.file_score;
        f->feat_of[i] = j;
        f->rule_of[j] = i;
        f->prior[j] = p;
        f->style[j] = info.style;
        /* A gap never rewards, a note never scores, and no rule alone
         * goes past twice its prior or --max-score. */
        f->lo[j] = p > 0 ? 0 : fmax(2 * p, -f->max_score);
        f->hi[j] = p > 0 ? fmin(2 * p, f->max_score) : 0;
        if (f->hi[j] < p)
            f->hi[j] = p;
        if (f->lo[j] > p)
            f->lo[j] = p;
        f->lo_all[j] = f->lo[j];
        f->hi_all[j] = f->hi[j];
        f->n_feat++;
    }
    return 0;
}

static int
grow_examples(struct fit *f)
{
    size_t cap = f->cap_ex ? f->cap_ex * 2 : 256;
    struct fit_example *ex;
    unsigned char *y;
    double *cw;
    size_t *row;

    ex = realloc(f->ex, cap * sizeof(*ex));
    if (ex == NULL)
        return -ENOMEM;
    f->ex = ex;
    y = realloc(f->y, cap * sizeof(*y));
    if (y == NULL)
        return -ENOMEM;
    f->y = y;
    cw = realloc(f->cw, cap * sizeof(*cw));
    if (cw == NULL)
        return -ENOMEM;
    f->cw = cw;
    row = realloc(f->row, (cap + 1) * sizeof(*row));
    if (row == NULL)
        return -ENOMEM;
    f->row = row;
    f->cap_ex = cap;
    return 0;
}

static uint64_t
fnv1a(uint64_t h, const void *p, size_t n)
{
    const unsigned char *s = p;

    for (size_t i = 0; i < n; i++)
        h = (h ^ s[i]) * 1099511628211ull;
    return h;
}

static int
add_feature(struct fit *f, uint32_t j)
{
    if (f->nnz == f->cap_feat) {
        size_t cap = f->cap_feat ? f->cap_feat * 2 : 1024;
        uint32_t *v = realloc(f->feat, cap * sizeof(*v));

        if (v == NULL)
            return -ENOMEM;
        f->feat = v;
        f->cap_feat = cap;
    }
    f->feat[f->nnz++] = j;
    return 0;
}

static int
fit_message(void *ctx, const struct mailbox_msg *m)
{
    struct fit *f = ctx;
    struct classifier_result *res = NULL;
    struct classifier_envelope env = {.mail_from = "", .lookup = &f->sl.lookup};
    struct fit_example *e;
    unsigned char y = f->groups[f->cur_group].y;
    int r;

    if (f->n_ex >= FIT_MAX_EXAMPLES) {
        fprintf(stderr, "slopctl fit: more than %u messages\n", FIT_MAX_EXAMPLES);
        return f->error = -E2BIG;
    }
    if (f->n_ex == f->cap_ex && (r = grow_examples(f)) < 0)
        return f->error = r;
    if (f->st != NULL) {
        /* As slopctl scan: as of its arrival, so that the daemon's record
         * of this message or of later ones is no duplicate of it. */
        env.arrival = classifier_arrival(m->data, m->len);
        f->sl.opts.now = (time_t)env.arrival;
    }
    r = classifier_scan(f->c, m->data, m->len, f->st != NULL ? &env : NULL, &res);
    if (r < 0) {
        fprintf(stderr, "slopctl fit: %s: cannot scan: %s\n", m->file, strerror(-r));
        f->unreadable++;
        return 0;
    }
    e = &f->ex[f->n_ex];
    memset(e, 0, sizeof(*e));
    e->source = f->cur_source;
    e->named = f->cur_named;
    e->path = f->cur_path;
    e->index = m->index;
    e->group = f->cur_group;
    e->kind = (unsigned)res->kind;
    f->y[f->n_ex] = y;
    f->row[f->n_ex] = f->nnz;
    for (size_t k = 0; k < res->n_matched; k++) {
        size_t j = res->matched[k] < f->n_rules ? f->feat_of[res->matched[k]] : SIZE_MAX;

        if (j == SIZE_MAX)
            continue;
        r = add_feature(f, (uint32_t)j);
        if (r < 0)
            goto out;
        f->hits[y][j]++;
    }
    f->groups[f->cur_group].n++;
    f->n_ex++;
    f->row[f->n_ex] = f->nnz;
out:
    classifier_result_free(res);
    if (r < 0)
        f->error = r;
    return r;
}

static void
fit_unreadable(void *ctx, const char *file, size_t index, const char *reason)
{
    struct fit *f = ctx;

    (void)index;
    f->unreadable++;
    fprintf(stderr, "slopctl fit: %s: %s\n", file, reason);
}

/* The group named name (created with class y), or -1 with *why set. */
static int
group_find(struct fit *f, const char *name, unsigned char y, const char **why)
{
    for (size_t g = 0; g < f->n_groups; g++) {
        if (strcmp(f->groups[g].name, name) != 0)
            continue;
        if (f->groups[g].y != y) {
            *why = "group used with both classes";
            return -1;
        }
        return (int)g;
    }
    if (strlen(name) > FIT_GROUP_NAME_MAX) {
        *why = "group name too long";
        return -1;
    }
    if (f->n_groups == FIT_MAX_GROUPS) {
        *why = "too many groups";
        return -1;
    }
    snprintf(f->groups[f->n_groups].name, sizeof(f->groups[0].name), "%s", name);
    f->groups[f->n_groups].y = y;
    return (int)f->n_groups++;
}

/* The source named name: its index, or -1 with *why set. Sources are
 * keyed by a hash of the name; names are kept for the figures. */
static int
source_find(struct fit *f, const char *name, uint64_t *ret_hash, const char **why)
{
    uint64_t h = fnv1a(14695981039346656037ull, name, strlen(name));
    char *copy;

    for (size_t i = 0; i < f->n_sources; i++)
        if (f->source_hash[i] == h && strcmp(f->source_name[i], name) == 0) {
            *ret_hash = h;
            return (int)i;
        }
    if (strlen(name) > FIT_SOURCE_NAME_MAX) {
        *why = "source name too long";
        return -1;
    }
    if (f->n_sources == FIT_MAX_SOURCES) {
        *why = "too many sources";
        return -1;
    }
    copy = strdup(name);
    if (copy == NULL) {
        *why = strerror(ENOMEM);
        return -1;
    }
    f->source_name[f->n_sources] = copy;
    f->source_hash[f->n_sources] = h;
    *ret_hash = h;
    return (int)f->n_sources++;
}

/* Keep the labels line's path as written, for --cv-out; at *ret_off. */
static int
path_keep(struct fit *f, const char *path, size_t *ret_off)
{
    size_t len = strlen(path) + 1;

    if (f->paths_len + len > f->paths_cap) {
        size_t cap = f->paths_cap ? f->paths_cap * 2 : 4096;
        char *p;

        while (cap < f->paths_len + len)
            cap *= 2;
        p = realloc(f->paths, cap);
        if (p == NULL)
            return -ENOMEM;
        f->paths = p;
        f->paths_cap = cap;
    }
    memcpy(f->paths + f->paths_len, path, len);
    *ret_off = f->paths_len;
    f->paths_len += len;
    return 0;
}

/* Cut line into at most 4 fields at tabs, or at commas when it has none,
 * each trimmed of spaces. */
static size_t
split_fields(char *line, char *field[4])
{
    char sep = strchr(line, '\t') != NULL ? '\t' : ',';
    size_t n = 0;
    char *p = line;

    while (n < 4) {
        char *e = strchr(p, sep);

        field[n++] = p;
        if (e == NULL)
            break;
        *e = '\0';
        p = e + 1;
    }
    /* Columns past the source are the caller's (notes, URLs). */
    if (n == 4 && (p = strchr(field[3], sep)) != NULL)
        *p = '\0';
    for (size_t i = 0; i < n; i++) {
        size_t len = strlen(field[i]);

        while (len > 0 && (field[i][len - 1] == ' ' || field[i][len - 1] == '\r'))
            field[i][--len] = '\0';
        field[i] += strspn(field[i], " ");
    }
    return n;
}

/* Read the labels file and scan every message it names. Returns 0, a
 * sysexits code for bad labels, or -errno. */
static int
labels_scan(struct fit *f)
{
    char line[FIT_MAX_LINE + 2], dir[4096], path[8192];
    const char *slash = strrchr(f->labels, '/');
    bool first = true;
    unsigned lineno = 0;
    FILE *in;
    int r = 0;

    snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - f->labels) : 1,
             slash ? f->labels : ".");
    in = fopen(f->labels, "r");
    if (in == NULL) {
        fprintf(stderr, "slopctl fit: cannot open '%s': %s\n", f->labels, strerror(errno));
        return EX_NOINPUT;
    }
    while (r == 0 && fgets(line, sizeof(line), in) != NULL) {
        char *field[4] = {NULL, NULL, NULL, NULL};
        const char *why = NULL, *group;
        unsigned char y;
        size_t n, len = strlen(line);
        int g;

        lineno++;
        if (len > FIT_MAX_LINE && line[len - 1] != '\n') {
            fprintf(stderr, "%s:%u: line longer than %u bytes\n", f->labels, lineno, FIT_MAX_LINE);
            r = EX_DATAERR;
            break;
        }
        if (len > 0 && line[len - 1] == '\n')
            line[--len] = '\0';
        if (line[strspn(line, " \t\r")] == '\0' || line[0] == '#')
            continue;
        n = split_fields(line, field);
        if (n < 2 || (strcmp(field[1], "slop") != 0 && strcmp(field[1], "genuine") != 0)) {
            /* A first line that is no label is a header. */
            if (first) {
                first = false;
                continue;
            }
            fprintf(stderr, "%s:%u: expected 'path<TAB>slop|genuine[<TAB>group[<TAB>source]]'\n",
                    f->labels, lineno);
            r = EX_DATAERR;
            break;
        }
        first = false;
        y = strcmp(field[1], "slop") == 0;
        group = n > 2 && field[2][0] != '\0' ? field[2] : field[1];
        g = group_find(f, group, y, &why);
        if (g < 0 || field[0][0] == '\0') {
            fprintf(stderr, "%s:%u: %s\n", f->labels, lineno, why ? why : "empty path");
            r = EX_DATAERR;
            break;
        }
        f->cur_group = (uint32_t)g;
        /* Without a source, the line is one: an mbox stays whole, and the
         * path as written keeps the folds where they are when the labels
         * and the mail move together. */
        f->cur_named = -1;
        f->cur_source = fnv1a(14695981039346656037ull, field[0], strlen(field[0]));
        if (n > 3 && field[3][0] != '\0') {
            f->cur_named = source_find(f, field[3], &f->cur_source, &why);
            if (f->cur_named < 0) {
                fprintf(stderr, "%s:%u: %s\n", f->labels, lineno, why);
                r = EX_DATAERR;
                break;
            }
            /* A named source never meets an unnamed one by accident. */
            f->cur_source = ~f->cur_source;
        }
        if (++f->n_lines > FIT_MAX_EXAMPLES) {
            fprintf(stderr, "%s:%u: more than %u labels\n", f->labels, lineno, FIT_MAX_EXAMPLES);
            r = EX_DATAERR;
            break;
        }
        r = path_keep(f, field[0], &f->cur_path);
        if (r < 0)
            break;
        if ((size_t)snprintf(path, sizeof(path), "%s%s%s", field[0][0] == '/' ? "" : dir,
                             field[0][0] == '/' ? "" : "/", field[0]) >= sizeof(path)) {
            fprintf(stderr, "%s:%u: path too long\n", f->labels, lineno);
            r = EX_DATAERR;
            break;
        }
        r = mailbox_walk(path, 0, fit_message, fit_unreadable, f);
    }
    if (r == 0 && ferror(in))
        r = -EIO;
    fclose(in);
    return r;
}

/* Whole sources to folds (fit_folds.h); at least two, or no test is
 * left beside a training set. */
static int
assign_folds(struct fit *f)
{
    struct fit_folds_item *it = malloc((f->n_ex + 1) * sizeof(*it));
    unsigned *fold = malloc((f->n_ex + 1) * sizeof(*fold));
    int r;

    if (it == NULL || fold == NULL) {
        r = -ENOMEM;
        goto out;
    }
    for (size_t i = 0; i < f->n_ex; i++)
        it[i] = (struct fit_folds_item){f->ex[i].source, f->ex[i].group};
    r = fit_folds_deal(it, f->n_ex, f->folds, f->seed, fold, &f->n_folds);
    if (r < 0)
        goto out;
    for (size_t i = 0; i < f->n_ex; i++)
        f->ex[i].fold = fold[i];
out:
    free(it);
    free(fold);
    return r;
}

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

/* Fit w on every fold but held (-1: on all), then refit while genuine
 * training mail over the tag threshold exceeds the limit. */
static int
train(struct fit *f, int held, double *w, struct fit_train *t)
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
        t->fp = t->genuine = 0;
        for (size_t i = 0; i < f->n_ex; i++) {
            if (f->cw[i] == 0 || f->y[i])
                continue;
            t->genuine++;
            if (logreg_score(&p, w, i) >= f->tag)
                t->fp++;
        }
        t->fp_met = (double)t->fp <= f->fp_limit * (double)t->genuine;
        if (t->fp_met || t->rounds == FIT_FP_ROUNDS)
            return 0;
        t->rounds++;
        for (size_t i = 0; i < f->n_ex; i++)
            if (f->cw[i] > 0 && !f->y[i] && logreg_score(&p, w, i) >= f->tag)
                f->cw[i] *= FIT_FP_BOOST;
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

static int
cross_validate(struct fit *f, struct fit_train *sum)
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
        r = train(f, (int)k, w, &t);
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

static void
print_weights(const struct fit *f)
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

/* Messages of distinct sources, counted once (cached in f->n_distinct). */
static size_t
count_sources(struct fit *f)
{
    uint64_t *h;

    if (f->n_distinct > 0 || f->n_ex == 0)
        return f->n_distinct;
    h = malloc(f->n_ex * sizeof(*h));
    if (h == NULL)
        return 0;
    for (size_t i = 0; i < f->n_ex; i++)
        h[i] = f->ex[i].source;
    qsort(h, f->n_ex, sizeof(*h), u64_cmp);
    for (size_t i = 0; i < f->n_ex; i++)
        f->n_distinct += i == 0 || h[i] != h[i - 1];
    free(h);
    return f->n_distinct;
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

static int
print_figures(const struct fit *f)
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

static int
write_scores(const struct fit *f, size_t n_slop, const struct fit_train *t)
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
static int
write_cv(const struct fit *f)
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

static int
parse_double(const char *s, double min, double max, double *ret)
{
    char *end;
    double v;

    errno = 0;
    v = strtod(s, &end);
    if (end == s || *end != '\0' || errno != 0 || !isfinite(v) || v < min || v > max)
        return -EINVAL;
    *ret = v;
    return 0;
}

static int
parse_options(struct fit *f, int argc, char **argv, const char **rules)
{
    static const struct option longopts[] = {
        {"rules", required_argument, NULL, 'r'},
        {"output", required_argument, NULL, 'o'},
        {"folds", required_argument, NULL, 'k'},
        {"fp-limit", required_argument, NULL, 'f'},
        {"lambda", required_argument, NULL, 'L'},
        {"scale", required_argument, NULL, 's'},
        {"max-score", required_argument, NULL, 'm'},
        {"seed", required_argument, NULL, 'S'},
        {"threshold", required_argument, NULL, 't'},
        {"plot-dir", required_argument, NULL, 'p'},
        {"state", required_argument, NULL, 'T'},
        {"slop-weight", required_argument, NULL, 'W'},
        {"cv-out", required_argument, NULL, 'c'},
        {"project", required_argument, NULL, 'P'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    double v;
    int opt;

    while ((opt = getopt_long(argc, argv, "r:o:k:t:h", longopts, NULL)) != -1) {
        switch (opt) {
        case 'r':
            *rules = optarg;
            break;
        case 'o':
            f->out_path = optarg;
            break;
        case 'k':
            if (strcmp(optarg, "all") == 0) {
                f->folds = 0;
                break;
            }
            if (parse_double(optarg, 2, FIT_MAX_FOLDS, &v) < 0 || v != floor(v))
                return fit_usage_error("bad --folds '%s', expected 2 to %u or all", optarg,
                                       FIT_MAX_FOLDS);
            f->folds = (unsigned)v;
            break;
        case 'c':
            f->cv_path = optarg;
            break;
        case 'P':
            /* As scan takes it: the rules a site's profile turns off must
             * be off in the fit too. */
            if (*optarg == '\0' ||
                strspn(optarg, "abcdefghijklmnopqrstuvwxyz0123456789-_") != strlen(optarg))
                return fit_usage_error("bad --project '%s', expected a name of a-z, 0-9, '-', '_'",
                                       optarg);
            f->profile = optarg;
            break;
        case 'f':
            if (parse_double(optarg, 0, 1, &f->fp_limit) < 0)
                return fit_usage_error("bad --fp-limit '%s', expected 0 to 1", optarg);
            break;
        case 'L':
            if (parse_double(optarg, 1e-6, 1e6, &f->lambda) < 0)
                return fit_usage_error("bad --lambda '%s', expected 1e-6 to 1e6", optarg);
            break;
        case 's':
            if (parse_double(optarg, 1e-3, 100, &f->scale) < 0)
                return fit_usage_error("bad --scale '%s', expected 0.001 to 100", optarg);
            break;
        case 'm':
            if (parse_double(optarg, 0, 1000, &f->max_score) < 0)
                return fit_usage_error("bad --max-score '%s'", optarg);
            break;
        case 'S':
            if (parse_double(optarg, 0, 4294967295.0, &v) < 0 || v != floor(v))
                return fit_usage_error("bad --seed '%s'", optarg);
            f->seed = (unsigned long)v;
            break;
        case 't':
            if (strncmp(optarg, "tag=", 4) == 0 &&
                parse_double(optarg + 4, 0.01, 1000, &f->tag) == 0)
                break;
            if (strncmp(optarg, "reply=", 6) == 0 &&
                parse_double(optarg + 6, 0, 1000, &f->reply) == 0)
                break;
            return fit_usage_error("bad --threshold '%s', expected tag=N or reply=N", optarg);
        case 'p':
            f->plot_dir = optarg;
            break;
        case 'T':
            f->state_dir = optarg;
            break;
        case 'W':
            if (parse_double(optarg, 0, 1e6, &f->slop_weight) < 0)
                return fit_usage_error("bad --slop-weight '%s', expected 0 (balanced) to 1e6",
                                       optarg);
            break;
        case 'h':
            fputs(fit_usage, stdout);
            return -1;
        default:
            return fit_usage_error("bad option");
        }
    }
    if (optind != argc - 1)
        return fit_usage_error("fit needs one LABELS file");
    f->labels = argv[optind];
    if (f->reply > 0 && f->max_score >= f->reply)
        return fit_usage_error("--max-score %g would let one rule reach reply at %g", f->max_score,
                               f->reply);
    return 0;
}

int
fit_cmd(int argc, char **argv, const char *(*rules_resolve)(const char *opt))
{
    struct output_diag_sink sink = {.f = stderr};
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
    int r, ret = 0;

    classifier_options_default(&opts);
    f.tag = opts.thresholds.score[CLASSIFIER_ACTION_TAG];
    f.reply = opts.thresholds.score[CLASSIFIER_ACTION_REPLY];
    r = parse_options(&f, argc, argv, &rules);
    if (r != 0)
        return r < 0 ? 0 : r;
    rules = rules_resolve(rules);
    if (f.profile != NULL)
        opts.profile = f.profile;
    r = classifier_new(rules, &opts, output_diag, &sink, &f.c);
    if (r < 0) {
        fprintf(stderr, "slopctl fit: cannot load rules from '%s': %s\n", rules, strerror(-r));
        return EX_CONFIG;
    }
    if (f.state_dir != NULL) {
        struct state_lookup_options lopts = {.trust_maintainers = true};

        ret = statedir_open(f.state_dir, STATE_READONLY, &f.st);
        if (ret != 0)
            goto out;
        state_lookup_init(&f.sl, f.st, &lopts);
    }
    r = features_init(&f);
    if (r == 0)
        r = labels_scan(&f);
    if (r == 0 && f.error < 0)
        r = f.error;
    if (r > 0) {
        ret = r;
        goto out;
    }
    if (r < 0)
        goto fail;
    for (size_t i = 0; i < f.n_ex; i++)
        n_slop += f.y[i];
    if (n_slop == 0 || n_slop == f.n_ex) {
        fprintf(stderr, "slopctl fit: need slop and genuine messages\n");
        ret = EX_DATAERR;
        goto out;
    }
    r = assign_folds(&f);
    if (r == 0 && f.n_folds > 0 && count_sources(&f) < 2) {
        fprintf(stderr, "slopctl fit: cross-validation needs messages of two sources or more\n");
        ret = EX_DATAERR;
        goto out;
    }
    if (r == 0)
        r = cross_validate(&f, &cv);
    if (r == 0)
        r = train(&f, -1, f.w, &all);
    if (r < 0)
        goto fail;

    printf("slopctl fit: %zu messages (%zu slop, %zu genuine) in %zu groups, %zu sources, %zu "
           "rules fitted\n",
           f.n_ex, n_slop, f.n_ex - n_slop, f.n_groups, count_sources(&f), f.n_feat);
    printf("lambda %g, scale %g, tag %g, reply %g, max-score %g, fp-limit %g, seed %lu, "
           "slop-weight %s\n",
           f.lambda, f.scale, f.tag, f.reply, f.max_score, f.fp_limit, f.seed,
           f.slop_weight > 0 ? "given" : "balanced");
    printf("held at the hand-set score (no labelled slop of the kinds they match): %zu rules\n",
           f.n_held);
    printf("fit on all: %s in %u sweeps, %u false-alarm refits, genuine over tag %zu/%zu%s\n",
           all.converged ? "converged" : "NOT converged", all.sweeps, all.rounds, all.fp,
           all.genuine, all.fp_met ? "" : " (over the limit)");
    printf("cross-validation: %s, %u false-alarm refits%s\n",
           cv.converged ? "converged" : "NOT converged", cv.rounds,
           cv.fp_met ? "" : ", some folds over the limit");
    print_weights(&f);
    r = print_figures(&f);
    if (r < 0)
        ret = SLOPCTL_FIT_PARTIAL;
    if (f.cv_path != NULL) {
        r = write_cv(&f);
        if (r < 0) {
            fprintf(stderr, "slopctl fit: cannot write '%s': %s\n", f.cv_path, strerror(-r));
            ret = EX_CANTCREAT;
            goto out;
        }
    }
    if (f.out_path != NULL) {
        r = write_scores(&f, n_slop, &all);
        if (r < 0) {
            fprintf(stderr, "slopctl fit: cannot write '%s': %s\n", f.out_path, strerror(-r));
            ret = EX_CANTCREAT;
            goto out;
        }
        printf("\nscores written to %s\n", f.out_path);
    }
    if (ret == 0 && (f.unreadable > 0 || !all.converged || !cv.converged))
        ret = SLOPCTL_FIT_PARTIAL;
    if (fflush(stdout) != 0)
        ret = EX_IOERR;
    goto out;
fail:
    fprintf(stderr, "slopctl fit: %s\n", strerror(-r));
    ret = r == -ENOMEM ? EX_OSERR : EX_SOFTWARE;
out:
    fit_release(&f);
    return ret;
}
