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
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "ascii.h"
#include "message.h"

struct span {
    const char *p;
    size_t len;
    uint32_t lineno; /* 1-based in the patch text */
};

/* A region under construction. */
struct rbuf {
    char *text;
    size_t len, cap;
    struct region_line *lines;
    size_t n, lcap;
    bool map;
    bool no_nul;       /* the text lines come from holds no NUL to mend */
    size_t first_cap;  /* bytes of the first allocation, 0 for the default */
    size_t first_lcap; /* map entries of the first allocation, likewise */
};

/* A region of one patch text holds at most about that text, so a first
 * allocation that size (up to these bounds) spares most regions from
 * growing line by line. */
#define RBUF_FIRST_CAP_MAX 8192
#define RBUF_FIRST_LCAP_MAX 512

/* What the comment scanner remembers between lines of one hunk. */
struct comment_state {
    bool c_block; /* inside a C block comment */
    bool kc_help; /* inside Kconfig help text */
    unsigned kc_indent;
};

struct diff_state {
    long file; /* index into m->files, -1 before the first */
    bool file_has_hunk;
    bool file_has_minus;
    long hunk; /* index into m->hunks of the open hunk, -1 when none */
    uint32_t old_rem, new_rem, old_ln, new_ln;
    const char *label; /* path string map entries point to */
    struct comment_state cs;
};

struct parser {
    struct message *m;
    const struct classifier_limits *limits;
    struct span *lines;
    size_t n;
    struct rbuf rb[REGION__COUNT];
};

static const enum region_id patch_regions[] = {
    REGION_CHANGELOG, REGION_TRAILERS, REGION_NOTES,    REGION_ADDED,
    REGION_REMOVED,   REGION_CONTEXT,  REGION_COMMENTS, REGION_FILES,
};

/* ---- small string helpers ---- */

static bool
span_starts(const struct span *s, const char *prefix)
{
    size_t n = strlen(prefix);

    return s->len >= n && memcmp(s->p, prefix, n) == 0;
}

static bool
span_starts_ci(const char *p, size_t len, const char *prefix)
{
    size_t n = strlen(prefix);

    return len >= n && strncasecmp(p, prefix, n) == 0;
}

static bool
span_blank(const struct span *s)
{
    for (size_t i = 0; i < s->len; i++)
        if (!isspace((unsigned char)s->p[i]))
            return false;
    return true;
}

static void
trim(const char **p, size_t *len)
{
    while (*len > 0 && isspace((unsigned char)**p)) {
        (*p)++;
        (*len)--;
    }
    while (*len > 0 && isspace((unsigned char)(*p)[*len - 1]))
        (*len)--;
}

static bool
is_word_token(const char *p, size_t len, const char *word)
{
    return strlen(word) == len && strncasecmp(p, word, len) == 0;
}

/* Make index n of *arr (elements of size sz) valid. Capacity is implied
 * by n (8, then powers of two), so a later call can keep appending.
 * Callers pass the address of a void * copy: no type punning. */
static int
grow_array(void **arr, size_t n, size_t sz)
{
    size_t cap;
    void *v;

    if (n == 0)
        cap = 8;
    else if (n >= 8 && (n & (n - 1)) == 0)
        cap = n * 2;
    else
        return 0;
    v = realloc(*arr, cap * sz);
    if (v == NULL)
        return -ENOMEM;
    *arr = v;
    return 0;
}

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

static int
rbuf_add(struct rbuf *rb, const char *p, size_t len, const char *file, uint32_t line)
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

/* " path/to/file.c | 12 ++--" and " 3 files changed, ..." set *ret_stat;
 * the create/delete/rename/mode summary lines git prints below them are
 * diffstat too. */
static bool
is_diffstat(const struct span *s, bool *ret_stat)
{
    static const char *const summary[] = {"create mode ", "delete mode ", "mode change ",
                                          "rename ",      "copy ",        "rewrite "};
    const char *p = s->p, *bar;
    size_t len = s->len, i;

    *ret_stat = false;
    if (len < 2 || p[0] != ' ')
        return false;
    bar = memchr(p, '|', len);
    if (p[1] != ' ' && bar != NULL) {
        i = (size_t)(bar - p) + 1;
        while (i < len && p[i] == ' ')
            i++;
        if (span_starts_ci(p + i, len - i, "Bin ")) {
            *ret_stat = true;
            return true;
        }
        if (i < len && isdigit((unsigned char)p[i])) {
            while (i < len && isdigit((unsigned char)p[i]))
                i++;
            if (i == len || p[i] == ' ') {
                *ret_stat = true;
                return true;
            }
        }
    }
    i = 1;
    if (isdigit((unsigned char)p[i])) {
        while (i < len && isdigit((unsigned char)p[i]))
            i++;
        if (span_starts_ci(p + i, len - i, " file changed") ||
            span_starts_ci(p + i, len - i, " files changed")) {
            *ret_stat = true;
            return true;
        }
        return false;
    }
    for (size_t k = 0; k < sizeof(summary) / sizeof(summary[0]); k++)
        if (span_starts(s, " ") && span_starts_ci(p + 1, len - 1, summary[k]))
            return k < 3 || p[len - 1] == ')';
    return false;
}

