/*
 * patch_subject.c - the subject's [PATCH ...] tag read into m->psubj:
 * prefix, version, index/total, RFC and RESEND, subsystem and summary,
 * and m->cover_letter for a "0/N" mail.
 *
 * Invariants: m->subject is read up to its NUL and never written; a reply
 * or forward prefix ("Re:", "Fwd:", ...) and untagged brackets are
 * skipped; only the first bracket naming PATCH or RFC is the tag.
 * Ownership: psubj.prefix, .subsystem and .summary belong to the message
 * (freed by message_free() or the next call).
 * Threading: no shared state; each call works on its own message.
 */
#include "patch_parser.h"
#include "patch_subject.h"

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
patch_subject_parse(struct message *m)
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

        ascii_trim(&t, &tl);
        ps->prefix = strndup(t, tl);
        if (ps->prefix == NULL)
            return -ENOMEM;
        subject_tag(ps, t, tl);
        if (ps->index == 0 && ps->total > 0)
            m->cover_letter = true;
    }

    len = strlen(rest);
    ascii_trim(&rest, &len);
    sublen = subject_subsystem_len(rest, len);
    if (sublen > 0) {
        ps->subsystem = strndup(rest, sublen);
        if (ps->subsystem == NULL)
            return -ENOMEM;
        rest += sublen + 1;
        len -= sublen + 1;
        ascii_trim(&rest, &len);
    }
    ps->summary = strndup(rest, len);
    if (ps->summary == NULL)
        return -ENOMEM;
    return 0;
}
