/*
 * reply.c - automatic replies: suppression checks, the template, the
 * rendered message and the sender thread (see reply.h for the contract).
 *
 * Invariants: every header line this file writes is built from sanitised
 * values (no byte below 0x20 but folding whitespace we insert ourselves),
 * so input can never add a header; every input-driven size is capped
 * (REPLY_* in reply.h and the caps below). The body is UTF-8 text with LF
 * line ends, no line longer than 998 bytes.
 *
 * Ownership and threading: templates are immutable after load and may be
 * shared. A reply_sender owns its queue and one worker thread; submitters
 * only take the queue mutex, never wait on I/O. The worker runs with all
 * signals blocked (the daemon's signal thread handles them), forks and
 * execs sendmail with no shell, and reaps exactly the pid it started.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <locale.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "reply.h"

#define REPLY_DOC_BASE "https://docs.kernel.org/"
#define REPLY_FINDINGS_MAX 20  /* hits listed; the rest are counted */
#define REPLY_TEXT_MAX 600     /* bytes kept of a description or doc link */
#define REPLY_EVIDENCE_MAX 120 /* bytes shown of a hit's evidence */
#define REPLY_SUBJECT_SHOWN 80 /* bytes shown of the original subject */
#define REPLY_QUOTE_SCAN 2048  /* bytes of mail text looked at for one quote */
#define REPLY_SUBJECT "Automatic reply: details missing from your message"
#define REPLY_LINE_MAX 998   /* RFC 5322 line limit, template lines too */
#define REPLY_WRAP 72        /* body paragraphs are wrapped here */
#define REPLY_FOLD 78        /* header lines are folded here */
#define REPLY_PH_NAME_MAX 32 /* longest placeholder name looked for */
#define REPLY_FROM_MAX 256   /* bytes kept of the configured From: */
#define REPLY_HOST_MAX 253
#define REPLY_SMTP_LINE_MAX 1000 /* bytes of one SMTP reply line kept */
#define REPLY_SMTP_LINES_MAX 100 /* lines of one multi-line SMTP reply */
#define REPLY_OUTPUT_MAX 512     /* bytes of sendmail's output kept */

/* ---- small helpers ---------------------------------------------------- */

/* A growing string with a sticky error; never exceeds REPLY_MESSAGE_MAX. */
struct rbuf {
    char *p;
    size_t len;
    size_t cap;
    int err;
};

static void
rbuf_add(struct rbuf *b, const char *s, size_t n)
{
    if (b->err != 0)
        return;
    if (n > REPLY_MESSAGE_MAX - b->len) {
        b->err = -EMSGSIZE;
        return;
    }
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 1024;
        char *p;

        while (cap < b->len + n + 1)
            cap *= 2;
        p = realloc(b->p, cap);
        if (p == NULL) {
            b->err = -ENOMEM;
            return;
        }
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

static void
rbuf_adds(struct rbuf *b, const char *s)
{
    rbuf_add(b, s, strlen(s));
}

static void rbuf_printf(struct rbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void
rbuf_printf(struct rbuf *b, const char *fmt, ...)
{
    char tmp[1024];
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
    va_end(ap);
    if (n < 0) {
        if (b->err == 0)
            b->err = -EINVAL;
        return;
    }
    rbuf_add(b, tmp, (size_t)n < sizeof(tmp) ? (size_t)n : sizeof(tmp) - 1);
}

/* Length of the valid UTF-8 sequence at s (at most n bytes), 0 if none. */
static size_t
utf8_seq(const unsigned char *s, size_t n)
{
    size_t len;
    uint32_t cp;

    if (n == 0)
        return 0;
    if (s[0] < 0x80)
        return 1;
    if (s[0] >= 0xc2 && s[0] <= 0xdf) {
        len = 2;
        cp = s[0] & 0x1f;
    } else if (s[0] >= 0xe0 && s[0] <= 0xef) {
        len = 3;
        cp = s[0] & 0x0f;
    } else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
        len = 4;
        cp = s[0] & 0x07;
    } else {
        return 0;
    }
    if (n < len)
        return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        cp = (cp << 6) | (s[i] & 0x3f);
    }
    if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
        (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    /* C1 controls are as unwelcome in a header as C0 ones. */
    if (cp >= 0x80 && cp < 0xa0)
        return 0;
    return len;
}

/*
 * Append s to b as one line of clean text: valid UTF-8 only (other bytes
 * become '?'), every control character and run of white space becomes one
 * space, no leading or trailing space, at most max bytes (cut on a
 * character boundary). Returns the number of bytes appended.
 */
static size_t
reply_clean(struct rbuf *b, const char *s, size_t max)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t n = s ? strlen(s) : 0;
    size_t out = 0;
    bool space = false;

    for (size_t i = 0; i < n;) {
        size_t len = utf8_seq(p + i, n - i);

        if (len == 1 && (p[i] < 0x20 || p[i] == 0x7f || p[i] == ' ')) {
            space = out > 0;
            i++;
            continue;
        }
        if (space) {
            if (out + 1 >= max)
                break;
            rbuf_add(b, " ", 1);
            out++;
            space = false;
        }
        if (len == 0) {
            if (out + 1 > max)
                break;
            rbuf_add(b, "?", 1);
            out++;
            i++;
            continue;
        }
        if (out + len > max)
            break;
        rbuf_add(b, (const char *)p + i, len);
        out += len;
        i += len;
    }
    return out;
}

/* Clean s into a new string (see reply_clean); NULL on ENOMEM. */
static char *
reply_clean_dup(const char *s, size_t max)
{
    struct rbuf b = {0};

    rbuf_add(&b, "", 0);
    reply_clean(&b, s, max);
    if (b.err != 0) {
        free(b.p);
        return NULL;
    }
    return b.p;
}

/* A word a mail client could turn into a link: a scheme ("://",
 * "mailto:"), "www.", or host/path ("evil.example/x"). */
static bool
reply_link_like(const char *w, size_t n)
{
    size_t host = 0, dot = 0;

    for (size_t i = 0; i < n; i++) {
        if ((i + 3 <= n && memcmp(w + i, "://", 3) == 0) ||
            (i + 4 <= n && strncasecmp(w + i, "www.", 4) == 0) ||
            (i + 7 <= n && strncasecmp(w + i, "mailto:", 7) == 0))
            return true;
    }
    while (host < n && w[host] != '/' &&
           ((w[host] >= 'a' && w[host] <= 'z') || (w[host] >= 'A' && w[host] <= 'Z') ||
            (w[host] >= '0' && w[host] <= '9') || w[host] == '-' || w[host] == '.' ||
            w[host] == '@')) {
        if (w[host] == '.')
            dot = host;
        host++;
    }
    /* A top-level label of two letters or more right before the '/'. */
    if (host < n && w[host] == '/' && dot > 0 && host - dot > 2) {
        for (size_t i = dot + 1; i < host; i++)
            if (!((w[i] >= 'a' && w[i] <= 'z') || (w[i] >= 'A' && w[i] <= 'Z')))
                return false;
        return true;
    }
    return false;
}

/*
 * Text taken from the mail, made fit to show as quoted data: clean (see
 * reply_clean), each link-like word replaced by "[link removed]", double
 * quotes made single so the quotation cannot be closed early, and cut to
 * max bytes at a word (or character) boundary, "..." marking the cut.
 * NULL on ENOMEM.
 */
