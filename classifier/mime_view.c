/*
 * mime_view.c - parse one message with GMime into a flat, decoded view.
 *
 * Invariants: every string in a view is NUL-terminated valid UTF-8 (invalid
 * input bytes become U+FFFD, a part in an unknown charset is taken as UTF-8
 * when it validates and as Latin-1 otherwise), line ends are '\n', and every
 * input-driven size is capped by struct classifier_limits: bytes parsed,
 * header fields kept, MIME depth, parts walked and decoded bytes per part.
 * Mail GMime cannot parse still yields a view: malformed is set and the raw
 * text becomes the one body part. A plain top header block is read here
 * (header_block.h) and GMime gets only its Content-* fields and the body:
 * the same MIME tree, without an object for every Received: line.
 *
 * Ownership: the view owns every string in it; GMime objects made for a
 * message never outlive mime_view_parse(). Threading: GMime is initialised
 * once through pthread_once(); after that any number of threads may parse
 * at once, each with its own parser (struct parse_ctx).
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <gmime/gmime.h>

#include "ascii.h"
#include "header_block.h"
#include "mime_ctype.h"
#include "mime_decode.h"
#include "mime_html.h"
#include "mime_text.h"
#include "mime_view.h"
#include "mime_walk.h"
#include "textbuf.h"

/* Bytes kept of one decoded header value: room for a To: line naming a
 * thousand recipients; the message size bounds the total. */
#define MIME_VIEW_MAX_HEADER_BYTES 65536

/*
 * One parser per thread, re-initialised for each message: a new parser
 * costs a GObject and a 4 KB read buffer every time. Between parses arr is
 * empty, so nothing here points into a caller's message once
 * mime_view_parse() returns. Freed when its thread exits.
 */
struct parse_ctx {
    GByteArray *arr;     /* wraps the caller's bytes during a parse */
    GMimeStream *stream; /* reads arr; does not own it */
    GMimeParser *parser; /* reads stream */
};

static pthread_once_t mime_view_once = PTHREAD_ONCE_INIT;
static pthread_key_t parse_ctx_key;
static bool parse_ctx_key_ok;

static void
parse_ctx_free(void *p)
{
    struct parse_ctx *c = p;

    /* The parser holds a reference to the stream: drop it first. */
    g_object_unref(c->parser);
    g_object_unref(c->stream);
    g_byte_array_free(c->arr, FALSE);
    free(c);
}

static struct parse_ctx *
parse_ctx_new(void)
{
    struct parse_ctx *c = malloc(sizeof(*c));

    if (c == NULL)
        return NULL;
    c->arr = g_byte_array_new();
    c->stream = g_mime_stream_mem_new_with_byte_array(c->arr);
    g_mime_stream_mem_set_owner(GMIME_STREAM_MEM(c->stream), FALSE);
    c->parser = g_mime_parser_new_with_stream(c->stream);
    return c;
}

/* This thread's parse context, made on first use; NULL if out of memory. */
static struct parse_ctx *
parse_ctx_get(void)
{
    struct parse_ctx *c;

    if (!parse_ctx_key_ok)
        return NULL;
    c = pthread_getspecific(parse_ctx_key);
    if (c != NULL)
        return c;
    c = parse_ctx_new();
    if (c != NULL && pthread_setspecific(parse_ctx_key, c) != 0) {
        parse_ctx_free(c);
        c = NULL;
    }
    return c;
}

static void
mime_view_init_once(void)
{
    g_mime_init();
    mime_decode_init();
    parse_ctx_key_ok = pthread_key_create(&parse_ctx_key, parse_ctx_free) == 0;
}

void
mime_view_global_init(void)
{
    pthread_once(&mime_view_once, mime_view_init_once);
}

