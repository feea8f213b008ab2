/*
 * message_body.c - the lines of a mail's body: the author's own, what is
 * quoted (after a '>', an attribution, a forward separator), what is
 * dropped (a signature), and the text of attached patches.
 *
 * Limits: the caller's line budget and line size (message_body_lines()).
 * Ownership: spans borrow from the body text; the split's buffers belong
 * to the caller. Threading: no shared state.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ascii.h"
#include "message_body.h"

int
message_body_lines(const char *text, size_t len, size_t max_line, unsigned *budget,
                   struct lines *ret, bool *trunc)
{
    struct lines l = {0};
    size_t cap = 0, i = 0;

    while (i < len) {
        const char *nl = memchr(text + i, '\n', len - i);
        size_t n = nl ? (size_t)(nl - (text + i)) : len - i;
        struct span s = {text + i, n};

        if (*budget == 0) {
            *trunc = true;
            break;
        }
        if (s.len > max_line) {
            s.len = max_line;
            while (s.len > 0 && ((unsigned char)s.p[s.len] & 0xc0) == 0x80)
                s.len--;
            *trunc = true;
        }
        if (l.n == cap) {
            size_t ncap = cap ? cap * 2 : 64;
            struct span *nv = realloc(l.v, ncap * sizeof(*nv));

            if (nv == NULL) {
                free(l.v);
                return -ENOMEM;
            }
            l.v = nv;
            cap = ncap;
        }
        l.v[l.n++] = s;
        (*budget)--;
        i += n + 1;
    }
    *ret = l;
    return 0;
}

static bool
diff_starts_at(const struct lines *l, size_t i)
{
    const struct span *s = &l->v[i];

    if (starts(s->p, s->len, "diff --git "))
        return true;
    return starts(s->p, s->len, "--- ") && i + 2 < l->n &&
           starts(l->v[i + 1].p, l->v[i + 1].len, "+++ ") &&
           starts(l->v[i + 2].p, l->v[i + 2].len, "@@ -");
}

/*
 * A quoted line: '>' after at most three spaces. KASAN's shadow dump marks
 * the faulting row with ">ffff888...:", which is not a quote.
 */
static bool
quote_strip(const struct span *s, struct span *ret)
{
    size_t i = 0, h = 0;

    while (i < s->len && i < 3 && s->p[i] == ' ')
        i++;
    if (i >= s->len || s->p[i] != '>')
        return false;
    while (i + 1 + h < s->len && h < 16 && ascii_is_hex((unsigned char)s->p[i + 1 + h]))
        h++;
    if (h == 16 && i + 1 + h < s->len && s->p[i + 1 + h] == ':')
        return false;
    while (i < s->len && s->p[i] == '>') {
        i++;
        if (i < s->len && s->p[i] == ' ')
            i++;
    }
    ret->p = s->p + i;
    ret->len = s->len - i;
    return true;
}

static bool
is_signature(const struct span *s)
{
    return (s->len == 3 && memcmp(s->p, "-- ", 3) == 0) ||
           (s->len == 2 && memcmp(s->p, "--", 2) == 0);
}

/* Outlook-style separators, after which everything is the quoted mail:
 * "-----Original Message-----" or a line of 32 or more '_'. may_original:
 * the body holds the former somewhere (forward_marked()). */
static bool
is_forward_separator(const struct span *s, bool may_original)
{
    struct span t = *s;

    span_trim(&t);
    return (may_original &&
            ascii_find_ci_at(t.p, t.len, "-----original message-----", 26, 4) != NULL) ||
           (t.len >= 32 && t.p[0] == '_' && strspn(t.p, "_") == t.len);
}

/* Whether the lines of l, which share one text, hold "-----Original
 * Message-----" (any case) anywhere: one search for its "-o" pair over
 * the whole text, where a search per line cost more on a long report. */
static bool
forward_marked(const struct lines *l)
{
    static const char marker[] = "-----original message-----";
    const char *b, *e;

    if (l->n == 0)
        return false;
    b = l->v[0].p;
    e = l->v[l->n - 1].p + l->v[l->n - 1].len;
    return ascii_find_ci_at(b, (size_t)(e - b), marker, sizeof(marker) - 1, 4) != NULL;
}

static bool
is_attribution(const struct span *s)
{
    struct span t = *s;

    span_trim(&t);
    if (t.len == 0 || t.p[t.len - 1] != ':')
        return false;
    return (t.len >= 6 && strncasecmp(t.p + t.len - 6, "wrote:", 6) == 0) ||
           (t.len >= 7 && strncasecmp(t.p + t.len - 7, "writes:", 7) == 0);
}