static char *
reply_quote_dup(const char *s, size_t max)
{
    static const char removed[] = "[link removed]";
    char *clean = reply_clean_dup(s, REPLY_QUOTE_SCAN);
    struct rbuf b = {0};
    bool cut = false;

    if (clean == NULL)
        return NULL;
    rbuf_add(&b, "", 0);
    for (const char *p = clean; *p != '\0' && !cut;) {
        size_t wl = strcspn(p, " ");
        bool link = reply_link_like(p, wl);
        size_t outl = link ? sizeof(removed) - 1 : wl;
        size_t sep = b.len > 0 ? 1 : 0;
        size_t take = outl;

        if (b.len + sep + outl > max) {
            cut = true;
            if (b.len > 0 || link)
                break;
            /* One long word: whole characters up to max. */
            take = 0;
            while (take < wl) {
                size_t l = utf8_seq((const unsigned char *)p + take, wl - take);

                if (l == 0 || take + l > max)
                    break;
                take += l;
            }
        }
        if (sep)
            rbuf_add(&b, " ", 1);
        if (link) {
            rbuf_adds(&b, removed);
        } else {
            for (size_t i = 0; i < take; i++)
                rbuf_add(&b, p[i] == '"' ? "'" : p + i, 1);
        }
        p += wl;
        while (*p == ' ')
            p++;
    }
    if (cut || strlen(clean) >= REPLY_QUOTE_SCAN - 4)
        rbuf_adds(&b, "...");
    free(clean);
    if (b.err != 0) {
        free(b.p);
        return NULL;
    }
    return b.p;
}

/*
 * Append text (clean: single spaces) wrapped at REPLY_WRAP columns; the
 * first line starts with first, the others with indent. Ends with '\n'.
 */
static void
reply_wrap(struct rbuf *b, const char *text, const char *first, const char *indent)
{
    size_t col = strlen(first);
    const char *p = text;
    bool line_empty = true;

    rbuf_adds(b, first);
    while (*p != '\0') {
        const char *end = strchr(p, ' ');
        size_t wlen = end ? (size_t)(end - p) : strlen(p);

        if (!line_empty && col + 1 + wlen > REPLY_WRAP) {
            rbuf_add(b, "\n", 1);
            rbuf_adds(b, indent);
            col = strlen(indent);
            line_empty = true;
        }
        if (!line_empty) {
            rbuf_add(b, " ", 1);
            col++;
        }
        rbuf_add(b, p, wlen);
        col += wlen;
        line_empty = false;
        p += wlen;
        while (*p == ' ')
            p++;
    }
    rbuf_add(b, "\n", 1);
}

static bool
reply_ieq_prefix(const char *s, const char *prefix)
{
    return strncasecmp(s, prefix, strlen(prefix)) == 0;
}

/*
 * Extract a usable address from s (optionally in <>) into out. Usable:
 * 3..254 bytes of printable ASCII without white space or any of
 * <>()[],;:\" , one local part and one domain around the last '@', not
 * starting with '-' (it becomes a sendmail argument).
 */
static bool
reply_addr(const char *s, char out[REPLY_ADDR_MAX + 1])
{
    size_t len, at = 0;
    bool seen_at = false;

    if (s == NULL)
        return false;
    len = strnlen(s, REPLY_ADDR_MAX + 3);
    if (len >= 2 && s[0] == '<' && s[len - 1] == '>') {
        s++;
        len -= 2;
    }
    if (len < 3 || len > REPLY_ADDR_MAX || s[0] == '-')
        return false;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];

        if (c <= 0x20 || c >= 0x7f || strchr("<>()[],;:\\\"", c) != NULL)
            return false;
        if (c == '@') {
            at = i;
            seen_at = true;
        }
    }
    if (!seen_at || at == 0 || at == len - 1)
        return false;
    memcpy(out, s, len);
    out[len] = '\0';
    return true;
}

/* ---- suppression ------------------------------------------------------ */

static const char *const reply_system_exact[] = {
    "mailer-daemon", "mailer", "postmaster", "listserv", "majordomo",
    "nobody",        "bounce", "bounces",    "uucp",
};
static const char *const reply_system_prefix[] = {"owner-", "bounce-", "bounces-", "bounces+"};
static const char *const reply_system_suffix[] = {"-request", "-owner", "-bounces", "-relay"};
static const char *const reply_system_infix[] = {
    "noreply", "no-reply", "no_reply", "donotreply", "do-not-reply", "do_not_reply",
};

static bool
reply_system_local(const char *addr)
{
    char local[REPLY_ADDR_MAX + 1];
    const char *at = strrchr(addr, '@');
    size_t len = (size_t)(at - addr), base;

    for (size_t i = 0; i < len; i++)
        local[i] = (char)((addr[i] >= 'A' && addr[i] <= 'Z') ? addr[i] - 'A' + 'a' : addr[i]);
    local[len] = '\0';
    for (size_t i = 0; i < sizeof(reply_system_exact) / sizeof(*reply_system_exact); i++)
        if (strcmp(local, reply_system_exact[i]) == 0)
            return true;
    for (size_t i = 0; i < sizeof(reply_system_prefix) / sizeof(*reply_system_prefix); i++)
        if (strncmp(local, reply_system_prefix[i], strlen(reply_system_prefix[i])) == 0)
            return true;
    for (size_t i = 0; i < sizeof(reply_system_infix) / sizeof(*reply_system_infix); i++)
        if (strstr(local, reply_system_infix[i]) != NULL)
            return true;
    /* Suffixes are checked before any +detail (list-bounces+user=host). */
    base = strcspn(local, "+");
    local[base] = '\0';
    for (size_t i = 0; i < sizeof(reply_system_suffix) / sizeof(*reply_system_suffix); i++) {
        size_t sl = strlen(reply_system_suffix[i]);

        if (base >= sl && strcmp(local + base - sl, reply_system_suffix[i]) == 0)
            return true;
    }
    return false;
}

static bool
reply_own(const char *addr, const char *const *own, size_t n_own)
{
    char buf[REPLY_ADDR_MAX + 1];

    for (size_t i = 0; i < n_own; i++) {
        const char *o = own[i], *lt;
        size_t len;

        if (o == NULL)
            continue;
        while (*o == ' ' || *o == '\t')
            o++;
        /* "Name <addr>" as in ReplyFrom: compare the part in <>. */
        lt = strrchr(o, '<');
        if (lt != NULL) {
            const char *gt = strchr(lt, '>');

            if (gt == NULL)
                continue;
            o = lt + 1;
            len = (size_t)(gt - o);
        } else {
            len = strcspn(o, " \t");
        }
        if (len == 0 || len > REPLY_ADDR_MAX || o[0] == '@')
            continue;
        memcpy(buf, o, len);
        buf[len] = '\0';
        if (strcasecmp(buf, addr) == 0)
            return true;
    }
    return false;
}

/* The first word of a header value, lower-cased, for keyword tests. */
static void
reply_first_token(const char *value, char *out, size_t outlen)
{
    size_t n = 0;

    while (*value == ' ' || *value == '\t' || *value == '\r' || *value == '\n')
        value++;
    while (*value != '\0' && n + 1 < outlen &&
           ((*value >= 'a' && *value <= 'z') || (*value >= 'A' && *value <= 'Z') ||
            (*value >= '0' && *value <= '9') || *value == '-' || *value == '_')) {
        char c = *value++;

        out[n++] = (char)((c >= 'A' && c <= 'Z') ? c - 'A' + 'a' : c);
    }
    out[n] = '\0';
}