/* Header values: mime_text_unfold (CR/LF and the white space after become one space). */
static bool
is_msgid_field(const char *name, size_t nlen)
{
    /* The first letter rules out nearly every field before the compares. */
    switch (nlen > 0 ? name[0] : '\0') {
    case 'M':
    case 'm':
        return nlen == 10 && g_ascii_strncasecmp(name, "Message-ID", 10) == 0;
    case 'I':
    case 'i':
        return nlen == 11 && g_ascii_strncasecmp(name, "In-Reply-To", 11) == 0;
    case 'R':
    case 'r':
        return nlen == 10 && g_ascii_strncasecmp(name, "References", 10) == 0;
    default:
        return false;
    }
}

/* One header field while the view's fields are gathered. */
struct field {
    /* GMime's, or the message's own bytes (header_block.h); alive as long
     * as the message, and not always NUL-terminated. */
    const char *name, *value;
    size_t nlen, vlen;
    /* Set while value is the raw text of a field that must be decoded if
     * it holds 8-bit bytes: by GMime (decode) or, for a field read from
     * the message, here (decode_own); cleared once decoded. */
    GMimeHeader *decode;
    bool decode_own;
    char *owned;                /* a value decoded here, freed with the fields */
    size_t name_off, value_off; /* in the block of all the fields' text */
};

/* The fields of a plain header block, read from the message (see
 * header_block.h) rather than from GMime's list. */
#define MIME_VIEW_OWN_FIELDS 256u

struct own_fields {
    const char *msg;
    struct header_field f[MIME_VIEW_OWN_FIELDS];
    size_t n, blank;
};

/* GMime's own test for the fields a message leaves to its top part. */
static bool
is_content_field(const char *name)
{
    return name != NULL && header_block_is_content(name, strlen(name));
}

/* What g_mime_header_get_value() gives for a field that GMime parsed
 * with the raw value raw[0..rlen): unfolded, then its encoded words
 * decoded. The caller frees it with g_free(). */
static char *
field_decode_own(const char *raw, size_t rlen)
{
    char *dup = g_strndup(raw, rlen), *unfolded = g_mime_utils_header_unfold(dup), *ret;

    ret = g_mime_utils_header_decode_text(NULL, unfolded);
    g_free(unfolded);
    g_free(dup);
    return ret;
}

/* Decide how f's value is taken: message identifiers raw, other fields
 * decoded where they need it. */
static void
field_set_value(struct field *f, GMimeHeader *h, const char *raw, size_t rlen)
{
    /* Message identifiers have no encoded words (RFC 5322 msg-id): take
     * them raw, or a sender could hide another id, or a line break, in an
     * encoded word that decoding would bring out. Other fields are
     * decoded, unless they are plain ASCII with no "=?": GMime's decoding
     * then only unfolds, which field_append() does too, and skipping it
     * saves a copy and a tokenising pass per field. Whether they are
     * ASCII, field_append() finds out as it unfolds. */
    f->decode = NULL;
    f->decode_own = false;
    f->owned = NULL;
    f->value = raw;
    f->vlen = rlen;
    if (is_msgid_field(f->name, f->nlen))
        return;
    /* memchr() for the '?', which few values hold, beats memmem(). */
    if (raw != NULL && ascii_find_at(raw, rlen, "=?", 1) == NULL) {
        f->decode = h;
        f->decode_own = h == NULL;
        return;
    }
    if (h != NULL) {
        f->value = g_mime_header_get_value(h);
        f->vlen = f->value != NULL ? strlen(f->value) : 0;
    } else {
        f->value = f->owned = field_decode_own(raw, rlen);
        f->vlen = f->value != NULL ? strlen(f->value) : 0;
    }
}

/*
 * The fields gathered for a view: f[0..kept) of the n seen so far, max
 * at most. A field want (when not NULL) leaves out is seen but not kept:
 * it is neither decoded nor unfolded. Only a field of at most
 * MIME_VIEW_SKIP_BYTES is left out: decoded, or with bytes that are not
 * UTF-8 replaced, a value grows at most fourfold, so a left-out field
 * could never have been cut at MIME_VIEW_MAX_HEADER_BYTES, and the view
 * notes a cut exactly as with every field kept.
 */
#define MIME_VIEW_SKIP_BYTES 8192u

_Static_assert(4 * MIME_VIEW_SKIP_BYTES < MIME_VIEW_MAX_HEADER_BYTES,
               "a left-out field is never cut");

