/*
 * backend.h - where slopctl finds the shared state: the options before the
 * command (slopctl [-c CONFIG] [--state-backend lmdb|redis] [--redis-server
 * ADDR] ... COMMAND) or the daemon's configuration file, so that slopctl
 * reads and writes the same reply ledger, fingerprints and sender counts
 * as the daemon. Single-threaded; state kept in statics for the process.
 */
#ifndef SLOPCTL_BACKEND_H
#define SLOPCTL_BACKEND_H

#include <stdbool.h>
#include <stdint.h>

struct state;

/* Take the leading backend options off argv (argv[0] stays); 0 or a
 * sysexits code after a message on stderr. */
int backend_parse(int *argc, char ***argv);

/* With the redis backend, attach it to st; 0 or a sysexits code. */
int backend_attach(struct state *st);

/* Whether the shared tables live in Redis. */
bool backend_is_redis(void);

/* LearnMinimum of the -c configuration, else the state's default. */
uint32_t backend_learn_minimum(void);

/* Print the Redis side of db stats; 0 or a sysexits code. */
int backend_stats(struct state *st);

#endif
