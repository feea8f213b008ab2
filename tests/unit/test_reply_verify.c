/*
 * test_reply_verify.c - who may be answered: the organisational-domain
 * approximation, and reply_verify() over trusted and untrusted
 * Authentication-Results fields, From: forms and envelope senders.
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
        {"co.uk", "co.uk"},
        {"www.example.com.au", "example.com.au"},
        {"mail.example.de", "example.de"},
        {"x.kernel.org", "kernel.org"},
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
        /* trusted id compared without case; others ignored */
        {"a@example.com", NULL, "a@example.com", "MX.TEST; dmarc=pass", NULL, P_DMARC},
        {"a@example.com", NULL, "a@example.com", "mx.test.evil; dmarc=pass", NULL, 0},
        {"a@example.com", NULL, "a@example.com", "\"mx.test\"; dmarc=pass", NULL, P_DMARC},
        /* dmarc about another From: domain */
        {"a@example.com", NULL, "a@example.com", "mx.test; dmarc=pass header.from=other.test", NULL,
         0},
        /* From: list, none, unreadable: no From: proof */
        {"a@example.com", NULL, "a@example.com, b@example.com", "mx.test; dmarc=pass", NULL, 0},
        {"a@example.com", NULL, NULL, "mx.test; dmarc=pass", NULL, 0},
        {"a@example.com", NULL, "A <a@example.com", "mx.test; dmarc=pass", NULL, 0},
        /* subdomains align (relaxed) both ways */
        {"bounce@mail.example.com", NULL, "a@example.com", "mx.test; dmarc=pass", NULL, P_DMARC},
        {"victim@other.test", NULL, "a@example.com", "mx.test; dmarc=pass", NULL, 0},
        /* a trusted non-pass vetoes; an untrusted one does not */
        {"a@example.com", NULL, "a@example.com", "mx.test; dmarc=pass", "mx.test; dmarc=fail", 0},
        {"a@example.com", NULL, "a@example.com", "mx.test; dmarc=pass", "evil.test; dmarc=fail",
         P_DMARC},
        /* a damaged trusted field proves nothing */
        {"a@example.com", NULL, "a@example.com", "mx.test; dmarc=pass (unterminated", NULL, 0},
        /* spf: about the envelope domain only */
        {"a@example.com", NULL, NULL, "mx.test; spf=pass smtp.mailfrom=a@example.com", NULL, P_SPF},
        {"a@example.com", NULL, NULL, "mx.test; spf=pass smtp.mailfrom=example.com", NULL, P_SPF},
        {"a@example.com", NULL, NULL, "mx.test; spf=pass smtp.mailfrom=other.test", NULL, 0},
        {"a@example.com", NULL, NULL, "mx.test; spf=softfail smtp.mailfrom=example.com", NULL, 0},
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
        unsigned got = reply_verify(&in);

        if (got != (cases[i].want | REPLY_REQUIRE_ANY))
            fail_msg("case %zu: proved 0x%x, expected 0x%x", i, got,
                     cases[i].want | REPLY_REQUIRE_ANY);
    }
}

/* No AuthservID: no field is trusted; more than the cap: the rest unread. */
static void
test_verify_limits(void **state)
{
    struct reply_header h[REPLY_VERIFY_FIELDS_MAX + 1];
    struct reply_verify_input in = {
        .env_sender = "a@example.com",
        .from = "a@example.com",
        .headers = h,
        .n_headers = 1,
    };

    (void)state;
    h[0] = (struct reply_header){"Authentication-Results", "mx.test; dmarc=pass"};
    in.authserv_id = NULL;
    assert_int_equal(reply_verify(&in), REPLY_REQUIRE_ANY);
    in.authserv_id = "";
    assert_int_equal(reply_verify(&in), REPLY_REQUIRE_ANY);
    in.authserv_id = "mx.test";
    for (size_t i = 0; i < REPLY_VERIFY_FIELDS_MAX; i++)
        h[i] = (struct reply_header){"Authentication-Results", "other.test; dmarc=pass"};
    h[REPLY_VERIFY_FIELDS_MAX] =
        (struct reply_header){"Authentication-Results", "mx.test; dmarc=pass"};
    in.n_headers = REPLY_VERIFY_FIELDS_MAX + 1;
    assert_int_equal(reply_verify(&in), REPLY_REQUIRE_ANY);
    in.n_headers = REPLY_VERIFY_FIELDS_MAX;
    h[REPLY_VERIFY_FIELDS_MAX - 1] = h[REPLY_VERIFY_FIELDS_MAX];
    assert_int_equal(reply_verify(&in), REPLY_REQUIRE_ANY | REPLY_REQUIRE_DMARC_PASS);

    assert_true(reply_verify_ok(REPLY_REQUIRE_AUTHENTICATED | REPLY_REQUIRE_DMARC_PASS,
                                REPLY_REQUIRE_ANY | REPLY_REQUIRE_DMARC_PASS));
    assert_false(reply_verify_ok(REPLY_REQUIRE_AUTHENTICATED | REPLY_REQUIRE_DMARC_PASS,
                                 REPLY_REQUIRE_ANY | REPLY_REQUIRE_SPF_PASS));
    assert_true(reply_verify_ok(REPLY_REQUIRE_ANY, REPLY_REQUIRE_ANY));
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_org_domain),
        cmocka_unit_test(test_verify_table),
        cmocka_unit_test(test_verify_limits),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
