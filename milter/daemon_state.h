/*
 * daemon_state.h - StateDir checked at start-up (daemon and -n) against
 * OnStateError, and LMDB's damage hook.
 */
#ifndef SLOP_MILTER_DAEMON_STATE_H
#define SLOP_MILTER_DAEMON_STATE_H

#include <stdbool.h>

struct config;

/*
 * StateDir's data file checked before anything maps it. Sets
 * *ret_without when OnStateError lets the daemon run without state.
 * Returns EX_OK, or EX_CANTCREAT to refuse (after logging why).
 */
int daemon_state_file_ok(const struct config *cfg, bool *ret_without);

/* For state_on_damage(): LMDB met a damaged page and aborts on return. */
void daemon_state_damaged(const char *dir, const char *reason);

#endif
