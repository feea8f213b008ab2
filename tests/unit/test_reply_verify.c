/*
 * test_reply_verify.c - who may be answered: organisational domains from
 * the Public Suffix List, and reply_verify() over trusted and untrusted
 * Authentication-Results fields, From: forms, envelope senders and more
 * fields than the cap.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "reply_verify.h"

static void
test_org_domain(void **state)
{
    static const struct {
        const char *in;
        const char *want; /* NULL: unusable */
    } cases[] = {
        {"example.com", "example.com"},
        {"mail.Example.COM", "example.com"},
        {"a.b.c.example.org.", "example.org"},
        {"mail.example.co.uk", "example.co.uk"},
        {"example.co.uk", "example.co.uk"},
        {"www.example.com.au", "example.com.au"},
        {"mail.example.de", "example.de"},
        {"x.kernel.org", "kernel.org"},
        /* the Public Suffix List's private entries: each customer is its
         * own organisation (issue 32: all six went to the victim) */
        {"attacker.eu.org", "attacker.eu.org"},
        {"mail.victim.eu.org", "victim.eu.org"},
        {"attacker.pp.ua", "attacker.pp.ua"},
        {"attacker.uk.com", "attacker.uk.com"},
        {"trust.nhs.uk", "trust.nhs.uk"},
        {"www.attacker.github.io", "attacker.github.io"},
        /* wildcard and exception rules: *.ck, !www.ck */
        {"a.b.ck", "a.b.ck"},
        {"www.ck", "www.ck"},
        /* a public suffix itself belongs to no one */
        {"co.uk", NULL},
        {"eu.org", NULL},
        {"github.io", NULL},
        {"com", NULL},
        {"localhost", NULL},
        {"", NULL},
        {"a..example.com", NULL},
        {".example.com", NULL},
        {"exa_mple.com", NULL},
        {"example.com/evil", NULL},
    };
    char out[256];

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        bool ok = reply_verify_org_domain(cases[i].in, out, sizeof(out));

        if (ok != (cases[i].want != NULL))
            fail_msg("case %zu (%s): ok=%d", i, cases[i].in, ok);
        if (ok && strcmp(out, cases[i].want) != 0)
            fail_msg("case %zu (%s): got %s", i, cases[i].in, out);
    }
}

#define P_AUTH REPLY_REQUIRE_AUTHENTICATED
#define P_DMARC REPLY_REQUIRE_DMARC_PASS
#define P_SPF REPLY_REQUIRE_SPF_PASS
#define P_DKIM REPLY_REQUIRE_DKIM_ALIGNED

