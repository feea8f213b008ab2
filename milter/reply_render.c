/*
 * reply_render.c - one complete reply from a template (see reply_render()
 * in reply.h): the headers, then the body with the findings, questions
 * and document links.
 *
 * Invariant: nothing from the mail goes into a header but In-Reply-To and
 * References of a well-formed Message-ID; the subject and evidence appear
 * in the body only, cut short, as quoted data, links removed. Every line
 * stays under 998 bytes. Thread-safe.
 */
#include <errno.h>
#include <stdbool.h>
#include <locale.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "reply_template.h"
#include "reply_text.h"

#define REPLY_DOC_BASE "https://docs.kernel.org/"
#define REPLY_FINDINGS_MAX 20  /* hits listed; the rest are counted */
#define REPLY_TEXT_MAX 600     /* bytes kept of a description or doc link */
#define REPLY_EVIDENCE_MAX 120 /* bytes shown of a hit's evidence */
#define REPLY_SUBJECT_SHOWN 80 /* bytes shown of the original subject */
#define REPLY_SUBJECT "Automatic reply: details missing from your message"
#define REPLY_FOLD 78      /* header lines are folded here */
#define REPLY_FROM_MAX 256 /* bytes kept of the configured From: */

static const char reply_q_version[] =
    "Which kernel version is affected, and does the problem still happen on current "
    "mainline or a supported stable release?";
/* The same question for another project than the kernel. */
static const char reply_q_version_other[] =
    "Which versions are affected (a release, or the commit you tested), and does the problem "
    "still happen on the current release?";

/*
 * What a maintainer would ask, keyed on words in the names of the rules
 * that hit. A key starting with '^' must be a prefix of the name.
 */
static const struct {
    const char *keys[8];
    const char *question;
} reply_questions[] = {
    {{"TEST"}, "How did you test this change (hardware or configuration, and what you ran)?"},
    {{"VERSION", "EOL"}, reply_q_version},
    {{"REPRO", "CRASH", "TRACE"}, "Can you share a reproducer (source or steps)?"},
    {{"^TM_", "THREAT", "SECURITY", "CVSS", "SEVERITY", "IMPACT"},
     "Which trust boundary does this cross on a correctly configured production system?"},
    {{"^LOCK_", "MUTEX", "KFREE", "PUT_DEVICE"},
     "Which object lifetime or locking rule is broken today, and on which code path?"},
    {{"FIXES"}, "Which commit introduced the problem (for a Fixes: tag)?"},
    {{"SIGN_OFF"}, "Can you add your own Signed-off-by, certifying the patch's origin?"},
    {{"^LOG_", "CP_COMMIT", "CHATBOT", "PLACEHOLDER", "COMMENT", "MARKDOWN", "STYLE", "FACTS_LATE"},
     "Can you say in a few sentences of your own what goes wrong and why this is the fix?"},
};
static const char reply_question_generic[] =
    "What problem did you observe, and how can a maintainer confirm it?";
static const char reply_disclosure_note[] =
    "If AI tools helped find this bug, it must be treated as public (security-bugs.rst).";

static bool
reply_rule_matches(const char *rule, const char *key)
{
    if (key[0] == '^')
        return strncmp(rule, key + 1, strlen(key + 1)) == 0;
    return strstr(rule, key) != NULL;
}

static void
reply_render_questions(struct textbuf *b, const struct classifier_result *res, bool other_project)
{
    bool any = false;

    for (size_t q = 0; q < sizeof(reply_questions) / sizeof(*reply_questions); q++) {
        bool hit = false;

        for (size_t h = 0; res != NULL && h < res->n_hits && !hit; h++) {
            const char *rule = res->hits[h].rule;

            if (rule == NULL || strncmp(rule, "__", 2) == 0)
                continue;
            for (size_t k = 0; k < 8 && reply_questions[q].keys[k] != NULL && !hit; k++)
                hit = reply_rule_matches(rule, reply_questions[q].keys[k]);
        }
        if (hit) {
            const char *text = reply_questions[q].question;

            if (other_project && text == reply_q_version)
                text = reply_q_version_other;
            reply_wrap(b, text, "- ", "  ");
            any = true;
        }
    }
    if (!any)
        reply_wrap(b, reply_question_generic, "- ", "  ");
}

/*
 * What the sender is shown: the findings about their mail, not the site's
 * own records. A learned finding says what this site's past mail looks
 * like, nothing the sender can act on; the evidence of the findings read
 * from the state names other people's mail and counts (a duplicate's
 * Message-ID); a measure's bare reading ("versions=0", "trace_lines=0")
 * is the scan's internals, which the description says in words.
 */
