/*
 * rule_prefix.h - where a pattern's matches can start: the literals that
 * begin every match of a pattern, found by reading its source, so that
 * the pattern is tried, anchored, only where one of them occurs instead
 * of at every position.
 *
 * PCRE2 tries each start position in turn. A pattern such as
 * "\b(?:tested|reproduced|found|seen)\s+on" has no single first byte, so
 * its JIT code stops at nearly every word that starts with one of a dozen
 * common letters and tries every alternative there; over a report that
 * costs more than all the rest of the rule's work. A search for the
 * literals themselves finds the few places worth a try.
 *
 * The literals are ASCII, lowered, PREFIX_MIN bytes or longer. A pattern
 * has a prefix set only when every match provably begins with one of them
 * (after zero-width items: \b, ^, lookarounds); syntax the reader does
 * not follow gives no set, and the pattern runs from the start as before.
 * Read-only after rule_prefix_build(); thread-safe.
 */
#ifndef SLOP_RULE_PREFIX_H
#define SLOP_RULE_PREFIX_H

#include <stddef.h>
#include <stdint.h>

#ifndef PCRE2_CODE_UNIT_WIDTH
#define PCRE2_CODE_UNIT_WIDTH 8
#endif
#include <pcre2.h>

#include "strv.h"

#define RULE_PREFIX_MAX 16u /* literals of one set */
#define RULE_PREFIX_MIN 3u  /* bytes of a literal: shorter ones stop everywhere */

struct rule_prefix;

/* The literals every match of src[0..len) (compiled with the PCRE2
 * options bits) begins with, into *ret; none when the pattern has no such
 * set. Returns 0, or -ENOMEM. */
int rule_prefix_literals(const char *src, size_t len, uint32_t options, struct strv *ret);

/* The search for the prefix literals of src, which compiled is whole, in
 * *ret, with src compiled again anchored (PCRE2_ANCHORED with
 * compile_options, JIT where there is); NULL when it has none, or when
 * whole has a first code unit or matches only at line starts (PCRE2 then
 * finds the places to try as fast itself). Returns 0, or -ENOMEM. */
int rule_prefix_build(const pcre2_code *whole, const char *src, size_t len,
                      uint32_t compile_options, struct rule_prefix **ret);
void rule_prefix_free(struct rule_prefix *px);

/* What pcre2_match(whole, s, len, from, 0, md, mctx) returns, found by
 * trying px's anchored pattern only where one of its literals occurs in
 * s[from..len), ASCII case ignored, from the first on: a match starts
 * with one, so the first place where the anchored pattern matches is
 * where the unanchored search finds its match. PCRE2 matches a k or an s
 * of a caseless pattern with U+212A and U+017F as well: when a literal
 * holds either letter and the text one of those characters, whole runs
 * as it is. A match or depth limit applies to each try. */
int rule_prefix_match(const struct rule_prefix *px, const pcre2_code *whole, const char *s,
                      size_t len, size_t from, pcre2_match_data *md, pcre2_match_context *mctx);

/* Inside a class, where the POSIX item that opens at p ("[:", "[." or
 * "[=") ends, past its closing ":]" (".]", "=]"), as PCRE2 reads it: NULL
 * when PCRE2 takes the '[' as a literal (a ']', or another '[' with the
 * same mark, comes first; a "\]" or "\\" is skipped over). */
const char *rule_prefix_posix_end(const char *p, const char *end);

#endif
