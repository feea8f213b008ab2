/*
 * learn.c - tokens and the Robinson-Fisher combination of the per-site
 * learned classifier (docs/learning.md says why this method).
 *
 * Tokens: orthogonal sparse bigrams as rspamd builds them (each word
 * with each of the 4 words before it, the distance part of the token)
 * plus the word alone, over the regions the rules read as the author's
 * own text, and structural tokens: a band of each message measure and
 * the set of trailer tags. Identifiers (a word with '_', a digit or a
 * capital after a small letter) stand as one placeholder word, and
 * touched paths give no token: content (subsystems, function names)
 * must not decide the class. Every token is hashed with the message's
 * kind, so a patch is only ever compared with patches; the kind's own
 * token counts the messages of that kind in each class. Each token is a
 * 64-bit FNV-1a hash with the kind and a tag byte first, so tokens of
 * different sources never share a value. The hash is stored on disk:
 * changing it or the normalisation needs a schema bump.
 *
 * Abstention: a token counts only when both classes have it at least
 * LEARN_MIN_EACH times, and the model speaks only when enough of them
 * lean one way and they cover enough of the message; otherwise the
 * measures stay 0 and the LEARNED_* rules silent. A model that never saw
 * mail like this one, or saw it in one class only, says nothing.
 * Threading: no shared state.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fingerprint.h"
#include "learn.h"
#include "measure.h"

#define LEARN_WORD_MAX 32 /* longer words are cut: base64 and hashes */
#define LEARN_WORD_MIN 2
#define LEARN_WINDOW 5 /* OSB window: the word and the 4 before it */
#define LEARN_RAW_MAX ((size_t)CLASSIFIER_LEARN_MAX_TOKENS * 5)
/* Most buckets of tokens_sort(): a power of two at least half of
 * LEARN_RAW_MAX, about two tokens a bucket. */
#define LEARN_SORT_BITS_MAX 11
/* The set that keeps the smallest word tokens (tokens_smallest()): 2^9
 * buckets by the top bits, each of up to 16 distinct tokens. The raw
 * tokens hold some 1,500 distinct ones at most, 3 a bucket; a bucket
 * that overflows is read again from the raw tokens. */
#define LEARN_SET_BITS 9
#define LEARN_SET_DEPTH 16
#define LEARN_SET_SLOTS (((size_t)1 << LEARN_SET_BITS) * LEARN_SET_DEPTH)
#define LEARN_FNV_PRIME UINT64_C(0x100000001b3)

struct token_sink {
    uint64_t *v;
    size_t n, max;
    unsigned char kind; /* hashed into every token */
    uint64_t pair_seed; /* the FNV state after the kind and the pair tag */
};

/* fingerprint_fnv() over the 8 bytes at p, as the tokens were always
 * hashed, without a call and a loop per pair. */
static inline uint64_t
fnv_8(uint64_t h, const void *p)
{
    const unsigned char *b = p;

    h = (h ^ b[0]) * LEARN_FNV_PRIME;
    h = (h ^ b[1]) * LEARN_FNV_PRIME;
    h = (h ^ b[2]) * LEARN_FNV_PRIME;
    h = (h ^ b[3]) * LEARN_FNV_PRIME;
    h = (h ^ b[4]) * LEARN_FNV_PRIME;
    h = (h ^ b[5]) * LEARN_FNV_PRIME;
    h = (h ^ b[6]) * LEARN_FNV_PRIME;
    return (h ^ b[7]) * LEARN_FNV_PRIME;
}

/* fnv_8() over the distance d as a host-order u64. On a little-endian
 * host its bytes are d then seven zeros, and an FNV step over a zero
 * byte is only the multiplication: (h ^ d) times the prime's 8th power. */
static inline uint64_t
fnv_dist(uint64_t h, uint64_t d)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    uint64_t p2 = LEARN_FNV_PRIME * LEARN_FNV_PRIME, p4 = p2 * p2;

    return (h ^ d) * (p4 * p4);
#else
    return fnv_8(h, &d);
#endif
}

static void
sink_add(struct token_sink *s, uint64_t h)
{
    if (s->n < s->max)
        s->v[s->n++] = h;
}

