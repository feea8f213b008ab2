/*
 * rule_eval.c - evaluate a compiled rule set against one message.
 *
 * Rules run once each, in set order; a combination reads the outcome of
 * earlier rules from a per-call array, which is why references must point
 * backwards. All mutable state (that array, one PCRE2 match data, scratch
 * for pair conditions, the evidence buffer) belongs to the call, so any
 * number of threads may evaluate the same set at once.
 *
 * A PCRE2 error (match or depth limit, JIT stack) counts as no match, as
 * docs/rules.md says; so a `nomatch` condition holds when its pattern hits
 * a limit.
 *
 * max_hits caps res->n_hits (hits already in res count): past it, rules are
 * still evaluated (combinations need them) but neither listed nor scored,
 * so res->score is always the sum of the listed hits. res->matched lists
 * every reported rule that held, past the cap too, for slopctl fit.
 *
 * Helper rules are evaluated on demand, the first time a combination asks
 * for them: a helper only a report rule reads costs nothing on a patch,
 * and one behind a condition that already failed is never run. A helper
 * has no effect but its outcome, so the result is the same as evaluating
 * every rule in order; that is what a set whose references nest deeper
 * than RULE_EVAL_LAZY_DEPTH gets, to bound the recursion.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "message.h"
#include "rule.h"
#include "rule_prefix.h"
#include "utf8.h"

/* Matches counted by one count condition; a count saturates here. */
#define RULE_EVAL_COUNT_MAX (1u << 20)
/* Removed x added capture comparisons per pair condition. */
#define RULE_EVAL_PAIR_BUDGET (1u << 22)

#define RULE_EVAL_DOC_BASE "https://docs.kernel.org/"
/* Nesting of helper references followed on demand (see above). */
#define RULE_EVAL_LAZY_DEPTH 32u

/* Values of eval.held[]. */
enum {
    HELD_UNKNOWN = 0, /* not evaluated (yet): reads as not held */
    HELD_NO,
    HELD_YES,
    HELD_LIMITED, /* not held, but a regex limit cut its evaluation short */
};

struct evidence {
    char buf[RULE_EVIDENCE_MAX + 1];
    size_t len;
    bool set;  /* a condition has given the evidence (it may be empty) */
    bool full; /* the cut was reached; later text is dropped */
};

/* An added line that matched the second pair pattern: where the line is,
 * and its trimmed capture 1 as offsets into the added region's text. */
struct pair_line {
    size_t line;
    size_t cap_off, cap_len;
};

struct eval {
    const struct rule_set *set;
    const struct message *m;
    pcre2_match_data *md;
    uint8_t *held; /* per rule: HELD_* */
    bool lazy;     /* helpers wait until a combination reads them */
    struct pair_line *pairs;
    size_t pairs_cap;
    struct rule_prefilter_state pf;
    const char *regex_limit; /* "match_limit" or "depth_limit" once PCRE2 hit one */
    unsigned limit_hits;     /* PCRE2 match or depth limits hit so far */
};

/* Append s[0..n) as one line of valid UTF-8: control characters become
 * spaces (evidence ends up in mail headers), invalid bytes '?', and the
 * text is cut at a character boundary at RULE_EVIDENCE_MAX bytes. */
static void
ev_append(struct evidence *e, const char *s, size_t n)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t i = 0;

    while (i < n && !e->full) {
        size_t in = 1, out = 1;
        char ch = 0;

        if (u[i] < 0x80)
            ch = u[i] < 0x20 || u[i] == 0x7f ? ' ' : (char)u[i];
        else if ((in = utf8_seq_len(u + i, n - i)) == 0) {
            ch = '?';
            in = 1;
        } else
            out = in;
        if (e->len + out > RULE_EVIDENCE_MAX) {
            e->full = true;
            break;
        }
        if (ch != 0)
            e->buf[e->len] = ch;
        else
            memcpy(e->buf + e->len, s + i, out);
        e->len += out;
        i += in;
    }
    e->buf[e->len] = '\0';
}

static void
ev_str(struct evidence *e, const char *s)
{
    ev_append(e, s, strlen(s));
}

static void
ev_location(struct evidence *e, const struct region_line *l)
{
    char num[32];

    if (l == NULL || l->file == NULL)
        return;
    ev_str(e, l->file);
    snprintf(num, sizeof(num), ":%u: ", (unsigned)l->line);
    ev_str(e, num);
}

