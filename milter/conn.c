/*
 * conn.c - per-connection and per-message state.
 *
 * Invariants: m->len <= m->max; no kept header value is longer than
 * m->max_header_size; at most m->max_headers fields and CONN_MAX_RCPTS
 * recipients are kept. The buffer is rebuilt in the form the classifier
 * parses: "Name: value" CRLF lines, an empty line, then the body bytes.
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "conn.h"
#include "membudget.h"
#include "snapshot.h"

struct conn *
conn_new(struct snapshot *snap)
{
    struct conn *c = calloc(1, sizeof(*c));

    if (c == NULL)
        return NULL;
    c->snap = snap;
    return c;
}

struct conn *
conn_free(struct conn *c)
{
    if (c == NULL)
        return NULL;
    msg_free(c->msg);
    snapshot_unref(c->snap);
    free(c);
    return NULL;
}

struct msg *
msg_new(size_t max)
{
    struct msg *m = calloc(1, sizeof(*m));

    if (m == NULL)
        return NULL;
    snprintf(m->queue_id, sizeof(m->queue_id), "NOQUEUE");
    m->max = max;
    m->max_headers = CONN_MAX_HEADERS;
    m->max_header_size = CONN_HEADER_MAX;
    clock_gettime(CLOCK_MONOTONIC, &m->started);
    m->arrived = time(NULL);
    return m;
}

struct msg *
msg_free(struct msg *m)
{
    if (m == NULL)
        return NULL;
    free(m->mail_from);
    for (size_t i = 0; i < m->n_rcpts; i++)
        free(m->rcpts[i].addr);
    free(m->rcpts);
    for (size_t i = 0; i < m->n_headers; i++) {
        free(m->headers[i].name);
        free(m->headers[i].value);
    }
    free(m->headers);
    free(m->subject);
    free(m->from);
    free(m->buf);
    membudget_release(m->reserved);
    membudget_trim(m->cap);
    free(m);
    return NULL;
}

static int
msg_fail(struct msg *m, int r)
{
    if (m->error == 0)
        m->error = r;
    return r;
}

const char *
conn_addr_strip(const char *arg, char *buf, size_t size)
{
    size_t len;

    if (arg == NULL)
        arg = "";
    while (*arg == ' ' || *arg == '\t')
        arg++;
    if (*arg == '<')
        arg++;
    len = strcspn(arg, ">");
    /* MAIL FROM:<a@b> SIZE=... arrives as one argument on some MTAs. */
    if (arg[len] == '\0')
        len = strcspn(arg, " \t");
    if (len >= size)
        len = size - 1;
    memcpy(buf, arg, len);
    buf[len] = '\0';
    return buf;
}

int
msg_set_sender(struct msg *m, const char *arg)
{
    char buf[CONN_ADDR_MAX];
    char *d = strdup(conn_addr_strip(arg, buf, sizeof(buf)));

    if (d == NULL)
        return msg_fail(m, -ENOMEM);
    free(m->mail_from);
    m->mail_from = d;
    return 0;
}

int
msg_add_rcpt(struct msg *m, const char *arg, bool protected)
{
    char buf[CONN_ADDR_MAX];
    struct msg_rcpt *v;

    m->n_rcpts_seen++;
    if (protected)
        m->n_protected++;
    if (m->n_rcpts >= CONN_MAX_RCPTS)
        return 0;
    v = realloc(m->rcpts, (m->n_rcpts + 1) * sizeof(*v));
    if (v == NULL)
        return msg_fail(m, -ENOMEM);
    m->rcpts = v;
    v[m->n_rcpts].addr = strdup(conn_addr_strip(arg, buf, sizeof(buf)));
    if (v[m->n_rcpts].addr == NULL)
        return msg_fail(m, -ENOMEM);
    v[m->n_rcpts].protected = protected;
    m->n_rcpts++;
    return 0;
}

void
msg_set_queue_id(struct msg *m, const char *id)
{
    size_t n = 0;

    if (id == NULL || *id == '\0')
        return;
    /* Queue ids go into log lines: keep them to safe characters. */
    for (; *id && n + 1 < sizeof(m->queue_id); id++)
        if (isalnum((unsigned char)*id) || *id == '.' || *id == '-' || *id == '_')
            m->queue_id[n++] = *id;
    if (n > 0)
        m->queue_id[n] = '\0';
}

int
msg_reserve(struct msg *m, size_t n)
{
    if (n > m->max)
        n = m->max;
    n *= MEMBUDGET_CHARGE;
    if (m->budget == 0 || n <= m->reserved)
        return 0;
    if (membudget_reserve(m->budget, n - m->reserved) < 0) {
        m->busy = true;
        return -ENOBUFS;
    }
    m->reserved = n;
    return 0;
}

