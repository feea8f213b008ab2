/*
 * metrics.h - the daemon's counters, gauges and histograms, and their
 * rendering as OpenMetrics (or Prometheus) text.
 *
 * The milter path only calls the metrics_note_*() functions: each is a
 * few relaxed atomic increments on fixed, process-wide arrays, no lock,
 * no allocation. Rendering (metrics_render()) reads the same arrays from
 * another thread (metrics_http.c); a scrape during load sees each counter
 * at some recent value, never a torn one.
 *
 * Findings are counted per rule name. Rule ids are per rule set, and a
 * reload may change the set, so names live in one append-only table of
 * METRICS_RULES_MAX entries shared by every generation;
 * metrics_rules_map() gives a snapshot the table slot of each of its
 * rules. Names beyond the cap are counted together as findings_unnamed.
 */
#ifndef SLOP_MILTER_METRICS_H
#define SLOP_MILTER_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "classifier.h"
#include "verdict.h"

#define METRICS_RULES_MAX 2048        /* distinct rule names counted over all reloads */
#define METRICS_RULE_NAME_MAX 64      /* bytes of a rule name, NUL included */
#define METRICS_RULE_NONE UINT32_MAX  /* a rule past the cap: counted as unnamed */
#define METRICS_TABLES_MAX 32         /* state databases shown */
#define METRICS_RENDER_MAX (1u << 20) /* bytes of one rendered scrape */

/* Failure classes, one counter each (slop_errors_total{class}). */
enum metrics_error {
    METRICS_ERR_TIMEOUT = 0,  /* ScanTimeout reached: OnTimeout */
    METRICS_ERR_OVERSIZE,     /* over MaxMessageSize, not scanned: OnOversize */
    METRICS_ERR_INTERNAL,     /* OnInternalError: out of memory, scan failure */
    METRICS_ERR_BUSY,         /* MaxMemory full: OnBusy */
    METRICS_ERR_SHARED_STATE, /* Redis failed during the scan: OnRedisError tempfail */
    METRICS_ERR_MTA_CHANGE,   /* the MTA refused a header change or the reply */
    METRICS_ERR_STATE_RECORD, /* a scanned message could not be recorded */
    METRICS_ERR_REPLY_LEDGER, /* the reply ledger could not be read or written */
    METRICS_ERR__COUNT,
};

/* Mail passed without a scan (slop_messages_skipped_total{reason}). */
enum metrics_skip {
    METRICS_SKIP_PEER_LIST = 0,
    METRICS_SKIP_INTERNAL_HOSTS,
    METRICS_SKIP_AUTHENTICATED,
    METRICS_SKIP_ALLOW_SENDERS,
    METRICS_SKIP_NO_RECIPIENT,
    METRICS_SKIP_BUSY_AT_MAIL,
    METRICS_SKIP__COUNT,
};

/*
 * One judged message. scanned false: a failure policy decided (kind and
 * action are then shown as "none"). monitor: Mode monitor judged it, so
 * its action was logged, not taken (the mode label tells the two apart).
 * Lock-free.
 */
void metrics_note_message(bool scanned, enum classifier_kind kind, enum classifier_action action,
                          enum verdict_result result, bool monitor);
/* Rule slot (from metrics_rules_map()) held in a scanned message. */
void metrics_note_finding(uint32_t slot);
void metrics_note_eom(uint64_t usec);  /* end-of-message callback, start to answer */
void metrics_note_scan(uint64_t usec); /* the scan alone */
void metrics_note_error(enum metrics_error e);
void metrics_note_skip(enum metrics_skip s);
/* What became of a reply the verdict asked for: note is the decision
 * line's reply= word ("queued", "recent", "suppressed:list-header", ...). */
void metrics_note_reply(const char *note);
/* The reply sender's outcome for a queued reply. */
void metrics_note_reply_sent(bool ok);

/*
 * Give each of c's rules its slot in the name table, registering new
 * names (takes a lock: call it while building a snapshot, never on the
 * milter path). On success *ret (free() it) holds classifier_rule_count()
 * slots, METRICS_RULE_NONE for helpers and for names past the cap.
 * Returns 0 or -ENOMEM.
 */
int metrics_rules_map(const struct classifier *c, uint32_t **ret);

/* One state database's size, for rendering. */
struct metrics_table {
    char name[64];
    uint64_t entries;
    uint64_t bytes;
};

/* Values read at scrape time by the caller, not counted here. */
struct metrics_gauges {
    unsigned long rules_generation; /* snapshot generation; 0: none installed */
    size_t n_rules;                 /* rules in that snapshot */
    bool have_state;                /* the fields below are valid */
    uint64_t state_txnid;           /* newest committed LMDB transaction */
    uint64_t state_map_bytes;
    uint64_t state_used_bytes;
    struct metrics_table tables[METRICS_TABLES_MAX];
    size_t n_tables;
};

/*
 * Render every metric and g as OpenMetrics 1.0 text (openmetrics true,
 * ending "# EOF") or the Prometheus 0.0.4 text format. On success *ret
 * (free() it) holds *ret_len bytes. Returns 0, -ENOMEM, or -E2BIG past
 * METRICS_RENDER_MAX. Thread-safe; never blocks the note functions.
 */
int metrics_render(const struct metrics_gauges *g, bool openmetrics, char **ret, size_t *ret_len);

/* Zero every counter (unit tests). Not safe while notes run. */
void metrics_reset(void);

#endif
