/*
 * measure.c - the numbers rules compare ("measure changelog_words > 150").
 *
 * measure_compute() reads a built message model and fills the text and
 * diff measures of m->measures (up to MEASURE_PATCH_VERSION; series.c
 * adds the cover letter ones, and the look-up measures belong to
 * facts.c); it allocates nothing and cannot
 * fail. The prose it measures is the
 * changelog for a patch, otherwise the report region (or the body when
 * the report region is empty). Every heuristic here works line by line on
 * text the message already owns; none reads past a region's length.
 *
 * The name table ties rule-file measure names to enum measure_id;
 * docs/rules.md documents the same list. Threading: no shared state.
 */
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "ascii.h"
#include "dt_binding.h"
#include "measure.h"
#include "message.h"
#include "report_trace.h"
#include "series.h"

static const char *const measure_names[MEASURE__COUNT] = {
    [MEASURE_CHANGELOG_WORDS] = "changelog_words",
    [MEASURE_CHANGELOG_LINES] = "changelog_lines",
    [MEASURE_CHANGELOG_LONG_LINES] = "changelog_long_lines",
    [MEASURE_CHANGED_LINES] = "changed_lines",
    [MEASURE_ADDED_LINES] = "added_lines",
    [MEASURE_REMOVED_LINES] = "removed_lines",
    [MEASURE_FILES] = "files",
    [MEASURE_HUNKS] = "hunks",
    [MEASURE_WORDS_PER_CHANGED_LINE] = "words_per_changed_line",
    [MEASURE_ADDED_COMMENT_LINES] = "added_comment_lines",
    [MEASURE_ADDED_CODE_LINES] = "added_code_lines",
    [MEASURE_COMMENT_RATIO] = "comment_ratio",
    [MEASURE_RESTATING_COMMENTS] = "restating_comments",
    [MEASURE_COMMENT_HEAVY_BLOCKS] = "comment_heavy_blocks",
    [MEASURE_MARKDOWN_LINES] = "markdown_lines",
    [MEASURE_MARKDOWN_DENSITY] = "markdown_density",
    [MEASURE_PROSE_WORDS] = "prose_words",
    [MEASURE_PROSE_LINES] = "prose_lines",
    [MEASURE_SECTIONS] = "sections",
    [MEASURE_FACTS_LINE] = "facts_line",
    [MEASURE_EM_DASHES] = "em_dashes",
    [MEASURE_CURLY_QUOTES] = "curly_quotes",
    [MEASURE_EMOJI] = "emoji",
    [MEASURE_QUOTED_LINES] = "quoted_lines",
    [MEASURE_QUOTED_RATIO] = "quoted_ratio",
    [MEASURE_TRACE_LINES] = "trace_lines",
    [MEASURE_CODE_LINES] = "code_lines",
    [MEASURE_VERSIONS] = "versions",
    [MEASURE_IDENTIFIERS] = "identifiers",
    [MEASURE_RECIPIENTS] = "recipients",
    [MEASURE_ATTACHMENTS] = "attachments",
    [MEASURE_HTML_ONLY] = "html_only",
    [MEASURE_REPORT_ADDRESS] = "report_address",
    [MEASURE_SERIES_INDEX] = "series_index",
    [MEASURE_SERIES_TOTAL] = "series_total",
    [MEASURE_PATCH_VERSION] = "patch_version",
    [MEASURE_COVER_LETTER] = "cover_letter",
    [MEASURE_COVER_WORDS] = "cover_words",
    [MEASURE_COVER_CHANGED_LINES] = "cover_changed_lines",
    [MEASURE_COVER_WORDS_PER_PATCH] = "cover_words_per_patch",
    [MEASURE_COVER_WORDS_PER_CHANGED_LINE] = "cover_words_per_changed_line",
    [MEASURE_COVER_CASES] = "cover_cases",
    [MEASURE_COVER_RESTATED_SHARE] = "cover_restated_share",
    [MEASURE_TREE_INDEXED] = "tree_indexed",
    [MEASURE_MISSING_IDENTIFIERS] = "missing_identifiers",
    [MEASURE_MISSING_PATHS] = "missing_paths",
    [MEASURE_DIFF_MISSING_PATHS] = "diff_missing_paths",
    [MEASURE_ALREADY_FIXED] = "already_fixed",
    [MEASURE_DUPLICATE] = "duplicate",
    [MEASURE_UNCC_MAINTAINERS] = "uncc_maintainers",
    [MEASURE_SENDER_DAILY] = "sender_daily",
    [MEASURE_TRUSTED_SENDER] = "trusted_sender",
    [MEASURE_SERIES_COVER_FLAGGED] = "series_cover_flagged",
    [MEASURE_SERIES_REPEATED_WORDS] = "series_repeated_words",
    [MEASURE_SERIES_REPEATED_SHARE] = "series_repeated_share",
    [MEASURE_SERIES_REPEATING_PATCHES] = "series_repeating_patches",
    [MEASURE_LEARNED_READY] = "learned_ready",
    [MEASURE_LEARNED_SLOP] = "learned_slop",
    [MEASURE_LIMIT_HIT] = "limit_hit",
    [MEASURE_BINDING_SCHEMA_ERRORS] = "binding_schema_errors",
    [MEASURE_BINDING_DRIVER_LINES] = "binding_driver_lines",
};

