/*
 * shared_state.h - the daemon's side of StateBackend redis: read the
 * password file, attach a Redis backend to the opened state, and log its
 * outages once each (the state library itself never logs).
 */
#ifndef SLOP_SHARED_STATE_H
#define SLOP_SHARED_STATE_H

#include <stdbool.h>
#include <stddef.h>

#include "config.h"
#include "state.h"

#define SHARED_STATE_PASSWORD_MAX 512

/* First line of path into buf (empty path: empty password). 0 or -errno;
 * -E2BIG when the line does not fit. */
int shared_state_read_password(const char *path, char *buf, size_t size);

/* With StateBackend redis, attach a Redis backend for cfg's RedisServer to
 * st (which then owns it) and try it once, logging the outcome. Does
 * nothing for lmdb or a NULL st. 0 or -errno (bad RedisServer or prefix). */
int shared_state_attach(const struct config *cfg, const char *password, struct state *st);

/* Whether an error from a state call means the shared state is out of
 * reach (logged once per outage already), rather than a fault to log. */
bool shared_state_unreachable(struct state *st, int err);

#endif
