/*
 * classifier.c - the library's front door: options, loading, scanning.
 *
 * classifier_scan() runs the pipeline: bytes -> mime_view -> message ->
 * rules -> result with an action. The classifier itself is immutable after
 * classifier_new(), so any number of threads may scan with one instance.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include <gmime/gmime.h>

#include "classifier.h"
#include "facts.h"
#include "fingerprint.h"
#include "learn.h"
#include "message.h"
#include "message_build.h"
#include "message_field.h"
#include "message_note.h"
#include "mime_view.h"
#include "patch_parse.h"
#include "rule_set.h"
#include "series.h"

#define CLASSIFIER_DOC_BASE "https://docs.kernel.org/"

struct classifier {
    struct classifier_options opts;
    char *doc_base;     /* owned copy of opts.doc_base; "": no document base */
    char *profile;      /* owned copy of opts.profile */
    char **report_rcpt; /* owned copies of opts.report_recipients */
    size_t n_report_rcpt;
    struct rule_set *rules;
    /* A rule reads the headers region: the view keeps every field for
     * it, not only those message_build() reads. */
    bool all_fields;
};

static const char *const kind_names[] = {
    [CLASSIFIER_KIND_OTHER] = "other",
    [CLASSIFIER_KIND_PATCH] = "patch",
    [CLASSIFIER_KIND_REPORT] = "report",
    [CLASSIFIER_KIND_REPLY] = "reply",
};

static const char *const action_names[CLASSIFIER_ACTION__COUNT] = {
    [CLASSIFIER_ACTION_NONE] = "none",     [CLASSIFIER_ACTION_TAG] = "tag",
    [CLASSIFIER_ACTION_REPLY] = "reply",   [CLASSIFIER_ACTION_QUARANTINE] = "quarantine",
    [CLASSIFIER_ACTION_REJECT] = "reject",
};

void
classifier_options_default(struct classifier_options *opts)
{
    memset(opts, 0, sizeof(*opts));
    opts->limits = (struct classifier_limits){
        .max_message_bytes = 10u << 20,
        .max_mime_depth = 32,
        .max_mime_parts = 256,
        .max_part_bytes = 4u << 20,
        .max_headers = 1000,
        .max_lines = 100000,
        .max_line_bytes = 4096,
        .max_files = 500,
        .max_hunks = 5000,
        .max_hits = 64,
        .match_limit = 100000,
        .depth_limit = 5000,
    };
    /* Tag-only is the default that costs nothing; replies sit well above
     * it, so only mail with several substantial gaps is answered. */
    opts->thresholds.score[CLASSIFIER_ACTION_TAG] = 5.0;
    opts->thresholds.score[CLASSIFIER_ACTION_REPLY] = 12.0;
    opts->thresholds.score[CLASSIFIER_ACTION_QUARANTINE] = 20.0;
    opts->thresholds.score[CLASSIFIER_ACTION_REJECT] = 30.0;
}

/* The kernel profile's documents are docs.kernel.org; another profile has
 * a base only when the caller gives one. */
static const char *
doc_base_for(const struct classifier_options *opts, const char *profile)
{
    if (opts->doc_base != NULL)
        return opts->doc_base;
    return strcmp(profile, CLASSIFIER_PROFILE_DEFAULT) == 0 ? CLASSIFIER_DOC_BASE : "";
}

/*
 * A profile that no rule names and that is not one of the two shipped is
 * a typo ("linux" for "kernel"): refused, or the kernel's rules would be
 * silently off. "generic" names no rule by design: it is the profile
 * under which only the unmarked rules apply.
 */
