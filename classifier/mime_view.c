/*
 * mime_view.c - parse one message with GMime into a flat, decoded view.
 *
 * Invariants: every string in a view is NUL-terminated valid UTF-8 (invalid
 * input bytes become U+FFFD, a part in an unknown charset is taken as UTF-8
 * when it validates and as Latin-1 otherwise), line ends are '\n', and every
 * input-driven size is capped by struct classifier_limits: bytes parsed,
 * header fields kept, MIME depth, parts walked and decoded bytes per part.
 * Mail GMime cannot parse still yields a view: malformed is set and the raw
 * text becomes the one body part.
 *
 * Ownership: the view owns every string in it; GMime objects never outlive
 * mime_view_parse(). Threading: GMime is initialised once through
 * pthread_once(); after that any number of threads may parse at once.
 */
#include <errno.h>
#include <iconv.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <gmime/gmime.h>

#include "ascii.h"
#include "mime_view.h"
#include "textbuf.h"

/* Bytes kept of one decoded header value: room for a To: line naming a
 * thousand recipients; the message size bounds the total. */
#define MIME_VIEW_MAX_HEADER_BYTES 65536

struct walker {
    struct mime_view *v;
    const struct classifier_limits *limits;
    size_t parts_cap;
    unsigned visited;
};

static pthread_once_t mime_view_once = PTHREAD_ONCE_INIT;

static void
mime_view_init_once(void)
{
    g_mime_init();
}

void
mime_view_global_init(void)
{
    pthread_once(&mime_view_once, mime_view_init_once);
}

static int
buf_addc(struct textbuf *b, char c)
{
    return textbuf_add(b, &c, 1);
}

