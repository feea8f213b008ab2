/*
 * metrics.c - process-wide counters for the metrics endpoint and their
 * rendering as text (metrics.h).
 *
 * Invariants: the note functions touch only fixed arrays of atomics with
 * relaxed increments; indices come from enums or from the capped rule name
 * table, so no input can index past an array. The rule name table only
 * grows: a slot's name is written once, under names_lock, before
 * n_names is published with release order; readers load n_names with
 * acquire order and then read names below it without a lock.
 * Histograms keep one counter per bucket (not cumulative) and the sum in
 * microseconds; the count is the sum of the buckets, so a scrape's
 * buckets and count always agree.
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "metrics.h"
#include "textbuf.h"

#define KIND_COUNT 5 /* the classifier's four kinds and "none" (not scanned) */
#define KIND_NONE 4
#define RESULT_COUNT 4
#define RENDER_CHUNK 16384

static const char *const kind_names[KIND_COUNT] = {"other", "patch", "report", "reply", "none"};

/* Bucket bounds in microseconds, and as the le label shows them. */
static const uint64_t bucket_usec[] = {1000,    2500,    5000,     10000,    25000,
                                       50000,   100000,  250000,   500000,   1000000,
                                       2500000, 5000000, 10000000, 30000000, 60000000};
static const char *const bucket_le[] = {"0.001", "0.0025", "0.005", "0.01", "0.025",
                                        "0.05",  "0.1",    "0.25",  "0.5",  "1.0",
                                        "2.5",   "5.0",    "10.0",  "30.0", "60.0"};
#define N_BUCKETS (sizeof(bucket_usec) / sizeof(bucket_usec[0]))
_Static_assert(sizeof(bucket_le) / sizeof(bucket_le[0]) == N_BUCKETS, "one le per bound");

struct histogram {
    atomic_ulong buckets[N_BUCKETS + 1]; /* the last one: above every bound (+Inf) */
    atomic_ulong sum_usec;
};

static const char *const error_names[METRICS_ERR__COUNT] = {
    [METRICS_ERR_TIMEOUT] = "timeout",           [METRICS_ERR_OVERSIZE] = "oversize",
    [METRICS_ERR_INTERNAL] = "internal",         [METRICS_ERR_BUSY] = "busy",
    [METRICS_ERR_SHARED_STATE] = "shared_state", [METRICS_ERR_MTA_CHANGE] = "mta_change",
    [METRICS_ERR_STATE_RECORD] = "state_record", [METRICS_ERR_REPLY_LEDGER] = "reply_ledger",
};

static const char *const skip_names[METRICS_SKIP__COUNT] = {
    [METRICS_SKIP_PEER_LIST] = "peer_list",
    [METRICS_SKIP_INTERNAL_HOSTS] = "internal_hosts",
    [METRICS_SKIP_AUTHENTICATED] = "authenticated",
    [METRICS_SKIP_ALLOW_SENDERS] = "allow_senders",
    [METRICS_SKIP_NO_RECIPIENT] = "no_recipient",
    [METRICS_SKIP_BUSY_AT_MAIL] = "busy_at_mail",
};

/*
 * The reply= words of the decision line (callbacks.c) other than "queued",
 * as suppression reasons; "suppressed:" words carry
 * reply_suppress_reason()'s and callbacks.c's reasons with '-' for ' '.
 * Anything else is "other", so a new word never goes uncounted.
 */
static const char *const reply_reasons[] = {
    "recent",
    "capped",
    "unverified",
    "unavailable",
    "ledger-error",
    "queue-full",
    "not-queued",
    "suppressed:null-sender",
    "suppressed:bad-sender",
    "suppressed:own-address",
    "suppressed:system-sender",
    "suppressed:auto-submitted",
    "suppressed:list-header",
    "suppressed:precedence",
    "suppressed:auto-response-suppress",
    "suppressed:trusted-sender",
    "suppressed:out-of-memory",
    "suppressed:cannot-render",
    "other",
};
#define N_REPLY_REASONS (sizeof(reply_reasons) / sizeof(reply_reasons[0]))