const char *
measure_name(enum measure_id id)
{
    if ((unsigned)id >= MEASURE__COUNT)
        return NULL;
    return measure_names[id];
}

int
measure_parse(const char *name, enum measure_id *ret)
{
    if (name == NULL)
        return -EINVAL;
    for (unsigned i = 0; i < MEASURE__COUNT; i++) {
        if (measure_names[i] != NULL && strcmp(measure_names[i], name) == 0) {
            *ret = (enum measure_id)i;
            return 0;
        }
    }
    return -EINVAL;
}

/* ---- text helpers ---- */

struct text {
    const char *p, *end;
};

static struct text
region_text(const struct region *r)
{
    struct text t = {"", ""};

    if (r->text != NULL) {
        t.p = r->text;
        t.end = r->text + r->len;
    }
    return t;
}

/* Next line of *t, without its '\n'; false at the end. */
static bool
next_line(struct text *t, const char **line, size_t *len)
{
    const char *nl;

    if (t->p >= t->end)
        return false;
    nl = memchr(t->p, '\n', (size_t)(t->end - t->p));
    *line = t->p;
    *len = nl ? (size_t)(nl - t->p) : (size_t)(t->end - t->p);
    t->p = nl ? nl + 1 : t->end;
    return true;
}

static bool
blank(const char *p, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (!isspace((unsigned char)p[i]))
            return false;
    return true;
}

static bool
has(const char *p, size_t len, const char *needle)
{
    return memmem(p, len, needle, strlen(needle)) != NULL;
}

static bool
starts(const char *p, size_t len, const char *prefix)
{
    size_t n = strlen(prefix);

    return len >= n && memcmp(p, prefix, n) == 0;
}

/* Decode one UTF-8 code point; invalid bytes come back as U+FFFD. */
static uint32_t
utf8_next(const char **pp, const char *end)
{
    const unsigned char *p = (const unsigned char *)*pp;
    uint32_t c = p[0];
    size_t n, i;

    if (c < 0x80) {
        *pp += 1;
        return c;
    }
    if ((c & 0xE0) == 0xC0) {
        n = 1;
        c &= 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
        n = 2;
        c &= 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
        n = 3;
        c &= 0x07;
    } else {
        *pp += 1;
        return 0xFFFD;
    }
    if ((size_t)(end - *pp) < n + 1) {
        *pp += 1;
        return 0xFFFD;
    }
    for (i = 1; i <= n; i++) {
        if ((p[i] & 0xC0) != 0x80) {
            *pp += 1;
            return 0xFFFD;
        }
        c = (c << 6) | (p[i] & 0x3F);
    }
    *pp += n + 1;
    return c;
}

static size_t
utf8_columns(const char *p, size_t len)
{
    const char *end = p + len;
    size_t n = 0;

    while (p < end) {
        utf8_next(&p, end);
        n++;
    }
    return n;
}

static bool
is_emoji(uint32_t c)
{
    return (c >= 0x1F000 && c <= 0x1F2FF) || (c >= 0x1F300 && c <= 0x1FAFF) ||
           (c >= 0x2600 && c <= 0x27BF) || c == 0x2B50 || c == 0x2B55 || c == 0x231A ||
           c == 0x231B || (c >= 0x23E9 && c <= 0x23F3);
}

/* Letters outside ASCII: everything from Latin-1 letters up, except the
 * punctuation, symbol and pictograph blocks. */
static bool
is_word_cp(uint32_t c)
{
    /* isalnum() without the locale call: ASCII is the same everywhere. */
    if (c < 0x80)
        return (c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'z') || c == '_';
    if (c < 0xC0 || c == 0xD7 || c == 0xF7 || c == 0xFFFD)
        return false;
    if (c >= 0x2000 && c <= 0x2BFF)
        return false;
    if (c >= 0x3000 && c <= 0x303F)
        return false;
    if ((c >= 0xE000 && c <= 0xF8FF) || (c >= 0xFE00 && c <= 0xFE0F) || c == 0xFEFF)
        return false;
    return !is_emoji(c);
}

