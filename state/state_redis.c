/*
 * state_redis.c - the shared tables of state_redis.h in Redis (hiredis).
 *
 * Key layout (P is the prefix, "slop:" by default). Per-sender keys carry
 * the address as a hash tag, so that a Redis Cluster keeps a sender's keys
 * in one slot; every command names one key, so none crosses slots:
 *
 *   P{addr}:reply       unix time of the last granted reply; SET NX PX of
 *                       the interval, so two hosts racing get one grant
 *   P{addr}:day:D       patches and reports of addr on UTC day D; INCR,
 *                       expires after 2 days
 *   Phourly:H           replies granted in hour H; INCR, expires after 2 h
 *   Pfp:HEX             "TIME MESSAGE-ID" of the first message with that
 *                       fingerprint; SET NX EX of the duplicate window
 *   Pband:B:HEX         sorted set of the simhashes whose band B is HEX:
 *                       member "SIMHASH KEY MESSAGE-ID", score its time;
 *                       ZADD NX, trimmed to the window at each write
 *
 * A message costs one round trip per look-up (all fingerprints and bands
 * of a duplicate look-up are pipelined) and one for its record; a granted
 * reply two.
 *
 * Invariants: a connection is either in the idle pool or held by exactly
 * one call; a connection that saw an I/O error or a timeout is freed, not
 * pooled, since a late reply could otherwise answer the next command.
 */
#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include <hiredis/hiredis.h>

#include "state_redis.h"

#define RD_POOL_MAX 16
#define RD_ARGS 10
#define RD_CMDS (STATE_REDIS_FPS_MAX + 16)
#define RD_ARENA ((size_t)RD_CMDS * 400)
#define RD_ADDR_MAX 254
#define RD_BACKOFF_MIN_MS 500
#define RD_BACKOFF_MAX_MS 30000
#define RD_BANDS 4
#define RD_NEAR_BITS 3
#define RD_BAND_SCAN_MAX 2000
#define RD_SCAN_ROUNDS 100000 /* SCAN calls of one db stats */
#define RD_DETAIL_MAX 160

struct state_redis {
    char *path; /* UNIX socket, or NULL for TCP */
    char *host;
    int port;
    char *user, *password;
    char prefix[STATE_REDIS_PREFIX_MAX + 1];
    struct timeval tv;
    void (*notify)(void *ctx, bool up, const char *detail);
    void *notify_ctx;

    pthread_mutex_t lock;
    redisContext *idle[RD_POOL_MAX];
    size_t n_idle;
    bool down;
    bool probing;          /* one caller is trying the server after a back-off */
    struct timespec retry; /* CLOCK_MONOTONIC: when down, no try before this */
    unsigned backoff_ms;
    atomic_uint_fast64_t failures;
};

/* A pipeline of commands whose arguments live in one arena. */
struct rd_batch {
    size_t n;
    int argc[RD_CMDS];
    const char *argv[RD_CMDS][RD_ARGS];
    size_t len[RD_CMDS][RD_ARGS];
    char arena[RD_ARENA];
    size_t used;
    bool overflow;
};

/* ---- options and lifecycle ---- */

static int
parse_server(struct state_redis *r, const char *s)
{
    const char *rest, *at;
    char *end;
    long port;

    if (s == NULL || *s == '\0')
        return -EINVAL;
    if (strncmp(s, "unix:", 5) == 0 || strncmp(s, "local:", 6) == 0 || s[0] == '/') {
        rest = s[0] == '/' ? s : strchr(s, ':') + 1;
        if (rest[0] != '/' || strlen(rest) >= 108)
            return -EINVAL;
        r->path = strdup(rest);
        return r->path ? 0 : -ENOMEM;
    }
    if (strncmp(s, "inet:", 5) == 0)
        rest = s + 5;
    else if (strncmp(s, "inet6:", 6) == 0)
        rest = s + 6;
    else
        return -EINVAL;
    errno = 0;
    port = strtol(rest, &end, 10);
    if (end == rest || errno != 0 || port < 1 || port > 65535 || (*end != '\0' && *end != '@'))
        return -EINVAL;
    r->port = (int)port;
    at = strchr(rest, '@');
    r->host = strdup(at != NULL && at[1] != '\0' ? at + 1 : "127.0.0.1");
    return r->host ? 0 : -ENOMEM;
}