static bool
is_pseudo_header(const struct span *s)
{
    return span_starts_ci(s->p, s->len, "From: ") || span_starts_ci(s->p, s->len, "Subject: ") ||
           span_starts_ci(s->p, s->len, "Date: ");
}

/* "Tag: value" where Tag is "Word-...-Word" or one of the bare tags used
 * in kernel logs. Sets *ret_taglen to the length of Tag. */
static bool
is_trailer(const struct span *s, size_t *ret_taglen)
{
    static const char *const bare[] = {"Fixes",   "Link",      "Closes",   "Cc",       "Bug",
                                       "BugLink", "Change-Id", "Reported", "Suggested"};
    const char *p = s->p;
    size_t i = 0;
    bool hyphen = false;

    if (s->len == 0 || !isalpha((unsigned char)p[0]))
        return false;
    while (i < s->len && (isalnum((unsigned char)p[i]) || p[i] == '-')) {
        hyphen |= p[i] == '-';
        i++;
    }
    if (i >= s->len || p[i] != ':' || i + 1 >= s->len || p[i + 1] != ' ')
        return false;
    *ret_taglen = i;
    if (hyphen && p[i - 1] != '-')
        return true;
    for (size_t k = 0; k < sizeof(bare) / sizeof(bare[0]); k++)
        if (is_word_token(p, i, bare[k]))
            return true;
    return false;
}

static bool
is_bare_anywhere_tag(const struct span *s)
{
    return span_starts(s, "Fixes: ") || span_starts(s, "Link: ") || span_starts(s, "Closes: ") ||
           span_starts(s, "Cc: ");
}

/* "[maintainer: fixed the typo]" lines and indented continuations live
 * inside trailer blocks without being trailers themselves. */
static bool
is_trailer_filler(const struct span *s)
{
    return s->len > 0 && (s->p[0] == '[' || s->p[0] == ' ' || s->p[0] == '\t');
}

/* ---- subject ---- */

static bool
token_is_patch(const char *p, size_t len)
{
    if (span_starts_ci(p, len, "PATCH")) {
        if (len == 5)
            return true;
        /* "PATCHv2", "PATCH-v2" */
        return p[5] == 'v' || p[5] == 'V' || p[5] == '-';
    }
    if (span_starts_ci(p, len, "RFC"))
        return len == 3 || p[3] == 'v' || p[3] == 'V' || p[3] == '-';
    return false;
}

static bool
parse_uint(const char *p, size_t len, unsigned *ret)
{
    unsigned long v = 0;

    if (len == 0 || len > 6)
        return false;
    for (size_t i = 0; i < len; i++) {
        if (!isdigit((unsigned char)p[i]))
            return false;
        v = v * 10 + (unsigned)(p[i] - '0');
    }
    *ret = (unsigned)v;
    return true;
}

static void
subject_token(struct patch_subject *ps, const char *p, size_t len)
{
    const char *slash, *v;
    unsigned a, b;

    if (span_starts_ci(p, len, "RFC"))
        ps->rfc = true;
    if (is_word_token(p, len, "RESEND"))
        ps->resend = true;
    /* vN, alone or glued to PATCH/RFC ("PATCHv2", "RFC-v3") */
    v = NULL;
    if (len >= 2 && (p[0] == 'v' || p[0] == 'V'))
        v = p;
    else if (token_is_patch(p, len)) {
        for (size_t i = 0; i < len; i++)
            if ((p[i] == 'v' || p[i] == 'V') && i + 1 < len && isdigit((unsigned char)p[i + 1]))
                v = p + i;
    }
    if (v != NULL && parse_uint(v + 1, len - (size_t)(v + 1 - p), &a) && a > 0) {
        ps->version = a;
        return;
    }
    slash = memchr(p, '/', len);
    if (slash != NULL && parse_uint(p, (size_t)(slash - p), &a) &&
        parse_uint(slash + 1, len - (size_t)(slash + 1 - p), &b)) {
        ps->index = a;
        ps->total = b;
    }
}

static void
subject_tag(struct patch_subject *ps, const char *p, size_t len)
{
    size_t i = 0;

    while (i < len) {
        size_t start;

        while (i < len && (isspace((unsigned char)p[i]) || p[i] == ','))
            i++;
        start = i;
        while (i < len && !isspace((unsigned char)p[i]) && p[i] != ',')
            i++;
        if (i > start)
            subject_token(ps, p + start, i - start);
    }
}

