/*
 * mime_walk.c - walk a message's MIME tree into the parts of its view:
 * each leaf's role (body, attachment, patch), type, file name and decoded
 * text, one alternative of a multipart/alternative, the parts of a
 * message/rfc822.
 *
 * Limits: max_mime_depth and max_mime_parts (noted on the view when they
 * cut the walk), max_part_bytes of text per part. Ownership: a part's
 * strings belong to the view once added. Threading: no shared state.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <gmime/gmime.h>

#include "mime_decode.h"
#include "mime_html.h"
#include "mime_text.h"
#include "mime_walk.h"
#include "textbuf.h"

/* "type/subtype" in lower case, as g_mime_content_type_get_mime_type()
 * spells it but without its printf. */
static char *
content_type_dup(GMimeContentType *ct)
{
    const char *type = ct ? g_mime_content_type_get_media_type(ct) : NULL;
    const char *sub = ct ? g_mime_content_type_get_media_subtype(ct) : NULL;
    size_t tl, sl;
    char *d;

    if (type == NULL)
        type = "text";
    if (sub == NULL)
        sub = "plain";
    tl = strlen(type);
    sl = strlen(sub);
    d = malloc(tl + 1 + sl + 1);
    if (d == NULL)
        return NULL;
    memcpy(d, type, tl);
    d[tl] = '/';
    memcpy(d + tl + 1, sub, sl + 1);
    for (char *p = d; *p; p++)
        if (*p >= 'A' && *p <= 'Z')
            *p = (char)(*p - 'A' + 'a');
    return d;
}

int
mime_walk_add_part(struct walker *w, struct mime_part *p)
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
    memset(p, 0, sizeof(*p));
    return 0;
}

void
mime_walk_part_release(struct mime_part *p)
{
    free(p->content_type);
    free(p->filename);
    free(p->text);
    memset(p, 0, sizeof(*p));
}

/* Set p's text from the decoded content raw[0..n) in charset cs (NULL:
 * none given), as UTF-8, and from HTML when p is. */
int
mime_walk_set_text(struct walker *w, struct mime_part *p, const char *raw, size_t n, const char *cs)
{
    struct textbuf out = {0};
    int r;

    if (p->is_html) {
        struct textbuf utf = {0};

        r = mime_text_convert(raw, n, cs, w->limits->max_part_bytes, &utf);
        if (r >= 0) {
            p->truncated = r == 1;
            r = mime_html_to_text(utf.p ? utf.p : "", utf.len, &out);
        }
        free(utf.p);
    } else {
        r = mime_text_convert(raw, n, cs, w->limits->max_part_bytes, &out);
        if (r == 1)
            p->truncated = true;
    }
    if (r < 0) {
        free(out.p);
        return r;
    }
    p->text = textbuf_steal(&out, &p->len);
    if (p->text == NULL)
        return -ENOMEM;
    if (p->truncated)
        w->v->truncated = true;
    return 0;
}

/* Signatures carry no content a reader wrote. */
static bool
is_signature_type(const char *type)
{
    return strcmp(type, "application/pgp-signature") == 0 ||
           strcmp(type, "application/pkcs7-signature") == 0 ||
           strcmp(type, "application/x-pkcs7-signature") == 0;
}

/* A patch by its type or its file name's extension. */
static bool
is_patch_part(const struct mime_part *p)
{
    return strcmp(p->content_type, "text/x-patch") == 0 ||
           strcmp(p->content_type, "text/x-diff") == 0 ||
           strcmp(p->content_type, "text/diff") == 0 ||
           strcmp(p->content_type, "application/x-patch") == 0 ||
           (p->filename != NULL && (mime_text_ends_with_ci(p->filename, ".patch") ||
                                    mime_text_ends_with_ci(p->filename, ".diff")));
}

/* p's role (and whether it is HTML) by its type and disposition; returns
 * whether its text is read. */
static bool
part_role(struct mime_part *p, GMimeContentDisposition *disp)
{
    bool is_text = strncmp(p->content_type, "text/", 5) == 0;
    bool attachment = disp != NULL && g_mime_content_disposition_is_attachment(disp);

    if (is_patch_part(p)) {
        p->role = MIME_PART_PATCH;
        return true;
    }
    if (attachment || !is_text) {
        p->role = MIME_PART_ATTACHMENT;
        return is_text;
    }
    p->role = MIME_PART_BODY;
    p->is_html = strcmp(p->content_type, "text/html") == 0;
    return true;
}

