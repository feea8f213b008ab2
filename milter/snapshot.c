/*
 * snapshot.c - build, share and swap the judging snapshot.
 *
 * Invariant: `installed` changes only under snapshot_lock and always holds
 * its own reference; whoever drops the last reference frees the snapshot,
 * possibly on a connection thread after a reload.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "classifier.h"
#include "metrics.h"
#include "reply.h"
#include "snapshot.h"

static pthread_mutex_t snapshot_lock = PTHREAD_MUTEX_INITIALIZER;
static struct snapshot *installed;
static unsigned long generation;

struct diag_relay {
    snapshot_diag_fn *fn;
    void *ctx;
    unsigned count;
};

static void
relay_rules_diag(void *ctx, const struct classifier_diag *d)
{
    struct diag_relay *relay = ctx;
    char text[1024];

    relay->count++;
    if (relay->fn == NULL)
        return;
    if (d->line > 0)
        snprintf(text, sizeof(text), "%s:%u: %s", d->file, d->line, d->reason);
    else
        snprintf(text, sizeof(text), "%s: %s", d->file, d->reason);
    relay->fn(relay->ctx, text);
}

static void
snapshot_free(struct snapshot *s)
{
    free(s->metrics_rules);
    reply_template_free(s->reply_template);
    classifier_free(s->classifier);
    config_free(s->cfg);
    free(s);
}

/* cfg's thresholds, limits and profile as the classifier takes them;
 * rcpt (CLASSIFIER_MAX_PATTERNS + 1 slots, checked by the caller) gets
 * ReportRecipients and must outlive opts. */
static void
classifier_options_of(const struct config *cfg, const char **rcpt, struct classifier_options *opts)
{
    for (size_t i = 0; i < cfg->report_recipients.n; i++)
        rcpt[i] = cfg->report_recipients.items[i];
    rcpt[cfg->report_recipients.n] = NULL;

    classifier_options_default(opts);
    opts->thresholds.score[CLASSIFIER_ACTION_TAG] = cfg->tag_threshold;
    opts->thresholds.score[CLASSIFIER_ACTION_REPLY] = cfg->reply_threshold;
    opts->thresholds.score[CLASSIFIER_ACTION_QUARANTINE] = cfg->quarantine_threshold;
    opts->thresholds.score[CLASSIFIER_ACTION_REJECT] = cfg->reject_threshold;
    opts->doc_base = cfg->doc_base;
    opts->profile = cfg->project;
    opts->report_recipients = (const char *const *)rcpt;
    opts->limits.max_message_bytes = (size_t)cfg->max_message_size;
    opts->limits.max_mime_depth = cfg->max_mime_depth;
    opts->limits.max_mime_parts = cfg->max_mime_parts;
    opts->limits.max_part_bytes = (size_t)cfg->max_part_size;
    opts->limits.max_headers = cfg->max_headers;
    opts->limits.max_lines = cfg->max_lines;
    opts->limits.max_line_bytes = cfg->max_line_length;
    opts->limits.max_files = cfg->max_patch_files;
    opts->limits.max_hunks = cfg->max_patch_hunks;
    opts->limits.match_limit = cfg->regex_match_limit;
    opts->limits.depth_limit = cfg->regex_depth_limit;
}

/* s->classifier from s->cfg; each failure told through relay. */
static int
build_classifier(struct snapshot *s, struct diag_relay *relay)
{
    const struct config *cfg = s->cfg;
    const char *rcpt[CLASSIFIER_MAX_PATTERNS + 1];
    struct classifier_options opts;
    char text[1024], eb[128];
    int r;

    if (cfg->report_recipients.n > CLASSIFIER_MAX_PATTERNS) {
        if (relay->fn) {
            snprintf(text, sizeof(text), "ReportRecipients: more than %d patterns",
                     CLASSIFIER_MAX_PATTERNS);
            relay->fn(relay->ctx, text);
        }
        return -EINVAL;
    }
    classifier_options_of(cfg, rcpt, &opts);
    r = classifier_new(cfg->rules_dir, &opts, relay_rules_diag, relay, &s->classifier);
    if (r < 0) {
        if (relay->count == 0 && relay->fn) {
            /* GNU strerror_r may return a static string instead of filling eb. */
            snprintf(text, sizeof(text), "%s: cannot load rules: %s", cfg->rules_dir,
                     strerror_r(-r, eb, sizeof(eb)));
            relay->fn(relay->ctx, text);
        }
        return -EINVAL;
    }
    return 0;
}

int
snapshot_build(const char *config_path, const struct config_paths *paths, snapshot_diag_fn *diag_fn,
               void *diag_ctx, struct snapshot **ret)
{
    struct diag_relay relay = {.fn = diag_fn, .ctx = diag_ctx};
    struct config_error cerr = {""};
    struct snapshot *s;
    char terr[768] = "";
    int r;

    s = calloc(1, sizeof(*s));
    if (s == NULL)
        return -ENOMEM;
    atomic_init(&s->refs, 1);

    r = config_load(config_path, paths, &s->cfg, &cerr);
    if (r < 0) {
        if (diag_fn)
            diag_fn(diag_ctx, cerr.text);
        goto out;
    }
    r = build_classifier(s, &relay);
    if (r < 0)
        goto out;

    r = metrics_rules_map(s->classifier, &s->metrics_rules);
    if (r < 0) {
        if (diag_fn)
            diag_fn(diag_ctx, "out of memory mapping rules to metrics");
        goto out;
    }

    r = reply_template_load_for(*s->cfg->reply_template ? s->cfg->reply_template : NULL,
                                strcmp(s->cfg->project, "kernel") == 0, &s->reply_template, terr,
                                sizeof(terr));
    if (r < 0) {
        if (diag_fn)
            diag_fn(diag_ctx, terr[0] ? terr : "reply template: cannot load");
        r = -EINVAL;
        goto out;
    }

    *ret = s;
    s = NULL;
out:
    if (s)
        snapshot_free(s);
    return r;
}

struct snapshot *
snapshot_ref(struct snapshot *s)
{
    if (s)
        atomic_fetch_add(&s->refs, 1);
    return s;
}

struct snapshot *
snapshot_unref(struct snapshot *s)
{
    if (s && atomic_fetch_sub(&s->refs, 1) == 1)
        snapshot_free(s);
    return NULL;
}

struct snapshot *
snapshot_current(void)
{
    struct snapshot *s;

    pthread_mutex_lock(&snapshot_lock);
    s = snapshot_ref(installed);
    pthread_mutex_unlock(&snapshot_lock);
    return s;
}

void
snapshot_install(struct snapshot *s)
{
    struct snapshot *old;

    pthread_mutex_lock(&snapshot_lock);
    old = installed;
    installed = s;
    if (s)
        s->generation = ++generation;
    pthread_mutex_unlock(&snapshot_lock);
    /* Freeing may take a while (rules); do it outside the lock. */
    snapshot_unref(old);
}
