/*
 * slopctl.c - the command-line front end of the classifier library:
 * "scan" mail files, mboxes and Maildirs, "lint" a rule directory, print
 * the "version"; "import" (import.c) and "db" (db.c) build and look after the
 * state that "scan --state" reads; "fit" (fit.c) fits the rules' scores
 * to labelled mail; "report" scans as "scan" does and writes the
 * moderator's HTML report (report*.c) in place of one line per message.
 *
 * The classifier is built once per run and reused for every message;
 * results are streamed to a fully buffered stdout. Exit codes follow
 * <sysexits.h>: 0 all fine, 1 when some input could not be read or
 * scanned (the rest still was), EX_USAGE, EX_NOINPUT when nothing could be
 * read, EX_CONFIG when the rules do not load, EX_IOERR when output fails.
 * Single-threaded.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <sysexits.h>
#include <unistd.h>

#include "buildtree.h"
#include "classifier.h"
#include "fit.h"
#include "backend.h"
#include "db.h"
#include "import.h"
#include "learn.h"
#include "mailbox.h"
#include "output.h"
#include "report.h"
#include "report_html.h"
#include "state.h"
#include "state_db.h"
#include "statedir.h"

#ifndef SLOP_DEFAULT_RULES_DIR
#define SLOP_DEFAULT_RULES_DIR "/usr/local/share/slop-milter/rules"
#endif

/* Exit status when some inputs failed and the others were scanned. */
#define SLOPCTL_EXIT_PARTIAL 1

static const char usage_text[] =
    "usage: slopctl [-c CONFIG] [--state-backend lmdb|redis] [--redis-server ADDR]\n"
    "               [--redis-prefix P] [--redis-user U] [--redis-password-file F]\n"
    "               [--redis-timeout MS] COMMAND ...  (the shared state's backend)\n"
    "       slopctl scan [--json] [--rules DIR] [--scores FILE] [--threshold ACTION=N]...\n"
    "                    [--project NAME] [--doc-base URL] [--only-actions]\n"
    "                    [--kind auto|report] [--report-recipients PATTERNS]\n"
    "                    [--state DIR | --no-state] [--record] [--duplicate-days N]\n"
    "                    [--learn-minimum N]\n"
    "                    [--limit NAME=N]... [--follow-symlinks] PATH...\n"
    "       slopctl report [-o FILE.html] [--mask-senders] [the options of scan but --json,\n"
    "                      --only-actions, --record] PATH...\n"
    "       slopctl lint [--rules DIR] [--scores FILE]\n"
    "       slopctl rules [--rules DIR] [--scores FILE] [--project NAME] [--doc-base URL]\n"
    "       slopctl fit [--rules DIR] [-o FILE] [--folds K|all] [--fp-limit P] [--plot-dir DIR]\n"
    "                   [--lambda L] [--scale S] [--max-score N] [--seed N]\n"
    "                   [--slop-weight W] [--threshold tag=N] [--threshold reply=N]\n"
    "                   [--state DIR] [--cv-out FILE] [--project NAME] LABELS\n"
    "       slopctl import tree [--state DIR] [--date YYYY-MM-DD] SOURCE_DIR\n"
    "       slopctl import fixes [--state DIR] (FILE | - | --git REPO [--since DATE])\n"
    "       slopctl import maintainers [--state DIR] FILE\n"
    "       slopctl db (stats | check | recover NEWDIR | prune [--days N] | dump FILE |\n"
    "                   load FILE) [--state DIR]\n"
    "       slopctl learn (--slop | --genuine) [--state DIR] [--rules DIR] PATH...\n"
    "       slopctl learn --stats [--state DIR] [--learn-minimum N]\n"
    "       slopctl forget [--state DIR] [--rules DIR] PATH...\n"
    "       slopctl version\n"
    "       slopctl help\n";