static struct {
    atomic_ulong messages[KIND_COUNT][CLASSIFIER_ACTION__COUNT][RESULT_COUNT][2]; /* [monitor] */
    atomic_ulong findings[METRICS_RULES_MAX];
    atomic_ulong findings_unnamed;
    struct histogram eom;
    struct histogram scan;
    atomic_ulong errors[METRICS_ERR__COUNT];
    atomic_ulong skipped[METRICS_SKIP__COUNT];
    atomic_ulong replies_queued;
    atomic_ulong replies_sent;
    atomic_ulong replies_failed;
    atomic_ulong replies_suppressed[N_REPLY_REASONS];
} m;

static pthread_mutex_t names_lock = PTHREAD_MUTEX_INITIALIZER;
static char names[METRICS_RULES_MAX][METRICS_RULE_NAME_MAX];
static atomic_size_t n_names;

static void
bump(atomic_ulong *c)
{
    atomic_fetch_add_explicit(c, 1, memory_order_relaxed);
}

static unsigned long
load(atomic_ulong *c)
{
    return atomic_load_explicit(c, memory_order_relaxed);
}

void
metrics_note_message(bool scanned, enum classifier_kind kind, enum classifier_action action,
                     enum verdict_result result, bool monitor)
{
    size_t k = scanned && (unsigned)kind < KIND_NONE ? (size_t)kind : KIND_NONE;
    size_t a = scanned && (unsigned)action < CLASSIFIER_ACTION__COUNT ? (size_t)action : 0;
    size_t r = (unsigned)result < RESULT_COUNT ? (size_t)result : VERDICT_ACCEPT;

    bump(&m.messages[k][a][r][monitor ? 1 : 0]);
}

void
metrics_note_finding(uint32_t slot)
{
    bump(slot < METRICS_RULES_MAX ? &m.findings[slot] : &m.findings_unnamed);
}

static void
histogram_note(struct histogram *h, uint64_t usec)
{
    size_t i = 0;

    while (i < N_BUCKETS && usec > bucket_usec[i])
        i++;
    bump(&h->buckets[i]);
    atomic_fetch_add_explicit(&h->sum_usec, (unsigned long)usec, memory_order_relaxed);
}

void
metrics_note_eom(uint64_t usec)
{
    histogram_note(&m.eom, usec);
}

void
metrics_note_scan(uint64_t usec)
{
    histogram_note(&m.scan, usec);
}

void
metrics_note_error(enum metrics_error e)
{
    if ((unsigned)e < METRICS_ERR__COUNT)
        bump(&m.errors[e]);
}

void
metrics_note_skip(enum metrics_skip s)
{
    if ((unsigned)s < METRICS_SKIP__COUNT)
        bump(&m.skipped[s]);
}

void
metrics_note_reply(const char *note)
{
    size_t i;

    if (note != NULL && strcmp(note, "queued") == 0) {
        bump(&m.replies_queued);
        return;
    }
    for (i = 0; i + 1 < N_REPLY_REASONS; i++)
        if (note != NULL && strcmp(note, reply_reasons[i]) == 0)
            break;
    bump(&m.replies_suppressed[i]);
}

void
metrics_note_reply_sent(bool ok)
{
    bump(ok ? &m.replies_sent : &m.replies_failed);
}

/* The slot of name, registering it; METRICS_RULE_NONE past the cap.
 * Caller holds names_lock. */
static uint32_t
name_slot(const char *name)
{
    size_t n = atomic_load_explicit(&n_names, memory_order_relaxed);

    for (size_t i = 0; i < n; i++)
        if (strcmp(names[i], name) == 0)
            return (uint32_t)i;
    if (n == METRICS_RULES_MAX || strlen(name) >= METRICS_RULE_NAME_MAX)
        return METRICS_RULE_NONE;
    memcpy(names[n], name, strlen(name) + 1);
    atomic_store_explicit(&n_names, n + 1, memory_order_release);
    return (uint32_t)n;
}

int
metrics_rules_map(const struct classifier *c, uint32_t **ret)
{
    size_t n = classifier_rule_count(c);
    uint32_t *map = calloc(n ? n : 1, sizeof(*map));

    if (map == NULL)
        return -ENOMEM;
    pthread_mutex_lock(&names_lock);
    for (size_t i = 0; i < n; i++) {
        struct classifier_rule_info info;

        map[i] = METRICS_RULE_NONE;
        if (classifier_rule_info(c, i, &info) == 0 && !info.helper)
            map[i] = name_slot(info.name);
    }
    pthread_mutex_unlock(&names_lock);
    *ret = map;
    return 0;
}