static bool
bracket_is_tagged(const char *p, size_t len)
{
    size_t i = 0;

    while (i < len) {
        size_t start;

        while (i < len && (isspace((unsigned char)p[i]) || p[i] == ','))
            i++;
        start = i;
        while (i < len && !isspace((unsigned char)p[i]) && p[i] != ',')
            i++;
        if (i > start && token_is_patch(p + start, i - start))
            return true;
    }
    return false;
}

/* Skip "Re:", "RE:", "Fwd:", "Fw:", "AW:" and brackets, collecting tags. */
static const char *
subject_skip_prefixes(struct patch_subject *ps, const char *s, const char **ret_tag,
                      size_t *ret_taglen)
{
    static const char *const replies[] = {"Re:", "Fwd:", "Fw:", "AW:", "Sv:"};

    for (;;) {
        bool again = false;

        while (isspace((unsigned char)*s))
            s++;
        for (size_t k = 0; k < sizeof(replies) / sizeof(replies[0]); k++) {
            size_t n = strlen(replies[k]);

            if (strncasecmp(s, replies[k], n) == 0) {
                s += n;
                again = true;
                break;
            }
        }
        if (again)
            continue;
        if (*s == '[') {
            const char *close = strchr(s, ']');

            if (close == NULL)
                break;
            if (*ret_tag == NULL && bracket_is_tagged(s + 1, (size_t)(close - s - 1))) {
                *ret_tag = s + 1;
                *ret_taglen = (size_t)(close - s - 1);
                ps->tagged = true;
            }
            s = close + 1;
            continue;
        }
        break;
    }
    return s;
}

/* The subsystem is the run of leading "word: " components with no space
 * inside ("usb: typec: mux: "), so a colon inside the summary
 * ("net: fix crash: null deref") does not move it. */
static size_t
subject_subsystem_len(const char *s, size_t len)
{
    size_t i = 0, end = 0;

    while (i < len) {
        size_t start = i;

        while (i < len && !isspace((unsigned char)s[i]) &&
               !(s[i] == ':' && i + 1 < len && s[i + 1] == ' '))
            i++;
        if (i == start || i + 1 >= len || s[i] != ':' || s[i + 1] != ' ')
            break;
        end = i;
        i += 2;
        while (i < len && s[i] == ' ')
            i++;
    }
    return end;
}

int
patch_parse_subject(struct message *m)
{
    struct patch_subject *ps = &m->psubj;
    const char *tag = NULL, *rest;
    size_t taglen = 0, len, sublen;

    free(ps->prefix);
    free(ps->subsystem);
    free(ps->summary);
    memset(ps, 0, sizeof(*ps));
    ps->version = 1;
    m->cover_letter = false;
    if (m->subject == NULL)
        return 0;

    rest = subject_skip_prefixes(ps, m->subject, &tag, &taglen);
    if (tag != NULL) {
        const char *t = tag;
        size_t tl = taglen;

        trim(&t, &tl);
        ps->prefix = strndup(t, tl);
        if (ps->prefix == NULL)
            return -ENOMEM;
        subject_tag(ps, t, tl);
        if (ps->index == 0 && ps->total > 0)
            m->cover_letter = true;
    }

    len = strlen(rest);
    trim(&rest, &len);
    sublen = subject_subsystem_len(rest, len);
    if (sublen > 0) {
        ps->subsystem = strndup(rest, sublen);
        if (ps->subsystem == NULL)
            return -ENOMEM;
        rest += sublen + 1;
        len -= sublen + 1;
        trim(&rest, &len);
    }
    ps->summary = strndup(rest, len);
    if (ps->summary == NULL)
        return -ENOMEM;
    return 0;
}

/* ---- changelog and trailers ---- */

static bool
trailer_is_disclosure(const char *tag, const char *value)
{
    static const char *const ai[] = {
        "noreply@anthropic.com", "Claude", "Copilot", "ChatGPT", "OpenAI", "Gemini"};

    if (strcasecmp(tag, "Assisted-by") == 0 || strcasecmp(tag, "Generated-by") == 0)
        return true;
    if (strcasecmp(tag, "Co-authored-by") == 0 || strcasecmp(tag, "Co-developed-by") == 0) {
        for (size_t k = 0; k < sizeof(ai) / sizeof(ai[0]); k++)
            if (strcasestr(value, ai[k]) != NULL)
                return true;
    }
    return false;
}

static int
add_trailer(struct parser *ps, const struct span *s, size_t taglen)
{
    struct message *m = ps->m;
    struct patch_trailer *t;
    const char *v = s->p + taglen + 1;
    size_t vlen = s->len - taglen - 1;
    void *arr = m->trailers;
    int r;

    r = grow_array(&arr, m->n_trailers, sizeof(*m->trailers));
    m->trailers = arr;
    if (r < 0)
        return r;
    trim(&v, &vlen);
    t = &m->trailers[m->n_trailers];
    t->tag = strndup(s->p, taglen);
    t->value = strndup(v, vlen);
    t->line = s->lineno;
    if (t->tag == NULL || t->value == NULL) {
        free(t->tag);
        free(t->value);
        return -ENOMEM;
    }
    m->n_trailers++;
    if (trailer_is_disclosure(t->tag, t->value))
        m->disclosure = true;
    return 0;
}

