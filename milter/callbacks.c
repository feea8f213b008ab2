/*
 * callbacks.c - libmilter callbacks: MTA events become calls on a struct
 * conn and its struct msg; end-of-message judges (decision.c), acts on
 * the plan (verdict_apply.c) and sends the reply (reply_dispatch.c).
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
#include <errno.h>
#include <netinet/in.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <libmilter/mfapi.h>
#include <libmilter/mfdef.h>

#include "callbacks.h"
#include "classifier.h"
#include "conn.h"
#include "decision.h"
#include "gate.h"
#include "log.h"
#include "membudget.h"
#include "metrics.h"
#include "reply_dispatch.h"
#include "snapshot.h"
#include "state_redis.h"
#include "verdict_apply.h"

#define BUSY_LOG_INTERVAL 60 /* seconds between "memory budget full" lines */

#define CB_PASS SMFIS_CONTINUE /* let it through; never SMFIS_ACCEPT (see above) */

/* The stages we do not answer (see above). */
#define CB_NR_STAGES (SMFIP_NR_CONN | SMFIP_NR_RCPT | SMFIP_NR_HDR | SMFIP_NR_EOH)

static struct state *cb_state;
static bool cb_record;                          /* the state may be written (the daemon, not -t) */
static enum callbacks_state_down cb_state_down; /* set before smfi_main() */
static struct reply_sender *cb_sender;
static const struct reply_key *cb_reply_key; /* signs and knows our replies; NULL: none */
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

void
callbacks_decide(struct snapshot *snap, struct msg *m, void (*progress)(void *), void *pctx,
                 struct decision *d)
{
    struct decision_env env = {.st = cb_state, .record = cb_record, .reply_key = cb_reply_key};

    decision_make(&env, snap, m, progress, pctx, d);
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
    if (plan.n_smtp_lines > 0 && verdict_apply_reply(ctx, &plan) < 0)
        log_warning("%s: cannot set the SMTP reply", c->msg->queue_id);
    *ret = verdict_apply_status(&plan);
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
    status = verdict_apply_status(&d.plan);
    if (cfg->on_redis_error == CONFIG_FAIL_TEMPFAIL && cfg->mode != CONFIG_MODE_MONITOR &&
        state_redis_failures(state_redis_of(cb_state)) != fails) {
        /* OnRedisError tempfail: the MTA keeps the message and retries. */
        if (smfi_setreply(ctx, redis_rcode, redis_xcode, redis_text) != MI_SUCCESS)
            log_debug("%s: smfi_setreply failed", m->queue_id);
        d.plan.result = VERDICT_TEMPFAIL;
        d.plan.reply = false;
        status = SMFIS_TEMPFAIL;
        metrics_note_error(METRICS_ERR_SHARED_STATE);
    } else if (verdict_apply(ctx, &d.plan, &what) < 0) {
        struct verdict_input in;

        log_error("%s: %s failed, applying OnInternalError", m->queue_id, what);
        msg_verdict_input(m, &in);
        /* Only the status of the failure policy: the MTA refused a change
         * already, so no further header changes are tried. */
        if (verdict_build_failure(cfg, VERDICT_INTERNAL_ERROR, &in, &d.plan) == 0 &&
            d.plan.n_smtp_lines > 0 && verdict_apply_reply(ctx, &d.plan) < 0)
            log_error("%s: cannot set the SMTP reply either", m->queue_id);
        d.plan.reply = false;
        status = early_failure(cfg);
        metrics_note_error(METRICS_ERR_MTA_CHANGE);
    } else if (d.plan.reply)
        reply_dispatch(cb_state, cb_sender, cfg, m, &d);
    decision_log(m, &d);
    metrics_note_message(d.res != NULL, d.res ? d.res->kind : CLASSIFIER_KIND_OTHER,
                         d.res ? d.res->action : CLASSIFIER_ACTION_NONE, d.plan.result,
                         cfg->mode == CONFIG_MODE_MONITOR);
    if (d.plan.reply)
        metrics_note_reply(d.reply_note);
    metrics_note_eom((uint64_t)(decision_ms_since(&t0) * 1000.0));
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