static const char *const reply_internal_rules[] = {"LEARNED_"};
static const char *const reply_internal_evidence[] = {"DUPLICATE", "SENDER_FLOOD"};

static bool
reply_rule_in(const char *rule, const char *const *names, size_t n, bool prefix)
{
    for (size_t i = 0; rule != NULL && i < n; i++)
        if (prefix ? strncmp(rule, names[i], strlen(names[i])) == 0 : strcmp(rule, names[i]) == 0)
            return true;
    return false;
}

/* "name=12" or "a=0, b=1.5": measures as the scan prints them. */
static bool
reply_is_measure_reading(const char *ev)
{
    const char *p = ev;

    do {
        size_t name = strspn(p, "abcdefghijklmnopqrstuvwxyz_0123456789");
        size_t num;

        if (name == 0 || p[name] != '=')
            return false;
        p += name + 1;
        num = strspn(p, "-0123456789.");
        if (num == 0)
            return false;
        p += num;
    } while (strncmp(p, ", ", 2) == 0 && (p += 2));
    return *p == '\0';
}

static bool
reply_evidence_shown(const struct classifier_hit *hit)
{
    size_t n = sizeof(reply_internal_evidence) / sizeof(reply_internal_evidence[0]);

    return hit->evidence != NULL && !reply_is_measure_reading(hit->evidence) &&
           !reply_rule_in(hit->rule, reply_internal_evidence, n, false);
}

/* A finding kept from the sender: internal rules and markers. */
static bool
reply_hit_hidden(const struct classifier_hit *hit)
{
    if (hit->rule != NULL && strncmp(hit->rule, "__", 2) == 0)
        return true;
    return reply_rule_in(hit->rule, reply_internal_rules,
                         sizeof(reply_internal_rules) / sizeof(reply_internal_rules[0]), true);
}

/* One finding: its sentence, its evidence and its document, cleaned;
 * false (b's error set) without memory. */
static bool
reply_render_finding(struct textbuf *b, const struct classifier_hit *hit, bool first)
{
    char *desc, *ev = NULL, *doc = NULL, *rule;
    struct textbuf line;
    bool ok = false;

    reply_buf_init(&line);
    desc = reply_clean_dup(hit->description ? hit->description : hit->rule, REPLY_TEXT_MAX);
    rule = reply_clean_dup(hit->rule ? hit->rule : "?", 64);
    if (reply_evidence_shown(hit))
        ev = reply_quote_dup(hit->evidence, REPLY_EVIDENCE_MAX);
    if (hit->doc != NULL)
        doc = reply_clean_dup(hit->doc, REPLY_TEXT_MAX);
    if (desc == NULL || rule == NULL || (reply_evidence_shown(hit) && ev == NULL) ||
        (hit->doc && doc == NULL)) {
        b->err = b->err ? b->err : -ENOMEM;
        goto out;
    }
    if (!first)
        textbuf_add(b, "\n", 1);
    /* Rule descriptions are phrases; the reply shows sentences. */
    if (desc[0] >= 'a' && desc[0] <= 'z')
        desc[0] = (char)(desc[0] - 'a' + 'A');
    textbuf_printf(&line, "%s (%s, %.1f points).", desc[0] ? desc : rule, rule, hit->score);
    if (line.err == 0)
        reply_wrap(b, line.p, "- ", "  ");
    else
        b->err = b->err ? b->err : line.err;
    if (ev != NULL && ev[0] != '\0') {
        textbuf_release(&line);
        textbuf_printf(&line, "Evidence: \"%s\"", ev);
        if (line.err == 0)
            reply_wrap(b, line.p, "  ", "    ");
    }
    if (doc != NULL && doc[0] != '\0') {
        textbuf_adds(b, "  See: ");
        textbuf_adds(b, doc);
        textbuf_add(b, "\n", 1);
    }
    ok = true;
out:
    textbuf_release(&line);
    free(desc);
    free(rule);
    free(ev);
    free(doc);
    return ok;
}

static void
reply_render_findings(struct textbuf *b, const struct classifier_result *res)
{
    size_t shown = 0, hidden = 0;

    for (size_t h = 0; res != NULL && h < res->n_hits; h++) {
        const struct classifier_hit *hit = &res->hits[h];

        if (reply_hit_hidden(hit))
            continue;
        if (shown == REPLY_FINDINGS_MAX) {
            hidden++;
            continue;
        }
        if (reply_render_finding(b, hit, shown == 0))
            shown++;
    }
    if (shown == 0)
        textbuf_adds(b, "- (no specific findings)\n");
    if (hidden > 0)
        textbuf_printf(b, "\n(and %zu more)\n", hidden);
}

