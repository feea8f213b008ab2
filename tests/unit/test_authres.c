/*
 * test_authres.c - the Authentication-Results parser: what real verifiers
 * write (OpenDKIM, OpenDMARC, rspamd, the big providers), the RFC 8601
 * examples, and hostile fields (unterminated comments and strings, deep
 * nesting, oversize words, too many results, binary bytes).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "authres.h"

/* Expected: "id|method=result,prop=value,...;method=result..." */
static void
summary(const struct authres *ar, char *out, size_t size)
{
    size_t n = (size_t)snprintf(out, size, "%s|", ar->authserv_id);

    for (size_t i = 0; i < ar->n_results && n < size; i++) {
        const struct authres_result *r = &ar->results[i];

        n += (size_t)snprintf(out + n, size - n, "%s%s=%s", i ? ";" : "", r->method, r->result);
        for (size_t k = 0; k < r->n_props && n < size; k++)
            n += (size_t)snprintf(out + n, size - n, ",%s=%s", r->props[k].name, r->props[k].value);
    }
}

static void
test_parse_table(void **state)
{
    static const struct {
        const char *value;
        int ret;
        const char *want; /* summary() on success */
    } cases[] = {
        /* OpenDKIM */
        {"mx.example.org; dkim=pass (2048-bit key; unprotected) header.d=example.com "
         "header.i=@example.com header.b=\"abcdEFGH\"; dkim-atps=neutral",
         0,
         "mx.example.org|dkim=pass,header.d=example.com,header.i=@example.com,header.b=abcdEFGH;"
         "dkim-atps=neutral"},
        /* OpenDMARC */
        {"mx.example.org; dmarc=pass (p=none dis=none) header.from=example.com", 0,
         "mx.example.org|dmarc=pass,header.from=example.com"},
        /* rspamd, folded */
        {"mx.example.org;\r\n\tdkim=pass header.d=example.com header.s=dkim header.b=abc;\r\n"
         "\tspf=pass (mx.example.org: domain of a@example.com designates 192.0.2.1 as "
         "permitted sender) smtp.mailfrom=a@example.com;\r\n\tdmarc=pass (policy=none) "
         "header.from=example.com",
         0,
         "mx.example.org|dkim=pass,header.d=example.com,header.s=dkim,header.b=abc;"
         "spf=pass,smtp.mailfrom=a@example.com;dmarc=pass,header.from=example.com"},
        /* a large provider: props without ptype, reason=, no spaces after ';' */
        {"spf=pass (sender IP is 192.0.2.1) smtp.mailfrom=example.com; dkim=none (message "
         "not signed) header.d=none;dmarc=none action=none header.from=example.com;"
         "compauth=pass reason=100",
         -EINVAL, NULL}, /* no authserv-id: the first word is a method */
        {"mx.microsoft.test; spf=pass smtp.mailfrom=example.com; dmarc=none action=none "
         "header.from=example.com;compauth=pass reason=100",
         0,
         "mx.microsoft.test|spf=pass,smtp.mailfrom=example.com;dmarc=none,action=none,"
         "header.from=example.com;compauth=pass,reason=100"},
        /* RFC 8601 appendix B forms */
        {"example.org 1; none", 0, "example.org|"},
        {"example.com; none", 0, "example.com|"},
        {"example.com; spf=pass smtp.mailfrom=example.net", 0,
         "example.com|spf=pass,smtp.mailfrom=example.net"},
        {"example.com; auth=pass (cram-md5) smtp.auth=sender@example.net; spf=pass "
         "smtp.mailfrom=example.net",
         0,
         "example.com|auth=pass,smtp.auth=sender@example.net;spf=pass,smtp.mailfrom=example.net"},
        {"example.com; sender-id=fail header.from=example.com; dkim=pass (good signature) "
         "header.d=example.com",
         0, "example.com|sender-id=fail,header.from=example.com;dkim=pass,header.d=example.com"},
        {"\"quoted id\"; dkim/1=pass header.d=example.com", 0,
         "quoted id|dkim=pass,header.d=example.com"},
        {"(leading (nested) comment) mx.test (c) ; (c) dmarc (c) = (c) pass (c) header (c) . "
         "(c) from (c) = (c) example.com (c)",
         0, "mx.test|dmarc=pass,header.from=example.com"},
        {"mx.test; DMARC=PASS Header.From=Example.COM", 0,
         "mx.test|dmarc=pass,header.from=Example.COM"},
        {"mx.test; dkim=pass header.i=\"a b\"@example.com", 0,
         "mx.test|dkim=pass,header.i=a b@example.com"},
        {"mx.test; dkim=pass header.b=\"a\\\"b\"", 0, "mx.test|dkim=pass,header.b=a\"b"},
        {"mx.test;", 0, "mx.test|"},
        /* syntax errors: the field proves nothing */
        {"", -EINVAL, NULL},
        {"; dmarc=pass", -EINVAL, NULL},
        {"mx.test dmarc=pass", -EINVAL, NULL},
        {"mx.test; dmarc pass", -EINVAL, NULL},
        {"mx.test; dmarc=", -EINVAL, NULL},
        {"mx.test; =pass", -EINVAL, NULL},
        {"mx.test; dmarc=pass header.from", -EINVAL, NULL},
        {"mx.test; dmarc=pass header.from=", -EINVAL, NULL},
        {"mx.test; dmarc=pass (unterminated", -EINVAL, NULL},
        {"mx.test; dkim=pass header.b=\"unterminated", -EINVAL, NULL},
        {"mx.test; dmarc=pass header.=x", -EINVAL, NULL},
        {"mx.test; dkim/x=pass", -EINVAL, NULL},
        {"mx.test; dmarc=pass\x01", -EINVAL, NULL},
        {"(((((((((deep)))))))))) mx.test; dmarc=pass", -EINVAL, NULL},
        {"mx.test\\; dmarc=pass", -EINVAL, NULL},
    };
    struct authres *ar = malloc(sizeof(*ar));
    char got[2048];

    (void)state;
    assert_non_null(ar);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int r = authres_parse(cases[i].value, ar);

        if (r != cases[i].ret)
            fail_msg("case %zu: returned %d, expected %d", i, r, cases[i].ret);
        if (r == 0) {
            summary(ar, got, sizeof(got));
            if (cases[i].want == NULL || strcmp(got, cases[i].want) != 0)
                fail_msg("case %zu: got '%s', expected '%s'", i, got, cases[i].want);
        }
    }
    free(ar);
}