struct gather {
    struct field *f;
    size_t n, kept, max;
    mime_view_field_fn *want;
};

/* Whether field name[0..nlen), with a raw value of vlen bytes, is kept. */
static bool
gather_keeps(const struct gather *g, const char *name, size_t nlen, size_t vlen)
{
    return g->want == NULL || vlen > MIME_VIEW_SKIP_BYTES || nlen > 1024 || g->want(name, nlen);
}

/* Append the fields of hl whose is_content_field() is content to g, in
 * GMime's order; past g->max, note the cap. Values are decoded where they
 * need it. */
static void
fields_gather(struct mime_view *v, GMimeHeaderList *hl, bool content, struct gather *g)
{
    int count = hl ? g_mime_header_list_get_count(hl) : 0;

    for (int i = 0; i < count; i++) {
        GMimeHeader *h = g_mime_header_list_get_header_at(hl, i);
        struct field *fd;
        const char *value, *name;
        size_t nlen, vlen;

        if (h == NULL || is_content_field(g_mime_header_get_name(h)) != content)
            continue;
        if (g->n >= g->max) {
            view_note_limit(v, "max_headers", g->max);
            return;
        }
        g->n++;
        name = g_mime_header_get_name(h);
        if (name == NULL)
            name = "";
        nlen = strlen(name);
        value = g_mime_header_get_raw_value(h);
        vlen = value != NULL ? strlen(value) : 0;
        if (!gather_keeps(g, name, nlen, vlen))
            continue;
        fd = &g->f[g->kept++];
        fd->name = name;
        fd->nlen = nlen;
        field_set_value(fd, h, value, vlen);
        if (fd->value == NULL) {
            fd->value = "";
            fd->vlen = 0;
        }
    }
}

/* fields_gather() for the fields of a plain header block, read from the
 * message. */
static void
own_fields_gather(struct mime_view *v, const struct own_fields *of, bool content, struct gather *g)
{
    for (size_t i = 0; i < of->n; i++) {
        const struct header_field *hf = &of->f[i];
        const char *name = of->msg + hf->start;
        size_t vlen = hf->end - hf->start - hf->nlen - 1;
        struct field *fd;

        if (header_block_is_content(name, hf->nlen) != content)
            continue;
        if (g->n >= g->max) {
            view_note_limit(v, "max_headers", g->max);
            return;
        }
        g->n++;
        if (!gather_keeps(g, name, hf->nlen, vlen))
            continue;
        fd = &g->f[g->kept++];
        fd->name = name;
        fd->nlen = hf->nlen;
        field_set_value(fd, NULL, name + hf->nlen + 1, vlen);
        if (fd->value == NULL) {
            fd->value = "";
            fd->vlen = 0;
        }
    }
}

/*
 * Append f's value unfolded (valid UTF-8, cut at MIME_VIEW_MAX_HEADER_BYTES)
 * and its NUL to b at f->value_off; first decoded by GMime if f->decode
 * and the value holds 8-bit bytes. *cut is set when the cap cut it.
 */