void
metrics_reset(void)
{
    memset(&m, 0, sizeof(m));
}

/* ---- rendering ----------------------------------------------------------- */

struct out {
    struct textbuf b; /* capped at METRICS_RENDER_MAX with its NUL */
    bool om;          /* OpenMetrics, else Prometheus text */
};

static void __attribute__((format(printf, 2, 3))) out_printf(struct out *o, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    textbuf_vprintf(&o->b, fmt, ap);
    va_end(ap);
}

/* A label value with \, " and newline escaped (both formats agree). */
static void
out_label(struct out *o, const char *v)
{
    char buf[2 * METRICS_RULE_NAME_MAX + 1];
    size_t n = 0;

    for (; *v && n + 2 < sizeof(buf); v++) {
        if (*v == '\\' || *v == '"') {
            buf[n++] = '\\';
            buf[n++] = *v;
        } else if (*v == '\n') {
            buf[n++] = '\\';
            buf[n++] = 'n';
        } else
            buf[n++] = *v;
    }
    buf[n] = '\0';
    out_printf(o, "%s", buf);
}

/*
 * HELP and TYPE of a family. A counter's samples end in _total; OpenMetrics
 * names the family without it, the Prometheus format with it.
 */
static void
family(struct out *o, const char *name, const char *type, const char *help)
{
    const char *suffix = !o->om && strcmp(type, "counter") == 0 ? "_total" : "";

    out_printf(o, "# HELP %s%s %s\n# TYPE %s%s %s\n", name, suffix, help, name, suffix, type);
}

static void
render_messages(struct out *o)
{
    family(o, "slop_messages", "counter",
           "Messages judged at end of message, by kind, action reached, result given to the "
           "MTA (kind and action none: a failure policy decided) and Mode (monitor: the action "
           "was logged, not taken).");
    for (size_t k = 0; k < KIND_COUNT; k++)
        for (size_t a = 0; a < CLASSIFIER_ACTION__COUNT; a++)
            for (size_t r = 0; r < RESULT_COUNT; r++)
                for (size_t mon = 0; mon < 2; mon++) {
                    unsigned long v = load(&m.messages[k][a][r][mon]);

                    if (v == 0)
                        continue;
                    out_printf(o,
                               "slop_messages_total{kind=\"%s\",action=\"%s\",result=\"%s\","
                               "mode=\"%s\"} %lu\n",
                               kind_names[k], classifier_action_name((enum classifier_action)a),
                               verdict_result_name((enum verdict_result)r),
                               config_mode_name(mon ? CONFIG_MODE_MONITOR : CONFIG_MODE_ENFORCE),
                               v);
                }
    family(o, "slop_messages_skipped", "counter", "Messages passed without a scan, by reason.");
    for (size_t i = 0; i < METRICS_SKIP__COUNT; i++)
        out_printf(o, "slop_messages_skipped_total{reason=\"%s\"} %lu\n", skip_names[i],
                   load(&m.skipped[i]));
}

static void
render_findings(struct out *o)
{
    size_t n = atomic_load_explicit(&n_names, memory_order_acquire);

    family(o, "slop_findings", "counter", "Rules that held in scanned messages, by rule.");
    for (size_t i = 0; i < n; i++) {
        unsigned long v = load(&m.findings[i]);

        if (v == 0)
            continue;
        out_printf(o, "slop_findings_total{rule=\"");
        out_label(o, names[i]);
        out_printf(o, "\"} %lu\n", v);
    }
    family(o, "slop_findings_unnamed", "counter",
           "Findings of rules past the name table's cap, all rules together.");
    out_printf(o, "slop_findings_unnamed_total %lu\n", load(&m.findings_unnamed));
}

static void
render_histogram(struct out *o, const char *name, const char *help, struct histogram *h)
{
    unsigned long cum = 0;

    family(o, name, "histogram", help);
    for (size_t i = 0; i < N_BUCKETS; i++) {
        cum += load(&h->buckets[i]);
        out_printf(o, "%s_bucket{le=\"%s\"} %lu\n", name, bucket_le[i], cum);
    }
    cum += load(&h->buckets[N_BUCKETS]);
    out_printf(o, "%s_bucket{le=\"+Inf\"} %lu\n", name, cum);
    out_printf(o, "%s_count %lu\n", name, cum);
    out_printf(o, "%s_sum %.6f\n", name, (double)load(&h->sum_usec) / 1e6);
}

