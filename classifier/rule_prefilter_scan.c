/*
 * rule_prefilter_scan.c - the prefilter's per-message pass: on first use
 * of a region, one pass over its text looks for every literal of the
 * region's table (a three-byte filter, then the table's buckets), and a
 * pattern none of whose literals occur is answered "no match" without
 * pcre2_match(). On-demand sets are first answered by their heads, with
 * memchr(). Where the CPU has AVX-512 (F, BW and VL), the filter is asked
 * of sixteen positions at once and the same positions are probed.
 * See rule_prefilter.c for the design. The tables are read-only; the
 * state (struct rule_prefilter_state) belongs to one call.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "ascii.h"
#include "message.h"
#include "rule.h"
#include "rule_prefilter_parse.h"
#include "rule_prefilter_table.h"

/* Whether scan_text() takes the vector path: chosen once, for this
 * machine, unless rule_prefilter_scan_vector() turned it off. */
static bool pf_vector;
static pthread_once_t pf_vector_once = PTHREAD_ONCE_INIT;

static void
pf_vector_init(void)
{
#ifdef ASCII_VECTOR
    pf_vector = ascii_vector_ok();
#endif
}

void
rule_prefilter_scan_init(void)
{
    pthread_once(&pf_vector_once, pf_vector_init);
}

bool
rule_prefilter_scan_vector(bool want)
{
    pthread_once(&pf_vector_once, pf_vector_init);
#ifdef ASCII_VECTOR
    if (!want)
        pf_vector = false;
    else
        pf_vector_init();
#else
    (void)want;
#endif
    return pf_vector;
}

static bool
eq_ci(const char *text, const char *lit, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (pf_lower(text[i]) != lit[i])
            return false;
    return true;
}

/* ASCII lower case of every byte. */
static const unsigned char low[256] = {
#define L4(i) L1(i), L1((i) + 1), L1((i) + 2), L1((i) + 3)
#define L1(i) ((i) >= 'A' && (i) <= 'Z' ? (i) - 'A' + 'a' : (i))
#define L16(i) L4(i), L4((i) + 4), L4((i) + 8), L4((i) + 12)
#define L64(i) L16(i), L16((i) + 16), L16((i) + 32), L16((i) + 48)
    L64(0),
    L64(64),
    L64(128),
    L64(192),
#undef L64
#undef L16
#undef L1
#undef L4
};

static bool wb_ok(const struct pf_entry *e, const char *s, size_t len, size_t i);

/* True when the head nd[0..n) occurs in s[0..len), ASCII case ignored:
 * a search for each nd[at], then a compare. */
static bool
needle_in(const char *s, size_t len, const char *nd, size_t n, size_t at, unsigned tests)
{
    const struct pf_entry e = {.tests = tests & 15u, .len = n & 127u};
    const char *p = s, *q;

    if (s == NULL || len < n)
        return false;
    while ((q = ascii_find_ci_at(p, len - (size_t)(p - s), nd, n, at)) != NULL) {
        if (wb_ok(&e, s, len, (size_t)(q - s)))
            return true;
        p = q + 1;
    }
    return false;
}

/* True when a literal of the check nd occurs in s[0..len) with its tests. */
static bool
check_found(const char *s, size_t len, const struct pf_needles *nd)
{
    /* A check's byte at is never its last: the search takes the pair. */
    for (size_t k = 0; k < nd->n; k++)
        if (needle_in(s, len, nd->s[k], nd->len[k], nd->at[k], nd->tests[k]))
            return true;
    return false;
}

/* A copy of s with each KELVIN SIGN written as k and each LONG S as s: a
 * literal occurs in the copy wherever PCRE2 could match it caselessly in
 * s, and offsets do not matter to the prefilter. NULL without memory. */
static char *
unfold_copy(const char *s, size_t len, size_t *ret_len)
{
    char *d = malloc(len ? len : 1);
    size_t j = 0;

    if (d == NULL)
        return NULL;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];

        if (c == 0xe2 && len - i >= 3 && (unsigned char)s[i + 1] == 0x84 &&
            (unsigned char)s[i + 2] == 0xaa) {
            d[j++] = 'k';
            i += 2;
        } else if (c == 0xc5 && len - i >= 2 && (unsigned char)s[i + 1] == 0xbf) {
            d[j++] = 's';
            i++;
        } else {
            d[j++] = (char)c;
        }
    }
    *ret_len = j;
    return d;
}

