/*
 * scan.c - "slopctl scan" and "slopctl report": build the classifier once,
 * walk every PATH (mailbox.h) and classify each message, as of its arrival
 * when a state is read; scan prints one result per message (output.h),
 * report gathers them into the moderator's HTML page (report*.c). The
 * options are scan_options.c's. Results go to a fully buffered stdout.
 * Single-threaded.
 */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sysexits.h>
#include <time.h>
#include <unistd.h>

#include "classifier.h"
#include "cli.h"
#include "mailbox.h"
#include "output.h"
#include "report.h"
#include "report_html.h"
#include "scan.h"
#include "scan_options.h"
#include "state.h"
#include "state_db.h"
#include "statedir.h"

/* Exit status when some inputs failed and the others were scanned. */
#define SCAN_EXIT_PARTIAL 1

struct scan_state {
    const struct classifier *c;
    struct state_lookup *sl; /* NULL without --state */
    bool record;
    bool as_report; /* --kind report */
    struct output out;
    struct report *report; /* slopctl report: gather, print nothing */
    unsigned long scanned;
    unsigned long failed;
};

static int
scan_message(void *ctx, const struct mailbox_msg *m)
{
    struct scan_state *s = ctx;
    struct output_source src = {.file = m->file, .index = m->index, .in_mbox = m->in_mbox};
    struct classifier_result *res = NULL;
    struct classifier_envelope env = {.mail_from = ""};
    char buf[512];
    int r;

    env.lookup = s->sl != NULL ? &s->sl->lookup : NULL;
    env.as_report = s->as_report;
    if (s->sl != NULL) {
        /* As of its arrival, as the daemon saw it: only mail recorded
         * before then can be what it duplicates, and --record writes it
         * at that time, so that later scans keep the arrival order. */
        env.arrival = classifier_arrival(m->data, m->len);
        s->sl->opts.now = (time_t)env.arrival;
    }
    r = classifier_scan(s->c, m->data, m->len, &env, &res);
    if (r < 0) {
        s->failed++;
        if (s->report != NULL)
            report_add_error(s->report);
        return output_error(&s->out, &src, strerror_r(-r, buf, sizeof(buf)));
    }
    s->scanned++;
    if (s->record && (r = state_lookup_record(s->sl, res)) < 0) {
        state_strerror(s->sl != NULL ? s->sl->st : NULL, r, buf, sizeof(buf));
        fprintf(stderr, "slopctl: cannot record %s in %s\n", m->file, buf);
    }
    if (s->report != NULL)
        r = report_add(s->report, &src, m->data, m->len, res);
    else
        r = output_result(&s->out, &src, res);
    classifier_result_free(res);
    return r;
}

static void
scan_error(void *ctx, const char *file, size_t index, const char *reason)
{
    struct scan_state *s = ctx;
    struct output_source src = {.file = file, .index = index};

    s->failed++;
    if (s->report != NULL)
        report_add_error(s->report);
    /* A failed write shows up again on the next result, which stops the walk. */
    (void)output_error(&s->out, &src, reason);
}

/* slopctl report: the gathered report as HTML to path (NULL: standard
 * output). Returns 0 or a negative errno; a file left half written is
 * removed. */
static int
report_finish(struct report *rep, const char *path)
{
    FILE *f = stdout;
    int r;

    if (path != NULL && (f = fopen(path, "w")) == NULL)
        return -errno;
    report_sort_rows(rep);
    r = report_html_write(f, rep);
    if (fflush(f) != 0 && r == 0)
        r = errno != 0 ? -errno : -EIO;
    if (path != NULL) {
        if (fclose(f) != 0 && r == 0)
            r = errno != 0 ? -errno : -EIO;
        if (r < 0)
            (void)unlink(path);
    }
    return r;
}

/* Without --state or --no-state, the default state is used when it is
 * there (or must be, to record); NULL for none. */
static const char *
state_dir_default(const struct scan_options *o)
{
    char path[4096];
    struct stat sb;
    const char *dir;

    if (o->state_dir != NULL || o->no_state)
        return o->state_dir;
    dir = statedir_resolve(NULL);
    snprintf(path, sizeof(path), "%s/data.mdb", dir);
    if (!o->record && stat(path, &sb) != 0)
        return NULL;
    return dir;
}