int
state_redis_new(const struct state_redis_options *o, struct state_redis **ret)
{
    struct state_redis *r;
    const char *prefix;
    unsigned ms;
    int e;

    if (o == NULL || ret == NULL)
        return -EINVAL;
    prefix = o->prefix != NULL ? o->prefix : "slop:";
    if (strlen(prefix) > STATE_REDIS_PREFIX_MAX || strpbrk(prefix, "{} \t\r\n") != NULL)
        return -EINVAL;
    r = calloc(1, sizeof(*r));
    if (r == NULL)
        return -ENOMEM;
    e = parse_server(r, o->server);
    if (e < 0)
        goto out;
    e = -ENOMEM;
    if (o->user != NULL && *o->user != '\0' && (r->user = strdup(o->user)) == NULL)
        goto out;
    if (o->password != NULL && *o->password != '\0' && (r->password = strdup(o->password)) == NULL)
        goto out;
    snprintf(r->prefix, sizeof(r->prefix), "%s", prefix);
    ms = o->timeout_ms ? o->timeout_ms : 500;
    r->tv.tv_sec = (time_t)(ms / 1000);
    r->tv.tv_usec = (suseconds_t)(ms % 1000) * 1000;
    r->notify = o->notify;
    r->notify_ctx = o->notify_ctx;
    e = -pthread_mutex_init(&r->lock, NULL);
    if (e < 0)
        goto out;
    *ret = r;
    return 0;
out:
    free(r->path);
    free(r->host);
    free(r->user);
    free(r->password);
    free(r);
    return e;
}

struct state_redis *
state_redis_free(struct state_redis *r)
{
    if (r == NULL)
        return NULL;
    for (size_t i = 0; i < r->n_idle; i++)
        redisFree(r->idle[i]);
    pthread_mutex_destroy(&r->lock);
    free(r->path);
    free(r->host);
    free(r->user);
    if (r->password != NULL)
        explicit_bzero(r->password, strlen(r->password));
    free(r->password);
    free(r);
    return NULL;
}

uint64_t
state_redis_failures(struct state_redis *r)
{
    return r != NULL ? (uint64_t)atomic_load(&r->failures) : 0;
}

void
state_redis_name(const struct state_redis *r, char *buf, size_t size)
{
    if (r == NULL)
        snprintf(buf, size, "Redis");
    else if (r->path != NULL)
        snprintf(buf, size, "Redis 'unix:%s'", r->path);
    else
        snprintf(buf, size, "Redis 'inet:%d@%s'", r->port, r->host);
}

/* ---- the connection pool and the up/down bookkeeping ---- */

static bool
before(const struct timespec *a, const struct timespec *b)
{
    return a->tv_sec < b->tv_sec || (a->tv_sec == b->tv_sec && a->tv_nsec < b->tv_nsec);
}

/* The server answered: back to up, and say so once. */
static void
mark_up(struct state_redis *r, redisContext *c, bool probe)
{
    bool was_down;

    pthread_mutex_lock(&r->lock);
    if (probe)
        r->probing = false;
    was_down = r->down;
    r->down = false;
    r->backoff_ms = 0;
    if (c != NULL && r->n_idle < RD_POOL_MAX) {
        r->idle[r->n_idle++] = c;
        c = NULL;
    }
    pthread_mutex_unlock(&r->lock);
    redisFree(c);
    if (was_down && r->notify != NULL)
        r->notify(r->notify_ctx, true, "reachable again");
}

/* A connection failed: drop it and the pool, start or lengthen the back-off. */
static void
mark_down(struct state_redis *r, redisContext *c, bool probe, const char *detail)
{
    redisContext *drop[RD_POOL_MAX];
    size_t n_drop;
    size_t bytes;
    struct timespec now;
    bool was_up;

    redisFree(c);
    clock_gettime(CLOCK_MONOTONIC, &now);
    pthread_mutex_lock(&r->lock);
    if (probe)
        r->probing = false;
    was_up = !r->down;
    r->down = true;
    r->backoff_ms = r->backoff_ms == 0 ? RD_BACKOFF_MIN_MS : r->backoff_ms * 2;
    if (r->backoff_ms > RD_BACKOFF_MAX_MS)
        r->backoff_ms = RD_BACKOFF_MAX_MS;
    r->retry.tv_sec = now.tv_sec + r->backoff_ms / 1000;
    r->retry.tv_nsec = now.tv_nsec + (long)(r->backoff_ms % 1000) * 1000000L;
    if (r->retry.tv_nsec >= 1000000000L) {
        r->retry.tv_sec++;
        r->retry.tv_nsec -= 1000000000L;
    }
    /* The pooled connections talk to the same dead or stuck server. */
    n_drop = r->n_idle;
    bytes = n_drop * sizeof(redisContext *);
    memcpy(drop, r->idle, bytes);
    r->n_idle = 0;
    pthread_mutex_unlock(&r->lock);
    for (size_t i = 0; i < n_drop; i++)
        redisFree(drop[i]);
    atomic_fetch_add(&r->failures, 1);
    if (was_up && r->notify != NULL)
        r->notify(r->notify_ctx, false, detail);
}

