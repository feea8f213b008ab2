/*
 * test_learn.c - the learned classifier's tokens (learn.c): sorted,
 * distinct, capped, the smaller cap a part of the larger one (the
 * smallest hashes first), repeats counted once; and the scan's look-up
 * through a fake classifier_lookup: without a model of the message's
 * kind, one look-up of the kind's token and nothing else. The fallbacks
 * of the word selection: a bucket of the set holding more distinct
 * tokens than it can keep (read again from the raw tokens), its values
 * met in descending order (the insertion pass gives up for qsort()),
 * repeats within it, a text past the raw token cap, and a caller's room
 * past the cap of tokens.
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
#include "fingerprint.h"
#include "measure.h"

#define MAX_TOKENS CLASSIFIER_LEARN_MAX_TOKENS
/* The structural tokens of a mail without trailers: the kind's, then a
 * band of each measure before MEASURE_TREE_INDEXED. */
#define N_STRUCTURE (1 + (size_t)MEASURE_TREE_INDEXED)
/* The set of learn.c keeps the smallest word tokens in buckets by their
 * top 9 bits, 16 distinct tokens each, read from bucket 0 up. */
#define SET_BITS 9
/* Words of bucket 0 the tests write: more than a bucket holds, and
 * enough that the insertion pass gives up on them in descending order
 * (it allows 8 moves a value; n values descending need n(n-1)/2). */
#define CROWD 40

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

/* A mail whose body is the letter words of idx[0..n) in that order, of
 * kind other: the kind is hashed into every token, and a text of enough
 * words could otherwise read as a report. */
static char *
make_mail_of(const size_t *idx, size_t n)
{
    size_t size = 320 + n * 8, len;
    char *msg = malloc(size);

    assert_non_null(msg);
    len = (size_t)snprintf(msg, size,
                           "From: Alice Example <alice@example.org>\n"
                           "To: security@example.org\n"
                           "Subject: a question about the parser\n"
                           "Message-ID: <learn.2@example.org>\n"
                           "Auto-Submitted: auto-generated\n\n");
    for (size_t i = 0; i < n; i++) {
        char w[16];

        letter_word(idx[i], w);
        len += (size_t)snprintf(msg + len, size - len, "%s%s", w, i % 12 == 11 ? ".\n" : " ");
    }
    return msg;
}

/* A mail whose body has n words: word i is letter_word((i + shift) %
 * period). */
static char *
make_mail(size_t n, size_t period, size_t shift)
{
    size_t *idx = malloc((n > 0 ? n : 1) * sizeof(*idx));
    char *msg;

    assert_non_null(idx);
    for (size_t i = 0; i < n; i++)
        idx[i] = (i + shift) % period;
    msg = make_mail_of(idx, n);
    free(idx);
    return msg;
}

static bool
has_token(const uint64_t *v, size_t n, uint64_t x)
{
    for (size_t i = 0; i < n; i++)
        if (v[i] == x)
            return true;
    return false;
}

/* The token learn.c makes of the body word w alone in make_mail_of()'s
 * mails (kind other whatever the words: a program's mail, RFC 3834, is
 * no report; the body is read as the report region, tag 'R'): FNV-1a
 * over the kind, the tag and the word, lower case already. The tests
 * that rely on it check that the tokens have it. */
static uint64_t
body_word_token(const char *w)
{
    unsigned char kind = (unsigned char)CLASSIFIER_KIND_OTHER;
    uint64_t h = fingerprint_fnv(FINGERPRINT_FNV_INIT, &kind, 1);

    return fingerprint_fnv(fingerprint_fnv(h, "R", 1), w, strlen(w));
}

/* The first n letter words (ascending index) whose token falls in bucket
 * 0 of the set, the bucket read first: into idx[0..n) and their tokens
 * into tok[0..n), both in the ascending order of the tokens. */
static void
bucket0_words(size_t n, size_t *idx, uint64_t *tok)
{
    size_t got = 0;

    for (size_t i = 0; i < ((size_t)1 << 24) && got < n; i++) {
        char w[16];
        uint64_t h;
        size_t j = got;

        letter_word(i, w);
        h = body_word_token(w);
        if ((h >> (64 - SET_BITS)) != 0)
            continue;
        for (; j > 0 && tok[j - 1] > h; j--) {
            tok[j] = tok[j - 1];
            idx[j] = idx[j - 1];
        }
        tok[j] = h;
        idx[j] = i;
        got++;
    }
    assert_int_equal(got, n);
}