static uint64_t
token_hash(unsigned char kind, char tag, const void *p, size_t n)
{
    uint64_t h = fingerprint_fnv(FINGERPRINT_FNV_INIT, &kind, 1);

    return fingerprint_fnv(fingerprint_fnv(h, &tag, 1), p, n);
}

/* The token that counts the learned messages of a kind in each class. */
static uint64_t
kind_token(enum classifier_kind kind)
{
    return token_hash((unsigned char)kind, 'k', "kind", 4);
}

/* What a byte is to a word: none, a small or a capital letter, a digit
 * or '_' (which make a word a name), or a non-ASCII byte. */
enum word_class {
    WC_NONE = '.',
    WC_LOWER = 'a',
    WC_UPPER = 'A',
    WC_NAME = '_',
    WC_HIGH = 'H',
};

/* Each byte's enum word_class, a row of 32 bytes a line. */
static const char word_class_map[257] = "................................"
                                        "................__________......"
                                        ".AAAAAAAAAAAAAAAAAAAAAAAAAA...._"
                                        ".aaaaaaaaaaaaaaaaaaaaaaaaaa....."
                                        "HHHHHHHHHHHHHHHHHHHHHHHHHHHHHHHH"
                                        "HHHHHHHHHHHHHHHHHHHHHHHHHHHHHHHH"
                                        "HHHHHHHHHHHHHHHHHHHHHHHHHHHHHHHH"
                                        "HHHHHHHHHHHHHHHHHHHHHHHHHHHHHHHH";

static inline enum word_class
word_class(unsigned char c)
{
    return (enum word_class)word_class_map[c];
}

/* A word read from a region: the FNV hash, from seed, of its first
 * LEARN_WORD_MAX bytes folded to lower case, as token_hash() gives it. */
struct osb_word {
    uint64_t h;
    size_t len;
    bool ident; /* a name such as foo_bar, kmalloc2 or nfTables */
};

/* The next word of r from *i, which it moves past the word. Hashed as it
 * is read: a word is touched once. */
static void
osb_next_word(const struct region *r, size_t *i, uint64_t seed, struct osb_word *wd)
{
    const unsigned char *p = (const unsigned char *)r->text;
    size_t k = *i, len = 0;
    uint64_t h = seed;
    bool lower = false, ident = false;

    while (k < r->len && word_class(p[k]) == WC_NONE)
        k++;
    for (; k < r->len; k++) {
        unsigned char c = p[k];
        enum word_class wc = word_class(c);

        if (wc == WC_NONE)
            break;
        /* foo_bar, kmalloc2, nfTables: a name, not a word. */
        if (wc == WC_NAME || (lower && wc == WC_UPPER))
            ident = true;
        lower = wc == WC_LOWER;
        if (len < LEARN_WORD_MAX) {
            h = (h ^ (wc == WC_UPPER ? c - 'A' + 'a' : c)) * LEARN_FNV_PRIME;
            len++;
        }
    }
    *i = k;
    wd->h = h;
    wd->len = len;
    wd->ident = ident;
}

/* The tokens of word hash h: h itself, then its pair with each of the
 * have earlier words in the window; then h joins the window. */
static void
osb_add_word(struct token_sink *s, uint64_t left[LEARN_WINDOW - 1], size_t *have, uint64_t h)
{
    sink_add(s, h);
    for (size_t d = 0; d < *have && s->n < s->max; d++) {
        uint64_t dist = d + 1;

        sink_add(s, fnv_dist(fnv_8(left[d], &h), dist));
    }
    for (size_t d = LEARN_WINDOW - 2; d > 0; d--)
        left[d] = left[d - 1];
    left[0] = fnv_8(s->pair_seed, &h);
    if (*have < LEARN_WINDOW - 1)
        (*have)++;
}

/* OSB over one region. A pair token hashes the earlier word's hash, the
 * later one's and the distance; left[d] holds the FNV state after the
 * earlier word, so each pair hashes only the last 16 bytes. */