static void
render_replies(struct out *o)
{
    family(o, "slop_replies_queued", "counter", "Replies to senders handed to the reply sender.");
    out_printf(o, "slop_replies_queued_total %lu\n", load(&m.replies_queued));
    family(o, "slop_replies_sent", "counter", "Queued replies the transport accepted.");
    out_printf(o, "slop_replies_sent_total %lu\n", load(&m.replies_sent));
    family(o, "slop_replies_failed", "counter", "Queued replies the transport refused or lost.");
    out_printf(o, "slop_replies_failed_total %lu\n", load(&m.replies_failed));
    family(o, "slop_replies_suppressed", "counter",
           "Replies the verdict asked for but not sent, by reason.");
    for (size_t i = 0; i < N_REPLY_REASONS; i++)
        out_printf(o, "slop_replies_suppressed_total{reason=\"%s\"} %lu\n", reply_reasons[i],
                   load(&m.replies_suppressed[i]));
}

static void
render_gauges(struct out *o, const struct metrics_gauges *g)
{
    family(o, "slop_rules_generation", "gauge",
           "Generation of the installed rule set and configuration: 1 at start, +1 per reload.");
    out_printf(o, "slop_rules_generation %lu\n", g->rules_generation);
    family(o, "slop_rules_loaded", "gauge", "Rules in the installed rule set.");
    out_printf(o, "slop_rules_loaded %zu\n", g->n_rules);
    if (!g->have_state)
        return;
    family(o, "slop_state_generation", "gauge",
           "Newest committed transaction of the LMDB state in StateDir.");
    out_printf(o, "slop_state_generation %llu\n", (unsigned long long)g->state_txnid);
    family(o, "slop_state_map_bytes", "gauge", "Bytes of StateDir's LMDB map.");
    out_printf(o, "slop_state_map_bytes %llu\n", (unsigned long long)g->state_map_bytes);
    family(o, "slop_state_used_bytes", "gauge", "Bytes of StateDir's LMDB map in use.");
    out_printf(o, "slop_state_used_bytes %llu\n", (unsigned long long)g->state_used_bytes);
    family(o, "slop_state_entries", "gauge", "Entries per state database.");
    for (size_t i = 0; i < g->n_tables && i < METRICS_TABLES_MAX; i++) {
        out_printf(o, "slop_state_entries{db=\"");
        out_label(o, g->tables[i].name);
        out_printf(o, "\"} %llu\n", (unsigned long long)g->tables[i].entries);
    }
    family(o, "slop_state_db_bytes", "gauge", "Bytes of pages per state database.");
    for (size_t i = 0; i < g->n_tables && i < METRICS_TABLES_MAX; i++) {
        out_printf(o, "slop_state_db_bytes{db=\"");
        out_label(o, g->tables[i].name);
        out_printf(o, "\"} %llu\n", (unsigned long long)g->tables[i].bytes);
    }
}

int
metrics_render(const struct metrics_gauges *g, bool openmetrics, char **ret, size_t *ret_len)
{
    struct out o = {.om = openmetrics};
    int r;

    textbuf_init(&o.b, METRICS_RENDER_MAX - 1);
    if (textbuf_reserve(&o.b, RENDER_CHUNK) < 0)
        return -ENOMEM;
    render_messages(&o);
    render_findings(&o);
    render_histogram(&o, "slop_eom_seconds",
                     "Time from the end of a message to the answer to the MTA.", &m.eom);
    render_histogram(&o, "slop_scan_seconds", "Time spent scanning one message.", &m.scan);
    family(&o, "slop_errors", "counter",
           "Messages a failure policy or a failed step touched, by failure class.");
    for (size_t i = 0; i < METRICS_ERR__COUNT; i++)
        out_printf(&o, "slop_errors_total{class=\"%s\"} %lu\n", error_names[i], load(&m.errors[i]));
    render_replies(&o);
    render_gauges(&o, g);
    if (openmetrics)
        out_printf(&o, "# EOF\n");
    r = o.b.err;
    if (r < 0) {
        textbuf_release(&o.b);
        return r;
    }
    *ret = textbuf_steal(&o.b, ret_len);
    return 0;
}
