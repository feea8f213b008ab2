/*
 * callbacks.h - the libmilter callbacks and the process-wide values they
 * judge with: the state, the reply sender and key, OnStateError's mode.
 *
 * callbacks_decide() judges one collected message with those values
 * (decision.c) for eom and for the offline mode (-t), which prints the
 * plan. Threading: callbacks_decide() is thread-safe; callbacks_setup()
 * is called once before smfi_main() and its values are read-only after.
 */
#ifndef SLOP_MILTER_CALLBACKS_H
#define SLOP_MILTER_CALLBACKS_H

#include <stdbool.h>

#include "decision.h"

struct msg;
struct snapshot;
struct state;
struct reply_sender;

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

/* smfi_register() with our callbacks; 0 or -EIO. */
int callbacks_register(void);

#endif
