/*
 * report.c - gather the counts and rows of slopctl report, one scanned
 * message at a time, within the caps of report.h. Owns every string it
 * holds; the results it is given are only read.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "report.h"
#include "report_date.h"

static const char ellipsis[] = "\xE2\x80\xA6"; /* U+2026 */

/*
 * Copy at most cap bytes of s, cut before a UTF-8 continuation byte so a
 * character is not split, with U+2026 after a cut. *bytes grows by what
 * was allocated. NULL stays NULL; returns -ENOMEM on failure.
 */
static int
field_dup(const char *s, size_t cap, char **ret, size_t *bytes)
{
    size_t n;
    char *d;

    *ret = NULL;
    if (s == NULL)
        return 0;
    n = strnlen(s, cap + 1);
    if (n <= cap) {
        d = strndup(s, n);
    } else {
        n = cap;
        while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
            n--;
        d = malloc(n + sizeof(ellipsis));
        if (d != NULL) {
            memcpy(d, s, n);
            memcpy(d + n, ellipsis, sizeof(ellipsis));
        }
    }
    if (d == NULL)
        return -ENOMEM;
    *bytes += n + sizeof(ellipsis);
    *ret = d;
    return 0;
}

int
report_new(const struct classifier_thresholds *thresholds, const char *doc_base,
           struct report **ret)
{
    struct report *rep;
    int r = -ENOMEM;

    rep = calloc(1, sizeof(*rep));
    if (rep == NULL)
        return -ENOMEM;
    rep->thresholds = *thresholds;
    rep->today = (int64_t)time(NULL) / 86400;
    rep->doc_base = strdup(doc_base != NULL ? doc_base : "");
    rep->rows = calloc(REPORT_MAX_ROWS, sizeof(*rep->rows));
    if (rep->doc_base == NULL || rep->rows == NULL)
        goto out;
    if ((r = report_tally_init(&rep->rules, REPORT_MAX_RULES)) < 0 ||
        (r = report_tally_init(&rep->senders, REPORT_MAX_SENDERS)) < 0 ||
        (r = report_tally_init(&rep->days, REPORT_MAX_DAYS)) < 0 ||
        (r = report_tally_init(&rep->months, REPORT_MAX_DAYS)) < 0)
        goto out;
    *ret = rep;
    rep = NULL;
    r = 0;
out:
    report_free(rep);
    return r;
}

static void
row_release(struct report_row *row)
{
    for (size_t i = 0; i < row->n_hits; i++) {
        free(row->hits[i].rule);
        free(row->hits[i].description);
        free(row->hits[i].evidence);
        free(row->hits[i].doc);
    }
    free(row->hits);
    free(row->where);
    free(row->message_id);
    free(row->subject);
    free(row->from);
    memset(row, 0, sizeof(*row));
}

struct report *
report_free(struct report *rep)
{
    if (rep == NULL)
        return NULL;
    for (size_t i = 0; i < rep->n_rows; i++)
        row_release(&rep->rows[i]);
    free(rep->rows);
    free(rep->scores);
    free(rep->doc_base);
    report_tally_release(&rep->rules);
    report_tally_release(&rep->senders);
    report_tally_release(&rep->days);
    report_tally_release(&rep->months);
    free(rep);
    return NULL;
}

/*
 * An address or Message-ID with everything before its last '@' replaced
 * by U+2026, for a report shown beyond the team (--mask-senders): the
 * domain still tells a list's regulars from a new sender's provider.
 * Angle brackets around a Message-ID are kept. Without mask, or for NULL,
 * s itself.
 */
static const char *
shown_address(const char *s, bool mask, char *buf, size_t size)
{
    const char *at;

    if (!mask || s == NULL)
        return s;
    at = strrchr(s, '@');
    snprintf(buf, size, "%s%s%s", s[0] == '<' ? "<" : "", ellipsis, at != NULL ? at : "");
    return buf;
}

static int
row_fill(struct report_row *row, const struct output_source *src,
         const struct classifier_result *res, bool mask, size_t *bytes)
{
    char where[REPORT_FIELD_MAX + 32], from[REPORT_FIELD_MAX + 8], mid[REPORT_FIELD_MAX + 8];
    const char *from_shown = shown_address(res->from, mask, from, sizeof(from));
    const char *mid_shown = shown_address(res->message_id, mask, mid, sizeof(mid));
    size_t n = res->n_hits < REPORT_MAX_ROW_HITS ? res->n_hits : REPORT_MAX_ROW_HITS;
    int r;

    if (src->in_mbox || src->index > 0)
        snprintf(where, sizeof(where), "%.*s#%zu", REPORT_FIELD_MAX, src->file, src->index);
    else
        snprintf(where, sizeof(where), "%.*s", REPORT_FIELD_MAX, src->file);
    row->kind = res->kind;
    row->action = res->action;
    row->score = res->score;
    row->disclosure = res->disclosure;
    row->truncated = res->truncated;
    if ((r = field_dup(where, sizeof(where), &row->where, bytes)) < 0 ||
        (r = field_dup(mid_shown, REPORT_FIELD_MAX, &row->message_id, bytes)) < 0 ||
        (r = field_dup(res->subject, REPORT_FIELD_MAX, &row->subject, bytes)) < 0 ||
        (r = field_dup(from_shown, REPORT_FIELD_MAX, &row->from, bytes)) < 0)
        return r;
    row->hits_dropped = res->n_hits - n;
    if (n == 0)
        return 0;
    row->hits = calloc(n, sizeof(*row->hits));
    if (row->hits == NULL)
        return -ENOMEM;
    *bytes += n * sizeof(*row->hits);
    for (; row->n_hits < n; row->n_hits++) {
        const struct classifier_hit *h = &res->hits[row->n_hits];
        struct report_hit *o = &row->hits[row->n_hits];

        o->score = h->score;
        if ((r = field_dup(h->rule != NULL ? h->rule : "?", REPORT_FIELD_MAX, &o->rule, bytes)) <
                0 ||
            (r = field_dup(h->description, REPORT_FIELD_MAX, &o->description, bytes)) < 0 ||
            (r = field_dup(h->evidence, REPORT_EVIDENCE_MAX, &o->evidence, bytes)) < 0 ||
            (r = field_dup(h->doc, REPORT_FIELD_MAX, &o->doc, bytes)) < 0)
            return r;
    }
    return 0;
}

