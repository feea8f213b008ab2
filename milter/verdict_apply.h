/*
 * verdict_apply.h - carry out a verdict's plan through libmilter (only
 * inside the eom and envfrom callbacks, on their SMFICTX).
 */
#ifndef SLOP_MILTER_VERDICT_APPLY_H
#define SLOP_MILTER_VERDICT_APPLY_H

#include <libmilter/mfapi.h>

struct verdict_plan;

/* The status for p: reject, tempfail, or SMFIS_CONTINUE for all that
 * passes (never SMFIS_ACCEPT: callbacks.c says why). */
sfsistat verdict_apply_status(const struct verdict_plan *p);

/* Set p's SMTP reply lines, escaped, when it has any; 0, -ENOSPC or -EIO. */
int verdict_apply_reply(SMFICTX *ctx, struct verdict_plan *p);

/* Apply p's header changes, quarantine and reply. Returns 0, or -EIO
 * naming the failed call in *ret_what. */
int verdict_apply(SMFICTX *ctx, struct verdict_plan *p, const char **ret_what);

#endif