/*
 * Mark the trailer lines of log lines [from, to). The trailers are in the
 * last paragraph that has any: its trailing run of "Tag: value" lines
 * (fillers allowed inside the run), plus Fixes:/Link:/Closes:/Cc:
 * anywhere in it. Whole paragraphs of trailers just above it also count.
 * Paragraphs after it ("Thanks,", a "V1->V2:" log) stay in the changelog.
 */
static void
mark_trailers(const struct parser *ps, size_t from, size_t to, bool *is_tr)
{
    size_t end = to;
    bool first = true;

    while (end > from) {
        size_t start, k, taglen, run;
        bool any = false;

        while (end > from && span_blank(&ps->lines[end - 1]))
            end--;
        if (end == from)
            break;
        start = end;
        while (start > from && !span_blank(&ps->lines[start - 1]))
            start--;

        for (k = start; k < end; k++)
            if (is_trailer(&ps->lines[k], &taglen))
                any = true;
        if (!any) {
            if (first) {
                end = start;
                continue;
            }
            break;
        }

        if (first) {
            run = end;
            while (run > start && (is_trailer(&ps->lines[run - 1], &taglen) ||
                                   is_trailer_filler(&ps->lines[run - 1])))
                run--;
            for (k = run; k < end; k++)
                is_tr[k] = is_trailer(&ps->lines[k], &taglen);
            for (k = start; k < run; k++)
                if (is_bare_anywhere_tag(&ps->lines[k]))
                    is_tr[k] = true;
            first = false;
            if (run > start)
                break;
        } else {
            for (k = start; k < end; k++)
                if (!is_trailer(&ps->lines[k], &taglen) && !is_trailer_filler(&ps->lines[k]))
                    return;
            for (k = start; k < end; k++)
                is_tr[k] = is_trailer(&ps->lines[k], &taglen);
        }
        end = start;
    }
}

static int
parse_log(struct parser *ps, size_t from, size_t to)
{
    bool *is_tr = NULL, prev_blank = false;
    size_t first = to, last = from;
    int r = 0;

    if (to <= from)
        return 0;
    is_tr = calloc(to - from, sizeof(*is_tr));
    if (is_tr == NULL)
        return -ENOMEM;
    mark_trailers(ps, from, to, is_tr - from);

    /* The changelog keeps its inner blank lines but not the outer ones. */
    for (size_t i = from; i < to; i++) {
        bool stat;

        if (is_tr[i - from] || span_blank(&ps->lines[i]))
            continue;
        if (is_diffstat(&ps->lines[i], &stat)) {
            ps->m->has_diffstat |= stat;
            is_tr[i - from] = true; /* neither log nor trailer: skip below */
            continue;
        }
        if (first == to)
            first = i;
        last = i + 1;
    }
    for (size_t i = from; i < to; i++) {
        const struct span *s = &ps->lines[i];
        size_t taglen;

        if (is_tr[i - from]) {
            if (!is_trailer(s, &taglen))
                continue;
            r = add_trailer(ps, s, taglen);
            if (r == 0)
                r = rbuf_add(&ps->rb[REGION_TRAILERS], s->p, s->len, NULL, 0);
        } else if (i >= first && i < last) {
            /* removed trailers must not leave a run of blank lines */
            if (span_blank(s) && prev_blank)
                continue;
            prev_blank = span_blank(s);
            r = rbuf_add(&ps->rb[REGION_CHANGELOG], s->p, s->len, NULL, 0);
        }
        if (r < 0)
            break;
    }
    free(is_tr);
    return r;
}

/* The notes keep their inner blank lines but not the outer ones, and no
 * diffstat line: one pass that adds the blank lines held back since the
 * last text line when the next one comes. */
static int
parse_notes(struct parser *ps, size_t from, size_t to)
{
    size_t held = to; /* after the last text line; to before the first */
    bool stat;
    int r;

    for (size_t i = from; i < to; i++) {
        if (span_blank(&ps->lines[i]))
            continue;
        if (is_diffstat(&ps->lines[i], &stat)) {
            ps->m->has_diffstat |= stat;
            continue;
        }
        for (size_t k = held; k < i; k++) {
            /* a line between two text lines is blank or diffstat */
            if (!span_blank(&ps->lines[k]))
                continue;
            r = rbuf_add(&ps->rb[REGION_NOTES], ps->lines[k].p, ps->lines[k].len, NULL, 0);
            if (r < 0)
                return r;
        }
        r = rbuf_add(&ps->rb[REGION_NOTES], ps->lines[i].p, ps->lines[i].len, NULL, 0);
        if (r < 0)
            return r;
        held = i + 1;
    }
    return 0;
}

