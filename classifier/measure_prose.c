/*
 * measure_prose.c - the prose measures: words, lines, sections, Markdown,
 * the changelog's long lines, and the trace and quoted lines of a report.
 *
 * Each line is tested once by a set of line classifiers (a tag, a
 * timestamp, a trace, a Markdown heading, a section title, a fact) that
 * work on the text the message owns and never read past a line's length.
 * Threading: no shared state.
 */
#include <ctype.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <strings.h>

#include "ascii.h"
#include "measure_prose.h"
#include "measure_text.h"
#include "message.h"
#include "needle.h"
#include "report_trace.h"

static bool
is_tag_line(const char *p, size_t len)
{
    static const char *const bare[] = {"Fixes", "Link", "Closes", "Cc", "BugLink"};
    size_t i = 0;

    while (i < len && (isalnum((unsigned char)p[i]) || p[i] == '-'))
        i++;
    if (i == 0 || i + 1 >= len || p[i] != ':' || p[i + 1] != ' ')
        return false;
    if (i > 3 && strncasecmp(p + i - 3, "-by", 3) == 0)
        return true;
    for (size_t k = 0; k < sizeof(bare) / sizeof(bare[0]); k++)
        if (strlen(bare[k]) == i && strncasecmp(p, bare[k], i) == 0)
            return true;
    return false;
}

/* "[   12.345678]" at the start of a line */
static bool
has_timestamp(const char *p, size_t len)
{
    size_t i = 0;

    while (i < len && isspace((unsigned char)p[i]))
        i++;
    if (i >= len || p[i] != '[')
        return false;
    i++;
    while (i < len && p[i] == ' ')
        i++;
    if (i >= len || !isdigit((unsigned char)p[i]))
        return false;
    while (i < len && isdigit((unsigned char)p[i]))
        i++;
    if (i >= len || p[i] != '.')
        return false;
    i++;
    while (i < len && isdigit((unsigned char)p[i]))
        i++;
    return i < len && p[i] == ']';
}

/* "func+0x1a/0x40" */
static bool
has_offset(const char *p, size_t len)
{
    const char *e = p + len;

    /* memchr() per '+': on short lines memmem()'s set-up costs more. */
    for (const char *q = memchr(p, '+', len); q != NULL;
         q = memchr(q + 1, '+', (size_t)(e - q - 1))) {
        const char *r = q + 3;

        if (e - q < 4 || q[1] != '0' || q[2] != 'x' || !isxdigit((unsigned char)*r))
            continue;
        while (r < e && isxdigit((unsigned char)*r))
            r++;
        if (e - r >= 4 && memcmp(r, "/0x", 3) == 0 && isxdigit((unsigned char)r[3]))
            return true;
    }
    return false;
}

/* Grouped by first byte, so a byte's candidates are one run of them. */
static const struct needle trace_marks[] = {
    NEEDLE("Call Trace:"),
    NEEDLE("Code: "),
    NEEDLE("CPU: "),
    NEEDLE("RIP: "),
    NEEDLE("RSP: "),
    NEEDLE("RAX: "),
    NEEDLE("<TASK>"),
    NEEDLE("</TASK>"),
    NEEDLE("<IRQ>"),
    NEEDLE("</IRQ>"),
    NEEDLE("BUG: "),
    NEEDLE("WARNING: "),
    NEEDLE("Workqueue: "),
    NEEDLE("KASAN: "),
    NEEDLE("Kernel panic"),
    NEEDLE("UBSAN: "),
    NEEDLE("Oops: "),
    NEEDLE("general protection fault"),
    NEEDLE("Modules linked in:"),
    NEEDLE("MemorySanitizer"),
    NEEDLE("Hardware name:"),
    NEEDLE("AddressSanitizer"),
    NEEDLE("LeakSanitizer"),
    NEEDLE("ThreadSanitizer"),
    NEEDLE("runtime error: "),
};