/* True when the tests of e hold around s[i..i + e->len). */
static bool
wb_ok(const struct pf_entry *e, const char *s, size_t len, size_t i)
{
    size_t end = i + e->len;

    if (e->tests == 0)
        return true;
    if ((e->tests & PF_WB_START) != 0 && i > 0 && pf_is_word((unsigned char)s[i - 1]))
        return false;
    if ((e->tests & PF_WB_END) != 0 && end < len && pf_is_word((unsigned char)s[end]))
        return false;
    if ((e->tests & PF_WS_START) != 0 && (i == 0 || !pf_is_space((unsigned char)s[i - 1])))
        return false;
    if ((e->tests & PF_WS_END) != 0 && (end >= len || !pf_is_space((unsigned char)s[end])))
        return false;
    return true;
}

/* Mark the patterns of the entries in rg's bucket h that occur at s[i];
 * w8 is the head of s[i..] (head_at()). Returns true once every pattern
 * of rg is marked. */
static inline bool
probe(const struct pf_region *rg, unsigned h, const char *s, size_t len, size_t i, uint64_t w8,
      bool wb, uint8_t *possible, uint32_t *left)
{
    /* Read once: a store to possible[] (bytes) may alias anything, and
     * would make the compiler load the bounds and entries afresh. */
    const struct pf_entry *e = rg->v + rg->start[h], *end = rg->v + rg->start[h + 1];

    for (; e < end; e++) {

        /* A bucket is sorted by head, and a head that fits is w8 or w8
         * with its last bytes zeroed: none past w8 fits. */
        if (e->head > w8)
            break;
        if (((w8 ^ e->head) >> e->shift) != 0 || possible[e->pattern])
            continue;
        if (e->len > 8 && (e->len > len - i || !eq_ci(s + i + 8, e->lit + 8, e->len - 8u)))
            continue;
        if (wb && !wb_ok(e, s, len, i))
            continue;
        possible[e->pattern] = PF_MAY;
        if (--*left == 0)
            return true;
    }
    return false;
}

/* The eight bytes from s[i] as a big-endian number, lowered, zero-padded
 * past len (no literal holds a NUL, so padding never fits a byte of
 * one). Only candidate positions need it, a tenth of a text's or fewer. */
static inline uint64_t
head_at(const char *s, size_t len, size_t i)
{
    const uint64_t high = UINT64_C(0x8080808080808080);
    uint64_t x = 0, t, upper;

    if (len - i < 8) {
        for (size_t k = 0; k < 8; k++)
            x = x << 8 | (i + k < len ? low[(unsigned char)s[i + k]] : 0u);
        return x;
    }
    memcpy(&x, s + i, sizeof(x));
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    x = __builtin_bswap64(x);
#endif
    /* Bytes 'A'..'Z' gain 0x20, as low[] gives, eight at once: in the
     * low seven bits of each byte, t + 0x3f carries into bit 7 from 'A'
     * on and t + 0x25 from '[' on; bytes with bit 7 set stay. */
    t = x & ~high;
    upper = (t + UINT64_C(0x3f3f3f3f3f3f3f3f)) & ~(t + UINT64_C(0x2525252525252525)) & ~x & high;
    return x | upper >> 2;
}

/* The first position from i on, before end, whose three bytes pass the
 * filter bits3 (two-byte entries set the bits of every third byte they
 * allow), or end. *w ends with the lowered bytes s[i..i + 2) on entry,
 * and holds s[j..j + 3) of the position j returned in its low 24 bits on
 * return (the byte before above them). Kept apart from the probes so that this loop, which sees
 * every byte, has the registers to itself. */
static size_t
next_candidate(const uint32_t *bits3, const char *s, size_t i, size_t end, uint32_t *w)
{
    const unsigned char *p = (const unsigned char *)s + 2;
    uint32_t x = *w;

    /* Four bytes a turn: the loop's own count and branch come a quarter
     * as often. */
    for (; i + 3 < end; i += 4) {
        x = x << 8 | low[p[i]];
        if (((bits3[word3_of(x)] >> bit3_of(x)) & 1u) != 0)
            goto out;
        x = x << 8 | low[p[i + 1]];
        if (((bits3[word3_of(x)] >> bit3_of(x)) & 1u) != 0) {
            i += 1;
            goto out;
        }
        x = x << 8 | low[p[i + 2]];
        if (((bits3[word3_of(x)] >> bit3_of(x)) & 1u) != 0) {
            i += 2;
            goto out;
        }
        x = x << 8 | low[p[i + 3]];
        if (((bits3[word3_of(x)] >> bit3_of(x)) & 1u) != 0) {
            i += 3;
            goto out;
        }
    }
    for (; i < end; i++) {
        x = x << 8 | low[p[i]];
        if (((bits3[word3_of(x)] >> bit3_of(x)) & 1u) != 0)
            break;
    }
out:
    *w = x;
    return i;
}