static int
profile_check(const struct classifier *c, const char *rules_dir, classifier_diag_fn *diag_fn,
              void *diag_ctx)
{
    struct classifier_diag d = {.line = 0};

    if (rule_set_names_profile(c->rules) || strcmp(c->profile, CLASSIFIER_PROFILE_DEFAULT) == 0 ||
        strcmp(c->profile, CLASSIFIER_PROFILE_GENERIC) == 0)
        return 0;
    if (diag_fn != NULL) {
        snprintf(d.file, sizeof(d.file), "%s", rules_dir);
        snprintf(d.reason, sizeof(d.reason),
                 "unknown profile '%.64s': no rule file names it (shipped: %s, %s)", c->profile,
                 CLASSIFIER_PROFILE_DEFAULT, CLASSIFIER_PROFILE_GENERIC);
        diag_fn(diag_ctx, &d);
    }
    return -ENOENT;
}

static int
copy_patterns(struct classifier *c, const char *const *pats)
{
    static const char *const def[] = {CLASSIFIER_REPORT_RECIPIENTS, NULL};
    size_t n = 0;

    if (pats == NULL)
        pats = def;
    while (pats[n] != NULL)
        if (++n > CLASSIFIER_MAX_PATTERNS)
            return -E2BIG;
    c->report_rcpt = calloc(n ? n : 1, sizeof(*c->report_rcpt));
    if (c->report_rcpt == NULL)
        return -ENOMEM;
    for (; c->n_report_rcpt < n; c->n_report_rcpt++) {
        c->report_rcpt[c->n_report_rcpt] = strdup(pats[c->n_report_rcpt]);
        if (c->report_rcpt[c->n_report_rcpt] == NULL)
            return -ENOMEM;
    }
    c->opts.report_recipients = NULL;
    return 0;
}

static bool
limits_valid(const struct classifier_limits *l)
{
    return l->max_message_bytes && l->max_mime_depth && l->max_mime_parts && l->max_part_bytes &&
           l->max_headers && l->max_lines && l->max_line_bytes && l->max_files && l->max_hunks &&
           l->max_hits && l->match_limit && l->depth_limit;
}

int
classifier_new(const char *rules_dir, const struct classifier_options *opts,
               classifier_diag_fn *diag_fn, void *diag_ctx, struct classifier **ret)
{
    struct classifier *c;
    int r;

    if (rules_dir == NULL || ret == NULL)
        return -EINVAL;
    if (opts != NULL && !limits_valid(&opts->limits))
        return -EINVAL;

    c = calloc(1, sizeof(*c));
    if (c == NULL)
        return -ENOMEM;
    if (opts != NULL)
        c->opts = *opts;
    else
        classifier_options_default(&c->opts);
    c->profile = strdup(c->opts.profile ? c->opts.profile : CLASSIFIER_PROFILE_DEFAULT);
    if (c->profile == NULL) {
        r = -ENOMEM;
        goto out;
    }
    c->opts.profile = c->profile;
    c->doc_base = strdup(doc_base_for(&c->opts, c->profile));
    if (c->doc_base == NULL) {
        r = -ENOMEM;
        goto out;
    }
    c->opts.doc_base = c->doc_base;
    r = copy_patterns(c, c->opts.report_recipients);
    if (r < 0)
        goto out;

    mime_view_global_init();
    r = rule_set_load_scored(rules_dir, c->profile, c->opts.scores_file, &c->opts.limits, diag_fn,
                             diag_ctx, NULL, &c->rules);
    if (r < 0)
        goto out;
    r = profile_check(c, rules_dir, diag_fn, diag_ctx);
    if (r < 0)
        goto out;
    c->all_fields = rule_set_reads_region(c->rules, REGION_HEADERS);

    *ret = c;
    c = NULL;
out:
    classifier_free(c);
    return r;
}

struct classifier *
classifier_free(struct classifier *c)
{
    if (c == NULL)
        return NULL;
    rule_set_free(c->rules);
    free(c->doc_base);
    free(c->profile);
    for (size_t i = 0; i < c->n_report_rcpt; i++)
        free(c->report_rcpt[i]);
    free(c->report_rcpt);
    free(c);
    return NULL;
}

