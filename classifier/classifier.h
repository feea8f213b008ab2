/*
 * classifier.h - the public interface of the slop classifier library.
 *
 * Bytes of one RFC 5322 message and its envelope go in; a result comes out:
 * the message kind, a score, an action and the list of rule hits, each with
 * evidence and a documentation link. The library never logs, never exits
 * and never reads configuration files on its own; callers (slop-milter,
 * slopctl, the tests and the fuzzers) pass everything in.
 *
 * Threading: a struct classifier is immutable once built and may be shared
 * by any number of threads calling classifier_scan() at once. Results are
 * owned by the caller.
 *
 * This header exposes no GMime, PCRE2, LMDB or libmilter type.
 */
#ifndef SLOP_CLASSIFIER_H
#define SLOP_CLASSIFIER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CLASSIFIER_VERSION "0.1.0"

enum classifier_kind {
    CLASSIFIER_KIND_OTHER = 0,
    CLASSIFIER_KIND_PATCH,
    CLASSIFIER_KIND_REPORT,
    CLASSIFIER_KIND_REPLY,
};

/* Ordered by severity: a larger value is a more severe action. */
enum classifier_action {
    CLASSIFIER_ACTION_NONE = 0,
    CLASSIFIER_ACTION_TAG,
    CLASSIFIER_ACTION_REPLY,
    CLASSIFIER_ACTION_QUARANTINE,
    CLASSIFIER_ACTION_REJECT,
    CLASSIFIER_ACTION__COUNT,
};

/* Hard caps on everything the input drives. Zero fields are not allowed:
 * start from the limits classifier_options_default() sets and change what
 * you need. */
struct classifier_limits {
    size_t max_message_bytes; /* bytes parsed; the rest is ignored */
    unsigned max_mime_depth;  /* multipart nesting */
    unsigned max_mime_parts;  /* parts walked */
    size_t max_part_bytes;    /* decoded bytes kept per text part */
    unsigned max_headers;     /* header fields looked at */
    unsigned max_lines;       /* text lines analysed per message */
    size_t max_line_bytes;    /* longer lines are cut */
    unsigned max_files;       /* files per patch */
    unsigned max_hunks;       /* hunks per patch */
    unsigned max_hits;        /* hits kept per message */
    uint32_t match_limit;     /* PCRE2 match limit per match call */
    uint32_t depth_limit;     /* PCRE2 depth (backtracking memory) limit */
};

/* Thresholds per action; a value <= 0 disables that action. */
struct classifier_thresholds {
    double score[CLASSIFIER_ACTION__COUNT]; /* index NONE unused */
};

struct classifier_options {
    struct classifier_limits limits;
    struct classifier_thresholds thresholds;
    /* Base of threat-model and process document links; a rule's doc link
     * that starts with "@/" is rewritten to this base. NULL: the
     * profile's own (kernel: https://docs.kernel.org/; any other profile
     * has none, and such links are left out of its hits). */
    const char *doc_base;
    /* A scores file read after the rules directory's own *.scores files,
     * so its scores win (docs/rules.md); NULL: none. */
    const char *scores_file;
    /* Project profile: rules that name profiles (docs/rules.md) apply only
     * under one of them; rules that name none apply under all. NULL:
     * "kernel". "generic" ships for any other project; a site names its
     * own. */
    const char *profile;
    /* Where reports arrive: NULL-terminated glob patterns ('*' any run,
     * '?' one character, case-insensitive) matched against the envelope
     * recipients, or the To: and Cc: addresses when the envelope names
     * none. Mail to a matching address that names a problem (one word
     * such as crash, overflow or bug) is a report unless it is a patch or
     * a reply in a thread (In-Reply-To:). NULL:
     * CLASSIFIER_REPORT_RECIPIENTS; an empty list: no address makes a
     * report. Copied by classifier_new(). */
    const char *const *report_recipients;
};

#define CLASSIFIER_PROFILE_DEFAULT "kernel"
#define CLASSIFIER_PROFILE_GENERIC "generic" /* only the rules marked for no profile */
#define CLASSIFIER_REPORT_RECIPIENTS "security@*"
#define CLASSIFIER_MAX_PATTERNS 64 /* report_recipients patterns kept */

/* Where a rule file failed to load: file, 1-based line (0: whole file). */
struct classifier_diag {
    char file[512];
    unsigned line;
    char reason[256];
};

typedef void classifier_diag_fn(void *ctx, const struct classifier_diag *d);

