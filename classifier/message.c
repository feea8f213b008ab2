/*
 * message.c - build the message model from a decoded MIME view.
 *
 * message_build() reads only the plain view (no GMime here): it fills the
 * envelope-like fields, the subject, headers, body and quoted regions,
 * picks the patch text (inline diff or attached patch) for patch_parse(),
 * decides the kind, hands the author's own text to report_parse() and
 * finally computes the measures. Every region is non-NULL text once built.
 *
 * Limits: text lines are capped at max_lines per message and cut at
 * max_line_bytes (on a UTF-8 boundary); recipients at MESSAGE_MAX_RCPT.
 * Ownership: the message owns all it holds and never borrows from the
 * view. Threading: one message per thread; the only shared state is the
 * report word index, built once under pthread_once() and read-only after.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ascii.h"
#include "message.h"
#include "textbuf.h"

#define MESSAGE_MAX_RCPT 1000
#define MESSAGE_MAX_ID 998
#define MESSAGE_MAX_ADDR 320

struct span {
    const char *p;
    size_t n;
};

/* Lines of one text, each without its '\n'; spans borrow from the text. */
struct lines {
    struct span *v;
    size_t n;
};

static int
region_take(struct region *rg, struct textbuf *b)
{
    if (b->p == NULL && textbuf_add(b, "", 0) < 0)
        return -ENOMEM;
    region_release(rg);
    rg->text = b->p;
    rg->len = b->len;
    memset(b, 0, sizeof(*b));
    return 0;
}

/* textbuf_line() with one size check and one copy: the body and header
 * regions are built a line at a time, and this is their inner loop. Most
 * lines fit the room left, which needs no call to find out. */
static int
add_line(struct textbuf *b, const char *s, size_t n)
{
    if (b->len + n + 2 > b->cap && textbuf_reserve(b, n + 1) < 0)
        return -ENOMEM;
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len++] = '\n';
    b->p[b->len] = '\0';
    return 0;
}

static bool
is_alnum(unsigned char c)
{
    return ascii_is_alnum(c);
}

/* The next place after i where a word can start: one past the first byte
 * at or after i that is not a letter or digit. The keyword scans below
 * only look at word starts, and skipping the rest of each word is the
 * bulk of their work. */
static size_t
next_word_start(const unsigned char *u, size_t i, size_t n)
{
    while (i < n && ascii_is_alnum(u[i]))
        i++;
    return i + 1;
}

static bool
starts_ci(const char *s, size_t n, const char *prefix)
{
    size_t k = strlen(prefix);

    return n >= k && strncasecmp(s, prefix, k) == 0;
}

static bool
starts(const char *s, size_t n, const char *prefix)
{
    size_t k = strlen(prefix);

    return n >= k && memcmp(s, prefix, k) == 0;
}

/* Case-insensitive search of needle in s[0..n); NULL when absent. */
static const char *
find_ci(const char *s, size_t n, const char *needle)
{
    size_t k = strlen(needle);
    const char *last;
    char lo, up;

    if (k == 0 || n < k)
        return NULL;
    lo = (char)(needle[0] >= 'A' && needle[0] <= 'Z' ? needle[0] - 'A' + 'a' : needle[0]);
    up = (char)(lo >= 'a' && lo <= 'z' ? lo - 'a' + 'A' : lo);
    last = s + n - k;
    for (const char *p = s; p <= last; p++) {
        /* A first byte without case ("-----Original"): memchr() finds
         * its candidates. */
        if (lo == up && (p = memchr(p, lo, (size_t)(last - p) + 1)) == NULL)
            return NULL;
        if ((*p == lo || *p == up) && strncasecmp(p, needle, k) == 0)
            return p;
    }
    return NULL;
}

/* Like find_ci(), but the match must not start inside a word. */
static const char *
find_word_ci(const char *s, size_t n, const char *needle)
{
    const char *p = s;

    while ((p = find_ci(p, n - (size_t)(p - s), needle)) != NULL) {
        if (p == s || !is_alnum((unsigned char)p[-1]))
            return p;
        p++;
    }
    return NULL;
}

static void
span_trim(struct span *s)
{
    while (s->n > 0 && (s->p[0] == ' ' || s->p[0] == '\t')) {
        s->p++;
        s->n--;
    }
    while (s->n > 0 && (s->p[s->n - 1] == ' ' || s->p[s->n - 1] == '\t' || s->p[s->n - 1] == '\r'))
        s->n--;
}

/*
 * Split text into lines, at most *budget of them (decremented), each cut
 * to max_line bytes without splitting a UTF-8 sequence. Sets *trunc when
 * a cap cut something.
 */
