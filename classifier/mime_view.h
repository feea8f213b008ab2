/*
 * mime_view.h - a flat, decoded view of one MIME message (GMime inside).
 *
 * mime_view_parse() turns raw bytes into plain C data: the decoded header
 * fields, every text part converted to UTF-8, and a list of attachments.
 * Nothing here exposes GMime; everything is owned by the view and freed by
 * mime_view_free(). Every size is capped by struct classifier_limits.
 * Thread-safe: GMime is initialised once (mime_view_global_init()).
 */
#ifndef SLOP_MIME_VIEW_H
#define SLOP_MIME_VIEW_H

#include <stdbool.h>
#include <stddef.h>

#include "classifier.h"

struct mime_header {
    char *name;  /* as written, e.g. "Subject" */
    char *value; /* unfolded, RFC 2047 decoded, UTF-8 */
};

enum mime_part_role {
    MIME_PART_BODY = 0,   /* inline text/plain (or text/html turned to text) */
    MIME_PART_PATCH,      /* text/x-patch, text/x-diff, *.patch, *.diff */
    MIME_PART_ATTACHMENT, /* any other attachment */
};

struct mime_part {
    enum mime_part_role role;
    char *content_type; /* "type/subtype", lower case */
    char *filename;     /* or NULL */
    char *text;         /* decoded UTF-8, NUL-terminated; NULL if not text */
    size_t len;         /* of text, or the decoded size of a binary part */
    bool is_html;       /* text came from text/html */
    bool truncated;     /* max_part_bytes cut it */
};

struct mime_view {
    struct mime_header *headers;
    size_t n_headers;
    struct mime_part *parts; /* in document order */
    size_t n_parts;
    bool has_html_only; /* text/html without a text/plain alternative */
    bool truncated;     /* a limit cut the message */
    const char *limit;  /* the first limit that cut it ("max_mime_parts"), or NULL */
    size_t limit_value; /* that limit's value */
    bool malformed;     /* GMime could not parse it; headers may be empty */
};

/* Call once before any thread parses; idempotent and thread-safe. */
void mime_view_global_init(void);

/*
 * Parse msg[0..len). On success *ret owns a view to free with
 * mime_view_free(). Malformed mail still yields a view (with malformed set
 * and the raw text as one body part). Returns -ENOMEM on allocation failure.
 */
/*
 * Where the header block of msg[0..len) starts: past an mbox "From " line
 * and any blank or space-only lines before the first field. The parse
 * begins there; bench/gmime-parse too, so that its floor parses the same
 * bytes.
 */
size_t mime_view_header_start(const char *msg, size_t len);

int mime_view_parse(const char *msg, size_t len, const struct classifier_limits *limits,
                    struct mime_view **ret);

/* Whether the header field named name[0..nlen) is wanted in a view. */
typedef bool mime_view_field_fn(const char *name, size_t nlen);

/*
 * mime_view_parse() with only the header fields want() asks for in
 * headers (every field when want is NULL), in their order. Decoding and
 * unfolding every Received: and DKIM-Signature: costs a scan more than
 * most of its rules. A field left out still counts toward max_headers,
 * and one long enough to be cut (over 8 KB raw) is kept, so the view
 * notes the same limits and the same cut as with every field.
 */
int mime_view_parse_fields(const char *msg, size_t len, const struct classifier_limits *limits,
                           mime_view_field_fn *want, struct mime_view **ret);

struct mime_view *mime_view_free(struct mime_view *v);

/* First header named name (case-insensitive), or NULL. Borrowed from v. */
const char *mime_view_header(const struct mime_view *v, const char *name);

#endif
