/*
 * rule_prefilter_parse.c - the prefilter's analyser: read a pattern's
 * source into sets of ASCII-lowercased literals such that every match
 * contains one literal of each set. Syntax it does not fully understand
 * makes it give up, and the pattern then always runs.
 * See rule_prefilter.c for the design. No state; thread-safe.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rule.h"
#include "rule_prefilter_parse.h"
#include "rule_prefix.h"

#define PF_SET_MAX 64u /* strings in an exact set */

/* What \s matches: without PCRE2_UCP (RULE_PCRE2_OPTIONS has none, and
 * no rule flag sets it) only the "C" locale's white space, all ASCII. */
static const char pf_space[] = " \t\n\v\f\r";

_Static_assert((RULE_PCRE2_OPTIONS & PCRE2_UCP) == 0, "\\s is ASCII white space only");

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

static void
info_exact_char(struct pf_parser *ps, struct pf_info *x, char c)
{
    char s = pf_lower(c);

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
 * boundaries and white space at either end, as rule_prefilter_lit_core() cuts it but
 * without the copy (this runs often). *odd_space: a white space cut off
 * at an end is not ' '. */
static void
core_span(const char *v, size_t *start, size_t *end, bool *odd_space)
{
    size_t a = 0, b = strlen(v);
    bool odd = false;

    while (a < b && (v[a] == PF_WB || pf_is_space((unsigned char)v[a]))) {
        odd |= v[a] != PF_WB && v[a] != ' ';
        a++;
    }
    while (b > a && (v[b - 1] == PF_WB || pf_is_space((unsigned char)v[b - 1]))) {
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
        if (rule_prefilter_lit_has(&a->s, n, lens, v, lens[i] + lb)) {
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
            if (rule_prefilter_lit_has(&out, out.n, out_len, buf, la + lb[j]))
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

        if (rule_prefilter_lit_has(&a->s, a->s.n, lens, b->s.v[i], len))
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

static int
hex_value(char c)
{
    if (pf_is_digit(c))
        return c - '0';
    c = pf_lower(c);
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

/* Past the name of a Unicode property after \p or \P: "{Name}" or one
 * letter. */
static void
skip_property(struct pf_parser *ps)
{
    if (ps->p < ps->end && *ps->p == '{') {
        const char *e = memchr(ps->p, '}', (size_t)(ps->end - ps->p));

        if (e == NULL)
            ps->fail = true;
        else
            ps->p = e + 1;
    } else if (ps->p < ps->end) {
        ps->p++;
    }
}

/* \x after the 'x', as parse_escape() returns it: an ASCII byte is a
 * literal, anything else a class. */
static int
parse_hex_escape(struct pf_parser *ps, char *lit)
{
    long v = parse_hex(ps);

    if (v < 0)
        ps->fail = true;
    if (v <= 0 || v >= 0x80)
        return 2;
    *lit = (char)v;
    return 1;
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
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || pf_is_digit(c))) {
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
        skip_property(ps);
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
    case 'x':
        return parse_hex_escape(ps, lit);
    default:
        ps->fail = true;
        return 2;
    }
}

/* A class being read: its ASCII members, folded to lower case. */
struct pf_class {
    unsigned char set[128];
    bool any; /* a member outside ASCII, or one not known exactly */
    int prev; /* the last single member, a range's low end, or -1 */
};

/* A range after its '-' (at ps->p): marks prev..hi, or makes the class
 * inexact when hi is not ASCII or below prev. False when the high end is
 * a bad escape, which fails the parse. */
static bool
class_range(struct pf_parser *ps, struct pf_class *cl)
{
    char lit;
    int hi;

    ps->p++;
    if (*ps->p == '\\') {
        ps->p++;
        if (parse_escape(ps, &lit, true) != 1) {
            ps->fail = true;
            return false;
        }
        hi = (unsigned char)lit;
    } else {
        hi = (unsigned char)*ps->p++;
    }
    if (hi >= 0x80 || hi < cl->prev) {
        cl->any = true;
    } else {
        for (int k = cl->prev; k <= hi; k++)
            cl->set[(unsigned char)pf_lower((char)k)] = 1;
    }
    cl->prev = -1;
    return true;
}

/* One member that is not a range: a byte, an escape, or a UTF-8
 * sequence. An escape that is not one byte makes the class inexact. */
static void
class_single(struct pf_parser *ps, struct pf_class *cl)
{
    char lit;
    int c;

    if (*ps->p == '\\') {
        ps->p++;
        if (parse_escape(ps, &lit, true) != 1) {
            cl->any = true;
            cl->prev = -1;
            return;
        }
        c = (unsigned char)lit;
    } else {
        c = (unsigned char)*ps->p++;
    }
    if (c >= 0x80) {
        /* Skip the rest of the UTF-8 sequence: one class member. */
        while (ps->p < ps->end && ((unsigned char)*ps->p & 0xc0) == 0x80)
            ps->p++;
        cl->any = true;
        cl->prev = -1;
        return;
    }
    cl->set[(unsigned char)pf_lower((char)c)] = 1;
    cl->prev = c;
}

/* "[:", "[." or "[=" inside a class: POSIX forms the parser does not
 * read, so the parse fails. */
static bool
class_at_posix(const struct pf_parser *ps)
{
    return *ps->p == '[' && ps->p + 1 < ps->end &&
           (ps->p[1] == ':' || ps->p[1] == '.' || ps->p[1] == '=');
}

/* A '-' that opens a range: after a single member, not last. */
static bool
class_at_range(const struct pf_parser *ps, const struct pf_class *cl)
{
    return *ps->p == '-' && cl->prev >= 0 && ps->p + 1 < ps->end && ps->p[1] != ']';
}

/* A read class as an exact set: one to eight ASCII bytes, not negated,
 * no inexact member, no word boundary marker. */
static void
class_exact(struct pf_parser *ps, struct pf_info *x, const struct pf_class *cl, bool negate)
{
    unsigned n = 0;

    if (negate || cl->any || cl->set[(unsigned char)PF_WB])
        return;
    for (unsigned k = 0; k < 128; k++)
        n += cl->set[k];
    if (n == 0 || n > 8)
        return;
    x->kind = PF_EXACT;
    for (unsigned k = 0; k < 128; k++) {
        char s = (char)k;

        if (cl->set[k] && strv_add(&x->s, &s, 1, PF_SET_MAX) < 0)
            ps->nomem = true;
    }
}

/* A character class after '['. Small classes of ASCII bytes are exact. */
static void
parse_class(struct pf_parser *ps, struct pf_info *x)
{
    struct pf_class cl = {.prev = -1};
    bool negate = false;

    if (ps->p < ps->end && *ps->p == '^') {
        negate = true;
        ps->p++;
    }
    /* A ']' first in the class is a member, not its end. */
    for (bool first = true;; first = false) {
        if (ps->p >= ps->end) {
            ps->fail = true;
            return;
        }
        if (*ps->p == ']' && !first) {
            ps->p++;
            break;
        }
        if (class_at_posix(ps)) {
            ps->fail = true;
            return;
        }
        if (!class_at_range(ps, &cl))
            class_single(ps, &cl);
        else if (!class_range(ps, &cl))
            return;
    }
    class_exact(ps, x, &cl, negate);
}

static void parse_alt(struct pf_parser *ps, struct pf_info *ret);

/* After "(?<": a look-behind (sets *zero_width) or a named group's
 * name, up to its '>'. */
static void
group_after_angle(struct pf_parser *ps, bool *zero_width)
{
    if (ps->p < ps->end && (*ps->p == '=' || *ps->p == '!')) {
        ps->p++;
        *zero_width = true;
        return;
    }
    while (ps->p < ps->end && *ps->p != '>')
        ps->p++;
    if (ps->p >= ps->end) {
        ps->fail = true;
        return;
    }
    ps->p++;
}

/* Option letters after "(?": "(?i)" sets them and returns true, as no
 * group follows; "(?i:" opens a group. Fails on anything else, and on
 * x, which changes what white space means. */
static bool
group_options(struct pf_parser *ps)
{
    const char *q = ps->p;

    while (q < ps->end &&
           ((*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z') || *q == '-' || *q == '^')) {
        if (*q == 'x')
            ps->fail = true;
        q++;
    }
    if (q == ps->p || q >= ps->end || (*q != ':' && *q != ')'))
        ps->fail = true;
    if (ps->fail)
        return false;
    ps->p = q + 1;
    return *q == ')';
}

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
            group_after_angle(ps, &zero_width);
            if (ps->fail)
                return;
            break;
        default:
            if (group_options(ps)) {
                ps->depth--;
                info_empty(ps, x);
                return;
            }
            if (ps->fail)
                return;
            break;
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

/* The digits at *q as a count; past 100000 it grows no more. */
static unsigned
quant_number(const char **q, const char *end)
{
    unsigned v = 0;

    while (*q < end && pf_is_digit(**q) && v < 100000)
        v = v * 10 + (unsigned)(*(*q)++ - '0');
    return v;
}

/* "a}", "a,}" or "a,b}" at q, after a '{': sets *min and *max and returns
 * the end of the quantifier, or NULL when it is none (then '{' is a
 * literal to PCRE2). */
static const char *
parse_braces(const char *q, const char *end, unsigned *min, unsigned *max)
{
    unsigned a, b;

    if (q >= end || !pf_is_digit(*q))
        return NULL;
    a = quant_number(&q, end);
    b = a;
    if (q < end && *q == ',') {
        q++;
        b = ~0u;
        if (q < end && pf_is_digit(*q))
            b = quant_number(&q, end);
    }
    if (q >= end || *q != '}')
        return NULL;
    *min = a;
    *max = b;
    return q + 1;
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
    case '{':
        q = parse_braces(q + 1, ps->end, min, max);
        if (q == NULL)
            return false;
        break;
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

/* An escape outside a class as an atom's set: a literal, \b's mark,
 * the white space of \s, the empty string of an assertion, or any. */
static void
atom_escape(struct pf_parser *ps, struct pf_info *x)
{
    char lit, wb = PF_WB;

    switch (parse_escape(ps, &lit, false)) {
    case 0:
        info_empty(ps, x);
        break;
    case 1:
        info_exact_char(ps, x, lit);
        break;
    case 3:
        x->kind = PF_EXACT;
        if (strv_add(&x->s, &wb, 1, PF_SET_MAX) < 0)
            ps->nomem = true;
        break;
    case 4:
        for (const char *sp = pf_space; *sp != '\0'; sp++)
            info_exact_char(ps, x, *sp);
        break;
    default:
        break;
    }
}

/* One atom and its quantifier; false at the end of a sequence. An exact
 * atom repeated at least once (\s+, (?:ab|cd){2,}) is no longer exact,
 * but each of its first and last repetitions is one of its strings: that
 * set goes to *tail, so the sequence can join it to its neighbours. */
static bool
parse_atom(struct pf_parser *ps, struct pf_info *x, struct pf_info *tail)
{
    unsigned min, max;
    char c;

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
        atom_escape(ps, x);
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
        v[la + i] = pf_lower(ps->p[i]);
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

/* rule_prefilter_parse_sets() with the word boundaries and the white
 * space at the ends still in (rule_prefilter_lit_core() takes them out). */
int
rule_prefilter_parse_marked(const char *src, size_t len, uint32_t options,
                            struct strv ret[RULE_PF_SETS], size_t *n)
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
    r = rule_prefilter_lit_prune(&x.s, &ret[(*n)++]);
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
        r = rule_prefilter_lit_prune(&cand[best].s, &ret[(*n)++]);
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

int
rule_prefilter_parse_sets(const char *src, size_t len, uint32_t options,
                          struct strv ret[RULE_PF_SETS], size_t *n)
{
    size_t k = 0;
    int r;

    r = rule_prefilter_parse_marked(src, len, options, ret, n);
    if (r < 0)
        return r;
    /* Keep the usable sets in order; none when the first is not. */
    for (size_t i = 0; i < *n; i++) {
        if (!rule_prefilter_lit_usable(&ret[i]) || (i > 0 && k == 0)) {
            strv_release(&ret[i]);
            continue;
        }
        if (r == 0)
            r = rule_prefilter_lit_unmark(&ret[i]);
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
rule_prefilter_parse_literals(const char *src, size_t len, uint32_t options, struct strv *ret)
{
    struct pf_parser ps = {.p = src, .end = src + len};
    struct pf_info x = {0};
    int r = 0;

    memset(ret, 0, sizeof(*ret));
    r = parse_required(&ps, options, &x);
    if (r <= 0)
        goto out;
    r = rule_prefilter_lit_prune(&x.s, ret);
    if (r < 0)
        goto out;
    if (!rule_prefilter_lit_usable(ret))
        strv_release(ret);
    else
        r = rule_prefilter_lit_unmark(ret);
out:
    info_release(&x);
    return r;
}