/* The tokens of msg at cap max, checked sorted and distinct. */
static size_t
msg_tokens(const struct classifier *c, const char *msg, uint64_t *ret, size_t max)
{
    size_t k = 0;
    uint64_t hint = 0;

    assert_int_equal(classifier_learn_tokens(c, msg, strlen(msg), ret, max, &k, &hint), 0);
    assert_true(k <= max);
    for (size_t i = 1; i < k; i++)
        assert_true(ret[i - 1] < ret[i]);
    return k;
}

/* v[0..n) without the values of s[0..ns), into ret; returns how many. */
static size_t
tokens_minus(const uint64_t *v, size_t n, const uint64_t *s, size_t ns, uint64_t *ret)
{
    size_t m = 0;

    for (size_t i = 0; i < n; i++)
        if (!has_token(s, ns, v[i]))
            ret[m++] = v[i];
    return m;
}

/*
 * The selection at every cap against the whole cap's: the structure S is
 * what a cap of N_STRUCTURE gives, in every larger cap; the words of a
 * cap c are the c - |S| smallest of the words at the full cap. Of the
 * words known to be in bucket 0 (tok[0..nt), ascending), a cap keeps a
 * prefix. Returns the words at the full cap into words.
 */
static size_t
check_caps(const struct classifier *c, const char *msg, const uint64_t *tok, size_t nt,
           uint64_t *words)
{
    uint64_t all[MAX_TOKENS], st[MAX_TOKENS], part[MAX_TOKENS], pw[MAX_TOKENS];
    size_t n_all = msg_tokens(c, msg, all, MAX_TOKENS);
    size_t n_st = msg_tokens(c, msg, st, N_STRUCTURE);
    size_t n_words = tokens_minus(all, n_all, st, n_st, words);

    assert_int_equal(n_st, N_STRUCTURE);
    assert_int_equal(n_words, n_all - n_st);
    for (size_t cap = N_STRUCTURE + 1; cap < MAX_TOKENS; cap += 7) {
        size_t n = msg_tokens(c, msg, part, cap), nw = tokens_minus(part, n, st, n_st, pw), nk = 0;

        assert_int_equal(n - nw, n_st);
        assert_int_equal(nw, cap - n_st < n_words ? cap - n_st : n_words);
        assert_memory_equal(pw, words, nw * sizeof(*pw));
        for (size_t i = 0; i < nt; i++)
            nk += has_token(pw, nw, tok[i]);
        for (size_t i = 0; i < nk; i++)
            assert_true(has_token(pw, nw, tok[i]));
    }
    return n_words;
}

/* Of the tokens at the full cap, each of tok[0..n) once. */
static void
assert_has_all(const uint64_t *v, size_t nv, const uint64_t *tok, size_t n)
{
    for (size_t i = 0; i < n; i++)
        assert_true(has_token(v, nv, tok[i]));
}

/*
 * More distinct words in bucket 0 than it holds: the bucket is read again
 * from the raw tokens, and every one of them is kept, smallest first at
 * each cap. The words then come in descending order of their tokens:
 * the insertion pass over the bucket gives up and qsort() orders it, to
 * the same words. The count is every distinct token: the subject's 4
 * words (1 letter words give none) and their 6 pairs, and of the body's
 * n distinct words, n tokens alone and 4 pairs each but 1+2+3+4 the first
 * four cannot make.
 */
static void
test_tokens_crowded_bucket(void **state)
{
    const struct classifier *c = *state;
    size_t idx[CROWD], rev[CROWD];
    uint64_t tok[CROWD], up[MAX_TOKENS], down[MAX_TOKENS];
    char *msg;
    size_t n_up, n_down;

    bucket0_words(CROWD, idx, tok);
    for (size_t i = 0; i < CROWD; i++)
        rev[i] = idx[CROWD - 1 - i];
    msg = make_mail_of(idx, CROWD);
    n_up = check_caps(c, msg, tok, CROWD, up);
    free(msg);
    assert_int_equal(n_up, 4 + 6 + 5 * CROWD - 10);
    assert_has_all(up, n_up, tok, CROWD);

    msg = make_mail_of(rev, CROWD);
    n_down = check_caps(c, msg, tok, CROWD, down);
    free(msg);
    assert_int_equal(n_down, n_up);
    assert_has_all(down, n_down, tok, CROWD);
}