/* Length of the valid UTF-8 sequence at s[0..n), or 0 if it is invalid. */
static size_t
utf8_seq_len(const unsigned char *s, size_t n)
{
    unsigned char c = s[0];
    size_t len, i;
    uint32_t cp;

    if (c < 0x80)
        return 1;
    if (c >= 0xc2 && c <= 0xdf) {
        len = 2;
        cp = c & 0x1f;
    } else if (c >= 0xe0 && c <= 0xef) {
        len = 3;
        cp = c & 0x0f;
    } else if (c >= 0xf0 && c <= 0xf4) {
        len = 4;
        cp = c & 0x07;
    } else {
        return 0;
    }
    if (n < len)
        return 0;
    for (i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        cp = (cp << 6) | (s[i] & 0x3f);
    }
    /* Overlong forms, surrogates and code points past U+10FFFF. */
    if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
        (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    return len;
}

/* How buf_add_text() writes a byte that is not valid UTF-8. */
enum invalid_bytes {
    INVALID_REPLACE, /* U+FFFD */
    /* Latin-1 when the text holds any invalid sequence, which is known
     * at the first one met: before it there was nothing to convert, so
     * this equals deciding up front from a validating pass over all of
     * s, without that pass. */
    INVALID_LATIN1_IF_ANY,
};

/* End of the run of plain ASCII (no CR, no NUL) in u[i..n). Eight bytes
 * at a time: this runs over every byte of every text part and header. */
static size_t
ascii_run(const unsigned char *u, size_t i, size_t n)
{
    const uint64_t ones = 0x0101010101010101u, highs = 0x8080808080808080u;
    const uint64_t cr = 0x0d0d0d0d0d0d0d0du;

    while (n - i >= 8) {
        uint64_t x, y;

        memcpy(&x, u + i, 8);
        y = x ^ cr;
        /* A high bit flags a byte >= 0x80, a zero byte or a CR (with
         * possible false flags above a real one, so the byte loop below
         * finds the exact end). */
        if (((x | ((x - ones) & ~x) | ((y - ones) & ~y)) & highs) != 0)
            break;
        i += 8;
    }
    while (i < n && u[i] < 0x80 && u[i] != '\r' && u[i] != '\0')
        i++;
    return i;
}

/*
 * Append s[0..n) to b as valid UTF-8 without CRs before LF and without NUL
 * bytes (a NUL would end the C string early). Invalid bytes are written
 * as inv says. Stops once b reaches max bytes, on a character boundary;
 * returns 1 when it stopped early.
 */
static int
buf_add_text(struct textbuf *b, const char *s, size_t n, enum invalid_bytes inv, size_t max)
{
    static const char repl[] = "\xef\xbf\xbd";
    const unsigned char *u = (const unsigned char *)s;
    size_t i = 0, k;
    int r;

    r = textbuf_reserve(b, n < max ? n : max);
    if (r < 0)
        return r;
    while (i < n) {
        char tmp[4];
        size_t tlen, j;

        /* Runs of plain ASCII are copied whole: this is most text. */
        j = ascii_run(u, i, n);
        if (j > i) {
            size_t room = b->len < max ? max - b->len : 0;

            r = textbuf_add(b, s + i, j - i < room ? j - i : room);
            if (r < 0)
                return r;
            if (j - i > room)
                return 1;
            i = j;
            continue;
        }
        if (u[i] == '\r' && (i + 1 == n || u[i + 1] == '\n')) {
            i++;
            continue;
        }
        /* A NUL becomes U+FFFD like an invalid byte, but must be caught
         * before utf8_seq_len(), which takes it as ASCII. */
        // NOLINTNEXTLINE(bugprone-branch-clone)
        if (u[i] == '\0') {
            memcpy(tmp, repl, 3);
            tlen = 3;
            k = 1;
        } else if ((k = utf8_seq_len(u + i, n - i)) > 0) {
            memcpy(tmp, s + i, k);
            tlen = k;
        } else if (inv == INVALID_LATIN1_IF_ANY) {
            tmp[0] = (char)(0xc0 | (u[i] >> 6));
            tmp[1] = (char)(0x80 | (u[i] & 0x3f));
            tlen = 2;
            k = 1;
        } else {
            memcpy(tmp, repl, 3);
            tlen = 3;
            k = 1;
        }
        if (b->len + tlen > max)
            return 1;
        r = textbuf_add(b, tmp, tlen);
        if (r < 0)
            return r;
        i += k;
    }
    return 0;
}

/* A valid UTF-8 copy of s[0..n) cut at max bytes; *cut tells if it was. */
static char *
dup_text(const char *s, size_t n, size_t max, bool *cut)
{
    struct textbuf b = {0};
    int r;

    if (s == NULL)
        s = "";
    r = buf_add_text(&b, s, n, INVALID_REPLACE, max);
    if (r < 0) {
        free(b.p);
        return NULL;
    }
    if (r == 1 && cut != NULL)
        *cut = true;
    return textbuf_steal(&b, NULL);
}

/* Header values: unfold (CR/LF and the white space after become one space). */
static bool
is_msgid_field(const char *name)
{
    /* The first letter rules out nearly every field before the compares. */
    switch (name[0]) {
    case 'M':
    case 'm':
        return g_ascii_strcasecmp(name, "Message-ID") == 0;
    case 'I':
    case 'i':
        return g_ascii_strcasecmp(name, "In-Reply-To") == 0;
    case 'R':
    case 'r':
        return g_ascii_strcasecmp(name, "References") == 0;
    default:
        return false;
    }
}

/* True if a raw field value may hold an encoded word or 8-bit text. */
static bool
needs_decoding(const char *raw)
{
    size_t n = strlen(raw);

    return ascii_prefix(raw, n) != n || strstr(raw, "=?") != NULL;
}

/* Unfold src into dst (which may be src): CR, LF and tab become spaces,
 * runs of spaces one, none at either end. */
static void
unfold(char *dst, const char *src)
{
    size_t i, j = 0;
    bool space = false;

    for (i = 0; src[i] != '\0'; i++) {
        char c = src[i];

        if (c == '\n' || c == '\r' || c == '\t')
            c = ' ';
        if (c == ' ') {
            if (space || j == 0)
                continue;
            space = true;
        } else {
            space = false;
        }
        dst[j++] = c;
    }
    while (j > 0 && dst[j - 1] == ' ')
        j--;
    dst[j] = '\0';
}

static char *
dup_header_value(const char *s, bool *cut)
{
    size_t n = strlen(s);
    char *raw;

    /* Plain ASCII under the cap comes out of dup_text() unchanged but
     * for CRs before LFs, which unfolding turns into spaces anyway; so
     * unfold straight from s and skip the copy. */
    if (n <= MIME_VIEW_MAX_HEADER_BYTES && ascii_prefix(s, n) == n) {
        raw = malloc(n + 1);
        if (raw != NULL)
            unfold(raw, s);
        return raw;
    }
    raw = dup_text(s, n, MIME_VIEW_MAX_HEADER_BYTES, cut);
    if (raw != NULL)
        unfold(raw, raw);
    return raw;
}

static char *
str_lower_dup(const char *s)
{
    char *d = strdup(s ? s : "");

    if (d == NULL)
        return NULL;
    for (char *p = d; *p; p++)
        if (*p >= 'A' && *p <= 'Z')
            *p = (char)(*p - 'A' + 'a');
    return d;
}

static bool
ends_with_ci(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);

    return n >= k && strcasecmp(s + n - k, suffix) == 0;
}

