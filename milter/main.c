/*
 * main.c - slop-milter's entry point: the options, the configuration and
 * rules loaded and checked (so -n and a bad file fail before anything is
 * touched), then one of the modes: -n (check), -t (offline.c), --dump-*,
 * or the daemon (daemon.c).
 *
 * Threading: the values in `opts` are set before any thread starts and
 * are read-only afterwards.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sysexits.h>

#include "buildtree.h"
#include "classifier.h"
#include "config.h"
#include "daemon.h"
#include "daemon_state.h"
#include "ids.h"
#include "log.h"
#include "offline.h"
#include "postfix_print.h"
#include "reply_verify.h"
#include "snapshot.h"
#include "state.h"

#ifndef SLOP_VERSION
#define SLOP_VERSION CLASSIFIER_VERSION
#endif

#define MAX_CLI_RCPTS 64
#define MAIN_GO_ON (-1) /* parse_options(): no exit status yet */

static struct {
    const char *config_path;
    struct config_paths paths;
    bool foreground;
    bool check_only;
    bool offline;
    bool dump_config;
    const char *from;
    const char *rcpts[MAX_CLI_RCPTS];
    size_t n_rcpts;
} opts;

static void
usage(FILE *f)
{
    fprintf(f, "usage: slop-milter [-f] [-c FILE]\n"
               "       slop-milter -n [-c FILE]\n"
               "       slop-milter -t [-c FILE] [--from ADDR] [--rcpt ADDR]... FILE...\n"
               "       slop-milter -V | -h\n"
               "\n"
               "  -c FILE   configuration file (default: none, built-in defaults)\n"
               "  -f        stay in the foreground and log to standard error\n"
               "  -n        check the configuration, rules and reply template, then exit\n"
               "  -t        scan message files offline and print the MTA actions\n"
               "  --from ADDR, --rcpt ADDR   envelope for -t (default: the From: address,\n"
               "            no recipients)\n"
               "  -V        print the version\n"
               "  -h        print this help\n");
}

static void
diag_stderr(void *ctx, const char *text)
{
    (void)ctx;
    fprintf(stderr, "slop-milter: %s\n", text);
}

/* The source tree's rules when this binary runs from its build tree. */
static void
choose_rules_dir(void)
{
    static char dir[PATH_MAX];
    const char *src = buildtree_source();

    if (src != NULL && snprintf(dir, sizeof(dir), "%s/rules", src) < (int)sizeof(dir))
        opts.paths.rules_dir = dir;
}

/* The options into opts; MAIN_GO_ON, or the status to exit with now. */
static int
parse_options(int argc, char **argv)
{
    enum { OPT_FROM = 256, OPT_RCPT, OPT_DUMP_MAN, OPT_DUMP_SAMPLE, OPT_DUMP_CONFIG };
    static const struct option longopts[] = {
        {"from", required_argument, NULL, OPT_FROM},
        {"rcpt", required_argument, NULL, OPT_RCPT},
        {"dump-config-man", no_argument, NULL, OPT_DUMP_MAN},
        {"dump-config-sample", no_argument, NULL, OPT_DUMP_SAMPLE},
        {"dump-config", no_argument, NULL, OPT_DUMP_CONFIG},
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},
        {NULL, 0, NULL, 0},
    };
    int c;

    while ((c = getopt_long(argc, argv, "c:fntVh", longopts, NULL)) != -1) {
        switch (c) {
        case 'c':
            opts.config_path = optarg;
            break;
        case 'f':
            opts.foreground = true;
            break;
        case 'n':
            opts.check_only = true;
            break;
        case 't':
            opts.offline = true;
            break;
        case 'V':
            printf("slop-milter %s\n", SLOP_VERSION);
            return EX_OK;
        case 'h':
            usage(stdout);
            return EX_OK;
        case OPT_FROM:
            opts.from = optarg;
            break;
        case OPT_RCPT:
            if (opts.n_rcpts >= MAX_CLI_RCPTS) {
                fprintf(stderr, "slop-milter: at most %d --rcpt\n", MAX_CLI_RCPTS);
                return EX_USAGE;
            }
            opts.rcpts[opts.n_rcpts++] = optarg;
            break;
        case OPT_DUMP_MAN:
            config_write_man(stdout);
            return EX_OK;
        case OPT_DUMP_SAMPLE:
            config_write_sample(stdout);
            return EX_OK;
        case OPT_DUMP_CONFIG:
            opts.dump_config = true;
            break;
        default:
            usage(stderr);
            return EX_USAGE;
        }
    }
    if (!opts.offline && optind < argc) {
        usage(stderr);
        return EX_USAGE;
    }
    return MAIN_GO_ON;
}