static bool
is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

static void
trim(const char *s, size_t *off, size_t *len)
{
    while (*len > 0 && is_space(s[*off])) {
        (*off)++;
        (*len)--;
    }
    while (*len > 0 && is_space(s[*off + *len - 1]))
        (*len)--;
}

static const char *
region_text(const struct region *r, size_t *len)
{
    if (r->text == NULL) {
        *len = 0;
        return "";
    }
    *len = r->len;
    return r->text;
}

/* Matched text at [start, end) of r, "file:line: " first where r has a
 * line map. An empty match shows the line it is on instead. */
static void
ev_span(struct evidence *e, const struct region *r, size_t start, size_t end)
{
    size_t len;
    const char *text = region_text(r, &len);

    if (start > len)
        start = len;
    if (end < start || end > len)
        end = start;
    if (end == start) {
        while (start > 0 && text[start - 1] != '\n')
            start--;
        while (end < len && text[end] != '\n')
            end++;
    }
    ev_location(e, region_line_at(r, start));
    ev_append(e, text + start, end - start);
}

static bool
op_holds(enum rule_op op, double a, double b)
{
    switch (op) {
    case RULE_OP_LT:
        return a < b;
    case RULE_OP_LE:
        return a <= b;
    case RULE_OP_GT:
        return a > b;
    case RULE_OP_GE:
        return a >= b;
    case RULE_OP_EQ:
        return a == b;
    case RULE_OP_NE:
        return a != b;
    }
    return false;
}

/* True on a match; the ovector is then in ev->md. */
static bool
run(struct eval *ev, const struct rule_pattern *pat, const char *s, size_t len, size_t start)
{
    int rc;

    if (pat->code == NULL || !rule_prefilter_scan_possible(&ev->pf, ev->set, ev->m, pat))
        return false;
    /* Tried only where a literal its matches start with occurs, when it
     * has such literals; the same answer, without PCRE2's try at every
     * position. */
    if (pat->prefix != NULL)
        rc = rule_prefix_match(pat->prefix, pat->code, s, len, start, ev->md, ev->set->mctx);
    else
        rc = pcre2_match(pat->code, (PCRE2_SPTR)s, len, start, 0, ev->md, ev->set->mctx);
    if (rc == PCRE2_ERROR_MATCHLIMIT || rc == PCRE2_ERROR_DEPTHLIMIT)
        ev->limit_hits++;
    if (rc == PCRE2_ERROR_MATCHLIMIT && ev->regex_limit == NULL)
        ev->regex_limit = "match_limit";
    else if (rc == PCRE2_ERROR_DEPTHLIMIT && ev->regex_limit == NULL)
        ev->regex_limit = "depth_limit";
    return rc >= 0;
}

static void
ovector_span(struct eval *ev, unsigned group, size_t *start, size_t *end)
{
    PCRE2_SIZE *ov = pcre2_get_ovector_pointer(ev->md);

    *start = ov[2 * (size_t)group];
    *end = ov[2 * (size_t)group + 1];
    if (*start == PCRE2_UNSET || *end == PCRE2_UNSET) {
        *start = *end = 0;
    } else if (*end < *start) {
        /* \K can leave the end before the start. */
        *end = *start;
    }
}

/* A match of pat in s[0..len) at [*start, *end), as run() from offset 0
 * would find. A pattern the prefilter split runs one alternative at a
 * time: the leftmost match, the earliest alternative on a tie, is the
 * whole pattern's; with any, the first match found will do. */
static bool
run_whole(struct eval *ev, const struct rule_pattern *pat, const char *s, size_t len, bool any,
          size_t *start, size_t *end)
{
    const struct rule_pattern *alt;
    size_t n;
    bool found = false;

    alt = rule_prefilter_alternatives_of(ev->set, pat, &n);
    if (alt == NULL) {
        if (!run(ev, pat, s, len, 0))
            return false;
        ovector_span(ev, 0, start, end);
        return true;
    }
    if (pat->code == NULL || !rule_prefilter_scan_possible(&ev->pf, ev->set, ev->m, pat))
        return false;
    for (size_t i = 0; i < n; i++) {
        size_t as, ae;

        if (!run(ev, &alt[i], s, len, 0))
            continue;
        ovector_span(ev, 0, &as, &ae);
        if (!found || as < *start) {
            *start = as;
            *end = ae;
            found = true;
        }
        if (any || as == 0)
            break;
    }
    return found;
}