static void
test_verify_table(void **state)
{
    static const struct {
        const char *env;
        const char *auth;
        const char *from;
        const char *ar1, *ar2;
        unsigned want; /* besides REPLY_REQUIRE_ANY */
    } cases[] = {
        {"a@example.com", NULL, "A <a@example.com>", NULL, NULL, 0},
        {"a@example.com", "a", "A <a@example.com>", NULL, NULL, P_AUTH},
        {"a@example.com", "", "A <a@example.com>", NULL, NULL, 0},
        {"a@example.com", NULL, "A <a@example.com>", "mx.test; dmarc=pass header.from=example.com",
         NULL, P_DMARC},
        /* a pass that does not name the From: domain proves nothing */
        {"a@example.com", NULL, "A <a@example.com>", "mx.test; dmarc=pass", NULL, 0},
        {"a@example.com", NULL, "A <a@example.com>", "mx.test; dmarc=pass policy.dmarc=none", NULL,
         0},
        /* trusted id compared without case; others ignored */
        {"a@example.com", NULL, "a@example.com", "MX.TEST; dmarc=pass header.from=example.com",
         NULL, P_DMARC},
        {"a@example.com", NULL, "a@example.com", "mx.test.evil; dmarc=pass header.from=example.com",
         NULL, 0},
        {"a@example.com", NULL, "a@example.com", "\"mx.test\"; dmarc=pass header.from=example.com",
         NULL, P_DMARC},
        /* dmarc about another From: domain */
        {"a@example.com", NULL, "a@example.com", "mx.test; dmarc=pass header.from=other.test", NULL,
         0},
        /* From: list, none, unreadable: no From: proof */
        {"a@example.com", NULL, "a@example.com, b@example.com",
         "mx.test; dmarc=pass header.from=example.com", NULL, 0},
        {"a@example.com", NULL, NULL, "mx.test; dmarc=pass header.from=example.com", NULL, 0},
        {"a@example.com", NULL, "A <a@example.com", "mx.test; dmarc=pass header.from=example.com",
         NULL, 0},
        /* subdomains align (relaxed) both ways */
        {"bounce@mail.example.com", NULL, "a@example.com",
         "mx.test; dmarc=pass header.from=example.com", NULL, P_DMARC},
        {"a@mail.example.com", NULL, "a@example.com", "mx.test; dmarc=pass header.from=example.com",
         NULL, P_DMARC},
        {"victim@other.test", NULL, "a@example.com", "mx.test; dmarc=pass header.from=example.com",
         NULL, 0},
        /* a trusted pass for one customer of a shared suffix never reaches
         * another (issue 32's eu.org and github.io pairs); within one
         * customer's domain it does */
        {"victim@victim.eu.org", NULL, "a@attacker.eu.org",
         "mx.test; dmarc=pass header.from=attacker.eu.org", NULL, 0},
        {"victim@victim.github.io", NULL, "a@attacker.github.io",
         "mx.test; dmarc=pass header.from=attacker.github.io", NULL, 0},
        {"victim@victim.pp.ua", NULL, "a@attacker.pp.ua",
         "mx.test; dmarc=pass header.from=attacker.pp.ua", NULL, 0},
        {"victim@victim.uk.com", NULL, "a@attacker.uk.com",
         "mx.test; dmarc=pass header.from=attacker.uk.com", NULL, 0},
        {"victim@victim.nhs.uk", NULL, "a@attacker.nhs.uk",
         "mx.test; dmarc=pass header.from=attacker.nhs.uk", NULL, 0},
        {"victim@victim.github.io", NULL, "a@attacker.github.io",
         "mx.test; dkim=pass header.d=attacker.github.io", NULL, 0},
        {"bounce@lists.alice.eu.org", NULL, "a@alice.eu.org",
         "mx.test; dmarc=pass header.from=alice.eu.org", NULL, P_DMARC},
        {"bounce@alice.github.io", NULL, "a@alice.github.io",
         "mx.test; dkim=pass header.d=alice.github.io", NULL, P_DKIM},
        /* a public suffix has no organisation to align with */
        {"victim@eu.org", NULL, "a@eu.org", "mx.test; dmarc=pass header.from=eu.org", NULL, 0},
        /* a trusted non-pass vetoes, with or without header.from; an
         * untrusted one does not */
        {"a@example.com", NULL, "a@example.com", "mx.test; dmarc=pass header.from=example.com",
         "mx.test; dmarc=fail header.from=example.com", 0},
        {"a@example.com", NULL, "a@example.com", "mx.test; dmarc=pass header.from=example.com",
         "mx.test; dmarc=fail", 0},
        {"a@example.com", NULL, "a@example.com", "mx.test; dmarc=pass header.from=example.com",
         "evil.test; dmarc=fail", P_DMARC},
        /* a damaged trusted field voids every field, the good one too */
        {"a@example.com", NULL, "a@example.com",
         "mx.test; dmarc=pass header.from=example.com (unterminated", NULL, 0},
        {"a@example.com", NULL, "a@example.com", "mx.test; dmarc=pass header.from=example.com",
         "mx.test; dmarc=fail header.from=example.com (unterminated", 0},
        {"a@example.com", NULL, "a@example.com", "mx.test; dmarc=pass header.from=example.com",
         "(unterminated mx.test; dmarc=fail", 0},
        /* another verifier's damaged field is not ours to read */
        {"a@example.com", NULL, "a@example.com", "mx.test; dmarc=pass header.from=example.com",
         "evil.test; dmarc=fail (unterminated", P_DMARC},
        /* spf: about the envelope domain only, and it must say so */
        {"a@example.com", NULL, NULL, "mx.test; spf=pass smtp.mailfrom=a@example.com", NULL, P_SPF},
        {"a@example.com", NULL, NULL, "mx.test; spf=pass smtp.mailfrom=example.com", NULL, P_SPF},
        {"a@example.com", NULL, NULL, "mx.test; spf=pass smtp.mailfrom=other.test", NULL, 0},
        {"a@example.com", NULL, NULL, "mx.test; spf=softfail smtp.mailfrom=example.com", NULL, 0},
        {"a@example.com", NULL, NULL, "mx.test; spf=pass smtp.helo=mail.example.com", NULL, 0},
        {"a@example.com", NULL, NULL, "mx.test; spf=pass", NULL, 0},
        /* dkim: header.d aligned with From:, From: aligned with envelope */
        {"a@example.com", NULL, "a@example.com", "mx.test; dkim=pass header.d=example.com", NULL,
         P_DKIM},
        {"a@example.com", NULL, "a@example.com",
         "mx.test; dkim=fail header.d=example.com; dkim=pass header.d=sel.example.com", NULL,
         P_DKIM},
        {"a@example.com", NULL, "a@example.com", "mx.test; dkim=pass header.d=evil.test", NULL, 0},
        {"victim@other.test", NULL, "a@evil.test",
         "mx.test; dkim=pass header.d=evil.test; "
         "dmarc=pass header.from=evil.test",
         NULL, 0},
        /* all at once */
        {"a@example.com", "user", "a@example.com",
         "mx.test; dkim=pass header.d=example.com; spf=pass smtp.mailfrom=a@example.com; "
         "dmarc=pass header.from=example.com",
         NULL, P_AUTH | P_DMARC | P_SPF | P_DKIM},
    };

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct reply_header h[3] = {
            {"Received", "from x by y"},
            {"Authentication-Results", cases[i].ar1},
            {"authentication-results", cases[i].ar2},
        };
        struct reply_verify_input in = {
            .env_sender = cases[i].env,
            .auth_authen = cases[i].auth,
            .authserv_id = "mx.test",
            .from = cases[i].from,
            .headers = h,
            .n_headers = cases[i].ar2   ? 3
                         : cases[i].ar1 ? 2
                                        : 1,
        };
        unsigned got = reply_verify(&in, NULL);

        if (got != (cases[i].want | REPLY_REQUIRE_ANY))
            fail_msg("case %zu: proved 0x%x, expected 0x%x", i, got,
                     cases[i].want | REPLY_REQUIRE_ANY);
    }
}

