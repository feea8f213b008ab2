/*
 * message.h - the message model: what one mail is and what it contains.
 *
 * message_build() turns a struct mime_view into a struct message: the
 * kind (patch, report, reply, other), the text regions rules match, the
 * parsed patch (subject tags, changelog, trailers, notes, diffstat, files,
 * hunks) and the facts of a report (versions, identifiers, traces, URLs).
 * The message owns everything in it; free it with message_free(). It does
 * not borrow from the view, which may be freed right after building.
 */
#ifndef SLOP_MESSAGE_H
#define SLOP_MESSAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "classifier.h"
#include "measure.h"
#include "mime_view.h"
#include "region.h"
#include "route.h"
#include "strv.h"

/* "[PATCH v3 2/7] net: foo: do bar" */
struct patch_subject {
    bool tagged;      /* a [PATCH ...] or [RFC ...] tag was present */
    char *prefix;     /* text inside the brackets, e.g. "PATCH v3 2/7" */
    unsigned version; /* 3; 1 when absent */
    unsigned index;   /* 2; 0 when absent */
    unsigned total;   /* 7; 0 when absent */
    bool rfc;
    bool resend;
    char *subsystem; /* "net: foo", or NULL */
    char *summary;   /* "do bar" */
};

struct patch_trailer {
    char *tag;     /* "Signed-off-by", case as written */
    char *value;   /* trimmed */
    uint32_t line; /* 1-based line in the patch text */
};

enum file_lang {
    FILE_LANG_OTHER = 0,
    FILE_LANG_C,        /* .c .h */
    FILE_LANG_SHELL,    /* .sh, scripts */
    FILE_LANG_KCONFIG,  /* Kconfig* */
    FILE_LANG_MAKEFILE, /* Makefile, Kbuild, *.mk */
    FILE_LANG_RST,      /* .rst, .txt under Documentation/ */
    FILE_LANG_PYTHON,
};

struct patch_file {
    char *old_path; /* without "a/"; NULL for a new file */
    char *new_path; /* without "b/"; NULL for a deleted file */
    enum file_lang lang;
    bool binary;
    unsigned added;
    unsigned removed;
};

/* A hunk refers to its lines by index into the line maps of REGION_ADDED
 * and REGION_REMOVED (region.lines[first .. first + count)). */
struct patch_hunk {
    size_t file; /* index into message.files */
    uint32_t old_start, old_count, new_start, new_count;
    size_t added_first, added_count;
    size_t removed_first, removed_count;
};

struct message {
    enum classifier_kind kind;
    char *subject;          /* decoded, or NULL */
    char *from;             /* decoded From: as written, or NULL */
    char *from_addr;        /* bare address, lower case, or NULL */
    char *message_id;       /* without <>, or NULL */
    char *in_reply_to;      /* without <>, or NULL */
    bool auto_submitted;    /* Auto-Submitted: other than "no": never a report */
    struct strv recipients; /* To and Cc bare addresses, lower case */

    struct region regions[REGION__COUNT];

    /* patch */
    bool has_diff;
    bool cover_letter; /* [PATCH 0/N] */
    bool has_diffstat;
    bool has_separator; /* a "---" line ends the log */
    struct patch_subject psubj;
    struct patch_trailer *trailers;
    size_t n_trailers;
    struct patch_file *files;
    size_t n_files;
    struct patch_hunk *hunks;
    size_t n_hunks;

    /* report facts (also filled for patches, from the changelog) */
    struct strv versions;  /* "6.8.0-45-generic", "v6.9-rc2", "next-20260501" */
    struct strv functions; /* "foo_bar" for each "foo_bar()" cited */
    struct strv paths;     /* "drivers/usb/core/hub.c" */
    struct strv configs;   /* "CONFIG_FOO" */
    struct strv urls;

    unsigned attachments;        /* non-text attachments */
    unsigned binary_attachments; /* executables, archives, octet-stream */
    bool html_only;
    bool disclosure;     /* Assisted-by:, Generated-by:, or a stated AI origin */
    bool report_address; /* went to a report address, or the caller said it is a report */
    bool truncated;      /* a limit cut the input */
    /* The report and code regions are the body's own lines, each whole
     * and in order, sorted between them (no attachment was added): every
     * literal within a line of either is in the body's text too. */
    bool report_of_body;