/* ---- diff ---- */

static enum file_lang
lang_of(const char *path)
{
    const char *base, *dot;

    if (path == NULL)
        return FILE_LANG_OTHER;
    base = strrchr(path, '/');
    base = base ? base + 1 : path;
    dot = strrchr(base, '.');
    if (dot != NULL && (strcmp(dot, ".c") == 0 || strcmp(dot, ".h") == 0))
        return FILE_LANG_C;
    if (dot != NULL && strcmp(dot, ".sh") == 0)
        return FILE_LANG_SHELL;
    if (strncmp(base, "Kconfig", 7) == 0)
        return FILE_LANG_KCONFIG;
    if (strncmp(base, "Makefile", 8) == 0 || strncmp(base, "Kbuild", 6) == 0 ||
        (dot != NULL && strcmp(dot, ".mk") == 0))
        return FILE_LANG_MAKEFILE;
    if (dot != NULL && strcmp(dot, ".rst") == 0)
        return FILE_LANG_RST;
    if (dot != NULL && strcmp(dot, ".txt") == 0 && strncmp(path, "Documentation/", 14) == 0)
        return FILE_LANG_RST;
    if (dot != NULL && strcmp(dot, ".py") == 0)
        return FILE_LANG_PYTHON;
    return FILE_LANG_OTHER;
}

/* A path from a diff header: quotes, "a/"/"b/" and a trailing tab and
 * timestamp removed; "/dev/null" gives NULL with *ret_null set. */
static char *
diff_path(const char *p, size_t len, bool strip_prefix, bool *ret_null)
{
    const char *tab = memchr(p, '\t', len);

    *ret_null = false;
    if (tab != NULL)
        len = (size_t)(tab - p);
    trim(&p, &len);
    if (len >= 2 && p[0] == '"' && p[len - 1] == '"') {
        p++;
        len -= 2;
    }
    if (len == 9 && memcmp(p, "/dev/null", 9) == 0) {
        *ret_null = true;
        return NULL;
    }
    if (strip_prefix && len > 2 && (p[0] == 'a' || p[0] == 'b') && p[1] == '/') {
        p += 2;
        len -= 2;
    }
    return strndup(p, len);
}

static void
set_path(char **slot, char *path)
{
    free(*slot);
    *slot = path;
}

static void
hunk_close(struct diff_state *ds)
{
    ds->hunk = -1;
    ds->old_rem = ds->new_rem = 0;
}

static int
file_open(struct parser *ps, struct diff_state *ds)
{
    struct message *m = ps->m;
    void *arr = m->files;
    int r;

    hunk_close(ds);
    if (m->n_files >= ps->limits->max_files) {
        message_note_limit(m, "max_files", ps->limits->max_files);
        return 1;
    }
    r = grow_array(&arr, m->n_files, sizeof(*m->files));
    m->files = arr;
    if (r < 0)
        return r;
    memset(&m->files[m->n_files], 0, sizeof(m->files[0]));
    ds->file = (long)m->n_files++;
    ds->file_has_hunk = false;
    ds->file_has_minus = false;
    ds->label = NULL;
    m->has_diff = true;
    return 0;
}

/* "diff --git a/x b/y": when both halves are equal the split is
 * unambiguous even with spaces in the name. */
static int
file_open_git(struct parser *ps, struct diff_state *ds, const struct span *s)
{
    const char *p = s->p + 11;
    size_t len = s->len - 11, split = 0;
    struct patch_file *f;
    bool isnull;
    int r;

    r = file_open(ps, ds);
    if (r != 0)
        return r;
    f = &ps->m->files[ds->file];
    if (len > 0 && p[0] == '"') {
        const char *q = memchr(p + 1, '"', len - 1);

        if (q != NULL && (size_t)(q - p) + 1 < len)
            split = (size_t)(q - p) + 1;
    }
    for (size_t i = 0; split == 0 && i + 3 <= len; i++) {
        if (memcmp(p + i, " b/", 3) != 0)
            continue;
        if (split == 0)
            split = i;
        if (i * 2 + 1 == len) {
            split = i;
            break;
        }
    }
    if (split == 0)
        return 0;
    f->old_path = diff_path(p, split, true, &isnull);
    f->new_path = diff_path(p + split + 1, len - split - 1, true, &isnull);
    if (f->old_path == NULL || f->new_path == NULL)
        return -ENOMEM;
    return 0;
}

