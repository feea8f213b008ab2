/*
 * import.c - "slopctl import": the offline indices scan --state reads.
 *
 * "import tree DIR" indexes a source tree's paths and the names its files
 * define (import_tree.c, import_scan.c), dated by the tree's last commit.
 * "import fixes" reads `git log -p` text from a file, standard input or
 * git itself and stores the fixes index (import_fixes.c). "import
 * maintainers" hands a MAINTAINERS file, read up to a cap, to
 * state_maint_import(). This file holds the commands: their options, the
 * state they open, the input they read and what they print.
 * Single-threaded; each command returns a sysexits code.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <sysexits.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "file_read.h"
#include "import.h"
#include "import_fixes.h"
#include "import_tree.h"
#include "state.h"
#include "state_db.h"
#include "statedir.h"

#define IMPORT_MAX_MAINTAINERS_BYTES (64u << 20)

static double
now_seconds(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The date of the tree's last commit when it is a git checkout, else today. */
static void
tree_date(const char *dir, char *buf, size_t size)
{
    time_t t = time(NULL);
    struct tm tm;
    int pfd[2];
    pid_t pid;

    buf[0] = '\0';
    if (pipe(pfd) == 0) {
        pid = fork();
        if (pid == 0) {
            int null = open("/dev/null", O_WRONLY);

            dup2(pfd[1], STDOUT_FILENO);
            if (null >= 0)
                dup2(null, STDERR_FILENO);
            close(pfd[0]);
            execlp("git", "git", "-C", dir, "log", "-1", "--format=%cs", (char *)NULL);
            _exit(127);
        }
        close(pfd[1]);
        if (pid > 0) {
            ssize_t k = read(pfd[0], buf, size - 1);
            int status;

            buf[k > 0 ? k : 0] = '\0';
            buf[strcspn(buf, "\r\n")] = '\0';
            waitpid(pid, &status, 0);
            if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || strlen(buf) != 10)
                buf[0] = '\0';
        }
        close(pfd[0]);
    }
    if (buf[0] == '\0' && gmtime_r(&t, &tm) != NULL)
        strftime(buf, size, "%Y-%m-%d", &tm);
}

static int
import_tree(const char *state_dir, const char *dir, const char *date_opt)
{
    struct import_tree *t = NULL;
    const struct import_tree_counts *n;
    struct state *st = NULL;
    char date[32], buf[128];
    double t0 = now_seconds(), t1;
    int fd, r, ret = EX_SOFTWARE;

    fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) {
        cli_error("cannot open tree '%s': %s", dir, strerror_r(errno, buf, sizeof(buf)));
        return EX_NOINPUT;
    }
    if (date_opt != NULL)
        snprintf(date, sizeof(date), "%s", date_opt);
    else
        tree_date(dir, date, sizeof(date));
    r = import_tree_walk(fd, &t);
    close(fd);
    if (r < 0) {
        cli_error("cannot walk '%s': %s", dir, strerror_r(-r, buf, sizeof(buf)));
        goto out;
    }
    t1 = now_seconds();

    ret = statedir_open(state_dir, 0, &st);
    if (ret != 0)
        goto out;
    ret = EX_IOERR;
    r = import_tree_store(t, st, date);
    if (r < 0) {
        cli_error("cannot store the tree index in '%s': %s", state_dir,
                  strerror_r(-r, buf, sizeof(buf)));
        goto out;
    }
    n = import_tree_counts(t);
    printf("indexed %zu files, %zu directories, %zu symbols, %zu CONFIG_ symbols from '%s' "
           "(%.1f MiB scanned) in %.1fs (walk %.1fs, store %.1fs): indexed tree of %s\n",
           n->files, n->dirs, n->symbols, n->configs, dir, (double)n->scanned_bytes / 1048576.0,
           now_seconds() - t0, t1 - t0, now_seconds() - t1, date);
    ret = 0;
