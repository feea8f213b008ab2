/*
 * state_walk.c - every page of the state walked before LMDB serves from
 * it, in a child process.
 *
 * LMDB trusts the pages it reads: a damaged branch or leaf page makes it
 * fail an assertion and abort the process (mdb_page_search_root(),
 * "i > 0"), or read garbage. So the walk - every named table, every entry
 * and duplicate, and the free-page table that every write reads - runs in
 * a child: a walk that dies costs the child, and the parent names the table
 * it died in. The child reports each table before and after its walk over
 * a pipe, in records shorter than PIPE_BUF.
 *
 * The walk runs when state_check_pages() finds no record that this very
 * data.mdb (device, inode, size, modification and change times) was found
 * whole since it last changed: an unchanged state costs one stat, a
 * changed one (the daemon's own writes included) one walk at the next
 * open. What the walk finds is recorded (state.checked, state.damaged),
 * so the next start knows without walking.
 *
 * Threading: forks; call before the caller starts threads that hold locks
 * the child would need (at start-up). Never logs.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <lmdb.h>

#include "state.h"
#include "state_internal.h"

#define WALK_TABLES_MAX 64
#define WALK_NAME_MAX 200
#define WALK_PATH_MAX 4096
/* LMDB follows the page numbers it reads without a check, so damaged
 * pages can send a cursor round a cycle that never ends. A walk still
 * going after this long is taken for one: its child is stopped by
 * SIGALRM and the state reported damaged. A whole state of millions of
 * entries walks in a few seconds. */
#define WALK_SECONDS 20u

enum walk_phase {
    WALK_BEGIN = 1, /* about to walk name */
    WALK_END,       /* walked name: read, expected, r */
    WALK_DONE,      /* the whole walk ended with r */
    WALK_ASSERT,    /* LMDB's assertion, in name, just before it aborts */
};

/* One report from the child; well under PIPE_BUF, so written whole. */
struct walk_rec {
    int phase;
    int r;
    uint64_t read, expected;
    char name[WALK_NAME_MAX + 1];
};

static void
walk_send(int fd, int phase, const char *name, uint64_t read, uint64_t expected, int r)
{
    struct walk_rec rec = {.phase = phase, .r = r, .read = read, .expected = expected};

    snprintf(rec.name, sizeof(rec.name), "%.*s", WALK_NAME_MAX, name);
    /* A short write leaves the parent with a walk that did not finish. */
    (void)!write(fd, &rec, sizeof(rec));
}

/* Every entry of dbi by cursor: the cursor climbs every branch page and
 * reads every leaf page and sub-page of duplicates. An LMDB code. */
static int
walk_table(MDB_txn *txn, MDB_dbi dbi, uint64_t *ret_read)
{
    MDB_cursor *cur = NULL;
    MDB_val key, val;
    int rc;

    *ret_read = 0;
    rc = mdb_cursor_open(txn, dbi, &cur);
    if (rc != MDB_SUCCESS)
        return rc;
    for (rc = mdb_cursor_get(cur, &key, &val, MDB_FIRST); rc == MDB_SUCCESS;
         rc = mdb_cursor_get(cur, &key, &val, MDB_NEXT))
        (*ret_read)++;
    mdb_cursor_close(cur);
    return rc == MDB_NOTFOUND ? MDB_SUCCESS : rc;
}

static int walk_fd = -1; /* the child's end of the pipe, for walk_assert() */

/* In the child: what LMDB asserted goes to the parent, not to stderr. */
static void
walk_assert(MDB_env *env, const char *msg)
{
    (void)env;
    walk_send(walk_fd, WALK_ASSERT, msg, 0, 0, 0);
}

/* In the child: dir's environment read-only, with a read transaction. */
static int
walk_open(const char *dir, bool nolock, MDB_env **ret_env, MDB_txn **ret_txn)
{
    int rc = mdb_env_create(ret_env);

    if (rc == MDB_SUCCESS)
        rc = mdb_env_set_assert(*ret_env, walk_assert);
    if (rc == MDB_SUCCESS)
        rc = mdb_env_set_maxdbs(*ret_env, WALK_TABLES_MAX);
    /* Without lock.mdb nobody has the state open, and none is made:
     * root's walk must not leave one the daemon's user cannot open. */
    if (rc == MDB_SUCCESS)
        rc = mdb_env_open(*ret_env, dir, MDB_RDONLY | MDB_NOTLS | (nolock ? MDB_NOLOCK : 0), 0640);
    if (rc == MDB_SUCCESS)
        rc = mdb_txn_begin(*ret_env, NULL, MDB_RDONLY, ret_txn);
    return rc;
}

/* The main table, whose keys name the others: walked and reported, the
 * names into names; returns how many. */