/* Probe the buckets of position i, which holds three bytes; true once
 * every pattern of rg is marked. */
static inline bool
probe_at(const struct pf_region *rg, const char *s, size_t len, size_t i, bool wb,
         uint8_t *possible, uint32_t *left)
{
    uint64_t w8 = head_at(s, len, i);
    uint16_t k = (uint16_t)(w8 >> 48);

    if (probe(rg, hash24((uint32_t)(w8 >> 40)) >> 6, s, len, i, w8, wb, possible, left))
        return true;
    return (rg->bits[k >> 3] & (1u << (k & 7))) != 0 &&
           probe(rg, PF_BUCKETS + bucket(k), s, len, i, w8, wb, possible, left);
}

#ifdef ASCII_VECTOR
/* The positions i + k, k < 64, whose three bytes pass the filter bits3,
 * as bit k of the mask returned; s[i..i + 66) lies in the text. Each
 * lane makes a position's three bytes as next_candidate() does, and
 * word3_of() and bit3_of() of them; the words are gathered. */
__attribute__((target("avx512f,avx512bw,avx512vl"))) static uint64_t
candidates64(const uint32_t *bits3, const char *s, size_t i)
{
    const __m512i k3 = _mm512_set1_epi32((int)PF_WORD3_MUL);
    uint64_t mask = 0;

    for (unsigned k = 0; k < 64; k += 16) {
        __m512i x = ascii_lanes_lower3(s + i + k);
        __m512i word = _mm512_srli_epi32(_mm512_mullo_epi32(x, k3), 32 - PF_WORDS3_BITS);
        __m512i words = _mm512_i32gather_epi32(word, (const void *)bits3, 4);
        __m512i bit = _mm512_srlv_epi32(words, _mm512_and_si512(x, _mm512_set1_epi32(31)));

        mask |= (uint64_t)_mm512_test_epi32_mask(bit, _mm512_set1_epi32(1)) << k;
    }
    return mask;
}

/* The vector path over the blocks of 64 positions whose bytes all lie in
 * s[0..len). Returns where the scalar scan goes on, or len once every
 * pattern is marked. A block's mask is built without a branch, and only
 * the positions that pass cost one. */
static size_t
scan_blocks(const struct pf_region *rg, const char *s, size_t len, bool wb, uint8_t *possible,
            uint32_t *left)
{
    size_t i = 0;

    for (; len - i >= 66; i += 64)
        for (uint64_t mask = candidates64(rg->bits3, s, i); mask != 0; mask &= mask - 1)
            if (probe_at(rg, s, len, i + (size_t)__builtin_ctzll(mask), wb, possible, left))
                return len;
    return i;
}
#endif

/* wb: test word boundaries; off for an unfolded copy, where a k or an s
 * stands for a character that is no word character. */
static void
scan_text(const struct pf_region *rg, const char *s, size_t len, bool wb, uint8_t *possible)
{
    uint32_t left = rg->n_patterns;
    /* The lowered bytes s[i..i + 3) in the low 24 bits, one more byte
     * shifted in per position; the bits above hold the byte before. */
    uint32_t w;
    size_t i = 0;

    if (len < 2 || left == 0)
        return;
#ifdef ASCII_VECTOR
    if (pf_vector) {
        i = scan_blocks(rg, s, len, wb, possible, &left);
        if (i == len)
            return;
    }
#endif
    /* Here i + 2 <= len. */
    w = (uint32_t)low[(unsigned char)s[i]] << 8 | low[(unsigned char)s[i + 1]];
    for (; (i = next_candidate(rg->bits3, s, i, len - 2, &w)) < len - 2; i++)
        if (probe_at(rg, s, len, i, wb, possible, &left))
            return;
    /* The last two bytes can only hold a two-byte literal. */
    w &= 0xffffu;
    if ((rg->bits[w >> 3] & (1u << (w & 7))) != 0)
        probe(rg, PF_BUCKETS + bucket((uint16_t)w), s, len, i, (uint64_t)w << 48, wb, possible,
              &left);
}

