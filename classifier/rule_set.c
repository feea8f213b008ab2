/*
 * rule_set.c - load a directory of rule files into one compiled rule set.
 *
 * Loading runs in passes: list and sort the *.rules files, parse each
 * (rule_parse.c), check names (duplicates, combination references to
 * earlier rules only), compile every pattern with PCRE2, build the
 * prefilter, JIT-compile the patterns that run whole (when the platform
 * allows it), then report all problems sorted by file and line.
 * Any problem fails the load: a set is either whole or not returned.
 *
 * The returned set owns its rules, patterns and the one match context
 * holding the match and depth limits; nothing in it changes afterwards, so
 * threads share it without locks (rule_eval.c keeps per-call state).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "file_read.h"
#include "rule.h"
#include "rule_prefix.h"

/* Diagnostics about the directory itself carry this file index. */
#define RULE_SET_DIR_FILE ((size_t)-1)

static int
name_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* name ends in suffix (".rules", ".scores") and is more than that. */
static bool
is_file_of(const char *name, const char *suffix)
{
    size_t n = strlen(name), k = strlen(suffix);

    return name[0] != '.' && n > k && strcmp(name + n - k, suffix) == 0;
}

/* The regular files of dir named *suffix, sorted by name. */
static int
list_dir(const char *dir, const char *suffix, struct strv *names, struct rule_diag *d)
{
    struct dirent *de;
    struct stat st;
    DIR *dp;
    int r = 0;

    dp = opendir(dir);
    if (dp == NULL)
        return -errno;
    for (;;) {
        errno = 0;
        de = readdir(dp);
        if (de == NULL) {
            r = -errno;
            break;
        }
        if (!is_file_of(de->d_name, suffix))
            continue;
        if (fstatat(dirfd(dp), de->d_name, &st, 0) < 0 || !S_ISREG(st.st_mode))
            continue;
        r = strv_add(names, de->d_name, strlen(de->d_name), RULE_MAX_FILES);
        if (r == -E2BIG) {
            rule_parse_diag(d, RULE_SET_DIR_FILE, 0, "more than %u rule files", RULE_MAX_FILES);
            r = 0;
            break;
        }
        if (r < 0)
            break;
    }
    closedir(dp);
    if (r < 0)
        return r;
    if (names->n > 1)
        qsort(names->v, names->n, sizeof(*names->v), name_cmp);
    return 0;
}

/* Read the file at path whole into a NUL-terminated buffer. Problems with
 * the file are reported (and *ret stays NULL); only -ENOMEM is returned. */
static int
read_rule_file(const char *path, size_t file, struct rule_diag *d, char **ret, size_t *ret_len)
{
    char *buf = NULL, ebuf[128];
    size_t len = 0;
    struct stat st;
    int fd, r = 0;

    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        rule_parse_diag(d, file, 0, "cannot open: %s", strerror_r(errno, ebuf, sizeof(ebuf)));
        return 0;
    }
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
        rule_parse_diag(d, file, 0, "not a regular file");
        goto out;
    }
    if (st.st_size > (off_t)RULE_FILE_MAX_BYTES) {
        rule_parse_diag(d, file, 0, "file larger than %u bytes", RULE_FILE_MAX_BYTES);
        goto out;
    }
    /* A file that grew past what fstat said while being read (an editor
     * saving it during a reload) is longer than its own size. */
    r = file_read_fd(fd, (size_t)st.st_size, 0, &buf, &len);
    if (r == -EFBIG)
        rule_parse_diag(d, file, 0, "file changed while being read");
    else if (r < 0 && r != -ENOMEM)
        rule_parse_diag(d, file, 0, "cannot read: %s", strerror_r(-r, ebuf, sizeof(ebuf)));
    if (r < 0) {
        r = r == -ENOMEM ? r : 0;
        goto out;
    }
    *ret = buf;
    *ret_len = len;
    buf = NULL;
out:
    free(buf);
    close(fd);
    return r;
}

static const char *
base_name(const char *path)
{
    const char *s = strrchr(path, '/');

    return s != NULL ? s + 1 : path;
}

