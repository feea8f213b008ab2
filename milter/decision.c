/*
 * decision.c - the judging pipeline for one collected message, shared by
 * end-of-message (callbacks.c) and the offline mode (-t): failure
 * policies, the scan (scan_job.c), the verdict's plan (verdict.c), the
 * record of the scan in the state, and whether and what to reply
 * (reply_*.c); then the message's one decision line for the log.
 *
 * Never fails: every error becomes the configured failure plan. Holds no
 * process-wide values: the state, whether it may be written and the
 * reply key come in a struct decision_env. Thread-safe.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "classifier.h"
#include "conn.h"
#include "decision.h"
#include "log.h"
#include "metrics.h"
#include "reply.h"
#include "reply_verify.h"
#include "scan_job.h"
#include "shared_state.h"
#include "snapshot.h"
#include "state.h"
#include "state_db.h"

#define LOG_TESTS_MAX 400 /* bytes of the tests= list in a log line */

void
decision_init(struct decision *d)
{
    memset(d, 0, sizeof(*d));
    verdict_plan_init(&d->plan);
}

void
decision_release(struct decision *d)
{
    verdict_plan_release(&d->plan);
    classifier_result_free(d->res);
    free(d->reply_text);
    decision_init(d);
}

double
decision_ms_since(const struct timespec *t0)
{
    struct timespec t1;

    clock_gettime(CLOCK_MONOTONIC, &t1);
    return (double)(t1.tv_sec - t0->tv_sec) * 1000.0 + (double)(t1.tv_nsec - t0->tv_nsec) / 1e6;
}

/* The address inside "Name <addr>", or the whole text. */
static void
reply_from_addr(const char *from, char *buf, size_t size)
{
    const char *lt = strrchr(from, '<');

    conn_addr_strip(lt ? lt : from, buf, size);
}

_Static_assert((unsigned)CONFIG_REQUIRE_ANY == (unsigned)REPLY_REQUIRE_ANY &&
                   (unsigned)CONFIG_REQUIRE_AUTHENTICATED ==
                       (unsigned)REPLY_REQUIRE_AUTHENTICATED &&
                   (unsigned)CONFIG_REQUIRE_DMARC_PASS == (unsigned)REPLY_REQUIRE_DMARC_PASS &&
                   (unsigned)CONFIG_REQUIRE_SPF_PASS == (unsigned)REPLY_REQUIRE_SPF_PASS &&
                   (unsigned)CONFIG_REQUIRE_DKIM_ALIGNED == (unsigned)REPLY_REQUIRE_DKIM_ALIGNED,
               "ReplyRequires words and reply_verify bits differ");

/* ReplyRequires: is the envelope sender proved (reply_verify.h)? When the
 * Authentication-Results fields were refused, *ret_refusal names why. */
static bool
sender_verified(const struct config *cfg, const struct msg *m, const struct reply_header *hdrs,
                const char **ret_refusal)
{
    struct reply_verify_input in = {0};
    enum reply_verify_refusal why;
    unsigned proved;
    char host[CONN_HOST_MAX] = "";

    if (cfg->reply_requires & CONFIG_REQUIRE_ANY)
        return true;
    in.env_sender = m->mail_from;
    in.auth_authen = m->authenticated ? "yes" : NULL;
    in.authserv_id = cfg->authserv_id;
    if (in.authserv_id[0] == '\0')
        in.authserv_id = m->mta_name;
    if (in.authserv_id[0] == '\0') {
        if (gethostname(host, sizeof(host)) < 0)
            host[0] = '\0';
        host[sizeof(host) - 1] = '\0';
        in.authserv_id = host;
    }
    in.from = m->n_from == 1 ? m->from : NULL;
    in.headers = hdrs;
    in.n_headers = m->n_headers;
    proved = reply_verify(&in, &why);
    *ret_refusal = why != REPLY_VERIFY_READ ? reply_verify_refusal_name(why) : NULL;
    return reply_verify_ok(cfg->reply_requires, proved);
}

/* The message's fields as reply_*() take them; NULL without memory. */
static struct reply_header *
msg_reply_headers(const struct msg *m)
{
    struct reply_header *h = calloc(m->n_headers ? m->n_headers : 1, sizeof(*h));

    for (size_t i = 0; h != NULL && i < m->n_headers; i++) {
        h[i].name = m->headers[i].name;
        h[i].value = m->headers[i].value;
    }
    return h;
}

static void
prepare_reply(const struct decision_env *env, struct snapshot *snap, struct msg *m,
              struct decision *d)
{
    const struct config *cfg = snap->cfg;
    struct reply_header *hdrs = NULL;
    const char **own = NULL;
    size_t n_own = 0;
    char from_addr[CONN_ADDR_MAX];
    struct reply_input in = {0};
    int r;