/* No AuthservID: no field is trusted. */
static void
test_verify_untrusted(void **state)
{
    struct reply_header h[1] = {
        {"Authentication-Results", "mx.test; dmarc=pass header.from=example.com"},
    };
    struct reply_verify_input in = {
        .env_sender = "a@example.com",
        .from = "a@example.com",
        .headers = h,
        .n_headers = 1,
    };
    enum reply_verify_refusal why = REPLY_VERIFY_OVER_CAP;

    (void)state;
    in.authserv_id = NULL;
    assert_int_equal(reply_verify(&in, &why), REPLY_REQUIRE_ANY);
    assert_int_equal(why, REPLY_VERIFY_READ);
    in.authserv_id = "";
    assert_int_equal(reply_verify(&in, NULL), REPLY_REQUIRE_ANY);
    in.authserv_id = "mx.test";
    assert_int_equal(reply_verify(&in, &why), REPLY_REQUIRE_ANY | REPLY_REQUIRE_DMARC_PASS);
    assert_int_equal(why, REPLY_VERIFY_READ);

    assert_true(reply_verify_ok(REPLY_REQUIRE_AUTHENTICATED | REPLY_REQUIRE_DMARC_PASS,
                                REPLY_REQUIRE_ANY | REPLY_REQUIRE_DMARC_PASS));
    assert_false(reply_verify_ok(REPLY_REQUIRE_AUTHENTICATED | REPLY_REQUIRE_DMARC_PASS,
                                 REPLY_REQUIRE_ANY | REPLY_REQUIRE_SPF_PASS));
    assert_true(reply_verify_ok(REPLY_REQUIRE_ANY, REPLY_REQUIRE_ANY));
}

/*
 * Issue 32: 31 junk fields and a forged pass under the trusted id push the
 * MTA's own dmarc=fail past the cap. Past the cap nothing counts, wherever
 * the forged pass and the real verdict stand; at the cap all are read.
 */