static uint64_t
name_hash(const char *s)
{
    uint64_t h = 14695981039346656037ull;

    for (; *s != '\0'; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

/* Open-addressing table of rule index + 1 (0: empty slot). */
struct name_table {
    size_t *slot;
    size_t mask;
};

static size_t *
name_table_find(const struct name_table *t, const struct rule_set *set, const char *name)
{
    size_t i = (size_t)name_hash(name) & t->mask;

    while (t->slot[i] != 0 && strcmp(set->rules[t->slot[i] - 1].name, name) != 0)
        i = (i + 1) & t->mask;
    return &t->slot[i];
}

/* Duplicates, then combination references: each must name a rule defined
 * earlier in the set. */
static int
check_names(struct rule_set *set, struct rule_diag *d)
{
    struct name_table t = {0};
    size_t size = 16;

    while (size < set->n_rules * 2)
        size *= 2;
    t.slot = calloc(size, sizeof(*t.slot));
    if (t.slot == NULL)
        return -ENOMEM;
    t.mask = size - 1;

    for (size_t i = 0; i < set->n_rules; i++) {
        const struct rule *rule = &set->rules[i];
        size_t *s = name_table_find(&t, set, rule->name);

        if (*s == 0) {
            *s = i + 1;
            continue;
        }
        const struct rule *first = &set->rules[*s - 1];
        rule_parse_diag(d, rule->file, rule->line,
                        "duplicate rule '%s' (first defined at %.100s:%u)", rule->name,
                        base_name(set->files.v[first->file]), first->line);
    }

    for (size_t i = 0; i < set->n_rules; i++) {
        struct rule *rule = &set->rules[i];

        for (size_t c = 0; c < rule->n_conds; c++) {
            struct rule_cond *cond = &rule->conds[c];

            for (size_t k = 0; k < cond->n_names; k++) {
                size_t *s = name_table_find(&t, set, cond->names[k]);

                if (*s == 0)
                    rule_parse_diag(d, rule->file, cond->line, "unknown rule '%s'", cond->names[k]);
                else if (*s - 1 >= i)
                    rule_parse_diag(d, rule->file, cond->line,
                                    "rule '%s' used before it is defined", cond->names[k]);
                else
                    cond->refs[k] = *s - 1;
            }
        }
    }
    free(t.slot);
    return 0;
}

/* set->ref_depth: references point backwards, so one pass in order sees
 * every referenced rule's depth before the rules that name it. */
static int
compute_ref_depth(struct rule_set *set)
{
    unsigned *depth = calloc(set->n_rules + 1, sizeof(*depth));

    if (depth == NULL)
        return -ENOMEM;
    set->ref_depth = 0;
    for (size_t i = 0; i < set->n_rules; i++) {
        const struct rule *rule = &set->rules[i];

        for (size_t c = 0; c < rule->n_conds; c++)
            for (size_t k = 0; k < rule->conds[c].n_names; k++) {
                size_t j = rule->conds[c].refs[k];

                if (j < i && depth[j] + 1 > depth[i])
                    depth[i] = depth[j] + 1;
            }
        if (depth[i] > set->ref_depth)
            set->ref_depth = depth[i];
    }
    free(depth);
    return 0;
}

static void
compile_pattern(struct rule_set *set, const struct rule *rule, const struct rule_cond *cond,
                struct rule_pattern *pat, struct rule_diag *d)
{
    PCRE2_UCHAR msg[160];
    PCRE2_SIZE off;
    uint32_t captures = 0;
    int err;

    pat->code = pcre2_compile((PCRE2_SPTR)pat->source, pat->len, RULE_PCRE2_OPTIONS | pat->options,
                              &err, &off, NULL);
    if (pat->code == NULL) {
        if (pcre2_get_error_message(err, msg, sizeof(msg)) < 0)
            snprintf((char *)msg, sizeof(msg), "error %d", err);
        rule_parse_diag(d, rule->file, cond->line, "bad pattern /%.40s/: %s at offset %zu",
                        pat->source, (const char *)msg, (size_t)off);
        return;
    }
    if (pcre2_pattern_info(pat->code, PCRE2_INFO_CAPTURECOUNT, &captures) == 0)
        pat->captures = captures;
    if (pat->captures + 1 > set->ovec_pairs)
        set->ovec_pairs = pat->captures + 1;
}

static void
compile_patterns(struct rule_set *set, struct rule_diag *d)
{
    for (size_t i = 0; i < set->n_rules; i++) {
        const struct rule *rule = &set->rules[i];

        for (size_t c = 0; c < rule->n_conds; c++) {
            struct rule_cond *cond = &rule->conds[c];

            for (size_t k = 0; k < 2; k++)
                if (cond->pat[k].source != NULL)
                    compile_pattern(set, rule, cond, &cond->pat[k], d);
        }
    }
}

/* JIT-compile every pattern that rule_eval.c runs whole, and find the
 * literals its matches start with (rule_prefix.h). A match or
 * nomatch pattern the prefilter split into alternatives is only ever run
 * one alternative at a time (run_whole()), and JIT-compiling it would be
 * a large share of loading for code that never runs. Without JIT
 * (unsupported platform, no executable memory) the interpreter runs the
 * same pattern with the same limits. */
static int
finish_patterns(struct rule_set *set)
{
    for (size_t i = 0; i < set->n_rules; i++) {
        struct rule *rule = &set->rules[i];

        for (size_t c = 0; c < rule->n_conds; c++) {
            struct rule_cond *cond = &rule->conds[c];
            bool may_split = cond->type == RULE_COND_MATCH || cond->type == RULE_COND_NOMATCH;

            for (size_t k = 0; k < 2; k++) {
                struct rule_pattern *pat = &cond->pat[k];
                size_t n;
                int r;

                if (pat->code == NULL ||
                    (k == 0 && may_split && rule_prefilter_alternatives_of(set, pat, &n) != NULL))
                    continue;
                (void)pcre2_jit_compile(pat->code, PCRE2_JIT_COMPLETE);
                r = rule_prefix_build(pat->code, pat->source, pat->len,
                                      RULE_PCRE2_OPTIONS | pat->options, &pat->prefix);
                if (r < 0)
                    return r;
            }
        }
    }
    return 0;
}

static int
diag_cmp(const void *a, const void *b)
{
    const struct rule_diag_entry *x = a, *y = b;

    /* The directory (index SIZE_MAX) sorts last, after every file. */
    if (x->file != y->file)
        return x->file < y->file ? -1 : 1;
    if (x->line != y->line)
        return x->line < y->line ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static void
emit_diags(const struct rule_set *set, const char *dir, struct rule_diag *d,
           classifier_diag_fn *diag_fn, void *diag_ctx)
{
    struct classifier_diag out;

    if (diag_fn == NULL)
        return;
    if (d->n > 1)
        qsort(d->v, d->n, sizeof(*d->v), diag_cmp);
    for (size_t i = 0; i < d->n; i++) {
        const struct rule_diag_entry *e = &d->v[i];
        const char *file = e->file < set->files.n ? set->files.v[e->file] : dir;

        memset(&out, 0, sizeof(out));
        snprintf(out.file, sizeof(out.file), "%s", file);
        out.line = e->line;
        snprintf(out.reason, sizeof(out.reason), "%s", e->reason);
        diag_fn(diag_ctx, &out);
    }
    if (d->problems > d->n) {
        memset(&out, 0, sizeof(out));
        snprintf(out.file, sizeof(out.file), "%s", dir);
        snprintf(out.reason, sizeof(out.reason), "%zu more problems not shown",
                 (size_t)d->problems - d->n);
        diag_fn(diag_ctx, &out);
    }
}

/* dir/name (dir NULL: name is the path), a rule file or, with scores, a
 * scores file. */
static int
rule_set_add_file(struct rule_set *set, const char *dir, const char *name, bool scores,
                  struct rule_diag *d)
{
    char *path = NULL, *text = NULL;
    size_t len = 0, file;
    int r;

    if (dir == NULL)
        path = strdup(name);
    else if (asprintf(&path, "%s/%s", dir, name) < 0)
        path = NULL;
    if (path == NULL)
        return -ENOMEM;
    r = strv_add(&set->files, path, strlen(path), RULE_MAX_FILES);
    if (r < 0)
        goto out;
    file = set->files.n - 1;
    r = read_rule_file(path, file, d, &text, &len);
    if (r < 0 || text == NULL)
        goto out;
    if (scores)
        r = rule_scores_parse(set, file, text, len, d);
    else
        r = rule_parse_text(set, file, text, len, d);
out:
    free(text);
    free(path);
    return r;
}

int
rule_set_load(const char *dir, const struct classifier_limits *limits, classifier_diag_fn *diag_fn,
              void *diag_ctx, unsigned *ret_problems, struct rule_set **ret)
{
    return rule_set_load_scored(dir, NULL, NULL, limits, diag_fn, diag_ctx, ret_problems, ret);
}

/* Adds every file of dir ending in suffix, in name order. */
static int
add_dir_files(struct rule_set *set, const char *dir, const char *suffix, bool scores,
              struct rule_diag *d)
{
    struct strv names = {0};
    int r;

    r = list_dir(dir, suffix, &names, d);
    for (size_t i = 0; r >= 0 && i < names.n; i++)
        r = rule_set_add_file(set, dir, names.v[i], scores, d);
    strv_release(&names);
    return r < 0 ? r : 0;
}

/* The match context with the PCRE2 limits of limits (may be NULL). */
static int
set_match_limits(struct rule_set *set, const struct classifier_limits *limits)
{
    set->mctx = pcre2_match_context_create(NULL);
    if (set->mctx == NULL)
        return -ENOMEM;
    /* Zero would fail every match; it means "PCRE2's default" here. */
    if (limits != NULL && limits->match_limit > 0)
        pcre2_set_match_limit(set->mctx, limits->match_limit);
    if (limits != NULL && limits->depth_limit > 0)
        pcre2_set_depth_limit(set->mctx, limits->depth_limit);
    return 0;
}

int
rule_set_load_scored(const char *dir, const char *profile, const char *extra_scores,
                     const struct classifier_limits *limits, classifier_diag_fn *diag_fn,
                     void *diag_ctx, unsigned *ret_problems, struct rule_set **ret)
{
    struct rule_diag d = {0};
    struct rule_set *set;
    int r;

    if (dir == NULL || ret == NULL)
        return -EINVAL;
    set = calloc(1, sizeof(*set));
    if (set == NULL)
        return -ENOMEM;
    set->ovec_pairs = 1;
    if (profile != NULL && (set->profile = strdup(profile)) == NULL) {
        r = -ENOMEM;
        goto out;
    }

    r = add_dir_files(set, dir, ".rules", false, &d);
    if (r == 0)
        r = check_names(set, &d);
    /* Scores files come after every rule file, so they may name any rule,
     * and in name order, so a later one wins. */
    if (r == 0)
        r = add_dir_files(set, dir, ".scores", true, &d);
    if (r == 0 && extra_scores != NULL)
        r = rule_set_add_file(set, NULL, extra_scores, true, &d);
    if (r == 0)
        r = compute_ref_depth(set);
    if (r < 0)
        goto out;
    compile_patterns(set, &d);
    r = rule_prefilter_build(set);
    if (r == 0)
        r = finish_patterns(set);
    if (r == 0)
        r = set_match_limits(set, limits);
    if (r < 0)
        goto out;

    emit_diags(set, dir, &d, diag_fn, diag_ctx);
    if (d.nomem) {
        r = -ENOMEM;
        goto out;
    }
    if (d.problems > 0) {
        r = -EINVAL;
        goto out;
    }
    *ret = set;
    set = NULL;
out:
    if (ret_problems != NULL)
        *ret_problems = d.problems;
    free(d.v);
    rule_set_free(set);
    return r;
}

struct rule_set *
rule_set_free(struct rule_set *set)
{
    if (set == NULL)
        return NULL;
    for (size_t i = 0; i < set->n_rules; i++)
        rule_parse_release(&set->rules[i]);
    free(set->rules);
    strv_release(&set->files);
    pcre2_match_context_free(set->mctx);
    rule_prefilter_free(set->pf);
    free(set->profile);
    free(set);
    return NULL;
}

bool
rule_set_reads_region(const struct rule_set *set, enum region_id id)
{
    for (size_t i = 0; set != NULL && i < set->n_rules; i++) {
        for (size_t c = 0; c < set->rules[i].n_conds; c++) {
            const struct rule_cond *cond = &set->rules[i].conds[c];

            if ((cond->type == RULE_COND_MATCH || cond->type == RULE_COND_NOMATCH ||
                 cond->type == RULE_COND_COUNT) &&
                cond->region == id)
                return true;
        }
    }
    return false;
}

size_t
rule_set_count(const struct rule_set *set)
{
    return set != NULL ? set->n_rules : 0;
}

bool
rule_set_names_profile(const struct rule_set *set)
{
    return set != NULL && set->profile_named;
}

int
rule_set_info(const struct rule_set *set, size_t i, struct classifier_rule_info *ret)
{
    const struct rule *rule;

    if (set == NULL || i >= set->n_rules)
        return -EINVAL;
    rule = &set->rules[i];
    *ret = (struct classifier_rule_info){
        .name = rule->name,
        .file = set->files.v[rule->file],
        .line = rule->line,
        .score = rule->score,
        .file_score = rule->file_score,
        .helper = rule->helper,
        .style = rule->style,
        .description = rule->describe,
        .doc = rule->doc,
        .profiles = rule->profiles,
        .off = rule->off,
    };
    return 0;
}
