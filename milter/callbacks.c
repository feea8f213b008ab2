/*
 * callbacks.c - libmilter callbacks: MTA events become calls on a struct
 * conn and its struct msg; end-of-message judges and acts.
 *
 * Invariants: every callback returns a status even on internal errors
 * (the configured OnInternalError), never blocks on the network (replies
 * are queued), and checks every smfi_* return. A connection holds the
 * snapshot it started with. The only process-wide values (state, reply
 * sender) are set by callbacks_setup() before smfi_main() and only read
 * afterwards. Each scan reads the state through its own look-up; what a
 * scan recorded (fingerprints, sender count) is written after the verdict
 * and never changes it.
 *
 * Mail we let through is answered SMFIS_CONTINUE (CB_PASS), never
 * SMFIS_ACCEPT. After ACCEPT (and REJECT, TEMPFAIL, DISCARD) libmilter's
 * mi_engine() falls back to its HELO state, from which SMFIC_QUIT_NC and
 * the SMFIC_CONNECT of the next session on the same socket are not valid
 * transitions: it drops both without calling us or answering, and the MTA
 * waits for the CONNECT reply until its timeout. After CONTINUE the state
 * allows QUIT_NC. At end of message the MTA takes CONTINUE as accept;
 * earlier it only makes the MTA send the rest, which we do not keep. A
 * reject or tempfail has no such stand-in and still breaks the next
 * session of an MTA that reuses the socket.
 *
 * On a UNIX socket the stages that never decide anything (connect, each
 * recipient, each header, end of headers) are negotiated as "no reply"
 * (SMFIP_NR_*) and DATA is not sent at all: the MTA streams them without
 * waiting for an answer, which saves a round trip per header. libmilter
 * offers these flags even to an MTA that lacks them and then answers for
 * us; a failure found at one of these stages is answered at MAIL or at
 * the end of the message instead. On TCP every command is answered:
 * Postfix and Sendmail leave Nagle on for their milter sockets, so a
 * command sent after one we did not answer waits for our delayed ACK,
 * about 40 ms (seen with tcpdump: 20 msgs/s on one session).
 *
 * Threading: libmilter runs one thread per connection; scans run on a
 * scan thread of the calling thread's (scanner.c) so that ScanTimeout can
 * be enforced.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <libmilter/mfapi.h>
#include <libmilter/mfdef.h>

#include "callbacks.h"
#include "classifier.h"
#include "conn.h"
#include "gate.h"
#include "log.h"
#include "membudget.h"
#include "metrics.h"
#include "reply.h"
#include "reply_verify.h"
#include "scanner.h"
#include "shared_state.h"
#include "snapshot.h"
#include "state_learn.h"
#include "state.h"
#include "state_db.h"
#include "state_redis.h"

#define LOG_FIELD_MAX 200    /* bytes of an address or message id in a log line */
#define LOG_TESTS_MAX 400    /* bytes of the tests= list in a log line */
#define BUSY_LOG_INTERVAL 60 /* seconds between "memory budget full" lines */

#define CB_PASS SMFIS_CONTINUE /* let it through; never SMFIS_ACCEPT (see above) */

/* The stages we do not answer (see above). */
#define CB_NR_STAGES (SMFIP_NR_CONN | SMFIP_NR_RCPT | SMFIP_NR_HDR | SMFIP_NR_EOH)

static struct state *cb_state;
static bool cb_record;                          /* the state may be written (the daemon, not -t) */
static enum callbacks_state_down cb_state_down; /* set before smfi_main() */
static struct reply_sender *cb_sender;
static const struct reply_key *cb_reply_key; /* signs and knows our replies; NULL: none */
static atomic_uint cb_state_users;           /* scan jobs that hold a look-up into cb_state */
/* The NR_* flags of the last negotiation, for a connection whose conn was
 * made after SMFIC_QUIT_NC (no new negotiation); the same on every
 * connection, as libmilter grants them whatever the MTA supports. */
static atomic_ulong cb_nr;

/* libmilter's API takes char * for names it never changes. */
static char sym_queue_id[] = "i";
static char sym_auth[] = "{auth_authen}";
static char sym_msg_size[] = "{msg_size}";
static char sym_mta_name[] = "j";
static char sym_list_connect[] = "j {daemon_name}";
static char sym_list_envfrom[] = "i {auth_authen} {msg_size}";
static char sym_list_eom[] = "i";
static char hdr_subject[] = "Subject";
static char redis_rcode[] = "451";
static char redis_xcode[] = "4.3.0";
static char redis_text[] = "shared state unavailable, try again later";
static char state_text[] = "state unavailable, try again later";

void
callbacks_setup(struct state *st, bool record, struct reply_sender *sender)
{
    cb_state = st;
    cb_record = record;
    cb_sender = sender;
}

void
callbacks_state_down(enum callbacks_state_down how)
{
    cb_state_down = how;
}

void
callbacks_set_reply_key(const struct reply_key *key)
{
    cb_reply_key = key;
}

unsigned
callbacks_state_users(void)
{
    return atomic_load(&cb_state_users);
}

static void
lookup_options(const struct config *cfg, struct state_lookup_options *ret)
{
    memset(ret, 0, sizeof(*ret));
    ret->duplicate_days = (cfg->duplicate_window + 86399u) / 86400u;
    ret->trust_maintainers = cfg->trust_maintainers;
    ret->learn_minimum = cfg->learn_minimum;
}

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

/* ---- scanning with a time limit --------------------------------------- */