static void
tokens_osb(struct token_sink *s, char tag, const struct region *r)
{
    uint64_t left[LEARN_WINDOW - 1] = {0};
    uint64_t seed = token_hash(s->kind, tag, NULL, 0);
    uint64_t ident = token_hash(s->kind, tag, "\x01id", 3);
    size_t have = 0;
    size_t i = 0;

    while (i < r->len && s->n < s->max) {
        struct osb_word wd;

        osb_next_word(r, &i, seed, &wd);
        if (wd.len < LEARN_WORD_MIN && !wd.ident)
            continue;
        osb_add_word(s, left, &have, wd.ident ? ident : wd.h);
    }
}

/* A coarse band of a measure: 0, a quarter step below 1, then powers of 2. */
static unsigned
measure_band(double v)
{
    unsigned b = 6;

    if (!(v > 0))
        return 0;
    if (v < 1)
        return 1 + (unsigned)(v * 4);
    while (v >= 2 && b < 40) {
        v /= 2;
        b++;
    }
    return b;
}

static void
tokens_structure(struct token_sink *s, const struct message *m)
{
    char buf[160];

    sink_add(s, kind_token(m->kind));
    /* Only the measures of the message itself: the look-up measures
     * differ between learning (slopctl) and scanning (the daemon). */
    for (int id = 0; id < MEASURE_TREE_INDEXED; id++) {
        uint32_t band[2] = {(uint32_t)id, measure_band(m->measures[id])};

        sink_add(s, token_hash(s->kind, 'm', band, sizeof(band)));
    }
    for (size_t i = 0; i < m->n_trailers; i++) {
        size_t len = strlen(m->trailers[i].tag);

        if (len > sizeof(buf))
            len = sizeof(buf);
        for (size_t k = 0; k < len; k++) {
            char c = m->trailers[i].tag[k];
            buf[k] = (char)(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
        }
        sink_add(s, token_hash(s->kind, 't', buf, len));
    }
}

static int
cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

    return x < y ? -1 : x > y;
}

/* tmp[0..n) ascending: an insertion pass, for values already grouped by
 * their top bits, that gives up after 8 moves a value for qsort(), so
 * that the hashes of crafted text crowding one group cost O(n log n). */
static void
tokens_order(uint64_t *tmp, size_t n)
{
    size_t moves = 0;

    for (size_t i = 1; i < n && moves <= 8 * n; i++) {
        uint64_t x = tmp[i];
        size_t j = i;

        for (; j > 0 && tmp[j - 1] > x; j--)
            tmp[j] = tmp[j - 1];
        tmp[j] = x;
        moves += i - j;
    }
    if (moves > 8 * n)
        qsort(tmp, n, sizeof(*tmp), cmp_u64);
}

/*
 * Sort v[0..n) ascending and drop repeats; returns how many distinct
 * values are left at its front. tmp is scratch of n values. The tokens
 * are hashes, spread evenly: a counting pass by their top bits puts each
 * in a bucket of about two, and an insertion pass orders the buckets.
 * Hashes of crafted text could crowd one bucket, so the insertion pass
 * gives up after 8 moves a value and qsort() finishes: the order is the
 * same, the cost stays O(n log n).
 */
static size_t
tokens_sort(uint64_t *v, size_t n, uint64_t *tmp)
{
    uint16_t start[((size_t)1 << LEARN_SORT_BITS_MAX) + 1];
    unsigned bits = 1;
    size_t m = 0;

    if (n < 2)
        return n;
    while (bits < LEARN_SORT_BITS_MAX && ((size_t)2 << bits) < n)
        bits++;
    memset(start, 0, (((size_t)1 << bits) + 1) * sizeof(start[0]));
    for (size_t i = 0; i < n; i++)
        start[(v[i] >> (64 - bits)) + 1]++;
    for (size_t j = 1; j <= ((size_t)1 << bits); j++)
        start[j] = (uint16_t)(start[j] + start[j - 1]);
    for (size_t i = 0; i < n; i++)
        tmp[start[v[i] >> (64 - bits)]++] = v[i];
    tokens_order(tmp, n);
    for (size_t i = 0; i < n; i++)
        if (m == 0 || v[m - 1] != tmp[i])
            v[m++] = tmp[i];
    return m;
}

/* Into ret, ascending and once each, the values of v[0..n) in bucket b
 * of the set, at most k; returns how many. tmp is scratch of n. For a
 * bucket too crowded to hold: FNV's top bits cluster for short words. */
