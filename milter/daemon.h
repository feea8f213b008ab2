/*
 * daemon.h - run slop-milter as the mail filter daemon: start-up in its
 * order, the signal thread (reload, stop), smfi_main(), the stop.
 */
#ifndef SLOP_MILTER_DAEMON_H
#define SLOP_MILTER_DAEMON_H

#include <stdbool.h>

struct config;
struct config_paths;
struct snapshot;

struct daemon_options {
    const char *config_path;          /* absolute, reread on SIGUSR1; NULL: defaults */
    const struct config_paths *paths; /* as given to snapshot_build() */
    bool foreground;                  /* -f: no detaching, log to stderr */
    const char *version;              /* for the start-up lines */
};

/* Block the signals the daemon's signal thread takes (and SIGHUP, left to
 * libmilter), ignore SIGPIPE: before any thread starts. */
void daemon_block_signals(void);

/*
 * StateDir's data file checked before anything maps it. Sets
 * *ret_without when OnStateError lets the daemon run without state.
 * Returns EX_OK, or EX_CANTCREAT to refuse (after logging why).
 */
int daemon_state_file_ok(const struct config *cfg, bool *ret_without);

/* For state_on_damage(): LMDB met a damaged page and aborts on return. */
void daemon_state_damaged(const char *dir, const char *reason);

/* Start and serve with snap until stopped; o is copied. Returns a
 * sysexits code. */
int daemon_run(struct snapshot *snap, const struct daemon_options *o);

#endif
