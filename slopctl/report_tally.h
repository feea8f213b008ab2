/*
 * report_tally.h - counts per name (a rule, a sender, a day) and per
 * action, for the moderator's report (slopctl report).
 *
 * A tally holds at most the number of names it was made for; a name that
 * arrives once it is full is counted in "other" instead, so a flood of
 * distinct senders costs bounded memory. Names are copied, capped at
 * REPORT_TALLY_NAME_MAX bytes. Single-threaded.
 */
#ifndef SLOPCTL_REPORT_TALLY_H
#define SLOPCTL_REPORT_TALLY_H

#include <stdbool.h>
#include <stddef.h>

#include "classifier.h"

#define REPORT_TALLY_NAME_MAX 256

struct report_tally_entry {
    char *name;
    unsigned long n; /* all actions */
    unsigned long by_action[CLASSIFIER_ACTION__COUNT];
};

struct report_tally {
    struct report_tally_entry *v; /* open addressing; name NULL: free slot */
    size_t slots;                 /* a power of two, twice max */
    size_t max;                   /* names held at most */
    size_t n;                     /* names held */
    unsigned long other;          /* counts of names that found it full */
};

/* Make room for max names (1 to 1 << 20). Returns 0, -EINVAL or -ENOMEM. */
int report_tally_init(struct report_tally *t, size_t max);
void report_tally_release(struct report_tally *t);

/* Count one occurrence of name with action. Returns 0 or -ENOMEM. */
int report_tally_add(struct report_tally *t, const char *name, enum classifier_action action);

/*
 * Copies of the held entries in a new array, sorted by count (largest
 * first, then by name) or by name alone; *ret_n gets their number. Free
 * the array with free(); the names in it are t's, and live as long as t
 * is not changed. Returns 0 or -ENOMEM.
 */
int report_tally_sorted(const struct report_tally *t, bool by_name,
                        struct report_tally_entry **ret_v, size_t *ret_n);

#endif