static int
field_append_value(struct textbuf *b, struct field *f, bool *cut)
{
    bool eight_bit;
    size_t vlen;
    int r;

    /* Plain ASCII under the cap comes out of mime_text_add() unchanged but
     * for CRs before LFs, which unfolding turns into spaces anyway; so
     * mime_text_unfold straight from the value, which also tells if it is ASCII.
     * When it is not, what was written is overwritten below. */
    if (f->vlen <= MIME_VIEW_MAX_HEADER_BYTES) {
        /* The value, its NUL and the NUL that ends b. */
        r = textbuf_reserve(b, f->vlen + 1);
        if (r < 0)
            return r;
        vlen = mime_text_unfold(b->p + f->value_off, f->value, f->vlen, &eight_bit);
        if (!eight_bit) {
            /* Keep the NUL mime_text_unfold() wrote, and b NUL-terminated. */
            b->len = f->value_off + vlen + 1;
            b->p[b->len] = '\0';
            return 0;
        }
    } else {
        eight_bit = ascii_prefix(f->value, f->vlen) < f->vlen;
    }
    if ((f->decode != NULL || f->decode_own) && eight_bit) {
        if (f->decode != NULL)
            f->value = g_mime_header_get_value(f->decode);
        else
            f->value = f->owned = field_decode_own(f->value, f->vlen);
        if (f->value == NULL)
            f->value = "";
        f->vlen = strlen(f->value);
        f->decode = NULL;
        f->decode_own = false;
        return field_append_value(b, f, cut);
    }
    r = mime_text_add(b, f->value, f->vlen, MIME_TEXT_INVALID_REPLACE,
                      f->value_off + MIME_VIEW_MAX_HEADER_BYTES);
    if (r < 0)
        return r;
    if (r == 1)
        *cut = true;
    vlen = mime_text_unfold(b->p + f->value_off, b->p + f->value_off, b->len - f->value_off,
                            &eight_bit);
    b->len = f->value_off + vlen;
    return textbuf_add(b, "", 1);
}

/*
 * Append f's name (valid UTF-8, cut at 1024 bytes) and its value unfolded
 * (cut at MIME_VIEW_MAX_HEADER_BYTES) to b, each with its NUL, and note
 * where they start. *cut is set when a cap cut either.
 */
static int
field_append(struct textbuf *b, struct field *f, bool *cut)
{
    size_t nlen = f->nlen;
    int r;

    f->name_off = b->len;
    /* Room for the name and the value as they are, which most are. */
    r = textbuf_reserve(b, nlen + f->vlen + 2);
    if (r < 0)
        return r;
    /* A name of plain ASCII under the cap is copied as it is. */
    if (nlen <= 1024 && mime_text_ascii_run((const unsigned char *)f->name, 0, nlen) == nlen) {
        memcpy(b->p + b->len, f->name, nlen);
        b->p[b->len + nlen] = '\0';
        b->len += nlen + 1;
    } else {
        r = mime_text_add(b, f->name, nlen, MIME_TEXT_INVALID_REPLACE, f->name_off + 1024);
        if (r == 1)
            *cut = true;
        if (r >= 0)
            r = textbuf_add(b, "", 1);
    }
    if (r < 0)
        return r;
    f->value_off = b->len;
    return field_append_value(b, f, cut);
}

/*
 * What GMime parsed of a message: its top part, and the lists that hold
 * the message's own fields and its Content-* fields (one list when the
 * top part was parsed alone). top and message are both NULL when GMime
 * gave up.
 */
struct parsed {
    GMimeObject *top;         /* a reference of ours */
    GMimeMessage *message;    /* NULL unless parsed as a message */
    GMimeHeaderList *own;     /* borrowed from top or message */
    GMimeHeaderList *content; /* borrowed from top */
};

static void
parsed_release(struct parsed *ps)
{
    if (ps->top != NULL)
        g_object_unref(ps->top);
    if (ps->message != NULL)
        g_object_unref(ps->message);
    memset(ps, 0, sizeof(*ps));
}

/* Point ctx's stream at its array from the start, and its parser at that. */
static void
parse_ctx_rewind(struct parse_ctx *ctx)
{
    g_mime_stream_mem_set_byte_array(GMIME_STREAM_MEM(ctx->stream), ctx->arr);
    g_mime_parser_init_with_stream(ctx->parser, ctx->stream);
    g_mime_parser_set_format(ctx->parser, GMIME_FORMAT_MESSAGE);
}

/*
 * Parse the bytes in ctx->arr. The message's top part is parsed alone, as
 * a MIME entity: GMime then builds the same parts, with the same fields,
 * but not the GMimeMessage around them, which would parse every address,
 * date and identifier field into objects that nothing here reads (a third
 * of GMime's time on a patch mail). GMime takes a header block for a part
 * where it takes it for a message, except one that starts with an mbox
 * From line ("From " or ">From ") that a message skips: where the part
 * fails, the message parse decides, as it always did.
 */