static size_t
walk_names(MDB_txn *txn, int fd, char (*names)[WALK_NAME_MAX + 1])
{
    MDB_cursor *cur = NULL;
    MDB_dbi main_dbi;
    MDB_stat ms = {0};
    MDB_val key, val;
    uint64_t read = 0;
    size_t n = 0;
    int rc;

    walk_send(fd, WALK_BEGIN, "(table names)", 0, 0, 0);
    rc = mdb_dbi_open(txn, NULL, 0, &main_dbi);
    if (rc == MDB_SUCCESS)
        rc = mdb_stat(txn, main_dbi, &ms);
    if (rc == MDB_SUCCESS)
        rc = mdb_cursor_open(txn, main_dbi, &cur);
    for (rc = rc == MDB_SUCCESS ? mdb_cursor_get(cur, &key, &val, MDB_FIRST) : rc;
         rc == MDB_SUCCESS; rc = mdb_cursor_get(cur, &key, &val, MDB_NEXT)) {
        read++;
        if (n < WALK_TABLES_MAX && key.mv_size > 0 && key.mv_size <= WALK_NAME_MAX &&
            memchr(key.mv_data, '\0', key.mv_size) == NULL) {
            memcpy(names[n], key.mv_data, key.mv_size);
            names[n++][key.mv_size] = '\0';
        }
    }
    if (cur != NULL)
        mdb_cursor_close(cur);
    walk_send(fd, WALK_END, "(table names)", read, rc == MDB_NOTFOUND ? ms.ms_entries : read,
              rc == MDB_NOTFOUND ? 0 : state_errno(rc));
    return n;
}

/* Table name walked and reported. */
static void
walk_named(MDB_txn *txn, int fd, const char *name)
{
    MDB_stat ms;
    MDB_dbi dbi;
    uint64_t read = 0;
    int rc;

    walk_send(fd, WALK_BEGIN, name, 0, 0, 0);
    rc = mdb_dbi_open(txn, name, 0, &dbi);
    if (rc == MDB_SUCCESS)
        rc = mdb_stat(txn, dbi, &ms);
    if (rc == MDB_SUCCESS)
        rc = walk_table(txn, dbi, &read);
    /* A name that is no table (MDB_INCOMPATIBLE) is a damaged page
     * of the main table too. */
    walk_send(fd, WALK_END, name, read, rc == MDB_SUCCESS ? ms.ms_entries : read, state_errno(rc));
}

/* The child: walk and report; never returns. */
static void __attribute__((noreturn)) walk_child(const char *dir, bool nolock, int fd)
{
    static char names[WALK_TABLES_MAX][WALK_NAME_MAX + 1];
    struct rlimit no_core = {0, 0};
    MDB_env *env = NULL;
    MDB_txn *txn = NULL;
    size_t n;
    uint64_t read;
    int rc, null_fd;

    /* A walk that LMDB aborts is expected here, not a core to keep. */
    (void)setrlimit(RLIMIT_CORE, &no_core);
    (void)signal(SIGALRM, SIG_DFL);
    alarm(WALK_SECONDS);
    /* LMDB prints its assertion to stderr as well: the parent says it
     * once, in the caller's words. */
    null_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
    if (null_fd >= 0)
        (void)dup2(null_fd, STDERR_FILENO);
    walk_fd = fd;
    rc = walk_open(dir, nolock, &env, &txn);
    if (rc != MDB_SUCCESS) {
        walk_send(fd, WALK_DONE, "", 0, 0, state_errno(rc));
        _exit(0);
    }

    n = walk_names(txn, fd, names);
    for (size_t i = 0; i < n; i++)
        walk_named(txn, fd, names[i]);

    /* The free-page table (dbi 0): every write reads it. */
    walk_send(fd, WALK_BEGIN, "(free pages)", 0, 0, 0);
    rc = walk_table(txn, 0, &read);
    walk_send(fd, WALK_END, "(free pages)", read, read, state_errno(rc));

    mdb_txn_abort(txn);
    mdb_env_close(env);
    walk_send(fd, WALK_DONE, "", 0, 0, 0);
    _exit(0);
}

/* Read exactly one record, or false at the end. */
static bool
walk_recv(int fd, struct walk_rec *rec)
{
    size_t got = 0;

    while (got < sizeof(*rec)) {
        ssize_t k = read(fd, (char *)rec + got, sizeof(*rec) - got);

        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return false;
        got += (size_t)k;
    }
    rec->name[WALK_NAME_MAX] = '\0';
    return true;
}

/* What the parent has heard from the child so far. */
struct walk_seen {
    struct walk_rec cur;  /* the table being walked ("" between tables) */
    struct walk_rec lmdb; /* LMDB's assertion, when it made one */
    bool done, damaged, open_failed;
    int r;
};

