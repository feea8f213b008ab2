/*
 * series.c - the cover letter against its series, and the series through
 * the caller's state.
 *
 * A cover letter ([PATCH 0/N]) is measured against the size of what it
 * introduces: N and the "F files changed, X insertions(+), Y deletions(-)"
 * summary of its diffstat. Only its own prose counts: the shortlog, the
 * diffstat, indented text (logs, code) and the version history are left
 * out, so a long history of a big series does not make it verbose.
 *
 * Through the state, a patch learns what only its series knows: whether
 * its cover letter was flagged (looked up by In-Reply-To and References),
 * and whether its changelog repeats paragraphs of the series' other
 * patches (paragraph fingerprints keyed by the series root).
 *
 * Every loop is capped by the region's length and the caps below. The
 * cover letter measures' evidence is owned by the message like the rest.
 * Threading: no shared state; the callbacks run in the scanning thread.
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "series.h"
#include "span.h"

#define SERIES_PARA_MIN_WORDS 12 /* shorter paragraphs repeat by chance */
#define SERIES_RESTATE_WORDS 40  /* a paragraph that retells one patch in full */
#define SERIES_MAX_PATCHES 64    /* patches tracked as retold */
#define SERIES_MAX_REFS 8        /* References ids looked up */
#define SERIES_EVIDENCE_MAX 512

/* Next line of [*p, end) without its '\n'; false at the end. */
static bool
next_line(const char **p, const char *end, struct span *l)
{
    const char *nl;

    if (*p >= end)
        return false;
    nl = memchr(*p, '\n', (size_t)(end - *p));
    l->p = *p;
    l->len = nl ? (size_t)(nl - *p) : (size_t)(end - *p);
    *p = nl ? nl + 1 : end;
    return true;
}

static struct span
trimmed(struct span l)
{
    while (l.len > 0 && isspace((unsigned char)l.p[0])) {
        l.p++;
        l.len--;
    }
    while (l.len > 0 && isspace((unsigned char)l.p[l.len - 1]))
        l.len--;
    return l;
}

static bool
istarts(struct span t, const char *prefix)
{
    size_t n = strlen(prefix);

    return t.len >= n && strncasecmp(t.p, prefix, n) == 0;
}

static bool
icontains(struct span t, const char *needle)
{
    size_t n = strlen(needle);

    for (size_t i = 0; i + n <= t.len; i++)
        if (tolower((unsigned char)t.p[i]) == needle[0] && strncasecmp(t.p + i, needle, n) == 0)
            return true;
    return false;
}

/* Words: runs of letters and digits. */
static size_t
count_words(struct span t)
{
    size_t n = 0;
    bool in = false;

    for (size_t i = 0; i < t.len; i++) {
        bool w = isalnum((unsigned char)t.p[i]) || t.p[i] == '_' || (unsigned char)t.p[i] >= 0x80;

        n += w && !in;
        in = w || (in && t.p[i] == '\'');
    }
    return n;
}

/* Prose is mostly letters; pasted tool output, tables and numbers are
 * not ("read: IOPS=127k, BW=496MiB/s"), and are not counted as words. */
static bool
is_prose(struct span t)
{
    size_t letters = 0, other = 0;

    for (size_t i = 0; i < t.len; i++) {
        unsigned char c = (unsigned char)t.p[i];

        if (isalpha(c) || c >= 0x80)
            letters++;
        else if (!isspace(c))
            other++;
    }
    return letters >= 7 * other / 3 && letters > 0;
}

/* Leading "- ", "* ", "1. ", "2) " of a list item. */
static struct span
skip_bullet(struct span t)
{
    size_t i = 0;

    if (t.len > 2 && (t.p[0] == '-' || t.p[0] == '*') && t.p[1] == ' ')
        i = 2;
    else {
        while (i < t.len && i < 3 && isdigit((unsigned char)t.p[i]))
            i++;
        if (i == 0 || i + 1 >= t.len || (t.p[i] != '.' && t.p[i] != ')') || t.p[i + 1] != ' ')
            i = 0;
        else
            i += 2;
    }
    t.p += i;
    t.len -= i;
    return trimmed(t);
}

