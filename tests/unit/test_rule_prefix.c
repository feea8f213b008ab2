/*
 * test_rule_prefix.c - the literals every match of a pattern starts with,
 * and the anchored tries at their places.
 *
 * Table-driven cases pin what the reader takes as a prefix and where it
 * must give up; a randomized check then compares rule_prefix_match() with
 * plain pcre2_match() of the same pattern (return code and every offset)
 * over generated texts, from several start offsets, in upper and lower
 * case and with the non-ASCII characters PCRE2 folds k and s to.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "rule.h"
#include "rule_prefix.h"

#define MAX_EXPECT 8

static void
check_literals(const char *pattern, uint32_t options, const char *const *want)
{
    struct strv v;
    size_t n = 0;

    assert_int_equal(rule_prefix_literals(pattern, strlen(pattern), options, &v), 0);
    while (n < MAX_EXPECT && want[n] != NULL)
        n++;
    if (v.n != n)
        fail_msg("/%s/: %zu literals, expected %zu", pattern, v.n, n);
    for (size_t i = 0; i < n; i++) {
        bool found = false;

        for (size_t k = 0; k < v.n && !found; k++)
            found = strcmp(v.v[k], want[i]) == 0;
        if (!found)
            fail_msg("/%s/: \"%s\" missing", pattern, want[i]);
    }
    strv_release(&v);
}

static void
test_literals(void **state)
{
    static const struct {
        const char *pattern;
        uint32_t options;
        const char *want[MAX_EXPECT]; /* empty: no prefix set */
    } cases[] = {
        {"\\bFound\\s+by", 0, {"found"}},
        {"Found by\\s", 0, {"found by"}},
        {"\\b(?:tested|seen|affects?)\\s+on", 0, {"tested", "seen", "affect"}},
        {"(?<!\\bnot\\s)(?<=\\s)(?=x)^\\A\\bkernel", 0, {"kernel"}},
        {"(?i)(?#note)Root\\b", 0, {"root"}},
        {"(?i:abc|def)+x", 0, {"abc", "def"}},
        {"(?<name>abc)(?>defg)", 0, {"abc"}},
        {"(abc|(?:def|ghi)jk)l", 0, {"abc", "def", "ghi"}},
        {"ab\\.c\\/d-e", 0, {"ab.c/d-e"}},
        {"abcd?e", 0, {"abc"}},
        {"abcd*e", 0, {"abc"}},
        {"abcd{0,2}e", 0, {"abc"}},
        {"abcd+e", 0, {"abcd"}},
        {"abcd{2}e", 0, {"abcd"}},
        {"foo|bar", 0, {"foo", "bar"}},
        /* A quantifier after a comment, an option setting or a lone \E
         * is the item's before them. */
        {"abcd(?#x)?e", 0, {"abc"}},
        {"abcd(?i)?e", 0, {"abc"}},
        {"abcd\\E?e", 0, {"abc"}},
        /* No set: a first atom that may be absent or is no literal, a
         * literal too short, \G and verbs (a later start could change
         * the answer), x mode, unknown or broken syntax. */
        {"(?:abc)?def", 0, {NULL}},
        {"(?:abc)*def", 0, {NULL}},
        {"(?:abc){0,3}def", 0, {NULL}},
        {"[a-z]bc", 0, {NULL}},
        {"\\wabc", 0, {NULL}},
        {".abc", 0, {NULL}},
        {"ab", 0, {NULL}},
        {"abc|d", 0, {NULL}},
        {"abc|", 0, {NULL}},
        {"ab?c", 0, {NULL}},
        {"\\Gabc", 0, {NULL}},
        {"abc\\G", 0, {NULL}},
        {"(*COMMIT)abc", 0, {NULL}},
        {"abc(*SKIP)d", 0, {NULL}},
        {"abc def", PCRE2_EXTENDED, {NULL}},
        {"(?x)abc def", 0, {NULL}},
        {"(?x:abc)", 0, {NULL}},
        {"\\Qabc\\E", 0, {NULL}},
        {"abc\\Qd|e\\E", 0, {NULL}},
        {"(?(1)abc|def)", 0, {NULL}},
        {"(?1)abc", 0, {NULL}},
        {"abc)", 0, {NULL}},
        {"(abc", 0, {NULL}},
        {"\\x{3010}abc", 0, {NULL}},
        {"\xc3\xa9t\xc3\xa9", 0, {NULL}},
        {"\\1abc", 0, {NULL}},
        {"(?:abc)(?#x)?def", 0, {NULL}},
        {"abc(?#s(e)|$", 0, {NULL}},
        {"(?#a)(?#b(c)|xyz", 0, {NULL}},
        {"abc(?x) d", 0, {NULL}},
        {"abcd[[.]|xy.]", 0, {NULL}},
    };
    (void)state;

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        check_literals(cases[i].pattern, cases[i].options, cases[i].want);
}

static pcre2_code *
compile(const char *pattern, uint32_t options)
{
    PCRE2_SIZE off;
    pcre2_code *code;
    int err;

    code = pcre2_compile((PCRE2_SPTR)pattern, PCRE2_ZERO_TERMINATED, RULE_PCRE2_OPTIONS | options,
                         &err, &off, NULL);
    assert_non_null(code);
    (void)pcre2_jit_compile(code, PCRE2_JIT_COMPLETE);
    return code;
}

/* Patterns with a first code unit or matching only at line starts keep
 * PCRE2's own search. */