static void
scan_region(const struct pf_region *rg, const struct region *r, uint8_t *possible)
{
    const char *s = r->text;
    size_t len = r->text != NULL ? r->len : 0, n;
    char *copy;

    if (!ascii_has_fold_chars(s, len)) {
        scan_text(rg, s, len, true, possible);
        return;
    }
    copy = unfold_copy(s, len, &n);
    if (copy == NULL) {
        /* Without memory for the copy, every pattern runs. */
        for (size_t i = 0; i < rg->n; i++)
            possible[rg->v[i].pattern] = PF_MAY;
        return;
    }
    scan_text(rg, copy, n, false, possible);
    free(copy);
}

/* The bit of st->scanned for region id's table of group g. */
static uint32_t
scanned_bit(enum region_id id, unsigned g)
{
    return 1u << (2 * (unsigned)id + (g == PF_ON_DEMAND));
}

/* Scan region id of m with its table of group g, together with its pair
 * when that has the same text and is still to be scanned.
 *
 * When the report and code regions are the body's own lines sorted in
 * two (m->report_of_body), the first of the three asked is answered by
 * one pass over the body with all three tables of a kind: every literal
 * in a line of the report or code region is in that line of the body,
 * and the byte tests around it pass there too (a line's end is a line
 * break in all three; a report's first line has one before it in the
 * body, which passes a word-boundary and a white-space test alike). So
 * the pass marks every pattern the separate passes would, and maybe a
 * few more: those run and fail, as they would without the prefilter.
 * A literal spanning a line break could be in the report only, so a
 * table with one gets no trio (trio_build()). */
static void
scan_once(const struct rule_prefilter *pf, struct rule_prefilter_state *st, const struct message *m,
          enum region_id id, unsigned g)
{
    const struct region *x = &m->regions[id];
    uint32_t trio_bits =
        scanned_bit(REGION_BODY, g) | scanned_bit(REGION_REPORT, g) | scanned_bit(REGION_CODE, g);

    if (m->report_of_body && g < PF_KINDS && pf->trios[g] != NULL &&
        (id == REGION_BODY || id == REGION_REPORT || id == REGION_CODE) &&
        (st->scanned & trio_bits) == 0) {
        scan_region(pf->trios[g], &m->regions[REGION_BODY], st->possible);
        st->scanned |= trio_bits;
        return;
    }

    for (size_t k = 0; k < PF_PAIRS; k++) {
        enum region_id other = pf_pairs[k].a == id ? pf_pairs[k].b : pf_pairs[k].a;
        const struct region *y = &m->regions[other];
        const struct pf_region *rg = pf->pairs[k * PF_GROUPS + g];

        if (rg == NULL || (pf_pairs[k].a != id && pf_pairs[k].b != id) ||
            (st->scanned & scanned_bit(other, g)) != 0 || x->text == NULL || y->text == NULL ||
            x->len != y->len || memcmp(x->text, y->text, x->len) != 0)
            continue;
        scan_region(rg, x, st->possible);
        st->scanned |= scanned_bit(id, g) | scanned_bit(other, g);
        return;
    }
    scan_region(pf->regions[id * PF_GROUPS + g], x, st->possible);
    st->scanned |= scanned_bit(id, g);
}

/* Set id on region rid (not scanned yet) by its heads: 1 may match, 0
 * cannot, -1 unknown (no heads, or the region's budget is spent). */
static int
heads_answer(const struct rule_prefilter *pf, struct rule_prefilter_state *st,
             const struct region *r, enum region_id rid, uint32_t id)
{
    const struct pf_needles *nd = &pf->needles[id];
    size_t len = r->text != NULL ? r->len : 0;
    bool found = false;

    if (st->possible[id] != 0)
        return (st->possible[id] & PF_MAY) != 0;
    if (nd->n == 0 || st->searched[rid] + nd->n > PF_NEEDLE_BUDGET)
        return -1;
    st->searched[rid] = (uint8_t)(st->searched[rid] + nd->n);
    for (size_t k = 0; k < nd->n && !found; k++)
        found = needle_in(r->text, len, nd->s[k], nd->len[k], nd->at[k], nd->tests[k]);
    st->possible[id] = (uint8_t)(PF_BY_HEADS | (found ? PF_MAY : 0u));
    return found;
}

static int heads_answer_pattern(const struct rule_prefilter *pf, struct rule_prefilter_state *st,
                                const struct message *m, const struct rule_pattern *pat);

/* True when region rid of m holds a character PCRE2 folds to k or s; a
 * search in the text as it is could then miss a literal. */
static bool
region_folds(struct rule_prefilter_state *st, const struct message *m, enum region_id rid)
{
    const struct region *r = &m->regions[rid];

    if ((st->fold_known & (1u << rid)) == 0) {
        st->fold_known |= 1u << rid;
        if (ascii_has_fold_chars(r->text, r->text != NULL ? r->len : 0))
            st->fold |= 1u << rid;
    }
    return (st->fold & (1u << rid)) != 0;
}