static int
io_errno(const redisContext *c, int saved)
{
    if (c != NULL && c->err == REDIS_ERR_IO && (saved == EAGAIN || saved == EWOULDBLOCK))
        return -ETIMEDOUT;
    return -EIO;
}

static void
describe(const redisContext *c, int e, char *buf, size_t size)
{
    if (e == -ETIMEDOUT)
        snprintf(buf, size, "no answer within the timeout");
    else
        snprintf(buf, size, "%s", c != NULL && c->errstr[0] ? c->errstr : "cannot connect");
}

static int
rd_auth(struct state_redis *r, redisContext *c)
{
    redisReply *rep;
    int e = 0;

    if (r->password == NULL)
        return 0;
    if (r->user != NULL)
        rep = redisCommand(c, "AUTH %s %s", r->user, r->password);
    else
        rep = redisCommand(c, "AUTH %s", r->password);
    if (rep == NULL)
        return io_errno(c, errno);
    if (rep->type == REDIS_REPLY_ERROR)
        e = -EACCES;
    freeReplyObject(rep);
    return e;
}

/* A connection for one round trip; *probe says it tests a down server. */
static int
conn_get(struct state_redis *r, redisContext **ret, bool *probe, bool *pooled)
{
    redisContext *c = NULL;
    char detail[RD_DETAIL_MAX];
    struct timespec now;
    int e;

    *probe = false;
    *pooled = false;
    clock_gettime(CLOCK_MONOTONIC, &now);
    pthread_mutex_lock(&r->lock);
    if (r->down) {
        /* Fail at once: only one caller per back-off may wait for it. */
        if (r->probing || before(&now, &r->retry)) {
            pthread_mutex_unlock(&r->lock);
            atomic_fetch_add(&r->failures, 1);
            return -ENOTCONN;
        }
        r->probing = true;
        *probe = true;
    }
    if (r->n_idle > 0)
        c = r->idle[--r->n_idle];
    pthread_mutex_unlock(&r->lock);
    if (c != NULL) {
        *ret = c;
        *pooled = true;
        return 0;
    }

    if (r->path != NULL)
        c = redisConnectUnixWithTimeout(r->path, r->tv);
    else
        c = redisConnectWithTimeout(r->host, r->port, r->tv);
    if (c == NULL || c->err) {
        e = c == NULL ? -ENOMEM : io_errno(c, errno);
        snprintf(detail, sizeof(detail), "cannot connect: %s",
                 c != NULL && c->errstr[0] ? c->errstr : "out of memory");
        mark_down(r, c, *probe, detail);
        return e == -ENOMEM ? -ENOMEM : -ENOTCONN;
    }
    if (redisSetTimeout(c, r->tv) != REDIS_OK) {
        mark_down(r, c, *probe, "cannot set the timeout");
        return -EIO;
    }
    e = rd_auth(r, c);
    if (e < 0) {
        if (e == -EACCES)
            snprintf(detail, sizeof(detail), "AUTH refused");
        else
            describe(c, e, detail, sizeof(detail));
        mark_down(r, c, *probe, detail);
        return e;
    }
    *ret = c;
    return 0;
}

/* ---- pipelines ---- */

static struct rd_batch *
batch_new(void)
{
    return calloc(1, sizeof(struct rd_batch));
}

/* Empties a batch for the next round trip; its buffers stay allocated. */
static void
batch_reset(struct rd_batch *b)
{
    b->n = 0;
    b->used = 0;
}

