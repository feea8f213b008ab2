/*
 * daemon.h - run slop-milter as the mail filter daemon: start-up in its
 * order, the signal thread (reload, stop), smfi_main(), the stop.
 */
#ifndef SLOP_MILTER_DAEMON_H
#define SLOP_MILTER_DAEMON_H

#include <stdbool.h>

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

/* Start and serve with snap until stopped; o is copied. Returns a
 * sysexits code. */
int daemon_run(struct snapshot *snap, const struct daemon_options *o);

#endif