static bool
is_trace_line(const char *p, size_t len)
{
    /* Per byte: 1 + the index of the first mark that starts with it, or
     * 0 when none does. */
    static const unsigned char mark_first[256] = {
        ['C'] = 1,  ['R'] = 4,  ['<'] = 7,  ['B'] = 11, ['W'] = 12,
        ['K'] = 14, ['U'] = 16, ['O'] = 17, ['g'] = 18, ['M'] = 19,
        ['H'] = 21, ['A'] = 22, ['L'] = 23, ['T'] = 24, ['r'] = 25,
    };
    const size_t n_marks = sizeof(trace_marks) / sizeof(trace_marks[0]);

    if (has_timestamp(p, len) || has_offset(p, len) || report_sanitizer_line(p, len) ||
        report_backtrace_line(p, len))
        return true;
    /* One pass over the line, comparing only the marks that start with
     * the byte at hand, instead of one search per mark. */
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)p[i];

        if (mark_first[c] == 0)
            continue;
        for (size_t k = mark_first[c] - 1u; k < n_marks && trace_marks[k].s[0] == (char)c; k++)
            if (trace_marks[k].n <= len - i &&
                memcmp(p + i, trace_marks[k].s, trace_marks[k].n) == 0)
                return true;
    }
    return false;
}

/* checkpatch's COMMIT_LOG_LONG_LINE exemptions. */
static bool
long_line_exempt(const char *p, size_t len)
{
    const char *t = p;
    size_t tl = len, i = 0;

    if (measure_text_has(p, len, "http://") || measure_text_has(p, len, "https://") ||
        measure_text_has(p, len, "Fixes:"))
        return true;
    if (is_tag_line(p, len) || has_timestamp(p, len) || has_offset(p, len))
        return true;
    ascii_trim(&t, &tl);
    if (measure_text_starts(t, tl, "WARNING:") || measure_text_starts(t, tl, "BUG:"))
        return true;
    /* "dir/file.c:" references */
    while (i < tl && (isalnum((unsigned char)t[i]) || strchr("_.-+/", t[i]) != NULL))
        i++;
    if (i < tl && t[i] == ':' && memchr(t, '/', i) != NULL)
        return true;
    /* diffstat */
    return len > 0 && isspace((unsigned char)p[0]) && memchr(p, '|', len) != NULL;
}

/* "## Heading": a root prompt ("# echo 1 > ...", "# -> ...") does not
 * start with a capital or a digit. t[0..tl) is a trimmed line. */
static bool
is_md_heading(const char *t, size_t tl)
{
    size_t i = 0;

    while (i < tl && t[i] == '#')
        i++;
    if (i == 0 || i > 6 || i >= tl || !isspace((unsigned char)t[i]))
        return false;
    while (i < tl && isspace((unsigned char)t[i]))
        i++;
    return i < tl && (isupper((unsigned char)t[i]) || isdigit((unsigned char)t[i]));
}

static const char *
find_double(const char *p, size_t len, char c)
{
    return ascii_find_pair(p, len, c, c);
}

/* "**x**", or "__x y__" (identifiers like __func__ or "__a(), __b" are
 * not bold) */
static bool
has_bold(const char *p, size_t len)
{
    const char *e = p + len, *a, *b;

    a = find_double(p, len, '*');
    if (a != NULL && a + 2 < e && !isspace((unsigned char)a[2])) {
        b = find_double(a + 2, (size_t)(e - a - 2), '*');
        if (b != NULL && b > a + 2)
            return true;
    }
    a = find_double(p, len, '_');
    if (a != NULL && (a == p || isspace((unsigned char)a[-1])) && a + 2 < e &&
        isalpha((unsigned char)a[2])) {
        size_t n;

        b = find_double(a + 2, (size_t)(e - a - 2), '_');
        if (b == NULL || (b + 2 < e && isalnum((unsigned char)b[2])))
            return false;
        n = (size_t)(b - a - 2);
        return memchr(a + 2, ' ', n) != NULL && memchr(a + 2, '_', n) == NULL &&
               memchr(a + 2, '(', n) == NULL;
    }
    return false;
}