static void
batch_cmd(struct rd_batch *b)
{
    if (b->n >= RD_CMDS) {
        b->overflow = true;
        return;
    }
    b->argc[b->n++] = 0;
}

static void
batch_arg(struct rd_batch *b, const char *s, size_t n)
{
    size_t i = b->n - 1;

    if (b->overflow || b->n == 0 || b->argc[i] >= RD_ARGS || b->used + n > RD_ARENA) {
        b->overflow = true;
        return;
    }
    memcpy(b->arena + b->used, s, n);
    b->argv[i][b->argc[i]] = b->arena + b->used;
    b->len[i][b->argc[i]] = n;
    b->argc[i]++;
    b->used += n;
}

__attribute__((format(printf, 2, 3))) static void
batch_argf(struct rd_batch *b, const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof(buf)) {
        b->overflow = true;
        return;
    }
    batch_arg(b, buf, (size_t)n);
}

static void
batch_word(struct rd_batch *b, const char *s)
{
    batch_arg(b, s, strlen(s));
}

static void
replies_free(redisReply **rep, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        freeReplyObject(rep[i]);
        rep[i] = NULL;
    }
}

/* Send b's commands and read one reply each into rep (the caller frees
 * them with replies_free()). 0, or -ENOTCONN / -ETIMEDOUT / -EIO. */
static int
batch_run(struct state_redis *r, struct rd_batch *b, redisReply **rep)
{
    char detail[RD_DETAIL_MAX];
    redisContext *c = NULL;
    bool probe, pooled;
    size_t got = 0;
    int e;

    if (b->overflow)
        return -E2BIG;
again:
    e = conn_get(r, &c, &probe, &pooled);
    if (e < 0)
        return e;
    for (size_t i = 0; i < b->n; i++)
        if (redisAppendCommandArgv(c, b->argc[i], b->argv[i], b->len[i]) != REDIS_OK)
            goto fail;
    for (; got < b->n; got++) {
        void *p = NULL;

        if (redisGetReply(c, &p) != REDIS_OK || p == NULL)
            goto fail;
        rep[got] = p;
    }
    mark_up(r, c, probe);
    return 0;
fail:
    e = io_errno(c, errno);
    replies_free(rep, got);
    /* A pooled connection the server closed (a restart, its idle
     * timeout) says nothing about the server now: one fresh try. Not
     * after a timeout, which would double the wait. */
    if (pooled && got == 0 && e == -EIO) {
        redisFree(c);
        goto again;
    }
    describe(c, e, detail, sizeof(detail));
    mark_down(r, c, probe, detail);
    return e;
}

int
state_redis_ping(struct state_redis *r)
{
    struct rd_batch *b;
    redisReply *rep[1] = {NULL};
    int e;

    if (r == NULL)
        return -EINVAL;
    b = batch_new();
    if (b == NULL)
        return -ENOMEM;
    batch_cmd(b);
    batch_word(b, "PING");
    e = batch_run(r, b, rep);
    if (e == 0 && rep[0]->type == REDIS_REPLY_ERROR)
        e = -EACCES;
    replies_free(rep, 1);
    free(b);
    return e;
}

/* ---- keys ---- */

/* Lower-case addr into buf; -EINVAL when empty, too long or not plain. */
static int
addr_lower(const char *addr, char buf[RD_ADDR_MAX + 1])
{
    size_t n;

    if (addr == NULL)
        return -EINVAL;
    n = strnlen(addr, RD_ADDR_MAX + 1);
    if (n == 0 || n > RD_ADDR_MAX)
        return -EINVAL;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)addr[i];

        if (c <= 0x20 || c == 0x7f)
            return -EINVAL;
        buf[i] = (char)tolower(c);
    }
    buf[n] = '\0';
    return 0;
}

/* The lower-cased addr into a and a new batch for its keys. */
static int
sender_batch(const char *addr, char a[RD_ADDR_MAX + 1], struct rd_batch **ret)
{
    int e = addr_lower(addr, a);

    if (e < 0)
        return e;
    *ret = batch_new();
    return *ret != NULL ? 0 : -ENOMEM;
}

static size_t
id_len(const char *id)
{
    return id != NULL ? strnlen(id, CLASSIFIER_MSGID_MAX - 1) : 0;
}