    hdrs = msg_reply_headers(m);
    own = calloc(m->n_rcpts + 1, sizeof(*own));
    if (hdrs == NULL || own == NULL) {
        d->reply_suppressed = "out of memory";
        goto out;
    }
    reply_from_addr(cfg->reply_from, from_addr, sizeof(from_addr));
    own[n_own++] = from_addr;
    for (size_t i = 0; i < m->n_rcpts; i++)
        if (m->rcpts[i].protected)
            own[n_own++] = m->rcpts[i].addr;

    d->reply_suppressed =
        reply_suppress_reason(m->mail_from ? m->mail_from : "", hdrs, m->n_headers, own, n_own);
    if (d->reply_suppressed != NULL)
        goto out;
    if (!sender_verified(cfg, m, hdrs, &d->reply_refusal)) {
        d->reply_unverified = true;
        goto out;
    }

    in.from = cfg->reply_from;
    in.key = env->reply_key;
    in.to = m->mail_from;
    in.doc_base = cfg->doc_base;
    in.other_project = strcmp(cfg->project, "kernel") != 0;
    in.result = d->res;
    r = reply_render(snap->reply_template, &in, &d->reply_text);
    if (r < 0) {
        d->reply_text = NULL;
        d->reply_suppressed = r == -EINVAL ? "bad sender" : "cannot render";
    }
out:
    free(hdrs);
    free(own);
}

/* One short write after the verdict; a failure only costs later look-ups. */
static void
record_scan(const struct decision_env *env, const struct config *cfg, const struct msg *m,
            const struct classifier_result *res)
{
    struct state_lookup_options lo;
    struct state_lookup sl;
    char eb[512];
    int r;

    if (env->st == NULL || !env->record || !cfg->record_state)
        return;
    scan_job_lookup_options(cfg, &lo);
    state_lookup_init(&sl, env->st, &lo);
    r = state_lookup_record(&sl, res);
    if (r < 0 && shared_state_unreachable(env->st, r))
        log_debug("%s: shared state unreachable, message not recorded", m->queue_id);
    else if (r < 0) {
        /* Redis or StateDir: the operator must know which to look at. */
        state_strerror(env->st, r, eb, sizeof(eb));
        log_warning("%s: cannot record the message in %s, verdict unchanged", m->queue_id, eb);
    }
    if (r < 0)
        metrics_note_error(METRICS_ERR_STATE_RECORD);
}

static enum metrics_error
cause_error(enum verdict_cause cause)
{
    switch (cause) {
    case VERDICT_TIMEOUT:
        return METRICS_ERR_TIMEOUT;
    case VERDICT_OVERSIZE:
        return METRICS_ERR_OVERSIZE;
    case VERDICT_BUSY:
        return METRICS_ERR_BUSY;
    default:
        return METRICS_ERR_INTERNAL;
    }
}

/* The rules that held, by their slot in the metrics name table. */
static void
note_findings(const struct snapshot *snap, const struct classifier_result *res)
{
    size_t n_rules = classifier_rule_count(snap->classifier);

    for (size_t i = 0; snap->metrics_rules != NULL && i < res->n_matched; i++)
        if (res->matched[i] < n_rules)
            metrics_note_finding(snap->metrics_rules[res->matched[i]]);
}

/*
 * Our own reply came back (reply_token.c): RFC 3834 says never answer it,
 * and it is no one's report, so it is not scanned at all: it passes as
 * other mail with nothing found (X-Slop-Status: No), is not recorded and
 * is not learned. Returns false when m is not ours (or no key is set).
 */
static bool
own_reply(const struct reply_key *key, const struct config *cfg, const struct msg *m,
          struct decision *d)
{
    struct classifier_result *res;
    struct reply_header *h;
    bool ours;

    if (key == NULL || !m->have_message_id)
        return false;
    h = msg_reply_headers(m);
    ours = h != NULL && reply_token_valid(key, h, m->n_headers);
    free(h);
    if (!ours || (res = calloc(1, sizeof(*res))) == NULL)
        return false;
    for (size_t i = 0; i < m->n_headers; i++) {
        if (strcasecmp(m->headers[i].name, "Message-ID") == 0) {
            const char *v = m->headers[i].value + strspn(m->headers[i].value, " \t<");

            res->message_id = strndup(v, strcspn(v, "> \t\r\n"));
            break;
        }
    }
    res->kind = CLASSIFIER_KIND_OTHER;
    res->action = CLASSIFIER_ACTION_NONE;
    res->required = cfg->tag_threshold;
    d->res = res;
    d->own_reply = true;
    return true;
}

