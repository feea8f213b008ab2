/*
 * db.c - "slopctl db": look after a state environment. stats prints each
 * table's entries and size, prune expires old entries, dump and load wrap
 * LMDB's own mdb_dump and mdb_load for backups (the format is theirs);
 * check and recover are dbcheck.c's. Single-threaded; each command returns
 * a sysexits code.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <sysexits.h>
#include <time.h>
#include <unistd.h>

#include "backend.h"
#include "db.h"
#include "dbcheck.h"
#include "state.h"
#include "state_db.h"
#include "state_learn.h"
#include "statedir.h"

static void
print_table(void *ctx, const struct state_table_stats *s)
{
    (void)ctx;
    printf("  %-14s %10llu entries %10.1f KiB\n", s->name, (unsigned long long)s->entries,
           (double)s->bytes / 1024.0);
}

static int
db_stats(const char *dir)
{
    struct state_stats stats;
    struct state *st = NULL;
    char label[128], buf[128];
    int ret, r;

    ret = statedir_open(dir, STATE_READONLY, &st);
    if (ret != 0)
        return ret;
    r = state_stats(st, &stats);
    if (r < 0) {
        fprintf(stderr, "slopctl: cannot read '%s': %s\n", dir, strerror_r(-r, buf, sizeof(buf)));
        state_close(st);
        return EX_IOERR;
    }
    printf("state %s: schema %u, map %.1f MiB, used %.1f MiB\n", dir, stats.schema_version,
           (double)stats.map_size / 1048576.0, (double)stats.used_bytes / 1048576.0);
    if (state_tree_label(st, label, sizeof(label)) == 0)
        printf("tree: %s\n", label);
    else
        printf("tree: none indexed\n");
    r = state_tables_stats(st, print_table, NULL);
    ret = r < 0 ? EX_IOERR : backend_stats(st);
    state_close(st);
    return ret;
}

/* Learned tokens live longer than the history: a site's verdicts stay
 * true for months, and a cap bounds the table whatever the age. */
#define DB_LEARNED_DAYS 365
#define DB_LEARNED_MAX 2000000

static int
db_prune(const char *dir, unsigned days, unsigned learned_days, uint64_t learned_max)
{
    struct state *st = NULL;
    uint64_t ledger = 0, rest = 0, tokens = 0;
    time_t before = time(NULL) - (time_t)days * 86400;
    char buf[128];
    int ret, r;

    ret = statedir_open(dir, 0, &st);
    if (ret != 0)
        return ret;
    r = state_prune(st, before, &ledger);
    if (r == 0)
        r = state_tables_prune(st, before, &rest);
    if (r == 0)
        r = state_learn_prune(st, time(NULL) - (time_t)learned_days * 86400, learned_max, &tokens);
    state_close(st);
    if (r < 0) {
        fprintf(stderr, "slopctl: cannot prune '%s': %s\n", dir, strerror_r(-r, buf, sizeof(buf)));
        return EX_IOERR;
    }
    printf("pruned %llu ledger entries and %llu fingerprints and sender counts older than %u "
           "days\n",
           (unsigned long long)ledger, (unsigned long long)rest, days);
    printf("pruned %llu learned tokens last learned over %u days ago or beyond %llu\n",
           (unsigned long long)tokens, learned_days, (unsigned long long)learned_max);
    if (backend_is_redis())
        printf("the shared entries in Redis expire by themselves (TTL): nothing to prune "
               "there\n");
    return 0;
}

/* Backups use LMDB's own tools (lmdb-utils): the format is theirs. */
static int
db_tool(const char *tool, const char *file, const char *dir)
{
    pid_t pid = fork();
    int status;

    if (pid < 0)
        return EX_OSERR;
    if (pid == 0) {
        if (strcmp(tool, "mdb_dump") == 0)
            execlp("mdb_dump", "mdb_dump", "-a", "-f", file, dir, (char *)NULL);
        else
            execlp("mdb_load", "mdb_load", "-f", file, dir, (char *)NULL);
        fprintf(stderr, "slopctl: cannot run %s (package lmdb-utils): %s\n", tool, strerror(errno));
        _exit(127);
    }
    if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status))
        return EX_SOFTWARE;
    return WEXITSTATUS(status) == 0 ? 0 : EX_IOERR;
}