static bool
next_nonblank_is_quote(const struct lines *l, size_t i)
{
    struct span q;

    for (size_t j = i + 1; j < l->n; j++) {
        struct span t = l->v[j];

        span_trim(&t);
        if (t.len == 0)
            continue;
        return quote_strip(&l->v[j], &q);
    }
    return false;
}

/* One own line, indexed as it is written: own_lines has room for every
 * line of the body. */
static int
add_own(struct body_split *bs, const struct span *s)
{
    bs->own_lines.v[bs->own_lines.n++] = (struct text_line){bs->own.len, s->len};
    return add_line(&bs->own, s->p, s->len);
}

/* Where message_body_split() stands in the body. */
struct split_state {
    bool in_diff, after_sig, rest_quoted;
    bool may_original; /* forward_marked() */
    /* The last own line kept, and whether it starts "On ": an
     * attribution may have wrapped onto the line after it. */
    size_t last_own_start;
    bool last_own_on;
};

/* An attribution line before a quote is dropped; so is the own line
 * before it that it wrapped from. */
static void
drop_attribution(struct body_split *bs, struct split_state *st, const struct span *s)
{
    struct span t = *s;

    span_trim(&t);
    /* A wrapped "On <date>, <name>\n<addr> wrote:" spans two lines. */
    if (!starts(t.p, t.len, "On ") && st->last_own_on && st->last_own_start != SIZE_MAX) {
        bs->own.len = st->last_own_start;
        bs->own.p[bs->own.len] = '\0';
        bs->own_lines.n--;
    }
    st->last_own_start = SIZE_MAX;
    st->last_own_on = false;
}

/* Line i, outside a diff and before a forward separator. */
static int
split_line(const struct lines *l, size_t i, struct body_split *bs, struct split_state *st)
{
    const struct span *s = &l->v[i];
    struct span q;

    if (quote_strip(s, &q)) {
        bs->quoted_lines++;
        return add_line(&bs->quoted, q.p, q.len);
    }
    if (is_forward_separator(s, st->may_original)) {
        st->rest_quoted = true;
        return 0;
    }
    if (st->after_sig)
        return 0;
    if (is_signature(s)) {
        st->after_sig = true;
        return 0;
    }
    if (is_attribution(s) && next_nonblank_is_quote(l, i)) {
        drop_attribution(bs, st, s);
        return 0;
    }
    st->last_own_start = bs->own.len;
    st->last_own_on = starts(s->p, s->len, "On ");
    return add_own(bs, s);
}

int
message_body_split(const struct lines *l, struct body_split *bs)
{
    struct split_state st = {.may_original = forward_marked(l), .last_own_start = SIZE_MAX};
    int r = 0;

    for (size_t i = 0; i < l->n && r >= 0; i++) {
        const struct span *s = &l->v[i];

        if (!st.in_diff && !st.after_sig && !st.rest_quoted && diff_starts_at(l, i)) {
            st.in_diff = true;
            bs->inline_diff = true;
        }
        if (st.in_diff) {
            if (is_signature(s)) {
                st.after_sig = true;
                st.in_diff = false;
                continue;
            }
            r = add_own(bs, s);
        } else if (st.rest_quoted) {
            r = add_line(&bs->quoted, s->p, s->len);
            bs->quoted_lines++;
        } else {
            r = split_line(l, i, bs, &st);
        }
    }
    return r < 0 ? r : 0;
}

bool
message_body_format_patch(const struct lines *l)
{
    if (l->n > 0 && starts(l->v[0].p, l->v[0].len, "From "))
        return true;
    for (size_t i = 0; i < l->n && i < 30; i++) {
        if (l->v[i].len == 0)
            return false;
        if (starts(l->v[i].p, l->v[i].len, "Subject: "))
            return true;
    }
    return false;
}

int
message_body_add_patch(struct textbuf *b, const struct lines *l, bool format_patch)
{
    size_t i = 0;
    int r = 0;

    /* A format-patch file's own mail header block ends at a blank line. */
    if (format_patch) {
        while (i < l->n && l->v[i].len > 0)
            i++;
        if (i < l->n)
            i++;
    }
    for (; i < l->n && r >= 0; i++)
        r = add_line(b, l->v[i].p, l->v[i].len);
    return r;
}