/* "--- x" / "+++ y" pair at lines i, i+1. */
static int
file_minus_plus(struct parser *ps, struct diff_state *ds, size_t i)
{
    const struct span *minus = &ps->lines[i], *plus = &ps->lines[i + 1];
    struct patch_file *f;
    char *old_path, *new_path;
    bool old_null, new_null;
    int r;

    if (ds->file < 0 || ds->file_has_hunk || ds->file_has_minus) {
        r = file_open(ps, ds);
        if (r != 0)
            return r;
    }
    ds->file_has_minus = true;
    f = &ps->m->files[ds->file];
    old_path = diff_path(minus->p + 4, minus->len - 4, true, &old_null);
    new_path = diff_path(plus->p + 4, plus->len - 4, true, &new_null);
    if ((old_path == NULL && !old_null) || (new_path == NULL && !new_null)) {
        free(old_path);
        free(new_path);
        return -ENOMEM;
    }
    /* "diff --git" and rename lines already named the file; "---"/"+++"
     * only add what they lack and the /dev/null of a new or deleted file. */
    if (old_null || f->old_path == NULL)
        set_path(&f->old_path, old_path);
    else
        free(old_path);
    if (new_null || f->new_path == NULL)
        set_path(&f->new_path, new_path);
    else
        free(new_path);
    return 0;
}

static bool
parse_range(const char **p, const char *end, uint32_t *start, uint32_t *count)
{
    unsigned long v = 0;
    bool digits = false;

    while (*p < end && isdigit((unsigned char)**p)) {
        v = v * 10 + (unsigned long)(**p - '0');
        if (v > UINT32_MAX)
            return false;
        digits = true;
        (*p)++;
    }
    if (!digits)
        return false;
    *start = (uint32_t)v;
    *count = 1;
    if (*p < end && **p == ',') {
        (*p)++;
        v = 0;
        digits = false;
        while (*p < end && isdigit((unsigned char)**p)) {
            v = v * 10 + (unsigned long)(**p - '0');
            if (v > UINT32_MAX)
                return false;
            digits = true;
            (*p)++;
        }
        if (!digits)
            return false;
        *count = (uint32_t)v;
    }
    return true;
}

static bool
parse_hunk_header(const struct span *s, struct patch_hunk *h)
{
    const char *p = s->p + 4, *end = s->p + s->len;

    if (!parse_range(&p, end, &h->old_start, &h->old_count))
        return false;
    if (end - p < 2 || p[0] != ' ' || p[1] != '+')
        return false;
    p += 2;
    return parse_range(&p, end, &h->new_start, &h->new_count);
}

static int
hunk_open(struct parser *ps, struct diff_state *ds, const struct span *s)
{
    struct message *m = ps->m;
    struct patch_file *f;
    struct patch_hunk h = {0};
    void *arr = m->hunks;
    int r;

    hunk_close(ds);
    if (ds->file < 0 || !parse_hunk_header(s, &h))
        return 0;
    if (m->n_hunks >= ps->limits->max_hunks) {
        message_note_limit(m, "max_hunks", ps->limits->max_hunks);
        return 1;
    }
    f = &m->files[ds->file];
    if (!ds->file_has_hunk) {
        /* Paths are final now; map entries borrow them from here on. */
        if (f->old_path == NULL && f->new_path == NULL) {
            f->new_path = strdup("(unknown)");
            if (f->new_path == NULL)
                return -ENOMEM;
        }
        f->lang = lang_of(f->new_path ? f->new_path : f->old_path);
        ds->file_has_hunk = true;
    }
    ds->label = f->new_path ? f->new_path : f->old_path;
    r = grow_array(&arr, m->n_hunks, sizeof(*m->hunks));
    m->hunks = arr;
    if (r < 0)
        return r;
    h.file = (size_t)ds->file;
    h.added_first = ps->rb[REGION_ADDED].n;
    h.removed_first = ps->rb[REGION_REMOVED].n;
    m->hunks[m->n_hunks] = h;
    ds->hunk = (long)m->n_hunks++;
    ds->old_rem = h.old_count;
    ds->new_rem = h.new_count;
    ds->old_ln = h.old_start;
    ds->new_ln = h.new_start;
    memset(&ds->cs, 0, sizeof(ds->cs));
    return 0;
}

static unsigned
indent_width(const char *p, size_t len, size_t *ret_skip)
{
    unsigned w = 0;
    size_t i = 0;

    for (; i < len && (p[i] == ' ' || p[i] == '\t'); i++)
        w = p[i] == '\t' ? (w / 8 + 1) * 8 : w + 1;
    *ret_skip = i;
    return w;
}

/* C comment state machine over one line of the new file. Returns true
 * when the whole line is comment and sets the comment text (markers
 * removed). */