/*
 * Look-ups into what the caller knows beyond one message: an indexed
 * source tree, merged fixes, MAINTAINERS, mail seen before and sender
 * history. The library never sees how they are stored (slop-milter and
 * slopctl back them with LMDB). Every callback may be NULL: that fact is
 * then unknown and the measures built from it stay 0. Callbacks are called
 * during classifier_scan() from the scanning thread; strings passed in are
 * borrowed for the call, and results go into the caller-sized buffers.
 */
#define CLASSIFIER_COMMIT_MAX 64   /* commit id buffer, NUL included */
#define CLASSIFIER_SUBJECT_MAX 160 /* subject buffer, NUL included */
#define CLASSIFIER_MSGID_MAX 256   /* Message-ID buffer, NUL included */
#define CLASSIFIER_ADDR_MAX 128    /* address buffer, NUL included */

struct classifier_fix {
    char commit[CLASSIFIER_COMMIT_MAX];
    char subject[CLASSIFIER_SUBJECT_MAX];
};

struct classifier_seen {
    char message_id[CLASSIFIER_MSGID_MAX];
    int64_t date;                   /* unix time it was recorded */
    char from[CLASSIFIER_ADDR_MAX]; /* its From: address, lower case; "" unknown */
};

struct classifier_maint {
    char addr[CLASSIFIER_ADDR_MAX]; /* lower case */
    bool list;                      /* an L: list, not an M: person */
};

/* Where a patch sits in its series, for the series look-ups: the series
 * is keyed by its root (the first References: id, else In-Reply-To, else
 * the message's own Message-ID), and only patches of the same version and
 * another index count as its other patches. */
struct classifier_series {
    const char *root;    /* Message-ID without <> */
    const char *self_id; /* this message's Message-ID, may be NULL */
    uint32_t version, index, total;
};

#define CLASSIFIER_SERIES_PARAS 32 /* changelog paragraph fingerprints per patch */
#define CLASSIFIER_NOTE_MAX 160    /* a flagged cover letter's note, NUL included */

struct classifier_lookup {
    void *ctx;
    /* Writes e.g. "indexed tree of 2026-11-30"; false: no tree indexed,
     * and nothing is reported missing. */
    bool (*tree_label)(void *ctx, char *buf, size_t size);
    bool (*has_symbol)(void *ctx, const char *name); /* function or macro */
    bool (*has_path)(void *ctx, const char *path);   /* file or directory */
    bool (*has_config)(void *ctx, const char *name); /* "CONFIG_FOO" */
    /* A merged change with this hunk fingerprint. */
    bool (*find_fix)(void *ctx, uint64_t hunk_fp, struct classifier_fix *ret);
    /* A merged fix of bug_class (classifier_bug_class_name()) in function. */
    bool (*find_function_fix)(void *ctx, const char *function, const char *bug_class,
                              struct classifier_fix *ret);
    /* Mail seen in the caller's window with one of fps or a simhash near
     * simhash (0: none), other than the message self_id (may be NULL),
     * recorded before the unix time before and before self_id itself was
     * recorded (0: no bound but self_id's): a message is a duplicate only
     * of mail that arrived before it. */
    bool (*find_duplicate)(void *ctx, const uint64_t *fps, size_t n_fps, uint64_t simhash,
                           const char *self_id, int64_t before, struct classifier_seen *ret);
    /* Maintainers and lists of path; returns how many were written (<= max). */
    size_t (*maintainers_of)(void *ctx, const char *path, struct classifier_maint *ret, size_t max);
    /* addr (lower case) is listed in MAINTAINERS and trusted. */
    bool (*is_trusted)(void *ctx, const char *addr);
    /* Patches and reports recorded from addr today (UTC), this one excluded. */
    uint32_t (*sender_count)(void *ctx, const char *addr);
    /* The cover letter with Message-ID id was recorded as flagged: writes
     * what it was flagged for ("COVER_X, COVER_Y") into buf. */
    bool (*cover_flagged)(void *ctx, const char *id, char *buf, size_t size);
    /* Earlier patches of series s whose changelog shares a paragraph
     * fingerprint with fps (n <= CLASSIFIER_SERIES_PARAS): returns how
     * many, and sets bit i of *ret_found for each fps[i] one of them has. */
    uint32_t (*series_repeats)(void *ctx, const struct classifier_series *s, const uint64_t *fps,
                               size_t n, uint32_t *ret_found);
    /* The learned counts of tokens[0..n) (classifier_learn_tokens()):
     * ret_counts[i][0] slop and [1] genuine messages that had tokens[i],
     * and ret_totals[0] slop and [1] genuine messages learned. false:
     * nothing usable learned (below the caller's minimum), and the
     * learned measures stay 0. */
    bool (*learned_counts)(void *ctx, const uint64_t *tokens, size_t n, uint32_t (*ret_counts)[2],
                           uint64_t ret_totals[2]);
};