out:
    state_close(st);
    import_tree_free(t);
    return ret;
}

/* git log -p of repo (since a date when since is not NULL) on *ret_in,
 * read by the caller, who waits for *ret_pid. 0 or a sysexits code. */
static int
git_log_open(const char *repo, const char *since, FILE **ret_in, pid_t *ret_pid)
{
    char since_arg[128], buf[128];
    int pfd[2];
    pid_t pid;

    snprintf(since_arg, sizeof(since_arg), "--since=%s", since ? since : "");
    if (pipe(pfd) < 0 || (pid = fork()) < 0) {
        cli_error("cannot run git: %s", strerror_r(errno, buf, sizeof(buf)));
        return EX_OSERR;
    }
    if (pid == 0) {
        dup2(pfd[1], STDOUT_FILENO);
        close(pfd[0]);
        close(pfd[1]);
        if (since != NULL)
            execlp("git", "git", "-C", repo, "-c", "core.quotepath=off", "log", "-p", "--no-merges",
                   "--no-color", "--no-ext-diff", "--no-renames", "--format=medium", since_arg,
                   (char *)NULL);
        else
            execlp("git", "git", "-C", repo, "-c", "core.quotepath=off", "log", "-p", "--no-merges",
                   "--no-color", "--no-ext-diff", "--no-renames", "--format=medium", (char *)NULL);
        _exit(127);
    }
    close(pfd[1]);
    *ret_pid = pid;
    *ret_in = fdopen(pfd[0], "r");
    return 0;
}

/* The git log text: from git in repo, else from file ("-": standard
 * input). 0 or a sysexits code after a message. */
static int
fixes_input_open(const char *file, const char *repo, const char *since, FILE **ret_in,
                 pid_t *ret_pid)
{
    char buf[128];
    int ret;

    *ret_in = NULL;
    if (repo != NULL) {
        ret = git_log_open(repo, since, ret_in, ret_pid);
        if (ret != 0)
            return ret;
    } else if (strcmp(file, "-") == 0) {
        *ret_in = stdin;
    } else {
        *ret_in = fopen(file, "r");
    }
    if (*ret_in == NULL) {
        cli_error("cannot read '%s': %s", repo ? repo : file, strerror_r(errno, buf, sizeof(buf)));
        return EX_NOINPUT;
    }
    return 0;
}

/* Wait for git; 0, or EX_DATAERR when it failed. */
static int
git_log_close(FILE *in, pid_t pid, const char *repo)
{
    int status;

    fclose(in);
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        cli_error("git log in '%s' failed", repo);
        return EX_DATAERR;
    }
    return 0;
}

static int
import_fixes(const char *state_dir, const char *file, const char *repo, const char *since)
{
    struct import_fixes_counts n;
    struct import_fixes *fi = NULL;
    struct state *st = NULL;
    FILE *in = NULL;
    pid_t pid = -1;
    char buf[128];
    double t0 = now_seconds();
    int ret, r;

    ret = statedir_open(state_dir, 0, &st);
    if (ret != 0)
        return ret;
    if (import_fixes_new(st, &fi) < 0) {
        cli_error("out of memory");
        ret = EX_SOFTWARE;
        goto out;
    }
    ret = fixes_input_open(file, repo, since, &in, &pid);
    if (ret != 0)
        goto out;
    r = import_fixes_read(fi, in, &n);
    if (pid > 0) {
        ret = git_log_close(in, pid, repo);
        in = NULL;
        if (ret != 0)
            goto out;
    }
    if (r != 0) {
        cli_error("cannot store fixes in '%s': %s", state_dir, strerror_r(-r, buf, sizeof(buf)));
        ret = EX_IOERR;
        goto out;
    }
    printf("imported %llu commits, %llu hunk fingerprints, %llu function fixes in %.1fs\n",
           (unsigned long long)n.commits, (unsigned long long)n.hunks,
           (unsigned long long)n.functions, now_seconds() - t0);
    ret = 0;
out:
    if (in != NULL && in != stdin)
        fclose(in);
    if (pid > 0 && in != NULL)
        waitpid(pid, NULL, 0);
    import_fixes_free(fi);
    state_close(st);
    return ret;
}