const char *
reply_suppress_reason(const char *env_sender, const struct reply_header *headers, size_t n_headers,
                      const char *const *own_addrs, size_t n_own)
{
    char addr[REPLY_ADDR_MAX + 1];
    char tok[32];
    size_t len;

    if (env_sender == NULL)
        return "null sender";
    while (*env_sender == ' ' || *env_sender == '\t')
        env_sender++;
    len = strlen(env_sender);
    while (len > 0 && (env_sender[len - 1] == ' ' || env_sender[len - 1] == '\t'))
        len--;
    if (len == 0 || (len == 2 && env_sender[0] == '<' && env_sender[1] == '>'))
        return "null sender";
    if (len != strlen(env_sender) || !reply_addr(env_sender, addr))
        return "bad sender";
    if (reply_own(addr, own_addrs, n_own))
        return "own address";
    if (reply_system_local(addr))
        return "system sender";

    for (size_t i = 0; i < n_headers; i++) {
        const char *name = headers[i].name;
        const char *value = headers[i].value ? headers[i].value : "";

        if (name == NULL)
            continue;
        if (strcasecmp(name, "Auto-Submitted") == 0) {
            reply_first_token(value, tok, sizeof(tok));
            if (strcmp(tok, "no") != 0)
                return "auto-submitted";
        } else if ((reply_ieq_prefix(name, "List-") && name[5] != '\0') ||
                   strcasecmp(name, "Mailing-List") == 0 ||
                   strcasecmp(name, "X-Mailing-List") == 0) {
            return "list header";
        } else if (strcasecmp(name, "Precedence") == 0) {
            reply_first_token(value, tok, sizeof(tok));
            if (strcmp(tok, "bulk") == 0 || strcmp(tok, "list") == 0 || strcmp(tok, "junk") == 0)
                return "precedence";
        } else if (strcasecmp(name, "X-Auto-Response-Suppress") == 0) {
            /* Any class named (All, OOF, AutoReply, DR...) covers us;
             * only an explicit None lets a reply through. */
            reply_first_token(value, tok, sizeof(tok));
            if (strcmp(tok, "none") != 0)
                return "auto-response-suppress";
        }
    }
    return NULL;
}

/* ---- template --------------------------------------------------------- */

enum reply_seg_kind {
    SEG_TEXT = 0,
    SEG_NEWLINE,
    SEG_SUBJECT,
    SEG_MESSAGE_ID,
    SEG_FINDINGS,
    SEG_QUESTIONS,
    SEG_DISCLOSURE,
    SEG_THREAT_MODEL_URL,
    SEG_SECURITY_BUGS_URL,
    SEG_SCORE,
};

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

struct reply_seg {
    enum reply_seg_kind kind;
    size_t off; /* SEG_TEXT: bytes in reply_template.text */
    size_t len;
};

struct reply_template {
    char *text;
    struct reply_seg *segs;
    size_t n_segs;
};

/* The built-in template: keep identical to milter/reply.tmpl (a unit
 * test renders both and compares). */
static const char reply_default_template[] =
    "Hello,\n"
    "\n"
    "This is an automatic reply to your message {message_id}\n"
    "with the subject \"{subject}\".\n"
    "\n"
    "Before a maintainer reads it, a filter checked it for the details that\n"
    "kernel maintainers ask for first. It found these gaps (score {score}):\n"
    "\n"
    "{findings}\n"
    "\n"
    "A maintainer would likely ask you:\n"
    "\n"
    "{questions}\n"
    "\n"
    "{disclosure_note}\n"
    "\n"
    "Security reports are judged against the kernel's threat model:\n"
    "  {threat_model_url}\n"
    "How to report a security bug, and what a report needs:\n"
    "  {security_bugs_url}\n"
    "\n"
    "If you can, please send the missing details in a reply to your original\n"
    "message, keeping the same recipients. This reply is only a checklist;\n"
    "it was written by a program and nobody reads answers to it.\n"
    "\n"
    "-- \n"
    "slop-milter (automatic reply)\n";

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

/* Split text (owned by t, len bytes) into segments. */
static int
reply_template_parse(struct reply_template *t, size_t len, const char *name, char *err,
                     size_t errlen)
{
    const char *s = t->text;
    size_t cap = 0, lit = 0, line_start = 0;
    unsigned line = 1;
    int r;

    for (size_t i = 0; i < len;) {
        unsigned char c = (unsigned char)s[i];

        if (c == '\n' || (c == '\r' && i + 1 < len && s[i + 1] == '\n')) {
            if (i - line_start > REPLY_LINE_MAX)
                return reply_template_fail(err, errlen, name, line, -EINVAL,
                                           "line longer than %d bytes", REPLY_LINE_MAX);
            r = reply_template_push(t, &cap, SEG_TEXT, lit, i - lit);
            if (r == 0)
                r = reply_template_push(t, &cap, SEG_NEWLINE, 0, 0);
            if (r < 0)
                return r;
            i += c == '\r' ? 2 : 1;
            lit = line_start = i;
            line++;
            continue;
        }
        if (c == '{') {
            size_t end, n;
            bool found = false;

            r = reply_template_push(t, &cap, SEG_TEXT, lit, i - lit);
            if (r < 0)
                return r;
            if (i + 1 < len && s[i + 1] == '{') {
                /* "{{" is a literal brace: keep the first one. */
                r = reply_template_push(t, &cap, SEG_TEXT, i, 1);
                if (r < 0)
                    return r;
                i += 2;
                lit = i;
                continue;
            }
            for (end = i + 1; end < len && end - i <= REPLY_PH_NAME_MAX + 1; end++)
                if (s[end] == '}' || s[end] == '\n' || s[end] == '{')
                    break;
            if (end >= len || s[end] != '}')
                return reply_template_fail(err, errlen, name, line, -EINVAL,
                                           "unterminated placeholder (write '{{' for '{')");
            n = end - i - 1;
            for (size_t k = 0; k < sizeof(reply_placeholders) / sizeof(*reply_placeholders); k++) {
                if (strlen(reply_placeholders[k].name) == n &&
                    memcmp(reply_placeholders[k].name, s + i + 1, n) == 0) {
                    r = reply_template_push(t, &cap, reply_placeholders[k].kind, 0, 0);
                    if (r < 0)
                        return r;
                    found = true;
                    break;
                }
            }
            if (!found) {
                char shown[REPLY_PH_NAME_MAX + 1];
                size_t k;

                /* The name goes into an error message: show it cleaned. */
                for (k = 0; k < n && k < REPLY_PH_NAME_MAX; k++)
                    shown[k] = (s[i + 1 + k] >= 0x20 && s[i + 1 + k] < 0x7f) ? s[i + 1 + k] : '?';
                shown[k] = '\0';
                return reply_template_fail(err, errlen, name, line, -EINVAL,
                                           "unknown placeholder '{%s}'", shown);
            }
            i = end + 1;
            lit = i;
            continue;
        }
        if ((c < 0x20 && c != '\t') || c == 0x7f)
            return reply_template_fail(err, errlen, name, line, -EINVAL, "control character 0x%02x",
                                       c);
        if (c >= 0x80) {
            size_t l = utf8_seq((const unsigned char *)s + i, len - i);

            if (l == 0)
                return reply_template_fail(err, errlen, name, line, -EINVAL, "invalid UTF-8");
            i += l;
            continue;
        }
        i++;
    }
    if (len - line_start > REPLY_LINE_MAX)
        return reply_template_fail(err, errlen, name, line, -EINVAL, "line longer than %d bytes",
                                   REPLY_LINE_MAX);
    return reply_template_push(t, &cap, SEG_TEXT, lit, len - lit);
}