static size_t
tokens_crowded(const uint64_t *v, size_t n, size_t b, size_t k, uint64_t *tmp, uint64_t *ret)
{
    size_t got = 0, m = 0;

    for (size_t i = 0; i < n; i++)
        if ((size_t)(v[i] >> (64 - LEARN_SET_BITS)) == b)
            tmp[got++] = v[i];
    tokens_order(tmp, got);
    for (size_t i = 0; i < got && m < k; i++)
        if (m == 0 || ret[m - 1] != tmp[i])
            ret[m++] = tmp[i];
    return m;
}

/*
 * The k smallest distinct values of v[0..n) into ret, ascending; returns
 * how many (k, or fewer when v has fewer distinct values). set is
 * scratch of LEARN_SET_SLOTS values, tmp of n. Each value goes to the
 * bucket of its top bits unless it is there already; the buckets are
 * then read in order, each ordered as it is read, until k are out: the
 * larger tokens, most of them, are never ordered. A bucket that fills up
 * is read again from v when its turn comes.
 */
static size_t
tokens_smallest(const uint64_t *v, size_t n, size_t k, uint64_t *set, uint64_t *tmp, uint64_t *ret)
{
    unsigned char fill[(size_t)1 << LEARN_SET_BITS];
    size_t m = 0;

    memset(fill, 0, sizeof(fill));
    for (size_t i = 0; i < n; i++) {
        uint64_t x = v[i];
        size_t b = (size_t)(x >> (64 - LEARN_SET_BITS));
        uint64_t *row = set + b * LEARN_SET_DEPTH;
        size_t c = fill[b], j = 0;

        if (c > LEARN_SET_DEPTH)
            continue; /* crowded */
        while (j < c && row[j] != x)
            j++;
        if (j < c)
            continue;
        if (c == LEARN_SET_DEPTH) {
            fill[b] = LEARN_SET_DEPTH + 1;
            continue;
        }
        row[c] = x;
        fill[b] = (unsigned char)(c + 1);
    }
    for (size_t b = 0; b < sizeof(fill) && m < k; b++) {
        uint64_t *row = set + b * LEARN_SET_DEPTH;

        if (fill[b] > LEARN_SET_DEPTH) {
            m += tokens_crowded(v, n, b, k - m, tmp, ret + m);
            continue;
        }
        tokens_order(row, fill[b]);
        for (size_t i = 0; i < fill[b] && m < k; i++)
            ret[m++] = row[i];
    }
    return m;
}

/* The sorted a[0..na) and b[0..nb) into ret, each value once. */
static size_t
tokens_merge(const uint64_t *a, size_t na, const uint64_t *b, size_t nb, uint64_t *ret)
{
    size_t i = 0, j = 0, n = 0;

    while (i < na || j < nb) {
        uint64_t x = j >= nb || (i < na && a[i] <= b[j]) ? a[i++] : b[j++];

        if (n == 0 || ret[n - 1] != x)
            ret[n++] = x;
    }
    return n;
}

int
learn_tokens(const struct message *m, uint64_t *ret, size_t max, size_t *ret_n)
{
    static const struct {
        enum region_id id;
        char tag;
    } prose[] = {
        {REGION_SUBJECT, 'S'}, {REGION_CHANGELOG, 'L'}, {REGION_REPORT, 'R'},
        {REGION_NOTES, 'N'},   {REGION_COMMENTS, 'C'},
    };
    struct token_sink s = {.max = LEARN_RAW_MAX, .kind = (unsigned char)m->kind};
    uint64_t *set, *tmp, *words;
    size_t ns, nw;

    /* No more from one message than the cap classifier.h gives, whatever
     * room the caller has: words[] below holds that many. */
    if (max > CLASSIFIER_LEARN_MAX_TOKENS)
        max = CLASSIFIER_LEARN_MAX_TOKENS;
    /* The raw tokens, the set, scratch and the words kept: 110 KiB, below
     * the size malloc() would map afresh for each message. */
    s.v =
        malloc((2 * LEARN_RAW_MAX + LEARN_SET_SLOTS + CLASSIFIER_LEARN_MAX_TOKENS) * sizeof(*s.v));
    if (s.v == NULL)
        return -ENOMEM;
    set = s.v + LEARN_RAW_MAX;
    tmp = set + LEARN_SET_SLOTS;
    words = tmp + LEARN_RAW_MAX;
    s.pair_seed = token_hash(s.kind, 'o', NULL, 0);
    /* Structure first and always kept (the kind's token carries the
     * totals), so that a long text cannot crowd it out; of the words,
     * those with the smallest hashes fill the cap: an even sample of the
     * whole text, the same at learning and at scanning. */
    tokens_structure(&s, m);
    ns = s.n < max ? s.n : max;
    for (size_t i = 0; i < sizeof(prose) / sizeof(prose[0]); i++)
        tokens_osb(&s, prose[i].tag, &m->regions[prose[i].id]);
    nw = tokens_smallest(s.v + ns, s.n - ns, max - ns, set, tmp, words);
    /* Sorted and distinct, as the look-up's cursor and the key want. */
    *ret_n = tokens_merge(s.v, tokens_sort(s.v, ns, tmp), words, nw, ret);
    free(s.v);
    return 0;
}

