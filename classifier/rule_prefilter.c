/*
 * rule_prefilter.c - skip patterns whose required literals are absent.
 *
 * At load time each pattern's source is read by a small, conservative
 * analyser that computes a set of ASCII-lowercased literals such that
 * every match of the pattern contains at least one of them (the idea of
 * RE2's prefilter). Syntax it does not fully understand makes it give up,
 * and the pattern then always runs. Bytes of 0x80 and above never appear
 * in a literal, and case is ignored everywhere, so inline (?i) and (?-i)
 * need no tracking; the only ASCII letters that PCRE2 folds to non-ASCII
 * characters (k: U+212A, s: U+017F) are handled by scanning a copy of a
 * region that contains either, with them written as k and s.
 *
 * A literal may also carry tests on the byte before and after it: a word
 * boundary (from \b) or white space (from \s, which without PCRE2_UCP is
 * ASCII only). They let "\bAI\b" filter on "ai" as a word, and "\s+of\s+"
 * on " of ", without putting " o" and "\to" into the table. A test only
 * ever drops a literal occurrence the pattern could not use.
 *
 * Per message, the first pattern evaluated on a region triggers one pass
 * over that region looking for all literals of all patterns on it (a
 * filter on three bytes, then a table bucketed by them); a pattern none of whose
 * literals occur cannot match, so rule_eval.c skips pcre2_match() and
 * takes the result PCRE2 would have given: no match.
 * The report is often the body's very text, and a patch's report its
 * changelog's: such a pair is scanned once, with both regions' tables.
 *
 * A pass costs more the more literals its table holds, and most patterns
 * are asked of few messages: those of helpers (asked when a combination
 * reads them) and of rules with a measure or combination to pass first
 * (rule_eval.c looks at those before any pattern; a none_of passes
 * nearly always and does not count), such as the threat-
 * model rules behind their gate, which a patch seldom passes. So each
 * region has a table per message kind, with the patterns every message
 * of that kind asks, and one table with the rest, scanned only when one
 * of them is asked: a patch mail's body pass no longer looks for "root",
 * "device" or "int". Until then, an on-demand pattern whose literals
 * share a few heads of three bytes or more is answered alone, by looking
 * for those heads with memchr() (see needles_build()): a head is part of
 * every literal it stands for, so a set none of whose heads occur cannot
 * match either. A patch mail asks a few such patterns of its body (a
 * Fixes: tag); past a few searches on one region, or for a set with no
 * heads, the region gets its on-demand pass after all.
 *
 * A literal set is only as good as its weakest alternative: "\bCONFIG_\w+|
 * \b(?:root|user)\b|--?[a-z]\w+" has none, and PCRE2 tries every
 * alternative at nearly every position. So a match or nomatch pattern
 * made of top-level alternatives is also compiled one alternative at a
 * time, each with its own literals; rule_eval.c runs the ones that may
 * match and takes the leftmost match, the earliest alternative on a tie,
 * which is the match PCRE2 gives for the whole pattern (at each start
 * position it tries the alternatives in order). That holds only when an
 * alternative matches the same alone as inside the whole, so patterns
 * with back references, subroutine calls, \K, \G, verbs, conditionals or
 * a top-level option setting are not split. A match or depth limit then
 * applies to each alternative instead of the whole.
 *
 * The three-byte filter is asked at every byte of a text. Where the CPU
 * has AVX-512 (F, BW and VL), it is asked of sixteen positions at once,
 * with their filter words gathered, and the positions that pass are then
 * probed one by one as before: the same positions, so the same answers
 * (rule_prefilter_scan_vector()).
 *
 * The tables belong to the rule set and are read-only after loading; the
 * per-message state (struct rule_prefilter_state) belongs to one call.
 *
 * Three files share the work: rule_prefilter_parse.c reads a pattern's
 * source into literal sets, this file builds the tables from them, and
 * rule_prefilter_scan.c makes the per-message pass; what the builder and
 * the pass share is in rule_prefilter_table.h.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "message.h"
#include "rule.h"
#include "rule_prefilter_parse.h"
#include "rule_prefilter_table.h"
#include "rule_prefix.h"

/* Shortest literal of a further set (pf_and) that the tables take. A
 * two-byte literal marks 256 bits of the three-byte filter (one per third
 * byte) and so sends more of every text to the bucket walk, while a
 * further set only narrows the first one: measured on real mail, such
 * sets cost the scan more than the regex runs they save. The analyser
 * still reports them (rule_prefilter_parse_sets()). */