/* The decoded text of gp into p, in its charset cs: read in place when
 * it can be, else decoded here or by GMime. */
static int
leaf_text(struct walker *w, GMimePart *gp, struct mime_part *p, const char *cs)
{
    GByteArray *arr = NULL;
    char *decoded = NULL;
    const char *raw;
    size_t n;
    int r;

    if (!mime_decode_in_place(gp, &raw, &n)) {
        r = mime_decode_direct(gp, &decoded, &n);
        if (r < 0)
            return r;
        if (r == 1) {
            raw = decoded;
        } else {
            arr = mime_decode_part(gp);
            raw = (const char *)arr->data;
            n = arr->len;
        }
    }
    r = mime_walk_set_text(w, p, raw, n, cs);
    if (arr != NULL)
        g_byte_array_free(arr, TRUE);
    free(decoded);
    return r;
}

static int
walk_leaf(struct walker *w, GMimePart *gp)
{
    GMimeObject *obj = GMIME_OBJECT(gp);
    GMimeContentType *ct = g_mime_object_get_content_type(obj);
    GMimeContentDisposition *disp = g_mime_object_get_content_disposition(obj);
    struct mime_part p = {0};
    const char *fname = g_mime_part_get_filename(gp);
    int r = 0;

    p.content_type = content_type_dup(ct);
    if (p.content_type == NULL)
        return -ENOMEM;
    if (fname != NULL) {
        p.filename = mime_text_dup(fname, strlen(fname), 1024, NULL);
        if (p.filename == NULL) {
            r = -ENOMEM;
            goto out;
        }
    }
    if (is_signature_type(p.content_type))
        goto out;
    if (part_role(&p, disp))
        r = leaf_text(w, gp, &p, ct ? g_mime_content_type_get_parameter(ct, "charset") : NULL);
    else
        p.len = mime_decode_size(gp);
    if (r < 0)
        goto out;
    r = mime_walk_add_part(w, &p);
out:
    mime_walk_part_release(&p);
    return r;
}

static bool
object_is_type(GMimeObject *o, const char *type, const char *subtype)
{
    GMimeContentType *ct = g_mime_object_get_content_type(o);

    return ct != NULL && g_mime_content_type_is_type(ct, type, subtype);
}

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
    return mime_walk(w, pick, depth + 1);
}

/* Past the depth or the count of parts the walk may go: the limit is
 * noted, and the walk goes no further here. */
static bool
walk_over_limit(struct walker *w, unsigned depth)
{
    if (depth > w->limits->max_mime_depth) {
        view_note_limit(w->v, "max_mime_depth", w->limits->max_mime_depth);
        return true;
    }
    if (w->visited >= w->limits->max_mime_parts) {
        view_note_limit(w->v, "max_mime_parts", w->limits->max_mime_parts);
        return true;
    }
    return false;
}

/* Every part of a multipart, or the one alternative to read. */
static int
walk_multipart(struct walker *w, GMimeObject *o, unsigned depth)
{
    GMimeMultipart *mp = GMIME_MULTIPART(o);
    int n, r;

    if (object_is_type(o, "multipart", "alternative"))
        return walk_alternative(w, mp, depth);
    n = g_mime_multipart_get_count(mp);
    for (int i = 0; i < n; i++) {
        r = mime_walk(w, g_mime_multipart_get_part(mp, i), depth + 1);
        if (r < 0)
            return r;
    }
    return 0;
}

int
mime_walk(struct walker *w, GMimeObject *o, unsigned depth)
{
    if (o == NULL || walk_over_limit(w, depth))
        return 0;
    w->visited++;

    if (GMIME_IS_MULTIPART(o))
        return walk_multipart(w, o, depth);
    if (GMIME_IS_MESSAGE_PART(o)) {
        GMimeMessage *inner = g_mime_message_part_get_message(GMIME_MESSAGE_PART(o));

        if (inner == NULL)
            return 0;
        return mime_walk(w, g_mime_message_get_mime_part(inner), depth + 1);
    }
    if (GMIME_IS_PART(o))
        return walk_leaf(w, GMIME_PART(o));
    return 0;
}
