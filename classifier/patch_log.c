/*
 * patch_log.c - the changelog, the trailers and the notes of a patch: the
 * log above "---" split into changelog text and "Tag: value" trailers
 * (m->trailers, m->disclosure), the notes below it kept without the
 * diffstat, which sets m->has_diffstat.
 *
 * Invariants: only lines [from, to) of the parser are read; the changelog
 * and the notes keep their inner blank lines but not the outer ones.
 * Ownership: trailers[] with each tag and value, and the region text
 * added here, belong to the message (freed by message_free()).
 * Threading: no shared state; each call works on its own parser.
 */
#include "patch_parser.h"

/* " path/to/file.c | 12 ++--" or " path | Bin 0 -> 12 bytes": a file's
 * line of a diffstat, p[0] a space. */
static bool
is_stat_file(const char *p, size_t len)
{
    const char *bar = memchr(p, '|', len);
    size_t i;

    if (p[1] == ' ' || bar == NULL)
        return false;
    i = (size_t)(bar - p) + 1;
    while (i < len && p[i] == ' ')
        i++;
    if (span_starts_ci(p + i, len - i, "Bin "))
        return true;
    if (i >= len || !isdigit((unsigned char)p[i]))
        return false;
    while (i < len && isdigit((unsigned char)p[i]))
        i++;
    return i == len || p[i] == ' ';
}

/* " 3 files changed, ...", p[1] a digit. */
static bool
is_stat_total(const char *p, size_t len)
{
    size_t i = 1;

    while (i < len && isdigit((unsigned char)p[i]))
        i++;
    return span_starts_ci(p + i, len - i, " file changed") ||
           span_starts_ci(p + i, len - i, " files changed");
}

/* " path/to/file.c | 12 ++--" and " 3 files changed, ..." set *ret_stat;
 * the create/delete/rename/mode summary lines git prints below them are
 * diffstat too. */
static bool
is_diffstat(const struct patch_line *s, bool *ret_stat)
{
    static const char *const summary[] = {"create mode ", "delete mode ", "mode change ",
                                          "rename ",      "copy ",        "rewrite "};
    const char *p = s->p;
    size_t len = s->len;

    *ret_stat = false;
    if (len < 2 || p[0] != ' ')
        return false;
    if (is_stat_file(p, len) || (isdigit((unsigned char)p[1]) && is_stat_total(p, len))) {
        *ret_stat = true;
        return true;
    }
    if (isdigit((unsigned char)p[1]))
        return false;
    for (size_t k = 0; k < sizeof(summary) / sizeof(summary[0]); k++)
        if (span_starts(s, " ") && span_starts_ci(p + 1, len - 1, summary[k]))
            return k < 3 || p[len - 1] == ')';
    return false;
}

/* "Tag: value" where Tag is "Word-...-Word" or one of the bare tags used
 * in kernel logs. Sets *ret_taglen to the length of Tag. */
static bool
is_trailer(const struct patch_line *s, size_t *ret_taglen)
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
is_bare_anywhere_tag(const struct patch_line *s)
{
    return span_starts(s, "Fixes: ") || span_starts(s, "Link: ") || span_starts(s, "Closes: ") ||
           span_starts(s, "Cc: ");
}

/* "[maintainer: fixed the typo]" lines and indented continuations live
 * inside trailer blocks without being trailers themselves. */
static bool
is_trailer_filler(const struct patch_line *s)
{
    return s->len > 0 && (s->p[0] == '[' || s->p[0] == ' ' || s->p[0] == '\t');
}

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
add_trailer(struct parser *ps, const struct patch_line *s, size_t taglen)
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
    ascii_trim(&v, &vlen);
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

/* Lines [start, end) hold a trailer. */
static bool
has_trailer(const struct parser *ps, size_t start, size_t end)
{
    size_t taglen;

    for (size_t k = start; k < end; k++)
        if (is_trailer(&ps->lines[k], &taglen))
            return true;
    return false;
}

/* The last paragraph with trailers, [start, end): its trailing run of
 * trailers (fillers allowed inside the run), plus Fixes:/Link:/Closes:/
 * Cc: anywhere in it. Returns whether the run leaves lines of the
 * paragraph above it: then no paragraph above holds trailers. */
