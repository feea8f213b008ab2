/*
 * cli.c - what slopctl's commands share on the command line: the usage
 * text, the one-line usage error, and the rule directory a command uses
 * when --rules is not given. Single-threaded (a static buffer holds the
 * resolved rule directory).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sysexits.h>

#include "buildtree.h"
#include "cli.h"

#ifndef SLOP_DEFAULT_RULES_DIR
#define SLOP_DEFAULT_RULES_DIR "/usr/local/share/slop-milter/rules"
#endif

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

void
cli_usage(FILE *f)
{
    fputs(usage_text, f);
    fputs(usage_details, f);
    fputs(usage_commands, f);
}

void
cli_verror(const char *fmt, va_list ap)
{
    fputs("slopctl: ", stderr);
    vfprintf(stderr, fmt, ap);
}

void
cli_error(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    cli_verror(fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

int
cli_usage_error(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    cli_verror(fmt, ap);
    va_end(ap);
    fputs("\ntry 'slopctl help'\n", stderr);
    return EX_USAGE;
}

int
cli_help_or_bad_option(int opt, const char *cmd)
{
    if (opt == 'h') {
        cli_usage(stdout);
        return 0;
    }
    return cli_usage_error("bad option for '%s'", cmd);
}

const char *
cli_rules_dir(const char *opt)
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
