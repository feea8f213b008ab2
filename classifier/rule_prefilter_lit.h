/*
 * rule_prefilter_lit.h - one literal of the prefilter's analyser: its
 * limits, the marks the analyser leaves in it (a word boundary, white
 * space at its ends) and the helpers that take them out for the table.
 * The analyser (rule_prefilter_parse.c) and the table builder use it;
 * it uses neither. No state; thread-safe.
 */
#ifndef SLOP_RULE_PREFILTER_LIT_H
#define SLOP_RULE_PREFILTER_LIT_H

#include <stdbool.h>
#include <stddef.h>

#include "strv.h"

#define PF_REQ_MAX 256u /* strings in a required set */
#define PF_LIT_MAX 64u  /* bytes of one literal */
#define PF_LIT_MIN 2u   /* shorter required literals filter nothing useful */

/* In the analyser's strings, a \b: such a literal occurs only where the
 * word boundary holds too. Without PCRE2_UCP a word character is an ASCII
 * letter, digit or '_' (every other character, multi-byte ones included,
 * is not), so the test needs one byte of context. A boundary the table
 * can use sits at either end of a literal, next to a word character;
 * others are dropped, which only lets more text through. The byte itself
 * is never taken as a literal character. */
#define PF_WB '\x01'

/* What the scan tests next to a literal: a word boundary, or white space
 * (which the analyser's strings carry at their ends after \s+; taken
 * off, the table keys on letters, not on " o" and "\to"). */
enum {
    PF_WB_START = 1,
    PF_WB_END = 2,
    PF_WS_START = 4,
    PF_WS_END = 8,
};

static inline char
pf_lower(char c)
{
    return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

/* A word character without PCRE2_UCP: an ASCII letter, digit or '_'. */
static inline bool
pf_is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static inline bool
pf_is_word(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

static inline bool
pf_is_space(unsigned char c)
{
    /* \s without PCRE2_UCP: ' ', '\t', '\n', '\v', '\f', '\r' */
    return c == ' ' || (c >= '\t' && c <= '\r');
}

/* The core of lit into out (PF_LIT_MAX + 1
 * bytes), without its marks; *flags gets the PF_WB_* and PF_WS_* tests
 * that stand for them. Returns the core's length. */
size_t rule_prefilter_lit_core(const char *lit, char *out, unsigned *flags);

/* Strength of a literal: the length of its core, one more per test. */
size_t rule_prefilter_lit_strength(const char *lit);

/* True when every literal of v keeps PF_LIT_MIN characters or more once
 * its marks are taken out. */
bool rule_prefilter_lit_usable(const struct strv *v);

/* True when the first n strings of v hold s[0..len); lens[] has the
 * length of each. */
bool rule_prefilter_lit_has(const struct strv *v, size_t n, const size_t *lens, const char *s,
                            size_t len);

/* v with its marks taken out, each core once, as the public functions
 * give it. Returns 0, or -ENOMEM with v left empty. */
int rule_prefilter_lit_unmark(struct strv *v);

/* The literals of v into *ret, less those that contain another: a
 * literal with another inside it adds nothing to a required set.
 * Returns 0, or -ENOMEM with *ret empty. */
int rule_prefilter_lit_prune(const struct strv *v, struct strv *ret);

#endif