static bool
reply_atext(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           (c != 0 && strchr("!#$%&'*+-/=?^_`{|}~", c) != NULL);
}

/* RFC 5322 dot-atom-text: atext runs joined by single dots. */
static bool
reply_dot_atom(const char *s, size_t n)
{
    if (n == 0 || s[0] == '.' || s[n - 1] == '.')
        return false;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '.' ? s[i + 1] == '.' : !reply_atext((unsigned char)s[i]))
            return false;
    }
    return true;
}

/*
 * Check and normalise a Message-ID, with or without its <>, into
 * "<id-left@id-right>" (RFC 5322
 * msg-id without the obsolete forms: dot-atom-text, '@', dot-atom-text or
 * a [no-fold-literal]); false when it is anything else, and the reply then
 * does not refer to it.
 */
static bool
reply_msgid(const char *s, char out[REPLY_MSGID_MAX])
{
    size_t len;
    const char *at;

    if (s == NULL)
        return false;
    while (*s == ' ' || *s == '\t')
        s++;
    len = strnlen(s, REPLY_MSGID_MAX + 1);
    while (len > 0 && (s[len - 1] == ' ' || s[len - 1] == '\t'))
        len--;
    /* The classifier hands it over without the brackets. */
    if (len >= 2 && s[0] == '<' && s[len - 1] == '>') {
        s++;
        len -= 2;
    }
    if (len == 0 || len + 2 >= REPLY_MSGID_MAX)
        return false;
    at = memchr(s, '@', len);
    if (at == NULL || !reply_dot_atom(s, (size_t)(at - s)))
        return false;
    {
        const char *r = at + 1;
        size_t rl = len - (size_t)(r - s);

        if (rl >= 2 && r[0] == '[' && r[rl - 1] == ']') {
            for (size_t i = 1; i + 1 < rl; i++)
                if (r[i] <= 0x20 || r[i] >= 0x7f || r[i] == '[' || r[i] == ']' || r[i] == '\\')
                    return false;
        } else if (!reply_dot_atom(r, rl)) {
            return false;
        }
    }
    out[0] = '<';
    memcpy(out + 1, s, len);
    out[len + 1] = '>';
    out[len + 2] = '\0';
    return true;
}

static void
reply_doc_url(struct textbuf *b, const char *base, const char *page)
{
    size_t before = b->len;
    size_t n;

    /* A profile without a document base ("") has no such page. */
    if (base != NULL && base[0] == '\0')
        return;
    n = reply_clean(b, base ? base : REPLY_DOC_BASE, REPLY_TEXT_MAX);
    if (n == 0) {
        textbuf_adds(b, REPLY_DOC_BASE);
    } else if (b->err == 0 && b->p[before + n - 1] != '/') {
        textbuf_add(b, "/", 1);
    }
    textbuf_adds(b, page);
}

/* The body line being built from the template, and what it held. */
struct body_line {
    struct textbuf text;
    bool had_ph, had_text;
    size_t blank_run; /* blank lines just written */
};

/* End the line (nl: at a template newline, not the end): a line of
 * placeholders that expanded to nothing is dropped, blank lines collapse. */
static void
body_end_line(struct textbuf *b, struct body_line *l, bool nl)
{
    struct textbuf *line = &l->text;
    bool blank = true;

    for (size_t k = 0; k < line->len; k++)
        if (line->p[k] != ' ' && line->p[k] != '\t' && line->p[k] != '\n')
            blank = false;
    if (nl)
        textbuf_add(line, "\n", 1);
    if (blank && l->had_ph && !l->had_text) {
        /* Drop it. */
    } else if (blank) {
        if (++l->blank_run <= 1 && line->len > 0)
            textbuf_add(b, "\n", 1);
    } else {
        /* Multi-line expansions end with '\n' already. */
        if (line->len >= 2 && line->p[line->len - 1] == '\n' && line->p[line->len - 2] == '\n')
            line->len--;
        textbuf_add(b, line->p ? line->p : "", line->len);
        l->blank_run = 0;
    }
    line->len = 0;
    l->had_ph = l->had_text = false;
    if (line->err != 0 && b->err == 0)
        b->err = line->err;
}