struct scan_job {
    pthread_mutex_t lock;
    pthread_cond_t cv;
    unsigned refs; /* the waiting caller and the worker */
    bool done;
    int r;
    struct snapshot *snap;
    char *buf;
    size_t len;
    size_t reserved; /* MaxMemory budget held for buf */
    struct classifier_envelope env;
    struct state_lookup sl; /* env.lookup points here when there is a state */
    char *from;
    char **rcpts;
    size_t n_rcpts;
    struct classifier_result *res;
    /* AutoLearn reads the message the job scanned, after the verdict: the
     * job owns the buffer (the caller's was handed over), so the learning
     * happens here and not in the caller. */
    bool auto_learn;
    bool abandoned; /* the caller timed out: no verdict from this scan */
    char queue_id[CONN_QUEUE_ID_MAX];
};

static void
job_free(struct scan_job *j)
{
    if (j->env.lookup != NULL)
        atomic_fetch_sub(&cb_state_users, 1);
    classifier_result_free(j->res);
    /* n_rcpts counts the strdup()ed entries, so it is 0 while rcpts is
     * NULL; the analyzer forgets calloc()'s zero once &j->lock escapes. */
    for (size_t i = 0; i < j->n_rcpts; i++)
        free(j->rcpts[i]); // NOLINT(clang-analyzer-core.NullDereference)
    free(j->rcpts);
    free(j->from);
    free(j->buf);
    membudget_release(j->reserved);
    membudget_trim(j->len);
    snapshot_unref(j->snap);
    pthread_cond_destroy(&j->cv);
    pthread_mutex_destroy(&j->lock);
    free(j);
}

static void
job_put(struct scan_job *j)
{
    bool last;

    pthread_mutex_lock(&j->lock);
    last = --j->refs == 0;
    pthread_mutex_unlock(&j->lock);
    if (last)
        job_free(j);
}

/* The score without the learned findings: what AutoLearn goes by, so
 * that what it learned does not feed what it learns next. */
static double
score_unlearned(const struct classifier_result *res)
{
    double score = res->score;

    for (size_t i = 0; i < res->n_hits; i++)
        if (strncmp(res->hits[i].rule, "LEARNED_", 8) == 0)
            score -= res->hits[i].score;
    return score;
}

/* AutoLearn's class for a scanned message by its score; -1: not learned. */
static int
auto_learn_class(const struct config *cfg, const struct classifier_result *res)
{
    double score;

    if (res == NULL || res->truncated)
        return -1;
    score = score_unlearned(res);
    if (score >= cfg->auto_learn_slop)
        return STATE_LEARN_SLOP;
    if (score <= cfg->auto_learn_genuine)
        return STATE_LEARN_GENUINE;
    return -1;
}

/* AutoLearn: one more write after the verdict, off by default
 * (slop-milter.conf(5) says why), of the message the job scanned. A
 * failure costs only the learning. */
static void
auto_learn(const struct scan_job *j, int cls)
{
    struct state_learn_msg lm = {0};
    uint64_t *tokens;
    char eb[128];
    int r;

    tokens = malloc(STATE_LEARN_MAX_TOKENS * sizeof(*tokens));
    if (tokens == NULL)
        return;
    r = classifier_learn_tokens(j->snap->classifier, j->buf, j->len, tokens, STATE_LEARN_MAX_TOKENS,
                                &lm.n, &lm.hint);
    lm.tokens = tokens;
    if (r == 0)
        r = state_learn_add(cb_state, &lm, (enum state_learn_class)cls, time(NULL), NULL);
    if (r < 0)
        log_warning("%s: cannot learn the message in StateDir: %s, verdict unchanged", j->queue_id,
                    log_strerror(r, eb, sizeof(eb)));
    free(tokens);
}

static void
job_run(struct scan_job *j)
{
    struct classifier_result *res = NULL;
    int r = classifier_scan(j->snap->classifier, j->buf, j->len, &j->env, &res);
    int cls = r == 0 && j->auto_learn ? auto_learn_class(j->snap->cfg, res) : -1;
    bool abandoned;

    pthread_mutex_lock(&j->lock);
    j->r = r;
    j->res = res;
    j->done = true;
    abandoned = j->abandoned;
    pthread_cond_signal(&j->cv);
    pthread_mutex_unlock(&j->lock);
    /* After the caller has its verdict: the write does not delay it. */
    if (cls >= 0 && !abandoned)
        auto_learn(j, cls);
}

/* The scan thread's side: scan, then let go of the job. */
static void
job_work(void *arg)
{
    struct scan_job *j = arg;

    job_run(j);
    job_put(j);
}