static void
parse_top(struct parse_ctx *ctx, struct parsed *ps)
{
    parse_ctx_rewind(ctx);
    ps->top = g_mime_parser_construct_part(ctx->parser, NULL);
    if (ps->top != NULL) {
        ps->own = ps->content = g_mime_object_get_header_list(ps->top);
        return;
    }
    parse_ctx_rewind(ctx);
    ps->message = g_mime_parser_construct_message(ctx->parser, NULL);
    if (ps->message == NULL)
        return;
    ps->own = g_mime_object_get_header_list(GMIME_OBJECT(ps->message));
    ps->top = g_mime_message_get_mime_part(ps->message);
    if (ps->top == NULL)
        return;
    g_object_ref(ps->top);
    ps->content = g_mime_object_get_header_list(ps->top);
}

/* The raw value of field hf of of: what follows its ':'. */
static const char *
own_value(const struct own_fields *of, const struct header_field *hf, size_t *ret_len)
{
    *ret_len = hf->end - hf->start - hf->nlen - 1;
    return of->msg + hf->start + hf->nlen + 1;
}

static bool
own_name_is(const struct own_fields *of, const struct header_field *hf, const char *name)
{
    size_t n = strlen(name);

    return hf->nlen == n && g_ascii_strncasecmp(of->msg + hf->start, name, n) == 0;
}

/* The content fields of of: at most one Content-Type and one
 * Content-Transfer-Encoding, and no other; false when there are others. */
static bool
own_content_fields(const struct own_fields *of, const struct header_field **ret_type,
                   const struct header_field **ret_cte)
{
    const struct header_field *type = NULL, *cte = NULL;

    for (size_t i = 0; i < of->n; i++) {
        const struct header_field *hf = &of->f[i];

        if (!header_block_is_content(of->msg + hf->start, hf->nlen))
            continue;
        if (type == NULL && own_name_is(of, hf, "Content-Type"))
            type = hf;
        else if (cte == NULL && own_name_is(of, hf, "Content-Transfer-Encoding"))
            cte = hf;
        else
            return false;
    }
    *ret_type = type;
    *ret_cte = cte;
    return true;
}

/* The transfer encoding the field cte names (the default without one);
 * false when it is one only GMime's part decodes. */
static bool
own_encoding(const struct own_fields *of, const struct header_field *cte,
             GMimeContentEncoding *ret_enc)
{
    const char *raw;
    size_t rlen;
    char *value;

    *ret_enc = GMIME_CONTENT_ENCODING_DEFAULT;
    if (cte == NULL)
        return true;
    raw = own_value(of, cte, &rlen);
    value = field_decode_own(raw, rlen);
    *ret_enc = g_mime_content_encoding_from_string(value != NULL ? value : "");
    g_free(value);
    return mime_decode_is_identity(*ret_enc) || *ret_enc == GMIME_CONTENT_ENCODING_BASE64 ||
           *ret_enc == GMIME_CONTENT_ENCODING_QUOTEDPRINTABLE;
}

/* GMime's reading of a Content-Type value raw[0..rlen) that
 * mime_ctype_plain() leaves to it: text/plain without a name, its
 * charset copied into *ret_charset. */
static bool
gmime_type_plain(const char *raw, size_t rlen, char **ret_charset)
{
    GMimeContentType *ct;
    const char *cs;
    char *value = field_decode_own(raw, rlen);
    bool plain;

    ct = value != NULL ? g_mime_content_type_parse(NULL, value) : NULL;
    g_free(value);
    if (ct == NULL)
        return false;
    plain = g_mime_content_type_is_type(ct, "text", "plain") &&
            g_mime_content_type_get_parameter(ct, "name") == NULL;
    cs = plain ? g_mime_content_type_get_parameter(ct, "charset") : NULL;
    *ret_charset = cs != NULL ? strdup(cs) : NULL;
    /* Without memory for the copy, GMime's parse takes over. */
    if (cs != NULL && *ret_charset == NULL)
        plain = false;
    g_object_unref(ct);
    return plain;
}

/* The Content-Type field type is text/plain without a name: its charset
 * (or NULL) into *ret_charset. */