static int
lines_split(const char *text, size_t len, size_t max_line, unsigned *budget, struct lines *ret,
            bool *trunc)
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
        if (s.n > max_line) {
            s.n = max_line;
            while (s.n > 0 && ((unsigned char)s.p[s.n] & 0xc0) == 0x80)
                s.n--;
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

int
text_lines_split(const char *text, size_t len, size_t max, struct text_lines *ret, bool *cut)
{
    struct text_lines l = {0};
    size_t cap = 0, i = 0;

    *cut = false;
    while (i < len) {
        const char *nl = memchr(text + i, '\n', len - i);
        size_t n = nl ? (size_t)(nl - (text + i)) : len - i;

        if (l.n == max) {
            *cut = true;
            break;
        }
        if (l.n == cap) {
            size_t ncap = cap ? cap * 2 : 64;
            struct text_line *nv = realloc(l.v, ncap * sizeof(*nv));

            if (nv == NULL) {
                free(l.v);
                return -ENOMEM;
            }
            l.v = nv;
            cap = ncap;
        }
        l.v[l.n++] = (struct text_line){i, n};
        i += n + 1;
    }
    *ret = l;
    return 0;
}

/* Bytes a bare address stops at, before it and after it. A switch, not
 * strchr() on each byte of the address; a NUL stops it, as it would be
 * found in strchr()'s set. */
static bool
addr_stops_before(char c)
{
    switch (c) {
    case ' ':
    case '\t':
    case '"':
    case '\'':
    case '(':
    case '<':
    case ',':
    case ';':
    case ':':
    case '\0':
        return true;
    default:
        return false;
    }
}

static bool
addr_stops_after(char c)
{
    switch (c) {
    case ' ':
    case '\t':
    case '"':
    case '\'':
    case ')':
    case '>':
    case ',':
    case ';':
    case '\0':
        return true;
    default:
        return false;
    }
}

/* A bare, lower-case address out of one mailbox ("Name <a@b>" or "a@b")
 * into buf, NUL-terminated; returns its length, 0 when there is none. */
static size_t
addr_extract(const char *s, size_t n, char buf[static MESSAGE_MAX_ADDR + 1])
{
    const char *lt = memchr(s, '<', n), *a = NULL;
    size_t an = 0;

    if (lt != NULL) {
        const char *gt = memchr(lt, '>', n - (size_t)(lt - s));

        if (gt != NULL && memchr(lt, '@', (size_t)(gt - lt)) != NULL) {
            a = lt + 1;
            an = (size_t)(gt - a);
        }
    }
    if (a == NULL) {
        const char *at = memchr(s, '@', n);
        const char *b, *e;

        if (at == NULL)
            return 0;
        b = at;
        while (b > s && !addr_stops_before(b[-1]))
            b--;
        e = at;
        while (e < s + n && !addr_stops_after(*e))
            e++;
        a = b;
        an = (size_t)(e - b);
    }
    while (an > 0 && (*a == ' ' || *a == '\t')) {
        a++;
        an--;
    }
    while (an > 0 && (a[an - 1] == ' ' || a[an - 1] == '\t' || a[an - 1] == '.'))
        an--;
    if (an == 0 || an > MESSAGE_MAX_ADDR || memchr(a, '@', an) == NULL)
        return 0;
    for (size_t i = 0; i < an; i++)
        buf[i] = (char)(a[i] >= 'A' && a[i] <= 'Z' ? a[i] - 'A' + 'a' : a[i]);
    buf[an] = '\0';
    return an;
}

/* Split an address list on commas outside quotes and angle brackets. */
static int
add_addresses(struct strv *sv, const char *list)
{
    const char *s = list, *start = list;
    bool quoted = false;
    int angle = 0;

    for (;; s++) {
        /* Only these bytes change the state: jump to the next one. */
        s += strcspn(s, ",\"<>");
        if (*s == '\0' || (*s == ',' && !quoted && angle == 0)) {
            char a[MESSAGE_MAX_ADDR + 1];
            size_t an = addr_extract(start, (size_t)(s - start), a);

            if (an > 0 && strv_add_unique(sv, a, an, MESSAGE_MAX_RCPT) == -ENOMEM)
                return -ENOMEM;
            if (*s == '\0')
                break;
            start = s + 1;
        } else if (*s == '"') {
            quoted = !quoted;
        } else if (*s == '<' && !quoted) {
            angle++;
        } else if (*s == '>' && !quoted && angle > 0) {
            angle--;
        }
    }
    return 0;
}

/* The first <id> of a Message-ID or In-Reply-To value, without <>. */
static char *
msgid_extract(const char *v)
{
    const char *lt = strchr(v, '<'), *gt;
    struct span s;

    if (lt != NULL && (gt = strchr(lt, '>')) != NULL) {
        s.p = lt + 1;
        s.n = (size_t)(gt - s.p);
    } else {
        s.p = v;
        s.n = strlen(v);
    }
    span_trim(&s);
    if (s.n == 0)
        return NULL;
    if (s.n > MESSAGE_MAX_ID)
        s.n = MESSAGE_MAX_ID;
    return strndup(s.p, s.n);
}

/* RFC 3834 section 5: any keyword but "no" (auto-generated, auto-replied,
 * auto-notified, an extension, or none at all, as reply_suppress.c reads
 * it) marks mail a program sent. */
static bool
auto_submitted(const char *v)
{
    size_t n;

    v += strspn(v, " \t\r\n");
    n = strcspn(v, " \t\r\n;(");
    return !(n == 2 && strncasecmp(v, "no", 2) == 0);
}

/* The fields build_headers() looks at, besides copying every one. */
enum kept_header {
    KEPT_NONE = -1,
    KEPT_SUBJECT,
    KEPT_FROM,
    KEPT_MESSAGE_ID,
    KEPT_IN_REPLY_TO,
    KEPT_AUTO_SUBMITTED,
    KEPT_RCPT, /* To and Cc, every one of them */
    KEPT__COUNT,
};

/* Which kept field name[0..n) names (name need not end there); by
 * length first, since most names are none of them. */
static enum kept_header
kept_header(const char *name, size_t n)
{
    switch (n) {
    case 2:
        return strncasecmp(name, "To", 2) == 0 || strncasecmp(name, "Cc", 2) == 0 ? KEPT_RCPT
                                                                                  : KEPT_NONE;
    case 4:
        return strncasecmp(name, "From", 4) == 0 ? KEPT_FROM : KEPT_NONE;
    case 7:
        return strncasecmp(name, "Subject", 7) == 0 ? KEPT_SUBJECT : KEPT_NONE;
    case 10:
        return strncasecmp(name, "Message-ID", 10) == 0 ? KEPT_MESSAGE_ID : KEPT_NONE;
    case 11:
        return strncasecmp(name, "In-Reply-To", 11) == 0 ? KEPT_IN_REPLY_TO : KEPT_NONE;
    case 14:
        return strncasecmp(name, "Auto-Submitted", 14) == 0 ? KEPT_AUTO_SUBMITTED : KEPT_NONE;
    default:
        return KEPT_NONE;
    }
}

bool
message_field_used(const char *name, size_t nlen)
{
    /* References: gives a series its root (series.c). */
    return kept_header(name, nlen) != KEPT_NONE ||
           (nlen == 10 && strncasecmp(name, "References", 10) == 0);
}

/* Append "name: value\n" with one size check. */
static int
add_header_line(struct textbuf *b, const char *name, size_t nn, const char *value, size_t vn)
{
    if (textbuf_reserve(b, nn + 2 + vn + 1) < 0)
        return -ENOMEM;
    memcpy(b->p + b->len, name, nn);
    memcpy(b->p + b->len + nn, ": ", 2);
    b->len += nn + 2;
    return add_line(b, value, vn);
}

/*
 * One pass over the fields: the headers region, the recipients, and the
 * first Subject, From, Message-ID and In-Reply-To (as mime_view_header()
 * would find them), whose copies are made after it.
 */
static int
build_headers(struct message *m, const struct mime_view *v)
{
    const char *first[KEPT__COUNT] = {0};
    struct textbuf b = {0};
    size_t size = 0;
    int r = 0;

    /* The region in one allocation: a mail's header block is kilobytes,
     * which a buffer doubling from its default reaches in several. */
    for (size_t i = 0; i < v->n_headers; i++)
        size += strlen(v->headers[i].name) + 2 + strlen(v->headers[i].value) + 1;
    r = textbuf_reserve(&b, size);
    if (r < 0)
        goto out;
    b.p[0] = '\0'; /* no headers at all is "" */
    for (size_t i = 0; i < v->n_headers; i++) {
        const struct mime_header *mh = &v->headers[i];
        size_t nn = strlen(mh->name);
        enum kept_header k = kept_header(mh->name, nn);

        if (k == KEPT_RCPT) {
            r = add_addresses(&m->recipients, mh->value);
            if (r < 0)
                goto out;
        } else if (k != KEPT_NONE && first[k] == NULL) {
            first[k] = mh->value;
        }
        r = add_header_line(&b, mh->name, nn, mh->value, strlen(mh->value));
        if (r < 0)
            goto out;
    }
    if (first[KEPT_SUBJECT] != NULL && (m->subject = strdup(first[KEPT_SUBJECT])) == NULL) {
        r = -ENOMEM;
        goto out;
    }
    if (first[KEPT_FROM] != NULL) {
        char a[MESSAGE_MAX_ADDR + 1];

        m->from = strdup(first[KEPT_FROM]);
        if (m->from == NULL) {
            r = -ENOMEM;
            goto out;
        }
        if (addr_extract(m->from, strlen(m->from), a) > 0)
            m->from_addr = strdup(a);
    }
    if (first[KEPT_MESSAGE_ID] != NULL)
        m->message_id = msgid_extract(first[KEPT_MESSAGE_ID]);
    if (first[KEPT_IN_REPLY_TO] != NULL)
        m->in_reply_to = msgid_extract(first[KEPT_IN_REPLY_TO]);
    if (first[KEPT_AUTO_SUBMITTED] != NULL)
        m->auto_submitted = auto_submitted(first[KEPT_AUTO_SUBMITTED]);

    r = region_take(&m->regions[REGION_HEADERS], &b);
    if (r < 0)
        goto out;
    if (m->subject != NULL)
        r = textbuf_add(&b, m->subject, strlen(m->subject));
    if (r >= 0)
        r = region_take(&m->regions[REGION_SUBJECT], &b);
out:
    textbuf_release(&b);
    return r;
}

/* A diff starts here: "diff --git a/", or "--- x" / "+++ y" / "@@ -". */
static bool
diff_starts_at(const struct lines *l, size_t i)
{
    const struct span *s = &l->v[i];

    if (starts(s->p, s->n, "diff --git "))
        return true;
    return starts(s->p, s->n, "--- ") && i + 2 < l->n &&
           starts(l->v[i + 1].p, l->v[i + 1].n, "+++ ") &&
           starts(l->v[i + 2].p, l->v[i + 2].n, "@@ -");
}

static bool
is_hex(char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/*
 * A quoted line: '>' after at most three spaces. KASAN's shadow dump marks
 * the faulting row with ">ffff888...:", which is not a quote.
 */
static bool
quote_strip(const struct span *s, struct span *ret)
{
    size_t i = 0, h = 0;

    while (i < s->n && i < 3 && s->p[i] == ' ')
        i++;
    if (i >= s->n || s->p[i] != '>')
        return false;
    while (i + 1 + h < s->n && h < 16 && is_hex(s->p[i + 1 + h]))
        h++;
    if (h == 16 && i + 1 + h < s->n && s->p[i + 1 + h] == ':')
        return false;
    while (i < s->n && s->p[i] == '>') {
        i++;
        if (i < s->n && s->p[i] == ' ')
            i++;
    }
    ret->p = s->p + i;
    ret->n = s->n - i;
    return true;
}

static bool
is_signature(const struct span *s)
{
    return (s->n == 3 && memcmp(s->p, "-- ", 3) == 0) || (s->n == 2 && memcmp(s->p, "--", 2) == 0);
}

/* Outlook-style separators, after which everything is the quoted mail:
 * "-----Original Message-----" or a line of 32 or more '_'. may_original:
 * the body holds the former somewhere (forward_marked()). */
static bool
is_forward_separator(const struct span *s, bool may_original)
{
    struct span t = *s;

    span_trim(&t);
    return (may_original && find_ci(t.p, t.n, "-----Original Message-----") != NULL) ||
           (t.n >= 32 && t.p[0] == '_' && strspn(t.p, "_") == t.n);
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
    e = l->v[l->n - 1].p + l->v[l->n - 1].n;
    return ascii_find_ci_at(b, (size_t)(e - b), marker, sizeof(marker) - 1, 4) != NULL;
}

static bool
is_attribution(const struct span *s)
{
    struct span t = *s;

    span_trim(&t);
    if (t.n == 0 || t.p[t.n - 1] != ':')
        return false;
    return (t.n >= 6 && strncasecmp(t.p + t.n - 6, "wrote:", 6) == 0) ||
           (t.n >= 7 && strncasecmp(t.p + t.n - 7, "writes:", 7) == 0);
}

static bool
next_nonblank_is_quote(const struct lines *l, size_t i)
{
    struct span q;

    for (size_t j = i + 1; j < l->n; j++) {
        struct span t = l->v[j];

        span_trim(&t);
        if (t.n == 0)
            continue;
        return quote_strip(&l->v[j], &q);
    }
    return false;
}

struct body_split {
    struct textbuf own;
    struct text_lines own_lines; /* the lines of own, for the parsers */
    struct textbuf quoted;
    unsigned quoted_lines;
    bool inline_diff;
};

/* One own line, indexed as it is written: own_lines has room for every
 * line of the body. */
static int
add_own(struct body_split *bs, const struct span *s)
{
    bs->own_lines.v[bs->own_lines.n++] = (struct text_line){bs->own.len, s->n};
    return add_line(&bs->own, s->p, s->n);
}

/*
 * Split the body into the author's own lines and quoted lines. Attribution
 * lines ("On ... wrote:") before a quote and everything own after a
 * signature separator are dropped. Once a diff starts, lines are taken as
 * they are: a diff context line may well begin with "  >".
 */
static int
body_split(const struct lines *l, struct body_split *bs)
{
    bool in_diff = false, after_sig = false, rest_quoted = false;
    bool may_original = forward_marked(l);
    size_t last_own_start = SIZE_MAX;
    bool last_own_on = false;
    int r = 0;

    for (size_t i = 0; i < l->n && r >= 0; i++) {
        const struct span *s = &l->v[i];
        struct span q;

        if (!in_diff && !after_sig && !rest_quoted && diff_starts_at(l, i)) {
            in_diff = true;
            bs->inline_diff = true;
        }
        if (in_diff) {
            if (is_signature(s)) {
                after_sig = true;
                in_diff = false;
                continue;
            }
            r = add_own(bs, s);
            continue;
        }
        if (rest_quoted) {
            r = add_line(&bs->quoted, s->p, s->n);
            bs->quoted_lines++;
            continue;
        }
        if (quote_strip(s, &q)) {
            r = add_line(&bs->quoted, q.p, q.n);
            bs->quoted_lines++;
            continue;
        }
        if (is_forward_separator(s, may_original)) {
            rest_quoted = true;
            continue;
        }
        if (after_sig)
            continue;
        if (is_signature(s)) {
            after_sig = true;
            continue;
        }
        if (is_attribution(s) && next_nonblank_is_quote(l, i)) {
            struct span t = *s;

            span_trim(&t);
            /* A wrapped "On <date>, <name>\n<addr> wrote:" spans two lines. */
            if (!starts(t.p, t.n, "On ") && last_own_on && last_own_start != SIZE_MAX) {
                bs->own.len = last_own_start;
                bs->own.p[bs->own.len] = '\0';
                bs->own_lines.n--;
            }
            last_own_start = SIZE_MAX;
            last_own_on = false;
            continue;
        }
        last_own_start = bs->own.len;
        last_own_on = starts(s->p, s->n, "On ");
        r = add_own(bs, s);
    }
    return r < 0 ? r : 0;
}

/* A git format-patch file: "From <sha> ..." or a Subject: line up top. */
static bool
looks_like_format_patch(const struct lines *l)
{
    if (l->n > 0 && starts(l->v[0].p, l->v[0].n, "From "))
        return true;
    for (size_t i = 0; i < l->n && i < 30; i++) {
        if (l->v[i].n == 0)
            return false;
        if (starts(l->v[i].p, l->v[i].n, "Subject: "))
            return true;
    }
    return false;
}

/* Append a format-patch file to b without its mail header block. */
static int
add_format_patch(struct textbuf *b, const struct lines *l)
{
    size_t i = 0;
    int r = 0;

    while (i < l->n && l->v[i].n > 0)
        i++;
    if (i < l->n)
        i++;
    for (; i < l->n && r >= 0; i++)
        r = add_line(b, l->v[i].p, l->v[i].n);
    return r;
}

static int
add_lines(struct textbuf *b, const struct lines *l)
{
    int r = 0;

    for (size_t i = 0; i < l->n && r >= 0; i++)
        r = add_line(b, l->v[i].p, l->v[i].n);
    return r;
}

static bool
is_reply_subject(const char *subject)
{
    struct span s;

    if (subject == NULL)
        return false;
    s.p = subject;
    s.n = strlen(subject);
    span_trim(&s);
    return starts_ci(s.p, s.n, "re:") || starts_ci(s.p, s.n, "aw:");
}

/*
 * Does the author's own text read like a bug or security report? One
 * strong indicator (a kernel splat, a sanitizer name, a CVE id, a fuzzer,
 * an explicit reproducer, a class of web or library flaw) is enough; weaker words that also turn up
 * in ordinary discussion ("crash", "security", "overflow") need two distinct ones. Matches are
 * case-insensitive and must start at a word boundary. The subject is scanned too: "[bug report]"
 * and "KASAN: ..." live there.
 */
static const char *const report_strong[] = {
    "kasan",
    "ubsan",
    "kcsan",
    "kmsan",
    "call trace",
    "oops:",
    "bug: ",
    "warning: cpu:",
    "kernel panic",
    "general protection fault",
    "use-after-free",
    "use after free",
    "null pointer dereference",
    "null-ptr-deref",
    "out-of-bounds",
    "double free",
    "double-free",
    "cve-",
    "syzbot",
    "syzkaller",
    "steps to reproduce",
    "reproducer",
    "vulnerability",
    "vulnerabilities",
    "exploit",
    "addresssanitizer",
    "privilege escalation",
    "proof of concept",
    "bug report",
    "[bug",
    "kernel bug at",
    "static checker warning",
    /* The classes web and library advisories name. */
    "cross-site",
    "xss",
    "csrf",
    "ssrf",
    "sql injection",
    "command injection",
    "path traversal",
    "directory traversal",
    "request smuggling",
    "prototype pollution",
    "open redirect",
    "remote code execution",
    "information disclosure",
};
static const char *const report_weak[] = {
    "crash",
    "panic",
    "overflow",
    "security",
    "bug",
    "hang",
    "deadlock",
    "leak",
    "race",
    "reproduce",
    "regression",
    "corruption",
    "lockup",
    "backtrace",
    "stack trace",
    "segfault",
    "denial of service",
};

#define MESSAGE_N_STRONG (sizeof(report_strong) / sizeof(report_strong[0]))
#define MESSAGE_N_WEAK (sizeof(report_weak) / sizeof(report_weak[0]))

/* Words of both lists that say what a mail is about, not what went
 * wrong: "do you run a bounty for security bugs?" names no problem. A
 * question counts only its other words (asks_only()). */
static const char *const report_topic[] = {
    "cve-", "vulnerability", "vulnerabilities", "exploit", "bug report", "[bug", "security", "bug",
};

/* Per byte, the words (strong ones in the low bits, weak ones above)
 * whose first, and whose second, byte it is: one AND leaves the few
 * words worth comparing at a position. Built once (report_index_init())
 * and only read after that. */
struct report_index {
    uint64_t by_first[256], by_second[256];
    uint64_t topic; /* the bits of report_topic[]'s words */
};
static struct report_index report_ix;
static pthread_once_t report_ix_once = PTHREAD_ONCE_INIT;

static void
report_index_init(void)
{
    struct report_index *ix = &report_ix;

    _Static_assert(MESSAGE_N_WEAK <= 32, "weak_seen has a bit per word");
    _Static_assert(MESSAGE_N_STRONG + MESSAGE_N_WEAK <= 64, "a word mask has a bit per word");
    for (size_t k = 0; k < MESSAGE_N_STRONG + MESSAGE_N_WEAK; k++) {
        const char *w = k < MESSAGE_N_STRONG ? report_strong[k] : report_weak[k - MESSAGE_N_STRONG];

        ix->by_first[(unsigned char)w[0]] |= (uint64_t)1 << k;
        ix->by_second[(unsigned char)w[1]] |= (uint64_t)1 << k;
        for (size_t t = 0; t < sizeof(report_topic) / sizeof(report_topic[0]); t++)
            if (strcmp(w, report_topic[t]) == 0)
                ix->topic |= (uint64_t)1 << k;
    }
}

/* A strong word, or `need` different weak ones; the words of the mask
 * skip do not count. */
static bool
looks_like_report(const struct report_index *ix, const char *text, size_t len, int need,
                  uint64_t skip)
{
    uint32_t weak_seen = 0;

    /* Words must start at a word boundary: only those positions count. */
    for (size_t i = 0; i + 1 < len; i = next_word_start((const unsigned char *)text, i, len)) {
        unsigned char c = (unsigned char)text[i], c2;
        uint64_t cand;

        if (c >= 'A' && c <= 'Z')
            c = (unsigned char)(c - 'A' + 'a');
        if (ix->by_first[c] == 0)
            continue;
        /* Every word is at least two bytes long. */
        c2 = (unsigned char)text[i + 1];
        if (c2 >= 'A' && c2 <= 'Z')
            c2 = (unsigned char)(c2 - 'A' + 'a');
        for (cand = ix->by_first[c] & ix->by_second[c2] & ~skip; cand != 0; cand &= cand - 1) {
            size_t k = (size_t)__builtin_ctzll(cand);

            if (k < MESSAGE_N_STRONG) {
                if (starts_ci(text + i, len - i, report_strong[k]))
                    return true;
            } else if (starts_ci(text + i, len - i, report_weak[k - MESSAGE_N_STRONG])) {
                weak_seen |= 1u << (k - MESSAGE_N_STRONG);
                if (__builtin_popcount(weak_seen) >= need)
                    return true;
            }
        }
    }
    return __builtin_popcount(weak_seen) >= need;
}

/* The subject, the own text or the text attachments read like a report;
 * each on its own (looks_like_report()). need 0: any mail does. With
 * problem_only, the topic words (report_topic[]) do not count. */
static bool
reads_like_report(const char *subject, const struct textbuf *own, const struct textbuf *attached,
                  int need, bool problem_only)
{
    uint64_t skip;

    if (need == 0)
        return true;
    pthread_once(&report_ix_once, report_index_init);
    skip = problem_only ? report_ix.topic : 0;
    return (subject != NULL &&
            looks_like_report(&report_ix, subject, strlen(subject), need, skip)) ||
           looks_like_report(&report_ix, textbuf_str(own), own->len, need, skip) ||
           looks_like_report(&report_ix, textbuf_str(attached), attached->len, need, skip);
}

/* Words of a text that asks_only() still takes for a short question. */
#define MESSAGE_QUESTION_MAX_WORDS 150

/*
 * Whether the text only asks: it has a question, and no sentence of four
 * words or more ends in '.', '!' or ':' (a statement, or the lead-in of
 * something shown). Greetings, thanks and a sign-off ("Hello,", "Thanks,
 * Ana") end in none of them and are left out. A long text is not a
 * quick question, whatever its punctuation.
 */
static bool
asks_only(const char *s, size_t n)
{
    size_t words = 0, total = 0, questions = 0;
    bool in_word = false;

    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        bool at_end = i + 1 == n || s[i + 1] == ' ' || s[i + 1] == '\t' || s[i + 1] == '\n' ||
                      s[i + 1] == '\r';

        if (is_alnum(c) || c >= 0x80 || c == '\'' || c == '-') {
            if (!in_word && ++total > MESSAGE_QUESTION_MAX_WORDS)
                return false;
            words += !in_word;
            in_word = true;
            continue;
        }
        in_word = false;
        if (c == '?' && at_end) {
            questions += words > 0;
            words = 0;
        } else if ((c == '.' || c == '!' || c == ':') && at_end) {
            if (words >= 4)
                return false;
            words = 0;
        }
    }
    return questions > 0;
}

static bool
word_at_ci(const char *s, size_t n, const char *w)
{
    size_t k = strlen(w);

    return n >= k && strncasecmp(s, w, k) == 0 && (n == k || !is_alnum((unsigned char)s[k]));
}

/* s[0..n) names an AI tool: ChatGPT, Claude, ..., or "(a|an) (AI|LLM)". */
static bool
names_ai(const char *s, size_t n)
{
    static const char *const names[] = {"chatgpt", "claude", "copilot", "gemini", "gpt-", "ai",
                                        "llm",     "an ai",  "an llm",  "a llm",  "a ai"};

    while (n > 0 && (*s == ' ' || *s == '[' || *s == '(')) {
        s++;
        n--;
    }
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        if (names[i][strlen(names[i]) - 1] == '-' ? starts_ci(s, n, names[i])
                                                  : word_at_ci(s, n, names[i]))
            return true;
    }
    return false;
}

