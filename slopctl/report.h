/*
 * report.h - what slopctl report gathers while it scans: the counts for the
 * summary and the charts, and one row per message for the table.
 *
 * Everything here is driven by mail, so everything is capped: the rows
 * kept (REPORT_MAX_ROWS, and REPORT_MAX_ROW_BYTES of text), the bytes of
 * each field copied from mail, the findings per row, the distinct rules,
 * senders and days counted (report_tally.h) and the scores kept for the
 * histogram. What a cap leaves out is counted, so the report can say so;
 * the message and action counts are never capped. The strings are copied
 * as mail had them (only cut): report_html.c escapes them on output.
 * Single-threaded.
 */
#ifndef SLOPCTL_REPORT_H
#define SLOPCTL_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "classifier.h"
#include "output.h"
#include "report_tally.h"

#define REPORT_KINDS (CLASSIFIER_KIND_REPLY + 1)
#define REPORT_MAX_ROWS 5000
#define REPORT_MAX_ROW_BYTES ((size_t)32 << 20)
#define REPORT_MAX_ROW_HITS 64
#define REPORT_MAX_SCORES ((size_t)1 << 20)
#define REPORT_MAX_RULES 1024
#define REPORT_MAX_SENDERS 8192
#define REPORT_MAX_DAYS 4096
/* Bytes kept of one field of mail (subject, sender, file name, ...) and of
 * one finding's evidence; a cut field ends in U+2026. */
#define REPORT_FIELD_MAX 300
#define REPORT_EVIDENCE_MAX 600

struct report_hit {
    char *rule;
    char *description;
    char *evidence; /* or NULL */
    char *doc;      /* or NULL */
    double score;
};

struct report_row {
    char *where;      /* file, or file#index in an mbox */
    char *message_id; /* or NULL */
    char *subject;    /* or NULL */
    char *from;       /* or NULL */
    char day[11];     /* UTC day of Date:, "" when none parses */
    enum classifier_kind kind;
    enum classifier_action action;
    double score;
    bool disclosure;
    bool truncated;
    struct report_hit *hits;
    size_t n_hits;
    size_t hits_dropped;
    size_t seq; /* scan order */
};

struct report {
    struct classifier_thresholds thresholds;
    char *doc_base; /* "" when links are not checked against a base */
    unsigned long messages;
    unsigned long errors;  /* inputs or messages that could not be scanned */
    unsigned long undated; /* no Date:, or none that parses, or one in the future */
    int64_t today;         /* days since 1970 when the report began */
    bool mask_senders;     /* From: and Message-ID shown by their domain only */
    unsigned long by_action[CLASSIFIER_ACTION__COUNT];
    unsigned long by_kind[REPORT_KINDS];
    struct report_row *rows;
    size_t n_rows;
    size_t row_bytes;
    unsigned long rows_dropped;
    double *scores;
    size_t n_scores;
    size_t scores_cap;
    unsigned long scores_dropped;
    struct report_tally rules;   /* findings by rule */
    struct report_tally senders; /* messages by From: address, lower case */
    struct report_tally days;    /* messages by UTC day of Date: */
    struct report_tally months;  /* the same by month, for long spans */
};

/* A new, empty report; thresholds and doc_base (as classifier_doc_base()
 * gives it) are copied. Free it with report_free(). Returns 0 or -ENOMEM. */
int report_new(const struct classifier_thresholds *thresholds, const char *doc_base,
               struct report **ret);
struct report *report_free(struct report *rep);

/* Count one scanned message: msg and len are its raw bytes (for Date:),
 * res its result; nothing is borrowed past the call. Returns 0 or
 * -ENOMEM. */
int report_add(struct report *rep, const struct output_source *src, const char *msg, size_t len,
               const struct classifier_result *res);

/* Count one input or message that could not be scanned. */
void report_add_error(struct report *rep);

/* Order the rows by score, highest first (ties: as they were scanned). */
void report_sort_rows(struct report *rep);

#endif
