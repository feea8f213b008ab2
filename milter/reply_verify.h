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
 * vetoes that proof. Alignment is relaxed (RFC 7489 3.1): the two
 * organisational domains are equal, where the organisational domain is
 * approximated without the Public Suffix List as the last two labels, or
 * three when the last is a two-letter country code and the one before it
 * a common second-level label (co, com, net, org, ac, gov, edu, ...).
 *
 * Pure function, thread-safe; at most AUTHRES_FIELDS_MAX fields are read.
 */
#ifndef SLOP_MILTER_REPLY_VERIFY_H
#define SLOP_MILTER_REPLY_VERIFY_H

#include <stdbool.h>
#include <stddef.h>

#include "reply.h"

#define REPLY_VERIFY_FIELDS_MAX 32 /* Authentication-Results fields read per message */

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

/* The REPLY_REQUIRE_* bits the message proves (REPLY_REQUIRE_ANY always). */
unsigned reply_verify(const struct reply_verify_input *in);

/* True when proved satisfies at least one bit of required. */
bool reply_verify_ok(unsigned required, unsigned proved);

/*
 * The organisational domain of domain (see above), lower case, into out
 * (size bytes). Returns false when domain is not a usable domain name.
 */
bool reply_verify_org_domain(const char *domain, char *out, size_t size);

#endif