static bool
comment_c(struct comment_state *cs, const char *p, size_t len, const char **ret_t, size_t *ret_tlen)
{
    const char *t = p, *close;
    size_t tl = len;

    trim(&t, &tl);
    if (cs->c_block ||
        (tl > 0 && t[0] == '*' && (tl == 1 || t[1] == ' ' || t[1] == '\t' || t[1] == '/'))) {
        /* inside a block, or a " * text" continuation whose opener lies
         * before the hunk */
        cs->c_block = true;
        if (tl > 0 && t[0] == '*' && !(tl > 1 && t[1] == '/')) {
            t++;
            tl--;
        }
        close = ascii_find_pair(t, tl, '*', '/');
        if (close != NULL) {
            cs->c_block = false;
            tl = (size_t)(close - t);
        }
        goto comment;
    }
    if (tl >= 2 && t[0] == '/' && t[1] == '/') {
        while (tl > 0 && t[0] == '/') {
            t++;
            tl--;
        }
        goto comment;
    }
    if (tl >= 2 && t[0] == '/' && t[1] == '*') {
        t += 2;
        tl -= 2;
        while (tl > 0 && t[0] == '*' && !(tl > 1 && t[1] == '/')) {
            t++;
            tl--;
        }
        close = ascii_find_pair(t, tl, '*', '/');
        if (close != NULL)
            tl = (size_t)(close - t);
        else
            cs->c_block = true;
        goto comment;
    }
    /* code, possibly opening a block comment at its end */
    for (const char *o = ascii_find_pair(p, len, '/', '*'); o != NULL;
         o = ascii_find_pair(o + 2, len - (size_t)(o + 2 - p), '/', '*')) {
        close = ascii_find_pair(o + 2, len - (size_t)(o + 2 - p), '*', '/');
        if (close == NULL) {
            cs->c_block = true;
            break;
        }
        o = close;
    }
    return false;
comment:
    trim(&t, &tl);
    *ret_t = t;
    *ret_tlen = tl;
    return true;
}

static bool
comment_hash(const char *p, size_t len, const char **ret_t, size_t *ret_tlen)
{
    const char *t = p;
    size_t tl = len;

    trim(&t, &tl);
    if (tl == 0 || t[0] != '#' || (tl > 1 && t[1] == '!'))
        return false;
    while (tl > 0 && t[0] == '#') {
        t++;
        tl--;
    }
    trim(&t, &tl);
    *ret_t = t;
    *ret_tlen = tl;
    return true;
}

/* Kconfig help text: lines indented deeper than the "help" keyword, or
 * by the conventional tab and two spaces when the keyword lies before
 * the hunk. */
static bool
comment_kconfig(struct comment_state *cs, const char *p, size_t len, const char **ret_t,
                size_t *ret_tlen)
{
    const char *t = p;
    size_t tl = len, skip;
    unsigned ind = indent_width(p, len, &skip);

    trim(&t, &tl);
    if (tl == 0)
        return false;
    if (cs->kc_help && ind <= cs->kc_indent)
        cs->kc_help = false;
    if (!cs->kc_help && (is_word_token(t, tl, "help") || is_word_token(t, tl, "---help---"))) {
        cs->kc_help = true;
        cs->kc_indent = ind;
        return false;
    }
    if (cs->kc_help || (len > 3 && memcmp(p, "\t  ", 3) == 0)) {
        *ret_t = t;
        *ret_tlen = tl;
        return true;
    }
    return comment_hash(p, len, ret_t, ret_tlen);
}

static bool
comment_of(enum file_lang lang, struct comment_state *cs, const char *p, size_t len,
           const char **ret_t, size_t *ret_tlen)
{
    switch (lang) {
    case FILE_LANG_C:
        return comment_c(cs, p, len, ret_t, ret_tlen);
    case FILE_LANG_SHELL:
    case FILE_LANG_MAKEFILE:
    case FILE_LANG_PYTHON:
        return comment_hash(p, len, ret_t, ret_tlen);
    case FILE_LANG_KCONFIG:
        return comment_kconfig(cs, p, len, ret_t, ret_tlen);
    default:
        return false;
    }
}

/* One line inside an open hunk. Returns 1 when the line does not belong
 * to the hunk (the hunk is closed and the caller looks at it again). */
