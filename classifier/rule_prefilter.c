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
 * (rule_prefilter_vector()).
 *
 * The tables belong to the rule set and are read-only after loading; the
 * per-message state (struct rule_prefilter_state) belongs to one call.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "ascii.h"
#include "message.h"
#include "rule.h"
#include "rule_prefix.h"

#define PF_SET_MAX 64u   /* strings in an exact set */
#define PF_REQ_MAX 256u  /* strings in a required set */
#define PF_LIT_MAX 64u   /* bytes of one literal */
#define PF_LIT_MIN 2u    /* shorter required literals filter nothing useful */
#define PF_DEPTH_MAX 64u /* group nesting the analyser follows */

/* Shortest literal of a further set (pf_and) that the tables take. A
 * two-byte literal marks 256 bits of the three-byte filter (one per third
 * byte) and so sends more of every text to the bucket walk, while a
 * further set only narrows the first one: measured on real mail, such
 * sets cost the scan more than the regex runs they save. The analyser
 * still reports them (rule_prefilter_literal_sets()). */
#define PF_AND_LIT_MIN 3u

/* In the analyser's strings, a \b: such a literal occurs only where the
 * word boundary holds too. Without PCRE2_UCP a word character is an ASCII
 * letter, digit or '_' (every other character, multi-byte ones included,
 * is not), so the test needs one byte of context. A boundary the table
 * can use sits at either end of a literal, next to a word character;
 * others are dropped, which only lets more text through. The byte itself
 * is never taken as a literal character. */
#define PF_WB '\x01'

/* What \s matches: without PCRE2_UCP (RULE_PCRE2_OPTIONS has none, and
 * no rule flag sets it) only the "C" locale's white space, all ASCII. */
static const char pf_space[] = " \t\n\v\f\r";

_Static_assert((RULE_PCRE2_OPTIONS & PCRE2_UCP) == 0, "\\s is ASCII white space only");

static size_t lit_strip(const char *lit, char *out, unsigned *flags);
static bool is_space(unsigned char c);

/* What the analyser knows about a piece of pattern: either the exact set
 * of strings it matches, or a set of which one is a substring of every
 * match, or nothing (any). */
enum pf_kind {
    PF_ANY = 0,
    PF_EXACT,
    PF_REQ,
};

struct pf_info {
    enum pf_kind kind;
    struct strv s;
};

/* Required sets kept from the top-level sequence (see offer()). */
#define PF_COLLECT_MAX 16u

struct pf_parser {
    const char *p, *end;
    bool fail; /* syntax not understood: no prefilter */
    bool nomem;
    unsigned depth;
    bool top_alt;         /* a '|' outside any group was seen */
    struct pf_info *cand; /* NULL: do not collect; else PF_COLLECT_MAX of them */
    size_t n_cand;
};

static void
info_release(struct pf_info *x)
{
    strv_release(&x->s);
    memset(x, 0, sizeof(*x));
}

