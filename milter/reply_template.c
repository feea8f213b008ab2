/*
 * reply_template.c - load a reply template: the built-in default (the
 * text of milter/reply.tmpl) or a file, split into text runs, newlines and
 * {placeholders} (reply_template.h). An unknown or unterminated
 * placeholder, a line over 998 bytes or invalid UTF-8 is a load error
 * with "file:line: reason".
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "file_read.h"
#include "reply_template.h"
#include "reply_text.h"

#define REPLY_PH_NAME_MAX 32 /* longest placeholder name looked for */

static const struct {
    const char *name;
    enum reply_seg_kind kind;
} reply_placeholders[] = {
    {"subject", SEG_SUBJECT},
    {"message_id", SEG_MESSAGE_ID},
    {"findings", SEG_FINDINGS},
    {"questions", SEG_QUESTIONS},
    {"disclosure_note", SEG_DISCLOSURE},
    {"threat_model_url", SEG_THREAT_MODEL_URL},
    {"security_bugs_url", SEG_SECURITY_BUGS_URL},
    {"score", SEG_SCORE},
};

/* The built-in templates, of the kernel and of another project (nothing
 * about the kernel, no links to its documents), share all else. The
 * kernel's must stay identical to milter/reply.tmpl (a unit test renders
 * both and compares). */
#define REPLY_TMPL_OPENING                                                                         \
    "Hello,\n"                                                                                     \
    "\n"                                                                                           \
    "This is an automatic reply to your message {message_id}\n"                                    \
    "with the subject \"{subject}\".\n"                                                            \
    "\n"                                                                                           \
    "Before a maintainer reads it, a filter checked it for the details that\n"
#define REPLY_TMPL_GAPS                                                                            \
    "maintainers ask for first. It found these gaps (score {score}):\n"                            \
    "\n"                                                                                           \
    "{findings}\n"                                                                                 \
    "\n"                                                                                           \
    "A maintainer would likely ask you:\n"                                                         \
    "\n"                                                                                           \
    "{questions}\n"                                                                                \
    "\n"                                                                                           \
    "{disclosure_note}\n"                                                                          \
    "\n"
#define REPLY_TMPL_CLOSING                                                                         \
    "If you can, please send the missing details in a reply to your original\n"                    \
    "message, keeping the same recipients. This reply is only a checklist;\n"                      \
    "it was written by a program and nobody reads answers to it.\n"                                \
    "\n"                                                                                           \
    "-- \n"                                                                                        \
    "slop-milter (automatic reply)\n"

static const char reply_default_template[] = REPLY_TMPL_OPENING
    "kernel " REPLY_TMPL_GAPS "Security reports are judged against the kernel's threat model:\n"
    "  {threat_model_url}\n"
    "How to report a security bug, and what a report needs:\n"
    "  {security_bugs_url}\n"
    "\n" REPLY_TMPL_CLOSING;

static const char reply_other_template[] = REPLY_TMPL_OPENING REPLY_TMPL_GAPS REPLY_TMPL_CLOSING;

struct reply_template *
reply_template_free(struct reply_template *t)
{
    if (t == NULL)
        return NULL;
    free(t->text);
    free(t->segs);
    free(t);
    return NULL;
}

static int
reply_template_push(struct reply_template *t, size_t *cap, enum reply_seg_kind kind, size_t off,
                    size_t len)
{
    if (kind == SEG_TEXT && len == 0)
        return 0;
    if (t->n_segs == *cap) {
        size_t ncap = *cap ? *cap * 2 : 64;
        struct reply_seg *s = realloc(t->segs, ncap * sizeof(*s));

        if (s == NULL)
            return -ENOMEM;
        t->segs = s;
        *cap = ncap;
    }
    t->segs[t->n_segs++] = (struct reply_seg){kind, off, len};
    return 0;
}

static int reply_template_fail(char *err, size_t errlen, const char *name, unsigned line, int r,
                               const char *fmt, ...) __attribute__((format(printf, 6, 7)));