/* A co-author trailer naming an AI product; "AI" alone could be a name. */
static bool
names_ai_tool(const char *s, size_t n)
{
    static const char *const tools[] = {"chatgpt", "claude", "copilot", "gemini", "gpt-"};

    while (n > 0 && *s == ' ') {
        s++;
        n--;
    }
    for (size_t i = 0; i < sizeof(tools) / sizeof(tools[0]); i++)
        if (starts_ci(s, n, tools[i]))
            return true;
    return false;
}

/*
 * Whether line s (trimmed) discloses an AI origin: an Assisted-by:/
 * Generated-by:/AI-assisted-by: trailer, a Co-authored-by: or
 * Co-developed-by: naming an AI tool, "generated with/by/using <tool>" or
 * "I used (an) AI".
 */
static bool
line_discloses(struct span s)
{
    static const char *const verbs[] = {"with", "by", "using"};
    const char *p;

    span_trim(&s);
    if (starts_ci(s.p, s.n, "assisted-by:") || starts_ci(s.p, s.n, "generated-by:") ||
        starts_ci(s.p, s.n, "ai-assisted-by:"))
        return true;
    if ((starts_ci(s.p, s.n, "co-authored-by:") && names_ai_tool(s.p + 15, s.n - 15)) ||
        (starts_ci(s.p, s.n, "co-developed-by:") && names_ai_tool(s.p + 16, s.n - 16)))
        return true;
    for (p = s.p; (p = find_word_ci(p, s.n - (size_t)(p - s.p), "generated ")) != NULL;) {
        const char *q = p + 10;
        size_t rest = s.n - (size_t)(q - s.p);

        for (size_t v = 0; v < 3; v++) {
            size_t k = strlen(verbs[v]);

            if (word_at_ci(q, rest, verbs[v]) && names_ai(q + k, rest - k))
                return true;
        }
        p = q;
    }
    if ((p = find_word_ci(s.p, s.n, "i used ")) != NULL) {
        const char *q = p + 7;
        size_t rest = s.n - (size_t)(q - s.p);

        if (word_at_ci(q, rest, "ai") || word_at_ci(q, rest, "an ai"))
            return true;
    }
    return false;
}