static bool
is_table_row(const char *p, size_t len)
{
    ascii_trim(&p, &len);
    return len >= 2 && p[0] == '|' && p[len - 1] == '|';
}

/* "|---|:--:|": what makes "|...|" lines a table, not an ASCII diagram */
static bool
is_table_rule(const char *p, size_t len)
{
    size_t dashes = 0;

    if (!is_table_row(p, len))
        return false;
    for (size_t i = 0; i < len; i++) {
        if (p[i] == '-')
            dashes++;
        else if (!(p[i] == '|' || p[i] == ':' || isspace((unsigned char)p[i])))
            return false;
    }
    return dashes >= 3;
}

/*
 * Markdown lines of one text: heading, bold span (which covers bold-lead
 * bullets), code fence, or table row (only when the text has a "|---|"
 * rule). Plain "- " bullets are not counted: kernel notes ("v2:\n - fix
 * foo") use them as plain text does. Table rows are kept apart until the
 * whole text is read, so one pass finds both the rule and the rows.
 */
struct md_stats {
    size_t lines, markdown, table_rows;
    bool tables;
};

/* A line as the per-line tests of prose take it: as written (p, len),
 * trimmed (t, tl), and whether it is a Markdown heading, which two of
 * them ask. Trimmed once here instead of once in each test. */
struct prose_line {
    const char *p, *t;
    size_t len, tl;
    bool heading;
};

static struct prose_line
prose_line(const char *p, size_t len)
{
    struct prose_line l = {.p = p, .t = p, .len = len, .tl = len};

    ascii_trim(&l.t, &l.tl);
    l.heading = is_md_heading(l.t, l.tl);
    return l;
}

/* One non-blank line of the text. The table tests read it trimmed: what
 * trimming drops is white space, which they pass over. */
static void
markdown_line(struct md_stats *md, const struct prose_line *l)
{
    bool row = is_table_row(l->t, l->tl);

    md->tables |= row && is_table_rule(l->t, l->tl);
    md->lines++;
    if (l->heading || has_bold(l->p, l->len) || measure_text_starts(l->t, l->tl, "```"))
        md->markdown++;
    else if (row)
        md->table_rows++;
}

static void
markdown_done(struct measure_prose *st, const struct md_stats *md)
{
    st->md_lines += md->lines;
    st->markdown += md->markdown + (md->tables ? md->table_rows : 0);
}

static size_t
count_ws_words(const char *p, size_t len)
{
    size_t n = 0;
    bool in = false;

    for (size_t i = 0; i < len; i++) {
        bool sp = isspace((unsigned char)p[i]);

        if (!sp && !in)
            n++;
        in = !sp;
    }
    return n;
}

/* Heading-like: a Markdown heading, "**Heading**" alone, a capitalised
 * line of at most three words ending in ':' ("Root Cause:"), a short
 * ALL-CAPS line, or a short numbered title ("2. Proposed Fix"). */
static bool
is_section(const struct prose_line *l)
{
    const char *t = l->t;
    size_t tl = l->tl, letters = 0, i;
    bool lower = false, other = false;

    if (tl == 0)
        return false;
    if (l->heading)
        return true;
    /* a heading starts at the margin; indented lines are code or traces */
    if (isspace((unsigned char)l->p[0]))
        return false;
    if (tl > 4 && measure_text_starts(t, tl, "**") &&
        ((t[tl - 1] == '*' && t[tl - 2] == '*') ||
         (tl > 5 && t[tl - 1] == ':' && t[tl - 2] == '*' && t[tl - 3] == '*')))
        return true;
    if (t[tl - 1] == ':' && isupper((unsigned char)t[0]) && count_ws_words(t, tl) <= 3 &&
        !measure_text_has(t, tl, "://") && strncasecmp(t, "Call Trace:", 11) != 0 &&
        !measure_text_has(t, tl, "->"))
        return true;
    /* Only an ALL-CAPS line can pass the test after this loop: stop at
     * the first byte that rules it out. */
    for (i = 0; i < tl && !lower && !other; i++) {
        unsigned char c = (unsigned char)t[i];

        if (isupper(c))
            letters++;
        else if (islower(c))
            lower = true;
        else if (!(c == ' ' || c == ':' || c == '-' || c == '&'))
            other = true;
    }
    if (!lower && !other && letters >= 3 && isupper((unsigned char)t[0]) &&
        count_ws_words(t, tl) <= 6)
        return true;
    i = 0;
    while (i < tl && isdigit((unsigned char)t[i]))
        i++;
    if (i > 0 && i + 2 < tl && t[i] == '.' && t[i + 1] == ' ' && isupper((unsigned char)t[i + 2]) &&
        tl <= 40 && count_ws_words(t, tl) <= 5 && !ispunct((unsigned char)t[tl - 1]))
        return true;
    return false;
}