static int
reply_template_fail(char *err, size_t errlen, const char *name, unsigned line, int r,
                    const char *fmt, ...)
{
    char reason[160];
    va_list ap;

    if (err == NULL || errlen == 0)
        return r;
    va_start(ap, fmt);
    vsnprintf(reason, sizeof(reason), fmt, ap);
    va_end(ap);
    snprintf(err, errlen, "%s:%u: %s", name, line, reason);
    return r;
}

/* Where reply_template_parse() stands in t->text. */
struct tmpl_parse {
    struct reply_template *t;
    const char *s;
    size_t len;
    size_t cap;        /* of t->segs */
    size_t lit;        /* start of the text run not yet pushed */
    size_t line_start; /* of the current line, for REPLY_LINE_MAX */
    unsigned line;
    const char *name; /* for errors: the file, or "(built-in template)" */
    char *err;
    size_t errlen;
};

static int
parse_push(struct tmpl_parse *p, enum reply_seg_kind kind, size_t off, size_t len)
{
    return reply_template_push(p->t, &p->cap, kind, off, len);
}

/* The line end (LF or CRLF) at *i: the line's text, then a newline. */
static int
parse_newline(struct tmpl_parse *p, size_t *i)
{
    bool crlf = p->s[*i] == '\r';
    int r;

    if (*i - p->line_start > REPLY_LINE_MAX)
        return reply_template_fail(p->err, p->errlen, p->name, p->line, -EINVAL,
                                   "line longer than %d bytes", REPLY_LINE_MAX);
    r = parse_push(p, SEG_TEXT, p->lit, *i - p->lit);
    if (r == 0)
        r = parse_push(p, SEG_NEWLINE, 0, 0);
    if (r < 0)
        return r;
    *i += crlf ? 2 : 1;
    p->lit = p->line_start = *i;
    p->line++;
    return 0;
}

/* The placeholder named by the n bytes at name; false for none. */
static bool
placeholder_kind(const char *name, size_t n, enum reply_seg_kind *ret)
{
    for (size_t k = 0; k < sizeof(reply_placeholders) / sizeof(*reply_placeholders); k++) {
        if (strlen(reply_placeholders[k].name) == n &&
            memcmp(reply_placeholders[k].name, name, n) == 0) {
            *ret = reply_placeholders[k].kind;
            return true;
        }
    }
    return false;
}

static int
unknown_placeholder(const struct tmpl_parse *p, const char *nm, size_t n)
{
    char shown[REPLY_PH_NAME_MAX + 1];
    size_t k;

    /* The name goes into an error message: show it cleaned. */
    for (k = 0; k < n && k < REPLY_PH_NAME_MAX; k++)
        shown[k] = (nm[k] >= 0x20 && nm[k] < 0x7f) ? nm[k] : '?';
    shown[k] = '\0';
    return reply_template_fail(p->err, p->errlen, p->name, p->line, -EINVAL,
                               "unknown placeholder '{%s}'", shown);
}

/* "{{" or a "{name}" at *i. */
static int
parse_brace(struct tmpl_parse *p, size_t *i)
{
    const char *s = p->s;
    enum reply_seg_kind kind;
    size_t end;
    int r = parse_push(p, SEG_TEXT, p->lit, *i - p->lit);

    if (r < 0)
        return r;
    if (*i + 1 < p->len && s[*i + 1] == '{') {
        /* "{{" is a literal brace: keep the first one. */
        r = parse_push(p, SEG_TEXT, *i, 1);
        *i += 2;
        p->lit = *i;
        return r;
    }
    for (end = *i + 1; end < p->len && end - *i <= REPLY_PH_NAME_MAX + 1; end++)
        if (s[end] == '}' || s[end] == '\n' || s[end] == '{')
            break;
    if (end >= p->len || s[end] != '}')
        return reply_template_fail(p->err, p->errlen, p->name, p->line, -EINVAL,
                                   "unterminated placeholder (write '{{' for '{')");
    if (!placeholder_kind(s + *i + 1, end - *i - 1, &kind))
        return unknown_placeholder(p, s + *i + 1, end - *i - 1);
    r = parse_push(p, kind, 0, 0);
    *i = end + 1;
    p->lit = *i;
    return r;
}