/* Read at most REPLY_TEMPLATE_MAX bytes of path into a new string. */
static int
reply_read_file(const char *path, char **ret, size_t *ret_len)
{
    char *buf = NULL;
    size_t len = 0;
    int fd, r = 0;

    fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0)
        return -errno;
    buf = malloc(REPLY_TEMPLATE_MAX + 2);
    if (buf == NULL) {
        r = -ENOMEM;
        goto out;
    }
    for (;;) {
        ssize_t n = read(fd, buf + len, REPLY_TEMPLATE_MAX + 1 - len);

        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            r = -errno;
            goto out;
        }
        if (n == 0)
            break;
        len += (size_t)n;
        if (len > REPLY_TEMPLATE_MAX) {
            r = -EFBIG;
            goto out;
        }
    }
    buf[len] = '\0';
    *ret = buf;
    *ret_len = len;
    buf = NULL;
out:
    free(buf);
    close(fd);
    return r;
}

int
reply_template_load(const char *path, struct reply_template **ret, char *err, size_t errlen)
{
    const char *name = path ? path : "(built-in template)";
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
        len = sizeof(reply_default_template) - 1;
        t->text = strdup(reply_default_template);
        r = t->text ? 0 : -ENOMEM;
    } else {
        r = reply_read_file(path, &t->text, &len);
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

/* ---- rendering -------------------------------------------------------- */

/*
 * What a maintainer would ask, keyed on words in the names of the rules
 * that hit. A key starting with '^' must be a prefix of the name.
 */
static const struct {
    const char *keys[8];
    const char *question;
} reply_questions[] = {
    {{"TEST"}, "How did you test this change (hardware or configuration, and what you ran)?"},
    {{"VERSION", "EOL"},
     "Which kernel version is affected, and does the problem still happen on current "
     "mainline or a supported stable release?"},
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
reply_render_questions(struct rbuf *b, const struct classifier_result *res)
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
            reply_wrap(b, reply_questions[q].question, "- ", "  ");
            any = true;
        }
    }
    if (!any)
        reply_wrap(b, reply_question_generic, "- ", "  ");
}

static void
reply_render_findings(struct rbuf *b, const struct classifier_result *res)
{
    size_t shown = 0, hidden = 0;

    for (size_t h = 0; res != NULL && h < res->n_hits; h++) {
        const struct classifier_hit *hit = &res->hits[h];
        char *desc, *ev = NULL, *doc = NULL, *rule;
        struct rbuf line = {0};

        if (hit->rule != NULL && strncmp(hit->rule, "__", 2) == 0)
            continue;
        if (shown == REPLY_FINDINGS_MAX) {
            hidden++;
            continue;
        }
        desc = reply_clean_dup(hit->description ? hit->description : hit->rule, REPLY_TEXT_MAX);
        rule = reply_clean_dup(hit->rule ? hit->rule : "?", 64);
        if (hit->evidence != NULL)
            ev = reply_quote_dup(hit->evidence, REPLY_EVIDENCE_MAX);
        if (hit->doc != NULL)
            doc = reply_clean_dup(hit->doc, REPLY_TEXT_MAX);
        if (desc == NULL || rule == NULL || (hit->evidence && ev == NULL) ||
            (hit->doc && doc == NULL)) {
            b->err = b->err ? b->err : -ENOMEM;
        } else {
            if (shown > 0)
                rbuf_add(b, "\n", 1);
            /* Rule descriptions are phrases; the reply shows sentences. */
            if (desc[0] >= 'a' && desc[0] <= 'z')
                desc[0] = (char)(desc[0] - 'a' + 'A');
            rbuf_printf(&line, "%s (%s, %.1f points).", desc[0] ? desc : rule, rule, hit->score);
            if (line.err == 0)
                reply_wrap(b, line.p, "- ", "  ");
            else
                b->err = b->err ? b->err : line.err;
            if (ev != NULL && ev[0] != '\0') {
                free(line.p);
                line = (struct rbuf){0};
                rbuf_printf(&line, "Evidence: \"%s\"", ev);
                if (line.err == 0)
                    reply_wrap(b, line.p, "  ", "    ");
            }
            if (doc != NULL && doc[0] != '\0') {
                rbuf_adds(b, "  See: ");
                rbuf_adds(b, doc);
                rbuf_add(b, "\n", 1);
            }
            shown++;
        }
        free(line.p);
        free(desc);
        free(rule);
        free(ev);
        free(doc);
    }
    if (shown == 0)
        rbuf_adds(b, "- (no specific findings)\n");
    if (hidden > 0)
        rbuf_printf(b, "\n(and %zu more)\n", hidden);
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
reply_doc_url(struct rbuf *b, const char *base, const char *page)
{
    size_t before = b->len;
    size_t n;

    n = reply_clean(b, base ? base : REPLY_DOC_BASE, REPLY_TEXT_MAX);
    if (n == 0) {
        rbuf_adds(b, REPLY_DOC_BASE);
    } else if (b->err == 0 && b->p[before + n - 1] != '/') {
        rbuf_add(b, "/", 1);
    }
    rbuf_adds(b, page);
}

/* Render the body from the template: lines made only of placeholders that
 * expand to nothing are dropped, and runs of blank lines collapse. */
static void
reply_render_body(struct rbuf *b, const struct reply_template *t, const struct reply_input *in,
                  const char *subject, const char *msgid)
{
    const struct classifier_result *res = in->result;
    struct rbuf line = {0};
    bool had_ph = false, had_text = false;
    size_t blank_run = 0;

    for (size_t i = 0; i <= t->n_segs && b->err == 0; i++) {
        const struct reply_seg *seg = i < t->n_segs ? &t->segs[i] : NULL;

        if (seg == NULL || seg->kind == SEG_NEWLINE) {
            bool blank = true;

            for (size_t k = 0; k < line.len; k++)
                if (line.p[k] != ' ' && line.p[k] != '\t' && line.p[k] != '\n')
                    blank = false;
            if (seg != NULL)
                rbuf_add(&line, "\n", 1);
            if (blank && had_ph && !had_text) {
                /* Drop it. */
            } else if (blank) {
                if (++blank_run <= 1 && line.len > 0)
                    rbuf_add(b, "\n", 1);
            } else {
                /* Multi-line expansions end with '\n' already. */
                if (line.len >= 2 && line.p[line.len - 1] == '\n' && line.p[line.len - 2] == '\n')
                    line.len--;
                rbuf_add(b, line.p ? line.p : "", line.len);
                blank_run = 0;
            }
            line.len = 0;
            had_ph = had_text = false;
            if (line.err != 0 && b->err == 0)
                b->err = line.err;
            continue;
        }
        switch (seg->kind) {
        case SEG_TEXT:
            rbuf_add(&line, t->text + seg->off, seg->len);
            for (size_t k = 0; k < seg->len; k++)
                if (t->text[seg->off + k] != ' ' && t->text[seg->off + k] != '\t')
                    had_text = true;
            break;
        case SEG_SUBJECT:
            rbuf_adds(&line, subject);
            break;
        case SEG_MESSAGE_ID:
            rbuf_adds(&line, msgid ? msgid : "(none)");
            break;
        case SEG_FINDINGS:
            reply_render_findings(&line, res);
            break;
        case SEG_QUESTIONS:
            reply_render_questions(&line, res);
            break;
        case SEG_DISCLOSURE:
            if (res != NULL && res->disclosure)
                reply_wrap(&line, reply_disclosure_note, "", "");
            break;
        case SEG_THREAT_MODEL_URL:
            reply_doc_url(&line, in->doc_base, "process/threat-model.html");
            break;
        case SEG_SECURITY_BUGS_URL:
            reply_doc_url(&line, in->doc_base, "process/security-bugs.html");
            break;
        case SEG_SCORE:
            rbuf_printf(&line, "%.1f", res ? res->score : 0.0);
            break;
        case SEG_NEWLINE:
            break;
        }
        if (seg->kind != SEG_TEXT)
            had_ph = true;
    }
    free(line.p);
    /* No trailing blank lines; exactly one final newline. */
    while (b->err == 0 && b->len > 1 && b->p[b->len - 1] == '\n' && b->p[b->len - 2] == '\n')
        b->len--;
    if (b->err == 0 && (b->len == 0 || b->p[b->len - 1] != '\n'))
        rbuf_add(b, "\n", 1);
}

/* Append "Name: value" folded at spaces so lines stay near REPLY_FOLD. */
static void
reply_header_folded(struct rbuf *b, const char *name, const char *value)
{
    size_t col = strlen(name) + 1;
    const char *p = value;
    bool first = true;

    rbuf_printf(b, "%s:", name);
    while (*p != '\0') {
        const char *end = strchr(p, ' ');
        size_t wlen = end ? (size_t)(end - p) : strlen(p);

        if (!first && col + 1 + wlen > REPLY_FOLD) {
            rbuf_add(b, "\n", 1);
            col = 0;
        }
        rbuf_add(b, " ", 1);
        rbuf_add(b, p, wlen);
        col += 1 + wlen;
        first = false;
        p += wlen;
        while (*p == ' ')
            p++;
    }
    rbuf_add(b, "\n", 1);
}

static void
reply_hostname(const char *given, char out[REPLY_HOST_MAX + 1])
{
    char buf[REPLY_HOST_MAX + 1];
    size_t n = 0;

    if (given == NULL) {
        if (gethostname(buf, sizeof(buf)) < 0)
            buf[0] = '\0';
        buf[sizeof(buf) - 1] = '\0';
        given = buf;
    }
    for (; given[n] != '\0' && n < REPLY_HOST_MAX; n++) {
        char c = given[n];

        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '-'))
            break;
        out[n] = c;
    }
    if (n == 0 || given[n] != '\0') {
        strcpy(out, "localhost");
        return;
    }
    out[n] = '\0';
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

