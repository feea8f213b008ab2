/*
 * authres.h - parse one Authentication-Results header field (RFC 8601).
 *
 * The parser reads what a verifier upstream (OpenDKIM, OpenDMARC, rspamd,
 * a border MTA) wrote: the authserv-id, then one result per method with its
 * properties. Comments (nested), quoted strings, folding and the common
 * deviations of real verifiers ("action=none" without a ptype, "reason=")
 * are accepted; anything else makes the whole field unusable, so a
 * damaged field never counts as a pass. Every size is capped below.
 *
 * Pure functions on caller memory: thread-safe, no allocation.
 */
#ifndef SLOP_MILTER_AUTHRES_H
#define SLOP_MILTER_AUTHRES_H

#include <stddef.h>

#define AUTHRES_FIELD_MAX 8192 /* bytes of one field parsed; longer fields are refused */
#define AUTHRES_RESULTS_MAX 16 /* results of one field; more are refused */
#define AUTHRES_PROPS_MAX 8    /* properties kept per result; later ones are dropped */
#define AUTHRES_COMMENT_DEPTH 8
#define AUTHRES_WORD_MAX 64   /* method, result, "ptype.property" */
#define AUTHRES_VALUE_MAX 256 /* authserv-id and property values */

struct authres_prop {
    char name[AUTHRES_WORD_MAX]; /* lower case: "header.d", "smtp.mailfrom", "reason" */
    char value[AUTHRES_VALUE_MAX];
};

struct authres_result {
    char method[AUTHRES_WORD_MAX]; /* lower case, without "/version" */
    char result[AUTHRES_WORD_MAX]; /* lower case */
    struct authres_prop props[AUTHRES_PROPS_MAX];
    size_t n_props;
};

struct authres {
    char authserv_id[AUTHRES_VALUE_MAX];
    struct authres_result results[AUTHRES_RESULTS_MAX];
    size_t n_results; /* 0 for "none" */
};

/*
 * Parse value (the field body after "Authentication-Results:", folds
 * included) into *ret. Returns 0, -EMSGSIZE when value is longer than
 * AUTHRES_FIELD_MAX, has more than AUTHRES_RESULTS_MAX results or a word
 * or value longer than its cap, -EINVAL for bad syntax. On failure
 * ret->authserv_id holds the authserv-id when it was read in full (so the
 * caller knows whose field failed) and is empty otherwise; the rest of
 * *ret is undefined.
 */
int authres_parse(const char *value, struct authres *ret);

/* The value of property name ("header.d") of r, or NULL. Borrowed from r. */
const char *authres_prop(const struct authres_result *r, const char *name);

#endif
