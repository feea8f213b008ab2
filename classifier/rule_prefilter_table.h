/*
 * rule_prefilter_table.h - the prefilter's tables as the builder
 * (rule_prefilter.c) makes them and the per-message pass
 * (rule_prefilter_scan.c) reads them: entries, filters, heads and the
 * hashes both must compute alike. Read-only once built.
 */
#ifndef SLOP_RULE_PREFILTER_TABLE_H
#define SLOP_RULE_PREFILTER_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rule.h"
#include "rule_prefilter_parse.h"

struct pf_entry {
    /* The first eight bytes (fewer when shorter, then zero-padded), the
     * first one highest: one compare rejects most entries of a bucket,
     * which share their first three bytes ("con" starts dozens), and
     * most literals that share four ("comment that", "comments with")
     * without reading the literal itself, which lies elsewhere. */
    uint64_t head;
    uint32_t pattern : 21;
    uint32_t tests : 4; /* PF_WB_*, PF_WS_*: what to test around the literal */
    uint32_t len : 7;   /* at most PF_LIT_MAX */
    /* head_shift() of its length: the bits of a text's head that lie
     * past the literal, which the probe shifts out before comparing. */
    uint8_t shift;
    const char *lit; /* borrowed from the pattern */
};

#define PF_PATTERN_MAX (1u << 21)

_Static_assert(PF_LIT_MAX < (1u << 7), "a literal's length fits pf_entry.len");

#define PF_BUCKETS 4096u
/* Bits of the three-byte filter: common English pairs ("th", "us") start
 * many literals, so two bytes alone let most positions through. */
#define PF_BITS3 (1u << 18)

struct pf_region {
    uint8_t bits[65536 / 8]; /* keys of literals of two bytes */
    /* Hashed first three bytes of longer literals, and every third byte
     * after the key of a two-byte one, so that one test serves both. */
    uint32_t bits3[PF_BITS3 / 32];
    struct pf_entry *v; /* sorted by bucket */
    size_t n;
    /* v[start[h]..start[h + 1]): bucket h (entry_bucket()) */
    uint32_t start[2 * PF_BUCKETS + 1];
    uint32_t n_patterns; /* patterns with a filter on this region */
};

/* A pattern's top-level alternatives, compiled one by one. */
struct pf_split {
    struct rule_pattern *v; /* owned: sources and codes */
    size_t n;
};

/* Regions often built from one text: the report is the body when a mail
 * has no code, quotes or attachment, and a patch's changelog when its log
 * has no code. A scan with both tables at once then serves both. */
static const struct {
    enum region_id a, b;
} pf_pairs[] = {
    {REGION_BODY, REGION_REPORT},
    {REGION_CHANGELOG, REGION_REPORT},
};

#define PF_PAIRS (sizeof(pf_pairs) / sizeof(pf_pairs[0]))

/* A set's heads (see the top of this file): lower case, borrowed from
 * rule_prefilter.lits; n == 0 when the set has none. at is the byte that
 * memchr() looks for, one rare in text. */
#define PF_NEEDLES_MAX 8u    /* heads of one set */
#define PF_NEEDLE_MIN 3u     /* bytes of a head */
#define PF_NEEDLE_BUDGET 12u /* head searches on a region before its on-demand pass */

struct pf_needles {
    uint8_t n;
    uint8_t len[PF_NEEDLES_MAX];
    uint8_t at[PF_NEEDLES_MAX];
    uint8_t tests[PF_NEEDLES_MAX]; /* the PF_WB_*, PF_WS_* tests its literals all keep */
    const char *s[PF_NEEDLES_MAX];
};

/* Values of rule_prefilter_state.possible[]: a pattern set may match
 * (PF_MAY) as the scan of its region or its heads (PF_BY_HEADS) found. */
#define PF_MAY 1u
#define PF_BY_HEADS 2u

/* Tables of a region (see the top of this file): one per message kind,
 * then the patterns asked on demand. */
#define PF_KINDS 4u
#define PF_ON_DEMAND PF_KINDS
#define PF_GROUPS (PF_KINDS + 1u)
#define PF_TABLES ((size_t)REGION__COUNT * PF_GROUPS)