#define PF_AND_LIT_MIN 3u

/* Strength of the weakest literal of v (a two-byte word "ai" filters like
 * a literal of three bytes, far better than "ai" inside words). */
static size_t
shortest(const struct strv *v)
{
    size_t m = SIZE_MAX;

    for (size_t i = 0; i < v->n; i++) {
        size_t n = rule_prefilter_lit_strength(v->v[i]);

        if (n < m)
            m = n;
    }
    return m;
}

/* How common a byte is in patch mail, a letter in either case: its place
 * in this list, rarest first, as counted over kernel patches and
 * reports. A head is looked for by its rarest byte. */
static unsigned
byte_weight(unsigned char c)
{
    static const char by_freq[] =
        "^~$\\%!'`?|}{#&\"][<*zqj>@9758=;3w,64)y(/+:kxv12hbgp.-_um0fldcaonsirte ";
    const char *p = c != 0 ? strchr(by_freq, c) : NULL;

    return p != NULL ? (unsigned)(p - by_freq) : (unsigned)sizeof(by_freq);
}

/* The heads of the literals lits[0..n) (with their tests) into *nd: each
 * literal joins the first head it shares at least share bytes with (the
 * head is cut to what they share), or starts a head of its own. False
 * when that makes more than PF_NEEDLES_MAX heads, or a literal is too
 * short to be one. A head keeps the tests its literals all have, and
 * those at its end only while it is not cut. */
static bool
needles_group(struct pf_needles *nd, char *const *lits, const uint8_t *tests, size_t n,
              size_t share)
{
    memset(nd, 0, sizeof(*nd));
    for (size_t i = 0; i < n; i++) {
        const char *l = lits[i];
        size_t len = strlen(l), k;

        for (k = 0; k < nd->n; k++) {
            size_t c = 0;

            while (c < nd->len[k] && c < len && nd->s[k][c] == l[c])
                c++;
            if (c >= share || (c == len && c == nd->len[k])) {
                nd->tests[k] &= tests[i];
                if (c < len || c < nd->len[k])
                    nd->tests[k] &= PF_WB_START | PF_WS_START;
                nd->len[k] = (uint8_t)c;
                break;
            }
        }
        if (k < nd->n)
            continue;
        if (len < PF_NEEDLE_MIN || len > PF_LIT_MAX || nd->n == PF_NEEDLES_MAX)
            return false;
        nd->s[nd->n] = l;
        nd->tests[nd->n] = tests[i];
        nd->len[nd->n++] = (uint8_t)len;
    }
    return true;
}

/* The heads of a set: the longest that stay within PF_NEEDLES_MAX, as
 * short heads stop the search at every common word; none when even
 * PF_NEEDLE_MIN bytes do not. */
static void
needles_build(struct pf_needles *nd, char *const *lits, const uint8_t *tests, size_t n)
{
    static const size_t shares[] = {12, 8, 5, PF_NEEDLE_MIN};
    size_t s = 0;

    while (!needles_group(nd, lits, tests, n, shares[s]))
        if (++s == sizeof(shares) / sizeof(shares[0])) {
            memset(nd, 0, sizeof(*nd));
            return;
        }
    for (size_t k = 0; k < nd->n; k++) {
        for (size_t j = 1; j < nd->len[k]; j++)
            if (byte_weight((unsigned char)nd->s[k][j]) <
                byte_weight((unsigned char)nd->s[k][nd->at[k]]))
                nd->at[k] = (uint8_t)j;
    }
}

/* Add literal lit (borrowed), with the tests flags, of set id to rg; its
 * entries have room for it. */
static void
add_entry(struct pf_region *rg, const char *lit, unsigned flags, uint32_t id)
{
    struct pf_entry *e = &rg->v[rg->n++];
    uint16_t key = key2(lit);

    e->lit = lit;
    e->len = strlen(e->lit) & 127u;
    e->head = head_of(e->lit, e->len);
    e->shift = head_shift(e->len);
    e->pattern = id;
    e->tests = flags & 15u;
    if (e->len == 2) {
        rg->bits[key >> 3] |= (uint8_t)(1u << (key & 7));
        for (unsigned c = 0; c < 256; c++) {
            /* The byte after the literal must be white space, or a
             * non-word byte; in an unfolded copy, where the tests
             * are off, a k or an s may stand for a non-word one. */
            if ((flags & PF_WS_END) != 0 && !pf_is_space((unsigned char)c))
                continue;
            if ((flags & PF_WB_END) != 0 && pf_is_word((unsigned char)c) && c != 'k' && c != 's')
                continue;
            bits3_set(rg->bits3, key, (unsigned char)c);
        }
    } else {
        bits3_set(rg->bits3, key, (unsigned char)e->lit[2]);
    }
}