/* "Name (3):", the head of git's shortlog: the cover's own text ends. */
static bool
is_shortlog_head(struct span t)
{
    size_t i;

    if (t.len < 5 || t.p[t.len - 1] != ':' || t.p[t.len - 2] != ')')
        return false;
    i = t.len - 2;
    while (i > 0 && isdigit((unsigned char)t.p[i - 1]))
        i--;
    return i < t.len - 2 && i >= 2 && t.p[i - 1] == '(' && t.p[i - 2] == ' ';
}

/* "Changes in v2:", "v1 -> v2:", "Since v3:", "Changelog:": the version
 * history, which a big series may keep long for good reasons. */
static bool
is_history_head(struct span t)
{
    static const char *const heads[] = {"Changes", "Changelog",        "Change log",
                                        "Since v", "Revision history", "Version history"};
    bool head_like = t.len > 0 && (t.p[t.len - 1] == ':' || count_words(t) <= 5);

    for (size_t k = 0; k < sizeof(heads) / sizeof(heads[0]); k++)
        if (head_like && strncmp(t.p, heads[k], strlen(heads[k])) == 0)
            return true;
    return t.len >= 3 && (t.p[0] == 'v' || t.p[0] == 'V') && isdigit((unsigned char)t.p[1]) &&
           (icontains(t, "->") || t.p[t.len - 1] == ':' || icontains(t, " - "));
}

/* "Case 2:", "Scenario A)", "Option #1:" */
static bool
is_enumerated(struct span t, const char *word)
{
    size_t i = strlen(word), n = 0;

    if (!istarts(t, word))
        return false;
    while (i < t.len && t.p[i] == ' ')
        i++;
    if (i < t.len && t.p[i] == '#')
        i++;
    while (i < t.len && n < 3 && isalnum((unsigned char)t.p[i])) {
        i++;
        n++;
    }
    return n > 0 && i < t.len && (t.p[i] == ':' || t.p[i] == ')' || t.p[i] == '.');
}

/*
 * A line that argues a case instead of stating the change: corner cases,
 * "what if", worst cases, pre-emptive "this does not affect ...", a
 * question asked and answered ("Q:"/"A:", "Why not ...?"), or an
 * enumerated case or alternative. Counted once per line.
 */
static bool
argues_case(struct span line)
{
    static const char *const phrases[] = {
        "edge case",
        "edge-case",
        "corner case",
        "corner-case",
        "what if",
        "what happens if",
        "what happens when",
        "worst case",
        "worst-case",
        "in the unlikely",
        "does not affect",
        "do not affect",
        "not affected",
        "does not overlap",
        "do not overlap",
        "is still safe",
        "remains safe",
        "is safe because",
        "cannot happen",
        "can never happen",
        "no functional change",
        "no behavior change",
        "no behaviour change",
    };
    static const char *const asks[] = {"why not",  "what about", "is it possible", "could this",
                                       "can this", "does this",  "doesn't",        "isn't",
                                       "wouldn't", "shouldn't",  "what happens"};
    static const char *const enums[] = {"case", "scenario", "alternative", "option", "concern"};
    struct span t = skip_bullet(trimmed(line));

    if (istarts(t, "Q:") || istarts(t, "A:") || istarts(t, "Q.") || istarts(t, "Question:") ||
        istarts(t, "Answer:") || istarts(t, "Why not "))
        return true;
    for (size_t k = 0; k < sizeof(enums) / sizeof(enums[0]); k++)
        if (is_enumerated(t, enums[k]))
            return true;
    if (t.len > 0 && t.p[t.len - 1] == '?')
        for (size_t k = 0; k < sizeof(asks) / sizeof(asks[0]); k++)
            if (istarts(t, asks[k]))
                return true;
    for (size_t k = 0; k < sizeof(phrases) / sizeof(phrases[0]); k++)
        if (icontains(t, phrases[k]))
            return true;
    return false;
}

/* The patch a paragraph opens with: "Patch 2 ...", "Patch #2", "[PATCH 2/5]",
 * "[2/5]", "The second patch ...", "The last patch"; 0 for none. */