static bool
charset_is_utf8ish(const char *cs)
{
    return cs == NULL || strcasecmp(cs, "utf-8") == 0 || strcasecmp(cs, "utf8") == 0 ||
           strcasecmp(cs, "us-ascii") == 0 || strcasecmp(cs, "ascii") == 0;
}

/*
 * Convert raw bytes in charset cs to UTF-8 into out, capped at max bytes.
 * Returns 1 when the cap cut it. A charset iconv does not know, or a
 * conversion that fails midway, falls back to the byte-level repair.
 */
static int
convert_text(const char *raw, size_t n, const char *cs, size_t max, struct textbuf *out)
{
    struct textbuf conv = {0};
    iconv_t cd = (iconv_t)-1;
    int r;

    if (!charset_is_utf8ish(cs)) {
        cd = g_mime_iconv_open("UTF-8", cs);
    }
    if (cd != (iconv_t)-1) {
        /* iconv() takes char ** but does not write through it. */
        char *in = (char *)(uintptr_t)raw;
        size_t inleft = n;
        bool failed = false;

        r = textbuf_reserve(&conv, n + n / 2 + 16);
        if (r < 0)
            goto out;
        while (inleft > 0 && conv.len < max) {
            char *o;
            size_t oleft, rc;

            r = textbuf_reserve(&conv, inleft + 16);
            if (r < 0)
                goto out;
            o = conv.p + conv.len;
            oleft = conv.cap - conv.len - 1;
            rc = iconv(cd, &in, &inleft, &o, &oleft);
            conv.len = (size_t)(o - conv.p);
            if (rc != (size_t)-1)
                break;
            if (errno == E2BIG)
                continue;
            if (errno == EILSEQ || errno == EINVAL) {
                /* Skip the bad byte and mark it; EINVAL is a cut sequence. */
                r = textbuf_add(&conv, "\xef\xbf\xbd", 3);
                if (r < 0)
                    goto out;
                in++;
                inleft--;
                continue;
            }
            failed = true;
            break;
        }
        if (!failed) {
            r = buf_add_text(out, conv.p ? conv.p : "", conv.len, INVALID_REPLACE, max);
            if (r == 0 && inleft > 0)
                r = 1;
            goto out;
        }
    }
    /* Unknown or unusable charset: UTF-8 if it validates, else Latin-1. */
    r = buf_add_text(out, raw, n, INVALID_LATIN1_IF_ANY, max);
out:
    if (cd != (iconv_t)-1)
        g_mime_iconv_close(cd);
    free(conv.p);
    return r;
}