/* A split pattern whose own set has too many heads may match if one of
 * its alternatives may, each asked by its own heads; as heads_answer().
 * rule_eval.c then asks the alternatives, already answered. */
static int
heads_answer_split(const struct rule_prefilter *pf, struct rule_prefilter_state *st,
                   const struct message *m, const struct pf_split *sp)
{
    for (size_t i = 0; i < sp->n; i++) {
        int a;

        if (sp->v[i].pf_id == UINT32_MAX)
            return 1; /* that alternative always runs */
        a = heads_answer_pattern(pf, st, m, &sp->v[i]);
        if (a != 0)
            return a;
    }
    return 0;
}

/* pat on its region, not scanned yet, by the heads of its sets; as
 * heads_answer(). A further set without heads is taken as found. Text
 * with k or s folds needs the scan's unfolded copy. */
static int
heads_answer_pattern(const struct rule_prefilter *pf, struct rule_prefilter_state *st,
                     const struct message *m, const struct rule_pattern *pat)
{
    enum region_id rid = pat->pf_region;
    const struct region *r = &m->regions[rid];
    int a;

    if (region_folds(st, m, rid))
        return -1;
    if (pf->needles[pat->pf_id].n == 0 && pat->pf_split < pf->n_splits)
        return heads_answer_split(pf, st, m, &pf->splits[pat->pf_split]);
    a = heads_answer(pf, st, r, rid, pat->pf_id);
    for (size_t k = 0; k < RULE_PF_SETS - 1 && a == 1; k++)
        if (pat->pf_and[k] != UINT32_MAX && heads_answer(pf, st, r, rid, pat->pf_and[k]) == 0)
            a = 0;
    return a;
}

void
rule_prefilter_scan_release(struct rule_prefilter_state *st)
{
    free(st->possible);
    free(st->checked);
    memset(st, 0, sizeof(*st));
}

/* False when pat's check set (add_check()) is absent from its region. */
static bool
check_holds(const struct rule_prefilter *pf, struct rule_prefilter_state *st,
            const struct message *m, const struct rule_pattern *pat)
{
    const struct region *r = &m->regions[pat->pf_region];
    uint32_t id = pat->pf_check;

    if (id == UINT32_MAX)
        return true;
    if (st->checked == NULL) {
        st->checked = calloc(pf->n_checks, 1);
        /* Without memory to remember, the pattern runs. */
        if (st->checked == NULL)
            return true;
    }
    if (st->checked[id] == 0) {
        bool found = region_folds(st, m, pat->pf_region) ||
                     check_found(r->text, r->text != NULL ? r->len : 0, &pf->checks[id]);

        st->checked[id] = found ? 1 : 2;
    }
    return st->checked[id] == 1;
}

bool
rule_prefilter_scan_possible(struct rule_prefilter_state *st, const struct rule_set *set,
                             const struct message *m, const struct rule_pattern *pat)
{
    const struct rule_prefilter *pf = set->pf;
    unsigned g = PF_ON_DEMAND;

    if (pf == NULL || pat->pf_id == UINT32_MAX)
        return true;
    if ((unsigned)m->kind < PF_KINDS && (pat->pf_groups & (1u << m->kind)) != 0)
        g = (unsigned)m->kind;
    else if ((pat->pf_groups & (1u << PF_ON_DEMAND)) == 0)
        return true; /* rule_eval.c never asks it of this kind; if it did, it runs */
    if ((st->scanned & scanned_bit(pat->pf_region, g)) == 0) {
        if (st->possible == NULL) {
            st->possible = calloc(pf->n_patterns, 1);
            /* Without memory to remember, every pattern runs. */
            if (st->possible == NULL)
                return true;
        }
        if (g == PF_ON_DEMAND) {
            int a = heads_answer_pattern(pf, st, m, pat);

            if (a >= 0)
                return a == 1 && check_holds(pf, st, m, pat);
        }
        scan_once(pf, st, m, pat->pf_region, g);
    }
    /* A set the heads ruled out is skipped by the scan, and stays so. */
    if ((st->possible[pat->pf_id] & PF_MAY) == 0)
        return false;
    for (size_t k = 0; k < RULE_PF_SETS - 1; k++)
        if (pat->pf_and[k] != UINT32_MAX && (st->possible[pat->pf_and[k]] & PF_MAY) == 0)
            return false;
    return check_holds(pf, st, m, pat);
}
