/*
 * fit_data.c - the data of "slopctl fit": the features (the reported
 * rules, with their priors and bounds), the labels file read line by line,
 * every message it names scanned once (without --state, the rules that
 * need an indexed tree or history do not fire; with it, read-only) and
 * kept as its class, group, source and matched rules, and whole sources
 * dealt to folds (fit_folds.h). Every input-driven size is capped (labels,
 * line length, groups, sources). Single-threaded.
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>

#include "fit_data.h"
#include "fit_folds.h"
#include "mailbox.h"

static int
u64_cmp(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

    return x < y ? -1 : x > y;
}

/* The features and their priors and bounds, from the loaded rules. */
int
fit_data_features(struct fit *f)
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

/* The labels line's source: the one named in its fourth field, else the
 * line itself. 0, or EX_DATAERR after a message. */
static int
label_source(struct fit *f, char *field[4], size_t n, unsigned lineno)
{
    const char *why = NULL;

    /* Without a source, the line is one: an mbox stays whole, and the
     * path as written keeps the folds where they are when the labels
     * and the mail move together. */
    f->cur_named = -1;
    f->cur_source = fnv1a(14695981039346656037ull, field[0], strlen(field[0]));
    if (n <= 3 || field[3][0] == '\0')
        return 0;
    f->cur_named = source_find(f, field[3], &f->cur_source, &why);
    if (f->cur_named < 0) {
        fprintf(stderr, "%s:%u: %s\n", f->labels, lineno, why);
        return EX_DATAERR;
    }
    /* A named source never meets an unnamed one by accident. */
    f->cur_source = ~f->cur_source;
    return 0;
}

/* Scan the messages at the labels line's path (relative to dir unless
 * absolute). 0, a sysexits code after a message, or -errno. */
static int
label_scan(struct fit *f, const char *file, const char *dir, unsigned lineno)
{
    char path[8192];
    int r;

    if (++f->n_lines > FIT_MAX_EXAMPLES) {
        fprintf(stderr, "%s:%u: more than %u labels\n", f->labels, lineno, FIT_MAX_EXAMPLES);
        return EX_DATAERR;
    }
    r = path_keep(f, file, &f->cur_path);
    if (r < 0)
        return r;
    if ((size_t)snprintf(path, sizeof(path), "%s%s%s", file[0] == '/' ? "" : dir,
                         file[0] == '/' ? "" : "/", file) >= sizeof(path)) {
        fprintf(stderr, "%s:%u: path too long\n", f->labels, lineno);
        return EX_DATAERR;
    }
    return mailbox_walk(path, 0, fit_message, fit_unreadable, f);
}

/* One labels line, its newline cut off; *first until the first label (a
 * first line that is no label is a header). 0, a sysexits code after a
 * message, or -errno. */
static int
label_line(struct fit *f, char *line, unsigned lineno, const char *dir, bool *first)
{
    char *field[4] = {NULL, NULL, NULL, NULL};
    const char *why = NULL, *group;
    unsigned char y;
    size_t n;
    int g, r;

    if (line[strspn(line, " \t\r")] == '\0' || line[0] == '#')
        return 0;
    n = split_fields(line, field);
    if (n < 2 || (strcmp(field[1], "slop") != 0 && strcmp(field[1], "genuine") != 0)) {
        if (*first) {
            *first = false;
            return 0;
        }
        fprintf(stderr, "%s:%u: expected 'path<TAB>slop|genuine[<TAB>group[<TAB>source]]'\n",
                f->labels, lineno);
        return EX_DATAERR;
    }
    *first = false;
    y = strcmp(field[1], "slop") == 0;
    group = n > 2 && field[2][0] != '\0' ? field[2] : field[1];
    g = group_find(f, group, y, &why);
    if (g < 0 || field[0][0] == '\0') {
        fprintf(stderr, "%s:%u: %s\n", f->labels, lineno, why ? why : "empty path");
        return EX_DATAERR;
    }
    f->cur_group = (uint32_t)g;
    r = label_source(f, field, n, lineno);
    if (r != 0)
        return r;
    return label_scan(f, field[0], dir, lineno);
}

int
fit_data_labels(struct fit *f)
{
    char line[FIT_MAX_LINE + 2], dir[4096];
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
        size_t len = strlen(line);

        lineno++;
        if (len > FIT_MAX_LINE && line[len - 1] != '\n') {
            fprintf(stderr, "%s:%u: line longer than %u bytes\n", f->labels, lineno, FIT_MAX_LINE);
            r = EX_DATAERR;
            break;
        }
        if (len > 0 && line[len - 1] == '\n')
            line[--len] = '\0';
        r = label_line(f, line, lineno, dir, &first);
    }
    if (r == 0 && ferror(in))
        r = -EIO;
    fclose(in);
    return r;
}

/* Whole sources to folds (fit_folds.h); at least two, or no test is
 * left beside a training set. */
int
fit_data_folds(struct fit *f)
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

/* Messages of distinct sources, counted once (cached in f->n_distinct). */
size_t
fit_data_sources(struct fit *f)
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
