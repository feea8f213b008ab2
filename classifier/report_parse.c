/*
 * report_parse.c - split a report's prose from its code and traces, and
 * pull out the facts a maintainer looks for first.
 *
 * report_parse() reads the author's own text (quotes already removed) line
 * by line. Kernel and sanitizer traces, other runtimes' backtraces
 * (Python, Java, Ruby, JavaScript, Go, Rust, gdb), fenced and indented code
 * blocks, indented commands under a lead-in ("Reproduce:"), shell prompt
 * lines and .config lines go to REGION_CODE; the rest is
 * REGION_REPORT. Versions, function names, source paths, CONFIG_ symbols
 * and URLs are collected from both, never from inside a URL. Each line is
 * read once for the classes of bytes it holds, and every question that
 * needs a byte the line lacks is skipped.
 *
 * Limits: max_lines lines, each cut at max_line_bytes; every list is capped
 * (REPORT_MAX_*), and a full list silently stops growing. Ownership: the
 * regions and lists belong to the message. Threading: the only shared
 * state is the tables (byte classes, the trace markers' filter, what
 * each question needs), built once under pthread_once() and read-only
 * after.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "message_note.h"
#include "report_parse.h"
#include "report_parser.h"
#include "text_lines.h"

static pthread_once_t report_tables_once = PTHREAD_ONCE_INIT;

static void
report_tables_init(void)
{
    report_bytes_init();
    report_trace_init();
}

int
report_parse(struct message *m, const char *text, size_t len,
             const struct classifier_limits *limits)
{
    return report_parse_lines(m, text, len, NULL, limits);
}

/* Line i of the index ix into text, without a '\r' before its '\n', cut
 * to max bytes without splitting a UTF-8 sequence. */
static struct span
line_at(const char *text, const struct text_lines *ix, size_t i, size_t max)
{
    struct span s = {text + ix->v[i].off, ix->v[i].len};

    if (s.len > 0 && s.p[s.len - 1] == '\r')
        s.len--;
    if (s.len > max) {
        s.len = max;
        while (s.len > 0 && ((unsigned char)s.p[s.len] & 0xc0) == 0x80)
            s.len--;
    }
    return s;
}

/* The first n lines and their byte classes into lines[0..n) and
 * has[0..n); the same lines as report_classify() reads them
 * (report_syslog_strip()) into lines[n..2n) and has[n..2n). */
static void
index_lines(const char *text, const struct text_lines *ix, size_t n, size_t max, struct span *lines,
            uint64_t *has)
{
    for (size_t i = 0; i < n; i++) {
        struct span s = line_at(text, ix, i, max);

        lines[i] = s;
        /* One pass per line, for every question asked of it below. */
        has[i] = bytes_in(s.p, s.len);
        lines[n + i] = report_syslog_strip(s);
        has[n + i] = lines[n + i].p == s.p ? has[i] : bytes_in(lines[n + i].p, lines[n + i].len);
    }
}

/* The report and code regions of m from the lines[0..n) of each class
 * cls[i], and the facts of every line. */
static int
write_regions(struct message *m, const struct span *lines, const uint64_t *has,
              const unsigned char *cls, size_t n, char *scratch)
{
    char *out[2] = {NULL, NULL};
    size_t size[2] = {0, 0};
    int r = 0;

    /* Both texts are sized first, so each is one allocation. */
    for (size_t i = 0; i < n; i++)
        size[cls[i]] += lines[i].len + 1;
    for (int k = 0; k < 2; k++) {
        out[k] = malloc(size[k] + 1);
        if (out[k] == NULL) {
            r = -ENOMEM;
            goto out;
        }
        size[k] = 0;
    }
    for (size_t i = 0; i < n; i++) {
        unsigned char k = cls[i];

        memcpy(out[k] + size[k], lines[i].p, lines[i].len);
        size[k] += lines[i].len;
        out[k][size[k]++] = '\n';
        r = report_facts_extract(m, lines[i].p, lines[i].len, has[i], scratch);
        if (r < 0)
            goto out;
    }
    for (int k = 0; k < 2; k++) {
        struct region *rg = &m->regions[k == LINE_REPORT ? REGION_REPORT : REGION_CODE];

        out[k][size[k]] = '\0';
        region_release(rg);
        rg->text = out[k];
        rg->len = size[k];
        out[k] = NULL;
    }
out:
    free(out[0]);
    free(out[1]);
    return r;
}

int
report_parse_lines(struct message *m, const char *text, size_t len, const struct text_lines *ix,
                   const struct classifier_limits *limits)
{
    struct text_lines own = {0};
    struct span *lines = NULL;
    uint64_t *has = NULL;
    unsigned char *cls = NULL;
    char *scratch = NULL;
    size_t n;
    bool cut;
    int r = 0;

    /* Without a text there is nothing an index could point into. */
    if (text == NULL) {
        text = "";
        len = 0;
        ix = NULL;
    }
    if (ix == NULL) {
        /* A line past the cap shows that the cap was hit. */
        r = text_lines_split(text, len, (size_t)limits->max_lines + 1, &own, &cut);
        if (r < 0)
            goto out;
        ix = &own;
    }
    n = ix->n < limits->max_lines ? ix->n : limits->max_lines;
    pthread_once(&report_tables_once, report_tables_init);
    /* Each line, then each as report_classify() reads it. */
    lines = malloc((n ? 2 * n : 1) * sizeof(*lines));
    has = malloc((n ? 2 * n : 1) * sizeof(*has));
    if (lines == NULL || has == NULL) {
        r = -ENOMEM;
        goto out;
    }
    index_lines(text, ix, n, limits->max_line_bytes, lines, has);
    if (ix->n > n)
        message_note_limit(m, "max_lines", limits->max_lines);

    cls = calloc(n ? n : 1, 1);
    scratch = malloc(limits->max_line_bytes + 1);
    if (cls == NULL || scratch == NULL) {
        r = -ENOMEM;
        goto out;
    }
    report_classify(lines + n, has + n, n, cls);
    r = write_regions(m, lines, has, cls, n, scratch);
out:
    free(own.v);
    free(lines);
    free(has);
    free(cls);
    free(scratch);
    return r;
}