static bool
is_int(const redisReply *rep)
{
    return rep != NULL && rep->type == REDIS_REPLY_INTEGER;
}

/* ---- the reply ledger ---- */

/* Give back the claim made at now: only when it is still ours. */
static const char release_lua[] =
    "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end "
    "return 0";

int
state_redis_reply_claim(struct state_redis *r, const char *addr, time_t now, uint32_t interval_s,
                        uint32_t hourly_cap, enum state_claim *ret)
{
    char a[RD_ADDR_MAX + 1];
    redisReply *rep[3] = {NULL};
    struct rd_batch *b;
    uint64_t hour = now < 0 ? 0 : (uint64_t)now / 3600;
    int e;

    if (r == NULL || ret == NULL)
        return -EINVAL;
    e = sender_batch(addr, a, &b);
    if (e < 0)
        return e;
    /* The race between hosts is decided here: one SET NX wins. */
    batch_cmd(b);
    batch_word(b, "SET");
    batch_argf(b, "%s{%s}:reply", r->prefix, a);
    batch_argf(b, "%lld", (long long)now);
    if (interval_s > 0) {
        batch_word(b, "NX");
        batch_word(b, "PX");
        batch_argf(b, "%llu", (unsigned long long)interval_s * 1000ULL);
    } else {
        batch_word(b, "PX");
        batch_word(b, "1000");
    }
    e = batch_run(r, b, rep);
    if (e < 0)
        goto out;
    if (rep[0]->type == REDIS_REPLY_NIL) {
        *ret = STATE_CLAIM_RECENT;
        goto out;
    }
    if (rep[0]->type != REDIS_REPLY_STATUS) {
        e = -EBADMSG;
        goto out;
    }
    replies_free(rep, 1);

    /* Ours: count it in the hour, and give it back when over the cap. */
    batch_reset(b);
    batch_cmd(b);
    batch_word(b, "INCR");
    batch_argf(b, "%shourly:%llu", r->prefix, (unsigned long long)hour);
    batch_cmd(b);
    batch_word(b, "EXPIRE");
    batch_argf(b, "%shourly:%llu", r->prefix, (unsigned long long)hour);
    batch_word(b, "7200");
    e = batch_run(r, b, rep);
    if (e < 0) {
        /* The claim stands and no reply goes out: a lost reply, never two. */
        goto out;
    }
    if (!is_int(rep[0])) {
        e = -EBADMSG;
        goto out;
    }
    if (hourly_cap == 0 || rep[0]->integer <= (long long)hourly_cap) {
        *ret = STATE_CLAIM_GRANTED;
        goto out;
    }
    replies_free(rep, 2);
    batch_reset(b);
    batch_cmd(b);
    batch_word(b, "DECR");
    batch_argf(b, "%shourly:%llu", r->prefix, (unsigned long long)hour);
    batch_cmd(b);
    batch_word(b, "EVAL");
    batch_word(b, release_lua);
    batch_word(b, "1");
    batch_argf(b, "%s{%s}:reply", r->prefix, a);
    batch_argf(b, "%lld", (long long)now);
    e = batch_run(r, b, rep);
    if (e == 0)
        *ret = STATE_CLAIM_CAPPED;
out:
    replies_free(rep, 3);
    free(b);
    return e;
}

int
state_redis_reply_release(struct state_redis *r, const char *addr, time_t now)
{
    char a[RD_ADDR_MAX + 1];
    redisReply *rep[1] = {NULL};
    uint64_t hour = now < 0 ? 0 : (uint64_t)now / 3600;
    struct rd_batch *b;
    int e;

    if (r == NULL)
        return -EINVAL;
    e = sender_batch(addr, a, &b);
    if (e < 0)
        return e;
    batch_cmd(b);
    batch_word(b, "EVAL");
    batch_word(b, release_lua);
    batch_word(b, "1");
    batch_argf(b, "%s{%s}:reply", r->prefix, a);
    batch_argf(b, "%lld", (long long)now);
    e = batch_run(r, b, rep);
    if (e == 0 && (!is_int(rep[0]) || rep[0]->integer != 1))
        e = is_int(rep[0]) ? -ENOENT : -EBADMSG;
    replies_free(rep, 1);
    if (e == 0) {
        batch_reset(b);
        batch_cmd(b);
        batch_word(b, "DECR");
        batch_argf(b, "%shourly:%llu", r->prefix, (unsigned long long)hour);
        e = batch_run(r, b, rep);
        replies_free(rep, 1);
    }
    free(b);
    return e;
}

