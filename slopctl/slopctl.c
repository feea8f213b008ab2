/*
 * slopctl.c - the command-line front end of the classifier library: main()
 * hands each command to the file that does it: "scan" and "report"
 * (scan.c), "lint" and "rules" (rules.c), "fit" (fit.c), "import"
 * (import.c), "db" (db.c), "learn" and "forget" (learn.c); the backend
 * options before the command are backend.c's, the usage text cli.c's. A
 * misspelt command gets the nearest one suggested.
 *
 * Exit codes follow <sysexits.h>: 0 all fine, 1 when some input could not
 * be read or scanned (the rest still was), EX_USAGE, EX_NOINPUT when
 * nothing could be read, EX_CONFIG when the rules do not load, EX_IOERR
 * when output fails. Single-threaded.
 */
#include <stdio.h>
#include <string.h>
#include <sysexits.h>
#include <unistd.h>

#include "backend.h"
#include "classifier.h"
#include "cli.h"
#include "db.h"
#include "fit.h"
#include "import.h"
#include "learn.h"
#include "rules.h"
#include "scan.h"
#include "state.h"

/* LMDB met a damaged page (recorded for the next open): LMDB would abort
 * when this returns, so say it as every other open says it and exit 73. */
static void
state_damaged_now(const char *dir, const char *reason)
{
    fprintf(stderr, "slopctl: state '%s': data.mdb damaged (%s)\n", dir, reason);
    fflush(NULL);
    _exit(EX_CANTCREAT);
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
        cli_usage(stderr);
        return EX_USAGE;
    }
    cmd = argv[1];
    if (strcmp(cmd, "scan") == 0) {
        argv[1] = scan_name;
        return scan_cmd(argc - 1, argv + 1, false);
    }
    if (strcmp(cmd, "report") == 0) {
        argv[1] = report_name;
        return scan_cmd(argc - 1, argv + 1, true);
    }
    if (strcmp(cmd, "lint") == 0) {
        argv[1] = lint_name;
        return rules_lint_cmd(argc - 1, argv + 1);
    }
    if (strcmp(cmd, "rules") == 0) {
        argv[1] = rules_name;
        return rules_list_cmd(argc - 1, argv + 1);
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
        return fit_cmd(argc - 1, argv + 1);
    }
    if (strcmp(cmd, "learn") == 0 || strcmp(cmd, "forget") == 0) {
        argv[1] = strcmp(cmd, "learn") == 0 ? learn_name : forget_name;
        return learn_cmd(argc - 1, argv + 1, strcmp(cmd, "forget") == 0);
    }
    if (strcmp(cmd, "version") == 0 || strcmp(cmd, "--version") == 0) {
        printf("slopctl %s\n", CLASSIFIER_VERSION);
        return 0;
    }
    if (strcmp(cmd, "help") == 0 || strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0) {
        cli_usage(stdout);
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