static bool
word_boundary_before(const char *line, const char *q)
{
    return q == line || !(isalnum((unsigned char)q[-1]) || q[-1] == '_' || q[-1] == '.');
}

/*
 * 2.6, 6.8.0, 6.9-rc2, v6.1: a 'v' and a major of any length, or a major
 * of one digit from 2 to 7 whose minor runs into no letter. Either way a
 * digit follows a '.', so only the dots are looked at (memchr(): prose
 * has few) and the major is read back from there.
 */
static bool
has_version(const char *p, size_t len)
{
    const char *e = p + len;

    for (const char *d = memchr(p, '.', len); d != NULL;
         d = d + 1 < e ? memchr(d + 1, '.', (size_t)(e - d - 1)) : NULL) {
        const char *s = d, *r;

        if (d + 1 >= e || !isdigit((unsigned char)d[1]))
            continue;
        while (s > p && isdigit((unsigned char)s[-1]))
            s--;
        if (s == d)
            continue;
        if (s > p && s[-1] == 'v' && word_boundary_before(p, s - 1))
            return true;
        if (s + 1 != d || *s < '2' || *s > '7' || !word_boundary_before(p, s))
            continue;
        r = d + 1;
        while (r < e && isdigit((unsigned char)*r))
            r++;
        if (r == e || !(isalpha((unsigned char)*r) || *r == '_'))
            return true;
    }
    return false;
}

/* drivers/usb/core/hub.c */
static bool
has_path(const char *p, size_t len)
{
    const char *e = p + len;

    for (const char *q = memchr(p, '/', len); q != NULL;
         q = q + 1 < e ? memchr(q + 1, '/', (size_t)(e - q - 1)) : NULL) {
        const char *r = q + 1, *last_dot = NULL;

        if (q == p || !(isalnum((unsigned char)q[-1]) || q[-1] == '_'))
            continue;
        while (r < e && (isalnum((unsigned char)*r) || strchr("_/.-", *r) != NULL)) {
            if (*r == '.')
                last_dot = r;
            r++;
        }
        if (last_dot != NULL && last_dot + 2 == r && (last_dot[1] == 'c' || last_dot[1] == 'h'))
            return true;
    }
    return false;
}

/* foo_bar() */
static bool
has_function(const char *p, size_t len)
{
    const char *e = p + len;

    /* memchr() for the '(' and then the ')': on short lines that is
     * cheaper than memmem()'s set-up. */
    for (const char *q = ascii_find_pair(p, len, '(', ')'); q != NULL;
         q = ascii_find_pair(q + 2, (size_t)(e - q - 2), '(', ')')) {
        const char *s = q;

        while (s > p &&
               (islower((unsigned char)s[-1]) || isdigit((unsigned char)s[-1]) || s[-1] == '_'))
            s--;
        while (s < q && isdigit((unsigned char)*s))
            s++;
        if (q - s >= 3 && word_boundary_before(p, s))
            return true;
    }
    return false;
}

/* Lines that start a stack dump in checkpatch's eyes (plus an oops's
 * first line and a "func+0x../0x.." frame). */