static bool
eval_match(struct eval *ev, const struct rule_cond *c, struct evidence *e)
{
    const struct region *r = &ev->m->regions[c->region];
    size_t len, start = 0, end = 0;
    const char *text = region_text(r, &len);

    if (!run_whole(ev, &c->pat[0], text, len, e->set, &start, &end))
        return false;
    if (!e->set) {
        ev_span(e, r, start, end);
        e->set = true;
    }
    return true;
}

static bool
eval_nomatch(struct eval *ev, const struct rule_cond *c)
{
    const struct region *r = &ev->m->regions[c->region];
    size_t len, start, end;
    const char *text = region_text(r, &len);
    unsigned limits_before = ev->limit_hits;

    if (run_whole(ev, &c->pat[0], text, len, true, &start, &end))
        return false;
    /* A pattern cut short by a limit proves nothing was absent: hold back
     * rather than report a gap ("no reproducer") the text may not have. */
    return ev->limit_hits == limits_before;
}

static bool
eval_count(struct eval *ev, const struct rule_cond *c, struct evidence *e)
{
    const struct region *r = &ev->m->regions[c->region];
    size_t len, pos = 0, n = 0, first_start = 0, first_end = 0;
    const char *text = region_text(r, &len);
    char head[64];

    while (pos <= len && n < RULE_EVAL_COUNT_MAX && run(ev, &c->pat[0], text, len, pos)) {
        size_t start, end;

        ovector_span(ev, 0, &start, &end);
        if (n++ == 0) {
            first_start = start;
            first_end = end;
        }
        if (end > start) {
            pos = end;
            continue;
        }
        /* An empty match: step one character past it, or stop at the end. */
        if (end >= len)
            break;
        pos = end + 1;
        while (pos < len && ((unsigned char)text[pos] & 0xc0) == 0x80)
            pos++;
    }
    if (!op_holds(c->op, (double)n, c->number))
        return false;
    if (!e->set) {
        snprintf(head, sizeof(head), n == 1 ? "%zu match" : "%zu matches", n);
        ev_str(e, head);
        if (n > 0) {
            ev_str(e, ", first: ");
            ev_span(e, r, first_start, first_end);
        }
        e->set = true;
    }
    return true;
}

static bool
eval_measure(struct eval *ev, const struct rule_cond *c, struct evidence *e)
{
    double v = ev->m->measures[c->measure];
    const char *name = measure_name(c->measure);
    char buf[96];

    if (!op_holds(c->op, v, c->number))
        return false;
    if (!e->set && ev->m->measure_evidence[c->measure] != NULL) {
        ev_str(e, ev->m->measure_evidence[c->measure]);
        e->set = true;
    } else if (!e->set) {
        /* Range first: converting NaN or a huge value is undefined. */
        if (v > -1e15 && v < 1e15 && v == (double)(long long)v)
            snprintf(buf, sizeof(buf), "%s=%.0f", name != NULL ? name : "measure", v);
        else
            snprintf(buf, sizeof(buf), "%s=%.2f", name != NULL ? name : "measure", v);
        ev_str(e, buf);
        e->set = true;
    }
    return true;
}

/* Lines [first, first + count) of a hunk, clamped to the region's map. */
static bool
hunk_lines(const struct region *r, size_t first, size_t count, size_t *ret_first, size_t *ret_count)
{
    if (r->lines == NULL || r->text == NULL || first >= r->n_lines || count == 0)
        return false;
    if (count > r->n_lines - first)
        count = r->n_lines - first;
    *ret_first = first;
    *ret_count = count;
    return true;
}

/* Offset and length of line i of r, without its '\n'. */
static bool
line_text(const struct region *r, size_t i, size_t *off, size_t *len)
{
    const char *nl;

    *off = r->lines[i].offset;
    if (*off > r->len)
        return false;
    nl = memchr(r->text + *off, '\n', r->len - *off);
    *len = nl != NULL ? (size_t)(nl - (r->text + *off)) : r->len - *off;
    return true;
}

static int
pairs_reserve(struct eval *ev, size_t n)
{
    struct pair_line *v;

    if (n <= ev->pairs_cap)
        return 0;
    v = realloc(ev->pairs, n * sizeof(*v));
    if (v == NULL)
        return -ENOMEM;
    ev->pairs = v;
    ev->pairs_cap = n;
    return 0;
}