static int
import_maintainers(const char *state_dir, const char *file)
{
    struct state_maint_counts counts;
    struct state *st = NULL;
    char *text = NULL, buf[128];
    size_t len = 0;
    int fd, ret, r;

    fd = strcmp(file, "-") == 0 ? STDIN_FILENO : open(file, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        cli_error("cannot read '%s': %s", file, strerror_r(errno, buf, sizeof(buf)));
        return EX_NOINPUT;
    }
    r = file_read_fd(fd, IMPORT_MAX_MAINTAINERS_BYTES, FILE_READ_CUT, &text, &len);
    if (fd != STDIN_FILENO)
        close(fd);
    if (r == -ENOMEM)
        return EX_OSERR;
    if (r < 0) {
        cli_error("cannot read '%s': %s", file, strerror_r(-r, buf, sizeof(buf)));
        return EX_NOINPUT;
    }
    ret = statedir_open(state_dir, 0, &st);
    if (ret != 0)
        goto out;
    r = state_maint_import(st, text, len, &counts);
    if (r < 0) {
        cli_error("cannot store MAINTAINERS in '%s': %s", state_dir,
                  strerror_r(-r, buf, sizeof(buf)));
        ret = EX_IOERR;
        goto out;
    }
    printf("imported %llu sections, %llu file patterns, %llu wildcard patterns, %llu addresses\n",
           (unsigned long long)counts.sections, (unsigned long long)counts.patterns,
           (unsigned long long)counts.globs, (unsigned long long)counts.addresses);
    ret = 0;
out:
    state_close(st);
    free(text);
    return ret;
}

static const char import_usage[] =
    "usage: slopctl import tree [--state DIR] [--date YYYY-MM-DD] SOURCE_DIR\n"
    "       slopctl import fixes [--state DIR] (FILE | - | --git REPO [--since DATE])\n"
    "       slopctl import maintainers [--state DIR] FILE\n";

int
import_cmd(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"state", required_argument, NULL, 's'}, {"date", required_argument, NULL, 'd'},
        {"git", required_argument, NULL, 'g'},   {"since", required_argument, NULL, 'S'},
        {"help", no_argument, NULL, 'h'},        {NULL, 0, NULL, 0},
    };
    const char *state_dir = NULL, *date = NULL, *repo = NULL, *since = NULL, *what;
    int opt;

    if (argc < 2) {
        fputs(import_usage, stderr);
        return EX_USAGE;
    }
    what = argv[1];
    optind = 2;
    while ((opt = getopt_long(argc, argv, "s:h", longopts, NULL)) != -1) {
        switch (opt) {
        case 's':
            state_dir = optarg;
            break;
        case 'd':
            date = optarg;
            break;
        case 'g':
            repo = optarg;
            break;
        case 'S':
            since = optarg;
            break;
        case 'h':
            fputs(import_usage, stdout);
            return 0;
        default:
            fputs(import_usage, stderr);
            return EX_USAGE;
        }
    }
    state_dir = statedir_resolve(state_dir);
    if (strcmp(what, "tree") == 0 && optind == argc - 1)
        return import_tree(state_dir, argv[optind], date);
    if (strcmp(what, "fixes") == 0 && repo != NULL && optind == argc)
        return import_fixes(state_dir, NULL, repo, since);
    if (strcmp(what, "fixes") == 0 && repo == NULL && optind == argc - 1)
        return import_fixes(state_dir, argv[optind], NULL, NULL);
    if (strcmp(what, "maintainers") == 0 && optind == argc - 1)
        return import_maintainers(state_dir, argv[optind]);
    fputs(import_usage, stderr);
    return EX_USAGE;
}