struct prose_stats {
    size_t words, lines, sections, facts_line, em_dashes, curly, emoji;
    size_t markdown, md_lines;
};

/* Em dashes, curly quotes and emoji: all multi-byte code points. */
static void
prose_char(struct prose_stats *st, uint32_t c)
{
    if (c == 0x2014 || c == 0x2013)
        st->em_dashes++;
    else if (c >= 0x2018 && c <= 0x201D && c != 0x201A && c != 0x201B)
        st->curly++;
    else if (is_emoji(c))
        st->emoji++;
}

/* UINT64_C(0x0101010101010101) * b: the byte b in every lane. */
#define LANES(b) (UINT64_C(0x0101010101010101) * (uint64_t)(b))

/* Eight bytes as one number, p[k] in bits 8k to 8k + 7 on any host.
 * Spelled out, compilers see one load here (on a little-endian host). */
static uint64_t
load_le64(const char *p)
{
    const unsigned char *u = (const unsigned char *)p;

    return (uint64_t)u[0] | (uint64_t)u[1] << 8 | (uint64_t)u[2] << 16 | (uint64_t)u[3] << 24 |
           (uint64_t)u[4] << 32 | (uint64_t)u[5] << 40 | (uint64_t)u[6] << 48 |
           (uint64_t)u[7] << 56;
}

/* The lanes of x, eight ASCII bytes, that are c: the top bit of each such
 * lane set. Below 0x80, adding 0x7f to a byte sets its top bit exactly
 * when it is not zero, and carries into no other lane. */
static uint64_t
lanes_eq(uint64_t x, unsigned char c)
{
    return ~((x ^ LANES(c)) + LANES(0x7f)) & LANES(0x80);
}

/* The lanes of x, eight ASCII bytes, that are word bytes (letters,
 * digits, '_'): a byte is lo or above when adding 0x80 - lo sets its top
 * bit, again without a carry into the next lane. */
static uint64_t
word_lanes(uint64_t x)
{
    uint64_t l = x | LANES(0x20); /* a letter's two cases alike */
    uint64_t digit = (x + LANES(0x80 - '0')) & ~(x + LANES(0x80 - '9' - 1));
    uint64_t alpha = (l + LANES(0x80 - 'a')) & ~(l + LANES(0x80 - 'z' - 1));

    return ((digit | alpha) & LANES(0x80)) | lanes_eq(x, '_');
}

/* Words starting in the ASCII bytes p[0..n), byte by byte and without
 * branches: boundaries come every few bytes. *in tells whether a word
 * runs into p[0] and, on return, out of p[n - 1]. */
static size_t
ascii_words_bytes(const char *p, size_t n, bool *in)
{
    size_t words = 0;
    bool w_in = *in;

    for (size_t i = 0; i < n; i++) {
        unsigned char a = (unsigned char)p[i];
        bool w = ascii_is_word(a);

        words += (size_t)(w & !w_in);
        w_in = w | (w_in & (a == '\''));
    }
    *in = w_in;
    return words;
}

/* ascii_words_bytes() eight bytes a step: a word starts in each lane
 * that is a word byte and follows none. An apostrophe, which keeps a word
 * going, is rare enough to send its eight bytes to the byte loop. */
static size_t
ascii_words(const char *p, size_t n, bool *in)
{
    size_t words = 0, i = 0;

    for (; n - i >= 8; i += 8) {
        uint64_t x = load_le64(p + i), w, starts;

        if (lanes_eq(x, '\'') != 0) {
            words += ascii_words_bytes(p + i, 8, in);
            continue;
        }
        w = word_lanes(x);
        starts = w & ~(w << 8 | (*in ? UINT64_C(0x80) : 0));
        words += (size_t)(((starts >> 7) * LANES(1)) >> 56);
        *in = (w >> 63) != 0;
    }
    return words + ascii_words_bytes(p + i, n - i, in);
}

/* Words: runs of letters, digits and '_'; an apostrophe inside a word
 * ("don't", "kernel’s") does not split it. With st, prose_char() of each
 * code point on the way, so prose is decoded once, not twice. */