/* ---- seen mail and senders ---- */

static void
add_sender(struct state_redis *r, struct rd_batch *b, const char *a, time_t now)
{
    unsigned day = now < 0 ? 0 : (unsigned)(now / 86400);

    batch_cmd(b);
    batch_word(b, "INCR");
    batch_argf(b, "%s{%s}:day:%u", r->prefix, a, day);
    batch_cmd(b);
    batch_word(b, "EXPIRE");
    batch_argf(b, "%s{%s}:day:%u", r->prefix, a, day);
    batch_word(b, "172800");
}

/* A seen entry names its message "ID" or "ID\tFROM" (FROM: the sender,
 * lower case; entries written before it have none). */
static void
add_seen(struct state_redis *r, struct rd_batch *b, const uint64_t *fps, size_t n, uint64_t simhash,
         const char *id, const char *from, time_t now, uint32_t window_s)
{
    size_t idn = id_len(id);
    uint32_t window = window_s > 0 ? window_s : 1;
    const char *tab = from != NULL ? "\t" : "";

    for (size_t i = 0; i < n && i < STATE_REDIS_FPS_MAX; i++) {
        batch_cmd(b);
        batch_word(b, "SET");
        batch_argf(b, "%sfp:%016llx", r->prefix, (unsigned long long)fps[i]);
        batch_argf(b, "%lld %.*s%s%s", (long long)now, (int)idn, id ? id : "", tab,
                   from ? from : "");
        batch_word(b, "NX");
        batch_word(b, "EX");
        batch_argf(b, "%u", window);
    }
    if (simhash == 0)
        return;
    for (unsigned band = 0; band < RD_BANDS; band++) {
        unsigned v = (unsigned)(uint16_t)(simhash >> (16 * band));

        batch_cmd(b);
        batch_word(b, "ZADD");
        batch_argf(b, "%sband:%u:%04x", r->prefix, band, v);
        batch_word(b, "NX");
        batch_argf(b, "%lld", (long long)now);
        batch_argf(b, "%016llx %016llx %.*s%s%s", (unsigned long long)simhash,
                   (unsigned long long)(n > 0 ? fps[0] : 0), (int)idn, id ? id : "", tab,
                   from ? from : "");
        batch_cmd(b);
        batch_word(b, "ZREMRANGEBYSCORE");
        batch_argf(b, "%sband:%u:%04x", r->prefix, band, v);
        batch_word(b, "-inf");
        batch_argf(b, "(%lld", (long long)now - window);
        batch_cmd(b);
        batch_word(b, "EXPIRE");
        batch_argf(b, "%sband:%u:%04x", r->prefix, band, v);
        batch_argf(b, "%u", window);
    }
}

int
state_redis_record(struct state_redis *r, const uint64_t *fps, size_t n, uint64_t simhash,
                   const char *message_id, const char *from, bool count_sender, time_t now,
                   uint32_t window_s)
{
    redisReply *rep[RD_CMDS] = {NULL};
    char a[RD_ADDR_MAX + 1];
    struct rd_batch *b;
    bool known;
    int e = 0;

    if (r == NULL || (fps == NULL && n > 0))
        return -EINVAL;
    known = from != NULL && addr_lower(from, a) == 0;
    count_sender = count_sender && known;
    if (n == 0 && simhash == 0 && !count_sender)
        return 0;
    b = batch_new();
    if (b == NULL)
        return -ENOMEM;
    add_seen(r, b, fps, n, simhash, message_id, known ? a : NULL, now, window_s);
    if (count_sender)
        add_sender(r, b, a, now);
    e = batch_run(r, b, rep);
    for (size_t i = 0; e == 0 && i < b->n; i++)
        if (rep[i]->type == REDIS_REPLY_ERROR)
            e = -EBADMSG;
    replies_free(rep, b->n);
    free(b);
    return e;
}