static unsigned
patch_ref(struct span t, unsigned total)
{
    static const char *const ordinals[] = {"first", "second",  "third",  "fourth", "fifth",
                                           "sixth", "seventh", "eighth", "ninth",  "tenth"};
    unsigned n = 0;
    size_t i;

    t = skip_bullet(t);
    if (istarts(t, "[PATCH "))
        i = 7;
    else if (istarts(t, "Patch "))
        i = 6;
    else if (istarts(t, "["))
        i = 1;
    else if (istarts(t, "The ")) {
        struct span w = {t.p + 4, t.len - 4};

        if ((istarts(w, "last patch") || istarts(w, "final patch")))
            return total;
        for (size_t k = 0; k < sizeof(ordinals) / sizeof(ordinals[0]); k++) {
            size_t ol = strlen(ordinals[k]);

            if (istarts(w, ordinals[k]) && w.len > ol + 6 &&
                strncasecmp(w.p + ol, " patch", 6) == 0)
                return (unsigned)k + 1;
        }
        return 0;
    } else
        return 0;
    if (i < t.len && t.p[i] == '#')
        i++;
    while (i < t.len && isdigit((unsigned char)t.p[i]) && n < 1000)
        n = n * 10 + (unsigned)(t.p[i++] - '0');
    /* "[1] https://..." is a footnote; a patch is "[2/5]". */
    if (t.p[0] == '[' && (i >= t.len || t.p[i] != '/'))
        return 0;
    return n;
}

/* "3 files changed, 40 insertions(+), 34 deletions(-)": insertions plus
 * deletions, or -1 when t is no such line. */
static long
diffstat_summary(struct span t)
{
    long sum = 0;
    size_t i = 0;

    while (i < t.len && isdigit((unsigned char)t.p[i]))
        i++;
    if (i == 0 || !(icontains(t, " file changed") || icontains(t, " files changed")))
        return -1;
    while (i < t.len) {
        long v = 0;
        size_t d;

        while (i < t.len && !isdigit((unsigned char)t.p[i]))
            i++;
        d = i;
        while (i < t.len && isdigit((unsigned char)t.p[i]) && v < 10000000)
            v = v * 10 + (t.p[i++] - '0');
        if (i > d && i + 2 < t.len &&
            (strncasecmp(t.p + i, " insertion", 10) == 0 ||
             strncasecmp(t.p + i, " deletion", 9) == 0))
            sum += v;
    }
    return sum;
}

static long
cover_changed_lines(const struct message *m)
{
    const struct region *b = &m->regions[REGION_BODY];
    const char *p = b->text ? b->text : "", *end = p + (b->text ? b->len : 0);
    struct span l;
    long found = -1;

    while (next_line(&p, end, &l)) {
        long v = diffstat_summary(trimmed(l));

        if (v >= 0)
            found = v;
    }
    return found;
}

struct cover_stats {
    size_t words, cases, restated;
    struct span first_case;
    bool retold[SERIES_MAX_PATCHES + 1];
};

static void
paragraph_end(struct cover_stats *cs, unsigned ref, size_t words)
{
    if (ref >= 1 && ref <= SERIES_MAX_PATCHES && words >= SERIES_RESTATE_WORDS &&
        !cs->retold[ref]) {
        cs->retold[ref] = true;
        cs->restated++;
    }
}

static void
cover_scan(const struct message *m, struct cover_stats *cs)
{
    const struct region *r = &m->regions[REGION_CHANGELOG];
    const char *p = r->text ? r->text : "", *end = p + (r->text ? r->len : 0);
    unsigned total = m->psubj.total, ref = 0;
    size_t para_words = 0;
    bool in_para = false;
    struct span l;

    while (next_line(&p, end, &l)) {
        struct span t = trimmed(l);

        if (t.len == 0) {
            paragraph_end(cs, ref, para_words);
            in_para = false;
            continue;
        }
        if (is_shortlog_head(t) || is_history_head(t) || diffstat_summary(t) >= 0)
            break;
        if (isspace((unsigned char)l.p[0]) || t.p[0] == '>' || istarts(t, "base-commit:") ||
            istarts(t, "Link:") || istarts(t, "http") || !is_prose(t))
            continue;
        if (!in_para) {
            in_para = true;
            ref = patch_ref(t, total);
            para_words = 0;
        }
        para_words += count_words(t);
        cs->words += count_words(t);
        if (argues_case(t) && cs->cases++ == 0)
            cs->first_case = t;
    }
    if (in_para)
        paragraph_end(cs, ref, para_words);
}