/* Shortest shared beginning that stands for several literals of a set
 * (keys_collapse()). */
#define PF_COLLAPSE_MIN 10u

struct pf_key {
    const char *core; /* after the tests byte */
    size_t len;
    unsigned start; /* its PF_WB_START and PF_WS_START tests */
};

static int
key_cmp(const void *a, const void *b)
{
    const struct pf_key *x = a, *y = b;

    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    return strcmp(x->core, y->core);
}

static size_t
lcp(const struct pf_key *a, const struct pf_key *b)
{
    size_t n = 0;

    while (n < a->len && n < b->len && a->core[n] == b->core[n])
        n++;
    return n;
}

/* Keys of a set (a tests byte, then the core) in *keys, lens in key_len,
 * with every run of them that shares its start tests and its first
 * PF_COLLAPSE_MIN bytes or more made one key: that shared beginning, with
 * the start tests only. Every match holds a literal of the set, and so
 * that literal's beginning, at the same place: the set still filters
 * exactly. Generated variants ("let me know if you need any further",
 * "... have any more", and dozens more) share a bucket of the table and
 * are otherwise each compared at every occurrence of their first bytes. */
static int
keys_collapse(struct strv *keys, size_t *key_len)
{
    struct pf_key k[PF_REQ_MAX];
    struct strv out = {0};
    size_t n = keys->n, out_len[PF_REQ_MAX], a = 0;
    int r = 0;

    if (n < 2)
        return 0;
    for (size_t i = 0; i < n; i++) {
        unsigned flags = (unsigned)(keys->v[i][0] - '@');

        k[i].core = keys->v[i] + 1;
        k[i].len = key_len[i] - 1;
        k[i].start = flags & (PF_WB_START | PF_WS_START);
    }
    qsort(k, n, sizeof(k[0]), key_cmp);
    while (a < n && r == 0) {
        char buf[PF_LIT_MAX + 2];
        size_t b = a + 1, m = k[a].len, len;

        for (; b < n && k[b].start == k[a].start; b++) {
            size_t l = lcp(&k[b - 1], &k[b]);

            if (l < PF_COLLAPSE_MIN)
                break;
            m = l < m ? l : m;
        }
        if (b - a >= 2) {
            buf[0] = (char)('@' + k[a].start);
            memcpy(buf + 1, k[a].core, m);
            len = m + 1;
        } else {
            memcpy(buf, k[a].core - 1, k[a].len + 1);
            len = k[a].len + 1;
        }
        if (!rule_prefilter_lit_has(&out, out.n, out_len, buf, len)) {
            r = strv_add(&out, buf, len, PF_REQ_MAX);
            if (r == 0)
                out_len[out.n - 1] = len;
        }
        a = b;
    }
    if (r < 0) {
        strv_release(&out);
        return r;
    }
    strv_release(keys);
    *keys = out;
    memcpy(key_len, out_len, out.n * sizeof(out_len[0]));
    return 0;
}

/* The keys of a literal set: cores with their tests, each once ("found "
 * and "found\t" are one entry); the first byte of a key is its PF_*
 * tests, key_len[] each key's length. Returns 0, 1 when a literal is too
 * short for the set to filter anything, or -ENOMEM. */
static int
set_keys(const struct strv *lits, struct strv *keys, size_t *key_len)
{
    for (size_t i = 0; i < lits->n; i++) {
        char buf[PF_LIT_MAX + 2];
        unsigned flags;
        size_t n = rule_prefilter_lit_core(lits->v[i], buf + 1, &flags);
        int r;

        if (n < PF_LIT_MIN)
            return 1;
        buf[0] = (char)('@' + flags);
        if (rule_prefilter_lit_has(keys, keys->n, key_len, buf, n + 1))
            continue;
        r = strv_add(keys, buf, n + 1, PF_REQ_MAX);
        if (r < 0)
            return r;
        key_len[keys->n - 1] = n + 1;
    }
    return 0;
}