static size_t
count_words_in(const char *p, size_t len, struct prose_stats *st)
{
    const char *end = p + len;
    bool in = false;
    size_t n = 0;

    while (p < end) {
        /* ASCII needs no decoding: most prose is all of it. */
        size_t run = ascii_prefix(p, (size_t)(end - p));
        uint32_t c;

        n += ascii_words(p, run, &in);
        p += run;
        if (p == end)
            break;
        c = utf8_next(&p, end);
        if (st != NULL)
            prose_char(st, c);
        if (is_word_cp(c)) {
            if (!in)
                n++;
            in = true;
        } else if (!(in && (c == '\'' || c == 0x2019))) {
            in = false;
        }
    }
    return n;
}

static size_t
count_words(const char *p, size_t len)
{
    return count_words_in(p, len, NULL);
}

/* ---- prose line classifiers ---- */

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

/* A trace mark and its length. */
struct trace_mark {
    const char *text;
    size_t len;
};

#define TRACE_MARK(s)                                                                              \
    {                                                                                              \
        s, sizeof(s) - 1                                                                           \
    }

/* Grouped by first byte, so a byte's candidates are one run of them. */
static const struct trace_mark trace_marks[] = {
    TRACE_MARK("Call Trace:"),
    TRACE_MARK("Code: "),
    TRACE_MARK("CPU: "),
    TRACE_MARK("RIP: "),
    TRACE_MARK("RSP: "),
    TRACE_MARK("RAX: "),
    TRACE_MARK("<TASK>"),
    TRACE_MARK("</TASK>"),
    TRACE_MARK("<IRQ>"),
    TRACE_MARK("</IRQ>"),
    TRACE_MARK("BUG: "),
    TRACE_MARK("WARNING: "),
    TRACE_MARK("Workqueue: "),
    TRACE_MARK("KASAN: "),
    TRACE_MARK("Kernel panic"),
    TRACE_MARK("UBSAN: "),
    TRACE_MARK("Oops: "),
    TRACE_MARK("general protection fault"),
    TRACE_MARK("Modules linked in:"),
    TRACE_MARK("MemorySanitizer"),
    TRACE_MARK("Hardware name:"),
    TRACE_MARK("AddressSanitizer"),
    TRACE_MARK("LeakSanitizer"),
    TRACE_MARK("ThreadSanitizer"),
    TRACE_MARK("runtime error: "),
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
        for (size_t k = mark_first[c] - 1u; k < n_marks && trace_marks[k].text[0] == (char)c; k++)
            if (trace_marks[k].len <= len - i &&
                memcmp(p + i, trace_marks[k].text, trace_marks[k].len) == 0)
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

    if (has(p, len, "http://") || has(p, len, "https://") || has(p, len, "Fixes:"))
        return true;
    if (is_tag_line(p, len) || has_timestamp(p, len) || has_offset(p, len))
        return true;
    ascii_trim(&t, &tl);
    if (starts(t, tl, "WARNING:") || starts(t, tl, "BUG:"))
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
    if (l->heading || has_bold(l->p, l->len) || starts(l->t, l->tl, "```"))
        md->markdown++;
    else if (row)
        md->table_rows++;
}

static void
markdown_done(struct prose_stats *st, const struct md_stats *md)
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
    if (tl > 4 && starts(t, tl, "**") &&
        ((t[tl - 1] == '*' && t[tl - 2] == '*') ||
         (tl > 5 && t[tl - 1] == ':' && t[tl - 2] == '*' && t[tl - 3] == '*')))
        return true;
    if (t[tl - 1] == ':' && isupper((unsigned char)t[0]) && count_ws_words(t, tl) <= 3 &&
        !has(t, tl, "://") && strncasecmp(t, "Call Trace:", 11) != 0 && !has(t, tl, "->"))
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
    if (starts(t, tl, "WARNING:") || starts(t, tl, "BUG:") || starts(t, tl, "Call Trace:") ||
        starts(t, tl, "general protection fault") || starts(t, tl, "Oops:") || starts(t, tl, "[<"))
        return true;
    return has_timestamp(p, len) || has_offset(p, len);
}

/* ---- prose ---- */

/* Lines and checkpatch's long lines of a changelog. */
struct log_stats {
    size_t lines, long_lines;
    bool in_dump;
};

static void
log_line(struct log_stats *lg, const char *line, size_t len, bool is_blank)
{
    if (is_blank) {
        lg->in_dump = false; /* a dump runs to the end of its paragraph */
        return;
    }
    lg->lines++;
    lg->in_dump |= starts_stack_dump(line, len);
    /* A line has no more columns than bytes. */
    if (!lg->in_dump && len > 75 && utf8_columns(line, len) > 75 && !long_line_exempt(line, len))
        lg->long_lines++;
}