int
state_redis_sender_count(struct state_redis *r, const char *addr, time_t now, uint32_t *ret)
{
    char a[RD_ADDR_MAX + 1];
    redisReply *rep[1] = {NULL};
    struct rd_batch *b;
    int e;

    if (r == NULL || ret == NULL)
        return -EINVAL;
    e = sender_batch(addr, a, &b);
    if (e < 0)
        return e;
    batch_cmd(b);
    batch_word(b, "GET");
    batch_argf(b, "%s{%s}:day:%u", r->prefix, a, now < 0 ? 0 : (unsigned)(now / 86400));
    e = batch_run(r, b, rep);
    if (e == 0) {
        if (rep[0]->type == REDIS_REPLY_STRING) {
            unsigned long long v = strtoull(rep[0]->str, NULL, 10);

            *ret = v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
        } else if (rep[0]->type == REDIS_REPLY_NIL) {
            *ret = 0;
        } else {
            e = -EBADMSG;
        }
    }
    replies_free(rep, 1);
    free(b);
    return e;
}

struct find {
    const char *self;
    int64_t since;
    int64_t before; /* INT64_MAX: no bound; lowered by self's own entry */
    struct classifier_seen *ret;
    bool found;
};

/* As state_seen.c's: the earliest entry; self's own lowers the bound. */
static void
take(struct find *f, int64_t when, const char *p, size_t n)
{
    const char *tab = memchr(p, '\t', n);
    size_t idn = tab != NULL ? (size_t)(tab - p) : n;
    size_t fn = tab != NULL ? n - idn - 1 : 0;

    if (f->self != NULL && strlen(f->self) == idn && memcmp(f->self, p, idn) == 0) {
        if (when < f->before)
            f->before = when;
        return;
    }
    if (when < f->since || (f->found && f->ret->date <= when))
        return;
    if (idn >= sizeof(f->ret->message_id))
        idn = sizeof(f->ret->message_id) - 1;
    if (fn >= sizeof(f->ret->from))
        fn = 0;
    memcpy(f->ret->message_id, p, idn);
    f->ret->message_id[idn] = '\0';
    memcpy(f->ret->from, tab != NULL ? tab + 1 : "", fn);
    f->ret->from[fn] = '\0';
    f->ret->date = when;
    f->found = true;
}

/* "TIME ID" of a fingerprint key. */
static void
take_fp(struct find *f, const redisReply *rep)
{
    const char *sp;
    char *end;
    long long when;

    if (rep->type != REDIS_REPLY_STRING)
        return;
    when = strtoll(rep->str, &end, 10);
    sp = memchr(rep->str, ' ', rep->len);
    if (end == rep->str || sp == NULL)
        return;
    take(f, when, sp + 1, rep->len - (size_t)(sp + 1 - rep->str));
}

/* member "SIMHASH KEY ID", score: of one band's ZRANGEBYSCORE WITHSCORES. */
static void
take_band(struct find *f, const redisReply *rep, uint64_t simhash, uint64_t my_key)
{
    if (rep->type != REDIS_REPLY_ARRAY)
        return;
    for (size_t i = 0; i + 1 < rep->elements; i += 2) {
        const redisReply *m = rep->element[i], *s = rep->element[i + 1];
        unsigned long long other, other_key;

        if (m->type != REDIS_REPLY_STRING || s->type != REDIS_REPLY_STRING || m->len < 34 ||
            m->str[16] != ' ' || m->str[33] != ' ')
            continue;
        other = strtoull(m->str, NULL, 16);
        other_key = strtoull(m->str + 17, NULL, 16);
        /* Similar prose about different code is a template, not a duplicate. */
        if (other_key != 0 && my_key != 0 && other_key != my_key)
            continue;
        if (__builtin_popcountll(other ^ simhash) > RD_NEAR_BITS)
            continue;
        take(f, strtoll(s->str, NULL, 10), m->str + 34, m->len - 34);
    }
}