static void
ev_pair(struct evidence *e, const struct region *rr, size_t r_line, const struct region *ra,
        size_t a_line)
{
    size_t off, len;

    ev_location(e, &ra->lines[a_line]);
    ev_str(e, "-");
    if (line_text(rr, r_line, &off, &len)) {
        trim(rr->text, &off, &len);
        ev_append(e, rr->text + off, len);
    }
    ev_str(e, " \xe2\x86\x92 +");
    if (line_text(ra, a_line, &off, &len)) {
        trim(ra->text, &off, &len);
        ev_append(e, ra->text + off, len);
    }
    e->set = true;
}

/* The added lines af..af+an that match pat[1], each with its capture
 * when the captures are compared, into ev->pairs (reserved for an);
 * returns their count. */
static size_t
pair_added(struct eval *ev, const struct rule_cond *c, const struct region *ra, size_t af,
           size_t an, bool compare)
{
    size_t n_added = 0;

    for (size_t k = 0; k < an; k++) {
        struct pair_line *p = &ev->pairs[n_added];
        size_t off, len, cs, ce;

        if (!line_text(ra, af + k, &off, &len) || !run(ev, &c->pat[1], ra->text + off, len, 0))
            continue;
        p->line = af + k;
        p->cap_off = p->cap_len = 0;
        if (compare) {
            ovector_span(ev, 1, &cs, &ce);
            p->cap_off = off + cs;
            p->cap_len = ce - cs;
            trim(ra->text, &p->cap_off, &p->cap_len);
        }
        n_added++;
    }
    return n_added;
}

enum pair_outcome {
    PAIR_NONE,  /* no added line pairs with this removed line */
    PAIR_FOUND, /* one does: the condition holds */
    PAIR_SPENT, /* the budget of comparisons ran out first */
};

/* The removed line rl, its capture at rr->text[cap_off..+cap_len), held
 * against the n_added lines pair_added() found. */
static enum pair_outcome
pair_match(struct eval *ev, const struct region *ra, const struct region *rr, size_t rl,
           size_t cap_off, size_t cap_len, size_t n_added, bool compare, size_t *budget,
           struct evidence *e)
{
    for (size_t j = 0; j < n_added; j++) {
        const struct pair_line *p = &ev->pairs[j];

        if ((*budget)-- == 0)
            return PAIR_SPENT;
        if (compare && (p->cap_len != cap_len ||
                        memcmp(ra->text + p->cap_off, rr->text + cap_off, cap_len) != 0))
            continue;
        if (!e->set)
            ev_pair(e, rr, rl, ra, p->line);
        return PAIR_FOUND;
    }
    return PAIR_NONE;
}

/* Returns 1 when a removed line matching pat[0] and an added line matching
 * pat[1] share a hunk (and capture 1 when both patterns have one), 0 when
 * not, -ENOMEM. Each line is matched once; only captures are compared
 * pairwise, within a budget. */
static int
eval_pair(struct eval *ev, const struct rule_cond *c, struct evidence *e)
{
    const struct message *m = ev->m;
    const struct region *ra = &m->regions[REGION_ADDED], *rr = &m->regions[REGION_REMOVED];
    bool compare = c->pat[0].captures >= 1 && c->pat[1].captures >= 1;
    size_t budget = RULE_EVAL_PAIR_BUDGET;

    for (size_t h = 0; h < m->n_hunks; h++) {
        const struct patch_hunk *hk = &m->hunks[h];
        size_t af, an, rf, rn, n_added;

        if (!hunk_lines(ra, hk->added_first, hk->added_count, &af, &an) ||
            !hunk_lines(rr, hk->removed_first, hk->removed_count, &rf, &rn))
            continue;
        if (pairs_reserve(ev, an) < 0)
            return -ENOMEM;
        n_added = pair_added(ev, c, ra, af, an, compare);
        for (size_t k = 0; n_added > 0 && k < rn; k++) {
            size_t off, len, cs = 0, ce = 0, cap_off, cap_len;
            enum pair_outcome o;

            if (!line_text(rr, rf + k, &off, &len) || !run(ev, &c->pat[0], rr->text + off, len, 0))
                continue;
            if (compare)
                ovector_span(ev, 1, &cs, &ce);
            cap_off = off + cs;
            cap_len = ce - cs;
            trim(rr->text, &cap_off, &cap_len);
            o = pair_match(ev, ra, rr, rf + k, cap_off, cap_len, n_added, compare, &budget, e);
            if (o != PAIR_NONE)
                return o == PAIR_FOUND;
        }
    }
    return 0;
}