static bool
own_type_plain(const struct own_fields *of, const struct header_field *type, char **ret_charset)
{
    const char *raw;
    size_t rlen;
    char *charset = NULL;
    bool plain;
    int r;

    /* GMime's parser picks a leaf or a multipart from the raw value,
     * the part takes its type from the decoded one: the same text
     * only without encoded words and 8-bit bytes. */
    raw = own_value(of, type, &rlen);
    if (ascii_find_at(raw, rlen, "=?", 1) != NULL || ascii_prefix(raw, rlen) < rlen)
        return false;
    r = mime_ctype_plain(raw, rlen, &plain, &charset);
    if (r < 0)
        return false;
    if (r == 0)
        plain = gmime_type_plain(raw, rlen, &charset);
    if (!plain)
        return false;
    *ret_charset = charset;
    return true;
}

/*
 * Whether the Content-* fields of of leave the message one text/plain
 * part whose content is its body as it stands: one Content-Type at most,
 * of text/plain and with no file name, one Content-Transfer-Encoding at
 * most, that leaves the bytes alone or undoes base64 or quoted-printable,
 * and no other Content-* field (a Content-Disposition could make it an
 * attachment). GMime would build just that part, from the bytes after the
 * blank line to the end, so the view is made without it. *ret_charset is
 * the part's charset parameter (NULL when it has none), for the caller to
 * free, and *ret_enc its transfer encoding. A Content-Type of the
 * shape most mail gives it is read by mime_ctype_plain(), any other
 * by GMime.
 */
static bool
plain_body(const struct own_fields *of, char **ret_charset, GMimeContentEncoding *ret_enc)
{
    const struct header_field *type, *cte;
    char *charset = NULL;

    if (!own_content_fields(of, &type, &cte) || !own_encoding(of, cte, ret_enc))
        return false;
    if (type != NULL && !own_type_plain(of, type, &charset))
        return false;
    *ret_charset = charset;
    return true;
}

/* The one body part of a plain_body() message: body[0..n) in the
 * charset and transfer encoding given, as walk_leaf() makes it of GMime's
 * part. */
static int
view_add_plain(struct walker *w, const char *body, size_t n, const char *charset,
               GMimeContentEncoding enc)
{
    struct mime_part p = {0};
    char *decoded = NULL;
    int r;

    w->visited++;
    p.role = MIME_PART_BODY;
    p.content_type = strdup("text/plain");
    if (p.content_type == NULL)
        return -ENOMEM;
    /* As walk_leaf() takes GMime's part: in place, or decoded directly. */
    r = mime_decode_is_identity(enc) ? 0 : mime_decode_raw(enc, body, n, &decoded, &n);
    if (r >= 0)
        r = mime_walk_set_text(w, &p, decoded != NULL ? decoded : body, n, charset);
    free(decoded);
    if (r == 0)
        r = mime_walk_add_part(w, &p);
    mime_walk_part_release(&p);
    return r;
}

/*
 * Parse msg[0..len) with its header block read here when it is plain
 * (header_block.h): GMime then gets, in a copy, the Content-* fields, the
 * blank line and the body, from which it builds the same MIME tree as
 * from the whole message, and makes objects of a few fields instead of
 * dozens. On success returns true, with of filled and *ret_buf the copy,
 * which ps's parts read from and the caller frees after ps. Returns false
 * when the message is to be parsed whole (parse_top()).
 */
static bool
parse_split(struct parse_ctx *ctx, const char *msg, size_t len, const struct own_fields *of,
            char **ret_buf, struct parsed *ps)
{
    size_t need, at = 0;
    char *buf;

    need = len - of->blank;
    for (size_t i = 0; i < of->n; i++)
        if (header_block_is_content(msg + of->f[i].start, of->f[i].nlen))
            need += of->f[i].end - of->f[i].start;
    if (need > G_MAXUINT)
        return false;
    buf = malloc(need);
    if (buf == NULL)
        return false;
    for (size_t i = 0; i < of->n; i++) {
        const struct header_field *hf = &of->f[i];

        if (!header_block_is_content(msg + hf->start, hf->nlen))
            continue;
        memcpy(buf + at, msg + hf->start, hf->end - hf->start);
        at += hf->end - hf->start;
    }
    memcpy(buf + at, msg + of->blank, len - of->blank);
    ctx->arr->data = (guint8 *)buf;
    ctx->arr->len = (guint)need;
    parse_ctx_rewind(ctx);
    ps->top = g_mime_parser_construct_part(ctx->parser, NULL);
    if (ps->top == NULL) {
        free(buf);
        return false;
    }
    ps->own = ps->content = g_mime_object_get_header_list(ps->top);
    *ret_buf = buf;
    return true;
}