/* Room for one more pattern's needles: doubled at each power of two. */
static int
needles_grow(struct rule_prefilter *pf)
{
    struct pf_needles *nd;

    if ((pf->n_patterns & (pf->n_patterns - 1)) != 0)
        return 0;
    nd = realloc(pf->needles, (pf->n_patterns ? 2 * pf->n_patterns : 1) * sizeof(*nd));
    if (nd == NULL)
        return -ENOMEM;
    pf->needles = nd;
    return 0;
}

/* Register one literal set of a pattern in the tables rgs[0..n_rg) under
 * a new id. */
static int
add_set(struct rule_prefilter *pf, struct pf_region *const *rgs, size_t n_rg,
        const struct strv *lits, uint32_t *ret_id)
{
    struct strv keys = {0};
    struct pf_entry *v;
    size_t first, key_len[PF_REQ_MAX]; /* keys holds at most PF_REQ_MAX */
    uint8_t tests[PF_REQ_MAX];
    uint32_t id;
    int r;

    r = set_keys(lits, &keys, key_len);
    if (r == 0)
        r = keys_collapse(&keys, key_len);
    if (r != 0) {
        r = r < 0 ? r : 0;
        goto out;
    }
    first = pf->lits.n;
    for (size_t i = 0; i < keys.n; i++) {
        r = strv_add(&pf->lits, keys.v[i] + 1, strlen(keys.v[i] + 1), SIZE_MAX);
        if (r < 0)
            goto out;
    }
    r = 0;
    if (pf->n_patterns >= PF_PATTERN_MAX)
        goto out;
    r = needles_grow(pf);
    if (r < 0)
        goto out;
    for (size_t i = 0; i < keys.n; i++)
        tests[i] = (uint8_t)((unsigned)(keys.v[i][0] - '@') & 15u);
    needles_build(&pf->needles[pf->n_patterns], pf->lits.v + first, tests, keys.n);
    id = pf->n_patterns++;
    for (size_t t = 0; t < n_rg; t++) {
        struct pf_region *rg = rgs[t];

        v = realloc(rg->v, (rg->n + keys.n) * sizeof(*v));
        if (v == NULL) {
            r = -ENOMEM;
            goto out;
        }
        rg->v = v;
        rg->n_patterns++;
        for (size_t i = first; i < pf->lits.n; i++)
            add_entry(rg, pf->lits.v[i], (unsigned)(keys.v[i - first][0] - '@'), id);
    }
    *ret_id = id;
out:
    strv_release(&keys);
    return r;
}

/* Keep lits, a set of pat's too short for the tables (PF_AND_LIT_MIN), as
 * its check: looked for in its region with memchr() when the tables let
 * pat run, before pcre2_match() goes over the region. "\\b(?:I|we)\\s+
 * used\\s+(?:AI|LLM|...)\\b" passes the tables on nearly every patch by
 * "used", and PCRE2 then stops at every I and w of the body; "ai" as a
 * word is rare. Literals are looked for whole, a pair of bytes at a
 * time, so a set of at most PF_NEEDLES_MAX of them is kept; a larger one
 * is not. */
static int
add_check(struct rule_prefilter *pf, struct rule_pattern *pat, const struct strv *lits)
{
    struct pf_needles nd = {0};
    size_t first = pf->lits.n;
    int r;

    if (lits->n > PF_NEEDLES_MAX || pf->n_checks >= PF_PATTERN_MAX)
        return 0;
    for (size_t i = 0; i < lits->n; i++) {
        char buf[PF_LIT_MAX + 1];
        unsigned flags;
        size_t n = rule_prefilter_lit_core(lits->v[i], buf, &flags);

        if (n < PF_LIT_MIN)
            return 0;
        r = strv_add(&pf->lits, buf, n, SIZE_MAX);
        if (r < 0)
            return r;
        nd.s[nd.n] = pf->lits.v[first + i];
        nd.len[nd.n] = (uint8_t)n;
        nd.tests[nd.n] = (uint8_t)(flags & 15u);
        for (size_t j = 1; j + 1 < n; j++)
            if (byte_weight((unsigned char)buf[j]) < byte_weight((unsigned char)buf[nd.at[nd.n]]))
                nd.at[nd.n] = (uint8_t)j;
        nd.n++;
    }
    if ((pf->n_checks & (pf->n_checks - 1)) == 0) {
        /* Doubled at each power of two. */
        struct pf_needles *v =
            realloc(pf->checks, (pf->n_checks ? 2 * pf->n_checks : 1) * sizeof(*v));

        if (v == NULL)
            return -ENOMEM;
        pf->checks = v;
    }
    pf->checks[pf->n_checks] = nd;
    pat->pf_check = pf->n_checks++;
    return 0;
}