/* Helper rules are internal names; people read "__BOLD_LEAD" as
 * "bold lead", so evidence spells them as words. */
static void
ev_rule_name(struct evidence *e, const char *name)
{
    char word[RULE_NAME_MAX + 1];
    size_t n = 0;

    if (name[0] != '_' || name[1] != '_') {
        ev_str(e, name);
        return;
    }
    for (const char *p = name + 2; *p != '\0' && n < sizeof(word) - 1; p++)
        word[n++] = *p == '_' ? ' ' : (char)tolower((unsigned char)*p);
    word[n] = '\0';
    ev_str(e, word);
}

static int eval_rule(struct eval *ev, size_t i, struct evidence *e);

static uint8_t
held_value(const struct eval *ev, int holds, unsigned limits_before)
{
    if (holds)
        return HELD_YES;
    return ev->limit_hits != limits_before ? HELD_LIMITED : HELD_NO;
}

/* Whether rule j held, for a combination of rule self: 1, 0, -ENOMEM. A
 * helper not yet evaluated is evaluated now. */
static int
rule_held(struct eval *ev, size_t j, size_t self)
{
    const struct rule *rule = &ev->set->rules[j];
    struct evidence e;
    unsigned limits_before;
    int holds;

    if (ev->held[j] != HELD_UNKNOWN || !ev->lazy || !rule->helper || j >= self)
        return ev->held[j] == HELD_YES;
    /* Read as not held while it runs, as an unevaluated rule is. */
    ev->held[j] = HELD_NO;
    e.len = 0;
    e.set = e.full = false;
    e.buf[0] = '\0';
    limits_before = ev->limit_hits;
    holds = eval_rule(ev, j, &e);
    if (holds < 0)
        return holds;
    ev->held[j] = held_value(ev, holds, limits_before);
    return holds;
}

/* Whether combination c (not none-of) holds with n of its rules held. */
static bool
combination_holds(const struct rule_cond *c, size_t n)
{
    switch (c->type) {
    case RULE_COND_ALL_OF:
        return n == c->n_names;
    case RULE_COND_ANY_OF:
        return n >= 1;
    case RULE_COND_AT_LEAST:
        return n >= c->at_least;
    default:
        return false;
    }
}

/* The evidence of a combination that holds: the rules of c that held. */
static void
ev_held_names(const struct eval *ev, const struct rule_cond *c, struct evidence *e)
{
    size_t n = 0;

    for (size_t i = 0; i < c->n_names; i++) {
        if (ev->held[c->refs[i]] != HELD_YES)
            continue;
        if (n++ > 0)
            ev_str(e, ", ");
        ev_rule_name(e, ev->set->rules[c->refs[i]].name);
    }
    e->set = true;
}

/* 1 when c holds, 0 when not, -ENOMEM. Stops reading names once the
 * outcome and the evidence are settled, so the helpers after them are not
 * evaluated. */
static int
eval_combination(struct eval *ev, const struct rule_cond *c, size_t self, struct evidence *e)
{
    size_t n = 0;
    bool holds;

    for (size_t i = 0; i < c->n_names; i++) {
        int h = rule_held(ev, c->refs[i], self);

        if (h < 0)
            return h;
        n += (size_t)h;
        if (c->type == RULE_COND_ALL_OF && h == 0)
            return 0;
        if (c->type == RULE_COND_NONE_OF && h == 1)
            return 0;
        /* "None of them held" is a finding only if each was really
         * looked for; a pattern cut short by a limit proves nothing. */
        if (c->type == RULE_COND_NONE_OF && ev->held[c->refs[i]] == HELD_LIMITED)
            return 0;
        if (e->set && ((c->type == RULE_COND_ANY_OF && n >= 1) ||
                       (c->type == RULE_COND_AT_LEAST && n >= c->at_least)))
            return 1;
    }
    if (c->type == RULE_COND_NONE_OF)
        return n == 0;
    holds = combination_holds(c, n);
    if (holds && !e->set)
        ev_held_names(ev, c, e);
    return holds;
}

