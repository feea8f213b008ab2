/*
 * decision.h - what to do with one collected message: the verdict's
 * plan, the scan's result and the reply, judged by decision_make() for
 * end-of-message (callbacks.c) and the offline mode (-t).
 */
#ifndef SLOP_MILTER_DECISION_H
#define SLOP_MILTER_DECISION_H

#include <stdbool.h>
#include <time.h>

#include "verdict.h"

struct msg;
struct reply_key;
struct snapshot;
struct state;

struct decision {
    struct verdict_plan plan;
    struct classifier_result *res; /* NULL when the message was not scanned */
    double ms;                     /* time spent scanning */
    char *reply_text;              /* rendered reply when plan.reply and allowed */
    const char *reply_suppressed;  /* static reason when plan.reply but not allowed */
    bool reply_unverified;         /* plan.reply, allowed, but the sender is not proved
                                    * as ReplyRequires asks */
    const char *reply_refusal;     /* static word when the Authentication-Results fields
                                    * were refused as a whole (reply_verify.h), else NULL */
    char reply_note[64];           /* outcome for the log line ("queued", "recent", ...) */
    bool own_reply;                /* our own reply came back: passed unscanned */
};

void decision_init(struct decision *d);
void decision_release(struct decision *d);

/*
 * What a decision may use beyond the message: st (NULL: no look-ups,
 * records or replies), whether st may be written (the daemon; false for
 * -t), and the key that signs our replies and knows them when they come
 * back (reply_token.c; NULL: none). Borrowed for the call.
 */
struct decision_env {
    struct state *st;
    bool record;
    const struct reply_key *reply_key;
};

/*
 * Judge the collected message m with snap. Never fails: an error becomes
 * the configured failure plan. progress (may be NULL) is called about
 * once a second while a scan runs. Takes the message buffer out of m.
 * With a state, the scan looks into it, and a scanned message is
 * recorded when env->record and RecordState allow. A trusted sender's
 * mail is never answered. Release d with decision_release().
 */
void decision_make(const struct decision_env *env, struct snapshot *snap, struct msg *m,
                   void (*progress)(void *), void *pctx, struct decision *d);

/* Write the per-message decision line to the log. */
void decision_log(const struct msg *m, const struct decision *d);

/* Milliseconds since t0 on CLOCK_MONOTONIC. */
double decision_ms_since(const struct timespec *t0);

#endif