/*
 * A disclosed AI origin on any line of text[0..len) (line_discloses()).
 * Each way to disclose needs one of "assisted-by:", "generated",
 * "co-authored-by:", "co-developed-by:" or "i used " (any case) in its
 * line, so only lines holding one are read in full: most mail has none,
 * and "generated" alone is common in patches. Each of those words has
 * "ed" at a known offset: one pass finds each "ed" (any case), sixteen
 * bytes a compare (ascii_find_pair_ci()), where a memchr() per 'd' or
 * 'D' stopped every twenty-odd bytes of English.
 */
static bool
has_disclosure(const char *text, size_t len)
{
    static const struct {
        const char *word;
        size_t d; /* offset of the 'd' of its "ed" */
    } words[] = {
        {"assisted-by:", 7},      {"generated", 8}, {"co-authored-by:", 10},
        {"co-developed-by:", 11}, {"i used ", 5},
    };
    const char *e = text + len;
    size_t i = 0;

    /* A pair at i ends at text[i + 1]: the last starts at len - 2. */
    while (len >= 2 && (i = ascii_find_pair_ci(text, i, len - 1, 'e', 'd')) < len - 1) {
        const char *p = text + i + 1, *start = p, *nl;
        bool found = false;

        i++;
        for (size_t k = 0; k < sizeof(words) / sizeof(words[0]) && !found; k++) {
            const char *w = p - words[k].d;

            found = (size_t)(p - text) >= words[k].d && (*w | 0x20) == words[k].word[0] &&
                    starts_ci(w, (size_t)(e - w), words[k].word);
        }
        if (!found)
            continue;
        while (start > text && start[-1] != '\n')
            start--;
        nl = memchr(p, '\n', (size_t)(e - p));
        if (line_discloses((struct span){start, nl ? (size_t)(nl - start) : (size_t)(e - start)}))
            return true;
        if (nl == NULL)
            break;
        /* The rest of this line was just read. */
        i = (size_t)(nl - text);
    }
    return false;
}