int
reply_render(const struct reply_template *t, const struct reply_input *in, char **ret_msg)
{
    char to[REPLY_ADDR_MAX + 1], msgid[REPLY_MSGID_MAX], host[REPLY_HOST_MAX + 1];
    char date[64];
    const char *subject_in, *msgid_in;
    char *subject = NULL, *from = NULL;
    unsigned char rnd[12];
    bool have_msgid;
    struct rbuf b = {0};
    time_t now;
    int r;

    if (t == NULL || in == NULL || ret_msg == NULL)
        return -EINVAL;
    if (!reply_addr(in->to, to))
        return -EINVAL;
    subject_in = in->subject ? in->subject : (in->result ? in->result->subject : NULL);
    msgid_in = in->message_id ? in->message_id : (in->result ? in->result->message_id : NULL);
    have_msgid = reply_msgid(msgid_in, msgid);
    reply_hostname(in->hostname, host);
    now = in->now ? in->now : time(NULL);
    r = reply_date(now, date, sizeof(date));
    if (r < 0)
        return r;
    if (getrandom(rnd, sizeof(rnd), GRND_NONBLOCK) != (ssize_t)sizeof(rnd)) {
        /* Uniqueness, not secrecy, is needed here. */
        uint64_t x = (uint64_t)now ^ ((uint64_t)getpid() << 32) ^ (uint64_t)(uintptr_t)&b;

        for (size_t i = 0; i < sizeof(rnd); i++, x = x * 6364136223846793005ULL + 1)
            rnd[i] = (unsigned char)(x >> 56);
    }

    subject = reply_quote_dup(reply_strip_re(subject_in ? subject_in : ""), REPLY_SUBJECT_SHOWN);
    if (in->from != NULL)
        from = reply_clean_dup(in->from, REPLY_FROM_MAX);
    if (subject == NULL || (in->from != NULL && from == NULL)) {
        r = -ENOMEM;
        goto out;
    }

    if (from != NULL && from[0] != '\0')
        reply_header_folded(&b, "From", from);
    else
        rbuf_printf(&b, "From: slop-milter <postmaster@%s>\n", host);
    rbuf_printf(&b, "To: <%s>\n", to);
    /* Nothing from the mail goes into a header but a checked Message-ID. */
    rbuf_adds(&b, "Subject: " REPLY_SUBJECT "\n");
    rbuf_printf(&b, "Date: %s\n", date);
    rbuf_adds(&b, "Message-ID: <slop.");
    for (size_t i = 0; i < sizeof(rnd); i++)
        rbuf_printf(&b, "%02x", rnd[i]);
    rbuf_printf(&b, "@%s>\n", host);
    if (have_msgid) {
        rbuf_printf(&b, "In-Reply-To: %s\n", msgid);
        rbuf_printf(&b, "References: %s\n", msgid);
    }
    rbuf_adds(&b, "Auto-Submitted: auto-replied\n"
                  "X-Auto-Response-Suppress: All\n"
                  "MIME-Version: 1.0\n"
                  "Content-Type: text/plain; charset=utf-8\n"
                  "Content-Transfer-Encoding: 8bit\n"
                  "\n");
    reply_render_body(&b, t, in, subject[0] ? subject : "(no subject)", have_msgid ? msgid : NULL);
    r = b.err;
    if (r < 0)
        goto out;
    *ret_msg = b.p;
    b.p = NULL;
out:
    free(b.p);
    free(subject);
    free(from);
    return r;
}

/* ---- sending ---------------------------------------------------------- */

struct reply_job {
    struct reply_job *next;
    char *rcpt;
    char *msg;
    char *id;
    time_t claimed_at;
};

struct reply_sender {
    enum reply_transport transport;
    char *sendmail_path;
    char *helo;
    struct sockaddr_storage smtp_addr;
    socklen_t smtp_addrlen;
    unsigned queue_max;
    unsigned timeout_s;
    reply_status_fn *status_fn;
    void *status_ctx;

    pthread_mutex_t lock;
    pthread_cond_t cond;
    struct reply_job *head, *tail;
    unsigned queued;
    bool stopping;
    struct timespec drain_deadline;
    pthread_t thread;
    bool thread_started;
};

static struct reply_job *
reply_job_free(struct reply_job *j)
{
    if (j == NULL)
        return NULL;
    free(j->rcpt);
    free(j->msg);
    free(j->id);
    free(j);
    return NULL;
}

static int64_t
reply_now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void
reply_report(struct reply_sender *s, const struct reply_job *j, bool ok, const char *reason)
{
    struct reply_status st = {
        .rcpt = j->rcpt,
        .id = j->id ? j->id : "",
        .claimed_at = j->claimed_at,
        .ok = ok,
        .reason = reason,
    };

    if (s->status_fn != NULL)
        s->status_fn(s->status_ctx, &st);
}

/* Keep the printable part of a child's or server's words for a reason. */
static void
reply_reason_append(char *reason, size_t reasonlen, const char *prefix, const char *text,
                    size_t textlen)
{
    size_t n = strlen(reason);

    if (textlen == 0)
        return;
    n += (size_t)snprintf(reason + n, reasonlen > n ? reasonlen - n : 0, "%s", prefix);
    for (size_t i = 0; i < textlen && n + 1 < reasonlen; i++) {
        unsigned char c = (unsigned char)text[i];

        if (c == '\n' || c == '\r') {
            /* First line only. */
            if (i > 0)
                break;
            continue;
        }
        reason[n++] = (c >= 0x20 && c < 0x7f) ? (char)c : '?';
    }
    reason[n < reasonlen ? n : reasonlen - 1] = '\0';
}