/*
 * The message's own fields, then its Content-* fields: the order GMime
 * gives a GMimeMessage, which keeps the Content-* fields on its top part.
 * When the top part is parsed alone (parse_top()), all the fields are in
 * its one list, and two passes over it keep that order. All their text goes in one
 * block, which the first name starts: one allocation, not two a field, and
 * the fields lie together for the scans over them.
 */
static int
view_add_headers(struct mime_view *v, const struct parsed *ps, const struct own_fields *of,
                 const struct classifier_limits *limits, mime_view_field_fn *want)
{
    GMimeHeaderList *own = ps->own, *content = ps->content;
    struct textbuf b = {0};
    struct field *f = NULL;
    struct gather g = {.want = want};
    size_t total = 0, n = 0, bytes = 0;
    int r = 0;

    if (of != NULL)
        total = of->n;
    else if (own != NULL)
        total = (size_t)g_mime_header_list_get_count(own);
    if (of == NULL && content != NULL && content != own)
        total += (size_t)g_mime_header_list_get_count(content);
    if (total > limits->max_headers)
        total = limits->max_headers;
    f = malloc((total ? total : 1) * sizeof(*f));
    if (f == NULL)
        return -ENOMEM;
    g.f = f;
    g.max = total;
    if (of != NULL)
        own_fields_gather(v, of, false, &g);
    else
        fields_gather(v, own, false, &g);
    /* Without a GMime parse, the Content-* fields are the message's too. */
    if (of != NULL && content == NULL)
        own_fields_gather(v, of, true, &g);
    else
        fields_gather(v, content, true, &g);
    n = g.kept;
    if (n == 0)
        goto out;
    for (size_t i = 0; i < n; i++)
        bytes += f[i].nlen + f[i].vlen + 2;
    r = textbuf_reserve(&b, bytes);
    for (size_t i = 0; i < n && r >= 0; i++)
        r = field_append(&b, &f[i], &v->truncated);
    if (r < 0)
        goto out;
    v->headers = malloc(n * sizeof(*v->headers));
    if (v->headers == NULL) {
        r = -ENOMEM;
        goto out;
    }
    /* b.p moves as it grows: point into it once it is complete. */
    for (size_t i = 0; i < n; i++) {
        v->headers[i].name = b.p + f[i].name_off;
        v->headers[i].value = b.p + f[i].value_off;
    }
    v->n_headers = n;
    b.p = NULL;
out:
    free(b.p);
    for (size_t i = 0; i < n; i++)
        g_free(f[i].owned);
    free(f);
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
    r = mime_text_add(&b, msg, len, MIME_TEXT_INVALID_LATIN1, w->limits->max_part_bytes);
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
    r = mime_walk_add_part(w, &p);
out:
    mime_walk_part_release(&p);
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
    return mime_view_parse_fields(msg, len, limits, NULL, ret);
}

/* msg[0..len) cut to max_message_bytes (noted on v) and to what GMime
 * can take, from where its header starts (mime_view_header_start()). */
static void
clamp_message(struct mime_view *v, const struct classifier_limits *limits, const char **msg,
              size_t *len)
{
    if (*msg == NULL)
        *len = 0;
    if (*len > limits->max_message_bytes || *len > G_MAXUINT) {
        *len = limits->max_message_bytes < G_MAXUINT ? limits->max_message_bytes : G_MAXUINT;
        view_note_limit(v, "max_message_bytes", *len);
    }
    if (*msg != NULL) {
        size_t skip = mime_view_header_start(*msg, *len);

        *msg += skip;
        *len -= skip;
    }
}