static bool
is_binary_attachment(const struct mime_part *p)
{
    static const char *const types[] = {
        "application/octet-stream",
        "application/x-executable",
        "application/x-msdownload",
        "application/x-sharedlib",
        "application/x-elf",
        "application/zip",
        "application/x-zip-compressed",
        "application/gzip",
        "application/x-gzip",
        "application/x-tar",
        "application/x-compressed-tar",
        "application/x-bzip2",
        "application/x-xz",
        "application/x-7z-compressed",
        "application/x-rar",
        "application/vnd.rar",
        "application/x-rar-compressed",
        "application/java-archive",
    };
    static const char *const exts[] = {".exe", ".bin", ".elf", ".ko", ".so", ".zip",
                                       ".tar", ".gz",  ".tgz", ".xz", ".7z", ".rar"};

    for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
        if (strcmp(p->content_type, types[i]) == 0)
            return true;
    if (p->filename != NULL) {
        size_t n = strlen(p->filename);

        for (size_t i = 0; i < sizeof(exts) / sizeof(exts[0]); i++) {
            size_t k = strlen(exts[i]);

            if (n > k && strcasecmp(p->filename + n - k, exts[i]) == 0)
                return true;
        }
    }
    return false;
}

void
message_note_limit(struct message *m, const char *name, size_t value)
{
    char text[96];

    m->truncated = true;
    m->measures[MEASURE_LIMIT_HIT] = 1.0;
    if (m->measure_evidence[MEASURE_LIMIT_HIT] != NULL)
        return;
    if (value > 0)
        snprintf(text, sizeof(text), "%s=%zu", name, value);
    else
        snprintf(text, sizeof(text), "%s", name);
    m->measure_evidence[MEASURE_LIMIT_HIT] = strdup(text);
}