/* A placeholder's expansion into line. */
static void
body_expand(struct textbuf *line, enum reply_seg_kind kind, const struct reply_input *in,
            const char *subject, const char *msgid)
{
    const struct classifier_result *res = in->result;

    switch (kind) {
    case SEG_SUBJECT:
        textbuf_adds(line, subject);
        break;
    case SEG_MESSAGE_ID:
        textbuf_adds(line, msgid ? msgid : "(none)");
        break;
    case SEG_FINDINGS:
        reply_render_findings(line, res);
        break;
    case SEG_QUESTIONS:
        reply_render_questions(line, res, in->other_project);
        break;
    case SEG_DISCLOSURE:
        if (res != NULL && res->disclosure)
            reply_wrap(line, reply_disclosure_note, "", "");
        break;
    case SEG_THREAT_MODEL_URL:
        reply_doc_url(line, in->doc_base, "process/threat-model.html");
        break;
    case SEG_SECURITY_BUGS_URL:
        reply_doc_url(line, in->doc_base, "process/security-bugs.html");
        break;
    case SEG_SCORE:
        textbuf_printf(line, "%.1f", res ? res->score : 0.0);
        break;
    case SEG_TEXT:
    case SEG_NEWLINE:
        break;
    }
}

/* Render the body from the template: lines made only of placeholders that
 * expand to nothing are dropped, and runs of blank lines collapse. */
static void
reply_render_body(struct textbuf *b, const struct reply_template *t, const struct reply_input *in,
                  const char *subject, const char *msgid)
{
    struct body_line l = {.had_ph = false};

    reply_buf_init(&l.text);
    for (size_t i = 0; i <= t->n_segs && b->err == 0; i++) {
        const struct reply_seg *seg = i < t->n_segs ? &t->segs[i] : NULL;

        if (seg == NULL || seg->kind == SEG_NEWLINE) {
            body_end_line(b, &l, seg != NULL);
            continue;
        }
        if (seg->kind == SEG_TEXT) {
            textbuf_add(&l.text, t->text + seg->off, seg->len);
            for (size_t k = 0; k < seg->len; k++)
                if (t->text[seg->off + k] != ' ' && t->text[seg->off + k] != '\t')
                    l.had_text = true;
            continue;
        }
        body_expand(&l.text, seg->kind, in, subject, msgid);
        l.had_ph = true;
    }
    textbuf_release(&l.text);
    /* No trailing blank lines; exactly one final newline. */
    while (b->err == 0 && b->len > 1 && b->p[b->len - 1] == '\n' && b->p[b->len - 2] == '\n')
        b->len--;
    if (b->err == 0 && (b->len == 0 || b->p[b->len - 1] != '\n'))
        textbuf_add(b, "\n", 1);
}

/* Append "Name: value" folded at spaces so lines stay near REPLY_FOLD. */
static void
reply_header_folded(struct textbuf *b, const char *name, const char *value)
{
    size_t col = strlen(name) + 1;
    const char *p = value;
    bool first = true;

    textbuf_printf(b, "%s:", name);
    while (*p != '\0') {
        const char *end = strchr(p, ' ');
        size_t wlen = end ? (size_t)(end - p) : strlen(p);

        if (!first && col + 1 + wlen > REPLY_FOLD) {
            textbuf_add(b, "\n", 1);
            col = 0;
        }
        textbuf_add(b, " ", 1);
        textbuf_add(b, p, wlen);
        col += 1 + wlen;
        first = false;
        p += wlen;
        while (*p == ' ')
            p++;
    }
    textbuf_add(b, "\n", 1);
}

static int
reply_date(time_t now, char *out, size_t outlen)
{
    locale_t c_locale;
    struct tm tm;
    size_t n;

    if (localtime_r(&now, &tm) == NULL)
        return -EINVAL;
    c_locale = newlocale(LC_ALL_MASK, "C", (locale_t)0);
    if (c_locale == (locale_t)0)
        return -ENOMEM;
    n = strftime_l(out, outlen, "%a, %d %b %Y %H:%M:%S %z", &tm, c_locale);
    freelocale(c_locale);
    return n == 0 ? -EINVAL : 0;
}

/* Strip any number of leading "Re:" (any case) from a clean subject. */
static const char *
reply_strip_re(const char *s)
{
    for (;;) {
        while (*s == ' ')
            s++;
        if (strncasecmp(s, "re:", 3) != 0)
            return s;
        s += 3;
    }
}