/* Any other character at *i: tab, printable ASCII or valid UTF-8. */
static int
parse_char(struct tmpl_parse *p, size_t *i)
{
    unsigned char c = (unsigned char)p->s[*i];
    size_t l = 1;

    if ((c < 0x20 && c != '\t') || c == 0x7f)
        return reply_template_fail(p->err, p->errlen, p->name, p->line, -EINVAL,
                                   "control character 0x%02x", c);
    if (c >= 0x80) {
        l = reply_char_len((const unsigned char *)p->s + *i, p->len - *i);
        if (l == 0)
            return reply_template_fail(p->err, p->errlen, p->name, p->line, -EINVAL,
                                       "invalid UTF-8");
    }
    *i += l;
    return 0;
}

/* Split text (owned by t, len bytes) into segments. */
static int
reply_template_parse(struct reply_template *t, size_t len, const char *name, char *err,
                     size_t errlen)
{
    struct tmpl_parse p = {
        .t = t, .s = t->text, .len = len, .line = 1, .name = name, .err = err, .errlen = errlen};
    int r = 0;

    for (size_t i = 0; i < len && r == 0;) {
        unsigned char c = (unsigned char)p.s[i];

        if (c == '\n' || (c == '\r' && i + 1 < len && p.s[i + 1] == '\n'))
            r = parse_newline(&p, &i);
        else if (c == '{')
            r = parse_brace(&p, &i);
        else
            r = parse_char(&p, &i);
    }
    if (r < 0)
        return r;
    if (len - p.line_start > REPLY_LINE_MAX)
        return reply_template_fail(err, errlen, name, p.line, -EINVAL, "line longer than %d bytes",
                                   REPLY_LINE_MAX);
    return parse_push(&p, SEG_TEXT, p.lit, len - p.lit);
}

int
reply_template_load(const char *path, struct reply_template **ret, char *err, size_t errlen)
{
    return reply_template_load_for(path, true, ret, err, errlen);
}

int
reply_template_load_for(const char *path, bool kernel, struct reply_template **ret, char *err,
                        size_t errlen)
{
    const char *name = path ? path : "(built-in template)";
    const char *builtin = kernel ? reply_default_template : reply_other_template;
    struct reply_template *t;
    size_t len = 0;
    int r;

    if (err != NULL && errlen > 0)
        err[0] = '\0';
    if (ret == NULL)
        return -EINVAL;
    t = calloc(1, sizeof(*t));
    if (t == NULL)
        return -ENOMEM;
    if (path == NULL) {
        len = strlen(builtin);
        t->text = strdup(builtin);
        r = t->text ? 0 : -ENOMEM;
    } else {
        r = file_read(path, REPLY_TEMPLATE_MAX, 0, &t->text, &len);
        if (r == -EFBIG)
            reply_template_fail(err, errlen, name, 0, r, "larger than %d bytes",
                                REPLY_TEMPLATE_MAX);
        else if (r < 0) {
            char eb[128];

            reply_template_fail(err, errlen, name, 0, r, "%s", strerror_r(-r, eb, sizeof(eb)));
        }
    }
    if (r < 0)
        goto out;
    /* r is 0 only with t->text set: the analyzer wrongly lets a failed
     * open() or read() leave errno 0. */
    // NOLINTNEXTLINE(clang-analyzer-core.NonNullParamChecker)
    if (memchr(t->text, '\0', len) != NULL) {
        r = reply_template_fail(err, errlen, name, 0, -EINVAL, "contains a NUL byte");
        goto out;
    }
    r = reply_template_parse(t, len, name, err, errlen);
    if (r < 0)
        goto out;
    *ret = t;
    t = NULL;
out:
    reply_template_free(t);
    return r;
}
