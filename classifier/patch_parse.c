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

/* ---- region builders ---- */

static void
rbuf_adopt(struct rbuf *rb, struct region *r, bool map)
{
    rb->text = r->text;
    rb->len = r->text ? r->len : 0;
    rb->cap = rb->len;
    rb->lines = r->lines;
    rb->n = r->n_lines;
    rb->lcap = r->n_lines;
    rb->map = map;
    r->text = NULL;
    r->lines = NULL;
    r->len = r->n_lines = 0;
}

int
patch_parse_rbuf_add(struct rbuf *rb, const char *p, size_t len, const char *file, uint32_t line)
{
    if (rb->len + len + 2 > rb->cap) {
        size_t cap = rb->cap ? rb->cap : rb->first_cap ? rb->first_cap : 256;
        char *t;

        while (cap < rb->len + len + 2)
            cap *= 2;
        t = realloc(rb->text, cap);
        if (t == NULL)
            return -ENOMEM;
        rb->text = t;
        rb->cap = cap;
    }
    if (rb->map) {
        if (rb->n == rb->lcap) {
            size_t lcap = rb->lcap ? rb->lcap * 2 : rb->first_lcap ? rb->first_lcap : 64;
            struct region_line *l = realloc(rb->lines, lcap * sizeof(*l));

            if (l == NULL)
                return -ENOMEM;
            rb->lines = l;
            rb->lcap = lcap;
        }
        rb->lines[rb->n].offset = rb->len;
        rb->lines[rb->n].file = file;
        rb->lines[rb->n].line = line;
    }
    rb->n++;
    /* A NUL inside a region would end it early for every regex. Copy
     * first and mend the (rare) NULs after: memchr() beats a byte loop. */
    if (len > 0) {
        char *d = rb->text + rb->len, *z = d;

        memcpy(d, p, len);
        while (!rb->no_nul && (z = memchr(z, '\0', len - (size_t)(z - d))) != NULL)
            *z++ = ' ';
        rb->len += len;
    }
    rb->text[rb->len++] = '\n';
    rb->text[rb->len] = '\0';
    return 0;
}

static int
rbuf_finish(struct rbuf *rb, struct region *r)
{
    if (rb->text == NULL) {
        rb->text = strdup("");
        if (rb->text == NULL)
            return -ENOMEM;
    }
    r->text = rb->text;
    r->len = rb->len;
    r->lines = rb->map ? rb->lines : NULL;
    r->n_lines = rb->map ? rb->n : 0;
    if (!rb->map)
        free(rb->lines);
    memset(rb, 0, sizeof(*rb));
    return 0;
}

static void
rbuf_release(struct rbuf *rb)
{
    free(rb->text);
    free(rb->lines);
    memset(rb, 0, sizeof(*rb));
}

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
        ps->lines[i] = (struct span){p, l, (uint32_t)(i + 1)};
    }
    ps->n = n;
    /* Noted after the lines: the first limit noted is the evidence. */
    if (ix->n > n)
        message_note_limit(ps->m, "max_lines", lim->max_lines);
    return 0;
}

/* ---- line classification ---- */

static bool
is_separator(const struct span *s)
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
is_scissors(const struct span *s)
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
    const struct span *s = &ps->lines[i];

    if (span_starts(s, "diff --git "))
        return true;
    return span_starts(s, "--- ") && i + 1 < ps->n && span_starts(&ps->lines[i + 1], "+++ ");
}

static bool
is_pseudo_header(const struct span *s)
{
    return span_starts_ci(s->p, s->len, "From: ") || span_starts_ci(s->p, s->len, "Subject: ") ||
           span_starts_ci(s->p, s->len, "Date: ");
}

int
patch_parse(struct message *m, const char *text, size_t len, const struct classifier_limits *limits)
{
    return patch_parse_lines(m, text, len, NULL, limits);
}

int
patch_parse_lines(struct message *m, const char *text, size_t len, const struct text_lines *lines,
                  const struct classifier_limits *limits)
{
    struct parser ps = {.m = m, .limits = limits};
    struct text_lines own = {0};
    bool cut;
    size_t diff, body, sep, log_end, i, first_file = m->n_files;
    int r;

    for (size_t k = 0; k < sizeof(patch_regions) / sizeof(patch_regions[0]); k++) {
        enum region_id id = patch_regions[k];
        bool map = id == REGION_ADDED || id == REGION_REMOVED || id == REGION_CONTEXT ||
                   id == REGION_COMMENTS;

        rbuf_adopt(&ps.rb[id], &m->regions[id], map);
    }
    if (text == NULL)
        len = 0;
    /* Everything added to a region comes from text: one memchr() over it
     * saves one per added line. */
    if (len == 0 || memchr(text, '\0', len) == NULL) {
        for (size_t k = 0; k < sizeof(patch_regions) / sizeof(patch_regions[0]); k++)
            ps.rb[patch_regions[k]].no_nul = true;
    }
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
    for (size_t k = 0; k < sizeof(patch_regions) / sizeof(patch_regions[0]); k++) {
        struct rbuf *rb = &ps.rb[patch_regions[k]];

        rb->first_cap = len + 2 < RBUF_FIRST_CAP_MAX ? len + 2 : RBUF_FIRST_CAP_MAX;
        rb->first_lcap = ps.n > 0 && ps.n < RBUF_FIRST_LCAP_MAX ? ps.n : RBUF_FIRST_LCAP_MAX;
    }

    for (diff = 0; diff < ps.n && !is_diff_start(&ps, diff); diff++)
        ;
    body = 0;
    for (i = 0; i < diff; i++)
        if (is_scissors(&ps.lines[i]))
            body = i + 1;

    /* pseudo-headers of a different author, then the log */
    while (body < diff && span_blank(&ps.lines[body]))
        body++;
    if (body < diff && is_pseudo_header(&ps.lines[body])) {
        while (body < diff && (is_pseudo_header(&ps.lines[body]) ||
                               (ps.lines[body].len > 0 &&
                                (ps.lines[body].p[0] == ' ' || ps.lines[body].p[0] == '\t'))))
            body++;
    }

    for (sep = body; sep < diff && !is_separator(&ps.lines[sep]); sep++)
        ;
    for (log_end = body; log_end < sep; log_end++) {
        const struct span *s = &ps.lines[log_end];

        if (s->len == 3 && memcmp(s->p, "-- ", 3) == 0)
            break; /* mail signature of a mail without "---" */
    }
    r = patch_log_parse(&ps, body, log_end);
    if (r < 0)
        goto out;

    if (sep < diff) {
        size_t notes_end;

        m->has_separator = true;
        for (notes_end = sep + 1; notes_end < diff; notes_end++) {
            const struct span *s = &ps.lines[notes_end];

            if (s->len == 3 && memcmp(s->p, "-- ", 3) == 0)
                break;
        }
        r = patch_log_notes(&ps, sep + 1, notes_end);
        if (r < 0)
            goto out;
    }

    r = patch_diff_parse(&ps, diff);
    if (r < 0)
        goto out;
    r = patch_diff_files(&ps, first_file);
    if (r < 0)
        goto out;

    for (size_t k = 0; k < sizeof(patch_regions) / sizeof(patch_regions[0]); k++) {
        r = rbuf_finish(&ps.rb[patch_regions[k]], &m->regions[patch_regions[k]]);
        if (r < 0)
            goto out;
    }
out:
    for (size_t k = 0; k < REGION__COUNT; k++)
        rbuf_release(&ps.rb[k]);
    free(ps.lines);
    free(own.v);
    return r;
}