/* The sender as counted: the address in lower case, cut to a tally name. */
static void
sender_key(const char *from, char *buf, size_t size)
{
    size_t i = 0;

    if (from == NULL)
        from = "";
    for (; from[i] != '\0' && i + 1 < size; i++)
        buf[i] = from[i] >= 'A' && from[i] <= 'Z' ? (char)(from[i] - 'A' + 'a') : from[i];
    buf[i] = '\0';
}

/* The score for the histogram, while there is room for it. */
static int
score_keep(struct report *rep, double score)
{
    if (rep->n_scores >= REPORT_MAX_SCORES) {
        rep->scores_dropped++;
        return 0;
    }
    if (rep->n_scores == rep->scores_cap) {
        size_t want = rep->scores_cap ? rep->scores_cap * 2 : 256;
        double *v = realloc(rep->scores, want * sizeof(*v));

        if (v == NULL)
            return -ENOMEM;
        rep->scores = v;
        rep->scores_cap = want;
    }
    rep->scores[rep->n_scores++] = score;
    return 0;
}

/* The message's day and month counted, and the day (YYYY-MM-DD) in day,
 * or "" when it has none. 0 or a negative errno. */
static int
date_tally(struct report *rep, const char *msg, size_t len, enum classifier_action action,
           char *day, size_t size)
{
    int64_t dnum;
    int r;

    /* A day after tomorrow is a wrong clock or a forged header: it would
     * stretch the time axis, so it counts as no date. */
    if (report_date_day(msg, len, &dnum) != 0 || dnum > rep->today + 1) {
        rep->undated++;
        day[0] = '\0';
        return 0;
    }
    report_date_format(dnum, day, size);
    if ((r = report_tally_add(&rep->days, day, action)) < 0)
        return r;
    day[7] = '\0';
    if ((r = report_tally_add(&rep->months, day, action)) < 0)
        return r;
    day[7] = '-';
    return 0;
}

int
report_add(struct report *rep, const struct output_source *src, const char *msg, size_t len,
           const struct classifier_result *res)
{
    enum classifier_action action = res->action;
    char day[16] = "", key[REPORT_TALLY_NAME_MAX], masked[REPORT_TALLY_NAME_MAX];
    struct report_row *row;
    size_t bytes = 0;
    int r;

    if ((unsigned)action >= CLASSIFIER_ACTION__COUNT)
        action = CLASSIFIER_ACTION_NONE;
    rep->messages++;
    rep->by_action[action]++;
    if ((unsigned)res->kind < REPORT_KINDS)
        rep->by_kind[res->kind]++;

    r = score_keep(rep, res->score);
    if (r < 0)
        return r;

    for (size_t i = 0; i < res->n_hits; i++)
        if ((r = report_tally_add(&rep->rules, res->hits[i].rule != NULL ? res->hits[i].rule : "?",
                                  action)) < 0)
            return r;
    sender_key(shown_address(res->from, rep->mask_senders, masked, sizeof(masked)), key,
               sizeof(key));
    if ((r = report_tally_add(&rep->senders, key[0] != '\0' ? key : "(no From)", action)) < 0)
        return r;
    r = date_tally(rep, msg, len, action, day, sizeof(day));
    if (r < 0)
        return r;

    if (rep->n_rows == REPORT_MAX_ROWS || rep->row_bytes >= REPORT_MAX_ROW_BYTES) {
        rep->rows_dropped++;
        return 0;
    }
    row = &rep->rows[rep->n_rows];

    r = row_fill(row, src, res, rep->mask_senders, &bytes);
    if (r < 0) {
        row_release(row);
        return r;
    }
    row->seq = rep->n_rows;
    memcpy(row->day, day, sizeof(row->day) - 1);
    row->day[sizeof(row->day) - 1] = '\0';
    rep->row_bytes += bytes;
    rep->n_rows++;
    return 0;
}

void
report_add_error(struct report *rep)
{
    rep->errors++;
}

static int
cmp_score(const void *a, const void *b)
{
    const struct report_row *x = a, *y = b;

    if (x->score != y->score)
        return x->score > y->score ? -1 : 1;
    /* qsort is not stable: ties keep the scan order through seq. */
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

void
report_sort_rows(struct report *rep)
{
    qsort(rep->rows, rep->n_rows, sizeof(*rep->rows), cmp_score);
}