int
state_redis_seen_find(struct state_redis *r, const uint64_t *fps, size_t n, uint64_t simhash,
                      const char *self_id, time_t since, time_t before, struct classifier_seen *ret)
{
    redisReply *rep[RD_CMDS] = {NULL};
    struct find f = {.self = self_id,
                     .since = (int64_t)since,
                     .before = before != 0 ? (int64_t)before : INT64_MAX,
                     .ret = ret};
    struct rd_batch *b;
    size_t nfp = n < STATE_REDIS_FPS_MAX ? n : STATE_REDIS_FPS_MAX;
    int e;

    if (r == NULL || ret == NULL || (fps == NULL && n > 0))
        return -EINVAL;
    if (n == 0 && simhash == 0)
        return -ENOENT;
    b = batch_new();
    if (b == NULL)
        return -ENOMEM;
    for (size_t i = 0; i < nfp; i++) {
        batch_cmd(b);
        batch_word(b, "GET");
        batch_argf(b, "%sfp:%016llx", r->prefix, (unsigned long long)fps[i]);
    }
    for (unsigned band = 0; simhash != 0 && band < RD_BANDS; band++) {
        batch_cmd(b);
        batch_word(b, "ZRANGEBYSCORE");
        batch_argf(b, "%sband:%u:%04x", r->prefix, band,
                   (unsigned)(uint16_t)(simhash >> (16 * band)));
        batch_argf(b, "%lld", (long long)since);
        batch_word(b, "+inf");
        batch_word(b, "WITHSCORES");
        batch_word(b, "LIMIT");
        batch_word(b, "0");
        batch_argf(b, "%d", RD_BAND_SCAN_MAX);
    }
    e = batch_run(r, b, rep);
    if (e == 0) {
        for (size_t i = 0; i < nfp; i++)
            take_fp(&f, rep[i]);
        for (size_t i = nfp; i < b->n; i++)
            take_band(&f, rep[i], simhash, n > 0 ? fps[0] : 0);
        e = f.found && ret->date < f.before ? 0 : -ENOENT;
    }
    replies_free(rep, b->n);
    free(b);
    return e;
}

/* ---- stats ---- */

static const char *
key_kind(const struct state_redis *r, const char *key, size_t len)
{
    size_t pl = strlen(r->prefix);
    const char *rest = key + pl, *close;

    if (len < pl)
        return "other";
    if (strncmp(rest, "fp:", 3) == 0)
        return "seen_fp";
    if (strncmp(rest, "band:", 5) == 0)
        return "seen_band";
    if (strncmp(rest, "hourly:", 7) == 0)
        return "reply_hourly";
    close = rest[0] == '{' ? memchr(rest, '}', len - pl) : NULL;
    if (close != NULL && strncmp(close, "}:reply", 7) == 0)
        return "reply_ledger";
    if (close != NULL && strncmp(close, "}:day:", 6) == 0)
        return "sender_day";
    return "other";
}

int
state_redis_stats(struct state_redis *r, void (*fn)(void *ctx, const char *kind, uint64_t n),
                  void *ctx)
{
    static const char *const kinds[] = {"reply_ledger", "reply_hourly", "seen_fp",
                                        "seen_band",    "sender_day",   "other"};
    uint64_t counts[6] = {0};
    char cursor[32] = "0";
    struct rd_batch *b;
    int e = 0;

    if (r == NULL || fn == NULL)
        return -EINVAL;
    b = batch_new();
    if (b == NULL)
        return -ENOMEM;
    for (unsigned round = 0; round < RD_SCAN_ROUNDS; round++) {
        redisReply *rep[1] = {NULL};
        const redisReply *keys;

        batch_reset(b);
        batch_cmd(b);
        batch_word(b, "SCAN");
        batch_word(b, cursor);
        batch_word(b, "MATCH");
        batch_argf(b, "%s*", r->prefix);
        batch_word(b, "COUNT");
        batch_word(b, "1000");
        e = batch_run(r, b, rep);
        if (e < 0)
            break;
        if (rep[0]->type != REDIS_REPLY_ARRAY || rep[0]->elements != 2 ||
            rep[0]->element[0]->type != REDIS_REPLY_STRING ||
            rep[0]->element[1]->type != REDIS_REPLY_ARRAY) {
            replies_free(rep, 1);
            e = -EBADMSG;
            break;
        }
        snprintf(cursor, sizeof(cursor), "%s", rep[0]->element[0]->str);
        keys = rep[0]->element[1];
        for (size_t i = 0; i < keys->elements; i++) {
            const char *k = key_kind(r, keys->element[i]->str, keys->element[i]->len);

            for (size_t j = 0; j < 6; j++)
                if (strcmp(k, kinds[j]) == 0)
                    counts[j]++;
        }
        replies_free(rep, 1);
        if (strcmp(cursor, "0") == 0)
            break;
    }
    free(b);
    if (e < 0)
        return e;
    for (size_t j = 0; j < 6; j++)
        fn(ctx, kinds[j], counts[j]);
    return 0;
}