void
decision_make(const struct decision_env *env, struct snapshot *snap, struct msg *m,
              void (*progress)(void *), void *pctx, struct decision *d)
{
    const struct config *cfg = snap->cfg;
    struct verdict_input in;
    enum verdict_cause cause = VERDICT_INTERNAL_ERROR;
    struct timespec t0;
    int r;

    msg_verdict_input(m, &in);
    clock_gettime(CLOCK_MONOTONIC, &t0);

    if (m->error < 0)
        goto failed;
    if (m->busy) {
        cause = VERDICT_BUSY;
        goto failed;
    }
    if (m->oversize && cfg->on_oversize != CONFIG_FAIL_SCAN) {
        cause = VERDICT_OVERSIZE;
        goto failed;
    }
    if (own_reply(env->reply_key, cfg, m, d)) {
        if (verdict_build(cfg, d->res, &in, &d->plan) < 0)
            goto failed;
        /* d->res is the caller's, freed by decision_release(). */
        return; // NOLINT(clang-analyzer-unix.Malloc)
    }
    r = scan_job_run(snap, m, env->st, env->record, progress, pctx, &d->res);
    d->ms = decision_ms_since(&t0);
    metrics_note_scan((uint64_t)(d->ms * 1000.0));
    if (r == -ETIMEDOUT) {
        cause = VERDICT_TIMEOUT;
        goto failed;
    }
    if (r < 0)
        goto failed;
    if (m->oversize)
        d->res->truncated = true;
    note_findings(snap, d->res);
    if (verdict_build(cfg, d->res, &in, &d->plan) < 0)
        goto failed;
    record_scan(env, cfg, m, d->res);
    /* The classifier caps a maintainer's action at tag; this holds even
     * if a rule or threshold change lets one through. */
    if (d->plan.reply && d->res->trusted_sender)
        d->reply_suppressed = "trusted sender";
    else if (d->plan.reply)
        prepare_reply(env, snap, m, d);
    return;

failed:
    metrics_note_error(cause_error(cause));
    if (verdict_build_failure(cfg, cause, &in, &d->plan) < 0) {
        /* Out of memory even for the failure plan: accept untouched. */
        verdict_plan_init(&d->plan);
        d->plan.cause = cause;
    }
}

/* The first limit that cut what was scanned, for the decision line
 * (classifier_limits field names, as LIMIT_REACHED's evidence); NULL: none. */
static const char *
limit_name(const struct msg *m, const struct classifier_result *res, char *buf, size_t size)
{
    if (m->oversize)
        return "max_message_bytes";
    for (size_t i = 0; i < res->n_hits; i++) {
        if (strcmp(res->hits[i].rule, "LIMIT_REACHED") == 0 && res->hits[i].evidence != NULL) {
            log_clean(res->hits[i].evidence, buf, size);
            buf[strcspn(buf, "=")] = '\0';
            return buf;
        }
    }
    if (m->headers_truncated)
        return "headers";
    return res->truncated ? "unknown" : NULL;
}

void
decision_log(const struct msg *m, const struct decision *d)
{
    char from[LOG_FIELD_MAX], mid[LOG_FIELD_MAX], tests[LOG_TESTS_MAX] = "";
    char lbuf[64];
    const struct classifier_result *res = d->res;
    const char *limit;
    size_t used = 0;

    log_clean(m->mail_from, from, sizeof(from));
    log_clean(res ? res->message_id : NULL, mid, sizeof(mid));
    for (size_t i = 0; res && i < res->n_hits && used + 1 < sizeof(tests); i++) {
        int w =
            snprintf(tests + used, sizeof(tests) - used, "%s%s", i ? "," : "", res->hits[i].rule);

        if (w < 0)
            break;
        used += (size_t)w;
    }
    if (res == NULL) {
        log_info("%s: from=<%s> cause=%s result=%s ms=%.1f", m->queue_id, from,
                 verdict_cause_name(d->plan.cause), verdict_result_name(d->plan.result), d->ms);
        return;
    }
    limit = limit_name(m, res, lbuf, sizeof(lbuf));
    log_info("%s: from=<%s> message-id=<%s> kind=%s score=%.1f tests=%s action=%s%s result=%s "
             "ms=%.1f%s%s%s%s%s%s%s%s",
             m->queue_id, from, mid, classifier_kind_name(res->kind), res->score,
             tests[0] ? tests : "none", classifier_action_name(res->action),
             d->plan.monitor ? " mode=monitor" : "", verdict_result_name(d->plan.result), d->ms,
             res->truncated ? " truncated=yes" : "", limit ? " limit=" : "", limit ? limit : "",
             d->plan.reply ? " reply=" : "", d->plan.reply ? d->reply_note : "",
             d->plan.reply && d->reply_refusal ? " authres=" : "",
             d->plan.reply && d->reply_refusal ? d->reply_refusal : "",
             d->own_reply ? " own_reply=yes" : "");
}