/* Strip tags, turn block tags into line breaks and decode common entities. */
static int
html_to_text(const char *s, size_t n, struct textbuf *out)
{
    static const char *const blocks[] = {"br", "p",  "div", "li", "tr",  "h1",         "h2",
                                         "h3", "h4", "h5",  "h6", "pre", "blockquote", "table"};
    static const struct {
        const char *name;
        const char *text;
    } ents[] = {{"amp;", "&"},   {"lt;", "<"},   {"gt;", ">"},
                {"quot;", "\""}, {"nbsp;", " "}, {"apos;", "'"}};
    size_t i = 0;
    int r;

    while (i < n) {
        if (s[i] == '<') {
            size_t j = i + 1, k = 0;
            char name[16];
            bool skip_content = false;

            if (j < n && s[j] == '/')
                j++;
            while (j < n && k < sizeof(name) - 1 &&
                   ((s[j] >= 'a' && s[j] <= 'z') || (s[j] >= 'A' && s[j] <= 'Z') ||
                    (s[j] >= '0' && s[j] <= '9')))
                name[k++] = (char)(s[j++] | 0x20);
            name[k] = '\0';
            if (s[i + 1] != '/' && (strcmp(name, "script") == 0 || strcmp(name, "style") == 0))
                skip_content = true;
            while (j < n && s[j] != '>')
                j++;
            i = j < n ? j + 1 : n;
            if (skip_content) {
                const char *end = NULL;

                for (size_t q = i; q + 1 < n; q++) {
                    if (s[q] == '<' && s[q + 1] == '/') {
                        end = s + q;
                        break;
                    }
                }
                i = end ? (size_t)(end - s) : n;
                continue;
            }
            for (size_t b = 0; b < sizeof(blocks) / sizeof(blocks[0]); b++) {
                if (strcmp(name, blocks[b]) == 0) {
                    r = buf_addc(out, '\n');
                    if (r < 0)
                        return r;
                    break;
                }
            }
            continue;
        }
        if (s[i] == '&') {
            bool done = false;

            for (size_t e = 0; e < sizeof(ents) / sizeof(ents[0]); e++) {
                size_t el = strlen(ents[e].name);

                if (n - i - 1 >= el && strncasecmp(s + i + 1, ents[e].name, el) == 0) {
                    r = textbuf_add(out, ents[e].text, strlen(ents[e].text));
                    if (r < 0)
                        return r;
                    i += 1 + el;
                    done = true;
                    break;
                }
            }
            if (!done && i + 2 < n && s[i + 1] == '#') {
                size_t j = i + 2;
                unsigned long cp = 0;
                bool hex = (s[j] == 'x' || s[j] == 'X');

                if (hex)
                    j++;
                while (j < n && j - i < 10 &&
                       ((s[j] >= '0' && s[j] <= '9') ||
                        (hex && ((s[j] | 0x20) >= 'a' && (s[j] | 0x20) <= 'f')))) {
                    unsigned d =
                        s[j] <= '9' ? (unsigned)(s[j] - '0') : (unsigned)((s[j] | 0x20) - 'a' + 10);
                    cp = cp * (hex ? 16 : 10) + d;
                    j++;
                }
                if (j < n && s[j] == ';' && cp > 0 && cp <= 0x10ffff &&
                    !(cp >= 0xd800 && cp <= 0xdfff)) {
                    char u[4];
                    size_t ul;

                    if (cp < 0x80) {
                        u[0] = (char)cp;
                        ul = 1;
                    } else if (cp < 0x800) {
                        u[0] = (char)(0xc0 | (cp >> 6));
                        u[1] = (char)(0x80 | (cp & 0x3f));
                        ul = 2;
                    } else if (cp < 0x10000) {
                        u[0] = (char)(0xe0 | (cp >> 12));
                        u[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
                        u[2] = (char)(0x80 | (cp & 0x3f));
                        ul = 3;
                    } else {
                        u[0] = (char)(0xf0 | (cp >> 18));
                        u[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
                        u[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
                        u[3] = (char)(0x80 | (cp & 0x3f));
                        ul = 4;
                    }
                    r = textbuf_add(out, u, ul);
                    if (r < 0)
                        return r;
                    i = j + 1;
                    done = true;
                }
            }
            if (done)
                continue;
        }
        r = buf_addc(out, s[i]);
        if (r < 0)
            return r;
        i++;
    }
    return 0;
}

/* Decode the transfer encoding of part into a memory buffer. */
static GByteArray *
part_decode(GMimePart *part)
{
    GMimeDataWrapper *dw = g_mime_part_get_content(part);
    GMimeStream *mem;
    GByteArray *arr;

    arr = g_byte_array_new();
    if (dw == NULL)
        return arr;
    mem = g_mime_stream_mem_new_with_byte_array(arr);
    g_mime_stream_mem_set_owner(GMIME_STREAM_MEM(mem), FALSE);
    g_mime_data_wrapper_write_to_stream(dw, mem);
    g_object_unref(mem);
    return arr;
}

/* Decoded size of a binary part, counted without keeping the bytes. */
static size_t
part_decoded_size(GMimePart *part)
{
    GMimeDataWrapper *dw = g_mime_part_get_content(part);
    GMimeStream *null;
    size_t n;

    if (dw == NULL)
        return 0;
    null = g_mime_stream_null_new();
    g_mime_data_wrapper_write_to_stream(dw, null);
    n = GMIME_STREAM_NULL(null)->written;
    g_object_unref(null);
    return n;
}

static int
view_add_part(struct walker *w, struct mime_part *p)
{
    struct mime_view *v = w->v;

    if (v->n_parts == w->parts_cap) {
        size_t cap = w->parts_cap ? w->parts_cap * 2 : 8;
        struct mime_part *np = realloc(v->parts, cap * sizeof(*np));

        if (np == NULL)
            return -ENOMEM;
        v->parts = np;
        w->parts_cap = cap;
    }
    v->parts[v->n_parts++] = *p;
    return 0;
}

static void
part_release(struct mime_part *p)
{
    free(p->content_type);
    free(p->filename);
    free(p->text);
    memset(p, 0, sizeof(*p));
}

static int
walk_leaf(struct walker *w, GMimePart *gp)
{
    GMimeObject *obj = GMIME_OBJECT(gp);
    GMimeContentType *ct = g_mime_object_get_content_type(obj);
    GMimeContentDisposition *disp = g_mime_object_get_content_disposition(obj);
    struct mime_part p = {0};
    const char *fname = g_mime_part_get_filename(gp);
    char *mt = ct ? g_mime_content_type_get_mime_type(ct) : NULL;
    bool is_text, attachment;
    int r = 0;

    p.content_type = str_lower_dup(mt ? mt : "text/plain");
    g_free(mt);
    if (p.content_type == NULL)
        return -ENOMEM;
    if (fname != NULL) {
        p.filename = dup_text(fname, strlen(fname), 1024, NULL);
        if (p.filename == NULL) {
            r = -ENOMEM;
            goto out;
        }
    }
    /* Signatures carry no content a reader wrote. */
    if (strcmp(p.content_type, "application/pgp-signature") == 0 ||
        strcmp(p.content_type, "application/pkcs7-signature") == 0 ||
        strcmp(p.content_type, "application/x-pkcs7-signature") == 0)
        goto out;

    is_text = strncmp(p.content_type, "text/", 5) == 0;
    attachment = disp != NULL && g_mime_content_disposition_is_attachment(disp);
    if (strcmp(p.content_type, "text/x-patch") == 0 || strcmp(p.content_type, "text/x-diff") == 0 ||
        strcmp(p.content_type, "text/diff") == 0 ||
        strcmp(p.content_type, "application/x-patch") == 0 ||
        (p.filename != NULL &&
         (ends_with_ci(p.filename, ".patch") || ends_with_ci(p.filename, ".diff")))) {
        p.role = MIME_PART_PATCH;
        is_text = true;
    } else if (attachment || !is_text) {
        p.role = MIME_PART_ATTACHMENT;
    } else {
        p.role = MIME_PART_BODY;
        p.is_html = strcmp(p.content_type, "text/html") == 0;
    }

    if (is_text) {
        GByteArray *arr = part_decode(gp);
        const char *cs = ct ? g_mime_content_type_get_parameter(ct, "charset") : NULL;
        struct textbuf out = {0};

        if (p.is_html) {
            struct textbuf utf = {0};

            r = convert_text((const char *)arr->data, arr->len, cs, w->limits->max_part_bytes,
                             &utf);
            if (r >= 0) {
                p.truncated = r == 1;
                r = html_to_text(utf.p ? utf.p : "", utf.len, &out);
            }
            free(utf.p);
        } else {
            r = convert_text((const char *)arr->data, arr->len, cs, w->limits->max_part_bytes,
                             &out);
            if (r == 1)
                p.truncated = true;
        }
        g_byte_array_free(arr, TRUE);
        if (r < 0) {
            free(out.p);
            goto out;
        }
        p.text = textbuf_steal(&out, &p.len);
        if (p.text == NULL) {
            r = -ENOMEM;
            goto out;
        }
        if (p.truncated)
            w->v->truncated = true;
    } else {
        p.len = part_decoded_size(gp);
    }
    r = view_add_part(w, &p);
    if (r == 0)
        memset(&p, 0, sizeof(p));
out:
    part_release(&p);
    return r;
}

static bool
object_is_type(GMimeObject *o, const char *type, const char *subtype)
{
    GMimeContentType *ct = g_mime_object_get_content_type(o);

    return ct != NULL && g_mime_content_type_is_type(ct, type, subtype);
}

static int walk(struct walker *w, GMimeObject *o, unsigned depth);

/* multipart/alternative: text/plain when there is one, else the richest (last). */
static int
walk_alternative(struct walker *w, GMimeMultipart *mp, unsigned depth)
{
    int n = g_mime_multipart_get_count(mp);
    GMimeObject *pick = NULL;

    for (int i = 0; i < n; i++) {
        GMimeObject *c = g_mime_multipart_get_part(mp, i);

        if (c != NULL && GMIME_IS_PART(c) && object_is_type(c, "text", "plain")) {
            pick = c;
            break;
        }
    }
    if (pick == NULL) {
        for (int i = n - 1; i >= 0 && pick == NULL; i--)
            pick = g_mime_multipart_get_part(mp, i);
    }
    if (pick == NULL)
        return 0;
    return walk(w, pick, depth + 1);
}

/* Remember the first limit that cut the view, for the finding's evidence. */
static void
view_note_limit(struct mime_view *v, const char *name, size_t value)
{
    v->truncated = true;
    if (v->limit == NULL) {
        v->limit = name;
        v->limit_value = value;
    }
}

static int
walk(struct walker *w, GMimeObject *o, unsigned depth)
{
    int r;

    if (o == NULL)
        return 0;
    if (depth > w->limits->max_mime_depth || w->visited >= w->limits->max_mime_parts) {
        if (depth > w->limits->max_mime_depth)
            view_note_limit(w->v, "max_mime_depth", w->limits->max_mime_depth);
        else
            view_note_limit(w->v, "max_mime_parts", w->limits->max_mime_parts);
        return 0;
    }
    w->visited++;

    if (GMIME_IS_MULTIPART(o)) {
        GMimeMultipart *mp = GMIME_MULTIPART(o);
        int n;

        if (object_is_type(o, "multipart", "alternative"))
            return walk_alternative(w, mp, depth);
        n = g_mime_multipart_get_count(mp);
        for (int i = 0; i < n; i++) {
            r = walk(w, g_mime_multipart_get_part(mp, i), depth + 1);
            if (r < 0)
                return r;
        }
        return 0;
    }
    if (GMIME_IS_MESSAGE_PART(o)) {
        GMimeMessage *inner = g_mime_message_part_get_message(GMIME_MESSAGE_PART(o));

        if (inner == NULL)
            return 0;
        return walk(w, g_mime_message_get_mime_part(inner), depth + 1);
    }
    if (GMIME_IS_PART(o))
        return walk_leaf(w, GMIME_PART(o));
    return 0;
}

static int
view_add_header_list(struct mime_view *v, GMimeHeaderList *hl, size_t *cap,
                     const struct classifier_limits *limits)
{
    int n = hl ? g_mime_header_list_get_count(hl) : 0;

    for (int i = 0; i < n; i++) {
        GMimeHeader *h = g_mime_header_list_get_header_at(hl, i);
        struct mime_header *mh;
        const char *name, *value;

        if (h == NULL)
            continue;
        if (v->n_headers >= limits->max_headers) {
            view_note_limit(v, "max_headers", limits->max_headers);
            return 0;
        }
        if (v->n_headers == *cap) {
            size_t ncap = *cap ? *cap * 2 : 32;
            struct mime_header *nh = realloc(v->headers, ncap * sizeof(*nh));

            if (nh == NULL)
                return -ENOMEM;
            v->headers = nh;
            *cap = ncap;
        }
        name = g_mime_header_get_name(h);
        value = g_mime_header_get_raw_value(h);
        /* Message identifiers have no encoded words (RFC 5322 msg-id): take
         * them raw, or a sender could hide another id, or a line break,
         * in an encoded word that decoding would bring out. Other fields
         * are decoded, unless they are plain ASCII with no "=?": GMime's
         * decoding then only unfolds, which dup_header_value() does too,
         * and skipping it saves a copy and a tokenising pass per field. */
        if ((name == NULL || !is_msgid_field(name)) && (value == NULL || needs_decoding(value)))
            value = g_mime_header_get_value(h);
        mh = &v->headers[v->n_headers];
        mh->name = dup_text(name ? name : "", name ? strlen(name) : 0, 1024, &v->truncated);
        mh->value = dup_header_value(value ? value : "", &v->truncated);
        if (mh->name == NULL || mh->value == NULL) {
            free(mh->name);
            free(mh->value);
            return -ENOMEM;
        }
        v->n_headers++;
    }
    return 0;
}

/* The message's own fields, then the top part's Content-* fields, which
 * GMime keeps on the part rather than on the message. */
static int
view_add_headers(struct mime_view *v, GMimeMessage *msg, const struct classifier_limits *limits)
{
    GMimeObject *top = g_mime_message_get_mime_part(msg);
    size_t cap = 0;
    int r;

    r = view_add_header_list(v, g_mime_object_get_header_list(GMIME_OBJECT(msg)), &cap, limits);
    if (r == 0 && top != NULL)
        r = view_add_header_list(v, g_mime_object_get_header_list(top), &cap, limits);
    return r;
}

/* GMime gave up: keep the raw text as the one body part. */
static int
view_add_raw(struct walker *w, const char *msg, size_t len)
{
    struct mime_part p = {0};
    struct textbuf b = {0};
    int r;

    p.role = MIME_PART_BODY;
    p.content_type = strdup("text/plain");
    if (p.content_type == NULL)
        return -ENOMEM;
    r = buf_add_text(&b, msg, len, INVALID_LATIN1_IF_ANY, w->limits->max_part_bytes);
    if (r < 0) {
        free(b.p);
        goto out;
    }
    p.truncated = r == 1;
    w->v->truncated |= p.truncated;
    p.text = textbuf_steal(&b, &p.len);
    if (p.text == NULL) {
        r = -ENOMEM;
        goto out;
    }
    r = view_add_part(w, &p);
    if (r == 0)
        memset(&p, 0, sizeof(p));
out:
    part_release(&p);
    return r;
}

size_t
mime_view_header_start(const char *msg, size_t len)
{
    size_t off = 0;

    if (msg == NULL)
        return 0;
    /* An mbox "From " envelope line is not a header; GMime would stop at it. */
    if (len >= 5 && memcmp(msg, "From ", 5) == 0) {
        const char *nl = memchr(msg, '\n', len);

        off = nl ? (size_t)(nl - msg) + 1 : len;
    }
    /* A header block cannot begin with white space (that is folding), but
     * some mailers and archives put blank or space-only lines first; GMime
     * then gives up and the whole message would be scanned as raw text. */
    while (off < len) {
        size_t i = off;

        while (i < len && (msg[i] == ' ' || msg[i] == '\t' || msg[i] == '\r'))
            i++;
        if (i == len || msg[i] != '\n')
            break;
        off = i + 1;
    }
    return off;
}

int
mime_view_parse(const char *msg, size_t len, const struct classifier_limits *limits,
                struct mime_view **ret)
{
    struct mime_view *v;
    struct walker w = {0};
    GByteArray *arr = NULL;
    GMimeStream *stream = NULL;
    GMimeParser *parser = NULL;
    GMimeMessage *gm = NULL;
    int r = 0;

    mime_view_global_init();
    v = calloc(1, sizeof(*v));
    if (v == NULL)
        return -ENOMEM;
    w.v = v;
    w.limits = limits;
    if (msg == NULL)
        len = 0;
    if (len > limits->max_message_bytes || len > G_MAXUINT) {
        len = limits->max_message_bytes < G_MAXUINT ? limits->max_message_bytes : G_MAXUINT;
        view_note_limit(v, "max_message_bytes", len);
    }
    if (msg != NULL) {
        size_t skip = mime_view_header_start(msg, len);

        msg += skip;
        len -= skip;
    }

    if (len > 0) {
        /* Wrap the caller's bytes without copying; the stream does not own
         * them, only reads them, and the array header is freed below
         * without its data. */
        arr = g_byte_array_new();
        arr->data = (guint8 *)(uintptr_t)msg;
        arr->len = (guint)len;
        stream = g_mime_stream_mem_new_with_byte_array(arr);
        g_mime_stream_mem_set_owner(GMIME_STREAM_MEM(stream), FALSE);
        parser = g_mime_parser_new_with_stream(stream);
        g_mime_parser_set_format(parser, GMIME_FORMAT_MESSAGE);
        gm = g_mime_parser_construct_message(parser, NULL);
    }

    if (gm == NULL) {
        v->malformed = len > 0;
        r = view_add_raw(&w, msg ? msg : "", len);
        goto out;
    }
    r = view_add_headers(v, gm, limits);
    if (r < 0)
        goto out;
    r = walk(&w, g_mime_message_get_mime_part(gm), 0);
    if (r < 0)
        goto out;

    {
        bool plain = false, html = false;

        for (size_t i = 0; i < v->n_parts; i++) {
            if (v->parts[i].role != MIME_PART_BODY)
                continue;
            if (v->parts[i].is_html)
                html = true;
            else
                plain = true;
        }
        v->has_html_only = html && !plain;
    }
out:
    if (gm != NULL)
        g_object_unref(gm);
    if (parser != NULL)
        g_object_unref(parser);
    if (stream != NULL)
        g_object_unref(stream);
    if (arr != NULL) {
        arr->data = NULL;
        arr->len = 0;
        g_byte_array_free(arr, FALSE);
    }
    if (r < 0) {
        mime_view_free(v);
        return r;
    }
    *ret = v;
    return 0;
}

struct mime_view *
mime_view_free(struct mime_view *v)
{
    if (v == NULL)
        return NULL;
    for (size_t i = 0; i < v->n_headers; i++) {
        free(v->headers[i].name);
        free(v->headers[i].value);
    }
    free(v->headers);
    for (size_t i = 0; i < v->n_parts; i++)
        part_release(&v->parts[i]);
    free(v->parts);
    free(v);
    return NULL;
}

const char *
mime_view_header(const struct mime_view *v, const char *name)
{
    if (v == NULL || name == NULL)
        return NULL;
    for (size_t i = 0; i < v->n_headers; i++)
        if (strcasecmp(v->headers[i].name, name) == 0)
            return v->headers[i].value;
    return NULL;
}