/* The tables of region for each group in groups, made where missing,
 * into rgs[], their count in *n_rg. */
static int
region_tables(struct rule_prefilter *pf, enum region_id region, unsigned groups,
              struct pf_region **rgs, size_t *n_rg)
{
    for (unsigned g = 0; g < PF_GROUPS; g++) {
        struct pf_region **slot = &pf->regions[region * PF_GROUPS + g];

        if ((groups & (1u << g)) == 0)
            continue;
        if (*slot == NULL) {
            *slot = calloc(1, sizeof(**slot));
            if (*slot == NULL)
                return -ENOMEM;
        }
        rgs[(*n_rg)++] = *slot;
    }
    return 0;
}

/* Add pat's literal sets to region's tables of the groups in groups (bit
 * per group: an enum classifier_kind, or PF_ON_DEMAND). */
static int
add_pattern(struct rule_prefilter *pf, struct rule_pattern *pat, enum region_id region,
            unsigned groups)
{
    struct pf_region *rgs[PF_GROUPS];
    struct strv sets[RULE_PF_SETS];
    size_t n_sets = 0, n_rg = 0;
    int r;

    pat->pf_id = UINT32_MAX;
    pat->pf_split = UINT32_MAX;
    pat->pf_check = UINT32_MAX;
    for (size_t k = 0; k < RULE_PF_SETS - 1; k++)
        pat->pf_and[k] = UINT32_MAX;
    groups &= (1u << PF_GROUPS) - 1;
    /* In no table, nothing would ever mark it: it always runs. */
    if (pat->code == NULL || (unsigned)region >= REGION__COUNT || groups == 0)
        return 0;
    r = rule_prefilter_parse_marked(pat->source, pat->len, pat->options, sets, &n_sets);
    if (r < 0 || n_sets == 0)
        return r;
    if (!rule_prefilter_lit_usable(&sets[0]))
        goto out;
    r = region_tables(pf, region, groups, rgs, &n_rg);
    for (size_t k = 0, a = 0; k < n_sets && r == 0; k++) {
        if (k > 0 && !rule_prefilter_lit_usable(&sets[k]))
            continue;
        if (k > 0 && shortest(&sets[k]) < PF_AND_LIT_MIN) {
            if (pat->pf_check == UINT32_MAX)
                r = add_check(pf, pat, &sets[k]);
            continue;
        }
        r = add_set(pf, rgs, n_rg, &sets[k], k == 0 ? &pat->pf_id : &pat->pf_and[a++]);
    }
    if (r < 0)
        goto out;
    pat->pf_region = region;
    pat->pf_groups = (uint8_t)groups;
out:
    for (size_t k = 0; k < RULE_PF_SETS; k++)
        strv_release(&sets[k]);
    return r;
}

/* Compile pat's alternatives, each with its own literals, when it splits;
 * groups as for add_pattern(). */
