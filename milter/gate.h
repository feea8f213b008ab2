/*
 * gate.h - the connection gate: at most MaxConnections milter
 * connections at once; the rest are answered tempfail.
 *
 * Debian's libmilter (8.17, built with _FFR_WORKERS_POOL) starts a worker
 * thread for each connection with data to read and never checks how many
 * run. When pthread_create() fails (the unit's TasksMax), the session
 * stays on its list with no thread, its socket is never read nor closed
 * (libmilter/worker.c, LAUNCH_WORKER and mi_start_session()), and the
 * listener keeps accepting. The gate keeps the number of connections, and
 * so of threads, below the task limit, so that this never happens.
 *
 * How: libmilter's listener calls accept(); this module defines accept()
 * (the executable's definition wins over libc's for libmilter too) and
 * counts the sockets it returned that are still open (the daemon makes
 * no other accept() call). Over the cap, the
 * socket goes to the gate's own thread, which answers the MTA's option
 * negotiation and then tempfails its first command (gate_tempfail.c): no
 * libmilter thread is spent on it and the MTA retries later.
 *
 * Threading: gate_start() before smfi_main(), from one thread; accept()
 * from libmilter's listener; gate_note() from any thread.
 */
#ifndef SLOP_MILTER_GATE_H
#define SLOP_MILTER_GATE_H

/*
 * Start counting and the tempfail thread, and log the cap chosen.
 * max_connections: MaxConnections (0: gate_auto_cap() of the task
 * limit); read_timeout: ReadTimeout, also the most an over-cap
 * connection is kept. Returns 0 or a negative errno (then no gate:
 * accept() passes every connection through).
 */
int gate_start(unsigned max_connections, unsigned read_timeout);

/* Open connections the gate counts (after dropping closed ones). */
unsigned gate_open_count(void);

/*
 * Connections libmilter ended on its own, which it does not log: with
 * no session open (a peer stalled before option negotiation past
 * ReadTimeout, one that closed early, or the end of a connection reused
 * after SMFIC_QUIT_NC), or after ReadTimeout without a command. Each kind is
 * logged at once the first time, then at most once a minute with the
 * number seen since; read_timeout is for the message.
 */
enum gate_note {
    GATE_NOTE_UNNEGOTIATED,
    GATE_NOTE_SILENT,
    GATE_NOTE_KINDS,
};
void gate_note(enum gate_note what, unsigned read_timeout);

#endif
