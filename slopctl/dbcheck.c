/*
 * dbcheck.c - "slopctl db check" and "slopctl db recover".
 *
 * check: the data file against its meta pages (state_check_file()), then
 * every named database walked read-only, every key, each entry count
 * compared with the one the table records. recover: the same walk into a
 * new environment, keeping whatever can be read.
 *
 * The walks trust the pages they read, and a damaged page can make LMDB
 * fault. So each one runs in a child process of its own and reports over
 * a pipe: a walk that dies costs that table only, and slopctl itself is
 * never ended by a signal. Single-threaded; each command returns a
 * sysexits code.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sysexits.h>
#include <unistd.h>

#include "dbcheck.h"
#include "state.h"
#include "state_db.h"
#include "statedir.h"

#define DBCHECK_TABLES_MAX 64
#define DBCHECK_NAME_MAX 255
#define DBCHECK_PATH_MAX 4096

struct dbcheck_tables {
    char name[DBCHECK_TABLES_MAX][DBCHECK_NAME_MAX + 1];
    size_t n;
};

/* What a child reports about one table; sig is set by the parent. */
struct dbcheck_result {
    int r;
    int sig;
    uint64_t read, expected;
};

/* Read exactly size bytes unless the writer went away first. */
static size_t
dbcheck_read_all(int fd, void *buf, size_t size)
{
    size_t got = 0;

    while (got < size) {
        ssize_t n = read(fd, (char *)buf + got, size - got);

        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    return got;
}

/* Start a child writing to the returned pipe end; -errno on failure. */
static pid_t
dbcheck_fork(int *ret_fd, int *ret_child_fd)
{
    int fds[2];
    pid_t pid;

    if (pipe(fds) < 0)
        return -errno;
    fflush(stdout);
    fflush(stderr);
    pid = fork();
    if (pid < 0) {
        int e = errno;

        close(fds[0]);
        close(fds[1]);
        return -e;
    }
    if (pid == 0) {
        close(fds[0]);
        *ret_child_fd = fds[1];
        return 0;
    }
    close(fds[1]);
    *ret_fd = fds[0];
    return pid;
}

/* Wait for pid; the signal that ended it, or 0. */
static int
dbcheck_wait(pid_t pid)
{
    int status;

    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return SIGKILL;
    return WIFSIGNALED(status) ? WTERMSIG(status) : 0;
}

static int
dbcheck_list_one(void *ctx, const char *name)
{
    int fd = *(int *)ctx;
    size_t n = strlen(name);

    if (strchr(name, '\n') != NULL)
        return 0;
    if (write(fd, name, n) != (ssize_t)n || write(fd, "\n", 1) != 1)
        return -EIO;
    return 0;
}

/* The named databases of dir, listed by a child; 0, or -errno or the
 * positive signal that ended the listing, said on stderr. */
static int
dbcheck_list(const char *dir, struct dbcheck_tables *ret)
{
    char buf[DBCHECK_TABLES_MAX * (DBCHECK_NAME_MAX + 1)], *line, *nl;
    int fd = -1, child_fd = -1, sig, r = -EIO;
    size_t got;
    pid_t pid;

    pid = dbcheck_fork(&fd, &child_fd);
    if (pid < 0)
        return (int)pid;
    if (pid == 0) {
        r = state_copy_list(dir, dbcheck_list_one, &child_fd);
        /* The status line tells the parent the list is complete. */
        dprintf(child_fd, "%c%d\n", '\0', r);
        _exit(0);
    }
    got = dbcheck_read_all(fd, buf, sizeof(buf) - 1);
    close(fd);
    sig = dbcheck_wait(pid);
    buf[got] = '\0';
    ret->n = 0;
    for (line = buf; line < buf + got && (nl = memchr(line, '\n', (size_t)(buf + got - line)));
         line = nl + 1) {
        *nl = '\0';
        if (*line == '\0') {
            r = (int)strtol(line + 1, NULL, 10);
            break;
        }
        if (ret->n < DBCHECK_TABLES_MAX && strlen(line) <= DBCHECK_NAME_MAX)
            snprintf(ret->name[ret->n++], DBCHECK_NAME_MAX + 1, "%s", line);
    }
    if (sig != 0)
        fprintf(stderr,
                "slopctl: state '%s': data.mdb damaged (listing its tables died by signal %d, "
                "%s)\n",
                dir, sig, strsignal(sig));
    else if (r < 0)
        fprintf(stderr, "slopctl: state '%s': data.mdb damaged (listing its tables: %s)\n", dir,
                strerror(-r));
    return sig != 0 ? sig : r;
}

/* Walk (and copy into dst, unless NULL) one table in a child. */
static void
dbcheck_table(const char *src, const char *dst, const char *name, struct dbcheck_result *res)
{
    int fd = -1, child_fd = -1;
    pid_t pid;

    memset(res, 0, sizeof(*res));
    pid = dbcheck_fork(&fd, &child_fd);
    if (pid < 0) {
        res->r = (int)pid;
        return;
    }
    if (pid == 0) {
        struct dbcheck_result out = {0};

        out.r = state_copy_table(src, dst, name, &out.read, &out.expected);
        _exit(write(child_fd, &out, sizeof(out)) == (ssize_t)sizeof(out) ? 0 : 1);
    }
    if (dbcheck_read_all(fd, res, sizeof(*res)) != sizeof(*res))
        res->r = -EIO;
    close(fd);
    res->sig = dbcheck_wait(pid);
}

/* "read 12 of 12 entries", and what stopped the walk, into buf. */
static bool
dbcheck_describe(const struct dbcheck_result *res, char *buf, size_t size)
{
    int n = snprintf(buf, size, "%" PRIu64 " of %" PRIu64 " entries", res->read, res->expected);

    if (n < 0 || (size_t)n >= size)
        return false;
    if (res->sig != 0)
        snprintf(buf + n, size - (size_t)n, ", the walk died by signal %d (%s)", res->sig,
                 strsignal(res->sig));
    else if (res->r < 0)
        snprintf(buf + n, size - (size_t)n, ", then: %s", strerror(-res->r));
    else if (res->read != res->expected)
        snprintf(buf + n, size - (size_t)n, ", the table counts otherwise");
    else
        return true;
    return false;
}

/* The file's check; prints why it is damaged. A sysexits code, or -1
 * when whole. */
static int
dbcheck_file(const char *dir, struct state_check *chk)
{
    int r = state_check_file(dir, chk);

    if (r == -EUCLEAN) {
        fprintf(stderr, "slopctl: state '%s': data.mdb damaged (%s)\n", dir, chk->reason);
        return EX_CANTCREAT;
    }
    if (r < 0) {
        fprintf(stderr, "slopctl: state '%s': %s\n", dir, chk->reason);
        return EX_NOINPUT;
    }
    if (!chk->present) {
        fprintf(stderr, "slopctl: no state in '%s'\n", dir);
        return EX_NOINPUT;
    }
    return -1;
}

int
dbcheck_check(const char *dir)
{
    struct dbcheck_tables *t;
    struct state_check chk;
    char what[160], why[400];
    uint32_t schema;
    int ret;

    ret = dbcheck_file(dir, &chk);
    if (ret >= 0)
        return ret;
    printf("state %s: data.mdb %" PRIu64 " bytes, pages of %" PRIu32 ", transaction %" PRIu64 "\n",
           dir, chk.file_bytes, chk.page_size, chk.txnid);
    t = calloc(1, sizeof(*t));
    if (t == NULL)
        return EX_OSERR;
    if (dbcheck_list(dir, t) != 0) {
        free(t);
        return EX_CANTCREAT;
    }
    ret = 0;
    for (size_t i = 0; i < t->n; i++) {
        struct dbcheck_result res;

        dbcheck_table(dir, NULL, t->name[i], &res);
        if (dbcheck_describe(&res, what, sizeof(what))) {
            printf("  %-14s %s read\n", t->name[i], what);
        } else {
            fprintf(stderr, "slopctl: state '%s': data.mdb damaged (table %s: %s)\n", dir,
                    t->name[i], what);
            ret = EX_CANTCREAT;
        }
    }
    free(t);
    /* Whole pages of a schema this release does not read are no state it
     * can use: said as the daemon and every other command say it. */
    if (ret == 0 && state_schema_read(dir, &schema) == 0 && schema > STATE_SCHEMA_VERSION) {
        state_open_strerror(dir, -EPROTO, why, sizeof(why));
        fprintf(stderr, "slopctl: cannot open state in '%s': %s\n", dir, why);
        ret = EX_CANTCREAT;
    }
    if (ret == 0)
        printf("state %s: OK\n", dir);
    return ret;
}

int
dbcheck_recover(const char *dir, const char *newdir)
{
    struct dbcheck_tables *t = NULL;
    struct state_check chk;
    struct state *st = NULL;
    char path[DBCHECK_PATH_MAX], what[160];
    struct stat sb;
    int r, ret = 0;

    r = dbcheck_file(dir, &chk);
    if (r == EX_NOINPUT)
        return r;
    if (r >= 0)
        fprintf(stderr, "slopctl: copying what can be read\n");
    if (snprintf(path, sizeof(path), "%s/data.mdb", newdir) >= (int)sizeof(path))
        return EX_USAGE;
    if (mkdir(newdir, 0750) < 0 && errno != EEXIST) {
        fprintf(stderr, "slopctl: cannot create '%s': %s\n", newdir, strerror(errno));
        return EX_CANTCREAT;
    }
    if (stat(path, &sb) == 0) {
        fprintf(stderr, "slopctl: '%s' already holds a state; recover into a new directory\n",
                newdir);
        return EX_CANTCREAT;
    }
    t = calloc(1, sizeof(*t));
    if (t == NULL)
        return EX_OSERR;
    if (dbcheck_list(dir, t) != 0)
        ret = EX_DATAERR;
    for (size_t i = 0; i < t->n; i++) {
        struct dbcheck_result res;
        bool whole;

        dbcheck_table(dir, newdir, t->name[i], &res);
        whole = dbcheck_describe(&res, what, sizeof(what));
        printf("  %-14s %s %s\n", t->name[i], what, whole ? "copied" : "(copied what was read)");
        if (!whole)
            ret = EX_DATAERR;
    }
    free(t);
    /* Lay out the tables the copy did not bring and record the generation. */
    r = statedir_open(newdir, 0, &st);
    state_close(st);
    if (r != 0)
        return r;
    printf("recovered into %s%s\n", newdir, ret == 0 ? "" : ", with losses");
    return ret;
}