/* One record from the child; a damaged table's reason into reason. */
static void
walk_take(struct walk_seen *w, const struct walk_rec *rec, char *reason, size_t size)
{
    char eb[128];

    if (rec->phase == WALK_BEGIN) {
        w->cur = *rec;
    } else if (rec->phase == WALK_END && rec->r < 0) {
        snprintf(reason, size, "table %s: %" PRIu64 " entries read, then: %s", rec->name, rec->read,
                 strerror_r(-rec->r, eb, sizeof(eb)));
        w->damaged = true;
    } else if (rec->phase == WALK_END && rec->read != rec->expected) {
        snprintf(reason, size, "table %s: %" PRIu64 " of %" PRIu64 " entries read", rec->name,
                 rec->read, rec->expected);
        w->damaged = true;
    } else if (rec->phase == WALK_END) {
        w->cur.name[0] = '\0';
    } else if (rec->phase == WALK_ASSERT) {
        w->lmdb = *rec;
    } else if (rec->phase == WALK_DONE) {
        w->done = true;
        w->r = rec->r;
        w->open_failed = rec->r < 0;
    }
}

/* Reap the child; the signal that ended it, or 0. */
static int
walk_reap(pid_t pid)
{
    int status;

    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return 0;
    return WIFSIGNALED(status) ? WTERMSIG(status) : 0;
}

/* The walk's outcome from what the child said and how it ended. */
static int
walk_verdict(const struct walk_seen *w, int sig, char *reason, size_t size)
{
    const char *table = w->cur.name[0] ? w->cur.name : "?";
    char eb[128];

    if (w->damaged)
        return -EUCLEAN;
    if (w->open_failed) {
        snprintf(reason, size, "cannot open it to walk its pages: %s",
                 strerror_r(-w->r, eb, sizeof(eb)));
        return w->r;
    }
    if (w->done)
        return 0;
    if (w->lmdb.name[0] != '\0')
        snprintf(reason, size, "table %s: LMDB stopped walking its pages: %s", table, w->lmdb.name);
    else if (sig == SIGALRM)
        snprintf(reason, size, "table %s: the walk of its pages did not end within %u s", table,
                 WALK_SECONDS);
    else if (sig != 0)
        snprintf(reason, size, "table %s: walking its pages died by signal %d (%s)", table, sig,
                 strsignal(sig));
    else
        snprintf(reason, size, "table %s: the walk of its pages ended early", table);
    return -EUCLEAN;
}

int
state_walk(const char *dir, char *reason, size_t size)
{
    char path[WALK_PATH_MAX];
    struct walk_seen w = {0};
    struct walk_rec rec;
    struct stat sb;
    int fds[2], sig, r;
    pid_t pid;

    if (dir == NULL || reason == NULL || size == 0)
        return -EINVAL;
    reason[0] = '\0';
    if (snprintf(path, sizeof(path), "%s/lock.mdb", dir) >= (int)sizeof(path))
        return -ENAMETOOLONG;
    if (pipe2(fds, O_CLOEXEC) < 0)
        return -errno;
    pid = fork();
    if (pid < 0) {
        r = -errno;
        close(fds[0]);
        close(fds[1]);
        return r;
    }
    if (pid == 0) {
        close(fds[0]);
        walk_child(dir, stat(path, &sb) != 0, fds[1]);
    }
    close(fds[1]);
    while (!w.done && !w.damaged && walk_recv(fds[0], &rec))
        walk_take(&w, &rec, reason, size);
    close(fds[0]);
    sig = walk_reap(pid);
    return walk_verdict(&w, sig, reason, size);
}

static bool
walk_same_file(const struct stat *a, const struct stat *b)
{
    return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
           a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec &&
           a->st_ctim.tv_sec == b->st_ctim.tv_sec && a->st_ctim.tv_nsec == b->st_ctim.tv_nsec;
}

int
state_check_pages(const char *dir, struct state_check *ret)
{
    char path[WALK_PATH_MAX];
    struct stat before, after;
    int r = state_check_file(dir, ret);

    if (r < 0 || !ret->present)
        return r;
    if (snprintf(path, sizeof(path), "%s/data.mdb", dir) >= (int)sizeof(path))
        return -ENAMETOOLONG;
    if (stat(path, &before) < 0)
        return -errno;
    if (state_mark_checked(dir, &before))
        return 0;
    r = state_walk(dir, ret->reason, sizeof(ret->reason));
    if (r == -EUCLEAN) {
        /* Best effort: the next start then knows without a walk. */
        (void)state_mark_damaged_write(dir, ret->reason);
        return r;
    }
    if (r < 0)
        return r;
    ret->walked = true;
    /* Only what was walked is vouched for: a write during the walk
     * leaves the next open to walk again. */
    if (stat(path, &after) == 0 && walk_same_file(&before, &after))
        (void)state_mark_checked_write(dir, &before);
    return 0;
}