static void
test_caps(void **state)
{
    struct authres *ar = malloc(sizeof(*ar));
    char *big = malloc(AUTHRES_FIELD_MAX + 64);
    size_t n;

    (void)state;
    assert_non_null(ar);
    assert_non_null(big);

    /* A field one byte over the cap is refused, its results unread... */
    memset(big, ' ', AUTHRES_FIELD_MAX + 1);
    memcpy(big, "mx.test; none", 13);
    big[AUTHRES_FIELD_MAX + 1] = '\0';
    assert_int_equal(authres_parse(big, ar), -EMSGSIZE);
    /* ...but its id is read, so the caller knows whose field it was */
    assert_string_equal(ar->authserv_id, "mx.test");
    big[AUTHRES_FIELD_MAX] = '\0';
    assert_int_equal(authres_parse(big, ar), 0);

    /* AUTHRES_RESULTS_MAX results parse; one more is refused. */
    for (int extra = 0; extra <= 1; extra++) {
        n = (size_t)sprintf(big, "mx.test");
        for (int i = 0; i < AUTHRES_RESULTS_MAX + extra; i++)
            n += (size_t)sprintf(big + n, "; dkim=pass header.d=d%d.example", i);
        assert_int_equal(authres_parse(big, ar), extra ? -EMSGSIZE : 0);
        if (!extra)
            assert_int_equal(ar->n_results, AUTHRES_RESULTS_MAX);
    }

    /* More properties than kept: the first ones stay, the parse succeeds. */
    n = (size_t)sprintf(big, "mx.test; dkim=pass");
    for (int i = 0; i < AUTHRES_PROPS_MAX + 4; i++)
        n += (size_t)sprintf(big + n, " header.p%d=v%d", i, i);
    assert_int_equal(authres_parse(big, ar), 0);
    assert_int_equal(ar->results[0].n_props, AUTHRES_PROPS_MAX);
    assert_string_equal(authres_prop(&ar->results[0], "header.p0"), "v0");
    assert_null(authres_prop(&ar->results[0], "header.p11"));

    /* Oversize words and values. */
    n = (size_t)sprintf(big, "mx.test; ");
    memset(big + n, 'm', AUTHRES_WORD_MAX);
    strcpy(big + n + AUTHRES_WORD_MAX, "=pass");
    assert_int_equal(authres_parse(big, ar), -EMSGSIZE);
    n = (size_t)sprintf(big, "mx.test; dkim=pass header.b=");
    memset(big + n, 'b', AUTHRES_VALUE_MAX);
    big[n + AUTHRES_VALUE_MAX] = '\0';
    assert_int_equal(authres_parse(big, ar), -EMSGSIZE);
    memset(big, 'i', AUTHRES_VALUE_MAX);
    strcpy(big + AUTHRES_VALUE_MAX, "; none");
    assert_int_equal(authres_parse(big, ar), -EMSGSIZE);
    assert_string_equal(ar->authserv_id, "");

    /* A comment nested to the depth cap parses; one deeper does not. */
    n = 0;
    for (int i = 0; i < AUTHRES_COMMENT_DEPTH; i++)
        big[n++] = '(';
    for (int i = 0; i < AUTHRES_COMMENT_DEPTH; i++)
        big[n++] = ')';
    strcpy(big + n, " mx.test; none");
    assert_int_equal(authres_parse(big, ar), 0);
    memmove(big + 1, big, strlen(big) + 1);
    big[0] = '(';
    n = (size_t)AUTHRES_COMMENT_DEPTH * 2;
    memmove(big + n + 1, big + n, strlen(big + n) + 1);
    big[n + 1] = ')';
    assert_int_equal(authres_parse(big, ar), -EINVAL);

    assert_int_equal(authres_parse(NULL, ar), -EINVAL);
    free(big);
    free(ar);
}