    double measures[MEASURE__COUNT];
    /* Owned text a `measure` condition shows as its evidence instead of
     * "name=value" (facts.c: what is missing, fixed or duplicated); NULL
     * for most measures. */
    char *measure_evidence[MEASURE__COUNT];
};

/*
 * Whether message_build() reads the header field named name[0..nlen)
 * (case ignored) for more than the headers region: Subject, From, To,
 * Cc, Message-ID, In-Reply-To, Auto-Submitted, and References for a
 * series. A view of
 * only these fields (mime_view_parse_fields()) builds the same message
 * but for that region.
 */
bool message_field_used(const char *name, size_t nlen);

/*
 * Build the model of v. On success *ret owns a message to free with
 * message_free(); measures are computed. Returns -ENOMEM on allocation
 * failure; bad input is never an error.
 */
int message_build(const struct mime_view *v, const struct classifier_limits *limits,
                  struct message **ret);
/* message_build() for mail that went to route's recipients (NULL: none
 * known): mail to a report address, or that the caller says is a report,
 * is a report unless it is a patch or a reply. */
int message_build_routed(const struct mime_view *v, const struct classifier_limits *limits,
                         const struct route *route, struct message **ret);

struct message *message_free(struct message *m);

/* Internal steps of message_build(), one file each. */

/* message.c: a limit (its struct classifier_limits field name, static)
 * cut the input: sets m->truncated and the limit_hit measure; the first
 * limit noted becomes that measure's evidence ("max_hunks=5000", or the
 * name alone when value is 0). Never
 * fails: without memory the evidence is only left out. */
void message_note_limit(struct message *m, const char *name, size_t value);

/* The lines of a text: line i is text[v[i].off .. v[i].off + v[i].len),
 * without its '\n' (a '\r' before it is kept). message_build() indexes the
 * author's own text while it writes it, so that patch_parse_lines() and
 * report_parse_lines() need not look for its '\n's again. */
struct text_line {
    size_t off, len;
};

struct text_lines {
    struct text_line *v;
    size_t n;
};

/* message.c: index the lines of text[0..len) into *ret (free ret->v), at
 * most max of them; sets *cut when text is left after those. */
int text_lines_split(const char *text, size_t len, size_t max, struct text_lines *ret, bool *cut);

/* patch_parse.c: parse a patch text (changelog, trailers, notes, diffstat,
 * diff) from text[0..len) into m; fills the patch regions and fields. */
int patch_parse(struct message *m, const char *text, size_t len,
                const struct classifier_limits *limits);
/* patch_parse() with the lines of text already indexed (all of them, as
 * text_lines_split() would find them); lines NULL indexes them here. */
int patch_parse_lines(struct message *m, const char *text, size_t len,
                      const struct text_lines *lines, const struct classifier_limits *limits);
/* patch_subject.c: parse the subject's [PATCH ...] tag into m->psubj. */
int patch_subject_parse(struct message *m);

/* report_parse.c: a line of a user-space tool's trace: valgrind's
 * "==1234== Invalid read" or a sanitizer's "#3 0x4f5a3b in foo" frame,
 * leading white space allowed. */
bool report_sanitizer_line(const char *p, size_t len);

/* report_parse.c: a line of another runtime's backtrace: Python's
 * "Traceback (most recent call last):" and "File \"x.py\", line 3", Java's
 * "at a.B.c(B.java:42)" and "Caused by:", Ruby's "from x.rb:12:in `f'",
 * JavaScript's and Rust's "at f (x.js:1:2)", Go's "goroutine 1 [running]:",
 * gdb's "#0  0x... in f ()", PHP's "#0 /x.php(12): f()". Leading white
 * space allowed. */
bool report_backtrace_line(const char *p, size_t len);

/* report_parse.c: split prose from code and traces, extract versions,
 * identifiers and URLs from text[0..len) (own text, quotes removed). */
int report_parse(struct message *m, const char *text, size_t len,
                 const struct classifier_limits *limits);
/* report_parse() with the lines of text already indexed, as for
 * patch_parse_lines(); lines NULL indexes them here. */
int report_parse_lines(struct message *m, const char *text, size_t len,
                       const struct text_lines *lines, const struct classifier_limits *limits);

#endif