static bool
starts_stack_dump(const char *p, size_t len)
{
    const char *t = p;
    size_t tl = len;

    ascii_trim(&t, &tl);
    if (measure_text_starts(t, tl, "WARNING:") || measure_text_starts(t, tl, "BUG:") ||
        measure_text_starts(t, tl, "Call Trace:") ||
        measure_text_starts(t, tl, "general protection fault") ||
        measure_text_starts(t, tl, "Oops:") || measure_text_starts(t, tl, "[<"))
        return true;
    return has_timestamp(p, len) || has_offset(p, len);
}

static void
log_line(struct measure_log *lg, const char *line, size_t len, bool is_blank)
{
    if (is_blank) {
        lg->in_dump = false; /* a dump runs to the end of its paragraph */
        return;
    }
    lg->lines++;
    lg->in_dump |= starts_stack_dump(line, len);
    /* A line has no more columns than bytes. */
    if (!lg->in_dump && len > 75 && measure_text_columns(line, len) > 75 &&
        !long_line_exempt(line, len))
        lg->long_lines++;
}

size_t
measure_prose_changelog(struct measure_log *lg, const struct region *r)
{
    struct measure_text t = measure_text_of(r);
    const char *line;
    size_t len, words = 0;

    while (measure_text_line(&t, &line, &len)) {
        words += measure_text_words(line, len);
        log_line(lg, line, len, measure_text_blank(line, len));
    }
    return words;
}

void
measure_prose_add(struct measure_prose *st, const struct region *r, struct measure_log *lg)
{
    struct measure_text t = measure_text_of(r);
    struct md_stats md = {0};
    const char *line;
    size_t len, n = 0;

    while (measure_text_line(&t, &line, &len)) {
        struct prose_line l = prose_line(line, len);

        n++;
        st->words += measure_text_words_marked(line, len, &st->marks);
        if (lg != NULL)
            log_line(lg, line, len, l.tl == 0);
        if (l.tl == 0)
            continue;
        st->lines++;
        st->sections += is_section(&l);
        if (st->facts_line == 0 &&
            (has_version(line, len) || has_path(line, len) || has_function(line, len)))
            st->facts_line = n;
        markdown_line(&md, &l);
    }
    markdown_done(st, &md);
}

void
measure_prose_markdown(struct measure_prose *st, const struct region *r)
{
    struct measure_text t = measure_text_of(r);
    struct md_stats md = {0};
    const char *line;
    size_t len;

    while (measure_text_line(&t, &line, &len)) {
        struct prose_line l = prose_line(line, len);

        if (l.tl > 0)
            markdown_line(&md, &l);
    }
    markdown_done(st, &md);
}

const struct region *
measure_prose_region(const struct message *m)
{
    const struct region *rep = &m->regions[REGION_REPORT];

    if (m->kind == CLASSIFIER_KIND_PATCH)
        return &m->regions[REGION_CHANGELOG];
    if (rep->text != NULL && !measure_text_blank(rep->text, rep->len))
        return rep;
    return &m->regions[REGION_BODY];
}

size_t
measure_prose_nonblank(const struct region *r)
{
    struct measure_text t = measure_text_of(r);
    size_t n = 0;

    while (t.p < t.end) {
        const char *nl;

        if (isspace((unsigned char)*t.p)) {
            t.p++;
            continue;
        }
        n++;
        nl = memchr(t.p, '\n', (size_t)(t.end - t.p));
        if (nl == NULL)
            break;
        t.p = nl + 1;
    }
    return n;
}

void
measure_prose_code(const struct region *r, size_t *nonblank, size_t *trace)
{
    struct measure_text t = measure_text_of(r);
    const char *line;
    size_t len;

    *nonblank = 0;
    *trace = 0;
    while (measure_text_line(&t, &line, &len)) {
        if (measure_text_blank(line, len))
            continue;
        (*nonblank)++;
        *trace += is_trace_line(line, len);
    }
}
