/*
 * scan_options.c - read the options of "slopctl scan" and "slopctl
 * report": thresholds, limits, report recipients, the state to read, where
 * the results go. Each value is checked here, so the command itself meets
 * only good ones; a bad one is one usage line (cli.h). Single-threaded
 * (getopt, and strtok on the recipients argument).
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>

#include "cli.h"
#include "mailbox.h"
#include "scan_options.h"

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

/* A whole number from 1 to max; the value is cut to 32 bits before the
 * range is checked, as strtoul's result always was here. */
static bool
count_parse(const char *arg, uint32_t max, uint32_t *ret)
{
    uint32_t v;
    char *end;

    errno = 0;
    v = (uint32_t)strtoul(arg, &end, 10);
    if (*arg == '\0' || *end != '\0' || errno != 0 || v == 0 || v > max)
        return false;
    *ret = v;
    return true;
}

static int
threshold_option(struct scan_options *o, const char *arg, unsigned *given)
{
    if (threshold_parse(arg, &o->opts.thresholds, given) < 0)
        return cli_usage_error("bad threshold '%s', expected ACTION=N with ACTION one of "
                               "tag, reply, quarantine, reject",
                               arg);
    return -1;
}

static int
project_option(struct scan_options *o, const char *arg)
{
    if (*arg == '\0' || strspn(arg, "abcdefghijklmnopqrstuvwxyz0123456789-_") != strlen(arg))
        return cli_usage_error("bad --project '%s', expected a name of a-z, 0-9, '-', '_'", arg);
    o->opts.profile = arg;
    return -1;
}

static int
kind_option(struct scan_options *o, const char *arg)
{
    if (strcmp(arg, "report") != 0 && strcmp(arg, "auto") != 0)
        return cli_usage_error("bad --kind '%s', expected auto or report", arg);
    o->as_report = strcmp(arg, "report") == 0;
    return -1;
}

static int
recipients_option(struct scan_options *o, char *arg)
{
    int r = patterns_parse(arg, o->report_rcpt, CLASSIFIER_MAX_PATTERNS);

    if (r == -E2BIG)
        return cli_usage_error("more than %d --report-recipients patterns",
                               CLASSIFIER_MAX_PATTERNS);
    if (r < 0)
        return cli_usage_error("bad --report-recipients: each pattern needs an '@' "
                               "(security@*)");
    o->opts.report_recipients = o->report_rcpt;
    return -1;
}

static int
limit_option(struct scan_options *o, const char *arg)
{
    int r = limit_parse(arg, &o->opts.limits);

    if (r == -ERANGE)
        return cli_usage_error("--limit '%s' is out of range", arg);
    if (r < 0)
        return cli_usage_error("bad --limit '%s', expected NAME=N with NAME one of "
                               "message-size, mime-depth, mime-parts, part-size, headers, "
                               "lines, line-length, patch-files, patch-hunks, "
                               "regex-match-limit, regex-depth-limit",
                               arg);
    return -1;
}

/* The options that take a value: -1 to go on, else the exit code. */
static int
value_option(struct scan_options *o, int opt, char *arg, unsigned *given)
{
    switch (opt) {
    case 'r':
        o->rules = arg;
        return -1;
    case 't':
        return threshold_option(o, arg, given);
    case 'd':
        o->opts.doc_base = arg;
        return -1;
    case 's':
        o->opts.scores_file = arg;
        return -1;
    case 'P':
        return project_option(o, arg);
    case 'k':
        return kind_option(o, arg);
    case 'T':
        return recipients_option(o, arg);
    case 'S':
        o->state_dir = arg;
        return -1;
    case 'o':
        o->html_path = arg;
        return -1;
    case 'D':
        if (!count_parse(arg, 3650, &o->lopts.duplicate_days))
            return cli_usage_error("bad --duplicate-days '%s', expected 1 to 3650", arg);
        return -1;
    case 'M':
        if (!count_parse(arg, 10000000, &o->lopts.learn_minimum))
            return cli_usage_error("bad --learn-minimum '%s', expected 1 to 10000000", arg);
        return -1;
    default: /* 'l' */
        return limit_option(o, arg);
    }
}

/* One option: -1 to go on, else the exit code. */
static int
scan_option(struct scan_options *o, int opt, bool as_html, unsigned *given)
{
    switch (opt) {
    case 'j':
        o->format = OUTPUT_JSON;
        return -1;
    case 'a':
        o->only_actions = true;
        return -1;
    case 'R':
        o->record = true;
        return -1;
    case 'N':
        o->no_state = true;
        return -1;
    case 'F':
        o->walk_flags |= MAILBOX_FOLLOW_SYMLINKS;
        return -1;
    case 'm':
        o->mask_senders = true;
        return -1;
    case 'h':
        cli_usage(stdout);
        return 0;
    case 'r':
    case 't':
    case 'd':
    case 's':
    case 'P':
    case 'k':
    case 'T':
    case 'S':
    case 'o':
    case 'D':
    case 'M':
    case 'l':
        return value_option(o, opt, optarg, given);
    default:
        return cli_usage_error("bad option for '%s'", as_html ? "report" : "scan");
    }
}

/* The options that exclude each other. */
static int
options_check(const struct scan_options *o, bool as_html, unsigned given)
{
    if (thresholds_check(&o->opts.thresholds, given) < 0)
        return EX_USAGE;
    if (as_html && (o->format == OUTPUT_JSON || o->only_actions || o->record))
        return cli_usage_error("report takes no --json, --only-actions or --record");
    if (!as_html && (o->html_path != NULL || o->mask_senders))
        return cli_usage_error("-o and --mask-senders are for report; scan prints to standard "
                               "output");
    if (o->no_state && (o->state_dir != NULL || o->record))
        return cli_usage_error("--no-state excludes --state and --record");
    return -1;
}

int
scan_options_parse(int argc, char **argv, bool as_html, struct scan_options *o)
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
    unsigned given = 0;
    int opt, ret;

    memset(o, 0, sizeof(*o));
    classifier_options_default(&o->opts);
    o->lopts.trust_maintainers = true;
    o->format = OUTPUT_TEXT;
    while ((opt = getopt_long(argc, argv, "jr:t:l:o:h", longopts, NULL)) != -1) {
        ret = scan_option(o, opt, as_html, &given);
        if (ret >= 0)
            return ret;
    }
    if (optind >= argc)
        return cli_usage_error("%s needs at least one PATH (- for standard input)",
                               as_html ? "report" : "scan");
    return options_check(o, as_html, given);
}
