/*
 * message_field.c - read a mail's header fields into the message model.
 *
 * Limits: recipients at MESSAGE_MAX_RCPT, each address at
 * MESSAGE_MAX_ADDR bytes, a message id at MESSAGE_MAX_ID. Ownership: what
 * is copied belongs to the message; nothing borrows from the view.
 * Threading: no shared state.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "message_builder.h"
#include "message_field.h"

#define MESSAGE_MAX_RCPT 1000
#define MESSAGE_MAX_ID 998
#define MESSAGE_MAX_ADDR 320

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
        s.len = (size_t)(gt - s.p);
    } else {
        s.p = v;
        s.len = strlen(v);
    }
    span_trim(&s);
    if (s.len == 0)
        return NULL;
    if (s.len > MESSAGE_MAX_ID)
        s.len = MESSAGE_MAX_ID;
    return strndup(s.p, s.len);
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

/* The copies of the kept fields first[] that m holds. */
static int
copy_kept(struct message *m, const char *const first[KEPT__COUNT])
{
    if (first[KEPT_SUBJECT] != NULL && (m->subject = strdup(first[KEPT_SUBJECT])) == NULL)
        return -ENOMEM;
    if (first[KEPT_FROM] != NULL) {
        char a[MESSAGE_MAX_ADDR + 1];

        m->from = strdup(first[KEPT_FROM]);
        if (m->from == NULL)
            return -ENOMEM;
        if (addr_extract(m->from, strlen(m->from), a) > 0)
            m->from_addr = strdup(a);
    }
    if (first[KEPT_MESSAGE_ID] != NULL)
        m->message_id = msgid_extract(first[KEPT_MESSAGE_ID]);
    if (first[KEPT_IN_REPLY_TO] != NULL)
        m->in_reply_to = msgid_extract(first[KEPT_IN_REPLY_TO]);
    if (first[KEPT_AUTO_SUBMITTED] != NULL)
        m->auto_submitted = auto_submitted(first[KEPT_AUTO_SUBMITTED]);
    return 0;
}

/* Copy every field into b, the recipients into m, and point first[] at
 * the first value of each kept field. */
static int
read_fields(struct message *m, const struct mime_view *v, struct textbuf *b,
            const char *first[KEPT__COUNT])
{
    size_t size = 0;
    int r;

    /* The region in one allocation: a mail's header block is kilobytes,
     * which a buffer doubling from its default reaches in several. */
    for (size_t i = 0; i < v->n_headers; i++)
        size += strlen(v->headers[i].name) + 2 + strlen(v->headers[i].value) + 1;
    r = textbuf_reserve(b, size);
    if (r < 0)
        return r;
    b->p[0] = '\0'; /* no headers at all is "" */
    for (size_t i = 0; i < v->n_headers; i++) {
        const struct mime_header *mh = &v->headers[i];
        size_t nn = strlen(mh->name);
        enum kept_header k = kept_header(mh->name, nn);

        if (k == KEPT_RCPT) {
            r = add_addresses(&m->recipients, mh->value);
            if (r < 0)
                return r;
        } else if (k != KEPT_NONE && first[k] == NULL) {
            first[k] = mh->value;
        }
        r = add_header_line(b, mh->name, nn, mh->value, strlen(mh->value));
        if (r < 0)
            return r;
    }
    return 0;
}

int
message_field_read(struct message *m, const struct mime_view *v)
{
    const char *first[KEPT__COUNT] = {0};
    struct textbuf b = {0};
    int r;

    r = read_fields(m, v, &b, first);
    if (r >= 0)
        r = copy_kept(m, first);
    if (r >= 0)
        r = region_take(&m->regions[REGION_HEADERS], &b);
    if (r >= 0 && m->subject != NULL)
        r = textbuf_add(&b, m->subject, strlen(m->subject));
    if (r >= 0)
        r = region_take(&m->regions[REGION_SUBJECT], &b);
    textbuf_release(&b);
    return r;
}
