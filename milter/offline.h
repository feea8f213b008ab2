/*
 * offline.h - slop-milter -t: judge message files as the daemon would and
 * print the envelope, the scan, the MTA actions and the reply it would
 * send, changing nothing (the state, when StateDir has one, is only read).
 */
#ifndef SLOP_MILTER_OFFLINE_H
#define SLOP_MILTER_OFFLINE_H

#include <stddef.h>

struct snapshot;

/* The envelope given with --from and --rcpt; from NULL: the From: field's
 * address. Borrowed for the call. */
struct offline_envelope {
    const char *from;
    const char *const *rcpts;
    size_t n_rcpts;
};

/* Judge each of the n files with snap and print the outcome on stdout.
 * Returns a sysexits code: EX_OK, EX_USAGE without files, EX_NOINPUT
 * when a file could not be read (the others are still judged). */
int offline_run(struct snapshot *snap, const struct offline_envelope *env, char **files, int n);

#endif