/* Evidence is a courtesy: without memory it is left out, and the rule
 * shows "name=value" instead. */
static void note_evidence(struct message *m, enum measure_id id, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void
note_evidence(struct message *m, enum measure_id id, const char *fmt, ...)
{
    char buf[SERIES_EVIDENCE_MAX];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    free(m->measure_evidence[id]);
    m->measure_evidence[id] = strdup(buf);
}

void
series_measure(struct message *m)
{
    double *ms = m->measures;
    struct cover_stats cs;
    unsigned total = m->psubj.total;
    long changed;

    ms[MEASURE_COVER_LETTER] = m->cover_letter ? 1 : 0;
    ms[MEASURE_COVER_WORDS] = 0;
    ms[MEASURE_COVER_CHANGED_LINES] = 0;
    ms[MEASURE_COVER_WORDS_PER_PATCH] = 0;
    ms[MEASURE_COVER_WORDS_PER_CHANGED_LINE] = 0;
    ms[MEASURE_COVER_CASES] = 0;
    ms[MEASURE_COVER_RESTATED_SHARE] = 0;
    if (!m->cover_letter || total == 0)
        return;
    memset(&cs, 0, sizeof(cs));
    cover_scan(m, &cs);
    changed = cover_changed_lines(m);
    ms[MEASURE_COVER_WORDS] = (double)cs.words;
    ms[MEASURE_COVER_WORDS_PER_PATCH] = (double)cs.words / total;
    if (changed > 0) {
        ms[MEASURE_COVER_CHANGED_LINES] = (double)changed;
        ms[MEASURE_COVER_WORDS_PER_CHANGED_LINE] = (double)cs.words / (double)changed;
    }
    ms[MEASURE_COVER_CASES] = (double)cs.cases;
    ms[MEASURE_COVER_RESTATED_SHARE] =
        total <= SERIES_MAX_PATCHES ? (double)cs.restated / total : 0;

    if (changed > 0)
        note_evidence(m, MEASURE_COVER_WORDS,
                      "%zu words of cover letter for %u patch%s and %ld changed lines", cs.words,
                      total, total == 1 ? "" : "es", changed);
    else
        note_evidence(m, MEASURE_COVER_WORDS, "%zu words of cover letter for %u patch%s", cs.words,
                      total, total == 1 ? "" : "es");
    if (cs.cases > 0)
        note_evidence(m, MEASURE_COVER_CASES, "%zu lines argue cases, first: %.*s", cs.cases,
                      (int)(cs.first_case.len > 100 ? 100 : cs.first_case.len), cs.first_case.p);
    if (cs.restated > 0)
        note_evidence(m, MEASURE_COVER_RESTATED_SHARE,
                      "%zu of %u patches retold in a paragraph of %d words or more each",
                      cs.restated, total, SERIES_RESTATE_WORDS);
}

/* ---- the series through the state ---- */

/* The ids of the References field, at most max, without <>. */
static size_t
references(const struct message *m, char ids[][CLASSIFIER_MSGID_MAX], size_t max)
{
    const struct region *h = &m->regions[REGION_HEADERS];
    const char *p = h->text ? h->text : "", *end = p + (h->text ? h->len : 0);
    struct span l;
    bool in = false;
    size_t n = 0;

    while (n < max && next_line(&p, end, &l)) {
        if (!in) {
            if (l.len < 11 || strncasecmp(l.p, "References:", 11) != 0)
                continue;
            in = true;
            l.p += 11;
            l.len -= 11;
        } else if (l.len == 0 || !isspace((unsigned char)l.p[0])) {
            break; /* the next field */
        }
        for (const char *a = memchr(l.p, '<', l.len); a != NULL && n < max;) {
            const char *e = l.p + l.len, *b = memchr(a, '>', (size_t)(e - a));
            size_t len;

            if (b == NULL)
                break;
            len = (size_t)(b - a - 1);
            if (len > 0 && len < CLASSIFIER_MSGID_MAX) {
                memcpy(ids[n], a + 1, len);
                ids[n++][len] = '\0';
            }
            a = b + 1 < e ? memchr(b + 1, '<', (size_t)(e - b - 1)) : NULL;
        }
    }
    return n;
}

static uint64_t
fnv_word(uint64_t h, const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)tolower((unsigned char)p[i]);
        h *= 0x100000001b3ULL;
    }
    h ^= ' ';
    return h * 0x100000001b3ULL;
}

