/*
 * scan_job.h - scan one collected message with the snapshot's classifier
 * under ScanTimeout, looking into the state when there is one and, for
 * the daemon, learning it afterwards when AutoLearn asks. Shared by the
 * decision (decision.c) for the daemon and the offline mode (-t).
 */
#ifndef SLOP_MILTER_SCAN_JOB_H
#define SLOP_MILTER_SCAN_JOB_H

#include <stdbool.h>

struct classifier_result;
struct config;
struct msg;
struct snapshot;
struct state;
struct state_lookup_options;

/*
 * Scan m with snap; takes the message buffer out of m. st (may be NULL)
 * is looked into; record: the daemon, whose clock dates the message and
 * which may learn it (-t passes false). progress (may be NULL) is called
 * about once a second while the scan runs. Returns 0 with *ret set (free
 * with classifier_result_free()), -ETIMEDOUT when ScanTimeout passed (the
 * scan goes on and frees itself), -ENOMEM, or the scan's negative errno.
 */
int scan_job_run(struct snapshot *snap, struct msg *m, struct state *st, bool record,
                 void (*progress)(void *), void *pctx, struct classifier_result **ret);

/* The state look-up options that cfg asks for (duplicate window,
 * trusted maintainers, learned minimum). */
void scan_job_lookup_options(const struct config *cfg, struct state_lookup_options *ret);

/*
 * Scans still reading a state: after a timeout a scan's worker outlives
 * its message. Close the state only when this is 0.
 */
unsigned scan_job_state_users(void);

#endif
