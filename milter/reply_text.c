/*
 * reply_text.c - text helpers of the reply modules (see reply_text.h):
 * the characters reply text may carry, the cleaners that make input-driven
 * text safe for a header or the body, line wrapping, the address and
 * host-name checks.
 *
 * Invariant: nothing these functions append carries a byte below 0x20
 * taken from input; every size is capped by its max argument or by
 * REPLY_MESSAGE_MAX.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "reply_text.h"
#include "utf8.h"

#define REPLY_WRAP 72         /* body paragraphs are wrapped here */
#define REPLY_QUOTE_SCAN 2048 /* bytes of mail text looked at for one quote */

void
reply_buf_init(struct textbuf *b)
{
    textbuf_init(b, REPLY_MESSAGE_MAX);
}

int
reply_buf_err(const struct textbuf *b)
{
    return b->err == -E2BIG ? -EMSGSIZE : b->err;
}

size_t
reply_char_len(const unsigned char *s, size_t n)
{
    size_t len = utf8_seq_len(s, n);

    /* C1 controls are as unwelcome in a header as C0 ones. */
    return len == 2 && s[0] == 0xc2 && s[1] < 0xa0 ? 0 : len;
}

/*
 * Append s to b as one line of clean text: valid UTF-8 only (other bytes
 * become '?'), every control character and run of white space becomes one
 * space, no leading or trailing space, at most max bytes (cut on a
 * character boundary). Returns the number of bytes appended.
 */
size_t
reply_clean(struct textbuf *b, const char *s, size_t max)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t n = s ? strlen(s) : 0;
    size_t out = 0;
    bool space = false;

    for (size_t i = 0; i < n;) {
        size_t len = reply_char_len(p + i, n - i);

        if (len == 1 && (p[i] < 0x20 || p[i] == 0x7f || p[i] == ' ')) {
            space = out > 0;
            i++;
            continue;
        }
        if (space) {
            if (out + 1 >= max)
                break;
            textbuf_add(b, " ", 1);
            out++;
            space = false;
        }
        if (len == 0) {
            if (out + 1 > max)
                break;
            textbuf_add(b, "?", 1);
            out++;
            i++;
            continue;
        }
        if (out + len > max)
            break;
        textbuf_add(b, (const char *)p + i, len);
        out += len;
        i += len;
    }
    return out;
}

/* Clean s into a new string (see reply_clean); NULL on ENOMEM. */
char *
reply_clean_dup(const char *s, size_t max)
{
    struct textbuf b;

    reply_buf_init(&b);
    reply_clean(&b, s, max);
    if (b.err != 0) {
        textbuf_release(&b);
        return NULL;
    }
    return textbuf_steal(&b, NULL);
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

/* The bytes of the whole characters of the wl-byte word p that fit in
 * max. */
static size_t
reply_whole_chars(const char *p, size_t wl, size_t max)
{
    size_t take = 0;

    while (take < wl) {
        size_t l = reply_char_len((const unsigned char *)p + take, wl - take);

        if (l == 0 || take + l > max)
            break;
        take += l;
    }
    return take;
}

/* n bytes of a word with its double quotes made single. */
static void
reply_quote_word(struct textbuf *b, const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        textbuf_add(b, p[i] == '"' ? "'" : p + i, 1);
}

/*
 * Text taken from the mail, made fit to show as quoted data: clean (see
 * reply_clean), each link-like word replaced by "[link removed]", double
 * quotes made single so the quotation cannot be closed early, and cut to
 * max bytes at a word (or character) boundary, "..." marking the cut.
 * NULL on ENOMEM.
 */
char *
reply_quote_dup(const char *s, size_t max)
{
    static const char removed[] = "[link removed]";
    char *clean = reply_clean_dup(s, REPLY_QUOTE_SCAN);
    struct textbuf b;
    bool cut = false;

    if (clean == NULL)
        return NULL;
    reply_buf_init(&b);
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
            take = reply_whole_chars(p, wl, max);
        }
        if (sep)
            textbuf_add(&b, " ", 1);
        if (link)
            textbuf_adds(&b, removed);
        else
            reply_quote_word(&b, p, take);
        p += wl;
        while (*p == ' ')
            p++;
    }
    if (cut || strlen(clean) >= REPLY_QUOTE_SCAN - 4)
        textbuf_adds(&b, "...");
    free(clean);
    if (b.err != 0) {
        textbuf_release(&b);
        return NULL;
    }
    return textbuf_steal(&b, NULL);
}

/*
 * Append text (clean: single spaces) wrapped at REPLY_WRAP columns; the
 * first line starts with first, the others with indent. Ends with '\n'.
 */
void
reply_wrap(struct textbuf *b, const char *text, const char *first, const char *indent)
{
    size_t col = strlen(first);
    const char *p = text;
    bool line_empty = true;

    textbuf_adds(b, first);
    while (*p != '\0') {
        const char *end = strchr(p, ' ');
        size_t wlen = end ? (size_t)(end - p) : strlen(p);

        if (!line_empty && col + 1 + wlen > REPLY_WRAP) {
            textbuf_add(b, "\n", 1);
            textbuf_adds(b, indent);
            col = strlen(indent);
            line_empty = true;
        }
        if (!line_empty) {
            textbuf_add(b, " ", 1);
            col++;
        }
        textbuf_add(b, p, wlen);
        col += wlen;
        line_empty = false;
        p += wlen;
        while (*p == ' ')
            p++;
    }
    textbuf_add(b, "\n", 1);
}

/*
 * Extract a usable address from s (optionally in <>) into out. Usable:
 * 3..254 bytes of printable ASCII without white space or any of
 * <>()[],;:\" , one local part and one domain around the last '@', not
 * starting with '-' (it becomes a sendmail argument).
 */
bool
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

void
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