static void
test_verify_cap(void **state)
{
    enum { N = REPLY_VERIFY_FIELDS_MAX + 2 };
    static const char pass[] = "mx.test; dmarc=pass header.from=example.com";
    static const char fail[] = "mx.test; dmarc=fail header.from=example.com";
    struct reply_header h[N];
    struct reply_verify_input in = {
        .env_sender = "a@example.com",
        .auth_authen = NULL,
        .authserv_id = "mx.test",
        .from = "a@example.com",
        .headers = h,
    };
    enum reply_verify_refusal why;
    size_t n;

    (void)state;
    /* The red team's order: junk, the forged pass, the real fail 33rd. */
    n = 0;
    h[n++] = (struct reply_header){"Received", "from x by y"};
    for (size_t i = 0; i < REPLY_VERIFY_FIELDS_MAX - 1; i++)
        h[n++] = (struct reply_header){"Authentication-Results", "junk.test; none"};
    h[n++] = (struct reply_header){"Authentication-Results", pass};
    h[n++] = (struct reply_header){"Authentication-Results", fail};
    in.n_headers = n;
    assert_int_equal(reply_verify(&in, &why), REPLY_REQUIRE_ANY);
    assert_int_equal(why, REPLY_VERIFY_OVER_CAP);
    assert_string_equal(reply_verify_refusal_name(why), "over-cap");

    /* Past the cap even with no fail anywhere; SMTP AUTH still counts. */
    h[n - 1] = (struct reply_header){"Authentication-Results", pass};
    in.auth_authen = "user";
    assert_int_equal(reply_verify(&in, &why), REPLY_REQUIRE_ANY | REPLY_REQUIRE_AUTHENTICATED);
    assert_int_equal(why, REPLY_VERIFY_OVER_CAP);
    in.auth_authen = NULL;

    /* Exactly at the cap: every field is read, the fail among them. */
    in.n_headers = n - 1;
    h[n - 2] = (struct reply_header){"Authentication-Results", fail};
    h[1] = (struct reply_header){"Authentication-Results", pass};
    assert_int_equal(reply_verify(&in, &why), REPLY_REQUIRE_ANY);
    assert_int_equal(why, REPLY_VERIFY_READ);
    h[n - 2] = (struct reply_header){"Authentication-Results", pass};
    assert_int_equal(reply_verify(&in, &why), REPLY_REQUIRE_ANY | REPLY_REQUIRE_DMARC_PASS);
    assert_int_equal(why, REPLY_VERIFY_READ);
    assert_string_equal(reply_verify_refusal_name(why), "");

    /* Other fields between them do not count towards the cap. */
    h[n - 1] = (struct reply_header){"X-Authentication-Results", fail};
    in.n_headers = n;
    assert_int_equal(reply_verify(&in, &why), REPLY_REQUIRE_ANY | REPLY_REQUIRE_DMARC_PASS);
}

/* A trusted field that does not parse voids them all, and says so. */
static void
test_verify_unparsed(void **state)
{
    struct reply_header h[3] = {
        {"Authentication-Results", "mx.test; dmarc=pass header.from=example.com"},
        {"Authentication-Results", "mx.test; dmarc=fail header.from=example.com (cut"},
        {"Authentication-Results", "other.test; x (cut"},
    };
    struct reply_verify_input in = {
        .env_sender = "a@example.com",
        .authserv_id = "mx.test",
        .from = "a@example.com",
        .headers = h,
        .n_headers = 2,
    };
    enum reply_verify_refusal why;

    (void)state;
    assert_int_equal(reply_verify(&in, &why), REPLY_REQUIRE_ANY);
    assert_int_equal(why, REPLY_VERIFY_UNPARSED);
    assert_string_equal(reply_verify_refusal_name(why), "unparsed");
    h[1] = h[2];
    assert_int_equal(reply_verify(&in, &why), REPLY_REQUIRE_ANY | REPLY_REQUIRE_DMARC_PASS);
    assert_int_equal(why, REPLY_VERIFY_READ);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_org_domain),       cmocka_unit_test(test_verify_table),
        cmocka_unit_test(test_verify_untrusted), cmocka_unit_test(test_verify_cap),
        cmocka_unit_test(test_verify_unparsed),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