/* Two strings: C11 promises only 4095 bytes to one literal. */
static const char usage_details[] =
    "\n"
    "scan   classify each message found at PATH: a message file, an mbox, a\n"
    "       Maildir, a directory (walked recursively; dot files and *.md,\n"
    "       *.csv files skipped) or - for standard input\n"
    "  -j, --json               one JSON object per message and line\n"
    "  -r, --rules DIR          rule directory (default: $SLOP_RULES_DIR, else\n"
    "                           the source tree's when run from its build tree,\n"
    "                           else the installed rules)\n"
    "      --scores FILE        scores file read after the rule directory's\n"
    "                           *.scores files (its scores win)\n"
    "  -t, --threshold ACTION=N score at which ACTION (tag, reply, quarantine,\n"
    "                           reject) applies; N <= 0 disables it\n"
    "      --project NAME       project profile: kernel (default), generic or a\n"
    "                           site's own (rules marked for other profiles are off)\n"
    "      --doc-base URL       base of documentation links written @/... (default:\n"
    "                           the profile's; kernel: https://docs.kernel.org/)\n"
    "      --kind auto|report   report: read every message as a report unless it\n"
    "                           is a patch or a reply in a thread (default auto)\n"
    "      --report-recipients PATTERNS\n"
    "                           comma-separated globs of addresses where reports\n"
    "                           arrive, matched on To: and Cc: (default security@*;\n"
    "                           \"\" for none)\n"
    "      --only-actions       do not print messages whose action is none\n"
    "      --state DIR          use the indices and history in DIR (read-only);\n"
    "                           default: the default state below when it exists;\n"
    "                           each message is judged as of its arrival (its\n"
    "                           Received:, else its Date:)\n"
    "      --no-state           use no state at all\n"
    "      --record             also record fingerprints and sender counts, as\n"
    "                           the daemon does, at each message's arrival\n"
    "      --duplicate-days N   window for duplicates (default 30)\n"
    "      --learn-minimum N    messages each class needs learned before the\n"
    "                           LEARNED_* findings speak (default 200)\n"
    "      --follow-symlinks    read the files symbolic links in a Maildir's cur/\n"
    "                           and new/ point to (default: report and skip them)\n"
    "  -l, --limit NAME=N       cap on what the input drives (K, M, G suffixes):\n"
    "                           message-size (10M), mime-depth (32), mime-parts\n"
    "                           (256), part-size (4M), headers (1000), lines\n"
    "                           (100000), line-length (4096), patch-files (500),\n"
    "                           patch-hunks (5000), regex-match-limit (100000),\n"
    "                           regex-depth-limit (5000); a cut input is reported\n"
    "                           as LIMIT_REACHED\n"
    "report scan as scan does and write one self-contained HTML page for\n"
    "       moderators: summary, charts, the messages sortable by score\n"
    "  -o, --output FILE        write it to FILE (default: standard output)\n"
    "      --mask-senders       show From: and Message-ID by their domain only\n"
    "                           (a report shown beyond the team)\n";

/* The commands after scan and report: a third string, as above. */
static const char usage_commands[] =
    "lint   check every rule and scores file; print file:line: reason for each problem,\n"
    "       or OK\n"
    "rules  list the rules: name, score in effect, class, profiles, description and\n"
    "       documentation link, tab-separated (off: marked for other profiles)\n"
    "fit    fit the rules' scores to labelled mail, cross-validate them and\n"
    "       write a scores file (-o FILE); see slopctl(1) and docs/scoring.md\n"
    "import index a source tree, merged fixes (git log -p) or MAINTAINERS\n"
    "learn  count the tokens of each message at PATH as slop or genuine for the\n"
    "       LEARNED_* findings (again as the other class: moved); forget: take\n"
    "       them away; see docs/learning.md\n"
    "db     print counts and sizes, check or recover a damaged state, expire old\n"
    "       entries, dump or load a backup\n"
    "       (state DIR default, as the daemon's: $STATE_DIRECTORY, else var/state/\n"
    "       in the build directory when run from it, else /var/lib/slop-milter)\n"
    "\n"
    "exit: 0 fine, 1 some input unreadable, 64 usage, 66 no input readable,\n"
    "      73 state damaged or not creatable, 78 rules do not load\n";