static char
lower(char c)
{
    return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

static void
info_exact_char(struct pf_parser *ps, struct pf_info *x, char c)
{
    char s = lower(c);

    if (s == PF_WB)
        return;
    x->kind = PF_EXACT;
    if (strv_add(&x->s, &s, 1, PF_SET_MAX) < 0)
        ps->nomem = true;
}

static void
info_empty(struct pf_parser *ps, struct pf_info *x)
{
    x->kind = PF_EXACT;
    if (strv_add(&x->s, "", 0, PF_SET_MAX) < 0)
        ps->nomem = true;
}

/* True when s has no character, only word boundaries if anything. */
static bool
lit_empty(const char *s)
{
    while (*s == PF_WB)
        s++;
    return *s == '\0';
}

/* An exact set turned into a required one; "" in it means no requirement. */
static void
info_to_req(struct pf_info *x)
{
    if (x->kind != PF_EXACT)
        return;
    for (size_t i = 0; i < x->s.n; i++) {
        if (lit_empty(x->s.v[i])) {
            info_release(x);
            return;
        }
    }
    x->kind = PF_REQ;
}

/* The core of analyser string v: [*start, *end) without the word
 * boundaries and white space at either end, as lit_strip() cuts it but
 * without the copy (this runs often). *odd_space: a white space cut off
 * at an end is not ' '. */
static void
core_span(const char *v, size_t *start, size_t *end, bool *odd_space)
{
    size_t a = 0, b = strlen(v);
    bool odd = false;

    while (a < b && (v[a] == PF_WB || is_space((unsigned char)v[a]))) {
        odd |= v[a] != PF_WB && v[a] != ' ';
        a++;
    }
    while (b > a && (v[b - 1] == PF_WB || is_space((unsigned char)v[b - 1]))) {
        odd |= v[b - 1] != PF_WB && v[b - 1] != ' ';
        b--;
    }
    *start = a;
    *end = b;
    *odd_space = odd;
}

/* Length of the shortest core of x: boundaries and white space only
 * narrow a literal, and choosing by them picked worse sets. */
static size_t
min_len(const struct pf_info *x)
{
    size_t m = SIZE_MAX;

    for (size_t i = 0; i < x->s.n; i++) {
        const char *v = x->s.v[i];
        size_t a, b, n = 0;
        bool odd;

        core_span(v, &a, &b, &odd);
        for (size_t k = a; k < b; k++)
            n += v[k] != PF_WB;
        if (n < m)
            m = n;
    }
    return m;
}

/* Strings of x, each core counted once: \s makes six strings of one, all
 * alike but for the white space at their ends, and the one with ' '
 * there stands for them all. */
static size_t
set_count(const struct pf_info *x)
{
    size_t n = 0;

    for (size_t i = 0; i < x->s.n; i++) {
        size_t a, b;
        bool odd;

        core_span(x->s.v[i], &a, &b, &odd);
        n += !odd;
    }
    return n;
}

/* True when a filters better than b: longer shortest literal, then fewer. */
static bool
req_better(const struct pf_info *a, const struct pf_info *b)
{
    size_t ma, mb;

    if (b->kind == PF_ANY)
        return a->kind != PF_ANY;
    if (a->kind == PF_ANY)
        return false;
    ma = min_len(a) < 6 ? min_len(a) : 6;
    mb = min_len(b) < 6 ? min_len(b) : 6;
    if (ma != mb)
        return ma > mb;
    return set_count(a) < set_count(b);
}

/* True when the first n strings of v hold s[0..len); lens[] has the
 * length of each. */
static bool
set_has(const struct strv *v, size_t n, const size_t *lens, const char *s, size_t len)
{
    for (size_t i = 0; i < n; i++)
        if (lens[i] == len && memcmp(v->v[i], s, len) == 0)
            return true;
    return false;
}

/* exact_concat() when b is one string, the case of nearly every literal
 * character: appended to a's strings in place, which spares the copies.
 * Strings that come out alike are kept once, the first of them. */
static bool
append_concat(struct pf_parser *ps, struct pf_info *a, struct pf_info *b)
{
    size_t lb = strlen(b->s.v[0]), lens[PF_SET_MAX], n = 0;

    for (size_t i = 0; i < a->s.n; i++) {
        lens[i] = strlen(a->s.v[i]);
        if (lens[i] + lb > PF_LIT_MAX)
            return false;
    }
    for (size_t i = 0; i < a->s.n; i++) {
        char *v = realloc(a->s.v[i], lens[i] + lb + 1);

        /* a is left half done, but the analysis is lost anyway. */
        if (v == NULL) {
            ps->nomem = true;
            return false;
        }
        memcpy(v + lens[i], b->s.v[0], lb + 1);
        a->s.v[i] = NULL;
        if (set_has(&a->s, n, lens, v, lens[i] + lb)) {
            free(v);
            continue;
        }
        a->s.v[n] = v;
        lens[n++] = lens[i] + lb;
    }
    a->s.n = n;
    info_release(b);
    return true;
}

/* a = a followed by b when both are exact and the product fits; b is
 * then consumed. False (nothing changed) otherwise. */
static bool
exact_concat(struct pf_parser *ps, struct pf_info *a, struct pf_info *b)
{
    struct strv out = {0};
    size_t lb[PF_SET_MAX], out_len[PF_SET_MAX];

    if (a->kind != PF_EXACT || b->kind != PF_EXACT || a->s.n * b->s.n > PF_SET_MAX)
        return false;
    if (b->s.n == 1)
        return append_concat(ps, a, b);
    /* With a string in a, b has at most PF_SET_MAX. */
    for (size_t j = 0; j < b->s.n && a->s.n > 0; j++)
        lb[j] = strlen(b->s.v[j]);
    for (size_t i = 0; i < a->s.n; i++) {
        size_t la = strlen(a->s.v[i]);

        for (size_t j = 0; j < b->s.n; j++) {
            char buf[2 * PF_LIT_MAX];

            if (la + lb[j] > PF_LIT_MAX) {
                strv_release(&out);
                return false;
            }
            memcpy(buf, a->s.v[i], la);
            memcpy(buf + la, b->s.v[j], lb[j]);
            if (set_has(&out, out.n, out_len, buf, la + lb[j]))
                continue;
            if (strv_add(&out, buf, la + lb[j], PF_SET_MAX) < 0) {
                ps->nomem = true;
                strv_release(&out);
                return false;
            }
            out_len[out.n - 1] = la + lb[j];
        }
    }
    strv_release(&a->s);
    a->s = out;
    info_release(b);
    return true;
}

/* a = a or b; b is consumed. */
static void
info_alt(struct pf_parser *ps, struct pf_info *a, struct pf_info *b)
{
    enum pf_kind kind = PF_EXACT;
    size_t cap = PF_SET_MAX, lens[PF_REQ_MAX];

    if (a->kind != PF_EXACT || b->kind != PF_EXACT || a->s.n + b->s.n > PF_SET_MAX) {
        info_to_req(a);
        info_to_req(b);
        kind = PF_REQ;
        cap = PF_REQ_MAX;
        if (a->kind == PF_ANY || b->kind == PF_ANY || a->s.n + b->s.n > PF_REQ_MAX) {
            info_release(a);
            info_release(b);
            return;
        }
    }
    /* Here a and b hold at most PF_REQ_MAX strings together. */
    for (size_t i = 0; i < a->s.n; i++)
        lens[i] = strlen(a->s.v[i]);
    for (size_t i = 0; i < b->s.n; i++) {
        size_t len = strlen(b->s.v[i]);

        if (set_has(&a->s, a->s.n, lens, b->s.v[i], len))
            continue;
        if (strv_add(&a->s, b->s.v[i], len, cap) < 0) {
            ps->nomem = true;
            break;
        }
        lens[a->s.n - 1] = len;
    }
    a->kind = kind;
    info_release(b);
}

static bool
is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static int
hex_value(char c)
{
    if (is_digit(c))
        return c - '0';
    c = lower(c);
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    return -1;
}

/* After "\x": the code point, or -1 when malformed. */
static long
parse_hex(struct pf_parser *ps)
{
    long v = 0;
    int d;

    if (ps->p < ps->end && *ps->p == '{') {
        ps->p++;
        while (ps->p < ps->end && (d = hex_value(*ps->p)) >= 0 && v < 0x110000) {
            v = v * 16 + d;
            ps->p++;
        }
        if (ps->p >= ps->end || *ps->p != '}')
            return -1;
        ps->p++;
        return v;
    }
    for (int i = 0; i < 2 && ps->p < ps->end && (d = hex_value(*ps->p)) >= 0; i++) {
        v = v * 16 + d;
        ps->p++;
    }
    return v;
}

/* One escape after '\'. Sets *lit to the literal byte and returns 1, or
 * returns 0 for a zero-width assertion, 3 for \b, 4 for \s, 2 for another
 * class of characters (any as far as literals go); fails on what it does
 * not know. */
static int
parse_escape(struct pf_parser *ps, char *lit, bool in_class)
{
    char c;

    if (ps->p >= ps->end) {
        ps->fail = true;
        return 2;
    }
    c = *ps->p++;
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || is_digit(c))) {
        if ((unsigned char)c >= 0x80)
            ps->fail = true;
        *lit = c;
        return 1;
    }
    switch (c) {
    case 'b':
        if (in_class) {
            *lit = '\b';
            return 1;
        }
        return 3;
    case 'B':
    case 'A':
    case 'z':
    case 'Z':
    case 'G':
    case 'K':
        if (in_class)
            ps->fail = true;
        return 0;
    case 's':
        return in_class ? 2 : 4;
    case 'd':
    case 'D':
    case 'w':
    case 'W':
    case 'S':
    case 'h':
    case 'H':
    case 'v':
    case 'V':
    case 'N':
    case 'R':
    case 'X':
        return 2;
    case 'p':
    case 'P':
        if (ps->p < ps->end && *ps->p == '{') {
            const char *e = memchr(ps->p, '}', (size_t)(ps->end - ps->p));

            if (e == NULL)
                ps->fail = true;
            else
                ps->p = e + 1;
        } else if (ps->p < ps->end) {
            ps->p++;
        }
        return 2;
    case 'n':
        *lit = '\n';
        return 1;
    case 't':
        *lit = '\t';
        return 1;
    case 'r':
        *lit = '\r';
        return 1;
    case 'f':
        *lit = '\f';
        return 1;
    case 'e':
        *lit = 0x1b;
        return 1;
    case 'a':
        *lit = 0x07;
        return 1;
    case 'x': {
        long v = parse_hex(ps);

        if (v < 0)
            ps->fail = true;
        if (v <= 0 || v >= 0x80)
            return 2;
        *lit = (char)v;
        return 1;
    }
    default:
        ps->fail = true;
        return 2;
    }
}