/* Append to the buffer; what does not fit under max or the budget is dropped. */
static int
buf_add(struct msg *m, const char *data, size_t len)
{
    if (m->len + len > m->max) {
        len = m->max - m->len;
        m->oversize = true;
    }
    if (len == 0 || m->busy)
        return 0;
    if (m->len + len > m->cap) {
        size_t cap = m->cap ? m->cap : 16384;
        char *p;

        /* An announced size was reserved: allocate it in one go. */
        if (cap < m->reserved / MEMBUDGET_CHARGE)
            cap = m->reserved / MEMBUDGET_CHARGE;
        while (cap < m->len + len)
            cap *= 2;
        if (cap > m->max)
            cap = m->max;
        if (msg_reserve(m, cap) < 0)
            return 0;
        p = realloc(m->buf, cap);
        if (p == NULL)
            return msg_fail(m, -ENOMEM);
        m->buf = p;
        m->cap = cap;
    }
    memcpy(m->buf + m->len, data, len);
    m->len += len;
    return 0;
}

/* A header value into the buffer with every line break made CRLF. */
static int
buf_add_value(struct msg *m, const char *v, size_t len)
{
    size_t start = 0;
    int r = 0;

    for (size_t i = 0; i < len && r == 0; i++) {
        if (v[i] != '\n' && v[i] != '\r')
            continue;
        r = buf_add(m, v + start, i - start);
        if (r == 0)
            r = buf_add(m, "\r\n", 2);
        if (v[i] == '\r' && i + 1 < len && v[i + 1] == '\n')
            i++;
        start = i + 1;
    }
    if (r == 0)
        r = buf_add(m, v + start, len - start);
    return r;
}

static void
note_slop_header(struct msg *m, const char *name)
{
    for (size_t i = 0; i < m->n_seen; i++) {
        if (strcasecmp(m->seen[i].name, name) == 0) {
            m->seen[i].count++;
            return;
        }
    }
    if (m->n_seen >= CONN_MAX_SLOP_NAMES || strlen(name) >= VERDICT_NAME_MAX) {
        m->headers_truncated = true;
        return;
    }
    snprintf(m->slop_names[m->n_seen], VERDICT_NAME_MAX, "%s", name);
    m->seen[m->n_seen].name = m->slop_names[m->n_seen];
    m->seen[m->n_seen].count = 1;
    m->n_seen++;
}

/*
 * The first Subject, Message-ID and From are kept even past MaxHeaders (at
 * most three fields more): tagging must change the Subject there is, not
 * add a second one, and a reply needs the sender's From and Message-ID.
 */
static bool
late_key_field(const struct msg *m, const char *name)
{
    if (strcasecmp(name, "Subject") == 0)
        return m->subject == NULL;
    if (strcasecmp(name, "Message-ID") == 0)
        return !m->have_message_id;
    return strcasecmp(name, "From") == 0 && m->n_from == 1;
}

int
msg_add_header(struct msg *m, const char *name, const char *value)
{
    size_t vl;
    struct msg_header *h;
    int r;

    if (name == NULL)
        return 0;
    if (value == NULL)
        value = "";
    m->n_headers_seen++;
    if (strncasecmp(name, "X-Slop-", 7) == 0)
        note_slop_header(m, name);
    if (strcasecmp(name, "From") == 0)
        m->n_from++;
    if (m->n_headers >= m->max_headers && !late_key_field(m, name)) {
        m->headers_truncated = true;
        return 0;
    }
    vl = strlen(value);
    if (vl > m->max_header_size) {
        vl = m->max_header_size;
        m->headers_truncated = true;
    }
    h = realloc(m->headers, (m->n_headers + 1) * sizeof(*h));
    if (h == NULL)
        return msg_fail(m, -ENOMEM);
    m->headers = h;
    h = &m->headers[m->n_headers];
    h->name = strdup(name);
    h->value = strndup(value, vl);
    if (h->name == NULL || h->value == NULL) {
        free(h->name);
        free(h->value);
        return msg_fail(m, -ENOMEM);
    }
    m->n_headers++;
    if (m->subject == NULL && strcasecmp(name, "Subject") == 0) {
        m->subject = strndup(value, vl);
        if (m->subject == NULL)
            return msg_fail(m, -ENOMEM);
    }
    if (strcasecmp(name, "Message-ID") == 0)
        m->have_message_id = true;
    if (strcasecmp(name, "From") == 0 && m->n_from == 1) {
        m->from = strndup(value, vl);
        if (m->from == NULL)
            return msg_fail(m, -ENOMEM);
    }

    r = buf_add(m, name, strlen(name));
    if (r == 0)
        r = buf_add(m, ": ", 2);
    if (r == 0)
        r = buf_add_value(m, value, vl);
    if (r == 0)
        r = buf_add(m, "\r\n", 2);
    return r;
}

