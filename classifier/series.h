/*
 * series.h - a patch as part of its series: the cover letter against the
 * series it introduces, and the look-ups that tie the patches of one
 * series together through the caller's state.
 *
 * series_measure() runs inside measure_compute() and sets the cover_*
 * measures from the message alone. series_facts() runs inside
 * facts_apply(): it fills what the caller records for the series (root,
 * place, changelog paragraph fingerprints) and, with a lookup, the
 * series_* measures. series_cover_note() runs once the action is known.
 * Threading: no shared state; the callbacks are the caller's.
 */
#ifndef SLOP_SERIES_H
#define SLOP_SERIES_H

#include "classifier.h"
#include "message.h"

/* Set the cover letter measures of m and their evidence; cannot fail
 * (without memory the evidence is left out). */
void series_measure(struct message *m);

/* Returns 0 or -ENOMEM. lk may be NULL. */
int series_facts(struct message *m, const struct classifier_lookup *lk,
                 struct classifier_result *res);

/* For a cover letter whose score reached an action, res->cover_note names
 * its scoring findings. Returns 0 or -ENOMEM. */
int series_cover_note(const struct message *m, struct classifier_result *res);

#endif
