/*
 * report_svg.c - the report's four charts as inline SVG. Sizes are fixed
 * (a 640-unit wide view box, scaled by the page); the number of bars is
 * capped (report_svg.h), so the output is bounded whatever the mail.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report_escape.h"
#include "report_date.h"
#include "report_svg.h"

#define SVG_W 640
#define SVG_ML 48 /* left margin: the y axis labels */
#define SVG_MR 16
#define SVG_MT 28
#define SVG_MB 40
#define SVG_PLOT_H 180
#define SVG_PW (SVG_W - SVG_ML - SVG_MR)
#define SVG_MAX_BINS 48
#define SVG_ROW_H 22
#define SVG_LABEL_W 250 /* horizontal bars: the label column */
#define SVG_LABEL_MAX 40

static const char *const action_class[CLASSIFIER_ACTION__COUNT] = {
    "a-none", "a-tag", "a-reply", "a-quarantine", "a-reject",
};

static void
svg_open(FILE *f, const char *id, const char *title, int height)
{
    fprintf(f,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" id=\"%s\" class=\"chart\" "
            "viewBox=\"0 0 %d %d\" width=\"%d\" height=\"%d\" role=\"img\">"
            "<title>%s</title>\n",
            id, SVG_W, height, SVG_W, height, title);
}

static void
svg_caption(FILE *f, int x, int y, const char *text)
{
    fprintf(f, "<text x=\"%d\" y=\"%d\" class=\"cap\">%s</text>\n", x, y, text);
}

/* The action a score falls under by the thresholds alone. */
static enum classifier_action
action_at(const struct classifier_thresholds *t, double v)
{
    for (int a = CLASSIFIER_ACTION__COUNT - 1; a > CLASSIFIER_ACTION_NONE; a--)
        if (t->score[a] > 0 && v >= t->score[a])
            return (enum classifier_action)a;
    return CLASSIFIER_ACTION_NONE;
}

static void
svg_empty(FILE *f, const char *id, const char *title)
{
    svg_open(f, id, title, 60);
    svg_caption(f, SVG_ML, 36, "no messages");
    fputs("</svg>\n", f);
}

/* The score histogram's bins: nb of width w from base, over [lo, hi]. */
struct score_bins {
    double lo, hi, w, base;
    int nb;
    unsigned long count[SVG_MAX_BINS + 1], top;
};

/* The range the bins cover: every score and every threshold, within
 * +-1e6; then the narrowest step that needs 40 bins or fewer. */
static void
bins_layout(const struct report *rep, struct score_bins *sb)
{
    static const double steps[] = {0.5, 1, 2, 5, 10, 20, 50, 100, 1000, 10000, 1e5, 1e6};
    double lo = 0, hi = 0;

    for (size_t i = 0; i < rep->n_scores; i++) {
        double v = isfinite(rep->scores[i]) ? rep->scores[i] : 0;

        lo = v < lo ? v : lo;
        hi = v > hi ? v : hi;
    }
    for (int t = CLASSIFIER_ACTION_TAG; t < CLASSIFIER_ACTION__COUNT; t++)
        if (rep->thresholds.score[t] > hi)
            hi = rep->thresholds.score[t];
    sb->lo = lo < -1e6 ? -1e6 : lo;
    sb->hi = hi > 1e6 ? 1e6 : hi;
    sb->w = steps[0];
    sb->nb = 1;
    for (size_t s = 0; s < sizeof(steps) / sizeof(steps[0]); s++) {
        sb->w = steps[s];
        sb->nb = (int)(floor(sb->hi / sb->w) - floor(sb->lo / sb->w)) + 1;
        if (sb->nb <= 40)
            break;
    }
    /* One bin more, so the highest threshold is not on the edge. */
    sb->nb = sb->nb + 1 > SVG_MAX_BINS ? SVG_MAX_BINS : sb->nb + 1;
    sb->base = floor(sb->lo / sb->w) * sb->w;
}

static void
bins_count(const struct report *rep, struct score_bins *sb)
{
    for (size_t i = 0; i < rep->n_scores; i++) {
        double v = isfinite(rep->scores[i]) ? rep->scores[i] : 0;
        long k;

        v = v < sb->lo ? sb->lo : v > sb->hi ? sb->hi : v;
        k = lround(floor((v - sb->base) / sb->w));

        k = k < 0 ? 0 : k >= sb->nb ? sb->nb - 1 : k;
        if (++sb->count[k] > sb->top)
            sb->top = sb->count[k];
    }
}

/* Most mail scores near 0: a log scale keeps the few high scores, the
 * ones a moderator looks for, visible beside that pile. */