/* 1 when c of rule self holds, 0 when not, -ENOMEM. */
static int
eval_cond(struct eval *ev, const struct rule_cond *c, size_t self, struct evidence *e)
{
    switch (c->type) {
    case RULE_COND_MATCH:
        return eval_match(ev, c, e);
    case RULE_COND_NOMATCH:
        return eval_nomatch(ev, c);
    case RULE_COND_COUNT:
        return eval_count(ev, c, e);
    case RULE_COND_MEASURE:
        return eval_measure(ev, c, e);
    case RULE_COND_PAIR:
        return eval_pair(ev, c, e);
    case RULE_COND_ALL_OF:
    case RULE_COND_ANY_OF:
    case RULE_COND_AT_LEAST:
    case RULE_COND_NONE_OF:
        return eval_combination(ev, c, self, e);
    }
    return 0;
}

/* True when c names a helper rule_held() would still evaluate for rule
 * self. */
static bool
names_unknown_helper(const struct eval *ev, const struct rule_cond *c, size_t self)
{
    for (size_t k = 0; k < c->n_names; k++) {
        size_t j = c->refs[k];

        if (ev->held[j] == HELD_UNKNOWN && ev->lazy && ev->set->rules[j].helper && j < self)
            return true;
    }
    return false;
}

/* 0 when a measure or combination condition of rule i fails, 1 when
 * none does, -ENOMEM. Those cost a comparison or a look-up where a
 * pattern costs a pass over its region: a threat-model rule matches the
 * body first and asks its gate after, and a patch mail seldom passes the
 * gate. A none_of that would still evaluate a helper waits for written
 * order: it nearly always holds, so asking it first seldom saves the
 * patterns and often costs the helper's own (RESULTS_WITHOUT_DATA's
 * none_of __FIGURES, whose digit patterns have no literal to filter on,
 * behind a body match that seldom holds). The conditions hold together,
 * so which fails first changes nothing but the work; the evidence is
 * still taken in written order. */
static int
eval_cheap_first(struct eval *ev, size_t i)
{
    const struct rule *rule = &ev->set->rules[i];
    struct evidence none = {.set = true};
    int holds = 1;

    for (size_t c = 0; c < rule->n_conds && holds == 1; c++) {
        const struct rule_cond *cond = &rule->conds[c];

        if (cond->type == RULE_COND_NONE_OF && names_unknown_helper(ev, cond, i))
            continue;
        if (cond->type == RULE_COND_MEASURE || cond->type == RULE_COND_ALL_OF ||
            cond->type == RULE_COND_ANY_OF || cond->type == RULE_COND_AT_LEAST ||
            cond->type == RULE_COND_NONE_OF)
            holds = eval_cond(ev, cond, i, &none);
    }
    return holds;
}

/* 1 when every condition of rule i holds, 0 when not (or when the rule
 * does not apply to the message's kind or the set's profile), -ENOMEM. */
static int
eval_rule(struct eval *ev, size_t i, struct evidence *e)
{
    const struct rule *rule = &ev->set->rules[i];
    unsigned kind_bit = (unsigned)ev->m->kind < 32 ? 1u << ev->m->kind : 0;
    int holds = 1;

    if (rule->off || (rule->kinds != 0 && (rule->kinds & kind_bit) == 0))
        return 0;
    holds = eval_cheap_first(ev, i);
    if (holds != 1)
        return holds;
    /* A helper's evidence is never shown: do not collect it. */
    if (rule->helper)
        e->set = true;
    for (size_t c = 0; c < rule->n_conds && holds == 1; c++)
        holds = eval_cond(ev, &rule->conds[c], i, e);
    return holds;
}

static char *
doc_link(const char *doc, const char *doc_base)
{
    const char *base = doc_base != NULL ? doc_base : RULE_EVAL_DOC_BASE;
    size_t n = strlen(base);
    char *s = NULL;

    if (strncmp(doc, "@/", 2) != 0)
        return strdup(doc);
    if (asprintf(&s, "%s%s%s", base, n > 0 && base[n - 1] == '/' ? "" : "/", doc + 2) < 0)
        return NULL;
    return s;
}