/* The changelog measures when it is not the prose; returns its words. */
static size_t
changelog_measure(struct log_stats *lg, const struct region *r)
{
    struct text t = region_text(r);
    const char *line;
    size_t len, words = 0;

    while (next_line(&t, &line, &len)) {
        words += count_words(line, len);
        log_line(lg, line, len, blank(line, len));
    }
    return words;
}

/* The prose measures of r, Markdown included; with lg, r is the
 * changelog and its measures are taken in the same pass. */
static void
prose_measure(struct prose_stats *st, const struct region *r, struct log_stats *lg)
{
    struct text t = region_text(r);
    struct md_stats md = {0};
    const char *line;
    size_t len, n = 0;

    while (next_line(&t, &line, &len)) {
        struct prose_line l = prose_line(line, len);

        n++;
        st->words += count_words_in(line, len, st);
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

static void
markdown_measure(struct prose_stats *st, const struct region *r)
{
    struct text t = region_text(r);
    struct md_stats md = {0};
    const char *line;
    size_t len;

    while (next_line(&t, &line, &len)) {
        struct prose_line l = prose_line(line, len);

        if (l.tl > 0)
            markdown_line(&md, &l);
    }
    markdown_done(st, &md);
}

static const struct region *
prose_region(const struct message *m)
{
    const struct region *rep = &m->regions[REGION_REPORT];

    if (m->kind == CLASSIFIER_KIND_PATCH)
        return &m->regions[REGION_CHANGELOG];
    if (rep->text != NULL && !blank(rep->text, rep->len))
        return rep;
    return &m->regions[REGION_BODY];
}

/* ---- diff ---- */

static const char *const stop_words[] = {
    "the",  "a",     "an",   "to",    "of",   "if",   "is",   "this", "we",  "and", "for",
    "it",   "in",    "on",   "be",    "that", "with", "as",   "by",   "at",  "or",  "are",
    "from", "so",    "then", "now",   "here", "its",  "into", "will", "our", "has", "have",
    "was",  "there", "when", "which", "can",  "do",   "does", "not",  "all", "any", "up",
};

static bool
is_stop_word(const char *w, size_t n)
{
    for (size_t k = 0; k < sizeof(stop_words) / sizeof(stop_words[0]); k++)
        if (stop_words[k][0] == w[0] && strlen(stop_words[k]) == n &&
            memcmp(stop_words[k], w, n) == 0)
            return true;
    return false;
}

#define MAX_TOKENS 48
#define TOKEN_LEN 32

struct tokens {
    char w[MAX_TOKENS][TOKEN_LEN];
    size_t n;
};

static void
tokens_add(struct tokens *tk, const char *p, size_t len)
{
    if (len == 0 || tk->n >= MAX_TOKENS)
        return;
    if (len >= TOKEN_LEN)
        len = TOKEN_LEN - 1;
    for (size_t i = 0; i < len; i++)
        tk->w[tk->n][i] = (char)tolower((unsigned char)p[i]);
    tk->w[tk->n][len] = '\0';
    if (is_stop_word(tk->w[tk->n], len))
        return;
    tk->n++;
}

/* Identifier parts: snake_case and camelCase split, lower-cased. */
static void
tokenize(struct tokens *tk, const char *p, size_t len)
{
    size_t i = 0;

    while (i < len) {
        size_t start;

        while (i < len && !isalnum((unsigned char)p[i]))
            i++;
        start = i;
        while (i < len && isalnum((unsigned char)p[i])) {
            if (i > start && isupper((unsigned char)p[i]) && islower((unsigned char)p[i - 1])) {
                tokens_add(tk, p + start, i - start);
                start = i;
            }
            i++;
        }
        tokens_add(tk, p + start, i - start);
    }
}

/* What operators say in words, so "increment the counter" matches
 * "counter++". */
static void
tokenize_code(struct tokens *tk, const char *p, size_t len)
{
    char code[512];
    size_t n = 0;
    bool in_str = false;

    /* string contents (a log message) are not what the code does */
    for (size_t i = 0; i < len && n < sizeof(code); i++) {
        if (p[i] == '"' && (i == 0 || p[i - 1] != '\\'))
            in_str = !in_str;
        else if (!in_str)
            code[n++] = p[i];
    }
    tokenize(tk, code, n);
    if (memmem(p, len, "++", 2) != NULL)
        tokens_add(tk, "increment", 9);
    if (memmem(p, len, "--", 2) != NULL)
        tokens_add(tk, "decrement", 9);
    if (memmem(p, len, "if (", 4) != NULL || memmem(p, len, "if(", 3) != NULL)
        tokens_add(tk, "check", 5);
    if (memmem(p, len, "NULL", 4) != NULL || memmem(p, len, "(!", 2) != NULL)
        tokens_add(tk, "null", 4);
    for (size_t i = 0; i < len; i++) {
        if (p[i] == '=' && (i == 0 || strchr("=!<>+-*/&|^%", p[i - 1]) == NULL) &&
            (i + 1 == len || p[i + 1] != '=')) {
            tokens_add(tk, "set", 3);
            tokens_add(tk, "assign", 6);
            break;
        }
    }
}

static bool
suffix_of(const char *s, size_t sl, const char *suf, size_t fl)
{
    return sl >= fl && memcmp(s + sl - fl, suf, fl) == 0;
}

/* "buf" matches "buffer", "free" matches "kfree", "locks" matches "lock". */
static bool
word_matches(const char *cw, const char *code)
{
    size_t cl = strlen(cw), kl = strlen(code);

    if (cl == kl && memcmp(cw, code, cl) == 0)
        return true;
    if (kl >= 3 && kl < cl && memcmp(cw, code, kl) == 0)
        return true;
    if (cl >= 4 && cl < kl && memcmp(cw, code, cl) == 0)
        return true;
    if (cl >= 4 && suffix_of(code, kl, cw, cl))
        return true;
    return cl > 3 && cw[cl - 1] == 's' && cl - 1 == kl && memcmp(cw, code, kl) == 0;
}

static bool
comment_restates(const char *comment, size_t clen, const char *code, size_t klen)
{
    struct tokens cw = {0}, kw = {0};
    size_t hit = 0;

    tokenize(&cw, comment, clen);
    tokenize_code(&kw, code, klen);
    if (cw.n < 2)
        return false;
    for (size_t i = 0; i < cw.n; i++) {
        for (size_t j = 0; j < kw.n; j++) {
            if (word_matches(cw.w[i], kw.w[j])) {
                hit++;
                break;
            }
        }
    }
    return hit * 10 >= cw.n * 6;
}

/* A whole-line C comment: a "//" line, or a block comment opened and
 * closed on the same line. */
static bool
single_line_comment(const char *p, size_t len, const char **ret_t, size_t *ret_tl)
{
    const char *t = p;
    size_t tl = len;

    ascii_trim(&t, &tl);
    if (tl >= 2 && t[0] == '/' && t[1] == '/') {
        *ret_t = t + 2;
        *ret_tl = tl - 2;
        return true;
    }
    if (tl >= 4 && t[0] == '/' && t[1] == '*' && t[tl - 2] == '*' && t[tl - 1] == '/' &&
        memmem(t + 2, tl - 4, "*/", 2) == NULL) {
        *ret_t = t + 2;
        *ret_tl = tl - 4;
        return true;
    }
    return false;
}

static bool
is_code_line(const char *p, size_t len)
{
    const char *t = p;
    size_t tl = len;

    ascii_trim(&t, &tl);
    if (tl == 0 || t[0] == '*' || starts(t, tl, "/*") || starts(t, tl, "//"))
        return false;
    /* a lone brace says nothing a comment could repeat */
    return !(tl == 1 && (t[0] == '{' || t[0] == '}'));
}

/*
 * Declarations and definitions ("spinlock_t tx_lock;", "struct foo {",
 * "#define X", "static int f(...)") are what kernel comments label; only
 * statements are compared with the comment above them.
 */
static bool
is_statement(const char *p, size_t len)
{
    static const char *const decl[] = {"#",        "struct ", "static ", "enum ",     "union ",
                                       "typedef ", "extern ", "const ",  "unsigned ", "void ",
                                       "int ",     "u8 ",     "u16 ",    "u32 ",      "u64 ",
                                       "bool ",    "char ",   "long "};
    const char *t = p;
    size_t tl = len;

    ascii_trim(&t, &tl);
    for (size_t k = 0; k < sizeof(decl) / sizeof(decl[0]); k++)
        if (starts(t, tl, decl[k]))
            return false;
    /* "type name;" or "type name[N];" */
    if (tl > 0 && t[tl - 1] == ';' && memchr(t, '(', tl) == NULL && memchr(t, '=', tl) == NULL &&
        memchr(t, ' ', tl) != NULL && !starts(t, tl, "return") && !starts(t, tl, "goto") &&
        !starts(t, tl, "break") && !starts(t, tl, "continue"))
        return false;
    return true;
}

struct diff_stats {
    size_t comment, code, restating, heavy;
};

/*
 * A run of added C lines: a comment block, then the statements it sits
 * on. A block of three or more comment lines over one or two statements
 * that end the run is prose explaining a small change in place, where
 * kernel style wants the reason in the changelog. Declarations, kernel-doc
 * over a definition and lone braces do not count as statements.
 */
struct comment_run {
    size_t comment; /* comment lines of the block */
    size_t stmts;   /* statements after it */
    bool open;      /* code is being counted after a block */
};

static void
comment_run_end(struct comment_run *cr, struct diff_stats *st)
{
    if (cr->open && cr->comment >= 3 && cr->stmts >= 1 && cr->stmts <= 2)
        st->heavy++;
    *cr = (struct comment_run){0};
}

static void
comment_run_line(struct comment_run *cr, struct diff_stats *st, bool is_comment, const char *p,
                 size_t len)
{
    if (is_comment) {
        if (cr->open)
            comment_run_end(cr, st);
        cr->comment++;
        return;
    }
    if (blank(p, len)) {
        comment_run_end(cr, st);
        return;
    }
    if (!is_code_line(p, len))
        return;
    if (!cr->open) {
        if (cr->comment == 0 || !is_statement(p, len)) {
            *cr = (struct comment_run){0};
            return;
        }
        cr->open = true;
    }
    cr->stmts++;
}

static void
diff_measure(struct diff_stats *st, const struct message *m)
{
    const struct region *add = &m->regions[REGION_ADDED];
    const struct region *com = &m->regions[REGION_COMMENTS];
    size_t ci = 0;

    st->comment = com->lines != NULL ? com->n_lines : 0;
    if (add->lines == NULL || add->text == NULL)
        return;
    for (size_t h = 0; h < m->n_hunks; h++) {
        const struct patch_hunk *hk = &m->hunks[h];
        enum file_lang lang = hk->file < m->n_files ? m->files[hk->file].lang : FILE_LANG_OTHER;
        size_t end = hk->added_first + hk->added_count;

        struct comment_run cr = {0};

        if (end > add->n_lines)
            end = add->n_lines;
        for (size_t i = hk->added_first; i < end; i++) {
            const struct region_line *al = &add->lines[i];
            const char *p, *ct, *np;
            size_t len, ctl, nlen;
            bool is_comment;

            region_line_text(add, i, &p, &len);
            /* comment lines come in the same order as the added lines */
            is_comment = com->lines != NULL && ci < com->n_lines &&
                         com->lines[ci].file == al->file && com->lines[ci].line == al->line;
            if (lang == FILE_LANG_C) {
                /* context between two added lines ends a run */
                if (i > hk->added_first && add->lines[i - 1].line + 1 != al->line)
                    comment_run_end(&cr, st);
                comment_run_line(&cr, st, is_comment, p, len);
            }
            if (is_comment) {
                ci++;
                if (lang == FILE_LANG_C && i + 1 < end && add->lines[i + 1].line == al->line + 1 &&
                    single_line_comment(p, len, &ct, &ctl)) {
                    region_line_text(add, i + 1, &np, &nlen);
                    if (is_code_line(np, nlen) && is_statement(np, nlen) &&
                        comment_restates(ct, ctl, np, nlen))
                        st->restating++;
                }
                continue;
            }
            if (lang == FILE_LANG_RST || blank(p, len))
                continue;
            st->code++;
        }
        comment_run_end(&cr, st);
    }
}

/* Lines with something other than white space. The white space between
 * them, blank lines and their '\n' included, is skipped byte by byte;
 * a line is counted at its first other byte and left by memchr(), so a
 * blank line costs no call and a full one no test past its start. */
static size_t
count_nonblank(const struct region *r)
{
    struct text t = region_text(r);
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

/* The code region's lines that are not blank, and of them those of a
 * trace, in one pass: a trace-heavy report's code region is most of it. */
static void
count_code(const struct region *r, size_t *nonblank, size_t *trace)
{
    struct text t = region_text(r);
    const char *line;
    size_t len;

    *nonblank = 0;
    *trace = 0;
    while (next_line(&t, &line, &len)) {
        if (blank(line, len))
            continue;
        (*nonblank)++;
        *trace += is_trace_line(line, len);
    }
}

void
measure_compute(struct message *m)
{
    double *ms = m->measures;
    struct prose_stats ps = {0};
    struct diff_stats ds = {0};
    struct log_stats lg = {0};
    size_t added = 0, removed = 0, quoted, own, code, trace, log_words;
    const struct region *prose = prose_region(m);
    bool prose_is_log = prose == &m->regions[REGION_CHANGELOG];

    /* The measures after MEASURE_PATCH_VERSION come from look-ups made
     * elsewhere (facts.c) and are left alone. */
    memset(m->measures, 0, (MEASURE_PATCH_VERSION + 1) * sizeof(m->measures[0]));

    /* A patch's prose is its changelog: one pass takes both. */
    if (prose_is_log) {
        prose_measure(&ps, prose, &lg);
        log_words = ps.words;
    } else {
        log_words = changelog_measure(&lg, &m->regions[REGION_CHANGELOG]);
        prose_measure(&ps, prose, NULL);
    }
    ms[MEASURE_CHANGELOG_WORDS] = (double)log_words;
    ms[MEASURE_CHANGELOG_LINES] = (double)lg.lines;
    ms[MEASURE_CHANGELOG_LONG_LINES] = (double)lg.long_lines;
    for (size_t i = 0; i < m->n_files; i++) {
        added += m->files[i].added;
        removed += m->files[i].removed;
    }
    ms[MEASURE_ADDED_LINES] = (double)added;
    ms[MEASURE_REMOVED_LINES] = (double)removed;
    ms[MEASURE_CHANGED_LINES] = (double)(added + removed);
    ms[MEASURE_FILES] = (double)m->n_files;
    ms[MEASURE_HUNKS] = (double)m->n_hunks;
    ms[MEASURE_WORDS_PER_CHANGED_LINE] =
        ms[MEASURE_CHANGELOG_WORDS] / (double)(added + removed > 0 ? added + removed : 1);

    diff_measure(&ds, m);
    ms[MEASURE_ADDED_COMMENT_LINES] = (double)ds.comment;
    ms[MEASURE_ADDED_CODE_LINES] = (double)ds.code;
    if (ds.comment + ds.code > 0)
        ms[MEASURE_COMMENT_RATIO] = (double)ds.comment / (double)(ds.comment + ds.code);
    ms[MEASURE_RESTATING_COMMENTS] = (double)ds.restating;
    ms[MEASURE_COMMENT_HEAVY_BLOCKS] = (double)ds.heavy;

    if (m->kind == CLASSIFIER_KIND_PATCH)
        markdown_measure(&ps, &m->regions[REGION_NOTES]);
    ms[MEASURE_MARKDOWN_LINES] = (double)ps.markdown;
    if (ps.md_lines > 0)
        ms[MEASURE_MARKDOWN_DENSITY] = (double)ps.markdown / (double)ps.md_lines;
    ms[MEASURE_PROSE_WORDS] = (double)ps.words;
    ms[MEASURE_PROSE_LINES] = (double)ps.lines;
    ms[MEASURE_SECTIONS] = (double)ps.sections;
    ms[MEASURE_FACTS_LINE] = (double)ps.facts_line;
    ms[MEASURE_EM_DASHES] = (double)ps.em_dashes;
    ms[MEASURE_CURLY_QUOTES] = (double)ps.curly;
    ms[MEASURE_EMOJI] = (double)ps.emoji;

    quoted = count_nonblank(&m->regions[REGION_QUOTED]);
    own = count_nonblank(&m->regions[REGION_BODY]);
    ms[MEASURE_QUOTED_LINES] = (double)quoted;
    if (quoted + own > 0)
        ms[MEASURE_QUOTED_RATIO] = (double)quoted / (double)(quoted + own);
    count_code(&m->regions[REGION_CODE], &code, &trace);
    ms[MEASURE_TRACE_LINES] = (double)trace;
    ms[MEASURE_CODE_LINES] = (double)code;

    ms[MEASURE_VERSIONS] = (double)m->versions.n;
    ms[MEASURE_IDENTIFIERS] = (double)(m->functions.n + m->paths.n + m->configs.n);
    ms[MEASURE_RECIPIENTS] = (double)m->recipients.n;
    ms[MEASURE_ATTACHMENTS] = (double)m->attachments;
    ms[MEASURE_HTML_ONLY] = m->html_only ? 1.0 : 0.0;
    ms[MEASURE_REPORT_ADDRESS] = m->report_address ? 1.0 : 0.0;
    ms[MEASURE_SERIES_INDEX] = (double)m->psubj.index;
    ms[MEASURE_SERIES_TOTAL] = (double)m->psubj.total;
    if (m->psubj.tagged)
        ms[MEASURE_PATCH_VERSION] = m->psubj.version > 0 ? (double)m->psubj.version : 1.0;
    ms[MEASURE_LIMIT_HIT] = m->truncated ? 1.0 : 0.0;
    series_measure(m);
    /* Out of memory leaves a count without its evidence: the rule's hit
     * then shows "binding_schema_errors=N", which still names it. */
    (void)dt_binding_measure(m);
}