/*
 * The crowded bucket among more words than the cap takes: bucket 0 is
 * read first, so all of its words are kept whatever else the text has;
 * the rest of the cap goes to the smallest of the others. Each crowded
 * word said three times over (its repeats in the raw tokens) is kept
 * once and changes nothing but the pairs.
 */
static void
test_tokens_crowded_over_cap(void **state)
{
    const struct classifier *c = *state;
    enum { FILL = 600, FILL_FROM = 100000 };
    size_t *idx = malloc((CROWD * 3 + FILL) * sizeof(*idx));
    uint64_t tok[CROWD], words[MAX_TOKENS];
    size_t n_words, n = 0;
    char *msg;

    assert_non_null(idx);
    bucket0_words(CROWD, idx, tok);
    for (size_t r = 1; r < 3; r++)
        for (size_t i = 0; i < CROWD; i++)
            idx[r * CROWD + i] = idx[CROWD - 1 - i];
    n = (size_t)3 * CROWD;
    /* Other words: from an index past those of the crowded ones. */
    for (size_t i = 0; i < CROWD; i++)
        assert_true(idx[i] < FILL_FROM);
    for (size_t i = 0; i < FILL; i++)
        idx[n++] = FILL_FROM + i;
    msg = make_mail_of(idx, n);
    n_words = check_caps(c, msg, tok, CROWD, words);
    free(msg);
    assert_int_equal(n_words, MAX_TOKENS - N_STRUCTURE);
    assert_has_all(words, n_words, tok, CROWD);
    free(idx);
}

/* The raw tokens stop at a cap, 5 times the cap of distinct tokens: a
 * word gives 5 tokens (alone and with the 4 before it), so 512 words
 * reach it and words past it give nothing: 612 words and the same with
 * thousands more have the same tokens. The words before it do count:
 * 102 of them give other tokens. */
static void
test_tokens_past_raw_cap(void **state)
{
    const struct classifier *c = *state;
    enum { LONG = 4000 };
    size_t *idx = malloc(LONG * sizeof(*idx));
    static const size_t len[] = {LONG, MAX_TOKENS + 100, MAX_TOKENS / 5};
    uint64_t w[3][MAX_TOKENS];
    size_t nw[3];

    assert_non_null(idx);
    for (size_t i = 0; i < LONG; i++)
        idx[i] = 5000 + i;
    for (size_t t = 0; t < 3; t++) {
        char *msg = make_mail_of(idx, len[t]);

        nw[t] = check_caps(c, msg, NULL, 0, w[t]);
        free(msg);
        assert_int_equal(nw[t], MAX_TOKENS - N_STRUCTURE);
    }
    /* The words only: the measures, so the structure, see the length. */
    assert_memory_equal(w[0], w[1], nw[0] * sizeof(w[0][0]));
    assert_true(memcmp(w[0], w[2], nw[0] * sizeof(w[0][0])) != 0);
    free(idx);
}

/* A caller's room for more than CLASSIFIER_LEARN_MAX_TOKENS takes no
 * more from a message than that cap, the same tokens as at the cap: the
 * words kept have room for that many and no more. */
static void
test_tokens_room_past_cap(void **state)
{
    const struct classifier *c = *state;
    uint64_t at_cap[MAX_TOKENS], *wide = malloc((size_t)4 * MAX_TOKENS * sizeof(*wide));
    char *msg = make_mail(1500, 1500, 0);
    size_t n_cap, n_wide;

    assert_non_null(wide);
    n_cap = msg_tokens(c, msg, at_cap, MAX_TOKENS);
    n_wide = msg_tokens(c, msg, wide, (size_t)4 * MAX_TOKENS);
    assert_int_equal(n_cap, MAX_TOKENS);
    assert_int_equal(n_wide, MAX_TOKENS);
    assert_memory_equal(wide, at_cap, n_cap * sizeof(*wide));
    free(msg);
    free(wide);
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
    size_t k = msg_tokens(c, msg, ret, max);

    free(msg);
    return k;
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
        cmocka_unit_test(test_tokens_crowded_bucket),
        cmocka_unit_test(test_tokens_crowded_over_cap),
        cmocka_unit_test(test_tokens_past_raw_cap),
        cmocka_unit_test(test_tokens_room_past_cap),
    };

    return cmocka_run_group_tests(tests, setup, teardown);
}