/* One message's parse: by GMime, or its fields and plain body here. */
struct parse_state {
    struct parse_ctx *ctx;
    struct parsed ps;
    char *plain_charset;
    GMimeContentEncoding plain_enc;
    char *split_buf;
    bool own;   /* of holds the fields, read here */
    bool plain; /* plain_body(): the body is read here too */
};

/* Parse msg[0..len), len > 0: its fields into of when they can be read
 * here, its body here when it is plain (plain_body()), else by GMime. */
static int
parse_state_run(struct parse_state *st, struct own_fields *of, const char *msg, size_t len)
{
    st->ctx = parse_ctx_get();
    if (st->ctx == NULL)
        return -ENOMEM;
    /* Else wrap the caller's bytes without copying; the stream only
     * reads them. Setting the array rewinds the stream; re-initialising
     * the parser drops all its per-message state (buffers, headers,
     * boundaries, offsets) but keeps the format, so set that too. */
    st->own = header_block_split(msg, len, of->f, MIME_VIEW_OWN_FIELDS, &of->n, &of->blank) == 0;
    of->msg = msg;
    if (st->own && plain_body(of, &st->plain_charset, &st->plain_enc)) {
        st->plain = true;
    } else if (!st->own || !parse_split(st->ctx, msg, len, of, &st->split_buf, &st->ps)) {
        st->own = false;
        st->ctx->arr->data = (guint8 *)(uintptr_t)msg;
        st->ctx->arr->len = (guint)len;
        parse_top(st->ctx, &st->ps);
    }
    return 0;
}

static void
parse_state_release(struct parse_state *st)
{
    parsed_release(&st->ps);
    free(st->plain_charset);
    free(st->split_buf);
    if (st->ctx != NULL) {
        st->ctx->arr->data = NULL;
        st->ctx->arr->len = 0;
    }
}

/* Every body part of v is HTML, and there is one. */
static bool
html_only(const struct mime_view *v)
{
    bool text = false, html = false;

    for (size_t i = 0; i < v->n_parts; i++) {
        if (v->parts[i].role != MIME_PART_BODY)
            continue;
        if (v->parts[i].is_html)
            html = true;
        else
            text = true;
    }
    return html && !text;
}

int
mime_view_parse_fields(const char *msg, size_t len, const struct classifier_limits *limits,
                       mime_view_field_fn *want, struct mime_view **ret)
{
    struct mime_view *v;
    struct walker w = {0};
    struct parse_state st = {.plain_enc = GMIME_CONTENT_ENCODING_DEFAULT};
    struct own_fields of;
    int r = 0;

    mime_view_global_init();
    v = calloc(1, sizeof(*v));
    if (v == NULL)
        return -ENOMEM;
    w.v = v;
    w.limits = limits;
    clamp_message(v, limits, &msg, &len);
    if (len > 0)
        r = parse_state_run(&st, &of, msg, len);
    if (r < 0)
        goto out;
    if (!st.plain && st.ps.top == NULL && st.ps.message == NULL) {
        v->malformed = len > 0;
        r = view_add_raw(&w, msg ? msg : "", len);
        goto out;
    }
    r = view_add_headers(v, &st.ps, st.own ? &of : NULL, limits, want);
    if (r < 0)
        goto out;
    if (st.plain) {
        size_t body = of.blank + (msg[of.blank] == '\r' ? 2 : 1);

        r = view_add_plain(&w, msg + body, len - body, st.plain_charset, st.plain_enc);
    } else {
        r = mime_walk(&w, st.ps.top, 0);
    }
    if (r >= 0)
        v->has_html_only = html_only(v);
out:
    parse_state_release(&st);
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
    /* All the fields' text is one block, which the first name starts. */
    if (v->n_headers > 0)
        free(v->headers[0].name);
    free(v->headers);
    for (size_t i = 0; i < v->n_parts; i++)
        mime_walk_part_release(&v->parts[i]);
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