static struct scan_job *
job_new(struct snapshot *snap, struct msg *m)
{
    pthread_condattr_t ca;
    struct scan_job *j = calloc(1, sizeof(*j));

    if (j == NULL)
        return NULL;
    pthread_mutex_init(&j->lock, NULL);
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&j->cv, &ca);
    pthread_condattr_destroy(&ca);
    j->refs = 1;
    j->snap = snapshot_ref(snap);
    /* The job owns what it scans: after a timeout it outlives the message. */
    j->buf = m->buf;
    j->len = m->len;
    j->reserved = m->reserved;
    m->reserved = 0;
    m->buf = NULL;
    m->len = m->cap = 0;
    j->auto_learn = cb_state != NULL && cb_record && snap->cfg->auto_learn && !m->oversize;
    memcpy(j->queue_id, m->queue_id, sizeof(j->queue_id));
    j->from = strdup(m->mail_from ? m->mail_from : "");
    j->rcpts = calloc(m->n_rcpts ? m->n_rcpts : 1, sizeof(*j->rcpts));
    if (j->from == NULL || j->rcpts == NULL) {
        job_free(j);
        return NULL;
    }
    for (size_t i = 0; i < m->n_rcpts; i++) {
        j->rcpts[i] = strdup(m->rcpts[i].addr);
        if (j->rcpts[i] == NULL) {
            job_free(j);
            return NULL;
        }
        j->n_rcpts++;
    }
    j->env.mail_from = j->from;
    j->env.rcpt = (const char *const *)j->rcpts;
    j->env.n_rcpt = j->n_rcpts;
    /* Mail recorded up to the second this one began (times are whole
     * seconds) came before it; -t reads a message that arrived earlier,
     * and its own Received: says when. */
    j->env.arrival = cb_record ? (int64_t)m->arrived + 1 : classifier_arrival(j->buf, j->len);
    if (cb_state != NULL) {
        struct state_lookup_options lo;

        lookup_options(snap->cfg, &lo);
        state_lookup_init(&j->sl, cb_state, &lo);
        j->env.lookup = &j->sl.lookup;
        atomic_fetch_add(&cb_state_users, 1);
    }
    return j;
}

/* Returns 0 with *ret set, -ETIMEDOUT, or the scan's negative errno. */
static int
scan_with_timeout(struct snapshot *snap, struct msg *m, void (*progress)(void *), void *pctx,
                  struct classifier_result **ret)
{
    unsigned timeout_ms = snap->cfg->scan_timeout;
    struct timespec deadline, slice;
    struct scan_job *j;
    int r;

    j = job_new(snap, m);
    if (j == NULL)
        return -ENOMEM;

    j->refs = 2;
    if (scanner_run(job_work, j) < 0) {
        /* No thread to spare: scan here, without the time limit. */
        j->refs = 1;
        job_run(j);
    }

    clock_gettime(CLOCK_MONOTONIC, &deadline);
    deadline.tv_sec += timeout_ms / 1000;
    deadline.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
    if (deadline.tv_nsec >= 1000000000L) {
        deadline.tv_sec++;
        deadline.tv_nsec -= 1000000000L;
    }

    pthread_mutex_lock(&j->lock);
    while (!j->done) {
        clock_gettime(CLOCK_MONOTONIC, &slice);
        if (slice.tv_sec > deadline.tv_sec ||
            (slice.tv_sec == deadline.tv_sec && slice.tv_nsec >= deadline.tv_nsec))
            break;
        /* Wake at least once a second to tell the MTA we are alive. */
        slice.tv_sec += 1;
        if (slice.tv_sec > deadline.tv_sec ||
            (slice.tv_sec == deadline.tv_sec && slice.tv_nsec > deadline.tv_nsec))
            slice = deadline;
        pthread_cond_timedwait(&j->cv, &j->lock, &slice);
        if (!j->done && progress) {
            pthread_mutex_unlock(&j->lock);
            progress(pctx);
            pthread_mutex_lock(&j->lock);
        }
    }
    if (j->done) {
        r = j->r;
        *ret = j->res;
        j->res = NULL;
    } else {
        r = -ETIMEDOUT;
        j->abandoned = true;
    }
    pthread_mutex_unlock(&j->lock);
    /* The scan thread stays with the late job and exits after it. */
    if (r == -ETIMEDOUT)
        scanner_abandon();
    job_put(j);
    return r;
}

/* ---- the decision ----------------------------------------------------- */