static bool
mark_last_paragraph(const struct parser *ps, size_t start, size_t end, bool *is_tr)
{
    size_t run = end, taglen;

    while (run > start &&
           (is_trailer(&ps->lines[run - 1], &taglen) || is_trailer_filler(&ps->lines[run - 1])))
        run--;
    for (size_t k = run; k < end; k++)
        is_tr[k] = is_trailer(&ps->lines[k], &taglen);
    for (size_t k = start; k < run; k++)
        if (is_bare_anywhere_tag(&ps->lines[k]))
            is_tr[k] = true;
    return run > start;
}

/* A paragraph [start, end) above the last one is trailers only when all
 * of it is trailers and fillers; marks it then. */
static bool
mark_trailer_paragraph(const struct parser *ps, size_t start, size_t end, bool *is_tr)
{
    size_t taglen;

    for (size_t k = start; k < end; k++)
        if (!is_trailer(&ps->lines[k], &taglen) && !is_trailer_filler(&ps->lines[k]))
            return false;
    for (size_t k = start; k < end; k++)
        is_tr[k] = is_trailer(&ps->lines[k], &taglen);
    return true;
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
        size_t start;

        while (end > from && span_blank(&ps->lines[end - 1]))
            end--;
        if (end == from)
            break;
        start = end;
        while (start > from && !span_blank(&ps->lines[start - 1]))
            start--;
        if (!has_trailer(ps, start, end)) {
            if (!first)
                break;
            end = start;
            continue;
        }
        if (first) {
            first = false;
            if (mark_last_paragraph(ps, start, end, is_tr))
                break;
        } else if (!mark_trailer_paragraph(ps, start, end, is_tr)) {
            break;
        }
        end = start;
    }
}

/* Lines [*ret_first, *ret_last) of [from, to) hold the changelog's text:
 * neither trailers, nor blank lines at either end, nor a diffstat (which
 * is marked in is_tr, to be skipped as neither log nor trailer). */
static void
find_log_text(struct parser *ps, size_t from, size_t to, bool *is_tr, size_t *ret_first,
              size_t *ret_last)
{
    size_t first = to, last = from;

    for (size_t i = from; i < to; i++) {
        bool stat;

        if (is_tr[i - from] || span_blank(&ps->lines[i]))
            continue;
        if (is_diffstat(&ps->lines[i], &stat)) {
            ps->m->has_diffstat |= stat;
            is_tr[i - from] = true;
            continue;
        }
        if (first == to)
            first = i;
        last = i + 1;
    }
    *ret_first = first;
    *ret_last = last;
}

int
patch_log_parse(struct parser *ps, size_t from, size_t to)
{
    bool *is_tr = NULL, prev_blank = false;
    size_t first, last;
    int r = 0;

    if (to <= from)
        return 0;
    is_tr = calloc(to - from, sizeof(*is_tr));
    if (is_tr == NULL)
        return -ENOMEM;
    mark_trailers(ps, from, to, is_tr - from);
    /* The changelog keeps its inner blank lines but not the outer ones. */
    find_log_text(ps, from, to, is_tr, &first, &last);
    for (size_t i = from; i < to && r >= 0; i++) {
        const struct patch_line *s = &ps->lines[i];
        size_t taglen;

        if (is_tr[i - from]) {
            if (!is_trailer(s, &taglen))
                continue;
            r = add_trailer(ps, s, taglen);
            if (r == 0)
                r = patch_rbuf_add(&ps->rb[REGION_TRAILERS], s->p, s->len, NULL, 0);
        } else if (i >= first && i < last) {
            /* removed trailers must not leave a run of blank lines */
            if (span_blank(s) && prev_blank)
                continue;
            prev_blank = span_blank(s);
            r = patch_rbuf_add(&ps->rb[REGION_CHANGELOG], s->p, s->len, NULL, 0);
        }
    }
    free(is_tr);
    return r;
}

/* The notes keep their inner blank lines but not the outer ones, and no
 * diffstat line: one pass that adds the blank lines held back since the
 * last text line when the next one comes. */
int
patch_log_notes(struct parser *ps, size_t from, size_t to)
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
            r = patch_rbuf_add(&ps->rb[REGION_NOTES], ps->lines[k].p, ps->lines[k].len, NULL, 0);
            if (r < 0)
                return r;
        }
        r = patch_rbuf_add(&ps->rb[REGION_NOTES], ps->lines[i].p, ps->lines[i].len, NULL, 0);
        if (r < 0)
            return r;
        held = i + 1;
    }
    return 0;
}