struct classifier_envelope {
    const char *mail_from;   /* envelope sender without <>; "" for null */
    const char *const *rcpt; /* envelope recipients, may be NULL */
    size_t n_rcpt;
    const struct classifier_lookup *lookup; /* may be NULL: no state */
    /* The caller knows the mail is a report (slopctl --kind report): it
     * is one unless it is a patch or a reply in a thread, whatever its
     * recipients. */
    bool as_report;
    /* Unix time the message arrived (the daemon: its clock at MAIL FROM;
     * slopctl: classifier_arrival()); only mail recorded before it can be
     * its duplicate. 0: unknown, no bound. */
    int64_t arrival;
};

struct classifier_hit {
    char *rule;
    char *description;
    char *doc; /* documentation link, or NULL */
    double score;
    char *evidence; /* matched text or file:line, or NULL */
};

struct classifier_result {
    enum classifier_kind kind;
    enum classifier_action action;
    double score;
    /* The part of score from substance rules (not "class style"). An
     * action above tag needs this alone to reach the lowest enabled
     * threshold: style may tag, never answer, hold or refuse. */
    double substance_score;
    double required;  /* the lowest enabled threshold (tag), for headers */
    char *message_id; /* without <>, or NULL */
    char *subject;    /* decoded, or NULL */
    char *from;       /* decoded From: address, or NULL */
    bool disclosure;  /* Assisted-by: or stated AI tooling seen */
    bool truncated;   /* a limit cut the input */
    struct classifier_hit *hits;
    size_t n_hits;
    /* What the caller records after the scan so later mail can be found
     * to duplicate this one: for a patch, one fingerprint of all its
     * normalised hunks; for a report, one of its key identifiers, files
     * and bug classes (none when it cites nothing). */
    uint64_t *fingerprints;
    size_t n_fingerprints;
    uint64_t simhash;    /* of the report prose; 0 when too short */
    bool count_sender;   /* a patch or report that counts towards the sender's daily count */
    bool trusted_sender; /* the lookup says the sender is a trusted maintainer */
    /* What the caller records for the series look-ups: a patch's place in
     * its series and the fingerprints of its changelog paragraphs (none
     * outside a series), and for a cover letter whose score reached an
     * action, what it was flagged for (else NULL). */
    char *series_root; /* without <>, or NULL */
    uint32_t series_version, series_index, series_total;
    uint64_t *log_paragraphs;
    size_t n_log_paragraphs;
    char *cover_note;
    /* Every reported (non-helper) rule that held, score 0 included, by
     * index for classifier_rule_info(), in rule order: the hits list stops
     * at max_hits, this does not. */
    size_t *matched;
    size_t n_matched;
};

/* One loaded rule; strings borrowed from the classifier. */
struct classifier_rule_info {
    const char *name;
    const char *file; /* the rule file's path */
    unsigned line;
    double score;      /* in effect: the rule file's, or a scores file's */
    double file_score; /* as the rule file sets it (the hand-set score) */
    bool helper;       /* "__" rule: never reported, never scores */
    bool style;        /* "class style" */
    const char *description;
    const char *doc;      /* as written ("@/..." not resolved), or NULL */
    const char *profiles; /* profile names, space-separated; NULL: every profile */
    bool off;             /* marked for other profiles than the classifier's */
};

struct classifier;

void classifier_options_default(struct classifier_options *opts);

/*
 * Load and compile every *.rules file in rules_dir, then apply its *.scores
 * files and opts->scores_file. On success *ret owns a
 * classifier to free with classifier_free(). On failure returns a negative
 * errno (-E2BIG: more than CLASSIFIER_MAX_PATTERNS report_recipients);
 * every problem found is passed to diag_fn (which may be NULL); -ENOENT: a
 * profile that is neither shipped nor named by any rule file.
 * opts may be NULL for the defaults; it is copied.
 */
int classifier_new(const char *rules_dir, const struct classifier_options *opts,
                   classifier_diag_fn *diag_fn, void *diag_ctx, struct classifier **ret);

struct classifier *classifier_free(struct classifier *c);

/*
 * Set the C library's allocator for a process that scans message after
 * message: a scan allocates a few hundred KB and frees it all, and glibc's
 * defaults hand that memory back to the kernel after each larger message
 * and fault it in again for the next, a fifth of the time of a patch mail's
 * scan. Keeps up to 4 MB of freed heap per arena and takes blocks below
 * 1 MB from the heap. Process-wide, so the library never calls it: call it
 * once from main() before any thread starts. Does nothing where the C
 * library has no such settings.
 */