static double
ms_since(const struct timespec *t0)
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
prepare_reply(struct snapshot *snap, struct msg *m, struct decision *d)
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
    in.key = cb_reply_key;
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
record_scan(const struct config *cfg, const struct msg *m, const struct classifier_result *res)
{
    struct state_lookup_options lo;
    struct state_lookup sl;
    char eb[512];
    int r;

    if (cb_state == NULL || !cb_record || !cfg->record_state)
        return;
    lookup_options(cfg, &lo);
    state_lookup_init(&sl, cb_state, &lo);
    r = state_lookup_record(&sl, res);
    if (r < 0 && shared_state_unreachable(cb_state, r))
        log_debug("%s: shared state unreachable, message not recorded", m->queue_id);
    else if (r < 0) {
        /* Redis or StateDir: the operator must know which to look at. */
        state_strerror(cb_state, r, eb, sizeof(eb));
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
own_reply(const struct config *cfg, const struct msg *m, struct decision *d)
{
    struct classifier_result *res;
    struct reply_header *h;
    bool ours;

    if (cb_reply_key == NULL || !m->have_message_id)
        return false;
    h = msg_reply_headers(m);
    ours = h != NULL && reply_token_valid(cb_reply_key, h, m->n_headers);
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
callbacks_decide(struct snapshot *snap, struct msg *m, void (*progress)(void *), void *pctx,
                 struct decision *d)
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
    if (own_reply(cfg, m, d)) {
        if (verdict_build(cfg, d->res, &in, &d->plan) < 0)
            goto failed;
        /* d->res is the caller's, freed by decision_release(). */
        return; // NOLINT(clang-analyzer-unix.Malloc)
    }
    r = scan_with_timeout(snap, m, progress, pctx, &d->res);
    d->ms = ms_since(&t0);
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
    record_scan(cfg, m, d->res);
    /* The classifier caps a maintainer's action at tag; this holds even
     * if a rule or threshold change lets one through. */
    if (d->plan.reply && d->res->trusted_sender)
        d->reply_suppressed = "trusted sender";
    else if (d->plan.reply)
        prepare_reply(snap, m, d);
    return;

failed:
    metrics_note_error(cause_error(cause));
    if (verdict_build_failure(cfg, cause, &in, &d->plan) < 0) {
        /* Out of memory even for the failure plan: accept untouched. */
        verdict_plan_init(&d->plan);
        d->plan.cause = cause;
    }
}

/* Copy user data for a log line: printable ASCII, capped. */
static const char *
log_clean(const char *s, char *buf, size_t size)
{
    size_t n = 0;

    for (; s && *s && n + 1 < size; s++)
        buf[n++] = (*s >= 0x21 && *s <= 0x7e && *s != '\'') ? *s : '?';
    buf[n] = '\0';
    return buf;
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
callbacks_log_decision(const struct msg *m, const struct decision *d)
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

/* ---- applying a plan through libmilter -------------------------------- */

static sfsistat
plan_status(const struct verdict_plan *p)
{
    switch (p->result) {
    case VERDICT_REJECT:
        return SMFIS_REJECT;
    case VERDICT_TEMPFAIL:
        return SMFIS_TEMPFAIL;
    default:
        return CB_PASS;
    }
}

static int
plan_set_reply(SMFICTX *ctx, struct verdict_plan *p)
{
    char esc[VERDICT_MAX_SMTP_LINES][VERDICT_SMTP_LINE_MAX + 1];
    char *l[VERDICT_MAX_SMTP_LINES + 1] = {NULL};

    if (p->n_smtp_lines == 0 || p->rcode[0] == '\0')
        return 0;
    for (size_t i = 0; i < p->n_smtp_lines; i++) {
        if (verdict_escape(p->smtp_lines[i], esc[i], sizeof(esc[i])) < 0)
            return -ENOSPC;
        l[i] = esc[i];
    }
    if (p->n_smtp_lines == 1)
        return smfi_setreply(ctx, p->rcode, p->xcode, l[0]) == MI_SUCCESS ? 0 : -EIO;
    /* smfi_setmlreply stops at the first NULL; unused slots are NULL. */
    return smfi_setmlreply(ctx, p->rcode, p->xcode, l[0], l[1], l[2], l[3], l[4], l[5], l[6], l[7],
                           l[8], l[9], l[10], l[11], l[12], l[13], l[14], l[15], l[16], l[17],
                           l[18], l[19], l[20], l[21], l[22], l[23], l[24], l[25], l[26], l[27],
                           l[28], l[29], l[30], l[31], (char *)NULL) == MI_SUCCESS
               ? 0
               : -EIO;
}

/* Returns 0, or -EIO naming the failed call in *ret_what. */
static int
plan_apply(SMFICTX *ctx, struct verdict_plan *p, const char **ret_what)
{
    for (size_t i = 0; i < p->n_remove; i++) {
        if (smfi_chgheader(ctx, p->remove[i].name, (int)p->remove[i].index, NULL) != MI_SUCCESS) {
            *ret_what = "smfi_chgheader (remove)";
            return -EIO;
        }
    }
    if (p->subject) {
        int ok = p->subject_add ? smfi_addheader(ctx, hdr_subject, p->subject)
                                : smfi_chgheader(ctx, hdr_subject, 1, p->subject);

        if (ok != MI_SUCCESS) {
            *ret_what = "smfi_chgheader (Subject)";
            return -EIO;
        }
    }
    for (size_t i = 0; i < p->n_add; i++) {
        if (smfi_addheader(ctx, p->add[i].name, p->add[i].value) != MI_SUCCESS) {
            *ret_what = "smfi_addheader";
            return -EIO;
        }
    }
    if (p->quarantine && smfi_quarantine(ctx, p->quarantine) != MI_SUCCESS) {
        *ret_what = "smfi_quarantine";
        return -EIO;
    }
    if (plan_set_reply(ctx, p) < 0) {
        *ret_what = "smfi_setmlreply";
        return -EIO;
    }
    return 0;
}

/* Status for a failure before there is a message to put headers on. */
static sfsistat
early_failure(const struct config *cfg)
{
    if (cfg == NULL || cfg->mode == CONFIG_MODE_MONITOR)
        return CB_PASS;
    switch (cfg->on_internal_error) {
    case CONFIG_FAIL_TEMPFAIL:
        return SMFIS_TEMPFAIL;
    case CONFIG_FAIL_REJECT:
        return SMFIS_REJECT;
    default:
        return CB_PASS;
    }
}

static struct conn *
conn_get(SMFICTX *ctx)
{
    struct conn *c = smfi_getpriv(ctx);

    if (c != NULL) {
        clock_gettime(CLOCK_MONOTONIC, &c->seen);
        return c;
    }
    c = conn_new(snapshot_current());
    if (c == NULL)
        return NULL;
    c->nr = atomic_load(&cb_nr);
    clock_gettime(CLOCK_MONOTONIC, &c->seen);
    if (c->snap == NULL || smfi_setpriv(ctx, c) != MI_SUCCESS) {
        log_error("cannot set up a connection context, applying OnInternalError");
        return conn_free(c);
    }
    return c;
}

/* The connection of a later command, marked as heard from now. */
static struct conn *
conn_seen(SMFICTX *ctx)
{
    struct conn *c = smfi_getpriv(ctx);

    if (c != NULL)
        clock_gettime(CLOCK_MONOTONIC, &c->seen);
    return c;
}

/*
 * libmilter ends a session silently when a read waits ReadTimeout; the
 * session's abort and close callbacks are then the only trace. Count it
 * (gate_note logs at most once a minute) when the MTA had been silent
 * that long.
 */
static void
note_silence(struct conn *c)
{
    unsigned limit = c->snap->cfg->read_timeout;
    struct timespec now;

    clock_gettime(CLOCK_MONOTONIC, &now);
    if (c->silence_noted || now.tv_sec - c->seen.tv_sec < (time_t)limit)
        return;
    c->silence_noted = true;
    gate_note(GATE_NOTE_SILENT, limit);
}

static bool
socket_is_tcp(const char *spec)
{
    return spec != NULL && (strncmp(spec, "inet:", 5) == 0 || strncmp(spec, "inet6:", 6) == 0);
}

/* The answer for a stage that never decides: none, when negotiated so. */
static sfsistat
pass_stage(const struct conn *c, unsigned long nr_bit)
{
    return c != NULL && (c->nr & nr_bit) != 0 ? SMFIS_NOREPLY : SMFIS_CONTINUE;
}

/* ---- the callbacks ----------------------------------------------------- */

static sfsistat
cb_negotiate(SMFICTX *ctx, unsigned long f0, unsigned long f1, unsigned long f2, unsigned long f3,
             unsigned long *pf0, unsigned long *pf1, unsigned long *pf2, unsigned long *pf3)
{
    const unsigned long actions = SMFIF_ADDHDRS | SMFIF_CHGHDRS | SMFIF_QUARANTINE;
    struct conn *c;

    (void)f2;
    (void)f3;
    c = conn_get(ctx);
    if (c == NULL)
        return SMFIS_ALL_OPTS;
    if ((f0 & (SMFIF_ADDHDRS | SMFIF_CHGHDRS)) != (SMFIF_ADDHDRS | SMFIF_CHGHDRS))
        log_warning("the MTA does not allow adding and changing headers, tagging will fail");
    *pf0 = f0 & (actions | SMFIF_SETSYMLIST);
    *pf1 = f1 & (SMFIP_SKIP | SMFIP_NOUNKNOWN | SMFIP_NOHELO);
    if (!socket_is_tcp(c->snap->cfg->socket))
        *pf1 |= f1 & (SMFIP_NODATA | CB_NR_STAGES);
    *pf2 = 0;
    *pf3 = 0;
    c->can_skip = (f1 & SMFIP_SKIP) != 0;
    c->nr = *pf1 & CB_NR_STAGES;
    atomic_store(&cb_nr, c->nr);
    if (f0 & SMFIF_SETSYMLIST) {
        if (smfi_setsymlist(ctx, SMFIM_CONNECT, sym_list_connect) != MI_SUCCESS ||
            smfi_setsymlist(ctx, SMFIM_ENVFROM, sym_list_envfrom) != MI_SUCCESS ||
            smfi_setsymlist(ctx, SMFIM_EOM, sym_list_eom) != MI_SUCCESS)
            log_warning("cannot request macros from the MTA, using its defaults");
    }
    return SMFIS_CONTINUE;
}

static sfsistat
cb_connect(SMFICTX *ctx, char *hostname, _SOCK_ADDR *sa)
{
    struct conn *c = conn_get(ctx);
    const struct config *cfg;
    const char *mta_name;

    if (c == NULL)
        return early_failure(NULL);
    cfg = c->snap->cfg;
    snprintf(c->host, sizeof(c->host), "%s", hostname ? hostname : "unknown");
    mta_name = smfi_getsymval(ctx, sym_mta_name);
    snprintf(c->mta_name, sizeof(c->mta_name), "%s", mta_name ? mta_name : "");
    if (sa != NULL) {
        const void *a = NULL;

        if (sa->sa_family == AF_INET)
            a = &((const struct sockaddr_in *)(const void *)sa)->sin_addr;
        else if (sa->sa_family == AF_INET6)
            a = &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr;
        if (a == NULL || inet_ntop(sa->sa_family, a, c->addr, sizeof(c->addr)) == NULL)
            snprintf(c->addr, sizeof(c->addr), "local");
    } else
        snprintf(c->addr, sizeof(c->addr), "local");

    if (config_hosts_match(&cfg->peer_list, sa, hostname))
        c->skip = "PeerList";
    else if (config_hosts_match(&cfg->internal_hosts, sa, hostname))
        c->skip = "InternalHosts";
    if (c->skip) {
        char host[LOG_FIELD_MAX];

        log_info("connect from '%s' [%s]: in %s, not scanned",
                 log_clean(c->host, host, sizeof(host)), c->addr, c->skip);
        return pass_stage(c, SMFIP_NR_CONN);
    }
    return pass_stage(c, SMFIP_NR_CONN);
}

/* A message refused for lack of budget: log at most once a minute. */
static void
note_busy(const struct config *cfg)
{
    unsigned long n = membudget_note_busy(time(NULL), BUSY_LOG_INTERVAL);
    char lim[32];

    if (n == 0)
        return;
    snprintf(lim, sizeof(lim), "%llu", (unsigned long long)membudget_limit(cfg->max_memory));
    log_warning("memory budget full (MaxMemory=%s bytes, %llu buffered): %lu message(s) "
                "handled by OnBusy=%s since the last report",
                lim, (unsigned long long)membudget_used(), n, config_failure_name(cfg->on_busy));
}

/* The size the MTA announced: Sendmail's {msg_size}, else the SIZE=
 * parameter of MAIL FROM (Postfix passes ESMTP parameters as arguments). */
static size_t
announced_size(SMFICTX *ctx, char **argv)
{
    const char *v = smfi_getsymval(ctx, sym_msg_size);
    unsigned long long n;
    char *end;

    for (size_t i = 1; (v == NULL || *v == '\0') && argv && argv[0] && argv[i]; i++)
        if (strncasecmp(argv[i], "SIZE=", 5) == 0)
            v = argv[i] + 5;
    if (v == NULL || *v < '0' || *v > '9')
        return 0;
    errno = 0;
    n = strtoull(v, &end, 10);
    if (errno != 0 || (*end != '\0' && *end != ' '))
        return 0;
    return n > SIZE_MAX ? SIZE_MAX : (size_t)n;
}

/* The budget cannot hold the announced size: answer OnBusy at MAIL when it
 * needs no header change, which spares the MTA sending the data. */
static bool
busy_early(SMFICTX *ctx, struct conn *c, sfsistat *ret)
{
    const struct config *cfg = c->snap->cfg;
    struct verdict_input in;
    struct verdict_plan plan;
    char from[LOG_FIELD_MAX];

    if (cfg->mode == CONFIG_MODE_MONITOR ||
        (cfg->on_busy != CONFIG_FAIL_TEMPFAIL && cfg->on_busy != CONFIG_FAIL_REJECT))
        return false;
    verdict_plan_init(&plan);
    msg_verdict_input(c->msg, &in);
    if (verdict_build_failure(cfg, VERDICT_BUSY, &in, &plan) < 0) {
        verdict_plan_release(&plan);
        return false;
    }
    if (plan.n_smtp_lines > 0 && plan_set_reply(ctx, &plan) < 0)
        log_warning("%s: cannot set the SMTP reply", c->msg->queue_id);
    *ret = plan_status(&plan);
    verdict_plan_release(&plan);
    note_busy(cfg);
    metrics_note_skip(METRICS_SKIP_BUSY_AT_MAIL);
    log_info("%s: from=<%s> cause=busy result=%s at=MAIL", c->msg->queue_id,
             log_clean(c->msg->mail_from, from, sizeof(from)),
             *ret == SMFIS_TEMPFAIL ? "tempfail" : "reject");
    c->msg = msg_free(c->msg);
    return true;
}

static sfsistat
cb_envfrom(SMFICTX *ctx, char **argv)
{
    struct conn *c = conn_seen(ctx);
    const struct config *cfg;
    const char *auth;
    struct msg *m;

    if (c == NULL)
        return early_failure(NULL);
    cfg = c->snap->cfg;
    if (c->skip) {
        metrics_note_skip(strcmp(c->skip, "PeerList") == 0 ? METRICS_SKIP_PEER_LIST
                                                           : METRICS_SKIP_INTERNAL_HOSTS);
        return CB_PASS;
    }
    c->msg = msg_free(c->msg);
    /* OnStateError tempfail or accept: the start logged why, once. With
     * no message kept, the later stages let it through unscanned. A
     * monitor never turns mail away. */
    if (cb_state_down == CALLBACKS_STATE_ACCEPT ||
        (cb_state_down == CALLBACKS_STATE_TEMPFAIL && cfg->mode == CONFIG_MODE_MONITOR))
        return CB_PASS;
    if (cb_state_down == CALLBACKS_STATE_TEMPFAIL) {
        if (smfi_setreply(ctx, redis_rcode, redis_xcode, state_text) != MI_SUCCESS)
            log_warning("cannot set the SMTP reply for OnStateError tempfail");
        return SMFIS_TEMPFAIL;
    }
    m = msg_new((size_t)cfg->max_message_size);
    if (m == NULL) {
        log_error("out of memory starting a message, applying OnInternalError");
        return early_failure(cfg);
    }
    m->max_headers = cfg->max_headers;
    m->max_header_size = (size_t)cfg->max_header_size;
    m->budget = membudget_limit(cfg->max_memory);
    c->msg = m;
    c->n_msgs++;
    msg_set_queue_id(m, smfi_getsymval(ctx, sym_queue_id));
    msg_set_sender(m, argv ? argv[0] : NULL);

    auth = smfi_getsymval(ctx, sym_auth);
    m->authenticated = auth != NULL && *auth != '\0';
    snprintf(m->mta_name, sizeof(m->mta_name), "%s", c->mta_name);
    if (cfg->skip_authenticated && auth != NULL && *auth != '\0') {
        char from[LOG_FIELD_MAX];

        log_info("%s: from=<%s> authenticated, not scanned", m->queue_id,
                 log_clean(m->mail_from, from, sizeof(from)));
        metrics_note_skip(METRICS_SKIP_AUTHENTICATED);
        c->msg = msg_free(m);
        return CB_PASS;
    }
    if (m->mail_from && *m->mail_from && config_list_match(&cfg->allow_senders, m->mail_from)) {
        char from[LOG_FIELD_MAX];

        log_info("%s: from=<%s> in AllowSenders, not scanned", m->queue_id,
                 log_clean(m->mail_from, from, sizeof(from)));
        metrics_note_skip(METRICS_SKIP_ALLOW_SENDERS);
        c->msg = msg_free(m);
        return CB_PASS;
    }
    /* Only mail that will be buffered takes budget (recipients are not
     * known yet: mail for none of Recipients holds it until its headers end). */
    if (msg_reserve(m, announced_size(ctx, argv)) < 0) {
        sfsistat st;

        if (busy_early(ctx, c, &st))
            return st;
    }
    return SMFIS_CONTINUE;
}

static sfsistat
cb_envrcpt(SMFICTX *ctx, char **argv)
{
    struct conn *c = conn_seen(ctx);
    const struct config *cfg;
    char addr[CONN_ADDR_MAX];
    bool protected;

    if (c == NULL || c->msg == NULL)
        return pass_stage(c, SMFIP_NR_RCPT);
    cfg = c->snap->cfg;
    conn_addr_strip(argv ? argv[0] : NULL, addr, sizeof(addr));
    protected = config_list_empty(&cfg->recipients) || config_list_match(&cfg->recipients, addr);
    msg_add_rcpt(c->msg, addr, protected);
    return pass_stage(c, SMFIP_NR_RCPT);
}

static sfsistat
cb_header(SMFICTX *ctx, char *name, char *value)
{
    struct conn *c = conn_seen(ctx);

    if (c == NULL || c->msg == NULL)
        return pass_stage(c, SMFIP_NR_HDR);
    /* An error is remembered in the message and judged at eom. */
    msg_add_header(c->msg, name, value);
    return pass_stage(c, SMFIP_NR_HDR);
}

static sfsistat
cb_eoh(SMFICTX *ctx)
{
    struct conn *c = conn_seen(ctx);
    struct msg *m;

    if (c == NULL || c->msg == NULL)
        return pass_stage(c, SMFIP_NR_EOH);
    m = c->msg;
    msg_end_headers(m);
    if (m->n_protected == 0) {
        char from[LOG_FIELD_MAX];

        msg_set_queue_id(m, smfi_getsymval(ctx, sym_queue_id));
        log_info("%s: from=<%s> no recipient in Recipients, not scanned", m->queue_id,
                 log_clean(m->mail_from, from, sizeof(from)));
        metrics_note_skip(METRICS_SKIP_NO_RECIPIENT);
        c->msg = msg_free(m);
        return pass_stage(c, SMFIP_NR_EOH);
    }
    return pass_stage(c, SMFIP_NR_EOH);
}

static sfsistat
cb_body(SMFICTX *ctx, unsigned char *data, size_t len)
{
    struct conn *c = conn_seen(ctx);

    if (c == NULL)
        return SMFIS_CONTINUE;
    /* A message we pass unscanned: spare the MTA sending its body. */
    if (c->msg == NULL)
        return c->can_skip ? SMFIS_SKIP : SMFIS_CONTINUE;
    msg_add_body(c->msg, (const char *)data, len);
    if ((c->msg->oversize || c->msg->busy) && c->can_skip)
        return SMFIS_SKIP;
    return SMFIS_CONTINUE;
}

static void
eom_progress(void *ctx)
{
    if (smfi_progress(ctx) != MI_SUCCESS)
        log_debug("smfi_progress failed");
}

static void
dispatch_reply(const struct config *cfg, struct msg *m, struct decision *d)
{
    enum state_claim claim;
    char addr[CONN_ADDR_MAX];
    time_t now = time(NULL);
    int r;

    if (d->reply_suppressed) {
        snprintf(d->reply_note, sizeof(d->reply_note), "suppressed:%s", d->reply_suppressed);
        for (char *p = d->reply_note; *p; p++)
            if (*p == ' ')
                *p = '-';
        return;
    }
    if (d->reply_unverified) {
        snprintf(d->reply_note, sizeof(d->reply_note), "unverified");
        return;
    }
    if (cb_state == NULL || cb_sender == NULL || d->reply_text == NULL) {
        snprintf(d->reply_note, sizeof(d->reply_note), "unavailable");
        return;
    }
    snprintf(addr, sizeof(addr), "%s", m->mail_from);
    for (char *p = addr; *p; p++)
        *p = (char)tolower((unsigned char)*p);
    r = state_reply_claim(cb_state, addr, now, cfg->reply_interval, cfg->reply_hourly_cap, &claim);
    if (r < 0) {
        char eb[512];

        /* An outage of the shared ledger is logged once, not per message. */
        if (shared_state_unreachable(cb_state, r))
            log_debug("%s: reply ledger: %s, not replying", m->queue_id,
                      log_strerror(r, eb, sizeof(eb)));
        else {
            state_strerror(cb_state, r, eb, sizeof(eb));
            log_error("%s: reply ledger in %s, not replying", m->queue_id, eb);
        }
        snprintf(d->reply_note, sizeof(d->reply_note), "ledger-error");
        metrics_note_error(METRICS_ERR_REPLY_LEDGER);
        return;
    }
    if (claim == STATE_CLAIM_RECENT) {
        snprintf(d->reply_note, sizeof(d->reply_note), "recent");
        return;
    }
    if (claim == STATE_CLAIM_CAPPED) {
        snprintf(d->reply_note, sizeof(d->reply_note), "capped");
        return;
    }
    r = reply_sender_submit_job(cb_sender, m->mail_from, d->reply_text, m->queue_id, now);
    if (r < 0) {
        snprintf(d->reply_note, sizeof(d->reply_note), r == -EAGAIN ? "queue-full" : "not-queued");
        if (state_reply_release(cb_state, addr, now) < 0)
            log_warning("%s: cannot release the reply claim for <%s>", m->queue_id, addr);
        return;
    }
    snprintf(d->reply_note, sizeof(d->reply_note), "queued");
}

static sfsistat
cb_eom(SMFICTX *ctx)
{
    struct conn *c = conn_seen(ctx);
    const struct config *cfg;
    struct decision d;
    const char *what = NULL;
    struct timespec t0;
    sfsistat status;
    uint64_t fails;
    struct msg *m;

    if (c == NULL || c->msg == NULL)
        return SMFIS_CONTINUE;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    m = c->msg;
    cfg = c->snap->cfg;
    msg_set_queue_id(m, smfi_getsymval(ctx, sym_queue_id));

    decision_init(&d);
    fails = state_redis_failures(state_redis_of(cb_state));
    callbacks_decide(c->snap, m, eom_progress, ctx, &d);
    if (m->busy)
        note_busy(cfg);
    status = plan_status(&d.plan);
    if (cfg->on_redis_error == CONFIG_FAIL_TEMPFAIL && cfg->mode != CONFIG_MODE_MONITOR &&
        state_redis_failures(state_redis_of(cb_state)) != fails) {
        /* OnRedisError tempfail: the MTA keeps the message and retries. */
        if (smfi_setreply(ctx, redis_rcode, redis_xcode, redis_text) != MI_SUCCESS)
            log_debug("%s: smfi_setreply failed", m->queue_id);
        d.plan.result = VERDICT_TEMPFAIL;
        d.plan.reply = false;
        status = SMFIS_TEMPFAIL;
        metrics_note_error(METRICS_ERR_SHARED_STATE);
    } else if (plan_apply(ctx, &d.plan, &what) < 0) {
        struct verdict_input in;

        log_error("%s: %s failed, applying OnInternalError", m->queue_id, what);
        msg_verdict_input(m, &in);
        /* Only the status of the failure policy: the MTA refused a change
         * already, so no further header changes are tried. */
        if (verdict_build_failure(cfg, VERDICT_INTERNAL_ERROR, &in, &d.plan) == 0 &&
            d.plan.n_smtp_lines > 0 && plan_set_reply(ctx, &d.plan) < 0)
            log_error("%s: cannot set the SMTP reply either", m->queue_id);
        d.plan.reply = false;
        status = early_failure(cfg);
        metrics_note_error(METRICS_ERR_MTA_CHANGE);
    } else if (d.plan.reply)
        dispatch_reply(cfg, m, &d);
    callbacks_log_decision(m, &d);
    metrics_note_message(d.res != NULL, d.res ? d.res->kind : CLASSIFIER_KIND_OTHER,
                         d.res ? d.res->action : CLASSIFIER_ACTION_NONE, d.plan.result,
                         cfg->mode == CONFIG_MODE_MONITOR);
    if (d.plan.reply)
        metrics_note_reply(d.reply_note);
    metrics_note_eom((uint64_t)(ms_since(&t0) * 1000.0));
    decision_release(&d);
    c->msg = msg_free(m);
    return status;
}

static sfsistat
cb_abort(SMFICTX *ctx)
{
    struct conn *c = smfi_getpriv(ctx);

    if (c != NULL) {
        note_silence(c);
        c->msg = msg_free(c->msg);
    }
    return SMFIS_CONTINUE;
}

static sfsistat
cb_close(SMFICTX *ctx)
{
    struct conn *c = smfi_getpriv(ctx);

    if (c == NULL) {
        gate_note(GATE_NOTE_UNNEGOTIATED, 0);
        return SMFIS_CONTINUE;
    }
    note_silence(c);
    /* Also called for SMFIC_QUIT_NC: the next session's cb_connect builds
     * a new conn, whose can_skip stays false (there is no new negotiation)
     * and whose nr comes from cb_nr. */
    if (smfi_setpriv(ctx, NULL) != MI_SUCCESS)
        log_debug("smfi_setpriv failed at close");
    conn_free(c);
    return SMFIS_CONTINUE;
}

void
callbacks_reply_status(void *ctx, const struct reply_status *status)
{
    struct state *st = ctx;
    char rcpt[LOG_FIELD_MAX], addr[CONN_ADDR_MAX];
    const char *id = status->id && *status->id ? status->id : "NOQUEUE";

    log_clean(status->rcpt, rcpt, sizeof(rcpt));
    metrics_note_reply_sent(status->ok);
    if (status->ok) {
        log_info("%s: reply to <%s> sent", id, rcpt);
        return;
    }
    log_warning("%s: reply to <%s> failed: %s, releasing the claim", id, rcpt,
                status->reason ? status->reason : "unknown");
    snprintf(addr, sizeof(addr), "%s", status->rcpt ? status->rcpt : "");
    for (char *p = addr; *p; p++)
        *p = (char)tolower((unsigned char)*p);
    if (st != NULL && state_reply_release(st, addr, status->claimed_at) < 0)
        log_warning("%s: cannot release the reply claim for <%s>", id, rcpt);
}

static char milter_name[] = "slop-milter";

int
callbacks_register(void)
{
    struct smfiDesc desc = {
        .xxfi_name = milter_name,
        .xxfi_version = SMFI_VERSION,
        .xxfi_flags = SMFIF_ADDHDRS | SMFIF_CHGHDRS | SMFIF_QUARANTINE,
        .xxfi_connect = cb_connect,
        .xxfi_envfrom = cb_envfrom,
        .xxfi_envrcpt = cb_envrcpt,
        .xxfi_header = cb_header,
        .xxfi_eoh = cb_eoh,
        .xxfi_body = cb_body,
        .xxfi_eom = cb_eom,
        .xxfi_abort = cb_abort,
        .xxfi_close = cb_close,
        .xxfi_negotiate = cb_negotiate,
    };

    return smfi_register(desc) == MI_SUCCESS ? 0 : -EIO;
}