struct paras {
    uint64_t fp[CLASSIFIER_SERIES_PARAS];
    size_t words[CLASSIFIER_SERIES_PARAS];
    size_t n, all_words;
};

static void
para_add(struct paras *ps, uint64_t h, size_t words)
{
    ps->all_words += words;
    if (words < SERIES_PARA_MIN_WORDS || ps->n >= CLASSIFIER_SERIES_PARAS)
        return;
    for (size_t i = 0; i < ps->n; i++)
        if (ps->fp[i] == h)
            return;
    ps->fp[ps->n] = h;
    ps->words[ps->n++] = words;
}

/* The changelog's prose paragraphs as word sequences, case and white
 * space ignored; indented lines (pasted logs, code) are left out. */
static void
log_paragraphs(const struct message *m, struct paras *ps)
{
    const struct region *r = &m->regions[REGION_CHANGELOG];
    const char *p = r->text ? r->text : "", *end = p + (r->text ? r->len : 0);
    uint64_t h = 0xcbf29ce484222325ULL;
    size_t words = 0;
    struct span l;

    while (next_line(&p, end, &l)) {
        struct span t = trimmed(l);

        if (t.len == 0) {
            if (words > 0)
                para_add(ps, h, words);
            h = 0xcbf29ce484222325ULL;
            words = 0;
            continue;
        }
        if (isspace((unsigned char)l.p[0]))
            continue;
        for (size_t i = 0; i < t.len;) {
            size_t b;

            while (i < t.len && !isalnum((unsigned char)t.p[i]))
                i++;
            b = i;
            while (i < t.len && isalnum((unsigned char)t.p[i]))
                i++;
            if (i > b) {
                h = fnv_word(h, t.p + b, i - b);
                words++;
            }
        }
    }
    if (words > 0)
        para_add(ps, h, words);
}

static int
set_evidence(struct message *m, enum measure_id id, const char *s)
{
    free(m->measure_evidence[id]);
    m->measure_evidence[id] = strdup(s);
    return m->measure_evidence[id] ? 0 : -ENOMEM;
}

static bool
id_in(char ids[][CLASSIFIER_MSGID_MAX], size_t n, const char *id)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(ids[i], id) == 0)
            return true;
    return false;
}

/* The cover letter of a patch is its parent (In-Reply-To) or, when the
 * series was sent chained or as a reply, one of its References. */
static int
series_cover_flagged(struct message *m, const struct classifier_lookup *lk,
                     char refs[][CLASSIFIER_MSGID_MAX], size_t n_refs)
{
    char ids[SERIES_MAX_REFS + 1][CLASSIFIER_MSGID_MAX], note[CLASSIFIER_NOTE_MAX];
    char ev[SERIES_EVIDENCE_MAX];
    size_t n = 0;

    if (m->in_reply_to != NULL && strlen(m->in_reply_to) < CLASSIFIER_MSGID_MAX)
        snprintf(ids[n++], CLASSIFIER_MSGID_MAX, "%s", m->in_reply_to);
    for (size_t i = 0; i < n_refs; i++)
        if (!id_in(ids, n, refs[i]))
            snprintf(ids[n++], CLASSIFIER_MSGID_MAX, "%s", refs[i]);
    for (size_t i = 0; i < n; i++) {
        note[0] = '\0';
        if (!lk->cover_flagged(lk->ctx, ids[i], note, sizeof(note)))
            continue;
        note[sizeof(note) - 1] = '\0';
        m->measures[MEASURE_SERIES_COVER_FLAGGED] = 1;
        snprintf(ev, sizeof(ev), "the series' cover letter <%s> was flagged: %s", ids[i],
                 note[0] ? note : "(no detail)");
        return set_evidence(m, MEASURE_SERIES_COVER_FLAGGED, ev);
    }
    return 0;
}

