/*
 * fuzz_prefix.c - libFuzzer target: a pattern and a text -> the reader of
 * a pattern's leading literals and the anchored tries at their places,
 * checked against PCRE2's own search.
 *
 * The first byte sets the flags (bit 0: caseless, bit 1: dot matches
 * newline); the pattern runs to the first newline (at most
 * FUZZ_PATTERN_MAX bytes), the text is the rest. The reader reads every
 * pattern; one PCRE2 does not compile is dropped after that. When the reader gives it a prefix set,
 * rule_prefix_match() must return what pcre2_match() returns, with the
 * same offsets, from the start, the middle and the end of the text; it
 * aborts otherwise. A try cut short by the match limit proves nothing
 * either way and is not compared. Single-threaded; nothing kept between
 * inputs.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rule.h"
#include "rule_prefix.h"

#define FUZZ_PATTERN_MAX 512u
#define FUZZ_MATCH_LIMIT 20000u

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    return 0;
}

static bool
cut_short(int rc)
{
    return rc == PCRE2_ERROR_MATCHLIMIT || rc == PCRE2_ERROR_DEPTHLIMIT ||
           rc == PCRE2_ERROR_HEAPLIMIT || rc == PCRE2_ERROR_JIT_STACKLIMIT;
}

static void
compare(const struct rule_prefix *px, const pcre2_code *code, const char *text, size_t len,
        size_t from, pcre2_match_data *m1, pcre2_match_data *m2, pcre2_match_context *mctx)
{
    int r1 = pcre2_match(code, (PCRE2_SPTR)text, len, from, 0, m1, mctx);
    int r2 = rule_prefix_match(px, code, text, len, from, m2, mctx);
    const PCRE2_SIZE *o1 = pcre2_get_ovector_pointer(m1), *o2 = pcre2_get_ovector_pointer(m2);

    if (cut_short(r1) || cut_short(r2))
        return;
    if (r1 != r2)
        abort();
    for (int k = 0; k < 2 * r1; k++)
        if (o1[k] != o2[k])
            abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint32_t options = RULE_PCRE2_OPTIONS;
    const char *pat, *text, *nl;
    size_t pat_len, len;
    pcre2_code *code = NULL;
    struct rule_prefix *px = NULL;
    pcre2_match_data *m1 = NULL, *m2 = NULL;
    pcre2_match_context *mctx = NULL;
    struct strv lits;
    PCRE2_SIZE off;
    int err;

    if (size < 2)
        return 0;
    if ((data[0] & 1) != 0)
        options |= PCRE2_CASELESS;
    if ((data[0] & 2) != 0)
        options |= PCRE2_DOTALL;
    pat = (const char *)data + 1;
    nl = memchr(pat, '\n', size - 1);
    pat_len = nl != NULL ? (size_t)(nl - pat) : size - 1;
    if (pat_len > FUZZ_PATTERN_MAX)
        return 0;
    text = nl != NULL ? nl + 1 : pat + pat_len;
    len = size - 1 - (size_t)(text - pat);
    /* The reader alone first: build() skips it for a pattern with a first
     * code unit. */
    (void)rule_prefix_literals(pat, pat_len, options, &lits);
    strv_release(&lits);
    code = pcre2_compile((PCRE2_SPTR)pat, pat_len, options, &err, &off, NULL);
    if (code == NULL)
        return 0;
    (void)pcre2_jit_compile(code, PCRE2_JIT_COMPLETE);
    if (rule_prefix_build(code, pat, pat_len, options, &px) < 0 || px == NULL)
        goto out;
    m1 = pcre2_match_data_create_from_pattern(code, NULL);
    m2 = pcre2_match_data_create_from_pattern(code, NULL);
    mctx = pcre2_match_context_create(NULL);
    if (m1 == NULL || m2 == NULL || mctx == NULL)
        goto out;
    pcre2_set_match_limit(mctx, FUZZ_MATCH_LIMIT);
    compare(px, code, text, len, 0, m1, m2, mctx);
    compare(px, code, text, len, len / 2, m1, m2, mctx);
    compare(px, code, text, len, len, m1, m2, mctx);
out:
    pcre2_match_context_free(mctx);
    pcre2_match_data_free(m1);
    pcre2_match_data_free(m2);
    rule_prefix_free(px);
    pcre2_code_free(code);
    return 0;
}