/* "what: strerror(err)" into reason; strerror_r, as threads share this. */
static void
reply_reason_errno(char *reason, size_t reasonlen, const char *what, int err)
{
    char eb[128];

    snprintf(reason, reasonlen, "%s: %s", what, strerror_r(err, eb, sizeof(eb)));
}

/* Sendmail transport: fork + execv, message on stdin, bounded wait. */
static bool
reply_send_sendmail(struct reply_sender *s, const struct reply_job *j, char *reason,
                    size_t reasonlen)
{
    char *const argv[] = {"sendmail", "-i", "-f", "", "--", j->rcpt, NULL};
    int in_pipe[2] = {-1, -1}, out_pipe[2] = {-1, -1};
    char output[REPLY_OUTPUT_MAX];
    size_t output_len = 0, msg_len = strlen(j->msg), written = 0;
    int64_t deadline = reply_now_ms() + (int64_t)s->timeout_s * 1000;
    bool exited = false, ok = false;
    int status = 0;
    pid_t pid;

    if (pipe2(in_pipe, O_CLOEXEC) < 0 || pipe2(out_pipe, O_CLOEXEC) < 0) {
        reply_reason_errno(reason, reasonlen, "pipe", errno);
        goto out;
    }
    pid = fork();
    if (pid < 0) {
        reply_reason_errno(reason, reasonlen, "fork", errno);
        goto out;
    }
    if (pid == 0) {
        /* Child: async-signal-safe calls only. */
        static const char msg[] = "exec of sendmail failed\n";
        struct sigaction dfl = {.sa_handler = SIG_DFL};
        sigset_t none;

        sigemptyset(&none);
        sigaction(SIGPIPE, &dfl, NULL);
        sigaction(SIGCHLD, &dfl, NULL);
        sigaction(SIGTERM, &dfl, NULL);
        sigaction(SIGINT, &dfl, NULL);
        sigaction(SIGHUP, &dfl, NULL);
        sigprocmask(SIG_SETMASK, &none, NULL);
        if (dup2(in_pipe[0], 0) < 0 || dup2(out_pipe[1], 1) < 0 || dup2(out_pipe[1], 2) < 0)
            _exit(127);
        /* Milter sockets and the LMDB files must not leak into sendmail. */
        closefrom(3);
        execv(s->sendmail_path, argv);
        if (write(2, msg, sizeof(msg) - 1) < 0)
            _exit(127);
        _exit(127);
    }
    close(in_pipe[0]);
    in_pipe[0] = -1;
    close(out_pipe[1]);
    out_pipe[1] = -1;
    fcntl(in_pipe[1], F_SETFL, O_NONBLOCK);
    fcntl(out_pipe[0], F_SETFL, O_NONBLOCK);

    for (;;) {
        struct pollfd pfd[2];
        nfds_t n = 0;
        int64_t left = deadline - reply_now_ms();
        pid_t w;

        if (!exited) {
            w = waitpid(pid, &status, WNOHANG);
            if (w == pid)
                exited = true;
            else if (w < 0 && errno != EINTR) {
                reply_reason_errno(reason, reasonlen, "waitpid", errno);
                goto out;
            }
        }
        if (exited && in_pipe[1] < 0)
            break;
        if (exited && written < msg_len) {
            /* It went away before reading everything. */
            break;
        }
        if (left <= 0) {
            kill(pid, SIGKILL);
            while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
                ;
            snprintf(reason, reasonlen, "sendmail timed out after %us, killed", s->timeout_s);
            goto out;
        }
        if (in_pipe[1] >= 0)
            pfd[n++] = (struct pollfd){.fd = in_pipe[1], .events = POLLOUT};
        if (out_pipe[0] >= 0)
            pfd[n++] = (struct pollfd){.fd = out_pipe[0], .events = POLLIN};
        /* Short slices: the child's exit is noticed by polling waitpid. */
        if (poll(pfd, n, left < 50 ? (int)left : 50) < 0 && errno != EINTR) {
            reply_reason_errno(reason, reasonlen, "poll", errno);
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            goto out;
        }
        for (nfds_t k = 0; k < n; k++) {
            if (pfd[k].fd == in_pipe[1] && (pfd[k].revents & (POLLOUT | POLLERR | POLLHUP))) {
                ssize_t wr = write(in_pipe[1], j->msg + written, msg_len - written);

                if (wr > 0)
                    written += (size_t)wr;
                if ((wr < 0 && errno != EAGAIN && errno != EINTR) || written == msg_len) {
                    close(in_pipe[1]);
                    in_pipe[1] = -1;
                }
            } else if (pfd[k].fd == out_pipe[0] && (pfd[k].revents & (POLLIN | POLLHUP))) {
                char tmp[256];
                ssize_t rd = read(out_pipe[0], tmp, sizeof(tmp));

                if (rd > 0) {
                    size_t keep = (size_t)rd;

                    if (keep > sizeof(output) - output_len)
                        keep = sizeof(output) - output_len;
                    memcpy(output + output_len, tmp, keep);
                    output_len += keep;
                } else if (rd == 0 || (errno != EAGAIN && errno != EINTR)) {
                    close(out_pipe[0]);
                    out_pipe[0] = -1;
                }
            }
        }
    }
    /* Whatever it printed last (still buffered in the pipe) helps the log. */
    if (out_pipe[0] >= 0) {
        ssize_t rd = read(out_pipe[0], output + output_len, sizeof(output) - output_len);

        if (rd > 0)
            output_len += (size_t)rd;
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && written == msg_len) {
        snprintf(reason, reasonlen, "sent");
        ok = true;
    } else if (WIFEXITED(status)) {
        snprintf(reason, reasonlen, "sendmail exited with status %d", WEXITSTATUS(status));
        if (written < msg_len && WEXITSTATUS(status) == 0)
            snprintf(reason, reasonlen, "sendmail exited before reading the message");
        reply_reason_append(reason, reasonlen, ": ", output, output_len);
    } else if (WIFSIGNALED(status)) {
        snprintf(reason, reasonlen, "sendmail killed by signal %d", WTERMSIG(status));
    } else {
        snprintf(reason, reasonlen, "sendmail ended abnormally");
    }
out:
    if (in_pipe[0] >= 0)
        close(in_pipe[0]);
    if (in_pipe[1] >= 0)
        close(in_pipe[1]);
    if (out_pipe[0] >= 0)
        close(out_pipe[0]);
    if (out_pipe[1] >= 0)
        close(out_pipe[1]);
    return ok;
}

/* ---- SMTP transport ---- */

struct reply_smtp {
    int fd;
    int64_t deadline;
    char buf[REPLY_SMTP_LINE_MAX + 2];
    size_t have;
    char last[REPLY_SMTP_LINE_MAX + 1]; /* the last reply line, for reasons */
};

static int
reply_smtp_wait(struct reply_smtp *c, short events)
{
    for (;;) {
        struct pollfd pfd = {.fd = c->fd, .events = events};
        int64_t left = c->deadline - reply_now_ms();
        int n;

        if (left <= 0)
            return -ETIMEDOUT;
        n = poll(&pfd, 1, left > 1000 ? 1000 : (int)left);
        if (n < 0 && errno != EINTR)
            return -errno;
        if (n > 0)
            return 0;
    }
}