void classifier_tune_allocator(void);

/* The base that "@/" documentation links were resolved against: the
 * options' doc_base, else the profile's; "" when the profile has none.
 * Lives as long as c. */
const char *classifier_doc_base(const struct classifier *c);

/* Number of rules loaded (helper rules included). */
size_t classifier_rule_count(const struct classifier *c);

/* Rule i (0 <= i < classifier_rule_count()) into *ret, whose strings live
 * as long as c. Returns 0 or -EINVAL. */
int classifier_rule_info(const struct classifier *c, size_t i, struct classifier_rule_info *ret);

/*
 * Check every rule and scores file in rules_dir; report each problem through diag_fn.
 * Returns the number of problems (0: clean), or a negative errno when the
 * directory cannot be read.
 */
int classifier_lint(const char *rules_dir, classifier_diag_fn *diag_fn, void *diag_ctx);

/* classifier_lint(), and the scores file scores_file (NULL: none) too. */
int classifier_lint_scored(const char *rules_dir, const char *scores_file,
                           classifier_diag_fn *diag_fn, void *diag_ctx);

/*
 * Scan one message. env may be NULL. On success *ret is a new result to
 * free with classifier_result_free(); malformed mail is not an error (it
 * is scanned as far as it parses). Returns -ENOMEM, or -EINVAL on bad
 * arguments.
 */
int classifier_scan(const struct classifier *c, const char *msg, size_t len,
                    const struct classifier_envelope *env, struct classifier_result **ret);

struct classifier_result *classifier_result_free(struct classifier_result *r);

/*
 * Fingerprints of the hunks of a diff (git diff, format-patch or git log -p
 * text of one commit), exactly as classifier_scan() computes them for a
 * patch: per hunk, the path and the removed and added lines without white
 * space, context and line numbers, hashed with 64-bit FNV-1a. Hunks too
 * small to mean anything are skipped. fn is called once per hunk, in
 * order. Returns the number of hunks passed to fn, or -ENOMEM.
 */
int classifier_diff_fingerprints(const char *diff_text, size_t len,
                                 void (*fn)(void *ctx, uint64_t fp), void *ctx);

/*
 * Names of the functions a diff touches, from the hunk headers
 * ("@@ -1,2 +1,3 @@ int foo_bar(...)") and from "name()" in text; fn is
 * called once per distinct name, at most max names. Returns the count.
 */
int classifier_diff_functions(const char *text, size_t len, size_t max,
                              void (*fn)(void *ctx, const char *name), void *ctx);

/* Bug classes named in text (use-after-free, null-deref, ...) as a bit
 * mask; classifier_bug_class_name() names bit i ("use-after-free"), NULL
 * past the last. */
unsigned classifier_bug_classes(const char *text, size_t len);
const char *classifier_bug_class_name(unsigned bit);

/* At most this many distinct tokens are taken from one message. */
#define CLASSIFIER_LEARN_MAX_TOKENS 512

/*
 * The tokens the learned classifier counts for one message, exactly as
 * classifier_scan() looks them up: orthogonal sparse bigrams (window 5)
 * over the author's own text as the rules see it (subject, changelog or
 * report prose, notes, added comments; quotes and signatures removed),
 * and structural tokens (kind, measure bands, touched subsystems, the
 * trailer set), each hashed to 64 bits. Writes at most max distinct
 * tokens, sorted, into ret and sets *ret_n, and sets *ret_hint to the
 * digest of its Message-ID (0: none), which learning keeps only as a hint:
 * a learned message is known by its tokens. Returns 0, -ENOMEM or -EINVAL.
 */
int classifier_learn_tokens(const struct classifier *c, const char *msg, size_t len, uint64_t *ret,
                            size_t max, size_t *ret_n, uint64_t *ret_hint);

/*
 * When the message msg[0..len) arrived, for an offline scan of delivered
 * mail: the date of its first (topmost) Received: field, the hop that
 * delivered it, else of its Date: field. Returns the unix time, or 0
 * when neither field has a date that parses.
 */
int64_t classifier_arrival(const char *msg, size_t len);

const char *classifier_kind_name(enum classifier_kind kind);
const char *classifier_action_name(enum classifier_action action);
/* Returns 0 and sets *ret for "none", "tag", ...; -EINVAL otherwise. */
int classifier_action_parse(const char *name, enum classifier_action *ret);

#endif