static int
append_hit(struct classifier_result *res, const struct rule *rule, const char *doc_base,
           const struct evidence *e)
{
    struct classifier_hit hit = {.score = rule->score}, *v;
    int r = -ENOMEM;

    hit.rule = strdup(rule->name);
    hit.description = strdup(rule->describe != NULL ? rule->describe : "");
    if (hit.rule == NULL || hit.description == NULL)
        goto out;
    /* An empty base: the profile has no documents to point "@/" links at. */
    if (rule->doc != NULL &&
        !(doc_base != NULL && doc_base[0] == '\0' && strncmp(rule->doc, "@/", 2) == 0)) {
        hit.doc = doc_link(rule->doc, doc_base);
        if (hit.doc == NULL)
            goto out;
    }
    if (e->set && (hit.evidence = strndup(e->buf, e->len)) == NULL)
        goto out;
    v = realloc(res->hits, (res->n_hits + 1) * sizeof(*v));
    if (v == NULL)
        goto out;
    res->hits = v;
    res->hits[res->n_hits++] = hit;
    res->score += rule->score;
    if (!rule->style)
        res->substance_score += rule->score;
    return 0;
out:
    free(hit.rule);
    free(hit.description);
    free(hit.doc);
    free(hit.evidence);
    return r;
}

/* Rule i (not a helper) held: list it in res->matched, hits cap or not. */
static int
note_matched(struct classifier_result *res, size_t i)
{
    size_t *v = realloc(res->matched, (res->n_matched + 1) * sizeof(*v));

    if (v == NULL)
        return -ENOMEM;
    res->matched = v;
    res->matched[res->n_matched++] = i;
    return 0;
}

/* A pattern gave up at a PCRE2 limit: that text was not fully analysed.
 * The measures were fixed before the rules ran, so LIMIT_REACHED (when the
 * rule files define it) is reported here unless it already fired. */
static int
note_regex_limit(const struct rule_set *set, const char *doc_base, unsigned max_hits,
                 const char *limit, struct classifier_result *res)
{
    struct evidence e = {.set = true};

    res->truncated = true;
    for (size_t i = 0; i < res->n_hits; i++)
        if (strcmp(res->hits[i].rule, "LIMIT_REACHED") == 0)
            return 0;
    ev_str(&e, limit);
    for (size_t i = 0; i < set->n_rules; i++) {
        int r;

        if (strcmp(set->rules[i].name, "LIMIT_REACHED") != 0 || set->rules[i].helper)
            continue;
        r = note_matched(res, i);
        if (r == 0 && res->n_hits < max_hits)
            r = append_hit(res, &set->rules[i], doc_base, &e);
        return r;
    }
    return 0;
}

int
rule_set_eval(const struct rule_set *set, const struct message *m, const char *doc_base,
              unsigned max_hits, struct classifier_result *res)
{
    struct eval ev = {.set = set, .m = m};
    unsigned limits_before;
    int r = 0;

    if (set == NULL || m == NULL || res == NULL)
        return -EINVAL;
    if (set->n_rules == 0)
        return 0;
    ev.lazy = set->ref_depth <= RULE_EVAL_LAZY_DEPTH;
    ev.held = calloc(set->n_rules, sizeof(*ev.held));
    ev.md = pcre2_match_data_create(set->ovec_pairs, NULL);
    if (ev.held == NULL || ev.md == NULL) {
        r = -ENOMEM;
        goto out;
    }

    for (size_t i = 0; i < set->n_rules; i++) {
        const struct rule *rule = &set->rules[i];
        struct evidence e;
        int holds;

        if (ev.lazy && rule->helper)
            continue;
        e.len = 0;
        e.set = e.full = false;
        e.buf[0] = '\0';
        limits_before = ev.limit_hits;
        holds = eval_rule(&ev, i, &e);
        if (holds < 0) {
            r = holds;
            goto out;
        }
        ev.held[i] = held_value(&ev, holds, limits_before);
        if (!holds || rule->helper)
            continue;
        r = note_matched(res, i);
        if (r == 0 && res->n_hits < max_hits)
            r = append_hit(res, rule, doc_base, &e);
        if (r < 0)
            goto out;
    }
    if (ev.regex_limit != NULL)
        r = note_regex_limit(set, doc_base, max_hits, ev.regex_limit, res);
out:
    pcre2_match_data_free(ev.md);
    free(ev.pairs);
    free(ev.held);
    rule_prefilter_scan_release(&ev.pf);
    return r;
}
