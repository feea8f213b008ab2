/*
 * state_redis.h - the shared, per-message part of the state in Redis, so
 * that several MX hosts see one reply ledger, one set of fingerprints and
 * one count per sender.
 *
 * What lives here is what every message writes and every host must agree
 * on: the reply ledger and hourly reply count, the fingerprints and
 * simhash bands of seen patches and reports (duplicates), and the daily
 * count per sender (floods). Everything else (tree, fixes, MAINTAINERS,
 * series) stays in the local LMDB environment. A struct state_redis is
 * attached to a struct state (state_attach_redis()), after which the
 * state.h / state_db.h calls for those tables go to Redis; callers do not
 * change.
 *
 * Failure: every call gives up after the timeout (connect and command),
 * and after a failure the server counts as down: calls fail at once with
 * -ENOTCONN until a back-off (0.5 s doubling to 30 s) has passed, then one
 * caller tries again. notify() is called once when the server goes down
 * and once when it comes back, never per call; the library never logs.
 * A server that answers, but not as Redis answers the command (an error
 * reply such as WRONGTYPE or NOPERM, a reply of another type) gives
 * -EBADMSG, which LMDB never gives: state_strerror() names Redis for it.
 *
 * Threading: one struct state_redis is shared by every thread; it keeps a
 * small pool of connections under a mutex, and a command holds its
 * connection alone for one round trip.
 */
#ifndef SLOP_STATE_REDIS_H
#define SLOP_STATE_REDIS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "classifier.h"
#include "state.h"

#define STATE_REDIS_PREFIX_MAX 64
#define STATE_REDIS_FPS_MAX 128 /* fingerprints of one message sent to Redis */

struct state_redis_options {
    const char *server;   /* unix:PATH, local:PATH, inet:PORT@HOST, inet6:PORT@HOST */
    const char *user;     /* NULL or "": AUTH with the password only */
    const char *password; /* NULL or "": no AUTH */
    const char *prefix;   /* of every key; NULL: "slop:" */
    unsigned timeout_ms;  /* connect and each round trip; 0: 500 */
    /* Called on each change between up and down, with why; may be NULL. */
    void (*notify)(void *ctx, bool up, const char *detail);
    void *notify_ctx;
};

struct state_redis;

/* Copy the options; connects lazily. -EINVAL for a bad server or prefix. */
int state_redis_new(const struct state_redis_options *o, struct state_redis **ret);
struct state_redis *state_redis_free(struct state_redis *r);

/* One PING: 0, or -ENOTCONN / -ETIMEDOUT / -EIO / -EACCES (AUTH refused). */
int state_redis_ping(struct state_redis *r);
/* Calls that failed since the start (including fast failures while down). */
uint64_t state_redis_failures(struct state_redis *r);
/* "Redis 'unix:/run/redis.sock'" or "Redis 'inet:6379@host'", for messages. */
void state_redis_name(const struct state_redis *r, char *buf, size_t size);

/* ---- the shared tables (see state.h and state_db.h for the meaning) ---- */

int state_redis_reply_claim(struct state_redis *r, const char *addr, time_t now,
                            uint32_t interval_s, uint32_t hourly_cap, enum state_claim *ret);
int state_redis_reply_release(struct state_redis *r, const char *addr, time_t now);
int state_redis_seen_find(struct state_redis *r, const uint64_t *fps, size_t n, uint64_t simhash,
                          const char *self_id, time_t since, time_t before,
                          struct classifier_seen *ret);
int state_redis_sender_count(struct state_redis *r, const char *addr, time_t now, uint32_t *ret);
/* Record a message in one round trip: fingerprints and simhash (n 0 and
 * simhash 0: none) of message_id sent by from (NULL: unknown) kept for
 * window_s, and with count_sender one more for from today. */
int state_redis_record(struct state_redis *r, const uint64_t *fps, size_t n, uint64_t simhash,
                       const char *message_id, const char *from, bool count_sender, time_t now,
                       uint32_t window_s);

/* Count the keys under the prefix by kind (SCAN, for slopctl db stats). */
int state_redis_stats(struct state_redis *r, void (*fn)(void *ctx, const char *kind, uint64_t n),
                      void *ctx);

#endif
