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

int
patch_log_parse(struct parser *ps, size_t from, size_t to)
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
                r = patch_rbuf_add(&ps->rb[REGION_TRAILERS], s->p, s->len, NULL, 0);
        } else if (i >= first && i < last) {
            /* removed trailers must not leave a run of blank lines */
            if (span_blank(s) && prev_blank)
                continue;
            prev_blank = span_blank(s);
            r = patch_rbuf_add(&ps->rb[REGION_CHANGELOG], s->p, s->len, NULL, 0);
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