static void
log_grid(FILE *f, unsigned long top, int y0)
{
    for (unsigned long t = 1; t <= top; t *= 10) {
        int y = y0 - (int)(log1p((double)t) / log1p((double)top) * SVG_PLOT_H);

        fprintf(f,
                "<line class=\"grid\" x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/>"
                "<text x=\"%d\" y=\"%d\" class=\"yl\">%lu</text>\n",
                SVG_ML, y, SVG_ML + SVG_PW, y, SVG_ML - 6, y + 4, t);
        if (t > ULONG_MAX / 10)
            break;
    }
}

static void
score_bars(FILE *f, const struct report *rep, const struct score_bins *sb, int y0)
{
    char a[32], b[32];
    int nb = sb->nb;

    for (int k = 0; k < nb; k++) {
        int x = SVG_ML + k * SVG_PW / nb, x2 = SVG_ML + (k + 1) * SVG_PW / nb;
        int bh = (int)(log1p((double)sb->count[k]) / log1p((double)sb->top) * SVG_PLOT_H);
        double from = sb->base + k * sb->w;

        if (k % ((nb + 9) / 10) == 0)
            fprintf(f, "<text x=\"%d\" y=\"%d\" class=\"xl\">%s</text>\n", x, y0 + 16,
                    output_score(from, a, sizeof(a)));
        if (sb->count[k] == 0)
            continue;
        fprintf(f,
                "<rect class=\"%s\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\">"
                "<title>%s to %s: %lu</title></rect>\n",
                action_class[action_at(&rep->thresholds, from + sb->w / 2)], x + 1,
                y0 - (bh > 0 ? bh : 1), x2 - x > 2 ? x2 - x - 2 : 1, bh > 0 ? bh : 1,
                output_score(from, a, sizeof(a)), output_score(from + sb->w, b, sizeof(b)),
                sb->count[k]);
    }
}

static void
score_thresholds(FILE *f, const struct report *rep, const struct score_bins *sb, int y0)
{
    char a[32];

    for (int t = CLASSIFIER_ACTION_TAG; t < CLASSIFIER_ACTION__COUNT; t++) {
        double v = rep->thresholds.score[t];
        int x;

        if (v <= 0)
            continue;
        x = SVG_ML + (int)((v - sb->base) / (sb->w * sb->nb) * SVG_PW);
        /* Labels alternate in height so that near thresholds stay apart. */
        fprintf(f,
                "<line class=\"thr %s\" x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/>"
                "<text x=\"%d\" y=\"%d\" class=\"thl%s\">%s %s</text>\n",
                action_class[t], x, SVG_MT - 16 + (t % 2) * 12, x, y0,
                x > SVG_W - 100 ? x - 3 : x + 3, SVG_MT - 8 + (t % 2) * 12,
                x > SVG_W - 100 ? " end" : "", classifier_action_name((enum classifier_action)t),
                output_score(v, a, sizeof(a)));
    }
}

int
report_svg_scores(FILE *f, const struct report *rep)
{
    struct score_bins sb = {0};
    char a[32];
    int h = SVG_MT + SVG_PLOT_H + SVG_MB, y0 = SVG_MT + SVG_PLOT_H;

    if (rep->n_scores == 0) {
        svg_empty(f, "chart-scores", "Score distribution");
        return 0;
    }
    bins_layout(rep, &sb);
    bins_count(rep, &sb);
    svg_open(f, "chart-scores", "Score distribution", h);
    fprintf(f, "<line class=\"axis\" x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/>\n", SVG_ML, y0,
            SVG_ML + SVG_PW, y0);
    log_grid(f, sb.top, y0);
    score_bars(f, rep, &sb, y0);
    score_thresholds(f, rep, &sb, y0);
    fprintf(f,
            "<text x=\"%d\" y=\"%d\" class=\"cap\">score (bins of %s), messages on a log "
            "scale</text>\n",
            SVG_ML, h - 6, output_score(sb.w, a, sizeof(a)));
    fputs("</svg>\n", f);
    return 0;
}