/* A character class after '['. Small classes of ASCII bytes are exact. */
static void
parse_class(struct pf_parser *ps, struct pf_info *x)
{
    unsigned char set[128] = {0};
    bool negate = false, any = false, first = true;
    int prev = -1;
    unsigned n = 0;

    if (ps->p < ps->end && *ps->p == '^') {
        negate = true;
        ps->p++;
    }
    for (;;) {
        int c;
        char lit;

        if (ps->p >= ps->end) {
            ps->fail = true;
            return;
        }
        if (*ps->p == ']' && !first) {
            ps->p++;
            break;
        }
        first = false;
        if (*ps->p == '[' && ps->p + 1 < ps->end &&
            (ps->p[1] == ':' || ps->p[1] == '.' || ps->p[1] == '=')) {
            ps->fail = true;
            return;
        }
        if (*ps->p == '-' && prev >= 0 && ps->p + 1 < ps->end && ps->p[1] != ']') {
            int hi;

            ps->p++;
            if (*ps->p == '\\') {
                ps->p++;
                if (parse_escape(ps, &lit, true) != 1) {
                    ps->fail = true;
                    return;
                }
                hi = (unsigned char)lit;
            } else {
                hi = (unsigned char)*ps->p++;
            }
            if (hi >= 0x80 || hi < prev) {
                any = true;
            } else {
                for (int k = prev; k <= hi; k++)
                    set[(unsigned char)lower((char)k)] = 1;
            }
            prev = -1;
            continue;
        }
        if (*ps->p == '\\') {
            ps->p++;
            if (parse_escape(ps, &lit, true) != 1) {
                any = true;
                prev = -1;
                continue;
            }
            c = (unsigned char)lit;
        } else {
            c = (unsigned char)*ps->p++;
        }
        if (c >= 0x80) {
            /* Skip the rest of the UTF-8 sequence: one class member. */
            while (ps->p < ps->end && ((unsigned char)*ps->p & 0xc0) == 0x80)
                ps->p++;
            any = true;
            prev = -1;
            continue;
        }
        set[(unsigned char)lower((char)c)] = 1;
        prev = c;
    }
    if (negate || any || set[(unsigned char)PF_WB])
        return;
    for (unsigned k = 0; k < 128; k++)
        n += set[k];
    if (n == 0 || n > 8)
        return;
    x->kind = PF_EXACT;
    for (unsigned k = 0; k < 128; k++) {
        char s = (char)k;

        if (set[k] && strv_add(&x->s, &s, 1, PF_SET_MAX) < 0)
            ps->nomem = true;
    }
}

static void parse_alt(struct pf_parser *ps, struct pf_info *ret);

