/*
 * facts.h - measures that need more than the message: the caller's
 * look-ups into an indexed tree, merged fixes, MAINTAINERS, mail seen
 * before and sender history (struct classifier_lookup).
 *
 * facts_apply() runs after message_build() and before the rules: it sets
 * the look-up measures and their evidence in m, and the fingerprints the
 * caller records in res. Without a lookup only the fingerprints are
 * computed. Threading: no shared state; the callbacks are the caller's.
 */
#ifndef SLOP_FACTS_H
#define SLOP_FACTS_H

#include "classifier.h"
#include "message.h"

/* Returns 0 or -ENOMEM. */
int facts_apply(struct message *m, const struct classifier_envelope *env,
                struct classifier_result *res);

/* True when name is worth looking up in a tree index: a kernel-style
 * identifier, not a user-space library call and not a name the
 * preprocessor or the tracing and syscall macros generate. */
bool facts_checkable_symbol(const char *name);

#endif