void
classifier_tune_allocator(void)
{
#if defined(__GLIBC__) && defined(M_TRIM_THRESHOLD) && defined(M_MMAP_THRESHOLD)
    (void)mallopt(M_MMAP_THRESHOLD, 1 << 20);
    (void)mallopt(M_TRIM_THRESHOLD, 4 << 20);
#endif
}

const char *
classifier_doc_base(const struct classifier *c)
{
    return c != NULL ? c->doc_base : "";
}

size_t
classifier_rule_count(const struct classifier *c)
{
    return c ? rule_set_count(c->rules) : 0;
}

int
classifier_rule_info(const struct classifier *c, size_t i, struct classifier_rule_info *ret)
{
    if (c == NULL || ret == NULL)
        return -EINVAL;
    return rule_set_info(c->rules, i, ret);
}

int
classifier_lint(const char *rules_dir, classifier_diag_fn *diag_fn, void *diag_ctx)
{
    return classifier_lint_scored(rules_dir, NULL, diag_fn, diag_ctx);
}

int
classifier_lint_scored(const char *rules_dir, const char *scores_file, classifier_diag_fn *diag_fn,
                       void *diag_ctx)
{
    struct classifier_options opts;
    struct rule_set *set = NULL;
    unsigned problems = 0;
    int r;

    classifier_options_default(&opts);
    r = rule_set_load_scored(rules_dir, NULL, scores_file, &opts.limits, diag_fn, diag_ctx,
                             &problems, &set);
    rule_set_free(set);
    if (r < 0 && problems == 0)
        return r;
    return (int)problems;
}

static enum classifier_action
action_for(const struct classifier_thresholds *t, double score)
{
    enum classifier_action action = CLASSIFIER_ACTION_NONE;

    for (int a = CLASSIFIER_ACTION_TAG; a < CLASSIFIER_ACTION__COUNT; a++)
        if (t->score[a] > 0 && score >= t->score[a])
            action = (enum classifier_action)a;
    return action;
}

static double
required_score(const struct classifier_thresholds *t)
{
    for (int a = CLASSIFIER_ACTION_TAG; a < CLASSIFIER_ACTION__COUNT; a++)
        if (t->score[a] > 0)
            return t->score[a];
    return 0;
}

static int
dup_or_null(const char *s, char **ret)
{
    *ret = NULL;
    if (s == NULL)
        return 0;
    *ret = strdup(s);
    return *ret ? 0 : -ENOMEM;
}

static int
result_fill(struct classifier_result *res, const struct message *m)
{
    int r;

    res->kind = m->kind;
    res->disclosure = m->disclosure;
    res->truncated = m->truncated;
    r = dup_or_null(m->message_id, &res->message_id);
    if (r == 0)
        r = dup_or_null(m->subject, &res->subject);
    if (r == 0)
        r = dup_or_null(m->from_addr, &res->from);
    return r;
}

/* Parse msg into *ret_view and *ret_m as every scan sees it: the
 * classifier's limits and report routing. */
static int
scan_build(const struct classifier *c, const char *msg, size_t len,
           const struct classifier_envelope *env, struct mime_view **ret_view,
           struct message **ret_m)
{
    struct route route = {0};
    bool cut = false;
    int r;

    route.patterns = (const char *const *)c->report_rcpt;
    route.n_patterns = c->n_report_rcpt;
    if (env != NULL) {
        route.rcpt = env->rcpt;
        route.n_rcpt = env->rcpt != NULL ? env->n_rcpt : 0;
        route.as_report = env->as_report;
    }
    if (len > c->opts.limits.max_message_bytes) {
        len = c->opts.limits.max_message_bytes;
        cut = true;
    }
    r = mime_view_parse_fields(msg ? msg : "", len, &c->opts.limits,
                               c->all_fields ? NULL : message_field_used, ret_view);
    if (r < 0)
        return r;
    r = message_build_routed(*ret_view, &c->opts.limits, &route, ret_m);
    if (r < 0)
        return r;
    if (cut)
        message_note_limit(*ret_m, "max_message_bytes", c->opts.limits.max_message_bytes);
    return 0;
}