/* A group after '('. */
static void
parse_group(struct pf_parser *ps, struct pf_info *x)
{
    bool zero_width = false;

    if (++ps->depth > PF_DEPTH_MAX || ps->p >= ps->end || *ps->p == '*') {
        ps->fail = true;
        return;
    }
    if (*ps->p == '?') {
        ps->p++;
        if (ps->p >= ps->end) {
            ps->fail = true;
            return;
        }
        switch (*ps->p) {
        case ':':
        case '|':
        case '>':
            ps->p++;
            break;
        case '=':
        case '!':
            ps->p++;
            zero_width = true;
            break;
        case '<':
            ps->p++;
            if (ps->p < ps->end && (*ps->p == '=' || *ps->p == '!')) {
                ps->p++;
                zero_width = true;
                break;
            }
            /* A named group. */
            while (ps->p < ps->end && *ps->p != '>')
                ps->p++;
            if (ps->p >= ps->end) {
                ps->fail = true;
                return;
            }
            ps->p++;
            break;
        default: {
            /* Option letters: "(?i)" sets, "(?i:" opens a group. */
            const char *q = ps->p;

            while (q < ps->end && ((*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z') ||
                                   *q == '-' || *q == '^')) {
                if (*q == 'x')
                    ps->fail = true;
                q++;
            }
            if (q == ps->p || q >= ps->end || (*q != ':' && *q != ')'))
                ps->fail = true;
            if (ps->fail)
                return;
            ps->p = q + 1;
            if (*q == ')') {
                ps->depth--;
                info_empty(ps, x);
                return;
            }
        }
        }
    }
    parse_alt(ps, x);
    if (ps->fail)
        return;
    if (ps->p >= ps->end || *ps->p != ')') {
        ps->fail = true;
        return;
    }
    ps->p++;
    ps->depth--;
    if (zero_width) {
        info_release(x);
        info_empty(ps, x);
    }
}

/* A quantifier at ps->p, if any: sets *min and *max (UINT_MAX: no bound). */
static bool
parse_quant(struct pf_parser *ps, unsigned *min, unsigned *max)
{
    const char *q = ps->p;

    if (q >= ps->end)
        return false;
    switch (*q) {
    case '?':
        *min = 0;
        *max = 1;
        q++;
        break;
    case '*':
        *min = 0;
        *max = ~0u;
        q++;
        break;
    case '+':
        *min = 1;
        *max = ~0u;
        q++;
        break;
    case '{': {
        unsigned a = 0, b;

        q++;
        if (q >= ps->end || !is_digit(*q))
            return false;
        while (q < ps->end && is_digit(*q) && a < 100000)
            a = a * 10 + (unsigned)(*q++ - '0');
        b = a;
        if (q < ps->end && *q == ',') {
            q++;
            b = ~0u;
            if (q < ps->end && is_digit(*q)) {
                b = 0;
                while (q < ps->end && is_digit(*q) && b < 100000)
                    b = b * 10 + (unsigned)(*q++ - '0');
            }
        }
        if (q >= ps->end || *q != '}')
            return false;
        q++;
        *min = a;
        *max = b;
        break;
    }
    default:
        return false;
    }
    if (q < ps->end && (*q == '?' || *q == '+'))
        q++;
    ps->p = q;
    return true;
}

/* *dst = a copy of exact set *src. */
static void
info_copy(struct pf_parser *ps, struct pf_info *dst, const struct pf_info *src)
{
    memset(dst, 0, sizeof(*dst));
    dst->kind = src->kind;
    for (size_t i = 0; i < src->s.n; i++) {
        if (strv_add(&dst->s, src->s.v[i], strlen(src->s.v[i]), SIZE_MAX) < 0) {
            ps->nomem = true;
            info_release(dst);
            return;
        }
    }
}

/* x, exact, followed by itself until it stands for min repetitions, or
 * as many as the set and literal caps allow: every match of x{min,} holds
 * that many in a row, and "x{12,40}" then requires twelve x, not one. */
static void
repeat_exact(struct pf_parser *ps, struct pf_info *x, unsigned min)
{
    struct pf_info base;

    if (x->kind != PF_EXACT || min < 2)
        return;
    info_copy(ps, &base, x);
    for (unsigned k = 1; k < min && base.kind == PF_EXACT && !ps->nomem; k++) {
        struct pf_info next;

        info_copy(ps, &next, &base);
        if (!exact_concat(ps, x, &next)) {
            info_release(&next);
            break;
        }
    }
    info_release(&base);
}

/* One atom and its quantifier; false at the end of a sequence. An exact
 * atom repeated at least once (\s+, (?:ab|cd){2,}) is no longer exact,
 * but each of its first and last repetitions is one of its strings: that
 * set goes to *tail, so the sequence can join it to its neighbours. */
static bool
parse_atom(struct pf_parser *ps, struct pf_info *x, struct pf_info *tail)
{
    unsigned min, max;
    char c, lit;

    memset(x, 0, sizeof(*x));
    info_release(tail);
    if (ps->p >= ps->end || *ps->p == '|' || *ps->p == ')')
        return false;
    c = *ps->p++;
    switch (c) {
    case '(':
        parse_group(ps, x);
        break;
    case '[':
        parse_class(ps, x);
        break;
    case '\\':
        switch (parse_escape(ps, &lit, false)) {
        case 0:
            info_empty(ps, x);
            break;
        case 1:
            info_exact_char(ps, x, lit);
            break;
        case 3: {
            char wb = PF_WB;

            x->kind = PF_EXACT;
            if (strv_add(&x->s, &wb, 1, PF_SET_MAX) < 0)
                ps->nomem = true;
            break;
        }
        case 4:
            for (const char *sp = pf_space; *sp != '\0'; sp++)
                info_exact_char(ps, x, *sp);
            break;
        default:
            break;
        }
        break;
    case '^':
    case '$':
        info_empty(ps, x);
        break;
    case '.':
        break;
    case '*':
    case '+':
    case '?':
        ps->fail = true;
        break;
    default:
        if ((unsigned char)c >= 0x80) {
            while (ps->p < ps->end && ((unsigned char)*ps->p & 0xc0) == 0x80)
                ps->p++;
            break;
        }
        info_exact_char(ps, x, c);
        break;
    }
    if (ps->fail)
        return false;
    while (parse_quant(ps, &min, &max)) {
        if (min == 0 && max == 1 && x->kind == PF_EXACT) {
            int r = strv_add_unique(&x->s, "", 0, PF_SET_MAX);

            if (r < 0) {
                ps->nomem = r == -ENOMEM;
                info_release(x);
            }
        } else if (min == 0) {
            info_release(x);
            info_release(tail);
        } else if (!(min == 1 && max == 1)) {
            if (x->kind == PF_EXACT && tail->kind == PF_ANY)
                info_copy(ps, tail, x);
            repeat_exact(ps, x, min);
            info_to_req(x);
        }
    }
    return true;
}

/* True for a character parse_atom() takes as itself, lowered, with
 * nothing to parse after it. '{' may open a quantifier, a NUL would cut
 * the string short and PF_WB is no character: those take the long way. */
static bool
is_plain(char c)
{
    return c != '\0' && c != PF_WB && (unsigned char)c < 0x80 &&
           strchr("\\()[]{^$.*+?|", c) == NULL;
}

/* Append the plain characters at ps->p (those not followed by what may
 * be a quantifier) to cur, a single exact string, as parse_atom() and
 * exact_concat() would one at a time: most of a pattern is such runs,
 * and this spares a set for each character. False when none is taken. */
static bool
plain_run(struct pf_parser *ps, struct pf_info *cur, struct pf_info *tail)
{
    const char *q = ps->p;
    size_t la, n;
    char *v;

    if (cur->kind != PF_EXACT || cur->s.n != 1)
        return false;
    la = strlen(cur->s.v[0]);
    while (q < ps->end && la + (size_t)(q - ps->p) < PF_LIT_MAX && is_plain(*q) &&
           !(q + 1 < ps->end && strchr("?*+{", q[1]) != NULL))
        q++;
    n = (size_t)(q - ps->p);
    if (n == 0)
        return false;
    v = realloc(cur->s.v[0], la + n + 1);
    if (v == NULL) {
        ps->nomem = true;
        return false;
    }
    for (size_t i = 0; i < n; i++)
        v[la + i] = lower(ps->p[i]);
    v[la + n] = '\0';
    cur->s.v[0] = v;
    ps->p = q;
    info_release(tail);
    return true;
}

/* best = the better filter of best and x (both required or any); x is
 * consumed. Each atom (or run of exact atoms) of the top-level sequence
 * offers a set that every match needs on its own, so a pattern may use
 * several at once ("foo\s+bar" needs both "foo" and "bar"): x also goes
 * to the candidates, moved there when best does not take it. They are
 * meaningless once a top-level '|' shows up; the caller checks. */
static void
offer(struct pf_parser *ps, struct pf_info *best, struct pf_info *x)
{
    bool cand, better;

    info_to_req(x);
    cand = ps->cand != NULL && ps->depth == 0 && ps->n_cand < PF_COLLECT_MAX && x->kind == PF_REQ &&
           min_len(x) >= PF_LIT_MIN;
    better = req_better(x, best);
    if (cand && better) {
        info_copy(ps, &ps->cand[ps->n_cand], x);
        if (ps->cand[ps->n_cand].kind == PF_REQ)
            ps->n_cand++;
    } else if (cand) {
        ps->cand[ps->n_cand++] = *x;
        memset(x, 0, sizeof(*x));
    }
    if (better) {
        info_release(best);
        *best = *x;
        memset(x, 0, sizeof(*x));
    }
    info_release(x);
}

/* A sequence stays exact while every atom is and the product fits;
 * otherwise each run of exact atoms and each other atom offers its
 * required set, and the best one is kept. */
static void
parse_seq(struct pf_parser *ps, struct pf_info *ret)
{
    struct pf_info atom = {0}, cur = {0}, tail = {0};
    bool exact = true;

    memset(ret, 0, sizeof(*ret));
    info_empty(ps, &cur);
    while (!ps->fail) {
        if (plain_run(ps, &cur, &tail))
            continue;
        if (!parse_atom(ps, &atom, &tail))
            break;
        if (exact_concat(ps, &cur, &atom))
            continue;
        exact = false;
        if (tail.kind == PF_EXACT) {
            /* The first repetition follows cur. */
            struct pf_info head;

            info_copy(ps, &head, &tail);
            if (!exact_concat(ps, &cur, &head))
                info_release(&head);
        }
        offer(ps, ret, &cur);
        if (atom.kind == PF_EXACT) {
            cur = atom;
            memset(&atom, 0, sizeof(atom));
        } else {
            offer(ps, ret, &atom);
            if (tail.kind == PF_EXACT) {
                /* What follows follows the last repetition. */
                cur = tail;
                memset(&tail, 0, sizeof(tail));
            } else {
                info_empty(ps, &cur);
            }
        }
    }
    info_release(&atom);
    info_release(&tail);
    if (exact) {
        info_release(ret);
        *ret = cur;
        return;
    }
    offer(ps, ret, &cur);
}

static void
parse_alt(struct pf_parser *ps, struct pf_info *ret)
{
    struct pf_info branch;

    parse_seq(ps, ret);
    while (!ps->fail && ps->p < ps->end && *ps->p == '|') {
        if (ps->depth == 0)
            ps->top_alt = true;
        ps->p++;
        parse_seq(ps, &branch);
        info_alt(ps, ret, &branch);
    }
}

/* What redundant() knows of a literal before comparing it: its length
 * and the bytes in it, each as bit (byte % 64). */
struct lit_shape {
    size_t len;
    uint64_t bytes;
};

static struct lit_shape
lit_shape(const char *s)
{
    struct lit_shape sh = {strlen(s), 0};

    for (size_t i = 0; i < sh.len; i++)
        sh.bytes |= UINT64_C(1) << ((unsigned char)s[i] % 64);
    return sh;
}

/* True when some other literal of v is a substring of v[i]: v[i] then
 * adds nothing to the filter. An equal one only counts once, so the
 * first of equals stays. Only a literal no longer than v[i], with no
 * byte that v[i] lacks, can be in it: sh[] spares most compares. */
static bool
redundant(const struct strv *v, const struct lit_shape *sh, size_t i)
{
    for (size_t j = 0; j < v->n; j++) {
        if (j == i || sh[j].len > sh[i].len || (sh[j].bytes & ~sh[i].bytes) != 0)
            continue;
        if (sh[j].len == sh[i].len ? j < i && strcmp(v->v[i], v->v[j]) == 0
                                   : strstr(v->v[i], v->v[j]) != NULL)
            return true;
    }
    return false;
}

/* The literals of required set x into *ret, less those that contain
 * another (they add nothing). */
static int
finish_set(const struct pf_info *x, struct strv *ret)
{
    struct lit_shape *sh;
    int r = 0;

    memset(ret, 0, sizeof(*ret));
    sh = malloc((x->s.n ? x->s.n : 1) * sizeof(*sh));
    if (sh == NULL)
        return -ENOMEM;
    for (size_t i = 0; i < x->s.n; i++)
        sh[i] = lit_shape(x->s.v[i]);
    for (size_t i = 0; i < x->s.n; i++) {
        if (redundant(&x->s, sh, i))
            continue;
        r = strv_add(ret, x->s.v[i], sh[i].len, PF_REQ_MAX);
        if (r < 0) {
            strv_release(ret);
            break;
        }
    }
    free(sh);
    return r;
}

static bool
same_set(const struct pf_info *a, const struct pf_info *b)
{
    if (a->s.n != b->s.n)
        return false;
    for (size_t i = 0; i < a->s.n; i++) {
        bool found = false;

        for (size_t j = 0; j < b->s.n && !found; j++)
            found = strcmp(a->s.v[i], b->s.v[j]) == 0;
        if (!found)
            return false;
    }
    return true;
}

/* Parse the pattern in ps into x and reduce it to a required set: 1 when
 * that set can filter, 0 when the pattern must always run, -ENOMEM. */
static int
parse_required(struct pf_parser *ps, uint32_t options, struct pf_info *x)
{
    if ((options & (PCRE2_EXTENDED | PCRE2_LITERAL)) != 0)
        return 0;
    parse_alt(ps, x);
    if (ps->nomem)
        return -ENOMEM;
    if (ps->fail || ps->p != ps->end)
        return 0;
    info_to_req(x);
    return x->kind == PF_REQ && min_len(x) >= PF_LIT_MIN;
}

/* rule_prefilter_literal_sets() with the word boundaries and the white
 * space at the ends still in (lit_strip() takes them out). */
static int
literal_sets(const char *src, size_t len, uint32_t options, struct strv ret[RULE_PF_SETS],
             size_t *n)
{
    struct pf_info cand[PF_COLLECT_MAX], x = {0};
    struct pf_parser ps = {.p = src, .end = src + len, .cand = cand};
    bool used[PF_COLLECT_MAX] = {false};
    const struct pf_info *chosen[RULE_PF_SETS];
    int r = 0;

    *n = 0;
    memset(ret, 0, RULE_PF_SETS * sizeof(*ret));
    r = parse_required(&ps, options, &x);
    if (r <= 0)
        goto out;
    chosen[0] = &x;
    r = finish_set(&x, &ret[(*n)++]);
    /* The best of the rest first, each distinct from those taken. */
    while (r == 0 && !ps.top_alt && *n < RULE_PF_SETS) {
        size_t best = SIZE_MAX;

        for (size_t i = 0; i < ps.n_cand; i++) {
            for (size_t k = 0; k < *n && !used[i]; k++)
                used[i] = same_set(&cand[i], chosen[k]);
            if (!used[i] && (best == SIZE_MAX || req_better(&cand[i], &cand[best])))
                best = i;
        }
        if (best == SIZE_MAX)
            break;
        used[best] = true;
        chosen[*n] = &cand[best];
        r = finish_set(&cand[best], &ret[(*n)++]);
    }
out:
    if (r < 0) {
        for (size_t k = 0; k < RULE_PF_SETS; k++)
            strv_release(&ret[k]);
        *n = 0;
    }
    info_release(&x);
    for (size_t i = 0; i < ps.n_cand; i++)
        info_release(&cand[i]);
    return r;
}

/* What the scan tests next to a literal: a word boundary, or white space
 * (which the analyser's strings carry at their ends after \s+; taken
 * off, the table keys on letters, not on " o" and "\to"). */
enum {
    PF_WB_START = 1,
    PF_WB_END = 2,
    PF_WS_START = 4,
    PF_WS_END = 8,
};

static bool
is_word(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || is_digit((char)c) || c == '_';
}

static bool
is_space(unsigned char c)
{
    /* pf_space: ' ', '\t', '\n', '\v', '\f', '\r' */
    return c == ' ' || (c >= '\t' && c <= '\r');
}

/* The core of lit into out (PF_LIT_MAX + 1 bytes): without its word
 * boundaries and the white space at its ends. *flags gets the PF_* tests
 * that stand for them: white space at an end needs a white space byte
 * there; a boundary before a word character needs a non-word byte (or
 * the start) before it, and likewise at the end. Returns the length. */
static size_t
lit_strip(const char *lit, char *out, unsigned *flags)
{
    char tmp[PF_LIT_MAX + 1];
    size_t n = 0, len = strlen(lit), lead = 0;

    *flags = 0;
    out[0] = '\0';
    /* Longer than the analyser makes them: no literal, never a cut one. */
    if (len > PF_LIT_MAX)
        return 0;
    for (size_t i = 0; i < len; i++)
        if (lit[i] != PF_WB)
            tmp[n++] = lit[i];
    while (lead < n && is_space((unsigned char)tmp[lead]))
        lead++;
    while (n > lead && is_space((unsigned char)tmp[n - 1])) {
        n--;
        *flags |= PF_WS_END;
    }
    if (lead > 0)
        *flags |= PF_WS_START;
    n -= lead;
    memcpy(out, tmp + lead, n);
    out[n] = '\0';
    if (n > 0 && lead == 0 && lit[0] == PF_WB && is_word((unsigned char)out[0]))
        *flags |= PF_WB_START;
    if (n > 0 && (*flags & PF_WS_END) == 0 && lit[len - 1] == PF_WB &&
        is_word((unsigned char)out[n - 1]))
        *flags |= PF_WB_END;
    return n;
}

/* Strength of a literal: the length of its core, one more per test. */
static size_t
lit_strength(const char *lit)
{
    char buf[PF_LIT_MAX + 1];
    unsigned flags;
    size_t n = lit_strip(lit, buf, &flags);

    for (; flags != 0; flags &= flags - 1)
        n++;
    return n;
}

/* True when every literal of v keeps at least PF_LIT_MIN characters once
 * its boundaries are taken out: the table needs them. */
static bool
set_usable(const struct strv *v)
{
    char buf[PF_LIT_MAX + 1];
    unsigned flags;

    for (size_t i = 0; i < v->n; i++)
        if (lit_strip(v->v[i], buf, &flags) < PF_LIT_MIN)
            return false;
    return v->n > 0;
}

/* v with its boundaries taken out, as the public functions give it. */
static int
set_strip(struct strv *v)
{
    struct strv out = {0};
    char buf[PF_LIT_MAX + 1];
    unsigned flags;
    int r = 0;

    for (size_t i = 0; i < v->n && r == 0; i++) {
        size_t n = lit_strip(v->v[i], buf, &flags);

        r = strv_add_unique(&out, buf, n, PF_REQ_MAX);
    }
    strv_release(v);
    if (r < 0) {
        strv_release(&out);
        return r;
    }
    *v = out;
    return 0;
}

int
rule_prefilter_literal_sets(const char *src, size_t len, uint32_t options,
                            struct strv ret[RULE_PF_SETS], size_t *n)
{
    size_t k = 0;
    int r;

    r = literal_sets(src, len, options, ret, n);
    if (r < 0)
        return r;
    /* Keep the usable sets in order; none when the first is not. */
    for (size_t i = 0; i < *n; i++) {
        if (!set_usable(&ret[i]) || (i > 0 && k == 0)) {
            strv_release(&ret[i]);
            continue;
        }
        if (r == 0)
            r = set_strip(&ret[i]);
        if (k != i) {
            ret[k] = ret[i];
            memset(&ret[i], 0, sizeof(ret[i]));
        }
        k++;
    }
    *n = k;
    if (r < 0) {
        for (size_t i = 0; i < RULE_PF_SETS; i++)
            strv_release(&ret[i]);
        *n = 0;
    }
    return r;
}

int
rule_prefilter_literals(const char *src, size_t len, uint32_t options, struct strv *ret)
{
    struct pf_parser ps = {.p = src, .end = src + len};
    struct pf_info x = {0};
    int r = 0;

    memset(ret, 0, sizeof(*ret));
    r = parse_required(&ps, options, &x);
    if (r <= 0)
        goto out;
    r = finish_set(&x, ret);
    if (r < 0)
        goto out;
    if (!set_usable(ret))
        strv_release(ret);
    else
        r = set_strip(ret);
out:
    info_release(&x);
    return r;
}

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

static uint16_t
key2(const char *s)
{
    return (uint16_t)((unsigned char)lower(s[0]) << 8 | (unsigned char)lower(s[1]));
}

/* Hash of three bytes, b0 << 16 | b1 << 8 | b2, to PF_BITS3 bits. */
static uint32_t
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

static uint32_t
word3_of(uint32_t w)
{
    /* (w << 8) * K: the byte above the three drops out of the product. */
    return (w * PF_WORD3_MUL) >> (32 - PF_WORDS3_BITS);
}

static uint32_t
bit3_of(uint32_t w)
{
    return w & 31u;
}

static void
bits3_set(uint32_t *bits3, uint16_t key, unsigned char c)
{
    uint32_t w = (uint32_t)key << 8 | c;

    bits3[word3_of(w)] |= 1u << bit3_of(w);
}

static unsigned
bucket(uint16_t key)
{
    return (unsigned)((key * 40503u) >> 4) & (PF_BUCKETS - 1);
}

/* How far a head of len bytes (two at least) is shifted right to drop
 * the bytes past it: less than 64, as shifts must be. */
static uint8_t
head_shift(unsigned len)
{
    return (uint8_t)(len >= 8 ? 0 : 8 * (8 - len));
}

static uint64_t
head_of(const char *lit, size_t len)
{
    uint64_t h = 0;

    for (size_t i = 0; i < 8; i++)
        h = h << 8 | (i < len ? (unsigned char)lower(lit[i]) : 0u);
    return h;
}

/* Longer literals are bucketed by their first three bytes, which keeps
 * the entries a candidate position walks few; two-byte ones follow. */
static unsigned
entry_bucket(const struct pf_entry *e)
{
    if (e->len == 2)
        return PF_BUCKETS + bucket((uint16_t)(e->head >> 48));
    return hash24((uint32_t)(e->head >> 40)) >> 6;
}

_Static_assert(sizeof(((struct rule_pattern *)0)->pf_and) / sizeof(uint32_t) == RULE_PF_SETS - 1,
               "pf_and holds every set after the first");

/* Strength of the weakest literal of v (a two-byte word "ai" filters like
 * a literal of three bytes, far better than "ai" inside words). */
static size_t
shortest(const struct strv *v)
{
    size_t m = SIZE_MAX;

    for (size_t i = 0; i < v->n; i++) {
        size_t n = lit_strength(v->v[i]);

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
            if ((flags & PF_WS_END) != 0 && !is_space((unsigned char)c))
                continue;
            if ((flags & PF_WB_END) != 0 && is_word((unsigned char)c) && c != 'k' && c != 's')
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
        if (!set_has(&out, out.n, out_len, buf, len)) {
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

    /* Cores with their tests, each once: "found " and "found\t" are one
     * entry. The first byte of a key is its PF_* tests. */
    for (size_t i = 0; i < lits->n; i++) {
        char buf[PF_LIT_MAX + 2];
        unsigned flags;
        size_t n = lit_strip(lits->v[i], buf + 1, &flags);

        if (n < PF_LIT_MIN) {
            r = 0;
            goto out;
        }
        buf[0] = (char)('@' + flags);
        if (set_has(&keys, keys.n, key_len, buf, n + 1))
            continue;
        r = strv_add(&keys, buf, n + 1, PF_REQ_MAX);
        if (r < 0)
            goto out;
        key_len[keys.n - 1] = n + 1;
    }
    r = keys_collapse(&keys, key_len);
    if (r < 0)
        goto out;
    first = pf->lits.n;
    for (size_t i = 0; i < keys.n; i++) {
        r = strv_add(&pf->lits, keys.v[i] + 1, strlen(keys.v[i] + 1), SIZE_MAX);
        if (r < 0)
            goto out;
    }
    r = 0;
    if (pf->n_patterns >= PF_PATTERN_MAX)
        goto out;
    if ((pf->n_patterns & (pf->n_patterns - 1)) == 0) {
        /* Doubled at each power of two. */
        struct pf_needles *nd =
            realloc(pf->needles, (pf->n_patterns ? 2 * pf->n_patterns : 1) * sizeof(*nd));

        if (nd == NULL) {
            r = -ENOMEM;
            goto out;
        }
        pf->needles = nd;
    }
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
        size_t n = lit_strip(lits->v[i], buf, &flags);

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
    r = literal_sets(pat->source, pat->len, pat->options, sets, &n_sets);
    if (r < 0 || n_sets == 0)
        return r;
    if (!set_usable(&sets[0]))
        goto out;
    for (unsigned g = 0; g < PF_GROUPS; g++) {
        struct pf_region **slot = &pf->regions[region * PF_GROUPS + g];

        if ((groups & (1u << g)) == 0)
            continue;
        if (*slot == NULL) {
            *slot = calloc(1, sizeof(**slot));
            if (*slot == NULL) {
                r = -ENOMEM;
                goto out;
            }
        }
        rgs[n_rg++] = *slot;
    }
    for (size_t k = 0, a = 0; k < n_sets && r == 0; k++) {
        if (k > 0 && !set_usable(&sets[k]))
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

/* Options in "(?...)" at p (just after "(?"), up to ':' or ')': sets
 * *setting when it is "(?flags)", *x when it turns on x mode. False when
 * p is not an option group. */
static bool
option_group(const char *p, const char *end, bool *setting, bool *x)
{
    const char *q = p;
    bool off = false;

    *setting = *x = false;
    while (q < end &&
           ((*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z') || *q == '-' || *q == '^')) {
        if (*q == '-')
            off = true;
        else if (*q == 'x' && !off)
            *x = true;
        q++;
    }
    if (q == p || q >= end || (*q != ':' && *q != ')'))
        return false;
    *setting = *q == ')';
    return true;
}

int
rule_prefilter_alternatives(const char *src, size_t len, uint32_t options, struct strv *ret)
{
    const char *p = src, *end = src + len, *start = src;
    unsigned depth = 0;
    bool in_class = false, setting, x;
    int r = 0;

    memset(ret, 0, sizeof(*ret));
    if ((options & (PCRE2_EXTENDED | PCRE2_EXTENDED_MORE | PCRE2_LITERAL)) != 0)
        return 0;
    for (; p < end; p++) {
        char c = *p;

        if (c == '\\') {
            if (++p >= end)
                goto none;
            c = *p;
            /* Back references, \K, \G, and \Q...\E which hides a '|'. */
            if (is_digit(c) || c == 'g' || c == 'k' || c == 'K' || c == 'G' || c == 'Q' || c == 'E')
                goto none;
            /* \c takes the byte after it, even a '|', ')' or ']'. */
            if (c == 'c' && ++p >= end)
                goto none;
            continue;
        }
        if (in_class) {
            if (c == '[' && p + 1 < end && (p[1] == ':' || p[1] == '.' || p[1] == '=')) {
                const char *q = rule_prefix_posix_end(p, end);

                /* On its last byte, the ']': the loop steps past it. */
                if (q != NULL)
                    p = q - 1;
            } else if (c == ']') {
                in_class = false;
            }
            continue;
        }
        switch (c) {
        case '[':
            in_class = true;
            if (p + 1 < end && p[1] == '^')
                p++;
            /* A ']' first in a class is a literal. */
            if (p + 1 < end && p[1] == ']')
                p++;
            break;
        case '(':
            if (p + 1 < end && p[1] == '*')
                goto none;
            if (p + 1 < end && p[1] == '?' && p + 2 < end) {
                char q = p[2];

                if (q == '(' || q == '|' || q == 'R' || q == '&' || q == 'P' || q == '+' ||
                    q == '#' || q == 'C' || is_digit(q) ||
                    (q == '-' && p + 3 < end && is_digit(p[3])))
                    goto none;
                if (option_group(p + 2, end, &setting, &x) && (x || (setting && depth == 0)))
                    goto none;
            }
            if (++depth > PF_DEPTH_MAX)
                goto none;
            break;
        case ')':
            if (depth == 0)
                goto none;
            depth--;
            break;
        case '|':
            if (depth > 0)
                break;
            r = strv_add(ret, start, (size_t)(p - start), PF_REQ_MAX);
            if (r < 0)
                goto none;
            start = p + 1;
            break;
        default:
            break;
        }
    }
    if (depth != 0 || in_class || ret->n == 0)
        goto none;
    r = strv_add(ret, start, (size_t)(end - start), PF_REQ_MAX);
    if (r < 0)
        goto none;
    return 0;
none:
    strv_release(ret);
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
    r = rule_prefilter_alternatives(pat->source, pat->len, pat->options, &alts);
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

/* Whether scan_text() takes the vector path: chosen once, for this
 * machine, unless rule_prefilter_vector() turned it off. */
static bool pf_vector;
static pthread_once_t pf_vector_once = PTHREAD_ONCE_INIT;

static void
pf_vector_init(void)
{
#ifdef ASCII_VECTOR
    pf_vector = ascii_vector_ok();
#endif
}

bool
rule_prefilter_vector(bool want)
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

int
rule_prefilter_build(struct rule_set *set)
{
    struct rule_prefilter *pf;
    bool *asked = NULL;
    int r;

    pthread_once(&pf_vector_once, pf_vector_init);
    pf = calloc(1, sizeof(*pf));
    if (pf == NULL)
        return -ENOMEM;
    r = asked_by_patches(set, &asked);
    for (size_t i = 0; i < set->n_rules && r == 0; i++) {
        struct rule *rule = &set->rules[i];
        unsigned groups = groups_of(rule, asked[i]);

        for (size_t c = 0; c < rule->n_conds && r == 0; c++) {
            struct rule_cond *cond = &rule->conds[c];

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
        }
    }
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

static bool
eq_ci(const char *text, const char *lit, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (lower(text[i]) != lit[i])
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
    if ((e->tests & PF_WB_START) != 0 && i > 0 && is_word((unsigned char)s[i - 1]))
        return false;
    if ((e->tests & PF_WB_END) != 0 && end < len && is_word((unsigned char)s[end]))
        return false;
    if ((e->tests & PF_WS_START) != 0 && (i == 0 || !is_space((unsigned char)s[i - 1])))
        return false;
    if ((e->tests & PF_WS_END) != 0 && (end >= len || !is_space((unsigned char)s[end])))
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
rule_prefilter_state_release(struct rule_prefilter_state *st)
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
rule_prefilter_possible(struct rule_prefilter_state *st, const struct rule_set *set,
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