static const char db_usage[] =
    "usage: slopctl db stats [--state DIR]\n"
    "       slopctl db check [--state DIR]\n"
    "       slopctl db recover [--state DIR] NEWDIR\n"
    "       slopctl db prune [--state DIR] [--days N] [--learned-days N]\n"
    "                        [--learned-max N]\n"
    "       slopctl db dump [--state DIR] FILE\n"
    "       slopctl db load [--state DIR] FILE\n";

/* A whole number of at most max in arg; false when it is not one. */
static bool
db_number(const char *arg, unsigned long long max, unsigned long long *ret)
{
    unsigned long long v;
    char *end;

    errno = 0;
    v = strtoull(arg, &end, 10);
    if (*arg == '\0' || *end != '\0' || errno != 0 || v > max)
        return false;
    *ret = v;
    return true;
}

struct db_options {
    const char *state_dir;
    unsigned long long days, learned_days, learned_max;
};

/* The options after "db WHAT" into *o; -1 to go on, else the exit code. */
static int
db_options_parse(int argc, char **argv, struct db_options *o)
{
    static const struct option longopts[] = {
        {"state", required_argument, NULL, 's'},
        {"days", required_argument, NULL, 'd'},
        {"learned-days", required_argument, NULL, 'L'},
        {"learned-max", required_argument, NULL, 'M'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    bool ok = true;
    int opt;

    optind = 2;
    while (ok && (opt = getopt_long(argc, argv, "s:h", longopts, NULL)) != -1) {
        if (opt == 's')
            o->state_dir = optarg;
        else if (opt == 'd')
            ok = db_number(optarg, 36500, &o->days);
        else if (opt == 'L')
            ok = db_number(optarg, 36500, &o->learned_days);
        else if (opt == 'M')
            ok = db_number(optarg, ULLONG_MAX, &o->learned_max);
        else if (opt == 'h') {
            fputs(db_usage, stdout);
            return 0;
        } else
            ok = false;
    }
    if (!ok) {
        fputs(db_usage, stderr);
        return EX_USAGE;
    }
    return -1;
}

/* Create the environment with its tables first, so the load fills the
 * same layout the daemon opens. */
static int
db_load(const char *state_dir, const char *file)
{
    struct state *st = NULL;
    int ret = statedir_open(state_dir, 0, &st);

    state_close(st);
    if (ret != 0)
        return ret;
    return db_tool("mdb_load", file, state_dir);
}

int
db_cmd(int argc, char **argv)
{
    struct db_options o = {
        .days = 30, .learned_days = DB_LEARNED_DAYS, .learned_max = DB_LEARNED_MAX};
    const char *state_dir, *what;
    int ret;

    if (argc < 2) {
        fputs(db_usage, stderr);
        return EX_USAGE;
    }
    what = argv[1];
    ret = db_options_parse(argc, argv, &o);
    if (ret >= 0)
        return ret;
    state_dir = statedir_resolve(o.state_dir);
    if (strcmp(what, "stats") == 0 && optind == argc)
        return db_stats(state_dir);
    if (strcmp(what, "check") == 0 && optind == argc)
        return dbcheck_check(state_dir);
    if (strcmp(what, "recover") == 0 && optind == argc - 1)
        return dbcheck_recover(state_dir, argv[optind]);
    if (strcmp(what, "prune") == 0 && optind == argc)
        return db_prune(state_dir, (unsigned)o.days, (unsigned)o.learned_days, o.learned_max);
    if (backend_is_redis() && (strcmp(what, "dump") == 0 || strcmp(what, "load") == 0))
        fprintf(stderr,
                "slopctl: db %s covers the local LMDB state only; back up the shared "
                "entries in Redis with its own persistence (BGSAVE, the RDB or AOF "
                "file)\n",
                what);
    if (strcmp(what, "dump") == 0 && optind == argc - 1)
        return db_tool("mdb_dump", argv[optind], state_dir);
    if (strcmp(what, "load") == 0 && optind == argc - 1)
        return db_load(state_dir, argv[optind]);
    fputs(db_usage, stderr);
    return EX_USAGE;
}