_Static_assert(CLASSIFIER_KIND_REPLY < PF_KINDS, "a table for every kind");
_Static_assert(2 * REGION__COUNT <= 32, "two scanned bits per region fit");

struct rule_prefilter {
    struct pf_region *regions[PF_TABLES];          /* region * PF_GROUPS + group */
    struct pf_region *pairs[PF_PAIRS * PF_GROUPS]; /* the entries of both regions */
    struct pf_region *trios[PF_KINDS];             /* body, report and code: see scan_once() */
    struct strv lits;                              /* every literal, owned here */
    struct pf_needles *needles;                    /* per set, n_patterns of them */
    uint32_t n_patterns;
    struct pf_split *splits;
    uint32_t n_splits;
    struct pf_needles *checks; /* short sets (see add_check()), n_checks of them */
    uint32_t n_checks;
};

static inline uint16_t
key2(const char *s)
{
    return (uint16_t)((unsigned char)pf_lower(s[0]) << 8 | (unsigned char)pf_lower(s[1]));
}

/* Hash of three bytes, b0 << 16 | b1 << 8 | b2, to PF_BITS3 bits. */
static inline uint32_t
hash24(uint32_t w)
{
    return (w * 2654435761u) >> (32 - 18);
}

/* The three-byte filter: bit bit3_of(w) of word word3_of(w) for the three
 * bytes b0 << 16 | b1 << 8 | b2 in the low 24 bits of w (the bits above are
 * ignored, so the scan need not mask them off). The word comes from a
 * multiplicative hash of all three bytes, the bit from b2's low five bits:
 * the scan then tests a byte in a few instructions (x86's bt takes the bit
 * number modulo 32 from the register as it is), and that test runs at
 * every byte of the text. */
#define PF_WORDS3_BITS 13u
/* word3_of()'s multiplier; candidates64() multiplies its lanes by it. */
#define PF_WORD3_MUL (2654435761u << 8)

_Static_assert(PF_BITS3 == 32u << PF_WORDS3_BITS, "words of 32 bits fill the filter");

static inline uint32_t
word3_of(uint32_t w)
{
    /* (w << 8) * K: the byte above the three drops out of the product. */
    return (w * PF_WORD3_MUL) >> (32 - PF_WORDS3_BITS);
}

static inline uint32_t
bit3_of(uint32_t w)
{
    return w & 31u;
}

static inline void
bits3_set(uint32_t *bits3, uint16_t key, unsigned char c)
{
    uint32_t w = (uint32_t)key << 8 | c;

    bits3[word3_of(w)] |= 1u << bit3_of(w);
}

static inline unsigned
bucket(uint16_t key)
{
    return (unsigned)((key * 40503u) >> 4) & (PF_BUCKETS - 1);
}

/* How far a head of len bytes (two at least) is shifted right to drop
 * the bytes past it: less than 64, as shifts must be. */
static inline uint8_t
head_shift(unsigned len)
{
    return (uint8_t)(len >= 8 ? 0 : 8 * (8 - len));
}

static inline uint64_t
head_of(const char *lit, size_t len)
{
    uint64_t h = 0;

    for (size_t i = 0; i < 8; i++)
        h = h << 8 | (i < len ? (unsigned char)pf_lower(lit[i]) : 0u);
    return h;
}

/* Longer literals are bucketed by their first three bytes, which keeps
 * the entries a candidate position walks few; two-byte ones follow. */
static inline unsigned
entry_bucket(const struct pf_entry *e)
{
    if (e->len == 2)
        return PF_BUCKETS + bucket((uint16_t)(e->head >> 48));
    return hash24((uint32_t)(e->head >> 40)) >> 6;
}

_Static_assert(sizeof(((struct rule_pattern *)0)->pf_and) / sizeof(uint32_t) == RULE_PF_SETS - 1,
               "pf_and holds every set after the first");

/* Once, before the first scan: whether this machine takes the vector
 * path (rule_prefilter_scan_vector()). */
void rule_prefilter_scan_init(void);

#endif