static void
usage(FILE *f)
{
    fputs(usage_text, f);
    fputs(usage_details, f);
    fputs(usage_commands, f);
}

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int
usage_error(const char *fmt, ...)
{
    va_list ap;

    fputs("slopctl: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputs("\ntry 'slopctl help'\n", stderr);
    return EX_USAGE;
}

/* A command's -h (0 after the usage), or an option getopt refused. */
static int
help_or_bad_option(int opt, const char *cmd)
{
    if (opt == 'h') {
        usage(stdout);
        return 0;
    }
    return usage_error("bad option for '%s'", cmd);
}

static const char *
rules_dir_resolve(const char *opt)
{
    static char dir[4096];
    const char *env;
    struct stat st;

    if (opt != NULL)
        return opt;
    env = getenv("SLOP_RULES_DIR");
    if (env != NULL && env[0] != '\0')
        return env;
    /* Run from its build tree: the rules of that source tree. */
    if (buildtree_source() != NULL &&
        snprintf(dir, sizeof(dir), "%s/rules", buildtree_source()) < (int)sizeof(dir) &&
        stat(dir, &st) == 0 && S_ISDIR(st.st_mode))
        return dir;
    return SLOP_DEFAULT_RULES_DIR;
}

/* "security@*, *@security.example.org": the patterns are cut out of arg
 * in place into v (NULL-terminated, at most max of them). Returns 0,
 * -E2BIG when there are more, or -EINVAL for a pattern without '@'. */
static int
patterns_parse(char *arg, const char **v, size_t max)
{
    size_t n = 0;

    for (char *p = strtok(arg, ", \t"); p != NULL; p = strtok(NULL, ", \t")) {
        if (strchr(p, '@') == NULL)
            return -EINVAL;
        if (n == max)
            return -E2BIG;
        v[n++] = p;
    }
    v[n] = NULL;
    return 0;
}

/* ACTION=N, e.g. "reject=12.5"; sets bit 1 << ACTION in *given. */
static int
threshold_parse(const char *arg, struct classifier_thresholds *t, unsigned *given)
{
    enum classifier_action action;
    const char *eq = strchr(arg, '=');
    char name[32];
    char *end;
    double v;

    if (eq == NULL || (size_t)(eq - arg) >= sizeof(name))
        return -EINVAL;
    memcpy(name, arg, (size_t)(eq - arg));
    name[eq - arg] = '\0';
    if (classifier_action_parse(name, &action) < 0 || action == CLASSIFIER_ACTION_NONE ||
        action >= CLASSIFIER_ACTION__COUNT)
        return -EINVAL;
    errno = 0;
    v = strtod(eq + 1, &end);
    if (end == eq + 1 || *end != '\0' || errno != 0 || !isfinite(v))
        return -EINVAL;
    t->score[action] = v;
    *given |= 1u << action;
    return 0;
}

/* The enabled thresholds given (bit 1 << action in given) must rise
 * with their action's severity, as the daemon's configuration requires:
 * an inverted pair would answer or hold mail that is not even tagged. A
 * given one against a default is left alone ("reject=12" means "reject
 * from 12", whatever quarantine's default). 0, or -EINVAL after a
 * message. */
static int
thresholds_check(const struct classifier_thresholds *t, unsigned given)
{
    for (int i = CLASSIFIER_ACTION_TAG + 1; i < CLASSIFIER_ACTION__COUNT; i++) {
        if (t->score[i] <= 0 || !(given & (1u << i)))
            continue;
        for (int j = CLASSIFIER_ACTION_TAG; j < i; j++) {
            if ((given & (1u << j)) && t->score[j] > 0 && t->score[i] < t->score[j]) {
                fprintf(stderr,
                        "slopctl: threshold %s=%g is below %s=%g; enabled thresholds must rise "
                        "with severity (tag, reply, quarantine, reject)\n",
                        classifier_action_name((enum classifier_action)i), t->score[i],
                        classifier_action_name((enum classifier_action)j), t->score[j]);
                return -EINVAL;
            }
        }
    }
    return 0;
}

/* --limit NAME=VALUE: the names, and the field of struct classifier_limits
 * each sets; zero is refused there, so every range starts at 1. */
static const struct {
    const char *name;
    size_t offset;
    size_t width; /* sizeof the field */
    uint64_t max;
} limit_names[] = {
#define LIMIT_SIZE(f) sizeof(((struct classifier_limits *)0)->f)
#define LIMIT(n, f, m)                                                                             \
    {                                                                                              \
        n, offsetof(struct classifier_limits, f), LIMIT_SIZE(f), m                                 \
    }
    LIMIT("message-size", max_message_bytes, 1ull << 30),
    LIMIT("mime-depth", max_mime_depth, 1000),
    LIMIT("mime-parts", max_mime_parts, 100000),
    LIMIT("part-size", max_part_bytes, 1ull << 30),
    LIMIT("headers", max_headers, 100000),
    LIMIT("lines", max_lines, 10000000),
    LIMIT("line-length", max_line_bytes, 1u << 20),
    LIMIT("patch-files", max_files, 100000),
    LIMIT("patch-hunks", max_hunks, 1000000),
    LIMIT("regex-match-limit", match_limit, 100000000),
    LIMIT("regex-depth-limit", depth_limit, 10000000),
#undef LIMIT
#undef LIMIT_SIZE
};

/* NAME=VALUE, VALUE a whole number with an optional K, M or G suffix
 * (powers of 1024). */
static int
limit_parse(const char *arg, struct classifier_limits *l)
{
    const char *eq = strchr(arg, '=');
    unsigned long long v;
    char *end;

    if (eq == NULL || eq[1] < '0' || eq[1] > '9')
        return -EINVAL;
    errno = 0;
    v = strtoull(eq + 1, &end, 10);
    if (errno != 0)
        return -EINVAL;
    if (*end != '\0' && end[1] == '\0') {
        static const char suffixes[] = "KkMmGg";
        const char *p = strchr(suffixes, *end);
        unsigned shift = p != NULL ? 10 * (unsigned)((p - suffixes) / 2 + 1) : 0;

        if (shift == 0 || v > (1ull << 30))
            return -EINVAL;
        v <<= shift;
        end++;
    }
    if (*end != '\0')
        return -EINVAL;
    for (size_t i = 0; i < sizeof(limit_names) / sizeof(limit_names[0]); i++) {
        char *field = (char *)l + limit_names[i].offset;

        if (strlen(limit_names[i].name) != (size_t)(eq - arg) ||
            strncmp(limit_names[i].name, arg, (size_t)(eq - arg)) != 0)
            continue;
        if (v < 1 || v > limit_names[i].max)
            return -ERANGE;
        if (limit_names[i].width == sizeof(size_t))
            *(size_t *)(void *)field = (size_t)v;
        else
            *(uint32_t *)(void *)field = (uint32_t)v;
        return 0;
    }
    return -EINVAL;
}

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

/* "scan", or with as_html "report": the same options, classifier and
 * walk; only where the results go differs. */
static int
cmd_scan(int argc, char **argv, bool as_html)
{
    static const struct option longopts[] = {
        {"json", no_argument, NULL, 'j'},
        {"rules", required_argument, NULL, 'r'},
        {"threshold", required_argument, NULL, 't'},
        {"doc-base", required_argument, NULL, 'd'},
        {"project", required_argument, NULL, 'P'},
        {"kind", required_argument, NULL, 'k'},
        {"report-recipients", required_argument, NULL, 'T'},
        {"only-actions", no_argument, NULL, 'a'},
        {"state", required_argument, NULL, 'S'},
        {"record", no_argument, NULL, 'R'},
        {"no-state", no_argument, NULL, 'N'},
        {"duplicate-days", required_argument, NULL, 'D'},
        {"learn-minimum", required_argument, NULL, 'M'},
        {"limit", required_argument, NULL, 'l'},
        {"scores", required_argument, NULL, 's'},
        {"follow-symlinks", no_argument, NULL, 'F'},
        {"output", required_argument, NULL, 'o'},
        {"mask-senders", no_argument, NULL, 'm'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    struct output_diag_sink sink = {.f = stderr};
    struct classifier_options opts;
    struct scan_state s = {0};
    struct classifier *c = NULL;
    struct state *st = NULL;
    struct state_lookup sl;
    struct state_lookup_options lopts = {.trust_maintainers = true};
    const char *rules = NULL, *state_dir = NULL, *html_path = NULL;
    const char *report_rcpt[CLASSIFIER_MAX_PATTERNS + 1];
    bool no_state = false, mask_senders = false;
    unsigned walk_flags = 0, thresholds_given = 0;
    char *end;
    char buf[128];
    int opt, r, i, ret;

    classifier_options_default(&opts);
    s.out.out = stdout;
    s.out.err = stderr;
    s.out.format = OUTPUT_TEXT;
    while ((opt = getopt_long(argc, argv, "jr:t:l:o:h", longopts, NULL)) != -1) {
        switch (opt) {
        case 'j':
            s.out.format = OUTPUT_JSON;
            break;
        case 'r':
            rules = optarg;
            break;
        case 't':
            if (threshold_parse(optarg, &opts.thresholds, &thresholds_given) < 0)
                return usage_error("bad threshold '%s', expected ACTION=N with ACTION one of "
                                   "tag, reply, quarantine, reject",
                                   optarg);
            break;
        case 'd':
            opts.doc_base = optarg;
            break;
        case 's':
            opts.scores_file = optarg;
            break;
        case 'P':
            if (*optarg == '\0' ||
                strspn(optarg, "abcdefghijklmnopqrstuvwxyz0123456789-_") != strlen(optarg))
                return usage_error("bad --project '%s', expected a name of a-z, 0-9, '-', '_'",
                                   optarg);
            opts.profile = optarg;
            break;
        case 'k':
            if (strcmp(optarg, "report") != 0 && strcmp(optarg, "auto") != 0)
                return usage_error("bad --kind '%s', expected auto or report", optarg);
            s.as_report = strcmp(optarg, "report") == 0;
            break;
        case 'T':
            r = patterns_parse(optarg, report_rcpt, CLASSIFIER_MAX_PATTERNS);
            if (r == -E2BIG)
                return usage_error("more than %d --report-recipients patterns",
                                   CLASSIFIER_MAX_PATTERNS);
            if (r < 0)
                return usage_error("bad --report-recipients: each pattern needs an '@' "
                                   "(security@*)");
            opts.report_recipients = report_rcpt;
            break;
        case 'a':
            s.out.only_actions = true;
            break;
        case 'S':
            state_dir = optarg;
            break;
        case 'R':
            s.record = true;
            break;
        case 'N':
            no_state = true;
            break;
        case 'F':
            walk_flags |= MAILBOX_FOLLOW_SYMLINKS;
            break;
        case 'o':
            html_path = optarg;
            break;
        case 'D':
            errno = 0;
            lopts.duplicate_days = (uint32_t)strtoul(optarg, &end, 10);
            if (*optarg == '\0' || *end != '\0' || errno != 0 || lopts.duplicate_days == 0 ||
                lopts.duplicate_days > 3650)
                return usage_error("bad --duplicate-days '%s', expected 1 to 3650", optarg);
            break;
        case 'M':
            errno = 0;
            lopts.learn_minimum = (uint32_t)strtoul(optarg, &end, 10);
            if (*optarg == '\0' || *end != '\0' || errno != 0 || lopts.learn_minimum == 0 ||
                lopts.learn_minimum > 10000000)
                return usage_error("bad --learn-minimum '%s', expected 1 to 10000000", optarg);
            break;
        case 'l':
            r = limit_parse(optarg, &opts.limits);
            if (r == -ERANGE)
                return usage_error("--limit '%s' is out of range", optarg);
            if (r < 0)
                return usage_error("bad --limit '%s', expected NAME=N with NAME one of "
                                   "message-size, mime-depth, mime-parts, part-size, headers, "
                                   "lines, line-length, patch-files, patch-hunks, "
                                   "regex-match-limit, regex-depth-limit",
                                   optarg);
            break;
        case 'm':
            mask_senders = true;
            break;
        case 'h':
            usage(stdout);
            return 0;
        default:
            return usage_error("bad option for '%s'", as_html ? "report" : "scan");
        }
    }
    if (optind >= argc)
        return usage_error("%s needs at least one PATH (- for standard input)",
                           as_html ? "report" : "scan");
    if (thresholds_check(&opts.thresholds, thresholds_given) < 0)
        return EX_USAGE;
    if (as_html && (s.out.format == OUTPUT_JSON || s.out.only_actions || s.record))
        return usage_error("report takes no --json, --only-actions or --record");
    if (!as_html && (html_path != NULL || mask_senders))
        return usage_error("-o and --mask-senders are for report; scan prints to standard "
                           "output");
    if (no_state && (state_dir != NULL || s.record))
        return usage_error("--no-state excludes --state and --record");
    if (state_dir == NULL && !no_state) {
        /* The default state is used when it is there (or must be, to record). */
        char path[4096];
        struct stat sb;

        state_dir = statedir_resolve(NULL);
        snprintf(path, sizeof(path), "%s/data.mdb", state_dir);
        if (!s.record && stat(path, &sb) != 0)
            state_dir = NULL;
    }

    rules = rules_dir_resolve(rules);
    classifier_tune_allocator();
    r = classifier_new(rules, &opts, output_diag, &sink, &c);
    if (r < 0) {
        /* Without a diagnostic the errno is the only clue (e.g. no such directory). */
        if (sink.count == 0)
            fprintf(stderr, "slopctl: cannot load rules from '%s': %s\n", rules,
                    strerror_r(-r, buf, sizeof(buf)));
        else
            fprintf(stderr, "slopctl: cannot load rules from '%s'\n", rules);
        return EX_CONFIG;
    }
    s.c = c;
    if (state_dir != NULL) {
        /* Without --record nothing is written: a read-only open also works
         * on a copy of the daemon's state. */
        r = statedir_open(state_dir, s.record ? 0 : STATE_READONLY, &st);
        if (r != 0) {
            classifier_free(c);
            return r;
        }
        state_lookup_init(&sl, st, &lopts);
        s.sl = &sl;
    }
    /* A closed pipe (slopctl scan ... | head) ends the run quietly, as for
     * other filters; GMime's initialisation inside classifier_new() sets
     * SIGPIPE to be ignored. */
    signal(SIGPIPE, SIG_DFL);

    if (!isatty(STDOUT_FILENO))
        setvbuf(stdout, NULL, _IOFBF, 1 << 16);
    r = 0;
    if (as_html)
        r = report_new(&opts.thresholds, classifier_doc_base(c), &s.report);
    if (as_html && r == 0)
        s.report->mask_senders = mask_senders;
    for (i = optind; i < argc && r == 0; i++)
        r = mailbox_walk(argv[i], walk_flags, scan_message, scan_error, &s);
    if (r == 0 && as_html)
        r = report_finish(s.report, html_path);
    if (r == 0 && html_path != NULL)
        fprintf(stderr, "slopctl: wrote %s (%lu message%s, %lu not scanned)\n", html_path,
                s.scanned, s.scanned == 1 ? "" : "s", s.failed);
    if (fflush(stdout) != 0 && r == 0)
        r = errno != 0 ? -errno : -EIO;
    if (r == 0 && ferror(stdout))
        r = -EIO;
    if (r < 0) {
        fprintf(stderr, "slopctl: cannot write %s: %s\n",
                as_html ? (html_path != NULL ? html_path : "the report") : "results",
                strerror_r(-r, buf, sizeof(buf)));
        ret = EX_IOERR;
    } else if (s.failed > 0 && s.scanned == 0) {
        ret = EX_NOINPUT;
    } else if (s.failed > 0) {
        ret = SLOPCTL_EXIT_PARTIAL;
    } else {
        ret = 0;
    }
    report_free(s.report);
    classifier_free(c);
    state_close(st);
    return ret;
}

static int
cmd_lint(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"rules", required_argument, NULL, 'r'},
        {"scores", required_argument, NULL, 's'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    struct output_diag_sink sink = {.f = stdout};
    const char *rules = NULL, *scores = NULL;
    char buf[128];
    int opt, n;

    while ((opt = getopt_long(argc, argv, "r:h", longopts, NULL)) != -1) {
        switch (opt) {
        case 'r':
            rules = optarg;
            break;
        case 's':
            scores = optarg;
            break;
        default:
            return help_or_bad_option(opt, "lint");
        }
    }
    if (optind < argc)
        return usage_error("lint takes no arguments, got '%s'", argv[optind]);

    rules = rules_dir_resolve(rules);
    n = classifier_lint_scored(rules, scores, output_diag, &sink);
    if (n < 0) {
        fprintf(stderr, "slopctl: cannot read rules from '%s': %s\n", rules,
                strerror_r(-n, buf, sizeof(buf)));
        return EX_CONFIG;
    }
    if (n > 0)
        printf("%d problem%s\n", n, n == 1 ? "" : "s");
    else
        printf("%s: OK\n", rules);
    if (fflush(stdout) != 0)
        return EX_IOERR;
    return n > 0 ? 1 : 0;
}

/* LMDB met a damaged page (recorded for the next open): LMDB would abort
 * when this returns, so say it as every other open says it and exit 73. */
static void
state_damaged_now(const char *dir, const char *reason)
{
    fprintf(stderr, "slopctl: state '%s': data.mdb damaged (%s)\n", dir, reason);
    fflush(NULL);
    _exit(EX_CANTCREAT);
}

/* A rule's link as its hits show it: "@/" under the document base, or
 * "-" when the profile has none. */
static void
print_doc(const char *doc, const char *base)
{
    if (doc == NULL || (strncmp(doc, "@/", 2) == 0 && *base == '\0'))
        fputs("-", stdout);
    else if (strncmp(doc, "@/", 2) == 0)
        printf("%s%s%s", base, base[strlen(base) - 1] == '/' ? "" : "/", doc + 2);
    else
        fputs(doc, stdout);
}

static int
cmd_rules(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"rules", required_argument, NULL, 'r'},   {"scores", required_argument, NULL, 's'},
        {"project", required_argument, NULL, 'P'}, {"doc-base", required_argument, NULL, 'd'},
        {"help", no_argument, NULL, 'h'},          {NULL, 0, NULL, 0},
    };
    struct output_diag_sink sink = {.f = stderr};
    struct classifier_options opts;
    struct classifier *c = NULL;
    const char *rules = NULL;
    int opt, r;

    classifier_options_default(&opts);
    while ((opt = getopt_long(argc, argv, "r:h", longopts, NULL)) != -1) {
        switch (opt) {
        case 'r':
            rules = optarg;
            break;
        case 's':
            opts.scores_file = optarg;
            break;
        case 'P':
            opts.profile = optarg;
            break;
        case 'd':
            opts.doc_base = optarg;
            break;
        default:
            return help_or_bad_option(opt, "rules");
        }
    }
    if (optind < argc)
        return usage_error("rules takes no arguments, got '%s'", argv[optind]);
    rules = rules_dir_resolve(rules);
    r = classifier_new(rules, &opts, output_diag, &sink, &c);
    if (r < 0) {
        if (sink.count == 0)
            fprintf(stderr, "slopctl: cannot load rules from '%s': %s\n", rules, strerror(-r));
        return EX_CONFIG;
    }
    printf("# name\tscore\tclass\tprofiles\tdescription\tdoc\n");
    for (size_t i = 0; i < classifier_rule_count(c); i++) {
        struct classifier_rule_info ri;

        if (classifier_rule_info(c, i, &ri) < 0 || ri.helper)
            continue;
        printf("%s\t%.2f\t%s\t%s%s\t%s\t", ri.name, ri.score, ri.style ? "style" : "substance",
               ri.profiles != NULL ? ri.profiles : "all", ri.off ? " (off)" : "",
               ri.description != NULL ? ri.description : "");
        print_doc(ri.doc, classifier_doc_base(c));
        putchar('\n');
    }
    classifier_free(c);
    return fflush(stdout) == 0 && !ferror(stdout) ? 0 : EX_IOERR;
}

/* The command closest to a misspelt one (edit distance at most 2), or
 * NULL: "scna" gives "scan". */
static const char *
command_near(const char *word)
{
    static const char *const commands[] = {"scan", "report", "lint",   "rules",   "import", "db",
                                           "fit",  "learn",  "forget", "version", "help"};
    const char *best = NULL;
    size_t best_d = 3, wl = strlen(word);

    if (wl > 16)
        return NULL;
    for (size_t k = 0; k < sizeof(commands) / sizeof(commands[0]); k++) {
        const char *c = commands[k];
        size_t cl = strlen(c), row[17], prev, tmp;

        /* Damerau-free Levenshtein over one row: both words are short. */
        for (size_t j = 0; j <= cl; j++)
            row[j] = j;
        for (size_t i = 1; i <= wl; i++) {
            prev = row[0];
            row[0] = i;
            for (size_t j = 1; j <= cl; j++) {
                size_t sub = prev + (word[i - 1] != c[j - 1]);

                tmp = row[j];
                row[j] = row[j] + 1 < row[j - 1] + 1 ? row[j] + 1 : row[j - 1] + 1;
                if (sub < row[j])
                    row[j] = sub;
                prev = tmp;
            }
        }
        if (row[cl] < best_d) {
            best_d = row[cl];
            best = c;
        }
    }
    return best;
}

int
main(int argc, char **argv)
{
    /* getopt prints this name in front of its own messages. */
    static char scan_name[] = "slopctl scan";
    static char report_name[] = "slopctl report";
    static char lint_name[] = "slopctl lint";
    static char rules_name[] = "slopctl rules";
    static char import_name[] = "slopctl import";
    static char db_name[] = "slopctl db";
    static char fit_name[] = "slopctl fit";
    static char learn_name[] = "slopctl learn";
    static char forget_name[] = "slopctl forget";
    const char *cmd, *near;
    int r;

    state_on_damage(state_damaged_now);
    r = backend_parse(&argc, &argv);
    if (r != 0)
        return r;
    if (argc < 2) {
        usage(stderr);
        return EX_USAGE;
    }
    cmd = argv[1];
    if (strcmp(cmd, "scan") == 0) {
        argv[1] = scan_name;
        return cmd_scan(argc - 1, argv + 1, false);
    }
    if (strcmp(cmd, "report") == 0) {
        argv[1] = report_name;
        return cmd_scan(argc - 1, argv + 1, true);
    }
    if (strcmp(cmd, "lint") == 0) {
        argv[1] = lint_name;
        return cmd_lint(argc - 1, argv + 1);
    }
    if (strcmp(cmd, "rules") == 0) {
        argv[1] = rules_name;
        return cmd_rules(argc - 1, argv + 1);
    }
    if (strcmp(cmd, "import") == 0) {
        argv[1] = import_name;
        return import_cmd(argc - 1, argv + 1);
    }
    if (strcmp(cmd, "db") == 0) {
        argv[1] = db_name;
        return db_cmd(argc - 1, argv + 1);
    }
    if (strcmp(cmd, "fit") == 0) {
        argv[1] = fit_name;
        return fit_cmd(argc - 1, argv + 1, rules_dir_resolve);
    }
    if (strcmp(cmd, "learn") == 0 || strcmp(cmd, "forget") == 0) {
        argv[1] = strcmp(cmd, "learn") == 0 ? learn_name : forget_name;
        return learn_cmd(argc - 1, argv + 1, strcmp(cmd, "forget") == 0, rules_dir_resolve);
    }
    if (strcmp(cmd, "version") == 0 || strcmp(cmd, "--version") == 0) {
        printf("slopctl %s\n", CLASSIFIER_VERSION);
        return 0;
    }
    if (strcmp(cmd, "help") == 0 || strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0) {
        usage(stdout);
        return 0;
    }
    near = command_near(cmd);
    /* One line: the usage text would bury it. */
    if (near != NULL)
        fprintf(stderr, "slopctl: unknown command '%s', did you mean '%s'? (slopctl help)\n", cmd,
                near);
    else
        fprintf(stderr, "slopctl: unknown command '%s' (slopctl help lists them)\n", cmd);
    return EX_USAGE;
}