static int
add_split(struct rule_prefilter *pf, struct rule_pattern *pat, enum region_id region,
          unsigned groups)
{
    struct strv alts;
    struct pf_split *v, *sp;
    int r;

    if (pat->code == NULL || (unsigned)region >= REGION__COUNT)
        return 0;
    r = rule_prefilter_split_alternatives(pat->source, pat->len, pat->options, &alts);
    if (r < 0 || alts.n == 0)
        return r;
    v = realloc(pf->splits, (pf->n_splits + 1) * sizeof(*v));
    if (v == NULL) {
        r = -ENOMEM;
        goto out;
    }
    pf->splits = v;
    sp = &pf->splits[pf->n_splits++];
    sp->n = 0;
    sp->v = calloc(alts.n, sizeof(*sp->v));
    if (sp->v == NULL) {
        r = -ENOMEM;
        goto out;
    }
    for (size_t i = 0; i < alts.n; i++) {
        struct rule_pattern *b = &sp->v[sp->n++];
        PCRE2_SIZE off;
        int err;

        b->pf_id = b->pf_split = UINT32_MAX;
        b->options = pat->options;
        b->len = strlen(alts.v[i]);
        b->source = strdup(alts.v[i]);
        if (b->source == NULL) {
            r = -ENOMEM;
            goto out;
        }
        b->code = pcre2_compile((PCRE2_SPTR)b->source, b->len, RULE_PCRE2_OPTIONS | b->options,
                                &err, &off, NULL);
        /* The whole compiled, so this should too; if not, run the whole. */
        if (b->code == NULL)
            goto out;
        (void)pcre2_jit_compile(b->code, PCRE2_JIT_COMPLETE);
        if (pcre2_pattern_info(b->code, PCRE2_INFO_CAPTURECOUNT, &b->captures) != 0)
            b->captures = 0;
        r = rule_prefix_build(b->code, b->source, b->len, RULE_PCRE2_OPTIONS | b->options,
                              &b->prefix);
        if (r < 0)
            goto out;
        r = add_pattern(pf, b, region, groups);
        if (r < 0)
            goto out;
    }
    pat->pf_split = pf->n_splits - 1;
out:
    strv_release(&alts);
    return r;
}

const struct rule_pattern *
rule_prefilter_alternatives_of(const struct rule_set *set, const struct rule_pattern *pat,
                               size_t *n)
{
    if (set->pf == NULL || pat->pf_split == UINT32_MAX || pat->pf_split >= set->pf->n_splits)
        return NULL;
    *n = set->pf->splits[pat->pf_split].n;
    return set->pf->splits[pat->pf_split].v;
}

/* A table and its entries; accepts NULL. */
static void
pf_region_free(struct pf_region *rg)
{
    if (rg != NULL)
        free(rg->v);
    free(rg);
}

/* The union of the tables in[0..n) (NULL ones left out) in *ret: their
 * entries and filters. *ret stays NULL when fewer than two are given. */
static int
union_build(const struct pf_region *const *in, size_t n, struct pf_region **ret)
{
    struct pf_region *rg;
    size_t given = 0, entries = 0;

    for (size_t k = 0; k < n; k++) {
        given += in[k] != NULL;
        entries += in[k] != NULL ? in[k]->n : 0;
    }
    if (given < 2)
        return 0;
    rg = calloc(1, sizeof(*rg));
    if (rg == NULL)
        return -ENOMEM;
    rg->v = malloc((entries ? entries : 1) * sizeof(*rg->v));
    if (rg->v == NULL) {
        free(rg);
        return -ENOMEM;
    }
    for (size_t k = 0; k < n; k++) {
        const struct pf_region *a = in[k];

        if (a == NULL)
            continue;
        memcpy(rg->v + rg->n, a->v, a->n * sizeof(*rg->v));
        rg->n += a->n;
        for (size_t i = 0; i < sizeof(rg->bits); i++)
            rg->bits[i] |= a->bits[i];
        for (size_t i = 0; i < PF_BITS3 / 32; i++)
            rg->bits3[i] |= a->bits3[i];
        rg->n_patterns += a->n_patterns;
    }
    *ret = rg;
    return 0;
}

/* The table of pair k for group g: the entries and filters of both its
 * regions' tables of g. */
static int
pair_build(struct rule_prefilter *pf, size_t k, unsigned g)
{
    const struct pf_region *in[2] = {pf->regions[pf_pairs[k].a * PF_GROUPS + g],
                                     pf->regions[pf_pairs[k].b * PF_GROUPS + g]};

    if (in[0] == NULL || in[1] == NULL)
        return 0;
    return union_build(in, 2, &pf->pairs[k * PF_GROUPS + g]);
}

/* Whether a literal of rg holds a line break: one could span two lines
 * that are next to each other in the report or code region only. */
static bool
has_line_break(const struct pf_region *rg)
{
    for (size_t x = 0; rg != NULL && x < rg->n; x++)
        if (memchr(rg->v[x].lit, '\n', rg->v[x].len) != NULL)
            return true;
    return false;
}

/* The table of kind g for the body, report and code regions at once (see
 * scan_once()); none when a literal of the report or code table holds a
 * line break. */
static int
trio_build(struct rule_prefilter *pf, unsigned g)
{
    const struct pf_region *in[3] = {pf->regions[REGION_BODY * PF_GROUPS + g],
                                     pf->regions[REGION_REPORT * PF_GROUPS + g],
                                     pf->regions[REGION_CODE * PF_GROUPS + g]};

    if (has_line_break(in[1]) || has_line_break(in[2]))
        return 0;
    return union_build(in, 3, &pf->trios[g]);
}