/*
 * The inline text of v: its one body part as it is (the usual case, and
 * no copy), or its body parts joined in raw, each on lines of its own.
 * *ret borrows from v or raw.
 */
static int
body_text(const struct mime_view *v, struct textbuf *raw, const char **ret, size_t *ret_len)
{
    const struct mime_part *only = NULL;
    size_t n = 0;
    int r = 0;

    for (size_t i = 0; i < v->n_parts; i++) {
        if (v->parts[i].role == MIME_PART_BODY && v->parts[i].text != NULL) {
            only = &v->parts[i];
            n++;
        }
    }
    if (n == 1) {
        *ret = only->text;
        *ret_len = only->len;
        return 0;
    }
    for (size_t i = 0; i < v->n_parts && r >= 0; i++) {
        const struct mime_part *p = &v->parts[i];

        if (p->role != MIME_PART_BODY || p->text == NULL)
            continue;
        if (raw->len > 0 && raw->p[raw->len - 1] != '\n')
            r = textbuf_add(raw, "\n", 1);
        if (r >= 0)
            r = textbuf_add(raw, p->text, p->len);
    }
    if (r < 0)
        return r;
    *ret = textbuf_str(raw);
    *ret_len = raw->len;
    return 0;
}

/* Which line cap lines_split() hit: with lines left it cut a long line. */
static void
note_line_limit(struct message *m, const struct classifier_limits *limits, unsigned budget)
{
    if (budget == 0)
        message_note_limit(m, "max_lines", limits->max_lines);
    else
        message_note_limit(m, "max_line_bytes", limits->max_line_bytes);
}

