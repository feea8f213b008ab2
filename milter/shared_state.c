/*
 * shared_state.c - StateBackend redis for the daemon (see shared_state.h).
 *
 * The backend reports each change between reachable and unreachable
 * through notify(), which logs it: one line when an outage starts, one
 * when it ends, whatever the number of messages in between.
 *
 * Threading: notify() may run on any scan or callback thread; it only
 * logs. The attach runs at start-up, before libmilter's threads.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "log.h"
#include "shared_state.h"
#include "state_redis.h"

static char shared_server[256]; /* for the log lines, written once at start-up */

static void
notify(void *ctx, bool up, const char *detail)
{
    const char *server = ctx;

    if (up)
        log_info("Redis '%s' %s: duplicates, floods and replies are shared again", server, detail);
    else
        log_error("Redis '%s' unreachable (%s): scanning without the shared state and sending "
                  "no replies until it answers (OnRedisError applies); retrying with back-off",
                  server, detail);
}

int
shared_state_attach(const struct config *cfg, const char *password, struct state *st)
{
    struct state_redis_options o = {0};
    struct state_redis *r = NULL;
    char eb[128];
    int e;

    if (st == NULL || cfg->state_backend != CONFIG_BACKEND_REDIS)
        return 0;
    config_redis_options(cfg, &o);
    o.password = password;
    o.notify = notify;
    /* A reload may free cfg; the state lives until exit. */
    snprintf(shared_server, sizeof(shared_server), "%s", cfg->redis_server);
    o.notify_ctx = shared_server;
    e = state_redis_new(&o, &r);
    if (e < 0)
        return e;
    e = state_attach_redis(st, r);
    if (e < 0) {
        state_redis_free(r);
        return e;
    }
    e = state_redis_ping(r);
    if (e == 0)
        log_info("StateBackend redis: '%s', prefix '%s'", cfg->redis_server, cfg->redis_prefix);
    else
        log_debug("StateBackend redis: first PING: %s", log_strerror(e, eb, sizeof(eb)));
    return 0;
}

bool
shared_state_unreachable(struct state *st, int err)
{
    return state_redis_of(st) != NULL &&
           (err == -ENOTCONN || err == -ETIMEDOUT || err == -EIO || err == -EACCES);
}