static int
hunk_line(struct parser *ps, struct diff_state *ds, const struct span *s)
{
    struct message *m = ps->m;
    struct patch_hunk *h = &m->hunks[ds->hunk];
    struct patch_file *f = &m->files[ds->file];
    char c = s->len > 0 ? s->p[0] : ' ';
    const char *body = s->len > 0 ? s->p + 1 : s->p;
    size_t blen = s->len > 0 ? s->len - 1 : 0;
    const char *ct;
    size_t ctl;
    int r = 0;

    switch (c) {
    case ' ':
        if (ds->old_rem == 0 || ds->new_rem == 0)
            goto end;
        r = rbuf_add(&ps->rb[REGION_CONTEXT], body, blen, ds->label, ds->new_ln);
        (void)comment_of(f->lang, &ds->cs, body, blen, &ct, &ctl);
        ds->old_rem--;
        ds->new_rem--;
        ds->old_ln++;
        ds->new_ln++;
        break;
    case '+':
        if (ds->new_rem == 0)
            goto end;
        r = rbuf_add(&ps->rb[REGION_ADDED], body, blen, ds->label, ds->new_ln);
        if (r == 0 && comment_of(f->lang, &ds->cs, body, blen, &ct, &ctl))
            r = rbuf_add(&ps->rb[REGION_COMMENTS], ct, ctl, ds->label, ds->new_ln);
        h->added_count++;
        f->added++;
        ds->new_rem--;
        ds->new_ln++;
        break;
    case '-':
        if (ds->old_rem == 0)
            goto end;
        r = rbuf_add(&ps->rb[REGION_REMOVED], body, blen, ds->label, ds->old_ln);
        h->removed_count++;
        f->removed++;
        ds->old_rem--;
        ds->old_ln++;
        break;
    case '\\':
        return 0; /* "\ No newline at end of file" */
    default:
        goto end;
    }
    if (r < 0)
        return r;
    if (ds->old_rem == 0 && ds->new_rem == 0)
        hunk_close(ds);
    return 0;
end:
    hunk_close(ds);
    return 1;
}

static int
parse_diff(struct parser *ps, size_t from)
{
    struct diff_state ds = {.file = -1, .hunk = -1};
    struct message *m = ps->m;
    int r = 0;

    for (size_t i = from; i < ps->n && r >= 0; i++) {
        const struct span *s = &ps->lines[i];
        struct patch_file *f;
        bool isnull;

        if (ds.hunk >= 0) {
            r = hunk_line(ps, &ds, s);
            if (r <= 0)
                continue;
            r = 0;
        }
        f = ds.file >= 0 ? &m->files[ds.file] : NULL;
        if (span_starts(s, "diff --git ")) {
            r = file_open_git(ps, &ds, s);
        } else if (span_starts(s, "--- ") && i + 1 < ps->n &&
                   span_starts(&ps->lines[i + 1], "+++ ")) {
            r = file_minus_plus(ps, &ds, i);
            i++;
        } else if (span_starts(s, "@@ -")) {
            r = hunk_open(ps, &ds, s);
        } else if (f == NULL || ds.file_has_hunk) {
            r = 0;
        } else if (span_starts(s, "new file mode")) {
            set_path(&f->old_path, NULL);
        } else if (span_starts(s, "deleted file mode")) {
            set_path(&f->new_path, NULL);
        } else if (span_starts(s, "rename from ") || span_starts(s, "copy from ")) {
            const char *p = (const char *)memchr(s->p, ' ', s->len) + 6;

            set_path(&f->old_path, diff_path(p, s->len - (size_t)(p - s->p), false, &isnull));
            r = f->old_path ? 0 : -ENOMEM;
        } else if (span_starts(s, "rename to ") || span_starts(s, "copy to ")) {
            const char *p = (const char *)memchr(s->p, ' ', s->len) + 4;

            set_path(&f->new_path, diff_path(p, s->len - (size_t)(p - s->p), false, &isnull));
            r = f->new_path ? 0 : -ENOMEM;
        } else if (span_starts(s, "Binary files ") || span_starts(s, "GIT binary patch")) {
            f->binary = true;
            if (span_starts(s, "Binary files /dev/null "))
                set_path(&f->old_path, NULL);
            else if (s->len > 17 && memcmp(s->p + s->len - 17, " /dev/null differ", 17) == 0)
                set_path(&f->new_path, NULL);
        }
        if (r > 0)
            break; /* a cap was reached */
    }
    return r < 0 ? r : 0;
}

static int
fill_files(struct parser *ps, size_t first_file)
{
    struct message *m = ps->m;
    int r;

    for (size_t i = first_file; i < m->n_files; i++) {
        struct patch_file *f = &m->files[i];

        if (f->lang == FILE_LANG_OTHER)
            f->lang = lang_of(f->new_path ? f->new_path : f->old_path);
        if (f->old_path != NULL && (f->new_path == NULL || strcmp(f->old_path, f->new_path) != 0)) {
            r = rbuf_add(&ps->rb[REGION_FILES], f->old_path, strlen(f->old_path), NULL, 0);
            if (r < 0)
                return r;
        }
        if (f->new_path != NULL) {
            r = rbuf_add(&ps->rb[REGION_FILES], f->new_path, strlen(f->new_path), NULL, 0);
            if (r < 0)
                return r;
        }
    }
    return 0;
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
    r = parse_log(&ps, body, log_end);
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
        r = parse_notes(&ps, sep + 1, notes_end);
        if (r < 0)
            goto out;
    }

    r = parse_diff(&ps, diff);
    if (r < 0)
        goto out;
    r = fill_files(&ps, first_file);
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