/* Horizontal bars, one per entry of t by count, stacked by action. */
static int
hbars(FILE *f, const char *id, const char *title, const struct report_tally *t, const char *none)
{
    struct report_tally_entry *v = NULL;
    size_t n, shown, more;
    int h, pw = SVG_W - SVG_LABEL_W - 60, r;
    unsigned long top;

    r = report_tally_sorted(t, false, &v, &n);
    if (r < 0)
        return r;
    if (n == 0) {
        svg_open(f, id, title, 60);
        svg_caption(f, 8, 36, none);
        fputs("</svg>\n", f);
        free(v);
        return 0;
    }
    shown = n < REPORT_SVG_TOP ? n : REPORT_SVG_TOP;
    more = n - shown;
    top = v[0].n;
    h = SVG_MT + (int)shown * SVG_ROW_H + (more > 0 || t->other > 0 ? 28 : 8);
    svg_open(f, id, title, h);
    for (size_t i = 0; i < shown; i++) {
        int y = SVG_MT + (int)i * SVG_ROW_H, x = SVG_LABEL_W;

        fputs("<g><title>", f);
        report_escape(f, v[i].name, REPORT_TALLY_NAME_MAX, false);
        fprintf(f, ": %lu</title>\n<text x=\"%d\" y=\"%d\" class=\"bl\">", v[i].n, SVG_LABEL_W - 6,
                y + 15);
        report_escape(f, v[i].name, SVG_LABEL_MAX, false);
        fputs("</text>\n", f);
        for (int a = 0; a < CLASSIFIER_ACTION__COUNT; a++) {
            int bw = (int)((double)v[i].by_action[a] * pw / (double)top);

            if (v[i].by_action[a] == 0)
                continue;
            bw = bw > 0 ? bw : 1;
            fprintf(f, "<rect class=\"%s\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\"/>",
                    action_class[a], x, y + 3, bw, SVG_ROW_H - 6);
            x += bw;
        }
        fprintf(f, "\n<text x=\"%d\" y=\"%d\" class=\"n\">%lu</text></g>\n", x + 4, y + 15, v[i].n);
    }
    if (more > 0 || t->other > 0) {
        char note[96];

        snprintf(note, sizeof(note), "and %zu more%s", more,
                 t->other > 0 ? ", and more not counted apart" : "");
        svg_caption(f, 8, h - 8, note);
    }
    fputs("</svg>\n", f);
    free(v);
    return 0;
}

int
report_svg_rules(FILE *f, const struct report *rep)
{
    return hbars(f, "chart-rules", "Findings by rule", &rep->rules, "no findings");
}

int
report_svg_senders(FILE *f, const struct report *rep)
{
    return hbars(f, "chart-senders", "Top senders", &rep->senders, "no messages");
}

/* A period's place on the time axis: days since 1970 for "YYYY-MM-DD",
 * months since year 0 for "YYYY-MM". -1 when the name is neither. */
static int64_t
period_index(const char *name, bool days)
{
    char ymd[16];
    int year, month;
    int64_t v;

    if (days)
        return report_date_parse_day(name, &v) == 0 ? v : -1;
    if (snprintf(ymd, sizeof(ymd), "%s-01", name) >= (int)sizeof(ymd) ||
        report_date_parse_day(ymd, &v) < 0)
        return -1;
    /* Digits checked by the parse: year * 12 + month - 1. */
    year = (ymd[0] - '0') * 1000 + (ymd[1] - '0') * 100 + (ymd[2] - '0') * 10 + (ymd[3] - '0');
    month = (ymd[5] - '0') * 10 + (ymd[6] - '0');
    return (int64_t)year * 12 + month - 1;
}

static void
period_name(int64_t idx, bool days, char *buf, size_t size)
{
    if (days)
        report_date_format(idx, buf, size);
    else
        snprintf(buf, size, "%04d-%02d", (int)(idx / 12), (int)(idx % 12) + 1);
}

/* Days when they span at most REPORT_SVG_MAX_DAYS (first to last, not
 * how many have mail), months beyond. */
static bool
time_by_day(const struct report *rep, const struct report_tally_entry *v, size_t n)
{
    int64_t lo = INT64_MAX, hi = -1;

    if (rep->days.other != 0)
        return false;
    for (size_t i = 0; i < n; i++) {
        int64_t d = period_index(v[i].name, true);

        lo = d >= 0 && d < lo ? d : lo;
        hi = d > hi ? d : hi;
    }
    return hi < 0 || hi - lo < REPORT_SVG_MAX_DAYS;
}

/* One period's bar, stacked by action from y0 up, between x and x2. */
static void
time_bar(FILE *f, const struct report_tally_entry *e, int x, int x2, int y0, unsigned long top)
{
    int y = y0;

    fputs("<g><title>", f);
    report_escape(f, e->name, 16, false);
    fprintf(f, ": %lu</title>", e->n);
    for (int a = 0; a < CLASSIFIER_ACTION__COUNT; a++) {
        int bh = (int)((double)e->by_action[a] * SVG_PLOT_H / (double)top);

        if (e->by_action[a] == 0)
            continue;
        bh = bh > 0 ? bh : 1;
        y -= bh;
        fprintf(f, "<rect class=\"%s\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\"/>",
                action_class[a], x, y, x2 - x > 1 ? x2 - x - 1 : 1, bh);
    }
    fputs("</g>\n", f);
}

