/*
 * reply_dispatch.c - the reply a decision prepared (decision.c), sent or
 * not: the ledger's claim for the sender (ReplyInterval, ReplyHourlyCap),
 * then the sender's queue (reply_sender.c); and the queue's report of
 * each reply, which gives a failed one's claim back. The outcome is the
 * decision line's reply= word.
 *
 * Threading: reply_dispatch() runs on a connection's thread,
 * reply_dispatch_status() on the sender's worker; both only read their
 * arguments and go through the state's own locking.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <time.h>

#include "config.h"
#include "conn.h"
#include "decision.h"
#include "log.h"
#include "metrics.h"
#include "reply.h"
#include "reply_dispatch.h"
#include "shared_state.h"
#include "state.h"

/* The ledger's key for an address: the address in lower case. */
static void
ledger_addr(const char *addr, char *buf, size_t size)
{
    snprintf(buf, size, "%s", addr ? addr : "");
    for (char *p = buf; *p; p++)
        *p = (char)tolower((unsigned char)*p);
}

/* "suppressed:why", a word with no spaces for the log line. */
static void
note_suppressed(struct decision *d)
{
    snprintf(d->reply_note, sizeof(d->reply_note), "suppressed:%s", d->reply_suppressed);
    for (char *p = d->reply_note; *p; p++)
        if (*p == ' ')
            *p = '-';
}

static void
log_ledger_error(struct state *st, const struct msg *m, int r)
{
    char eb[512];

    /* An outage of the shared ledger is logged once, not per message. */
    if (shared_state_unreachable(st, r)) {
        log_debug("%s: reply ledger: %s, not replying", m->queue_id,
                  log_strerror(r, eb, sizeof(eb)));
        return;
    }
    state_strerror(st, r, eb, sizeof(eb));
    log_error("%s: reply ledger in %s, not replying", m->queue_id, eb);
}

/* Claim the ledger's slot for addr; false, with d->reply_note saying
 * why, when the sender may not be answered now. */
static bool
claim_slot(struct state *st, const struct config *cfg, const struct msg *m, const char *addr,
           time_t now, struct decision *d)
{
    enum state_claim claim;
    int r = state_reply_claim(st, addr, now, cfg->reply_interval, cfg->reply_hourly_cap, &claim);

    if (r < 0) {
        log_ledger_error(st, m, r);
        snprintf(d->reply_note, sizeof(d->reply_note), "ledger-error");
        metrics_note_error(METRICS_ERR_REPLY_LEDGER);
        return false;
    }
    if (claim == STATE_CLAIM_RECENT) {
        snprintf(d->reply_note, sizeof(d->reply_note), "recent");
        return false;
    }
    if (claim == STATE_CLAIM_CAPPED) {
        snprintf(d->reply_note, sizeof(d->reply_note), "capped");
        return false;
    }
    return true;
}

void
reply_dispatch(struct state *st, struct reply_sender *sender, const struct config *cfg,
               const struct msg *m, struct decision *d)
{
    char addr[CONN_ADDR_MAX];
    time_t now = time(NULL);
    int r;

    if (d->reply_suppressed) {
        note_suppressed(d);
        return;
    }
    if (d->reply_unverified) {
        snprintf(d->reply_note, sizeof(d->reply_note), "unverified");
        return;
    }
    if (st == NULL || sender == NULL || d->reply_text == NULL) {
        snprintf(d->reply_note, sizeof(d->reply_note), "unavailable");
        return;
    }
    ledger_addr(m->mail_from, addr, sizeof(addr));
    if (!claim_slot(st, cfg, m, addr, now, d))
        return;
    r = reply_sender_submit_job(sender, m->mail_from, d->reply_text, m->queue_id, now);
    if (r < 0) {
        snprintf(d->reply_note, sizeof(d->reply_note), r == -EAGAIN ? "queue-full" : "not-queued");
        if (state_reply_release(st, addr, now) < 0)
            log_warning("%s: cannot release the reply claim for <%s>", m->queue_id, addr);
        return;
    }
    snprintf(d->reply_note, sizeof(d->reply_note), "queued");
}

void
reply_dispatch_status(void *ctx, const struct reply_status *status)
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
    ledger_addr(status->rcpt, addr, sizeof(addr));
    if (st != NULL && state_reply_release(st, addr, status->claimed_at) < 0)
        log_warning("%s: cannot release the reply claim for <%s>", id, rcpt);
}
