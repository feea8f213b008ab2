/*
 * rule_prefix.c - the literals that begin every match of a pattern, and
 * the anchored tries at their places in a text (see rule_prefix.h).
 *
 * The reader follows one alternative at a time: it passes over zero-width
 * items (\b, \B, \A, ^, lookarounds, comments, option settings), then
 * takes the first atom. A run of literal characters gives the run, up to
 * the first character a quantifier may leave out; a group gives the
 * literals of each of its alternatives, when no quantifier lets it match
 * nothing. Anything else (a class, \d, a dot, a back reference) and the
 * pattern has no prefix set. The rest of the alternative is skipped. So
 * every literal found is a prefix of some match's text, and every match
 * starts with one of them: a shorter literal than the longest possible
 * is only a weaker search, never a wrong one.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "ascii.h"
#include "rule_prefix.h"

#define PREFIX_DEPTH_MAX 32u /* group nesting the reader follows */
#define PREFIX_LIT_MAX 64u   /* bytes of one literal; a longer run is cut */

struct rule_prefix {
    pcre2_code *anchored;
    size_t n;
    bool folds; /* a literal holds a k or an s */
    char *lit[RULE_PREFIX_MAX];
    uint8_t len[RULE_PREFIX_MAX];
    uint8_t at[RULE_PREFIX_MAX]; /* the byte searched for, one rare in text */
};

struct reader {
    const char *p, *end;
    unsigned depth;
    bool fail, nomem;
    struct strv *out;
};

static void read_alt(struct reader *rd);