int
msg_end_headers(struct msg *m)
{
    if (m->in_body)
        return 0;
    m->in_body = true;
    return buf_add(m, "\r\n", 2);
}

int
msg_add_body(struct msg *m, const char *data, size_t len)
{
    if (!m->in_body) {
        int r = msg_end_headers(m);

        if (r < 0)
            return r;
    }
    return buf_add(m, data, len);
}

static size_t
line_end(const char *p, const char *end, size_t *ret_eol)
{
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);

    *ret_eol = nl ? 1 : 0;
    if (len > 0 && p[len - 1] == '\r') {
        len--;
        (*ret_eol)++;
    }
    return len;
}

/* Continuation lines (starting with a blank) at *pp joined to the value
 * (*value, vlen bytes in cap) with '\n'; *pp moves past them. */
static int
load_continuations(struct msg *m, const char **pp, const char *end, char **value, size_t *vlen,
                   size_t *cap)
{
    const char *p = *pp;

    while (p < end && (*p == ' ' || *p == '\t')) {
        size_t ceol, cl = line_end(p, end, &ceol);

        if (*vlen + cl + 2 > *cap) {
            size_t ncap = (*vlen + cl + 2) * 2;
            char *nv = realloc(*value, ncap);

            if (nv == NULL)
                return msg_fail(m, -ENOMEM);
            *value = nv;
            *cap = ncap;
        }
        (*value)[(*vlen)++] = '\n';
        memcpy(*value + *vlen, p, cl);
        *vlen += cl;
        p += cl + ceol;
    }
    *pp = p;
    return 0;
}

/*
 * The header field at *pp, "Name: value" and its continuation lines,
 * added as the MTA hands it (no leading blank after ':'); *pp moves past
 * it. Returns 0, 1 when the header ends here (an empty line, passed, or a
 * line that is no field: the rest is body, as a lenient MTA takes it), or
 * a negative errno.
 */
static int
load_field(struct msg *m, const char **pp, const char *end)
{
    const char *p = *pp, *colon, *v;
    size_t eol, ll = line_end(p, end, &eol);
    char name[VERDICT_NAME_MAX * 4];
    size_t nl, vlen, cap;
    char *value;
    int r;

    if (ll == 0) {
        *pp = p + eol;
        return 1;
    }
    colon = memchr(p, ':', ll);
    if (colon == NULL || colon == p || p[0] == ' ' || p[0] == '\t')
        return 1;
    nl = (size_t)(colon - p);
    while (nl > 0 && (p[nl - 1] == ' ' || p[nl - 1] == '\t'))
        nl--;
    if (nl >= sizeof(name))
        nl = sizeof(name) - 1;
    memcpy(name, p, nl);
    name[nl] = '\0';
    v = colon + 1;
    while (v < p + ll && (*v == ' ' || *v == '\t'))
        v++;
    vlen = (size_t)(p + ll - v);
    cap = vlen + 1;
    value = malloc(cap);
    if (value == NULL)
        return msg_fail(m, -ENOMEM);
    memcpy(value, v, vlen);
    p += ll + eol;
    r = load_continuations(m, &p, end, &value, &vlen, &cap);
    if (r == 0) {
        value[vlen] = '\0';
        r = msg_add_header(m, name, value);
    }
    free(value);
    *pp = p;
    return r;
}

int
msg_load_raw(struct msg *m, const char *raw, size_t len)
{
    const char *p = raw, *end = raw + len;
    int r = 0;

    while (p < end && r == 0)
        r = load_field(m, &p, end);
    if (r < 0)
        return r;
    r = msg_end_headers(m);
    /* Body lines reach a milter with CRLF ends. */
    while (r == 0 && p < end) {
        size_t eol, ll = line_end(p, end, &eol);

        r = msg_add_body(m, p, ll);
        if (r == 0 && eol > 0)
            r = msg_add_body(m, "\r\n", 2);
        p += ll + eol;
        if (m->oversize)
            break;
    }
    return r;
}

void
msg_verdict_input(const struct msg *m, struct verdict_input *ret)
{
    ret->seen = m->seen;
    ret->n_seen = m->n_seen;
    ret->subject = m->subject;
}
