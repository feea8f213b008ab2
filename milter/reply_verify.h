/*
 * reply_verify.h - may this sender be answered: is the address the reply
 * would go to verified by the MTA or by a trusted verifier upstream?
 *
 * An automatic reply to a forged envelope sender is backscatter (RFC 3834
 * section 2). ReplyRequires names the proofs accepted, any one of which
 * suffices:
 *   authenticated  the MTA's {auth_authen} macro is set (SMTP AUTH);
 *   dmarc-pass     a trusted Authentication-Results says dmarc=pass for the
 *                  From: domain, and the envelope sender's domain aligns
 *                  with it;
 *   dkim-aligned   a trusted dkim=pass whose header.d aligns with the From:
 *                  domain, which aligns with the envelope sender's domain;
 *   spf-pass       a trusted spf=pass for the envelope sender's domain;
 *   any            no proof (the behaviour before ReplyRequires).
 * A result is trusted when its field's authserv-id equals AuthservID
 * (case-insensitive); any trusted dmarc or spf result other than pass
 * vetoes that proof, and a pass counts only when it names what it is
 * about (dmarc header.from, spf smtp.mailfrom). Alignment is relaxed
 * (RFC 7489 3.1): the two organisational domains are equal, where the
 * organisational domain is the registrable domain under the Public Suffix
 * List (RFC 7489 3.2, as OpenDMARC and rspamd take it), ICANN and private
 * entries alike, so that two customers of eu.org or github.io never
 * align. A public suffix itself has no organisational domain.
 *
 * The Authentication-Results fields fail closed as a whole: more than
 * REPLY_VERIFY_FIELDS_MAX of them (the MTA's own could be the one past the
 * cap), or one that may be the trusted verifier's and does not parse (its
 * authserv-id unreadable, or equal to AuthservID), and none of them proves
 * anything.
 *
 * The list is libpsl's newest of its built-in copy, the packaged file
 * (/usr/share/publicsuffix) and PublicSuffixList, loaded once per process
 * (reply_verify_load_list(), or on first use), never freed. Thread-safe.
 */
#ifndef SLOP_MILTER_REPLY_VERIFY_H
#define SLOP_MILTER_REPLY_VERIFY_H

#include <stdbool.h>
#include <stddef.h>

#include "reply.h"

#define REPLY_VERIFY_FIELDS_MAX 32 /* Authentication-Results fields; more: none counts */

enum reply_require {
    REPLY_REQUIRE_ANY = 1u << 0,
    REPLY_REQUIRE_AUTHENTICATED = 1u << 1,
    REPLY_REQUIRE_DMARC_PASS = 1u << 2,
    REPLY_REQUIRE_SPF_PASS = 1u << 3,
    REPLY_REQUIRE_DKIM_ALIGNED = 1u << 4,
};

struct reply_verify_input {
    const char *env_sender;             /* MAIL FROM, with or without <> */
    const char *auth_authen;            /* {auth_authen}; NULL or "": not authenticated */
    const char *authserv_id;            /* trusted authserv-id; NULL or "": trust none */
    const char *from;                   /* the From: value; NULL: none or more than one */
    const struct reply_header *headers; /* all fields kept; may be NULL when n is 0 */
    size_t n_headers;
};

/* Why the Authentication-Results fields counted for nothing. */
enum reply_verify_refusal {
    REPLY_VERIFY_READ = 0, /* they were read (whatever they proved) */
    REPLY_VERIFY_OVER_CAP, /* more than REPLY_VERIFY_FIELDS_MAX fields */
    REPLY_VERIFY_UNPARSED, /* a field of the trusted (or an unreadable) id does not parse */
};

/*
 * The REPLY_REQUIRE_* bits the message proves (REPLY_REQUIRE_ANY always).
 * ret_refusal (may be NULL) always receives why the fields were not used,
 * REPLY_VERIFY_READ when they were.
 */
unsigned reply_verify(const struct reply_verify_input *in, enum reply_verify_refusal *ret_refusal);

/* The refusal as a log word ("over-cap", "unparsed"); "" for READ. */
const char *reply_verify_refusal_name(enum reply_verify_refusal r);

/*
 * Load the Public Suffix List now rather than on the first message, so
 * that start-up can say when there is none: the newest of file (may be
 * NULL or ""), libpsl's built-in copy and the packaged file. Only the
 * first call of a process loads; later ones return its result. Returns
 * 0; -EINVAL when file is named but holds no list (nothing is loaded
 * then: no alignment is proved); -ENOENT when there is no list at all.
 */
int reply_verify_load_list(const char *file);

/* True when proved satisfies at least one bit of required. */
bool reply_verify_ok(unsigned required, unsigned proved);

/*
 * The organisational domain of domain (see above), lower case, into out
 * (size bytes). Returns false when domain is not a usable domain name, is
 * a public suffix itself, or no list is loaded.
 */
bool reply_verify_org_domain(const char *domain, char *out, size_t size);

#endif