static int
series_repeated(struct message *m, const struct classifier_lookup *lk,
                const struct classifier_result *res, const struct paras *ps)
{
    struct classifier_series s = {
        .root = res->series_root,
        .self_id = m->message_id,
        .version = res->series_version,
        .index = res->series_index,
        .total = res->series_total,
    };
    char ev[SERIES_EVIDENCE_MAX];
    uint32_t found = 0, patches;
    size_t words = 0, paras = 0;
    double all;

    patches = lk->series_repeats(lk->ctx, &s, ps->fp, ps->n, &found);
    if (patches == 0 || found == 0)
        return 0;
    for (size_t i = 0; i < ps->n; i++) {
        if ((found >> i) & 1) {
            words += ps->words[i];
            paras++;
        }
    }
    all = m->measures[MEASURE_CHANGELOG_WORDS];
    if (all < (double)ps->all_words)
        all = (double)ps->all_words;
    m->measures[MEASURE_SERIES_REPEATED_WORDS] = (double)words;
    m->measures[MEASURE_SERIES_REPEATED_SHARE] = all > 0 ? (double)words / all : 0;
    m->measures[MEASURE_SERIES_REPEATING_PATCHES] = patches;
    snprintf(ev, sizeof(ev),
             "%zu of %zu changelog paragraphs (%zu words) repeat those of %u other patches of "
             "the series <%s>",
             paras, ps->n, words, patches, res->series_root);
    return set_evidence(m, MEASURE_SERIES_REPEATED_WORDS, ev);
}

int
series_facts(struct message *m, const struct classifier_lookup *lk, struct classifier_result *res)
{
    char refs[SERIES_MAX_REFS][CLASSIFIER_MSGID_MAX];
    const char *root;
    struct paras ps;
    size_t n_refs;
    int r = 0;

    if (m->kind != CLASSIFIER_KIND_PATCH || m->psubj.total == 0)
        return 0;
    n_refs = references(m, refs, SERIES_MAX_REFS);
    root = n_refs > 0 ? refs[0] : m->in_reply_to ? m->in_reply_to : m->message_id;
    if (root == NULL)
        return 0;
    res->series_root = strdup(root);
    if (res->series_root == NULL)
        return -ENOMEM;
    res->series_version = m->psubj.version;
    res->series_index = m->psubj.index;
    res->series_total = m->psubj.total;
    if (m->cover_letter || m->psubj.index == 0)
        return 0;

    /* One patch has no other patches to repeat. */
    memset(&ps, 0, sizeof(ps));
    if (m->psubj.total >= 2)
        log_paragraphs(m, &ps);
    if (ps.n > 0) {
        res->log_paragraphs = malloc(ps.n * sizeof(*res->log_paragraphs));
        if (res->log_paragraphs == NULL)
            return -ENOMEM;
        memcpy(res->log_paragraphs, ps.fp, ps.n * sizeof(*res->log_paragraphs));
        res->n_log_paragraphs = ps.n;
    }
    if (lk == NULL)
        return 0;
    if (lk->cover_flagged != NULL)
        r = series_cover_flagged(m, lk, refs, n_refs);
    if (r == 0 && lk->series_repeats != NULL && ps.n > 0)
        r = series_repeated(m, lk, res, &ps);
    return r;
}

int
series_cover_note(const struct message *m, struct classifier_result *res)
{
    char note[CLASSIFIER_NOTE_MAX];
    size_t len = 0;

    if (!m->cover_letter || res->action < CLASSIFIER_ACTION_TAG || m->message_id == NULL)
        return 0;
    note[0] = '\0';
    for (size_t i = 0; i < res->n_hits; i++) {
        const char *rule = res->hits[i].rule;
        size_t n = strlen(rule);

        if (res->hits[i].score <= 0)
            continue;
        if (len + n + 2 >= sizeof(note))
            break;
        if (len > 0) {
            memcpy(note + len, ", ", 2);
            len += 2;
        }
        memcpy(note + len, rule, n + 1);
        len += n;
    }
    res->cover_note = strdup(note);
    return res->cover_note ? 0 : -ENOMEM;
}