/* Our reply's Message-ID, "<slop.RANDOM@host>", into own_id. */
static void
reply_own_id(char *own_id, size_t size, const char *host, time_t now)
{
    unsigned char rnd[12];

    if (getrandom(rnd, sizeof(rnd), GRND_NONBLOCK) != (ssize_t)sizeof(rnd)) {
        /* Uniqueness, not secrecy, is needed here. */
        uint64_t x = (uint64_t)now ^ ((uint64_t)getpid() << 32) ^ (uint64_t)(uintptr_t)own_id;

        for (size_t i = 0; i < sizeof(rnd); i++, x = x * 6364136223846793005ULL + 1)
            rnd[i] = (unsigned char)(x >> 56);
    }
    memcpy(own_id, "<slop.", 6);
    for (size_t i = 0; i < sizeof(rnd); i++)
        snprintf(own_id + 6 + 2 * i, 3, "%02x", rnd[i]);
    snprintf(own_id + 6 + 2 * sizeof(rnd), size - 6 - 2 * sizeof(rnd), "@%s>", host);
}

/* The reply's header up to its blank line. msgid: the checked Message-ID
 * of the mail answered, or NULL. */
static int
reply_render_header(struct textbuf *b, const struct reply_input *in, const char *from,
                    const char *to, const char *host, const char *date, const char *msgid)
{
    char own_id[6 + 2 * 12 + 1 + REPLY_HOST_MAX + 2];

    if (from != NULL && from[0] != '\0')
        reply_header_folded(b, "From", from);
    else
        textbuf_printf(b, "From: slop-milter <postmaster@%s>\n", host);
    textbuf_printf(b, "To: <%s>\n", to);
    /* Nothing from the mail goes into a header but a checked Message-ID. */
    textbuf_adds(b, "Subject: " REPLY_SUBJECT "\n");
    textbuf_printf(b, "Date: %s\n", date);
    reply_own_id(own_id, sizeof(own_id), host, in->now ? in->now : time(NULL));
    textbuf_printf(b, "Message-ID: %s\n", own_id);
    /* What comes back to us with it is known as ours (reply_token.c). */
    if (in->key != NULL) {
        char token[REPLY_TOKEN_LEN + 1];
        int r = reply_token_make(in->key, own_id, date, token);

        if (r < 0)
            return r;
        textbuf_printf(b, REPLY_TOKEN_HEADER ": %s\n", token);
    }
    if (msgid != NULL) {
        textbuf_printf(b, "In-Reply-To: %s\n", msgid);
        textbuf_printf(b, "References: %s\n", msgid);
    }
    textbuf_adds(b, "Auto-Submitted: auto-replied\n"
                    "X-Auto-Response-Suppress: All\n"
                    "MIME-Version: 1.0\n"
                    "Content-Type: text/plain; charset=utf-8\n"
                    "Content-Transfer-Encoding: 8bit\n"
                    "\n");
    return 0;
}

int
reply_render(const struct reply_template *t, const struct reply_input *in, char **ret_msg)
{
    char to[REPLY_ADDR_MAX + 1], msgid[REPLY_MSGID_MAX], host[REPLY_HOST_MAX + 1];
    char date[64];
    const char *subject_in, *msgid_in;
    char *subject = NULL, *from = NULL;
    bool have_msgid;
    struct textbuf b;
    int r;

    reply_buf_init(&b);
    if (t == NULL || in == NULL || ret_msg == NULL)
        return -EINVAL;
    if (!reply_addr(in->to, to))
        return -EINVAL;
    subject_in = in->subject ? in->subject : (in->result ? in->result->subject : NULL);
    msgid_in = in->message_id ? in->message_id : (in->result ? in->result->message_id : NULL);
    have_msgid = reply_msgid(msgid_in, msgid);
    reply_hostname(in->hostname, host);
    r = reply_date(in->now ? in->now : time(NULL), date, sizeof(date));
    if (r < 0)
        return r;

    subject = reply_quote_dup(reply_strip_re(subject_in ? subject_in : ""), REPLY_SUBJECT_SHOWN);
    if (in->from != NULL)
        from = reply_clean_dup(in->from, REPLY_FROM_MAX);
    if (subject == NULL || (in->from != NULL && from == NULL)) {
        r = -ENOMEM;
        goto out;
    }
    r = reply_render_header(&b, in, from, to, host, date, have_msgid ? msgid : NULL);
    if (r < 0)
        goto out;
    reply_render_body(&b, t, in, subject[0] ? subject : "(no subject)", have_msgid ? msgid : NULL);
    r = reply_buf_err(&b);
    if (r < 0)
        goto out;
    *ret_msg = b.p;
    b.p = NULL;
out:
    textbuf_release(&b);
    free(subject);
    free(from);
    return r;
}