/* Sort rg's entries into their buckets, each by head, and set the
 * bucket bounds: one count of the buckets gives both the bounds and each
 * entry's place, and a bucket holds few entries, which insertion then
 * orders. Entries alike stay in the order they were added. */
static int
region_finish(struct pf_region *rg)
{
    struct pf_entry *v;

    if (rg == NULL)
        return 0;
    v = malloc((rg->n ? rg->n : 1) * sizeof(*v));
    if (v == NULL)
        return -ENOMEM;
    memset(rg->start, 0, sizeof(rg->start));
    for (size_t i = 0; i < rg->n; i++)
        rg->start[entry_bucket(&rg->v[i]) + 1]++;
    for (unsigned h = 0; h < 2 * PF_BUCKETS; h++)
        rg->start[h + 1] += rg->start[h];
    /* start[h] is where bucket h begins; it moves on as entries go in,
     * and ends where bucket h + 1 begins. */
    for (size_t i = 0; i < rg->n; i++)
        v[rg->start[entry_bucket(&rg->v[i])]++] = rg->v[i];
    memmove(rg->start + 1, rg->start, sizeof(rg->start) - sizeof(rg->start[0]));
    rg->start[0] = 0;
    for (unsigned h = 0; h < 2 * PF_BUCKETS; h++) {
        for (size_t i = rg->start[h] + 1; i < rg->start[h + 1]; i++) {
            struct pf_entry e = v[i];
            size_t k = i;

            for (; k > rg->start[h] && v[k - 1].head > e.head; k--)
                v[k] = v[k - 1];
            v[k] = e;
        }
    }
    free(rg->v);
    rg->v = v;
    return 0;
}

/* True for a measure or combination condition, which rule_eval.c looks
 * at before any pattern. */
static bool
is_gate(const struct rule_cond *c)
{
    switch (c->type) {
    case RULE_COND_MEASURE:
    case RULE_COND_ALL_OF:
    case RULE_COND_ANY_OF:
    case RULE_COND_AT_LEAST:
    case RULE_COND_NONE_OF:
        return true;
    default:
        return false;
    }
}

/* The first measure or combination condition of rule, or NULL. */
static const struct rule_cond *
first_gate(const struct rule *rule)
{
    for (size_t c = 0; c < rule->n_conds; c++)
        if (is_gate(&rule->conds[c]))
            return &rule->conds[c];
    return NULL;
}

/* Which rules a patch mail asks as a rule: every rule for patches but the
 * helpers, and the helpers the first gate of such a rule names (the
 * threat-model gate and the claims it reads), in *ret (calloc'ed, one per
 * rule). References point backwards, so one pass from the end sees every
 * asker before the helpers it names. */
static int
asked_by_patches(const struct rule_set *set, bool **ret)
{
    bool *asked = calloc(set->n_rules ? set->n_rules : 1, sizeof(*asked));

    if (asked == NULL)
        return -ENOMEM;
    for (size_t i = set->n_rules; i-- > 0;) {
        const struct rule *rule = &set->rules[i];
        const struct rule_cond *gate;

        if (rule->kinds != 0 && (rule->kinds & 1u << CLASSIFIER_KIND_PATCH) == 0)
            continue;
        asked[i] = asked[i] || !rule->helper;
        gate = first_gate(rule);
        for (size_t k = 0; asked[i] && gate != NULL && k < gate->n_names; k++)
            if (gate->refs[k] < i)
                asked[gate->refs[k]] = true;
    }
    *ret = asked;
    return 0;
}

/* True when rule waits behind a measure or a combination that must
 * match. A none_of alone is no such gate: it passes unless the rules it
 * names matched, so a patch asks the patterns behind it nearly always
 * (CHATBOT_RESIDUE's, behind none_of RESIDUE_IN_CHANGE). */
static bool
gated(const struct rule *rule)
{
    for (size_t c = 0; c < rule->n_conds; c++)
        if (is_gate(&rule->conds[c]) && rule->conds[c].type != RULE_COND_NONE_OF)
            return true;
    return false;
}

