/*
 * reply_dispatch.h - send the reply a decision prepared, within the
 * ledger's limits, and hear how each send went.
 */
#ifndef SLOP_MILTER_REPLY_DISPATCH_H
#define SLOP_MILTER_REPLY_DISPATCH_H

struct config;
struct decision;
struct msg;
struct reply_sender;
struct reply_status;
struct state;

/*
 * Queue d's reply to m's sender when it was allowed, the ledger in st has
 * a slot for the sender and sender's queue room; a refused or failed
 * queueing gives the claim back. Writes the outcome ("queued", "recent",
 * "capped", "suppressed:why", ...) into d->reply_note. st or sender NULL:
 * "unavailable".
 */
void reply_dispatch(struct state *st, struct reply_sender *sender, const struct config *cfg,
                    const struct msg *m, struct decision *d);

/* Status callback for struct reply_sender (ctx: the struct state, may be
 * NULL): logs each outcome and releases a failed reply's claim. */
void reply_dispatch_status(void *ctx, const struct reply_status *status);

#endif