static char
lower(char c)
{
    return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

/* An escape at p: "\\c" takes the byte after it (even ']', '|' or ')'),
 * any other one byte. Its end, end at most. */
static const char *
skip_escape(const char *p, const char *end)
{
    size_t n = end - p > 1 && p[1] == 'c' ? 3 : 2;

    return (size_t)(end - p) < n ? end : p + n;
}

const char *
rule_prefix_posix_end(const char *p, const char *end)
{
    char t;

    if (end - p < 2)
        return NULL;
    t = p[1];
    for (const char *q = p + 2; end - q >= 2; q++) {
        if (q[0] == '\\' && (q[1] == ']' || q[1] == '\\'))
            q++;
        else if ((q[0] == '[' && q[1] == t) || q[0] == ']')
            return NULL;
        else if (q[0] == t && q[1] == ']')
            return q + 2;
    }
    return NULL;
}

/* The end of the class that starts at p ('['), or NULL. */
static const char *
skip_class(const char *p, const char *end)
{
    p++;
    if (p < end && *p == '^')
        p++;
    /* PCRE2 reads past a \E or \Q\E here before it takes a ']' as a
     * literal: not followed. */
    if (end - p >= 2 && p[0] == '\\' && (p[1] == 'E' || p[1] == 'Q'))
        return NULL;
    if (p < end && *p == ']')
        p++;
    while (p < end) {
        if (*p == '\\') {
            /* \Q may quote a ']'. */
            if (p + 1 < end && p[1] == 'Q')
                return NULL;
            p = skip_escape(p, end);
        } else if (*p == '[' && p + 1 < end && (p[1] == ':' || p[1] == '.' || p[1] == '=')) {
            const char *q = rule_prefix_posix_end(p, end);

            p = q != NULL ? q : p + 1;
        } else if (*p == ']') {
            return p + 1;
        } else {
            p++;
        }
    }
    return NULL;
}

/* A comment "(?#...)" at p: its end, the first ')' (PCRE2 nests none and
 * escapes nothing there); NULL when p holds none, or it has no end. */
static const char *
skip_comment(const char *p, const char *end)
{
    const char *q;

    if (end - p < 3 || p[0] != '(' || p[1] != '?' || p[2] != '#')
        return NULL;
    q = memchr(p + 3, ')', (size_t)(end - p - 3));
    return q != NULL ? q + 1 : NULL;
}

/* Past the items of the current alternative, to its '|' or ')' or the
 * end; fails on \Q, whose quoted text the skip would misread, and on a
 * comment without its end. */
static void
skip_rest(struct reader *rd)
{
    unsigned depth = 0;

    while (rd->p < rd->end) {
        char c = *rd->p;

        if (c == '\\') {
            if (rd->p + 1 < rd->end && rd->p[1] == 'Q') {
                rd->fail = true;
                return;
            }
            rd->p = skip_escape(rd->p, rd->end);
        } else if (c == '[') {
            rd->p = skip_class(rd->p, rd->end);
            if (rd->p == NULL) {
                rd->p = rd->end;
                rd->fail = true;
                return;
            }
        } else if (c == '(' && rd->p + 2 < rd->end && rd->p[1] == '?' && rd->p[2] == '#') {
            rd->p = skip_comment(rd->p, rd->end);
            if (rd->p == NULL) {
                rd->p = rd->end;
                rd->fail = true;
                return;
            }
        } else if (c == '(') {
            depth++;
            rd->p++;
        } else if (c == ')' && depth > 0) {
            depth--;
            rd->p++;
        } else if ((c == ')' || c == '|') && depth == 0) {
            return;
        } else {
            rd->p++;
        }
    }
}

/* Skips a group that starts at rd->p, whatever it holds. */
static void
skip_group(struct reader *rd)
{
    rd->p++;
    while (!rd->fail && rd->p < rd->end && *rd->p != ')') {
        skip_rest(rd);
        if (rd->p < rd->end && *rd->p == '|')
            rd->p++;
    }
    if (rd->fail || rd->p >= rd->end)
        rd->fail = true;
    else
        rd->p++;
}

/* True when a quantifier at p lets the item before it match nothing ('?',
 * '*', "{0"); a '{' that opens no quantifier is a literal and stops the
 * caller's run, which is as safe. */
static bool
may_skip(const char *p, const char *end)
{
    if (p >= end)
        return false;
    if (*p == '?' || *p == '*')
        return true;
    return *p == '{' && p + 1 < end && (p[1] == '0' || p[1] == ',');
}

static bool
is_quantifier(char c)
{
    return c == '?' || c == '*' || c == '+' || c == '{';
}

/* An option setting such as (?i) or (?-s) at p, which changes nothing
 * here; x would let white space be skipped, which the reader does not
 * follow. Sets *len to its length. */
static bool
option_setting(const char *p, const char *end, size_t *len, bool *x)
{
    const char *q = p + 2;

    *x = false;
    if (end - p < 3 || p[0] != '(' || p[1] != '?')
        return false;
    while (q < end &&
           ((ascii_class[(unsigned char)*q] & ASCII_ALPHA) != 0 || *q == '-' || *q == '^')) {
        *x |= *q == 'x';
        q++;
    }
    if (q >= end || q == p + 2 || (*q != ')' && *q != ':'))
        return false;
    *len = (size_t)(q - p);
    return true;
}

/* True when p holds an item PCRE2 reads past to find the quantifier of
 * the item before it: a comment, an option setting such as (?i), or a
 * \E without its \Q. */
static bool
invisible(const char *p, const char *end)
{
    size_t n;
    bool x;

    if (end - p >= 2 && p[0] == '\\' && p[1] == 'E')
        return true;
    return skip_comment(p, end) != NULL || (option_setting(p, end, &n, &x) && p[n] == ')');
}

/* "(?=", "(?!", "(?<=" or "(?<!" at p. */
static bool
is_lookaround(const char *p, const char *end)
{
    if (end - p < 3 || p[0] != '(' || p[1] != '?')
        return false;
    return p[2] == '=' || p[2] == '!' ||
           (p[2] == '<' && end - p >= 4 && (p[3] == '=' || p[3] == '!'));
}

/* Past the zero-width items at rd->p. */
static void
skip_zero_width(struct reader *rd)
{
    while (!rd->fail && rd->p < rd->end) {
        const char *p = rd->p, *end = rd->end;
        size_t n;
        bool x;

        if (*p == '^') {
            rd->p++;
        } else if (*p == '\\' && p + 1 < end && (p[1] == 'b' || p[1] == 'B' || p[1] == 'A')) {
            rd->p += 2;
        } else if (end - p >= 3 && p[0] == '(' && p[1] == '?' && p[2] == '#') {
            rd->p = skip_comment(p, end);
            rd->fail = rd->p == NULL || (rd->p < end && is_quantifier(*rd->p));
            if (rd->p == NULL)
                rd->p = end;
        } else if (is_lookaround(p, end)) {
            skip_group(rd);
            if (rd->p < rd->end && is_quantifier(*rd->p))
                rd->fail = true;
        } else if (option_setting(p, end, &n, &x) && p[n] == ')') {
            rd->fail = x;
            rd->p += n + 1;
        } else {
            return;
        }
    }
}

/* The length of the opening of a group at p that the reader follows as a
 * group ("(", "(?:", "(?>", "(?|", named captures, "(?i:"), or 0. */
static size_t
group_opening(const char *p, const char *end, bool *x)
{
    size_t n;

    *x = false;
    if (end - p < 2)
        return 0;
    if (p[1] != '?')
        return p[1] == '*' ? 0 : 1;
    if (end - p < 3)
        return 0;
    if (p[2] == ':' || p[2] == '>' || p[2] == '|')
        return 3;
    if (p[2] == '<' || p[2] == '\'' || (p[2] == 'P' && end - p >= 4 && p[3] == '<')) {
        const char *q = p + (p[2] == 'P' ? 4 : 3);
        char close = p[2] == '\'' ? '\'' : '>';

        while (q < end && (ascii_is_word((unsigned char)*q)))
            q++;
        return q < end && *q == close && q > p + 3 ? (size_t)(q - p) + 1 : 0;
    }
    if (option_setting(p, end, &n, x) && p[n] == ':')
        return n + 1;
    return 0;
}

/* A literal character at rd->p (a plain byte, or punctuation escaped) in
 * *c, with its length in *n; false for anything else. */
static bool
literal_char(const struct reader *rd, char *c, size_t *n)
{
    unsigned char b = (unsigned char)*rd->p;

    if (b == '\\') {
        if (rd->p + 1 >= rd->end)
            return false;
        b = (unsigned char)rd->p[1];
        if (b < 0x21 || b > 0x7e || ascii_is_alnum(b))
            return false;
        *c = (char)b;
        *n = 2;
        return true;
    }
    if (b < 0x20 || b > 0x7e || strchr("^$.|?*+()[]{}", b) != NULL)
        return false;
    *c = (char)b;
    *n = 1;
    return true;
}

/* A run of literal characters: the run, or fail when it is too short. */
static void
read_run(struct reader *rd)
{
    char buf[PREFIX_LIT_MAX];
    size_t len = 0, n;
    char c;
    int r;

    while (len < PREFIX_LIT_MAX && rd->p < rd->end && literal_char(rd, &c, &n)) {
        if (may_skip(rd->p + n, rd->end))
            break;
        buf[len++] = lower(c);
        rd->p += n;
        if (rd->p < rd->end && is_quantifier(*rd->p))
            break;
    }
    /* "ab(?#c)?" makes the b optional: a quantifier may come after. */
    if (len > 0 && rd->p < rd->end && invisible(rd->p, rd->end))
        len--;
    if (len < RULE_PREFIX_MIN) {
        rd->fail = true;
        return;
    }
    r = strv_add_unique(rd->out, buf, len, RULE_PREFIX_MAX);
    rd->fail = r < 0;
    rd->nomem = r == -ENOMEM;
}

/* One alternative: its zero-width items, its first atom, the rest. */
static void
read_seq(struct reader *rd)
{
    size_t open;
    bool x;

    skip_zero_width(rd);
    if (rd->fail || rd->p >= rd->end) {
        rd->fail = true;
        return;
    }
    if (*rd->p == '(') {
        open = group_opening(rd->p, rd->end, &x);
        if (open == 0 || x || ++rd->depth > PREFIX_DEPTH_MAX) {
            rd->fail = true;
            return;
        }
        rd->p += open;
        read_alt(rd);
        rd->depth--;
        if (rd->fail || rd->p >= rd->end || *rd->p != ')') {
            rd->fail = true;
            return;
        }
        rd->p++;
        if (may_skip(rd->p, rd->end) || invisible(rd->p, rd->end)) {
            rd->fail = true;
            return;
        }
    } else {
        read_run(rd);
    }
    if (!rd->fail)
        skip_rest(rd);
}

static void
read_alt(struct reader *rd)
{
    for (;;) {
        read_seq(rd);
        if (rd->fail || rd->p >= rd->end || *rd->p != '|')
            return;
        rd->p++;
    }
}

int
rule_prefix_literals(const char *src, size_t len, uint32_t options, struct strv *ret)
{
    struct reader rd = {.p = src, .end = src + len, .out = ret};

    memset(ret, 0, sizeof(*ret));
    if ((options & (PCRE2_EXTENDED | PCRE2_EXTENDED_MORE | PCRE2_LITERAL)) != 0 || len == 0)
        return 0;
    /* \G holds only at the offset a match starts from, and a verb such
     * as (*COMMIT) ends the search at the first attempt that passes it:
     * with either, a later start could change the answer. */
    if (ascii_find(src, len, "\\G") != NULL || ascii_find(src, len, "(*") != NULL)
        return 0;
    /* x set inside the pattern makes white space and # comments vanish
     * from there on, which the reader does not follow. */
    for (const char *p = src; (p = ascii_find(p, len - (size_t)(p - src), "(?")) != NULL; p++) {
        size_t n;
        bool x;

        if (option_setting(p, src + len, &n, &x) && x)
            return 0;
    }
    read_alt(&rd);
    /* A ')' left over closes no group: not a pattern the reader knows. */
    if (rd.fail || rd.p != rd.end)
        strv_release(ret);
    return rd.nomem ? -ENOMEM : 0;
}

/* How rare c is in text, higher for rarer: letters by their English
 * frequency, white space the most common, digits and punctuation
 * between. */
static unsigned
rarity(char c)
{
    static const char by_frequency[] = "etaoinsrhldcumfpgwybvkxjqz";
    const char *f = strchr(by_frequency, c);

    if (c >= 'a' && c <= 'z' && f != NULL)
        return 10 + (unsigned)(f - by_frequency);
    if (c == ' ')
        return 0;
    return ascii_is_digit((unsigned char)c) ? 12 : 18;
}

/* True when lits[i] begins with another literal of lits[0..n), whose
 * occurrences include its own (all are distinct). */
static bool
covered(char *const *lits, size_t n, size_t i)
{
    size_t len = strlen(lits[i]);

    for (size_t k = 0; k < n; k++) {
        size_t m = strlen(lits[k]);

        if (k != i && m < len && strncmp(lits[i], lits[k], m) == 0)
            return true;
    }
    return false;
}

int
rule_prefix_build(const pcre2_code *whole, const char *src, size_t len, uint32_t compile_options,
                  struct rule_prefix **ret)
{
    struct rule_prefix *px = NULL;
    struct strv lits;
    bool drop[RULE_PREFIX_MAX];
    PCRE2_SIZE off;
    uint32_t first;
    int r, err;

    *ret = NULL;
    /* With a first code unit, or matches only at line starts, PCRE2 finds
     * its places to try as fast itself (a memchr() for the unit). */
    if (pcre2_pattern_info(whole, PCRE2_INFO_FIRSTCODETYPE, &first) != 0 || first != 0)
        return 0;
    r = rule_prefix_literals(src, len, compile_options, &lits);
    if (r < 0 || lits.n == 0)
        return r;
    px = calloc(1, sizeof(*px));
    if (px == NULL) {
        r = -ENOMEM;
        goto out;
    }
    px->anchored =
        pcre2_compile((PCRE2_SPTR)src, len, compile_options | PCRE2_ANCHORED, &err, &off, NULL);
    /* The pattern compiled unanchored; if not anchored, it runs as it is. */
    if (px->anchored == NULL)
        goto out;
    (void)pcre2_jit_compile(px->anchored, PCRE2_JIT_COMPLETE);
    for (size_t i = 0; i < lits.n && i < RULE_PREFIX_MAX; i++)
        drop[i] = covered(lits.v, lits.n, i);
    for (size_t i = 0; i < lits.n && i < RULE_PREFIX_MAX; i++) {
        const char *l = lits.v[i];
        size_t n = strlen(l), at = 0;

        if (drop[i])
            continue;
        /* The pair of bytes the search looks for: the rarest. */
        for (size_t k = 1; k + 1 < n; k++)
            if (rarity(l[k]) + rarity(l[k + 1]) > rarity(l[at]) + rarity(l[at + 1]))
                at = k;
        px->folds |= strpbrk(l, "ks") != NULL;
        px->lit[px->n] = lits.v[i];
        lits.v[i] = NULL;
        px->len[px->n] = (uint8_t)n;
        px->at[px->n++] = (uint8_t)at;
    }
    *ret = px;
    px = NULL;
out:
    strv_release(&lits);
    rule_prefix_free(px);
    return r;
}

void
rule_prefix_free(struct rule_prefix *px)
{
    if (px == NULL)
        return;
    for (size_t i = 0; i < px->n; i++)
        free(px->lit[i]);
    pcre2_code_free(px->anchored);
    free(px);
}

/* The first place from `from` on where literal i occurs, or SIZE_MAX. */
static size_t
next_at(const struct rule_prefix *px, size_t i, const char *s, size_t len, size_t from)
{
    const char *q;

    if (from > len || len - from < px->len[i])
        return SIZE_MAX;
    q = ascii_find_ci_at(s + from, len - from, px->lit[i], px->len[i], px->at[i]);
    return q != NULL ? (size_t)(q - s) : SIZE_MAX;
}

int
rule_prefix_match(const struct rule_prefix *px, const pcre2_code *whole, const char *s, size_t len,
                  size_t from, pcre2_match_data *md, pcre2_match_context *mctx)
{
    size_t next[RULE_PREFIX_MAX];

    if (from > len || (px->folds && ascii_has_fold_chars(s + from, len - from)))
        return pcre2_match(whole, (PCRE2_SPTR)s, len, from, 0, md, mctx);
    for (size_t i = 0; i < px->n; i++)
        next[i] = next_at(px, i, s, len, from);
    for (;;) {
        size_t at = SIZE_MAX;
        int rc;

        for (size_t i = 0; i < px->n; i++)
            if (next[i] < at)
                at = next[i];
        if (at == SIZE_MAX)
            return PCRE2_ERROR_NOMATCH;
        rc = pcre2_match(px->anchored, (PCRE2_SPTR)s, len, at, 0, md, mctx);
        if (rc != PCRE2_ERROR_NOMATCH)
            return rc;
        for (size_t i = 0; i < px->n; i++)
            if (next[i] == at)
                next[i] = next_at(px, i, s, len, at + 1);
    }
}
