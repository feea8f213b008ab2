/*
 * rule_prefilter_parse.h - the prefilter's regex analyser as its table
 * builder sees it: literal sets with their word-boundary marks (PF_WB)
 * and white space still in (rule_prefilter_lit.h takes those out). The
 * rule set's own entry points are declared in rule.h. See
 * rule_prefilter.c for the whole design. No state; thread-safe.
 */
#ifndef SLOP_RULE_PREFILTER_PARSE_H
#define SLOP_RULE_PREFILTER_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rule.h"
#include "rule_prefilter_lit.h"
#include "strv.h"

#define PF_DEPTH_MAX 64u /* group nesting the analyser and the splitter follow */

/* rule_prefilter_parse_sets() with the word boundaries and the white
 * space at the ends still in (rule_prefilter_lit_core() takes them
 * out). Returns 0, or 1 when ret[0] is usable, or -ENOMEM; the caller
 * releases ret[]. */
int rule_prefilter_parse_marked(const char *src, size_t len, uint32_t options,
                                struct strv ret[RULE_PF_SETS], size_t *n);

#endif