static void
test_build(void **state)
{
    static const char *const own[] = {"abc\\d", "^foo|^bar", "(?i)bar\\d"};
    static const char *const ours[] = {"\\b(?:foo|bar)", "(?:abc|xyz)\\d"};
    struct rule_prefix *px;
    (void)state;

    for (size_t i = 0; i < sizeof(own) / sizeof(own[0]); i++) {
        pcre2_code *code = compile(own[i], 0);

        assert_int_equal(rule_prefix_build(code, own[i], strlen(own[i]), RULE_PCRE2_OPTIONS, &px),
                         0);
        assert_null(px);
        pcre2_code_free(code);
    }
    for (size_t i = 0; i < sizeof(ours) / sizeof(ours[0]); i++) {
        pcre2_code *code = compile(ours[i], 0);

        assert_int_equal(rule_prefix_build(code, ours[i], strlen(ours[i]), RULE_PCRE2_OPTIONS, &px),
                         0);
        assert_non_null(px);
        rule_prefix_free(px);
        pcre2_code_free(code);
    }
    rule_prefix_free(NULL);
}

/* Randomized equivalence ---------------------------------------------- */

static const struct {
    const char *pattern;
    uint32_t options;
} patterns[] = {
    {"\\b(?:tested|seen|found|kernel)\\s+(?:on|in)\\s+v?\\d+\\.\\d+", PCRE2_CASELESS},
    {"(?<!\\bnot\\s)(?:reproduc(?:ed|ible)|repro\\b|poc\\s*:)", PCRE2_CASELESS},
    {"\\b(?:root|user|cap_[a-z_]+)\\b", PCRE2_CASELESS},
    {"\\b(?:root|user)\\b", 0},
    {"(?:ask|sks)+k", PCRE2_CASELESS},
    {"(?:kelvin|kkk)\\w*", PCRE2_CASELESS},
    {"^(?i:seen)|(?m)(?:found)$", 0},
    {"\\b(?:abc|abd)(?=\\s)|(?:bcd)(?<=abcd)", 0},
    {"(?:foo|bar)(?:\\s+(?:foo|bar))*", PCRE2_CASELESS},
    {"(?:ab\\.c|b\\.ac)[^\\n]{0,8}\\n", 0},
};

#define N_PATTERNS (sizeof(patterns) / sizeof(patterns[0]))

static const char *const tokens[] = {
    "tested",       "TESTED", "Seen",  "found",    "kernel", " ",      "  ",           "\n",
    " on ",         " in ",   "v5.10", "4.19",     "x",      "not ",   "repro",        "reproduced",
    "Reproducible", "PoC:",   "poc :", "root",     "ROOT",   "users",  "user",         "cap_",
    "CAP_NET",      "ask",    "sks",   "k",        "kk",     "Kelvin", "\xe2\x84\xaa", "\xc5\xbf",
    "abc",          "abd",    "bcd",   "abcd",     "foo",    "bar",    "FOO",          "ab.c",
    "b.ac",         "-",      ".",     "\xc3\xa9", "_",
};

static void
check_text(pcre2_code *const *code, struct rule_prefix *const *px, pcre2_match_data *m1,
           pcre2_match_data *m2, const char *text, size_t len)
{
    const size_t starts[] = {0, 1, len / 2, len};

    for (size_t i = 0; i < N_PATTERNS; i++) {
        for (size_t s = 0; s < sizeof(starts) / sizeof(starts[0]); s++) {
            int r1, r2;

            if (starts[s] > len)
                continue;
            r1 = pcre2_match(code[i], (PCRE2_SPTR)text, len, starts[s], 0, m1, NULL);
            r2 = rule_prefix_match(px[i], code[i], text, len, starts[s], m2, NULL);
            if (r1 != r2)
                fail_msg("/%s/ on \"%.*s\" from %zu: %d, pcre2_match() %d", patterns[i].pattern,
                         (int)len, text, starts[s], r2, r1);
            for (int k = 0; k < 2 * r1; k++)
                if (pcre2_get_ovector_pointer(m1)[k] != pcre2_get_ovector_pointer(m2)[k])
                    fail_msg("/%s/ on \"%.*s\" from %zu: offset %d differs", patterns[i].pattern,
                             (int)len, text, starts[s], k);
        }
    }
}

static void
test_equivalence(void **state)
{
    pcre2_code *code[N_PATTERNS];
    struct rule_prefix *px[N_PATTERNS];
    pcre2_match_data *m1 = pcre2_match_data_create(16, NULL),
                     *m2 = pcre2_match_data_create(16, NULL);
    unsigned seed = 4242;
    (void)state;

    assert_non_null(m1);
    assert_non_null(m2);
    for (size_t i = 0; i < N_PATTERNS; i++) {
        const char *p = patterns[i].pattern;

        code[i] = compile(p, patterns[i].options);
        assert_int_equal(rule_prefix_build(code[i], p, strlen(p),
                                           RULE_PCRE2_OPTIONS | patterns[i].options, &px[i]),
                         0);
        /* The check means little unless each has a prefix set. */
        if (px[i] == NULL)
            fail_msg("/%s/: no prefix set", p);
    }
    for (unsigned round = 0; round < 4000; round++) {
        char text[1024];
        size_t len = 0, n_tokens = 1 + (size_t)rand_r(&seed) % 30;

        for (size_t t = 0; t < n_tokens; t++) {
            const char *tok = tokens[(size_t)rand_r(&seed) % (sizeof(tokens) / sizeof(tokens[0]))];
            size_t k = strlen(tok);

            memcpy(text + len, tok, k);
            len += k;
        }
        check_text(code, px, m1, m2, text, len);
    }
    for (size_t i = 0; i < N_PATTERNS; i++) {
        rule_prefix_free(px[i]);
        pcre2_code_free(code[i]);
    }
    pcre2_match_data_free(m1);
    pcre2_match_data_free(m2);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_literals),
        cmocka_unit_test(test_build),
        cmocka_unit_test(test_equivalence),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
