/*
 * shared_state.h - the daemon's side of StateBackend redis: attach a
 * Redis backend to the opened state, and log its outages once each (the
 * state library itself never logs). The password file is read by
 * config_redis_password() (config.h).
 */
#ifndef SLOP_SHARED_STATE_H
#define SLOP_SHARED_STATE_H

#include <stdbool.h>
#include <stddef.h>

#include "config.h"
#include "state.h"

/* With StateBackend redis, attach a Redis backend for cfg's RedisServer to
 * st (which then owns it) and try it once, logging the outcome. Does
 * nothing for lmdb or a NULL st. 0 or -errno (bad RedisServer or prefix). */
int shared_state_attach(const struct config *cfg, const char *password, struct state *st);

/* Whether an error from a state call means the shared state is out of
 * reach (logged once per outage already), rather than a fault to log. */
bool shared_state_unreachable(struct state *st, int err);

#endif