uint64_t
learn_hint(const struct message *m)
{
    if (m->message_id != NULL && *m->message_id != '\0')
        return token_hash(0, 'I', m->message_id, strlen(m->message_id));
    return 0;
}

/* Upper tail of the chi-square distribution with v (even) degrees of
 * freedom at x2 (SpamBayes' chi2Q). */
static double
chi2q(double x2, size_t v)
{
    double m = x2 / 2, sum, term;

    sum = term = exp(-m);
    for (size_t i = 1; i < v / 2; i++) {
        term *= m / (double)i;
        sum += term;
    }
    return sum < 1 ? sum : 1;
}

static int
cmp_dev(const void *a, const void *b)
{
    double x = fabs(*(const double *)a - 0.5), y = fabs(*(const double *)b - 0.5);

    return x < y ? 1 : x > y ? -1 : 0;
}

double
learn_combine(const uint32_t (*counts)[2], size_t n, const uint64_t totals[2], size_t *ret_used,
              size_t *ret_significant)
{
    double *f;
    size_t k = 0, used = 0;
    double ln_f = 0, ln_nf = 0, h, sp;

    *ret_used = *ret_significant = 0;
    if (n == 0 || totals[0] == 0 || totals[1] == 0)
        return 0.5;
    f = malloc(n * sizeof(*f));
    if (f == NULL)
        return 0.5;
    for (size_t i = 0; i < n; i++) {
        double ps = (double)counts[i][0] / (double)totals[0];
        double pg = (double)counts[i][1] / (double)totals[1];
        double cnt = (double)counts[i][0] + counts[i][1], p, fw;

        /* Seen in one class only (or too rarely in one): a name or a
         * topic of that class's mail, not evidence about this one. */
        if (counts[i][0] < LEARN_MIN_EACH || counts[i][1] < LEARN_MIN_EACH || ps + pg <= 0)
            continue;
        used++;
        if (ps > 1)
            ps = 1;
        if (pg > 1)
            pg = 1;
        p = ps / (ps + pg);
        fw = (LEARN_ROBINSON_S * LEARN_ROBINSON_X + cnt * p) / (LEARN_ROBINSON_S + cnt);
        if (fabs(fw - 0.5) < LEARN_MIN_DEVIATION)
            continue;
        f[k++] = fw;
    }
    *ret_used = used;
    *ret_significant = k;
    if (k == 0) {
        free(f);
        return 0.5;
    }
    qsort(f, k, sizeof(*f), cmp_dev);
    if (k > LEARN_MAX_SIGNIFICANT)
        k = LEARN_MAX_SIGNIFICANT;
    for (size_t i = 0; i < k; i++) {
        ln_f += log(f[i]);
        ln_nf += log(1 - f[i]);
    }
    free(f);
    /* H near 1: the tokens look genuine; S near 1: they look like slop. */
    h = 1 - chi2q(-2 * ln_f, 2 * k);
    sp = 1 - chi2q(-2 * ln_nf, 2 * k);
    return (1 + sp - h) / 2;
}

