/*
 * gate_limit.h - how many connections the gate lets in when
 * MaxConnections is 0: the process's task limit, and the cap that keeps
 * the threads of that many connections under it (gate.h says why).
 */
#ifndef SLOP_MILTER_GATE_LIMIT_H
#define SLOP_MILTER_GATE_LIMIT_H

#include <stdint.h>

/* Threads the daemon runs besides its connections (see gate_limit.c). */
#define GATE_RESERVED_TASKS 48
/* Threads one connection may hold: libmilter's worker and its scan thread. */
#define GATE_TASKS_PER_CONN 2
/* Without any task limit: enough for Postfix's default 100 smtpd processes twice. */
#define GATE_DEFAULT_CAP 256

/*
 * The task limit of this process: the smallest of the pids cgroup's
 * pids.max up the hierarchy (systemd's TasksMax) and, when not root,
 * RLIMIT_NPROC. 0: no limit found.
 */
uint64_t gate_task_limit(void);

/* MaxConnections 0: the cap that keeps threads under limit (0: none). */
unsigned gate_auto_cap(uint64_t limit);

#endif