/* A field that fails still says whose it is, when the id itself was read
 * in full: the caller must tell a broken trusted field from another's. */
static void
test_failed_id(void **state)
{
    static const struct {
        const char *value;
        int ret;
        const char *id; /* after the failure */
    } cases[] = {
        {"mx.test; dmarc=fail (unterminated", -EINVAL, "mx.test"},
        {"MX.Test; dmarc=", -EINVAL, "MX.Test"},
        {"(c) mx.test; dkim=pass header.b=\"open", -EINVAL, "mx.test"},
        {"mx.test(open; dmarc=pass", -EINVAL, "mx.test"},
        {"other.test; dmarc pass", -EINVAL, "other.test"},
        {"(unterminated mx.test; dmarc=pass", -EINVAL, ""},
        {"; dmarc=pass", -EINVAL, ""},
        {"", -EINVAL, ""},
    };
    struct authres *ar = malloc(sizeof(*ar));

    (void)state;
    assert_non_null(ar);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        memset(ar->authserv_id, 'x', sizeof(ar->authserv_id) - 1);
        ar->authserv_id[sizeof(ar->authserv_id) - 1] = '\0';
        if (authres_parse(cases[i].value, ar) != cases[i].ret)
            fail_msg("case %zu: wrong return", i);
        if (strcmp(ar->authserv_id, cases[i].id) != 0)
            fail_msg("case %zu: id '%s', expected '%s'", i, ar->authserv_id, cases[i].id);
    }
    free(ar);
}

/* Random bytes and mutations of a good field never crash or overrun (run
 * under the sanitizers in CI) and never leave a result half-filled. */
static void
test_hostile_bytes(void **state)
{
    static const char seed[] = "mx.test; dkim=pass (c (d) \\) e) header.d=example.com "
                               "header.b=\"x\\\"y\"; spf=pass smtp.mailfrom=a@example.com";
    struct authres *ar = malloc(sizeof(*ar));
    char buf[sizeof(seed) + 8];
    unsigned x = 12345;

    (void)state;
    assert_non_null(ar);
    for (int round = 0; round < 20000; round++) {
        memcpy(buf, seed, sizeof(seed));
        for (int k = 0; k < 3; k++) {
            x = x * 1103515245u + 12345u;
            buf[(x >> 8) % (sizeof(seed) - 1)] = (char)((x >> 16) & 0xff ? (x >> 16) & 0xff : 1);
        }
        if (authres_parse(buf, ar) == 0) {
            assert_true(ar->n_results <= AUTHRES_RESULTS_MAX);
            for (size_t i = 0; i < ar->n_results; i++) {
                assert_true(ar->results[i].method[0] != '\0');
                assert_true(ar->results[i].result[0] != '\0');
            }
        }
    }
    free(ar);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_table),
        cmocka_unit_test(test_caps),
        cmocka_unit_test(test_failed_id),
        cmocka_unit_test(test_hostile_bytes),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