int
classifier_scan(const struct classifier *c, const char *msg, size_t len,
                const struct classifier_envelope *env, struct classifier_result **ret)
{
    struct classifier_result *res = NULL;
    struct mime_view *view = NULL;
    struct message *m = NULL;
    int r;

    if (c == NULL || (msg == NULL && len > 0) || ret == NULL)
        return -EINVAL;

    res = calloc(1, sizeof(*res));
    if (res == NULL)
        return -ENOMEM;

    r = scan_build(c, msg, len, env, &view, &m);
    if (r < 0)
        goto out;
    r = result_fill(res, m);
    if (r < 0)
        goto out;
    r = facts_apply(m, env, res);
    if (r < 0)
        goto out;
    r = learn_apply(m, env);
    if (r < 0)
        goto out;
    r = rule_set_eval(c->rules, m, c->doc_base, c->opts.limits.max_hits, res);
    if (r < 0)
        goto out;

    res->action = action_for(&c->opts.thresholds, res->score);
    res->required = required_score(&c->opts.thresholds);
    /* A maintainer's mail is tagged like any other, but never answered,
     * held or refused on the strength of heuristics. Nor is mail whose
     * substance alone would not even be tagged: an answer must name a
     * concrete gap, and style (however it is scored) names none. The
     * learned findings are "class style" for that reason: they may tag,
     * never answer or refuse alone. */
    if (res->action > CLASSIFIER_ACTION_TAG &&
        (res->trusted_sender || res->substance_score < res->required))
        res->action = CLASSIFIER_ACTION_TAG;
    r = series_cover_note(m, res);
    if (r < 0)
        goto out;
    *ret = res;
    res = NULL;
out:
    message_free(m);
    mime_view_free(view);
    classifier_result_free(res);
    return r;
}

int
classifier_learn_tokens(const struct classifier *c, const char *msg, size_t len, uint64_t *ret,
                        size_t max, size_t *ret_n, uint64_t *ret_hint)
{
    struct mime_view *view = NULL;
    struct message *m = NULL;
    int r;

    if (c == NULL || (msg == NULL && len > 0) || ret == NULL || ret_n == NULL || ret_hint == NULL)
        return -EINVAL;
    r = scan_build(c, msg, len, NULL, &view, &m);
    if (r < 0)
        goto out;
    r = learn_tokens(m, ret, max, ret_n);
    if (r == 0)
        *ret_hint = learn_hint(m);
out:
    message_free(m);
    mime_view_free(view);
    return r;
}

int
classifier_diff_fingerprints(const char *diff_text, size_t len, void (*fn)(void *ctx, uint64_t fp),
                             void *ctx)
{
    struct classifier_options opts;
    struct message *m;
    int r;

    if (fn == NULL || (diff_text == NULL && len > 0))
        return -EINVAL;
    classifier_options_default(&opts);
    m = calloc(1, sizeof(*m));
    if (m == NULL)
        return -ENOMEM;
    r = patch_parse(m, diff_text, len, &opts.limits);
    if (r >= 0)
        r = (int)fingerprint_hunks(m, fn, ctx);
    message_free(m);
    return r;
}

int
classifier_diff_functions(const char *text, size_t len, size_t max,
                          void (*fn)(void *ctx, const char *name), void *ctx)
{
    return fingerprint_diff_functions(text, len, max, fn, ctx);
}

unsigned
classifier_bug_classes(const char *text, size_t len)
{
    return fingerprint_bug_classes(text, len);
}

const char *
classifier_bug_class_name(unsigned bit)
{
    return fingerprint_bug_class_name(bit);
}

struct classifier_result *
classifier_result_free(struct classifier_result *r)
{
    if (r == NULL)
        return NULL;
    for (size_t i = 0; i < r->n_hits; i++) {
        free(r->hits[i].rule);
        free(r->hits[i].description);
        free(r->hits[i].doc);
        free(r->hits[i].evidence);
    }
    free(r->hits);
    free(r->matched);
    free(r->fingerprints);
    free(r->series_root);
    free(r->log_paragraphs);
    free(r->cover_note);
    free(r->message_id);
    free(r->subject);
    free(r->from);
    free(r);
    return NULL;
}