static int
reply_smtp_write(struct reply_smtp *c, const char *s, size_t n)
{
    while (n > 0) {
        ssize_t w;
        int r = reply_smtp_wait(c, POLLOUT);

        if (r < 0)
            return r;
        w = send(c->fd, s, n, MSG_NOSIGNAL);
        if (w < 0 && (errno == EAGAIN || errno == EINTR))
            continue;
        if (w < 0)
            return -errno;
        s += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Read one reply (all continuation lines); returns the code or -errno. */
static int
reply_smtp_reply(struct reply_smtp *c)
{
    for (unsigned lines = 0; lines < REPLY_SMTP_LINES_MAX;) {
        char *nl = memchr(c->buf, '\n', c->have);

        if (nl != NULL) {
            size_t len = (size_t)(nl - c->buf);
            bool final;
            int code;

            if (len > 0 && c->buf[len - 1] == '\r')
                len--;
            memcpy(c->last, c->buf, len);
            c->last[len] = '\0';
            memmove(c->buf, nl + 1, c->have - (size_t)(nl + 1 - c->buf));
            c->have -= (size_t)(nl + 1 - c->buf);
            lines++;
            if (len < 3 || c->last[0] < '1' || c->last[0] > '5' || c->last[1] < '0' ||
                c->last[1] > '9' || c->last[2] < '0' || c->last[2] > '9')
                return -EPROTO;
            code = (c->last[0] - '0') * 100 + (c->last[1] - '0') * 10 + (c->last[2] - '0');
            final = len == 3 || c->last[3] == ' ';
            if (final)
                return code;
            continue;
        }
        if (c->have >= sizeof(c->buf) - 1)
            return -EPROTO; /* a line longer than SMTP allows */
        int r = reply_smtp_wait(c, POLLIN);
        if (r < 0)
            return r;
        ssize_t n = recv(c->fd, c->buf + c->have, sizeof(c->buf) - 1 - c->have, 0);
        if (n < 0 && (errno == EAGAIN || errno == EINTR))
            continue;
        if (n < 0)
            return -errno;
        if (n == 0)
            return -ECONNRESET;
        c->have += (size_t)n;
    }
    return -EPROTO;
}

/* Send cmd (may be NULL: just read) and expect a reply in [lo, hi]. */
static bool
reply_smtp_step(struct reply_smtp *c, const char *cmd, const char *what, int lo, int hi,
                char *reason, size_t reasonlen)
{
    int r = 0;

    if (cmd != NULL)
        r = reply_smtp_write(c, cmd, strlen(cmd));
    if (r == 0)
        r = reply_smtp_reply(c);
    if (r < 0) {
        char eb[128];

        snprintf(reason, reasonlen, "smtp %s: %s", what,
                 r == -EPROTO ? "bad reply" : strerror_r(-r, eb, sizeof(eb)));
        return false;
    }
    if (r < lo || r > hi) {
        snprintf(reason, reasonlen, "smtp %s", what);
        reply_reason_append(reason, reasonlen, ": ", c->last, strlen(c->last));
        return false;
    }
    return true;
}

static bool
reply_send_smtp(struct reply_sender *s, const struct reply_job *j, char *reason, size_t reasonlen)
{
    struct reply_smtp *c;
    struct rbuf data = {0};
    char cmd[REPLY_ADDR_MAX + REPLY_HOST_MAX + 32];
    bool ok = false;
    int r;

    c = calloc(1, sizeof(*c));
    if (c == NULL) {
        snprintf(reason, reasonlen, "out of memory");
        return false;
    }
    c->deadline = reply_now_ms() + (int64_t)s->timeout_s * 1000;
    c->fd = socket(s->smtp_addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (c->fd < 0) {
        reply_reason_errno(reason, reasonlen, "smtp socket", errno);
        goto out;
    }
    if (connect(c->fd, (struct sockaddr *)&s->smtp_addr, s->smtp_addrlen) < 0) {
        int soerr = 0;
        socklen_t sl = sizeof(soerr);

        if (errno != EINPROGRESS) {
            reply_reason_errno(reason, reasonlen, "smtp connect", errno);
            goto out;
        }
        r = reply_smtp_wait(c, POLLOUT);
        if (r == 0 && getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) == 0 && soerr != 0)
            r = -soerr;
        if (r < 0) {
            reply_reason_errno(reason, reasonlen, "smtp connect", -r);
            goto out;
        }
    }
    if (!reply_smtp_step(c, NULL, "greeting", 220, 220, reason, reasonlen))
        goto out;
    snprintf(cmd, sizeof(cmd), "EHLO %s\r\n", s->helo);
    if (!reply_smtp_step(c, cmd, "EHLO", 250, 250, reason, reasonlen)) {
        snprintf(cmd, sizeof(cmd), "HELO %s\r\n", s->helo);
        if (!reply_smtp_step(c, cmd, "HELO", 250, 250, reason, reasonlen))
            goto out;
    }
    if (!reply_smtp_step(c, "MAIL FROM:<>\r\n", "MAIL FROM", 250, 250, reason, reasonlen))
        goto out;
    snprintf(cmd, sizeof(cmd), "RCPT TO:<%s>\r\n", j->rcpt);
    if (!reply_smtp_step(c, cmd, "RCPT TO", 250, 251, reason, reasonlen))
        goto out;
    if (!reply_smtp_step(c, "DATA\r\n", "DATA", 354, 354, reason, reasonlen))
        goto out;

    /* CRLF line ends and dot-stuffing. */
    for (const char *p = j->msg; *p != '\0';) {
        size_t len = strcspn(p, "\n");
        size_t tl = len;

        if (tl > 0 && p[tl - 1] == '\r')
            tl--;
        if (p[0] == '.')
            rbuf_add(&data, ".", 1);
        rbuf_add(&data, p, tl);
        rbuf_add(&data, "\r\n", 2);
        p += len;
        if (*p == '\n')
            p++;
    }
    rbuf_add(&data, ".\r\n", 3);
    if (data.err != 0) {
        reply_reason_errno(reason, reasonlen, "smtp", -data.err);
        goto out;
    }
    r = reply_smtp_write(c, data.p, data.len);
    if (r < 0) {
        reply_reason_errno(reason, reasonlen, "smtp DATA", -r);
        goto out;
    }
    if (!reply_smtp_step(c, NULL, "end of DATA", 250, 250, reason, reasonlen))
        goto out;
    ok = true;
    snprintf(reason, reasonlen, "sent");
    /* The message is accepted; a failed QUIT changes nothing. */
    reply_smtp_write(c, "QUIT\r\n", 6);
    reply_smtp_reply(c);
out:
    if (c->fd >= 0)
        close(c->fd);
    free(c);
    free(data.p);
    return ok;
}

static void *
reply_worker(void *arg)
{
    struct reply_sender *s = arg;

    pthread_mutex_lock(&s->lock);
    for (;;) {
        struct reply_job *j;
        char reason[REPLY_OUTPUT_MAX + 128];
        bool ok;

        while (s->head == NULL && !s->stopping)
            pthread_cond_wait(&s->cond, &s->lock);
        if (s->head == NULL)
            break;
        if (s->stopping) {
            struct timespec now;

            clock_gettime(CLOCK_MONOTONIC, &now);
            if (now.tv_sec > s->drain_deadline.tv_sec || (now.tv_sec == s->drain_deadline.tv_sec &&
                                                          now.tv_nsec >= s->drain_deadline.tv_nsec))
                break;
        }
        j = s->head;
        s->head = j->next;
        if (s->head == NULL)
            s->tail = NULL;
        s->queued--;
        pthread_mutex_unlock(&s->lock);

        reason[0] = '\0';
        if (s->transport == REPLY_TRANSPORT_SMTP)
            ok = reply_send_smtp(s, j, reason, sizeof(reason));
        else
            ok = reply_send_sendmail(s, j, reason, sizeof(reason));
        reply_report(s, j, ok, reason[0] ? reason : (ok ? "sent" : "failed"));
        reply_job_free(j);

        pthread_mutex_lock(&s->lock);
    }
    /* Past the drain deadline: what is left is reported, not sent. */
    while (s->head != NULL) {
        struct reply_job *j = s->head;

        s->head = j->next;
        s->queued--;
        pthread_mutex_unlock(&s->lock);
        reply_report(s, j, false, "shutdown");
        reply_job_free(j);
        pthread_mutex_lock(&s->lock);
    }
    s->tail = NULL;
    pthread_mutex_unlock(&s->lock);
    return NULL;
}

static bool
reply_loopback(const struct sockaddr *sa)
{
    if (sa->sa_family == AF_INET) {
        const struct sockaddr_in *in = (const struct sockaddr_in *)sa;

        return (ntohl(in->sin_addr.s_addr) >> 24) == 127;
    }
    if (sa->sa_family == AF_INET6) {
        const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;

        return IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr);
    }
    return false;
}

/* Resolve "host:port", "[v6]:port" or "host" once, at start-up. */
static int
reply_smtp_resolve(struct reply_sender *s, const char *server, bool allow_remote)
{
    char host[REPLY_HOST_MAX + 1];
    const char *port = "25";
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *ai = NULL;
    const char *colon;
    size_t hlen;
    int r;

    if (server[0] == '[') {
        const char *close_br = strchr(server, ']');

        if (close_br == NULL)
            return -EINVAL;
        hlen = (size_t)(close_br - server - 1);
        server++;
        colon = close_br[1] == ':' ? close_br + 1 : NULL;
        if (close_br[1] != '\0' && colon == NULL)
            return -EINVAL;
    } else {
        colon = strrchr(server, ':');
        if (colon != NULL && strchr(server, ':') != colon)
            return -EINVAL; /* a bare IPv6 address needs brackets */
        hlen = colon ? (size_t)(colon - server) : strlen(server);
    }
    if (hlen == 0 || hlen > REPLY_HOST_MAX)
        return -EINVAL;
    memcpy(host, server, hlen);
    host[hlen] = '\0';
    if (colon != NULL) {
        char *end;
        long p;

        port = colon + 1;
        p = strtol(port, &end, 10);
        if (*port == '\0' || *end != '\0' || p < 1 || p > 65535)
            return -EINVAL;
    }
    r = getaddrinfo(host, port, &hints, &ai);
    if (r != 0)
        return r == EAI_MEMORY ? -ENOMEM : -EHOSTUNREACH;
    r = -EINVAL;
    for (struct addrinfo *a = ai; a != NULL; a = a->ai_next) {
        if (a->ai_addrlen > sizeof(s->smtp_addr))
            continue;
        if (!allow_remote && !reply_loopback(a->ai_addr))
            continue;
        memcpy(&s->smtp_addr, a->ai_addr, a->ai_addrlen);
        s->smtp_addrlen = a->ai_addrlen;
        r = 0;
        break;
    }
    freeaddrinfo(ai);
    return r;
}

int
reply_sender_new(const struct reply_sender_config *cfg, struct reply_sender **ret)
{
    struct reply_sender *s;
    char helo[REPLY_HOST_MAX + 1];
    sigset_t all, old;
    int r;

    if (cfg == NULL || ret == NULL)
        return -EINVAL;
    if (cfg->transport != REPLY_TRANSPORT_SENDMAIL && cfg->transport != REPLY_TRANSPORT_SMTP)
        return -EINVAL;
    s = calloc(1, sizeof(*s));
    if (s == NULL)
        return -ENOMEM;
    s->transport = cfg->transport;
    s->queue_max = cfg->queue_max ? cfg->queue_max : 100;
    s->timeout_s = cfg->timeout_s ? cfg->timeout_s : 30;
    s->status_fn = cfg->status_fn;
    s->status_ctx = cfg->status_ctx;
    s->sendmail_path = strdup(cfg->sendmail_path ? cfg->sendmail_path : "/usr/sbin/sendmail");
    reply_hostname(cfg->helo_name, helo);
    s->helo = strdup(helo);
    if (s->sendmail_path == NULL || s->helo == NULL) {
        r = -ENOMEM;
        goto out;
    }
    if (s->sendmail_path[0] != '/') {
        r = -EINVAL;
        goto out;
    }
    if (s->transport == REPLY_TRANSPORT_SMTP) {
        r = reply_smtp_resolve(s, cfg->smtp_server ? cfg->smtp_server : "127.0.0.1:25",
                               cfg->smtp_allow_remote);
        if (r < 0)
            goto out;
    }
    r = -pthread_mutex_init(&s->lock, NULL);
    if (r < 0)
        goto out;
    {
        pthread_condattr_t ca;

        pthread_condattr_init(&ca);
        pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
        r = -pthread_cond_init(&s->cond, &ca);
        pthread_condattr_destroy(&ca);
        if (r < 0) {
            pthread_mutex_destroy(&s->lock);
            goto out;
        }
    }
    /* The worker inherits a full mask: signals belong to the daemon's
     * signal thread, and a write to a dead sendmail must not raise SIGPIPE. */
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    r = -pthread_create(&s->thread, NULL, reply_worker, s);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (r < 0) {
        pthread_cond_destroy(&s->cond);
        pthread_mutex_destroy(&s->lock);
        goto out;
    }
    s->thread_started = true;
    *ret = s;
    return 0;
out:
    free(s->sendmail_path);
    free(s->helo);
    free(s);
    return r;
}

int
reply_sender_submit_job(struct reply_sender *s, const char *rcpt, const char *msg, const char *id,
                        time_t claimed_at)
{
    char addr[REPLY_ADDR_MAX + 1];
    struct reply_job *j;
    size_t len;
    int r = 0;

    if (s == NULL || msg == NULL || !reply_addr(rcpt, addr))
        return -EINVAL;
    len = strnlen(msg, REPLY_MESSAGE_MAX + 1);
    if (len == 0 || len > REPLY_MESSAGE_MAX)
        return -EINVAL;
    j = calloc(1, sizeof(*j));
    if (j == NULL)
        return -ENOMEM;
    j->rcpt = strdup(addr);
    j->msg = strndup(msg, len);
    j->id = id ? reply_clean_dup(id, 64) : NULL;
    j->claimed_at = claimed_at;
    if (j->rcpt == NULL || j->msg == NULL || (id != NULL && j->id == NULL)) {
        reply_job_free(j);
        return -ENOMEM;
    }

    pthread_mutex_lock(&s->lock);
    if (s->stopping)
        r = -ESHUTDOWN;
    else if (s->queued >= s->queue_max)
        r = -EAGAIN;
    if (r == 0) {
        if (s->tail != NULL)
            s->tail->next = j;
        else
            s->head = j;
        s->tail = j;
        s->queued++;
        j = NULL;
        pthread_cond_signal(&s->cond);
    }
    pthread_mutex_unlock(&s->lock);
    reply_job_free(j);
    return r;
}

int
reply_sender_submit(struct reply_sender *s, const char *rcpt, const char *msg)
{
    return reply_sender_submit_job(s, rcpt, msg, NULL, time(NULL));
}

struct reply_sender *
reply_sender_free(struct reply_sender *s)
{
    if (s == NULL)
        return NULL;
    if (s->thread_started) {
        pthread_mutex_lock(&s->lock);
        s->stopping = true;
        clock_gettime(CLOCK_MONOTONIC, &s->drain_deadline);
        s->drain_deadline.tv_sec += s->timeout_s;
        pthread_cond_broadcast(&s->cond);
        pthread_mutex_unlock(&s->lock);
        pthread_join(s->thread, NULL);
        pthread_cond_destroy(&s->cond);
        pthread_mutex_destroy(&s->lock);
    }
    free(s->sendmail_path);
    free(s->helo);
    free(s);
    return NULL;
}
