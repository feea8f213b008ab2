/*
 * patch_parse.c - parse a git format-patch mail body and its subject tag.
 *
 * patch_parse() splits an already decoded body into pseudo-headers,
 * changelog, trailers, notes (below "---"), diffstat and diff, and fills
 * the patch regions (changelog, trailers, notes, added, removed, context,
 * comments, files) and the file, hunk and trailer arrays of the message.
 * A second call on the same message appends (a log in the body plus an
 * attached patch).
 *
 * Invariants: text is never read past len; at most max_lines lines are
 * looked at and each is cut at max_line_bytes; files and hunks stop at
 * max_files and max_hunks, and any cut sets m->truncated. Line maps of the
 * diff regions borrow the path strings of m->files[i], which stay put
 * while the files array grows because each path is its own allocation.
 *
 * Ownership: everything allocated here belongs to the message and is freed
 * by message_free(): psubj.prefix/subsystem/summary, trailers[] with each
 * tag and value, files[] with each old_path and new_path, hunks[], and the
 * text and lines of the regions listed above.
 *
 * Threading: no shared state; each call works on its own message.
 */
#include "patch_parser.h"

static const enum region_id patch_regions[] = {
    REGION_CHANGELOG, REGION_TRAILERS, REGION_NOTES,    REGION_ADDED,
    REGION_REMOVED,   REGION_CONTEXT,  REGION_COMMENTS, REGION_FILES,
};

/* A region of one patch text holds at most about that text, so a first
 * allocation that size (up to these bounds) spares most regions from
 * growing line by line. */
#define RBUF_FIRST_CAP_MAX 8192
#define RBUF_FIRST_LCAP_MAX 512

/* ---- splitting into lines ---- */

/* The patch text's lines from its index, each without a '\r' before its
 * '\n' and cut to max_line_bytes; at most max_lines of them. */
static int
split_lines(struct parser *ps, const char *text, const struct text_lines *ix)
{
    const struct classifier_limits *lim = ps->limits;
    size_t n = ix->n < lim->max_lines ? ix->n : lim->max_lines;

    ps->lines = malloc((n ? n : 1) * sizeof(*ps->lines));
    if (ps->lines == NULL)
        return -ENOMEM;
    for (size_t i = 0; i < n; i++) {
        const char *p = text + ix->v[i].off;
        size_t l = ix->v[i].len;

        if (l > 0 && p[l - 1] == '\r')
            l--;
        if (l > lim->max_line_bytes) {
            l = lim->max_line_bytes;
            /* Do not leave half a UTF-8 sequence at the cut. */
            while (l > 0 && ((unsigned char)p[l] & 0xC0) == 0x80)
                l--;
            message_note_limit(ps->m, "max_line_bytes", lim->max_line_bytes);
        }
        ps->lines[i] = (struct patch_line){p, l, (uint32_t)(i + 1)};
    }
    ps->n = n;
    /* Noted after the lines: the first limit noted is the evidence. */
    if (ix->n > n)
        message_note_limit(ps->m, "max_lines", lim->max_lines);
    return 0;
}

/* ---- line classification ---- */

static bool
is_separator(const struct patch_line *s)
{
    const char *p = s->p;
    size_t len = s->len;

    if (len < 3 || memcmp(p, "---", 3) != 0)
        return false;
    for (size_t i = 3; i < len; i++)
        if (p[i] != ' ' && p[i] != '\t')
            return false;
    return true;
}

/* "-- >8 --", "--- 8< ---", "-->8--": git mailinfo's scissors. */
static bool
is_scissors(const struct patch_line *s)
{
    size_t i = 0, dashes = 0;
    const char *p = s->p;

    while (i < s->len && (p[i] == '-' || p[i] == ' ')) {
        dashes += p[i] == '-';
        i++;
    }
    if (dashes < 2 || i + 2 > s->len)
        return false;
    if (!((p[i] == '>' && p[i + 1] == '8') || (p[i] == '8' && p[i + 1] == '<')))
        return false;
    i += 2;
    dashes = 0;
    while (i < s->len && (p[i] == '-' || p[i] == ' ')) {
        dashes += p[i] == '-';
        i++;
    }
    return dashes >= 2;
}

static bool
is_diff_start(const struct parser *ps, size_t i)
{
    const struct patch_line *s = &ps->lines[i];

    if (span_starts(s, "diff --git "))
        return true;
    return span_starts(s, "--- ") && i + 1 < ps->n && span_starts(&ps->lines[i + 1], "+++ ");
}

static bool
is_pseudo_header(const struct patch_line *s)
{
    return span_starts_ci(s->p, s->len, "From: ") || span_starts_ci(s->p, s->len, "Subject: ") ||
           span_starts_ci(s->p, s->len, "Date: ");
}

int
patch_parse(struct message *m, const char *text, size_t len, const struct classifier_limits *limits)
{
    return patch_parse_lines(m, text, len, NULL, limits);
}

