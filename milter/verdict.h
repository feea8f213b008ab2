/*
 * verdict.h - turn a classifier result and the configuration into the
 * actions the MTA should take, as plain data (an "action plan").
 *
 * The plan is applied through libmilter by callbacks.c or printed by
 * `slop-milter -t`; both use the same plan, so the offline mode shows
 * exactly what the daemon would do. Nothing here talks to libmilter.
 *
 * Ownership: a plan owns its strings; release it with
 * verdict_plan_release(). Pure functions of their inputs: thread-safe.
 */
#ifndef SLOP_MILTER_VERDICT_H
#define SLOP_MILTER_VERDICT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "classifier.h"
#include "config.h"

#define VERDICT_NAME_MAX 64         /* longest header name we remove */
#define VERDICT_MAX_REMOVE 256      /* inbound X-Slop-* occurrences removed */
#define VERDICT_MAX_ADD 8           /* headers added */
#define VERDICT_MAX_SMTP_LINES 32   /* lines of a multi-line SMTP reply */
#define VERDICT_SMTP_LINE_MAX 980   /* bytes per reply line after %-escaping, NUL excluded */
#define VERDICT_HEADER_LINE_MAX 998 /* bytes per header line (RFC 5322) */
#define VERDICT_FOLD_AT 78          /* preferred header line length */
#define VERDICT_HIT_TEXT_MAX 300    /* bytes of one finding's description kept */

enum verdict_result {
    VERDICT_ACCEPT = 0,
    VERDICT_QUARANTINE, /* accept and hold */
    VERDICT_REJECT,
    VERDICT_TEMPFAIL,
};

/* Why the plan was made: a scan, or a failure policy. */
enum verdict_cause {
    VERDICT_SCANNED = 0,
    VERDICT_INTERNAL_ERROR,
    VERDICT_TIMEOUT,
    VERDICT_OVERSIZE,
    VERDICT_BUSY, /* the memory budget (MaxMemory) was full */
};

/* One X-Slop-* header name seen in the message and how often. */
struct verdict_seen {
    const char *name;
    unsigned count;
};

struct verdict_input {
    const struct verdict_seen *seen; /* borrowed; may be NULL when n_seen is 0 */
    size_t n_seen;
    const char *subject; /* raw Subject value as received; NULL when none */
};

struct verdict_removal {
    char name[VERDICT_NAME_MAX];
    unsigned index; /* 1-based among headers of this name */
};

struct verdict_header {
    char name[VERDICT_NAME_MAX];
    char *value; /* may hold folds: "\n\t" followed by more text */
};

struct verdict_plan {
    enum verdict_result result;
    enum verdict_cause cause;
    enum classifier_action action; /* what the score reached; NONE for failures */
    bool monitor;                  /* Mode monitor: result is always accept */
    /* Removals in the order to apply them (per name, highest index first). */
    struct verdict_removal remove[VERDICT_MAX_REMOVE];
    size_t n_remove;
    bool remove_truncated; /* more inbound X-Slop-* fields than VERDICT_MAX_REMOVE */
    struct verdict_header add[VERDICT_MAX_ADD];
    size_t n_add;
    char *subject;                            /* new Subject value; NULL: unchanged */
    bool subject_add;                         /* the message had no Subject: add one */
    char *quarantine;                         /* quarantine reason; NULL: none */
    char rcode[4];                            /* SMTP reply code ("550"), "" when none */
    char xcode[8];                            /* enhanced status code ("5.7.1") */
    char *smtp_lines[VERDICT_MAX_SMTP_LINES]; /* unescaped reply text */
    size_t n_smtp_lines;
    bool reply; /* enforce mode reached the reply action: answer the sender */
};

void verdict_plan_init(struct verdict_plan *plan);
void verdict_plan_release(struct verdict_plan *plan);

/*
 * Build the plan for a scanned message. plan must be initialised (it is
 * released first). Returns 0 or -ENOMEM (the plan is then empty).
 */
int verdict_build(const struct config *cfg, const struct classifier_result *res,
                  const struct verdict_input *in, struct verdict_plan *plan);

/*
 * Build the plan for a message that could not be judged: the policy of
 * cause (OnInternalError, OnTimeout, OnOversize) decides. For
 * VERDICT_OVERSIZE with OnOversize scan the caller scans instead; here it
 * counts as accept. Returns 0 or -ENOMEM.
 */
int verdict_build_failure(const struct config *cfg, enum verdict_cause cause,
                          const struct verdict_input *in, struct verdict_plan *plan);

/*
 * Copy in to out doubling every '%' (libmilter passes reply text through
 * a format). Returns the length written, or -ENOSPC when out is too
 * small (out then holds a truncated, still NUL-terminated, copy).
 */
int verdict_escape(const char *in, char *out, size_t size);

/*
 * Fold "Name: value" text at spaces and after commas to lines of about
 * VERDICT_FOLD_AT columns, never more than VERDICT_HEADER_LINE_MAX bytes;
 * a continuation starts with "\n\t". name_len is the header name's
 * length (the first line also holds "Name: "). Returns a new string or
 * NULL on -ENOMEM.
 */
char *verdict_fold(size_t name_len, const char *value);

const char *verdict_result_name(enum verdict_result r);
const char *verdict_cause_name(enum verdict_cause c);

/* The -t output for one plan (see slop-milter(8)). */
void verdict_print(const struct verdict_plan *plan, FILE *f);

#endif