/* The classifier from the rule directory; 0 or EX_CONFIG after a message. */
static int
classifier_load(const char *rules, const struct classifier_options *opts, struct classifier **ret)
{
    struct output_diag_sink sink = {.f = stderr};
    char buf[128];
    int r;

    classifier_tune_allocator();
    r = classifier_new(rules, opts, output_diag, &sink, ret);
    if (r < 0) {
        /* Without a diagnostic the errno is the only clue (e.g. no such directory). */
        if (sink.count == 0)
            fprintf(stderr, "slopctl: cannot load rules from '%s': %s\n", rules,
                    strerror_r(-r, buf, sizeof(buf)));
        else
            fprintf(stderr, "slopctl: cannot load rules from '%s'\n", rules);
        return EX_CONFIG;
    }
    return 0;
}

/* Walk every path, then write the report when there is one; 0 or a
 * negative errno once output failed. */
static int
scan_paths(struct scan_state *s, const struct scan_options *o, char **paths, int n)
{
    int r = 0;

    if (s->report != NULL)
        s->report->mask_senders = o->mask_senders;
    for (int i = 0; i < n && r == 0; i++)
        r = mailbox_walk(paths[i], o->walk_flags, scan_message, scan_error, s);
    if (r == 0 && s->report != NULL)
        r = report_finish(s->report, o->html_path);
    if (r == 0 && o->html_path != NULL)
        fprintf(stderr, "slopctl: wrote %s (%lu message%s, %lu not scanned)\n", o->html_path,
                s->scanned, s->scanned == 1 ? "" : "s", s->failed);
    if (fflush(stdout) != 0 && r == 0)
        r = errno != 0 ? -errno : -EIO;
    if (r == 0 && ferror(stdout))
        r = -EIO;
    return r;
}

/* The exit code once the walk is done (r its result). */
static int
scan_exit(const struct scan_state *s, const struct scan_options *o, bool as_html, int r)
{
    char buf[128];

    if (r < 0) {
        fprintf(stderr, "slopctl: cannot write %s: %s\n",
                as_html ? (o->html_path != NULL ? o->html_path : "the report") : "results",
                strerror_r(-r, buf, sizeof(buf)));
        return EX_IOERR;
    }
    if (s->failed > 0 && s->scanned == 0)
        return EX_NOINPUT;
    if (s->failed > 0)
        return SCAN_EXIT_PARTIAL;
    return 0;
}

int
scan_cmd(int argc, char **argv, bool as_html)
{
    struct scan_options o;
    struct scan_state s = {0};
    struct classifier *c = NULL;
    struct state *st = NULL;
    struct state_lookup sl;
    const char *state_dir;
    int r, ret;

    ret = scan_options_parse(argc, argv, as_html, &o);
    if (ret >= 0)
        return ret;
    s.out = (struct output){
        .out = stdout, .err = stderr, .format = o.format, .only_actions = o.only_actions};
    s.as_report = o.as_report;
    s.record = o.record;
    state_dir = state_dir_default(&o);
    ret = classifier_load(cli_rules_dir(o.rules), &o.opts, &c);
    if (ret != 0)
        return ret;
    s.c = c;
    if (state_dir != NULL) {
        /* Without --record nothing is written: a read-only open also works
         * on a copy of the daemon's state. */
        ret = statedir_open(state_dir, s.record ? 0 : STATE_READONLY, &st);
        if (ret != 0)
            goto out;
        state_lookup_init(&sl, st, &o.lopts);
        s.sl = &sl;
    }
    /* A closed pipe (slopctl scan ... | head) ends the run quietly, as for
     * other filters; GMime's initialisation inside classifier_new() sets
     * SIGPIPE to be ignored. */
    signal(SIGPIPE, SIG_DFL);

    if (!isatty(STDOUT_FILENO))
        setvbuf(stdout, NULL, _IOFBF, 1 << 16);
    r = as_html ? report_new(&o.opts.thresholds, classifier_doc_base(c), &s.report) : 0;
    if (r == 0)
        r = scan_paths(&s, &o, argv + optind, argc - optind);
    ret = scan_exit(&s, &o, as_html, r);
out:
    report_free(s.report);
    classifier_free(c);
    state_close(st);
    return ret;
}