/* "412" or "3,118": the description's counts read like a person's. */
static void
format_count(char *buf, size_t size, uint64_t v)
{
    char raw[24];
    size_t len, o = 0;

    len = (size_t)snprintf(raw, sizeof(raw), "%llu", (unsigned long long)v);
    for (size_t i = 0; i < len && o + 2 < size; i++) {
        if (i > 0 && (len - i) % 3 == 0)
            buf[o++] = ',';
        buf[o++] = raw[i];
    }
    buf[o] = '\0';
}

/* Whether both classes have learned enough messages of m's kind for the
 * model to say anything: asked first, so that without a usable model the
 * tokens are neither made nor looked up. */
static bool
learn_kind_ready(const struct message *m, const struct classifier_lookup *lk)
{
    uint64_t ktok = kind_token(m->kind), totals[2];
    uint32_t kc[1][2] = {{0, 0}};

    return lk->learned_counts(lk->ctx, &ktok, 1, kc, totals) && kc[0][0] >= LEARN_MIN_EACH &&
           kc[0][1] >= LEARN_MIN_EACH;
}

int
learn_apply(struct message *m, const struct classifier_envelope *env)
{
    uint64_t *tokens = NULL, ktok = kind_token(m->kind), kinds[2];
    const uint64_t *kt;
    uint32_t(*counts)[2] = NULL;
    uint64_t totals[2] = {0, 0};
    char slop[32], genuine[32], ev[200];
    size_t n = 0, used = 0, sig = 0;
    double p;
    int r;

    if (env == NULL || env->lookup == NULL || env->lookup->learned_counts == NULL ||
        !learn_kind_ready(m, env->lookup))
        return 0;
    tokens = malloc(CLASSIFIER_LEARN_MAX_TOKENS * sizeof(*tokens));
    counts = calloc(CLASSIFIER_LEARN_MAX_TOKENS, sizeof(*counts));
    if (tokens == NULL || counts == NULL) {
        r = -ENOMEM;
        goto out;
    }
    r = learn_tokens(m, tokens, CLASSIFIER_LEARN_MAX_TOKENS, &n);
    if (r < 0)
        goto out;
    if (!env->lookup->learned_counts(env->lookup->ctx, tokens, n, counts, totals))
        goto out;
    /* The messages of this kind learned in each class are the totals a
     * token is measured against; the kind's token itself is no evidence. */
    kt = bsearch(&ktok, tokens, n, sizeof(*tokens), cmp_u64);
    if (kt == NULL)
        goto out;
    kinds[0] = counts[kt - tokens][0];
    kinds[1] = counts[kt - tokens][1];
    counts[kt - tokens][0] = counts[kt - tokens][1] = 0;
    if (kinds[0] < LEARN_MIN_EACH || kinds[1] < LEARN_MIN_EACH)
        goto out;
    p = learn_combine((const uint32_t(*)[2])counts, n, kinds, &used, &sig);
    /* Silent unless enough tokens known to both classes lean one way and
     * they cover enough of the message: mail unlike what was learned, or
     * like one class's topics only, gets no word either way. */
    if (sig < LEARN_MIN_SIGNIFICANT || (double)used < LEARN_MIN_COVERAGE * (double)n)
        goto out;
    m->measures[MEASURE_LEARNED_READY] = 1;
    m->measures[MEASURE_LEARNED_SLOP] = p;
    format_count(slop, sizeof(slop), totals[0]);
    format_count(genuine, sizeof(genuine), totals[1]);
    snprintf(ev, sizeof(ev), "p=%.2f, from %s slop and %s genuine learned, %zu of %zu tokens known",
             p, slop, genuine, used, n);
    free(m->measure_evidence[MEASURE_LEARNED_SLOP]);
    m->measure_evidence[MEASURE_LEARNED_SLOP] = strdup(ev);
    free(m->measure_evidence[MEASURE_LEARNED_READY]);
    m->measure_evidence[MEASURE_LEARNED_READY] = strdup(ev);
    if (m->measure_evidence[MEASURE_LEARNED_SLOP] == NULL ||
        m->measure_evidence[MEASURE_LEARNED_READY] == NULL)
        r = -ENOMEM;
out:
    free(tokens);
    free(counts);
    return r;
}