/*
 * How many weak report words (report_weak[]) make m a report; a strong one
 * always does. Mail to a list needs two. Mail to a report address needs
 * one, however short it is: it names a problem, where a question to the
 * security team ("which PGP key?") names none and is not answered as a
 * report that lacks everything. The caller's word (as_report) needs none.
 * The envelope recipients decide when the MTA gave them: a copy of a list
 * mail that Cc's the security address reaches it in an envelope of its
 * own. Without them (a mailbox scanned offline) To: and Cc: stand in. A
 * mail in a thread (In-Reply-To:) follows up on a report, quoted or not:
 * it is not held to what a first report must contain.
 */
static bool
routed_to_reports(const struct message *m, const struct route *route)
{
    if (route == NULL)
        return false;
    if (route->n_rcpt > 0)
        return route_any_match(route->patterns, route->n_patterns, route->rcpt, route->n_rcpt);
    return route_any_match(route->patterns, route->n_patterns, (const char *const *)m->recipients.v,
                           m->recipients.n);
}

/* A Signed-off-by: trailer: the text is a commit log, the mail a patch
 * however it is sent. */
static bool
signed_off(const struct message *m)
{
    for (size_t i = 0; i < m->n_trailers; i++)
        if (strcasecmp(m->trailers[i].tag, "Signed-off-by") == 0)
            return true;
    return false;
}

/*
 * A diff in a first mail to a report address, not in a patch's form (no
 * [PATCH] subject, cover letter, format-patch file or sign-off): a report
 * with a suggested fix when it names a problem (the caller asks). The
 * report rules hold it to what a report must say; the rules for commit
 * logs do not apply to a text that is no commit log.
 */
static bool
suggests_fix(const struct message *m, bool reply_subject)
{
    return m->report_address && !reply_subject && m->in_reply_to == NULL;
}

/* The region holds a non-blank byte. */
static bool
has_text(const struct region *rg)
{
    for (size_t i = 0; rg->text != NULL && i < rg->len; i++)
        if (rg->text[i] != ' ' && rg->text[i] != '\t' && rg->text[i] != '\n' && rg->text[i] != '\r')
            return true;
    return false;
}

static int
report_words_needed(const struct message *m, const struct route *route)
{
    if (route == NULL || m->in_reply_to != NULL)
        return 2;
    if (route->as_report)
        return 0;
    return m->report_address ? 1 : 2;
}

int
message_build(const struct mime_view *v, const struct classifier_limits *limits,
              struct message **ret)
{
    return message_build_routed(v, limits, NULL, ret);
}