/* -n: what only start-up would use (UserID, SendmailPath, StateDir) is
 * checked too, rather than let a typo stop the daemon after a
 * "configuration OK". */
static int
check_only(const struct snapshot *snap)
{
    const struct config *cfg = snap->cfg;
    struct config_error cerr;
    struct ids ids;
    bool without_state;
    int status = EX_OK;

    if (ids_resolve(cfg->user_id, &ids) < 0)
        return EX_NOUSER;
    if (config_check_sendmail(cfg, &cerr) < 0)
        status = EX_CONFIG;
    else if (config_check_state_parent(cfg, &cerr) < 0 ||
             config_check_state_owner(cfg, ids_run_uid(&ids), ids_run_gid(&ids), &cerr) < 0)
        status = EX_CANTCREAT;
    if (status != EX_OK) {
        fprintf(stderr, "slop-milter: %s\n", cerr.text);
        return status;
    }
    status = daemon_state_file_ok(cfg, &without_state);
    if (status != EX_OK)
        return status;
    printf("%s: configuration OK, %zu rules from %s\n",
           opts.config_path ? opts.config_path : "(built-in defaults)",
           classifier_rule_count(snap->classifier), cfg->rules_dir);
    postfix_print(cfg, &ids, false);
    return EX_OK;
}

/* The daemon changes to / when it detaches; reloads must still find the file. */
static void
absolute_config_path(void)
{
    static char abs_path[PATH_MAX];

    if (opts.config_path && opts.config_path[0] != '/' &&
        realpath(opts.config_path, abs_path) != NULL)
        opts.config_path = abs_path;
}

/* The mode the options chose, with the loaded snap. */
static int
run_mode(struct snapshot *snap, int argc, char **argv)
{
    if (opts.dump_config) {
        config_write_effective(snap->cfg, stdout);
        return EX_OK;
    }
    /* Once per process, before -n says OK and -t judges: a list named
     * but unreadable is a mistake to report now, not a silent fallback. */
    if (reply_verify_load_list(snap->cfg->public_suffix_list) < 0 &&
        snap->cfg->public_suffix_list[0] != '\0') {
        fprintf(stderr, "slop-milter: PublicSuffixList '%s': cannot be read as a list\n",
                snap->cfg->public_suffix_list);
        return EX_CONFIG;
    }
    if (opts.check_only)
        return check_only(snap);
    if (opts.offline) {
        struct offline_envelope env = {opts.from, opts.rcpts, opts.n_rcpts};

        return offline_run(snap, &env, argv + optind, argc - optind);
    }
    struct daemon_options dopts = {opts.config_path, &opts.paths, opts.foreground, SLOP_VERSION};

    return daemon_run(snap, &dopts);
}

int
main(int argc, char **argv)
{
    struct snapshot *snap = NULL;
    int status = parse_options(argc, argv);

    if (status != MAIN_GO_ON)
        return status;
    if (!opts.offline && !opts.check_only && !opts.dump_config)
        daemon_block_signals();
    state_on_damage(daemon_state_damaged);
    log_setup(false, LOG_MAIL, true);
    classifier_tune_allocator();
    choose_rules_dir();
    absolute_config_path();
    if (snapshot_build(opts.config_path, &opts.paths, diag_stderr, NULL, &snap) < 0)
        return EX_CONFIG;
    status = run_mode(snap, argc, argv);
    snapshot_unref(snap);
    return status;
}