#define ARRIVAL_FIELDS_MAX 200 /* header fields looked at for a date */
#define ARRIVAL_VALUE_MAX 1024 /* bytes of a field's value kept */

/* The unix time of an RFC 5322 date, 0 when it does not parse. */
static int64_t
arrival_date(const char *text)
{
    GDateTime *dt;
    int64_t t;

    mime_view_global_init();
    dt = g_mime_utils_header_decode_date(text);
    if (dt == NULL)
        return 0;
    t = g_date_time_to_unix(dt);
    g_date_time_unref(dt);
    return t > 0 ? t : 0;
}

/* Field name[0..nlen) is name. */
static bool
arrival_named(const char *p, size_t nlen, const char *name)
{
    return nlen == strlen(name) && strncasecmp(p, name, nlen) == 0;
}

/* The value of the field whose body starts at msg[from], unfolded with
 * each line break a space, into value (ARRIVAL_VALUE_MAX + 1 bytes) when
 * keep; returns the offset past the field. */
static size_t
arrival_value(const char *msg, size_t len, size_t from, bool keep, char *value)
{
    size_t end, n = 0;

    for (end = from; end < len; end++) {
        if (msg[end] == '\n' && (end + 1 >= len || (msg[end + 1] != ' ' && msg[end + 1] != '\t')))
            break;
        if (keep && n < ARRIVAL_VALUE_MAX)
            value[n++] = msg[end] == '\n' || msg[end] == '\r' ? ' ' : msg[end];
    }
    value[n] = '\0';
    return end + 1;
}

/* The date of a Received: value: it follows the last ';' (RFC 5321,
 * section 4.4). 0 when there is none. */
static int64_t
received_date(const char *value)
{
    const char *semi = strrchr(value, ';');

    return semi != NULL ? arrival_date(semi + 1) : 0;
}

int64_t
classifier_arrival(const char *msg, size_t len)
{
    char value[ARRIVAL_VALUE_MAX + 1];
    int64_t date = 0;
    unsigned fields = 0;
    size_t off;

    if (msg == NULL)
        return 0;
    off = mime_view_header_start(msg, len);
    while (off < len && msg[off] != '\n' && msg[off] != '\r' && fields++ < ARRIVAL_FIELDS_MAX) {
        const char *colon = memchr(msg + off, ':', len - off);
        const char *nl = memchr(msg + off, '\n', len - off);
        size_t nlen;
        bool received, dated;
        int64_t t;

        if (colon == NULL || (nl != NULL && colon > nl))
            break; /* not a field: the header block is over */
        nlen = (size_t)(colon - (msg + off));
        received = arrival_named(msg + off, nlen, "Received");
        dated = date == 0 && arrival_named(msg + off, nlen, "Date");
        off = arrival_value(msg, len, (size_t)(colon - msg) + 1, received || dated, value);
        /* Only the topmost Received: with a date is the hop that
         * delivered it. */
        if (received && (t = received_date(value)) != 0)
            return t;
        if (dated)
            date = arrival_date(value);
    }
    return date;
}

const char *
classifier_kind_name(enum classifier_kind kind)
{
    if ((unsigned)kind >= sizeof(kind_names) / sizeof(kind_names[0]))
        return "other";
    return kind_names[kind];
}

const char *
classifier_action_name(enum classifier_action action)
{
    if ((unsigned)action >= CLASSIFIER_ACTION__COUNT)
        return "none";
    return action_names[action];
}

int
classifier_action_parse(const char *name, enum classifier_action *ret)
{
    for (int a = 0; a < CLASSIFIER_ACTION__COUNT; a++) {
        if (strcmp(action_names[a], name) == 0) {
            *ret = (enum classifier_action)a;
            return 0;
        }
    }
    return -EINVAL;
}
