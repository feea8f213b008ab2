/*
 * callbacks.h - the libmilter callbacks and the decision they share with
 * the offline mode (-t).
 *
 * callbacks_decide() is the whole judging pipeline for one collected
 * message: scan with a time limit, failure policies, verdict, reply
 * check and rendering. eom applies its plan through libmilter; -t prints
 * it. Threading: callbacks_decide() is thread-safe; callbacks_setup() is
 * called once before smfi_main() and its values are read-only after.
 */
#ifndef SLOP_MILTER_CALLBACKS_H
#define SLOP_MILTER_CALLBACKS_H

#include <stdbool.h>

#include "verdict.h"

struct msg;
struct snapshot;
struct state;
struct reply_sender;
struct reply_status;

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
 * Judge the collected message m with snap. Never fails: an error becomes
 * the configured failure plan. progress (may be NULL) is called about
 * once a second while a scan runs. Takes the message buffer out of m.
 * With a state (callbacks_setup()), the scan looks into it, and a scanned
 * message is recorded when record and RecordState allow. A trusted
 * sender's mail is never answered.
 */
void callbacks_decide(struct snapshot *snap, struct msg *m, void (*progress)(void *), void *pctx,
                      struct decision *d);

/* Write the per-message decision line to the log. */
void callbacks_log_decision(const struct msg *m, const struct decision *d);

/*
 * State and reply sender for eom. st NULL: no look-ups, records or
 * replies; sender NULL: no replies. record false: st is only read (-t).
 */
void callbacks_setup(struct state *st, bool record, struct reply_sender *sender);

/* Running without the state it should have (OnStateError): each message
 * is scanned without state, answered 4xx, or accepted unscanned. */
enum callbacks_state_down {
    CALLBACKS_STATE_UP = 0,
    CALLBACKS_STATE_SCAN,
    CALLBACKS_STATE_TEMPFAIL,
    CALLBACKS_STATE_ACCEPT,
};
/* Call with callbacks_setup(), before smfi_main(). */
void callbacks_state_down(enum callbacks_state_down how);

/* The key that signs our replies and knows them when they come back
 * (reply_token.c); NULL: replies carry no token and none is known. key
 * must outlive every callback; set before smfi_main(). */
struct reply_key;
void callbacks_set_reply_key(const struct reply_key *key);

/*
 * Scans still reading the state given to callbacks_setup(): after a
 * timeout a scan's worker outlives its message. Close the state only when
 * this is 0.
 */
unsigned callbacks_state_users(void);

/* Status callback for struct reply_sender: logs and releases failed claims. */
void callbacks_reply_status(void *ctx, const struct reply_status *status);

/* smfi_register() with our callbacks; 0 or -EIO. */
int callbacks_register(void);

#endif
