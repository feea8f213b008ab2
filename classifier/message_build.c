/*
 * message_build.c - build the message model from a decoded MIME view.
 *
 * message_build() reads only the plain view (no GMime here): it has the
 * fields read (message_field.c) and the body split (message_body.c),
 * picks the patch text (inline diff or attached patch) for patch_parse(),
 * decides the kind (message_kind.c), hands the author's own text to
 * report_parse() and finally computes the measures. Every region is
 * non-NULL text once built.
 *
 * Limits: text lines are capped at max_lines per message and cut at
 * max_line_bytes (on a UTF-8 boundary). Ownership: the message owns all it
 * holds and never borrows from the view. Threading: one message per
 * thread.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "measure.h"
#include "message_body.h"
#include "message_build.h"
#include "message_builder.h"
#include "message_disclosure.h"
#include "message_field.h"
#include "message_kind.h"
#include "message_note.h"
#include "patch_parse.h"
#include "patch_subject.h"
#include "report_parse.h"

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

/* Which line cap message_body_lines() hit: with lines left it cut a long line. */
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

/* One message_build_routed() call: what it builds, and the texts it
 * builds them from. */
struct build {
    struct message *m;
    const struct classifier_limits *limits;
    const struct route *route;
    struct body_split bs;
    struct textbuf raw, patch, report, attached;
    struct lines body;
    unsigned budget; /* lines left under max_lines */
    bool patch_part, format_patch, reply_subject, cover;
    int need; /* report_words_needed() */
};

/* The parts besides the body: attachments counted, text attachments
 * (logs, configs) gathered in b->attached, cut parts noted. */
static int
read_parts(struct build *b, const struct mime_view *v)
{
    struct message *m = b->m;
    int r = 0;

    for (size_t i = 0; i < v->n_parts && r >= 0; i++) {
        const struct mime_part *p = &v->parts[i];

        if (p->truncated)
            message_note_limit(m, "max_part_bytes", b->limits->max_part_bytes);
        if (p->role != MIME_PART_ATTACHMENT)
            continue;
        if (p->text == NULL) {
            m->attachments++;
            if (is_binary_attachment(p))
                m->binary_attachments++;
            continue;
        }
        /* Text attachments (logs, configs) feed the report facts. */
        r = textbuf_add(&b->attached, p->text, p->len);
        if (r >= 0)
            r = textbuf_add(&b->attached, "\n", 1);
    }
    if (r < 0)
        return r;
    /* What is left is a header name or value cut at its fixed size. */
    if (v->truncated && !m->truncated)
        message_note_limit(m, "header_bytes", 0);
    return 0;
}

/* The body's lines, split into own (with its line index) and quoted. */
static int
split_body(struct build *b, const struct mime_view *v)
{
    struct body_split *bs = &b->bs;
    const char *btext;
    size_t blen;
    bool trunc = false;
    int r;

    r = body_text(v, &b->raw, &btext, &blen);
    if (r < 0)
        return r;
    r = message_body_lines(btext, blen, b->limits->max_line_bytes, &b->budget, &b->body, &trunc);
    if (r < 0)
        return r;
    if (trunc)
        note_line_limit(b->m, b->limits, b->budget);
    /* Most of the body is the author's own: room for all of it at once
     * instead of a copy per doubling. */
    r = textbuf_reserve(&bs->own, blen + 1);
    if (r < 0)
        return r;
    bs->own.p[0] = '\0'; /* an empty body is "" */
    bs->own_lines.v = malloc((b->body.n ? b->body.n : 1) * sizeof(*bs->own_lines.v));
    if (bs->own_lines.v == NULL)
        return -ENOMEM;
    return message_body_split(&b->body, bs);
}

/* Attached patches into b->patch: a format-patch file carries its own
 * log; a bare diff gets the mail's own text as its log. */
static int
add_patch_parts(struct build *b, const struct mime_view *v)
{
    int r = 0;

    for (size_t i = 0; i < v->n_parts && r >= 0; i++) {
        const struct mime_part *p = &v->parts[i];
        struct lines pl = {0};
        bool trunc = false;

        if (p->role != MIME_PART_PATCH || p->text == NULL)
            continue;
        r = message_body_lines(p->text, p->len, b->limits->max_line_bytes, &b->budget, &pl, &trunc);
        if (r < 0)
            return r;
        if (trunc)
            note_line_limit(b->m, b->limits, b->budget);
        if (!b->patch_part) {
            b->format_patch = message_body_format_patch(&pl);
            if (!b->format_patch)
                r = textbuf_add(&b->patch, textbuf_str(&b->bs.own), b->bs.own.len);
        }
        b->patch_part = true;
        if (r >= 0)
            r = message_body_add_patch(&b->patch, &pl, b->format_patch);
        free(pl.v);
    }
    return r;
}

/* The subject's tag, then the patch: an attached one, or the own text
 * when it holds a diff or the subject is a patch's. */
static int
parse_patch(struct build *b)
{
    struct message *m = b->m;
    const struct body_split *bs = &b->bs;
    int r;

    r = patch_subject_parse(m);
    if (r < 0)
        return r;
    b->reply_subject = message_kind_reply_subject(m->subject);
    b->cover = m->psubj.tagged && m->psubj.index == 0 && m->psubj.total > 0 && !b->reply_subject;
    if (b->patch_part)
        r = patch_parse(m, textbuf_str(&b->patch), b->patch.len, b->limits);
    else if (bs->inline_diff || (m->psubj.tagged && !b->reply_subject))
        r = patch_parse_lines(m, textbuf_str(&bs->own), bs->own.len, &bs->own_lines, b->limits);
    if (r < 0)
        return r;
    m->cover_letter |= b->cover;
    return 0;
}