/* Evenly spaced date labels under cols periods from p0. */
static void
time_ticks(FILE *f, int64_t p0, int64_t cols, bool days, int y0)
{
    int every = (int)((cols + 5) / 6);

    for (int64_t i = 0; i < cols; i += every) {
        char name[16];

        if (i > 0 && cols - i <= every / 2)
            break; /* too close to the end for its label */
        period_name(p0 + i, days, name, sizeof(name));
        fprintf(f, "<text x=\"%d\" y=\"%d\" class=\"xl\">%s</text>\n",
                SVG_ML + (int)(i * SVG_PW / cols), y0 + 16, name);
    }
}

/* The first and last period of the n entries; *ret_last -1 for none. */
static void
time_span(const struct report_tally_entry *v, size_t n, bool days, int64_t *ret_first,
          int64_t *ret_last)
{
    int64_t p0 = INT64_MAX, p1 = -1;

    for (size_t i = 0; i < n; i++) {
        int64_t p = period_index(v[i].name, days);

        p0 = p >= 0 && p < p0 ? p : p0;
        p1 = p > p1 ? p : p1;
    }
    *ret_first = p0;
    *ret_last = p1;
}

/* The periods' entries, by day when time_by_day() says so, else by month. */
static int
time_entries(const struct report *rep, struct report_tally_entry **ret_v, size_t *ret_n,
             bool *ret_days)
{
    int r = report_tally_sorted(&rep->days, true, ret_v, ret_n);

    if (r < 0)
        return r;
    *ret_days = time_by_day(rep, *ret_v, *ret_n);
    if (*ret_days)
        return 0;
    free(*ret_v);
    *ret_v = NULL;
    return report_tally_sorted(&rep->months, true, ret_v, ret_n);
}

/*
 * Messages per period as stacked bars on a time axis: each period has its
 * place whether or not mail came then, so 2025-08-08 and 2026-12-03 lie
 * sixteen months apart, not side by side. Ticks are evenly spaced dates.
 */
int
report_svg_time(FILE *f, const struct report *rep)
{
    struct report_tally_entry *v = NULL;
    int h = SVG_MT + SVG_PLOT_H + SVG_MB, y0 = SVG_MT + SVG_PLOT_H, r;
    int64_t p0, p1, cols;
    unsigned long top = 0;
    bool days, cut;
    size_t n;

    r = time_entries(rep, &v, &n, &days);
    if (r < 0)
        return r;
    time_span(v, n, days, &p0, &p1);
    if (p1 < 0) {
        svg_open(f, "chart-time", "Actions over time", 60);
        svg_caption(f, 8, 36, "no message has a Date: that parses");
        fputs("</svg>\n", f);
        free(v);
        return 0;
    }
    cut = p1 - p0 + 1 > REPORT_SVG_MAX_PERIODS;
    if (cut)
        p0 = p1 - REPORT_SVG_MAX_PERIODS + 1;
    cols = p1 - p0 + 1;
    for (size_t i = 0; i < n; i++)
        if (period_index(v[i].name, days) >= p0)
            top = v[i].n > top ? v[i].n : top;
    svg_open(f, "chart-time", "Actions over time", h);
    fprintf(f, "<line class=\"axis\" x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/>\n", SVG_ML, y0,
            SVG_ML + SVG_PW, y0);
    fprintf(f, "<text x=\"%d\" y=\"%d\" class=\"yl\">%lu</text>\n", SVG_ML - 6, SVG_MT + 4, top);
    fprintf(f, "<text x=\"%d\" y=\"%d\" class=\"yl\">0</text>\n", SVG_ML - 6, y0);
    for (size_t i = 0; i < n; i++) {
        int64_t p = period_index(v[i].name, days);

        if (p < p0)
            continue;
        time_bar(f, &v[i], SVG_ML + (int)((p - p0) * SVG_PW / cols),
                 SVG_ML + (int)((p - p0 + 1) * SVG_PW / cols), y0, top);
    }
    time_ticks(f, p0, cols, days, y0);
    fprintf(f, "<text x=\"%d\" y=\"%d\" class=\"cap\">messages per %s (UTC, by Date:)%s</text>\n",
            SVG_ML, h - 6, days ? "day" : "month", cut ? ", the latest only" : "");
    fputs("</svg>\n", f);
    free(v);
    return 0;
}
