/*
 * message.h - the message model: what one mail is and what it contains.
 *
 * A struct message holds the kind (patch, report, reply, other), the text
 * regions rules match, the parsed patch (subject tags, changelog,
 * trailers, notes, diffstat, files, hunks) and the facts of a report
 * (versions, identifiers, traces, URLs). message_build() (message_build.h)
 * fills one from a MIME view; the parsers (patch_parse.h, report_parse.h)
 * fill their parts. The model calls none of them. The message owns
 * everything in it; free it with message_free().
 */
#ifndef SLOP_MESSAGE_H
#define SLOP_MESSAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "classifier.h"
#include "measure.h"
#include "region.h"
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

/* Free m and all it owns; returns NULL. m may be NULL. */
struct message *message_free(struct message *m);

#endif
