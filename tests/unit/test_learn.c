/*
 * test_learn.c - the learned classifier's tokens (learn.c): sorted,
 * distinct, capped, the smaller cap a part of the larger one (the
 * smallest hashes first), repeats counted once; and the scan's look-up
 * through a fake classifier_lookup: without a model of the message's
 * kind, one look-up of the kind's token and nothing else.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "classifier.h"

#define MAX_TOKENS CLASSIFIER_LEARN_MAX_TOKENS

/* A word of letters only for i (digits would make it an identifier,
 * and every identifier is one placeholder token). */
static void
letter_word(size_t i, char *buf)
{
    size_t k = 0;

    do {
        buf[k++] = (char)('a' + i % 26);
        i /= 26;
    } while (i > 0);
    buf[k++] = 'q'; /* at least two letters */
    buf[k] = '\0';
}

/* A mail whose body has n words: word i is letter_word((i + shift) %
 * period). */
static char *
make_mail(size_t n, size_t period, size_t shift)
{
    size_t size = 256 + n * 8, len;
    char *msg = malloc(size);

    assert_non_null(msg);
    len = (size_t)snprintf(msg, size,
                           "From: Alice Example <alice@example.org>\n"
                           "To: security@example.org\n"
                           "Subject: a question about the parser\n"
                           "Message-ID: <learn.1@example.org>\n\n");
    for (size_t i = 0; i < n; i++) {
        char w[16];

        letter_word((i + shift) % period, w);
        len += (size_t)snprintf(msg + len, size - len, "%s%s", w, i % 12 == 11 ? ".\n" : " ");
    }
    return msg;
}

static int
setup(void **state)
{
    struct classifier *c = NULL;

    if (classifier_new(SLOP_RULES_DIR, NULL, NULL, NULL, &c) != 0)
        return -1;
    *state = c;
    return 0;
}

static int
teardown(void **state)
{
    classifier_free(*state);
    return 0;
}

/* The tokens of make_mail(n, period, shift), at most max, checked sorted
 * and distinct. */
static size_t
mail_tokens(const struct classifier *c, size_t n, size_t period, size_t shift, uint64_t *ret,
            size_t max)
{
    char *msg = make_mail(n, period, shift);
    size_t k = 0;
    uint64_t hint = 0;

    assert_int_equal(classifier_learn_tokens(c, msg, strlen(msg), ret, max, &k, &hint), 0);
    assert_true(k <= max);
    for (size_t i = 1; i < k; i++)
        assert_true(ret[i - 1] < ret[i]);
    free(msg);
    return k;
}

static bool
has_token(const uint64_t *v, size_t n, uint64_t x)
{
    for (size_t i = 0; i < n; i++)
        if (v[i] == x)
            return true;
    return false;
}

/* A long text fills the cap; a smaller cap keeps the same structure and
 * the smallest of the same words, so its tokens are a part of the
 * larger cap's. */
static void
test_tokens_capped_and_nested(void **state)
{
    static const size_t caps[] = {64, 100, 200, 300, 511};
    uint64_t all[MAX_TOKENS], part[MAX_TOKENS];
    size_t n_all = mail_tokens(*state, 1500, 1500, 0, all, MAX_TOKENS);

    assert_int_equal(n_all, MAX_TOKENS);
    for (size_t k = 0; k < sizeof(caps) / sizeof(caps[0]); k++) {
        size_t n = mail_tokens(*state, 1500, 1500, 0, part, caps[k]);

        assert_int_equal(n, caps[k]);
        for (size_t i = 0; i < n; i++)
            assert_true(has_token(all, n_all, part[i]));
    }
}

/* The smallest hashes, not the first words: the same 480 words turned
 * round by half differ only in the pairs across the two seams (at most
 * 2 x 10), so their samples are nearly the same, where the first words
 * of each would share little. */
static void
test_tokens_smallest_not_first(void **state)
{
    uint64_t ta[MAX_TOKENS], tb[MAX_TOKENS];
    size_t na = mail_tokens(*state, 480, 480, 0, ta, MAX_TOKENS);
    size_t nb = mail_tokens(*state, 480, 480, 240, tb, MAX_TOKENS), shared = 0;

    assert_int_equal(na, MAX_TOKENS);
    assert_int_equal(nb, MAX_TOKENS);
    for (size_t i = 0; i < na; i++)
        shared += has_token(tb, nb, ta[i]);
    assert_true(shared >= MAX_TOKENS - 2 * 2 * 10);
}

/* Words repeated many times give each token once: a text of five words
 * over and over has its structure (as many tokens as for any text), the
 * five words and their pairs at each distance, nothing more. */
static void
test_tokens_repeats_once(void **state)
{
    uint64_t a[MAX_TOKENS], b[MAX_TOKENS];
    size_t na = mail_tokens(*state, 5, 5, 0, a, MAX_TOKENS);
    size_t nb = mail_tokens(*state, 2000, 5, 0, b, MAX_TOKENS);

    assert_true(nb > na);
    /* Each of the 5 words pairs with each of the 5 at 4 distances at most. */
    assert_true(nb <= na + (size_t)5 * 5 * 4);
}

struct fake_model {
    uint32_t each; /* every token's count in each class */
    size_t calls;
    size_t n[4]; /* tokens asked for in each call */
};

static bool
fake_counts(void *ctx, const uint64_t *tokens, size_t n, uint32_t (*ret_counts)[2],
            uint64_t ret_totals[2])
{
    struct fake_model *f = ctx;

    (void)tokens;
    if (f->calls < sizeof(f->n) / sizeof(f->n[0]))
        f->n[f->calls] = n;
    f->calls++;
    for (size_t i = 0; i < n; i++)
        ret_counts[i][0] = ret_counts[i][1] = f->each;
    ret_totals[0] = ret_totals[1] = 100;
    return true;
}

static void
scan_with(const struct classifier *c, const char *msg, struct fake_model *f)
{
    struct classifier_lookup lk = {.ctx = f, .learned_counts = fake_counts};
    struct classifier_envelope env = {.mail_from = "alice@example.org", .lookup = &lk};
    struct classifier_result *res = NULL;

    assert_int_equal(classifier_scan(c, msg, strlen(msg), &env, &res), 0);
    classifier_result_free(res);
}

/* One message of the kind learned in each class is no model: the scan
 * asks for the kind's token alone and neither makes nor looks up the
 * others. With enough of the kind, it looks all of them up. */
static void
test_lookup_only_with_a_model(void **state)
{
    const struct classifier *c = *state;
    char *msg = make_mail(600, 600, 0);
    struct fake_model none = {.each = 1}, some = {.each = 5};

    scan_with(c, msg, &none);
    assert_int_equal(none.calls, 1);
    assert_int_equal(none.n[0], 1);
    scan_with(c, msg, &some);
    assert_int_equal(some.calls, 2);
    assert_int_equal(some.n[0], 1);
    assert_int_equal(some.n[1], MAX_TOKENS);
    free(msg);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tokens_capped_and_nested),
        cmocka_unit_test(test_tokens_smallest_not_first),
        cmocka_unit_test(test_tokens_repeats_once),
        cmocka_unit_test(test_lookup_only_with_a_model),
    };

    return cmocka_run_group_tests(tests, setup, teardown);
}
