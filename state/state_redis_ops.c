/*
 * state_redis_ops.c - the backend whose shared tables live in Redis
 * (state_redis.h): the ops of state_internal.h on st->redis, picked by
 * state_attach_redis(). Everything else of st stays in LMDB.
 * Threading: the table is const; state_redis.c guards its connections.
 */
#include <errno.h>

#include "state_internal.h"
#include "state_redis.h"

static int
redis_reply_claim(struct state *st, const char *addr, time_t now, uint32_t interval_s,
                  uint32_t hourly_cap, enum state_claim *ret)
{
    return state_redis_reply_claim(st->redis, addr, now, interval_s, hourly_cap, ret);
}

static int
redis_reply_release(struct state *st, const char *addr, time_t now)
{
    return state_redis_reply_release(st->redis, addr, now);
}

/* One round trip for the fingerprints and the sender's count. */
static int
redis_record(struct state *st, const struct state_mail *m)
{
    return state_redis_record(st->redis, m->fps, m->n, m->simhash, m->message_id, m->from,
                              m->count_sender, m->now, m->window_s);
}

static int
redis_seen_find(struct state *st, const uint64_t *fps, size_t n, uint64_t simhash,
                const char *self_id, time_t since, time_t before, struct classifier_seen *ret)
{
    return state_redis_seen_find(st->redis, fps, n, simhash, self_id, since, before, ret);
}

static int
redis_sender_count(struct state *st, const char *addr, time_t now, uint32_t *ret)
{
    return state_redis_sender_count(st->redis, addr, now, ret);
}

/* The errors state_redis.h gives for the server; the rest (-ENOMEM,
 * -EINVAL) are this host's own and read as errno says. */
static bool
redis_server_error(const struct state *st, int err, char *buf, size_t size)
{
    switch (err) {
    case -EBADMSG:
    case -ENOTCONN:
    case -ETIMEDOUT:
    case -EACCES:
    case -EIO:
    case -E2BIG:
        state_redis_name(st->redis, buf, size);
        return true;
    default:
        return false;
    }
}

const struct state_ops state_redis_ops = {
    .reply_claim = redis_reply_claim,
    .reply_release = redis_reply_release,
    .record = redis_record,
    .seen_find = redis_seen_find,
    .sender_count = redis_sender_count,
    .server_error = redis_server_error,
};