/* The kind by the mail's form; OTHER may still become a report once its
 * text is parsed (settle_kind()). */
static void
decide_kind(struct build *b)
{
    struct message *m = b->m;

    m->report_address = routed_to_reports(m, b->route) || (b->route != NULL && b->route->as_report);
    b->need = report_words_needed(m, b->route);
    if (b->format_patch || b->cover || (m->psubj.tagged && !b->reply_subject) || signed_off(m))
        m->kind = CLASSIFIER_KIND_PATCH;
    else if (m->has_diff || b->patch_part || b->bs.inline_diff)
        m->kind = suggests_fix(m, b->reply_subject) &&
                          message_kind_reads_like_report(m->subject, &b->bs.own, &b->attached,
                                                         b->need, false)
                      ? CLASSIFIER_KIND_REPORT
                      : CLASSIFIER_KIND_PATCH;
    else if (b->reply_subject || (m->in_reply_to != NULL && b->bs.quoted_lines > 0))
        m->kind = CLASSIFIER_KIND_REPLY;
    else
        m->kind = CLASSIFIER_KIND_OTHER;
}

/* The report facts: from a patch's changelog, or from the own text and
 * the text attachments. */
static int
parse_report(struct build *b)
{
    struct message *m = b->m;
    const struct text_lines *rlines = NULL;
    const char *rtext;
    size_t rlen;
    int r;

    if (m->kind == CLASSIFIER_KIND_PATCH) {
        const struct region *cl = &m->regions[REGION_CHANGELOG];

        rtext = cl->text ? cl->text : "";
        rlen = cl->text ? cl->len : 0;
    } else if (b->attached.len == 0) {
        rtext = textbuf_str(&b->bs.own);
        rlen = b->bs.own.len;
        rlines = &b->bs.own_lines;
        m->report_of_body = true;
    } else {
        r = textbuf_add(&b->report, textbuf_str(&b->bs.own), b->bs.own.len);
        if (r >= 0)
            r = textbuf_add(&b->report, b->attached.p, b->attached.len);
        if (r < 0)
            return r;
        rtext = textbuf_str(&b->report);
        rlen = b->report.len;
    }
    return report_parse_lines(m, rtext, rlen, rlines, b->limits);
}

/* Whether mail of kind OTHER is a report after all. */
static void
settle_kind(struct build *b)
{
    struct message *m = b->m;
    const struct textbuf *own = &b->bs.own;

    /* A question to the team (message_kind_asks_only(), no code, nothing
     * attached) is a report only when it names a problem, not just a
     * topic. */
    if (m->kind == CLASSIFIER_KIND_OTHER &&
        message_kind_reads_like_report(m->subject, own, &b->attached, b->need,
                                       b->need > 0 && b->attached.len == 0 && m->attachments == 0 &&
                                           !has_text(&m->regions[REGION_CODE]) &&
                                           message_kind_asks_only(textbuf_str(own), own->len)))
        m->kind = CLASSIFIER_KIND_REPORT;
    /* A program's mail (RFC 3834: an auto-reply, a bounce, a robot's
     * notice) is no one's report, however it reads. */
    if (m->auto_submitted && m->kind == CLASSIFIER_KIND_REPORT)
        m->kind = CLASSIFIER_KIND_OTHER;
}

/* The disclosure, the body and quoted regions, "" for every region left
 * empty, and the measures. */
static int
finish(struct build *b)
{
    struct message *m = b->m;
    int r;

    m->disclosure =
        message_disclosure_find(textbuf_str(&b->bs.own), b->bs.own.len) ||
        (b->patch_part && message_disclosure_find(textbuf_str(&b->patch), b->patch.len));
    r = region_take(&m->regions[REGION_BODY], &b->bs.own);
    if (r >= 0)
        r = region_take(&m->regions[REGION_QUOTED], &b->bs.quoted);
    if (r < 0)
        return r;
    for (unsigned i = 0; i < REGION__COUNT; i++) {
        if (m->regions[i].text == NULL) {
            m->regions[i].text = strdup("");
            if (m->regions[i].text == NULL)
                return -ENOMEM;
            m->regions[i].len = 0;
        }
    }
    measure_compute(m);
    return 0;
}

static void
build_release(struct build *b)
{
    free(b->body.v);
    textbuf_release(&b->raw);
    textbuf_release(&b->patch);
    textbuf_release(&b->report);
    textbuf_release(&b->attached);
    textbuf_release(&b->bs.own);
    free(b->bs.own_lines.v);
    textbuf_release(&b->bs.quoted);
    message_free(b->m);
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
    struct build b = {.limits = limits, .route = route, .budget = limits->max_lines};
    int r;

    b.m = calloc(1, sizeof(*b.m));
    if (b.m == NULL)
        return -ENOMEM;
    b.m->html_only = v->has_html_only;
    if (v->limit != NULL)
        message_note_limit(b.m, v->limit, v->limit_value);

    r = message_field_read(b.m, v);
    if (r >= 0)
        r = read_parts(&b, v);
    if (r >= 0)
        r = split_body(&b, v);
    if (r >= 0)
        r = add_patch_parts(&b, v);
    if (r >= 0)
        r = parse_patch(&b);
    if (r >= 0) {
        decide_kind(&b);
        r = parse_report(&b);
    }
    if (r >= 0) {
        settle_kind(&b);
        r = finish(&b);
    }
    if (r >= 0) {
        *ret = b.m;
        b.m = NULL;
        r = 0;
    }
    build_release(&b);
    return r;
}