/* The patch regions taken over from m (a second text appends), each
 * sized for a text of len bytes and ps->n lines once they are known. */
static void
adopt_regions(struct parser *ps, const char *text, size_t len)
{
    struct message *m = ps->m;

    for (size_t k = 0; k < sizeof(patch_regions) / sizeof(patch_regions[0]); k++) {
        enum region_id id = patch_regions[k];
        bool map = id == REGION_ADDED || id == REGION_REMOVED || id == REGION_CONTEXT ||
                   id == REGION_COMMENTS;

        patch_rbuf_adopt(&ps->rb[id], &m->regions[id], map);
    }
    /* Everything added to a region comes from text: one memchr() over it
     * saves one per added line. */
    if (len == 0 || memchr(text, '\0', len) == NULL) {
        for (size_t k = 0; k < sizeof(patch_regions) / sizeof(patch_regions[0]); k++)
            ps->rb[patch_regions[k]].no_nul = true;
    }
}

static void
size_regions(struct parser *ps, size_t len)
{
    for (size_t k = 0; k < sizeof(patch_regions) / sizeof(patch_regions[0]); k++) {
        struct rbuf *rb = &ps->rb[patch_regions[k]];

        rb->first_cap = len + 2 < RBUF_FIRST_CAP_MAX ? len + 2 : RBUF_FIRST_CAP_MAX;
        rb->first_lcap = ps->n > 0 && ps->n < RBUF_FIRST_LCAP_MAX ? ps->n : RBUF_FIRST_LCAP_MAX;
    }
}

/* Where the log starts, before the diff at line diff: after the last
 * scissors line, blank lines, and the pseudo-headers of a different
 * author with their continuation lines. */
static size_t
log_start(const struct parser *ps, size_t diff)
{
    size_t body = 0;

    for (size_t i = 0; i < diff; i++)
        if (is_scissors(&ps->lines[i]))
            body = i + 1;
    while (body < diff && span_blank(&ps->lines[body]))
        body++;
    if (body < diff && is_pseudo_header(&ps->lines[body])) {
        while (body < diff && (is_pseudo_header(&ps->lines[body]) ||
                               (ps->lines[body].len > 0 &&
                                (ps->lines[body].p[0] == ' ' || ps->lines[body].p[0] == '\t'))))
            body++;
    }
    return body;
}

/* The first line from i to end that is a mail signature's "-- ", or end. */
static size_t
signature_at(const struct parser *ps, size_t i, size_t end)
{
    for (; i < end; i++) {
        const struct patch_line *s = &ps->lines[i];

        if (s->len == 3 && memcmp(s->p, "-- ", 3) == 0)
            break;
    }
    return i;
}

/* The log (up to "---" or a signature), the notes below "---", then the
 * diff and its files. */
static int
parse_parts(struct parser *ps)
{
    size_t diff, body, sep, first_file = ps->m->n_files;
    int r;

    for (diff = 0; diff < ps->n && !is_diff_start(ps, diff); diff++)
        ;
    body = log_start(ps, diff);
    for (sep = body; sep < diff && !is_separator(&ps->lines[sep]); sep++)
        ;
    /* A mail signature ends the log of a mail without "---". */
    r = patch_log_parse(ps, body, signature_at(ps, body, sep));
    if (r < 0)
        return r;
    if (sep < diff) {
        ps->m->has_separator = true;
        r = patch_log_notes(ps, sep + 1, signature_at(ps, sep + 1, diff));
        if (r < 0)
            return r;
    }
    r = patch_diff_parse(ps, diff);
    if (r < 0)
        return r;
    return patch_diff_files(ps, first_file);
}

int
patch_parse_lines(struct message *m, const char *text, size_t len, const struct text_lines *lines,
                  const struct classifier_limits *limits)
{
    struct parser ps = {.m = m, .limits = limits};
    struct text_lines own = {0};
    bool cut;
    int r;

    if (text == NULL)
        len = 0;
    adopt_regions(&ps, text, len);
    if (lines == NULL) {
        /* A line past the cap shows split_lines() that the cap was hit. */
        r = text_lines_split(text, len, (size_t)limits->max_lines + 1, &own, &cut);
        if (r < 0)
            goto out;
        lines = &own;
    }
    r = split_lines(&ps, text, lines);
    if (r < 0)
        goto out;
    size_regions(&ps, len);
    r = parse_parts(&ps);
    for (size_t k = 0; r >= 0 && k < sizeof(patch_regions) / sizeof(patch_regions[0]); k++)
        r = patch_rbuf_finish(&ps.rb[patch_regions[k]], &m->regions[patch_regions[k]]);
out:
    for (size_t k = 0; k < REGION__COUNT; k++)
        patch_rbuf_release(&ps.rb[k]);
    free(ps.lines);
    free(own.v);
    return r;
}