int
message_build_routed(const struct mime_view *v, const struct classifier_limits *limits,
                     const struct route *route, struct message **ret)
{
    struct message *m;
    struct body_split bs = {0};
    struct textbuf raw = {0}, patch = {0}, report = {0}, attached = {0};
    struct lines body = {0};
    unsigned budget = limits->max_lines;
    bool patch_part = false, format_patch = false, reply_subject, cover, trunc = false;
    int need;
    const struct text_lines *rlines = NULL;
    const char *rtext, *btext;
    size_t rlen, blen;
    int r;

    m = calloc(1, sizeof(*m));
    if (m == NULL)
        return -ENOMEM;
    m->html_only = v->has_html_only;
    if (v->limit != NULL)
        message_note_limit(m, v->limit, v->limit_value);

    r = build_headers(m, v);
    if (r < 0)
        goto out;

    for (size_t i = 0; i < v->n_parts; i++) {
        const struct mime_part *p = &v->parts[i];

        if (p->truncated)
            message_note_limit(m, "max_part_bytes", limits->max_part_bytes);
        if (p->role == MIME_PART_ATTACHMENT) {
            if (p->text == NULL) {
                m->attachments++;
                if (is_binary_attachment(p))
                    m->binary_attachments++;
            } else {
                /* Text attachments (logs, configs) feed the report facts. */
                r = textbuf_add(&attached, p->text, p->len);
                if (r >= 0)
                    r = textbuf_add(&attached, "\n", 1);
            }
        }
        if (r < 0)
            goto out;
    }
    /* What is left is a header name or value cut at its fixed size. */
    if (v->truncated && !m->truncated)
        message_note_limit(m, "header_bytes", 0);

    r = body_text(v, &raw, &btext, &blen);
    if (r < 0)
        goto out;
    r = lines_split(btext, blen, limits->max_line_bytes, &budget, &body, &trunc);
    if (r < 0)
        goto out;
    if (trunc)
        note_line_limit(m, limits, budget);
    trunc = false;
    /* Most of the body is the author's own: room for all of it at once
     * instead of a copy per doubling. */
    r = textbuf_reserve(&bs.own, blen + 1);
    if (r < 0)
        goto out;
    bs.own.p[0] = '\0'; /* an empty body is "" */
    bs.own_lines.v = malloc((body.n ? body.n : 1) * sizeof(*bs.own_lines.v));
    if (bs.own_lines.v == NULL) {
        r = -ENOMEM;
        goto out;
    }
    r = body_split(&body, &bs);
    if (r < 0)
        goto out;

    /* Attached patches: a format-patch file carries its own log; a bare
     * diff gets the mail's own text as its log. */
    for (size_t i = 0; i < v->n_parts; i++) {
        const struct mime_part *p = &v->parts[i];
        struct lines pl = {0};

        if (p->role != MIME_PART_PATCH || p->text == NULL)
            continue;
        r = lines_split(p->text, p->len, limits->max_line_bytes, &budget, &pl, &trunc);
        if (r < 0)
            goto out;
        if (trunc)
            note_line_limit(m, limits, budget);
        trunc = false;
        if (!patch_part) {
            format_patch = looks_like_format_patch(&pl);
            if (!format_patch)
                r = textbuf_add(&patch, textbuf_str(&bs.own), bs.own.len);
        }
        patch_part = true;
        if (r >= 0)
            r = format_patch ? add_format_patch(&patch, &pl) : add_lines(&patch, &pl);
        free(pl.v);
        if (r < 0)
            goto out;
    }
    r = patch_subject_parse(m);
    if (r < 0)
        goto out;
    reply_subject = is_reply_subject(m->subject);
    cover = m->psubj.tagged && m->psubj.index == 0 && m->psubj.total > 0 && !reply_subject;
    if (patch_part) {
        r = patch_parse(m, textbuf_str(&patch), patch.len, limits);
    } else if (bs.inline_diff || (m->psubj.tagged && !reply_subject)) {
        r = patch_parse_lines(m, textbuf_str(&bs.own), bs.own.len, &bs.own_lines, limits);
    }
    if (r < 0)
        goto out;
    m->cover_letter |= cover;

    m->report_address = routed_to_reports(m, route) || (route != NULL && route->as_report);
    need = report_words_needed(m, route);
    if (format_patch || cover || (m->psubj.tagged && !reply_subject) || signed_off(m))
        m->kind = CLASSIFIER_KIND_PATCH;
    else if (m->has_diff || patch_part || bs.inline_diff)
        m->kind = suggests_fix(m, reply_subject) &&
                          reads_like_report(m->subject, &bs.own, &attached, need, false)
                      ? CLASSIFIER_KIND_REPORT
                      : CLASSIFIER_KIND_PATCH;
    else if (reply_subject || (m->in_reply_to != NULL && bs.quoted_lines > 0))
        m->kind = CLASSIFIER_KIND_REPLY;
    else
        m->kind = CLASSIFIER_KIND_OTHER; /* or a report: decided after the parse */

    if (m->kind == CLASSIFIER_KIND_PATCH) {
        const struct region *cl = &m->regions[REGION_CHANGELOG];

        rtext = cl->text ? cl->text : "";
        rlen = cl->text ? cl->len : 0;
    } else if (attached.len == 0) {
        rtext = textbuf_str(&bs.own);
        rlen = bs.own.len;
        rlines = &bs.own_lines;
        m->report_of_body = true;
    } else {
        r = textbuf_add(&report, textbuf_str(&bs.own), bs.own.len);
        if (r >= 0)
            r = textbuf_add(&report, attached.p, attached.len);
        if (r < 0)
            goto out;
        rtext = textbuf_str(&report);
        rlen = report.len;
    }
    r = report_parse_lines(m, rtext, rlen, rlines, limits);
    if (r < 0)
        goto out;
    /* A question to the team (asks_only(), no code, nothing attached)
     * is a report only when it names a problem, not just a topic. */
    if (m->kind == CLASSIFIER_KIND_OTHER &&
        reads_like_report(m->subject, &bs.own, &attached, need,
                          need > 0 && attached.len == 0 && m->attachments == 0 &&
                              !has_text(&m->regions[REGION_CODE]) &&
                              asks_only(textbuf_str(&bs.own), bs.own.len)))
        m->kind = CLASSIFIER_KIND_REPORT;
    /* A program's mail (RFC 3834: an auto-reply, a bounce, a robot's
     * notice) is no one's report, however it reads. */
    if (m->auto_submitted && m->kind == CLASSIFIER_KIND_REPORT)
        m->kind = CLASSIFIER_KIND_OTHER;

    m->disclosure = has_disclosure(textbuf_str(&bs.own), bs.own.len) ||
                    (patch_part && has_disclosure(textbuf_str(&patch), patch.len));

    r = region_take(&m->regions[REGION_BODY], &bs.own);
    if (r >= 0)
        r = region_take(&m->regions[REGION_QUOTED], &bs.quoted);
    if (r < 0)
        goto out;
    for (unsigned i = 0; i < REGION__COUNT; i++) {
        if (m->regions[i].text == NULL) {
            m->regions[i].text = strdup("");
            if (m->regions[i].text == NULL) {
                r = -ENOMEM;
                goto out;
            }
            m->regions[i].len = 0;
        }
    }
    measure_compute(m);

    *ret = m;
    m = NULL;
    r = 0;
out:
    free(body.v);
    textbuf_release(&raw);
    textbuf_release(&patch);
    textbuf_release(&report);
    textbuf_release(&attached);
    textbuf_release(&bs.own);
    free(bs.own_lines.v);
    textbuf_release(&bs.quoted);
    message_free(m);
    return r;
}

struct message *
message_free(struct message *m)
{
    if (m == NULL)
        return NULL;
    free(m->subject);
    free(m->from);
    free(m->from_addr);
    free(m->message_id);
    free(m->in_reply_to);
    strv_release(&m->recipients);
    for (unsigned i = 0; i < REGION__COUNT; i++)
        region_release(&m->regions[i]);
    free(m->psubj.prefix);
    free(m->psubj.subsystem);
    free(m->psubj.summary);
    for (size_t i = 0; i < m->n_trailers; i++) {
        free(m->trailers[i].tag);
        free(m->trailers[i].value);
    }
    free(m->trailers);
    for (size_t i = 0; i < m->n_files; i++) {
        free(m->files[i].old_path);
        free(m->files[i].new_path);
    }
    free(m->files);
    free(m->hunks);
    strv_release(&m->versions);
    strv_release(&m->functions);
    strv_release(&m->paths);
    strv_release(&m->configs);
    strv_release(&m->urls);
    for (unsigned i = 0; i < MEASURE__COUNT; i++)
        free(m->measure_evidence[i]);
    free(m);
    return NULL;
}