/* The tables that hold rule's patterns (groups, for add_pattern()): those
 * of the kinds it applies to; but for a patch the on-demand table when
 * they wait behind a gate (which rule_eval.c looks at first) or belong to
 * a helper that a patch does not ask as a rule (asked, see
 * asked_by_patches()). A patch seldom passes the gates; reports pass most,
 * and the other kinds enough that one pass serves them better than two
 * (measured on the corpus). */
static unsigned
groups_of(const struct rule *rule, bool asked)
{
    unsigned all = (1u << PF_KINDS) - 1, patch = 1u << CLASSIFIER_KIND_PATCH;
    unsigned groups = rule->kinds != 0 ? rule->kinds & all : all;

    if ((groups & patch) != 0 && (!asked || gated(rule)))
        groups = (groups & ~patch) | 1u << PF_ON_DEMAND;
    return groups;
}

/* The patterns of one condition into the tables of groups. */
static int
add_cond(struct rule_prefilter *pf, struct rule_cond *cond, unsigned groups)
{
    int r = 0;

    switch (cond->type) {
    case RULE_COND_MATCH:
    case RULE_COND_NOMATCH:
        r = add_pattern(pf, &cond->pat[0], cond->region, groups);
        if (r == 0)
            r = add_split(pf, &cond->pat[0], cond->region, groups);
        break;
    case RULE_COND_COUNT:
        r = add_pattern(pf, &cond->pat[0], cond->region, groups);
        break;
    case RULE_COND_PAIR:
        r = add_pattern(pf, &cond->pat[0], REGION_REMOVED, groups);
        if (r == 0)
            r = add_pattern(pf, &cond->pat[1], REGION_ADDED, groups);
        break;
    default:
        break;
    }
    return r;
}

/* Once every pattern is in: the pair and trio tables, then each table
 * made ready for the scan. */
static int
tables_finish(struct rule_prefilter *pf)
{
    int r = 0;

    for (size_t k = 0; k < PF_PAIRS * PF_GROUPS && r == 0; k++)
        r = pair_build(pf, k / PF_GROUPS, (unsigned)(k % PF_GROUPS));
    for (unsigned g = 0; g < PF_KINDS && r == 0; g++)
        r = trio_build(pf, g);
    for (size_t k = 0; k < PF_TABLES && r == 0; k++)
        r = region_finish(pf->regions[k]);
    for (size_t k = 0; k < PF_PAIRS * PF_GROUPS && r == 0; k++)
        r = region_finish(pf->pairs[k]);
    for (unsigned g = 0; g < PF_KINDS && r == 0; g++)
        r = region_finish(pf->trios[g]);
    return r;
}

int
rule_prefilter_build(struct rule_set *set)
{
    struct rule_prefilter *pf;
    bool *asked = NULL;
    int r;

    rule_prefilter_scan_init();
    pf = calloc(1, sizeof(*pf));
    if (pf == NULL)
        return -ENOMEM;
    r = asked_by_patches(set, &asked);
    for (size_t i = 0; i < set->n_rules && r == 0; i++) {
        struct rule *rule = &set->rules[i];
        unsigned groups = groups_of(rule, asked[i]);

        for (size_t c = 0; c < rule->n_conds && r == 0; c++)
            r = add_cond(pf, &rule->conds[c], groups);
    }
    if (r == 0)
        r = tables_finish(pf);
    free(asked);
    set->pf = pf;
    if (r < 0)
        set->pf = rule_prefilter_free(pf);
    return r;
}

struct rule_prefilter *
rule_prefilter_free(struct rule_prefilter *pf)
{
    if (pf == NULL)
        return NULL;
    for (size_t k = 0; k < PF_TABLES; k++)
        pf_region_free(pf->regions[k]);
    for (size_t k = 0; k < PF_PAIRS * PF_GROUPS; k++)
        pf_region_free(pf->pairs[k]);
    for (unsigned g = 0; g < PF_KINDS; g++)
        pf_region_free(pf->trios[g]);
    strv_release(&pf->lits);
    free(pf->needles);
    free(pf->checks);
    for (uint32_t i = 0; i < pf->n_splits; i++) {
        for (size_t k = 0; k < pf->splits[i].n; k++) {
            free(pf->splits[i].v[k].source);
            pcre2_code_free(pf->splits[i].v[k].code);
            rule_prefix_free(pf->splits[i].v[k].prefix);
        }
        free(pf->splits[i].v);
    }
    free(pf->splits);
    free(pf);
    return NULL;
}
