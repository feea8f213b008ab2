/*
 * test_state.c - the LMDB state: ledger claims, hourly cap, release,
 * prune, stats, growth of a tiny map, threads and processes racing for
 * one claim, recovery after a writer is killed mid-loop, and what a
 * STATE_NOSYNC writer's commits are worth when it is killed unsynced;
 * the learned counts' per-process copy (state_learn_cache.c) against
 * LMDB after learn, move, forget and prune, beyond its cap, and under two
 * reading threads and a learning one.
 *
 * Each test works in its own mkdtemp() directory, removed afterwards.
 */
#include <errno.h>
#include <ftw.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <lmdb.h>

#include "state.h"
#include "state_db.h"
#include "state_learn.h"
#include "state_redis.h"

#define T0 ((time_t)1700000000) /* a fixed, hour-aligned-enough start */
#define WEEK (7u * 24 * 3600)

struct fixture {
    char dir[64];
    char sub[128];
};

static int
rm_entry(const char *path, const struct stat *sb, int type, struct FTW *ftw)
{
    (void)sb;
    (void)type;
    (void)ftw;
    return remove(path);
}

static int
setup(void **pstate)
{
    struct fixture *f = calloc(1, sizeof(*f));

    assert_non_null(f);
    strcpy(f->dir, "/tmp/test_state.XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    /* Created by state_open(); its parent f->dir exists. */
    snprintf(f->sub, sizeof(f->sub), "%s/slop", f->dir);
    *pstate = f;
    return 0;
}

static int
teardown(void **pstate)
{
    struct fixture *f = *pstate;

    nftw(f->dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    free(f);
    return 0;
}

static mode_t
current_umask(void)
{
    mode_t m = umask(0);

    umask(m);
    return m;
}

static struct state *
open_rw(const struct fixture *f, size_t map_size)
{
    struct state *st = NULL;

    assert_int_equal(state_open(f->sub, 0, map_size, &st), 0);
    assert_non_null(st);
    return st;
}

static enum state_claim
claim(struct state *st, const char *addr, time_t now, uint32_t interval, uint32_t cap)
{
    enum state_claim c = (enum state_claim) - 1;

    assert_int_equal(state_reply_claim(st, addr, now, interval, cap, &c), 0);
    return c;
}

static void
test_open_close_reopen(void **pstate)
{
    struct fixture *f = *pstate;
    struct state *st;
    struct stat sb;
    char path[256];
    mode_t old = umask(022);

    st = open_rw(f, 0);
    assert_int_equal(claim(st, "a@example.org", T0, WEEK, 0), STATE_CLAIM_GRANTED);
    assert_null(state_close(st));

    assert_int_equal(stat(f->sub, &sb), 0);
    assert_int_equal(sb.st_mode & 0777, 0750);
    snprintf(path, sizeof(path), "%s/data.mdb", f->sub);
    assert_int_equal(stat(path, &sb), 0);
    assert_int_equal(sb.st_mode & 0777, 0640);
    umask(old);

    /* The claim survived the close. */
    st = open_rw(f, 0);
    assert_int_equal(claim(st, "a@example.org", T0 + 1, WEEK, 0), STATE_CLAIM_RECENT);
    assert_null(state_close(st));
    assert_null(state_close(NULL));
}

static void
test_schema_version(void **pstate)
{
    struct fixture *f = *pstate;
    struct state_stats stats;
    struct state *st = open_rw(f, 0);
    MDB_env *env;
    MDB_txn *txn;
    MDB_dbi dbi;
    uint32_t newer = STATE_SCHEMA_VERSION + 1;
    MDB_val key = {14, (char[]){"schema_version"}};
    MDB_val val = {sizeof(newer), &newer};

    assert_int_equal(state_stats(st, &stats), 0);
    assert_int_equal(stats.schema_version, STATE_SCHEMA_VERSION);
    state_close(st);

    /* A release from the future wrote the environment: refuse it. */
    assert_int_equal(mdb_env_create(&env), 0);
    assert_int_equal(mdb_env_set_maxdbs(env, 8), 0);
    assert_int_equal(mdb_env_open(env, f->sub, 0, 0640), 0);
    assert_int_equal(mdb_txn_begin(env, NULL, 0, &txn), 0);
    assert_int_equal(mdb_dbi_open(txn, "meta", 0, &dbi), 0);
    assert_int_equal(mdb_put(txn, dbi, &key, &val, 0), 0);
    assert_int_equal(mdb_txn_commit(txn), 0);
    mdb_env_close(env);

    st = NULL;
    assert_int_equal(state_open(f->sub, 0, 0, &st), -EPROTO);
    assert_null(st);
    assert_int_equal(state_open(f->sub, STATE_READONLY, 0, &st), -EPROTO);
}

static void
test_claim_interval(void **pstate)
{
    static const struct {
        const char *addr;
        time_t now;
        enum state_claim want;
    } cases[] = {
        {"dev@example.org", T0, STATE_CLAIM_GRANTED},
        {"dev@example.org", T0 + 1, STATE_CLAIM_RECENT},
        {"DEV@Example.ORG", T0 + 60, STATE_CLAIM_RECENT}, /* same address */
        {"other@example.org", T0 + 60, STATE_CLAIM_GRANTED},
        {"dev@example.org", T0 + WEEK - 1, STATE_CLAIM_RECENT},
        {"dev@example.org", T0 + WEEK, STATE_CLAIM_GRANTED},
        {"dev@example.org", T0 + WEEK + 5, STATE_CLAIM_RECENT},
        /* The clock went back before the last reply: stay quiet. */
        {"dev@example.org", T0, STATE_CLAIM_RECENT},
    };
    struct fixture *f = *pstate;
    struct state *st = open_rw(f, 0);
    enum state_claim c;

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        c = claim(st, cases[i].addr, cases[i].now, WEEK, 0);
        if (c != cases[i].want)
            fail_msg("case %zu (%s at +%lld): got %d want %d", i, cases[i].addr,
                     (long long)(cases[i].now - T0), c, cases[i].want);
    }

    /* Interval 0: every claim is granted. */
    assert_int_equal(claim(st, "zero@example.org", T0, 0, 0), STATE_CLAIM_GRANTED);
    assert_int_equal(claim(st, "zero@example.org", T0, 0, 0), STATE_CLAIM_GRANTED);

    /* Bad addresses and arguments. */
    char longaddr[300];
    memset(longaddr, 'a', sizeof(longaddr) - 1);
    longaddr[sizeof(longaddr) - 1] = '\0';
    assert_int_equal(state_reply_claim(st, "", T0, WEEK, 0, &c), -EINVAL);
    assert_int_equal(state_reply_claim(st, NULL, T0, WEEK, 0, &c), -EINVAL);
    assert_int_equal(state_reply_claim(st, longaddr, T0, WEEK, 0, &c), -EINVAL);
    assert_int_equal(state_reply_claim(st, "a\nb@example.org", T0, WEEK, 0, &c), -EINVAL);
    assert_int_equal(state_reply_claim(st, "x@example.org", T0, WEEK, 0, NULL), -EINVAL);
    state_close(st);
}

static void
test_hourly_cap(void **pstate)
{
    struct fixture *f = *pstate;
    struct state *st = open_rw(f, 0);
    time_t hour = (T0 / 3600) * 3600;
    char addr[64];
    int granted = 0, capped = 0;

    for (int i = 0; i < 5; i++) {
        snprintf(addr, sizeof(addr), "u%d@example.org", i);
        enum state_claim c = claim(st, addr, hour + i * 60, WEEK, 3);
        granted += c == STATE_CLAIM_GRANTED;
        capped += c == STATE_CLAIM_CAPPED;
    }
    assert_int_equal(granted, 3);
    assert_int_equal(capped, 2);

    /* A capped address was not recorded: next hour it is answered. */
    assert_int_equal(claim(st, "u4@example.org", hour + 3600, WEEK, 3), STATE_CLAIM_GRANTED);
    /* A lower cap applies at once; cap 0 means none. */
    assert_int_equal(claim(st, "v@example.org", hour + 3601, WEEK, 1), STATE_CLAIM_CAPPED);
    assert_int_equal(claim(st, "v@example.org", hour + 3601, WEEK, 0), STATE_CLAIM_GRANTED);
    /* RECENT wins over CAPPED: the address was answered. */
    assert_int_equal(claim(st, "u0@example.org", hour + 10, WEEK, 3), STATE_CLAIM_RECENT);
    state_close(st);
}

static void
test_release(void **pstate)
{
    struct fixture *f = *pstate;
    struct state *st = open_rw(f, 0);
    time_t hour = (T0 / 3600) * 3600;

    assert_int_equal(claim(st, "a@example.org", hour, WEEK, 1), STATE_CLAIM_GRANTED);
    assert_int_equal(claim(st, "b@example.org", hour + 1, WEEK, 1), STATE_CLAIM_CAPPED);
    /* Not the claim's time: nothing to give back. */
    assert_int_equal(state_reply_release(st, "a@example.org", hour + 1), -ENOENT);
    assert_int_equal(state_reply_release(st, "nobody@example.org", hour), -ENOENT);
    assert_int_equal(state_reply_release(st, "A@example.org", hour), 0);
    assert_int_equal(state_reply_release(st, "a@example.org", hour), -ENOENT);
    /* Both the ledger entry and the hourly slot came back. */
    assert_int_equal(claim(st, "b@example.org", hour + 2, WEEK, 1), STATE_CLAIM_GRANTED);
    assert_int_equal(state_reply_release(st, "b@example.org", hour + 2), 0);
    assert_int_equal(claim(st, "a@example.org", hour + 3, WEEK, 1), STATE_CLAIM_GRANTED);
    state_close(st);
}

static void
test_prune_and_stats(void **pstate)
{
    struct fixture *f = *pstate;
    struct state *st = open_rw(f, 0);
    struct state_stats stats;
    uint64_t removed = 99;
    char addr[64];

    for (int i = 0; i < 10; i++) {
        snprintf(addr, sizeof(addr), "p%d@example.org", i);
        assert_int_equal(claim(st, addr, T0 + i * 100, WEEK, 0), STATE_CLAIM_GRANTED);
    }
    assert_int_equal(state_stats(st, &stats), 0);
    assert_int_equal(stats.ledger_entries, 10);
    assert_true(stats.map_size >= ((uint64_t)64 << 20));
    assert_true(stats.used_bytes > 0 && stats.used_bytes <= stats.map_size);

    /* Entries stamped before T0+450: p0..p4. */
    assert_int_equal(state_prune(st, T0 + 450, &removed), 0);
    assert_int_equal(removed, 5);
    assert_int_equal(state_stats(st, &stats), 0);
    assert_int_equal(stats.ledger_entries, 5);
    assert_int_equal(state_prune(st, T0 + 450, NULL), 0);
    assert_int_equal(state_prune(st, T0 + 450, &removed), 0);
    assert_int_equal(removed, 0);

    /* A pruned address is answered again, a kept one is not. */
    assert_int_equal(claim(st, "p0@example.org", T0 + 1000, WEEK, 0), STATE_CLAIM_GRANTED);
    assert_int_equal(claim(st, "p9@example.org", T0 + 1000, WEEK, 0), STATE_CLAIM_RECENT);

    assert_int_equal(state_prune(st, T0 + 100000, &removed), 0);
    assert_int_equal(removed, 6);
    assert_int_equal(state_stats(st, &stats), 0);
    assert_int_equal(stats.ledger_entries, 0);
    state_close(st);
}

/* Series: a flagged cover letter is found by its Message-ID inside the
 * window; a patch's paragraphs match only other patches of the same
 * series and version; both expire with state_tables_prune(). */
static void
test_series(void **pstate)
{
    struct fixture *f = *pstate;
    struct state *st = open_rw(f, 0);
    const uint64_t p1[] = {11, 22, 33}, p2[] = {22, 33, 44}, other[] = {55};
    struct classifier_series s = {.root = "cover@x", .self_id = "p1@x", .version = 1, .index = 1};
    uint32_t patches = 99, found = 99;
    uint64_t removed = 0;
    char note[CLASSIFIER_NOTE_MAX];

    assert_int_equal(state_series_cover_find(st, "cover@x", T0, note, sizeof(note)), -ENOENT);
    assert_int_equal(state_series_cover_put(st, "cover@x", "COVER_A, COVER_B", T0), 0);
    assert_int_equal(state_series_cover_find(st, "cover@x", T0, note, sizeof(note)), 0);
    assert_string_equal(note, "COVER_A, COVER_B");
    assert_int_equal(state_series_cover_find(st, "cover@x", T0 + 1, note, sizeof(note)), -ENOENT);
    assert_int_equal(state_series_cover_find(st, "cover@y", T0, note, sizeof(note)), -ENOENT);

    assert_int_equal(state_series_log_put(st, &s, p1, 3, T0), 0);
    /* The patch itself is not another patch of its series. */
    assert_int_equal(state_series_log_find(st, &s, p1, 3, T0, &patches, &found), -ENOENT);
    s.self_id = "p2@x";
    s.index = 2;
    assert_int_equal(state_series_log_find(st, &s, p2, 3, T0, &patches, &found), 0);
    assert_int_equal(patches, 1);
    assert_int_equal(found, 0x3); /* 22 and 33 */
    assert_int_equal(state_series_log_find(st, &s, other, 1, T0, &patches, &found), -ENOENT);
    assert_int_equal(state_series_log_put(st, &s, p2, 3, T0 + 10), 0);
    s.self_id = "p3@x";
    s.index = 3;
    assert_int_equal(state_series_log_find(st, &s, p2, 3, T0, &patches, &found), 0);
    assert_int_equal(patches, 2);
    assert_int_equal(found, 0x7);
    /* Another version, another series, or outside the window: nothing. */
    s.version = 2;
    assert_int_equal(state_series_log_find(st, &s, p2, 3, T0, &patches, &found), -ENOENT);
    s.version = 1;
    s.root = "cover@y";
    assert_int_equal(state_series_log_find(st, &s, p2, 3, T0, &patches, &found), -ENOENT);
    s.root = "cover@x";
    assert_int_equal(state_series_log_find(st, &s, p2, 3, T0 + 5, &patches, &found), 0);
    assert_int_equal(patches, 1);
    /* A patch of the same index under another Message-ID is a resend. */
    s.index = 2;
    assert_int_equal(state_series_log_find(st, &s, p2, 3, T0 + 5, &patches, &found), -ENOENT);

    assert_int_equal(state_tables_prune(st, T0, &removed), 0);
    assert_int_equal(removed, 2); /* the cover letter and p1 */
    assert_int_equal(state_series_cover_find(st, "cover@x", 0, note, sizeof(note)), -ENOENT);
    s.index = 3;
    assert_int_equal(state_series_log_find(st, &s, p2, 3, 0, &patches, &found), 0);
    assert_int_equal(patches, 1);
    state_close(st);
}

/* An environment from the release before the series tables: read-only,
 * the tables are absent and count as empty; the first write open adds
 * them, with the schema version unchanged. */
static void
test_series_older_state(void **pstate)
{
    struct fixture *f = *pstate;
    struct state *st = open_rw(f, 0);
    struct classifier_series s = {.root = "cover@x", .self_id = "p2@x", .version = 1, .index = 2};
    const uint64_t fps[] = {1, 2};
    const char *const tables[] = {"series_cover", "series_log"};
    struct state_stats stats;
    uint32_t patches, found;
    char note[16];
    MDB_env *env;
    MDB_txn *txn;
    MDB_dbi dbi;

    state_close(st);
    assert_int_equal(mdb_env_create(&env), 0);
    assert_int_equal(mdb_env_set_maxdbs(env, 32), 0);
    assert_int_equal(mdb_env_open(env, f->sub, 0, 0640), 0);
    assert_int_equal(mdb_txn_begin(env, NULL, 0, &txn), 0);
    for (size_t i = 0; i < 2; i++) {
        assert_int_equal(mdb_dbi_open(txn, tables[i], 0, &dbi), 0);
        assert_int_equal(mdb_drop(txn, dbi, 1), 0);
    }
    assert_int_equal(mdb_txn_commit(txn), 0);
    mdb_env_close(env);

    st = NULL;
    assert_int_equal(state_open(f->sub, STATE_READONLY, 0, &st), 0);
    assert_int_equal(state_series_cover_find(st, "cover@x", 0, note, sizeof(note)), -ENOENT);
    assert_int_equal(state_series_log_find(st, &s, fps, 2, 0, &patches, &found), -ENOENT);
    assert_int_equal(state_series_cover_put(st, "cover@x", "X", T0), -EROFS);
    state_close(st);

    st = open_rw(f, 0);
    assert_int_equal(state_series_cover_put(st, "cover@x", "X", T0), 0);
    assert_int_equal(state_series_cover_find(st, "cover@x", 0, note, sizeof(note)), 0);
    assert_string_equal(note, "X");
    assert_int_equal(state_stats(st, &stats), 0);
    assert_int_equal(stats.schema_version, STATE_SCHEMA_VERSION);
    state_close(st);
}

struct race {
    struct state *st;
    const char *addr;
    int tries;
    int granted;
    int errors;
};

static void *
race_thread(void *arg)
{
    struct race *r = arg;

    for (int i = 0; i < r->tries; i++) {
        enum state_claim c;

        if (state_reply_claim(r->st, r->addr, T0 + i, WEEK, 0, &c) < 0)
            r->errors++;
        else if (c == STATE_CLAIM_GRANTED)
            r->granted++;
    }
    return NULL;
}

static void
test_threads_one_grant(void **pstate)
{
    enum { NTHREADS = 20, TRIES = 50 };
    struct fixture *f = *pstate;
    struct state *st = open_rw(f, 0);
    pthread_t tid[NTHREADS];
    struct race r[NTHREADS];
    int total = 0;

    for (int i = 0; i < NTHREADS; i++) {
        r[i] = (struct race){.st = st, .addr = "racer@example.org", .tries = TRIES};
        assert_int_equal(pthread_create(&tid[i], NULL, race_thread, &r[i]), 0);
    }
    for (int i = 0; i < NTHREADS; i++) {
        pthread_join(tid[i], NULL);
        assert_int_equal(r[i].errors, 0);
        total += r[i].granted;
    }
    assert_int_equal(total, 1);
    state_close(st);
}

static void
test_processes_one_grant(void **pstate)
{
    enum { NPROC = 4, TRIES = 50 };
    struct fixture *f = *pstate;
    pid_t pid[NPROC];
    int total = 0;

    /* Create the environment first so the children only open it. */
    state_close(open_rw(f, 0));
    for (int i = 0; i < NPROC; i++) {
        pid[i] = fork();
        assert_true(pid[i] >= 0);
        if (pid[i] == 0) {
            struct state *st = NULL;
            struct race r = {.addr = "proc@example.org", .tries = TRIES};

            if (state_open(f->sub, 0, 0, &st) < 0)
                _exit(100);
            r.st = st;
            race_thread(&r);
            state_close(st);
            _exit(r.errors > 0 ? 101 : r.granted);
        }
    }
    for (int i = 0; i < NPROC; i++) {
        int status;

        assert_int_equal(waitpid(pid[i], &status, 0), pid[i]);
        assert_true(WIFEXITED(status));
        assert_true(WEXITSTATUS(status) <= TRIES);
        total += WEXITSTATUS(status);
    }
    assert_int_equal(total, 1);
}

static void
test_map_growth(void **pstate)
{
    enum { N = 5000 };
    struct fixture *f = *pstate;
    struct state *st = open_rw(f, 64 << 10);
    struct state_stats stats;
    char addr[96];

    assert_int_equal(state_stats(st, &stats), 0);
    assert_true(stats.map_size <= (64 << 10));
    for (int i = 0; i < N; i++) {
        snprintf(addr, sizeof(addr), "some.longer.local.part.%06d@lists.example.org", i);
        assert_int_equal(claim(st, addr, T0 + i, WEEK, 0), STATE_CLAIM_GRANTED);
    }
    assert_int_equal(state_stats(st, &stats), 0);
    assert_int_equal(stats.ledger_entries, N);
    assert_true(stats.map_size > (64 << 10));
    state_close(st);

    /* A second, small-map opener adopts the grown size. */
    st = open_rw(f, 64 << 10);
    assert_int_equal(claim(st, "some.longer.local.part.000001@lists.example.org", T0 + N, WEEK, 0),
                     STATE_CLAIM_RECENT);
    assert_int_equal(claim(st, "new@example.org", T0 + N, WEEK, 0), STATE_CLAIM_GRANTED);
    state_close(st);
}

static void
test_readonly(void **pstate)
{
    struct fixture *f = *pstate;
    struct state *st = NULL;
    struct state_stats stats;
    enum state_claim c;
    char missing[192];

    snprintf(missing, sizeof(missing), "%s/does/not/exist", f->dir);
    assert_int_equal(state_open(missing, STATE_READONLY, 0, &st), -ENOENT);
    assert_null(st);
    /* Read-only open created nothing. */
    assert_int_equal(access(missing, F_OK), -1);

    st = open_rw(f, 0);
    assert_int_equal(claim(st, "ro@example.org", T0, WEEK, 0), STATE_CLAIM_GRANTED);
    state_close(st);

    assert_int_equal(state_open(f->sub, STATE_READONLY, 0, &st), 0);
    assert_int_equal(state_stats(st, &stats), 0);
    assert_int_equal(stats.ledger_entries, 1);
    assert_int_equal(stats.schema_version, STATE_SCHEMA_VERSION);
    assert_int_equal(state_reply_claim(st, "x@example.org", T0, WEEK, 0, &c), -EROFS);
    assert_int_equal(state_prune(st, T0, NULL), -EROFS);
    state_close(st);

    assert_int_equal(state_open(NULL, 0, 0, &st), -EINVAL);
    assert_int_equal(state_open("", 0, 0, &st), -EINVAL);
}

static void
test_killed_writer(void **pstate)
{
    struct fixture *f = *pstate;
    struct state_stats stats;
    struct state *st;

    state_close(open_rw(f, 64 << 10));
    /* Kill the child at several points; each time a later claim works. */
    for (int round = 0; round < 5; round++) {
        uint64_t before, added;
        int status;
        pid_t pid;

        st = open_rw(f, 0);
        assert_int_equal(state_stats(st, &stats), 0);
        before = stats.ledger_entries;
        state_close(st);

        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
            struct state *cst = NULL;
            char addr[64];

            if (state_open(f->sub, 0, 64 << 10, &cst) < 0)
                _exit(1);
            /* Bounded, but far more than fits in the time before the kill. */
            for (long i = 0; i < 100000000L; i++) {
                enum state_claim c;

                snprintf(addr, sizeof(addr), "k%d-%ld@example.org", round, i);
                if (state_reply_claim(cst, addr, T0 + i, WEEK, 0, &c) < 0)
                    _exit(2);
            }
            _exit(0);
        }
        usleep(50000 + round * 30000);
        assert_int_equal(kill(pid, SIGKILL), 0);
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFSIGNALED(status));

        st = open_rw(f, 0);
        assert_int_equal(state_stats(st, &stats), 0);
        added = stats.ledger_entries - before;
        if (getenv("TEST_STATE_VERBOSE") != NULL)
            print_message("round %d: child committed %llu claims\n", round,
                          (unsigned long long)added);
        /* Claims commit in order, so what survived is a whole prefix. */
        if (added > 0) {
            char addr[64];

            snprintf(addr, sizeof(addr), "k%d-0@example.org", round);
            assert_int_equal(claim(st, addr, T0 + 1, WEEK, 0), STATE_CLAIM_RECENT);
            snprintf(addr, sizeof(addr), "k%d-%llu@example.org", round,
                     (unsigned long long)(added - 1));
            assert_int_equal(claim(st, addr, T0 + 1, WEEK, 0), STATE_CLAIM_RECENT);
            snprintf(addr, sizeof(addr), "k%d-%llu@example.org", round, (unsigned long long)added);
            assert_int_equal(claim(st, addr, T0 + 1, WEEK, 0), STATE_CLAIM_GRANTED);
        }
        assert_int_equal(claim(st, "after@example.org", T0 + round * WEEK, WEEK, 0),
                         STATE_CLAIM_GRANTED);
        assert_int_equal(claim(st, "after@example.org", T0 + round * WEEK, WEEK, 0),
                         STATE_CLAIM_RECENT);
        state_close(st);
    }
}

/*
 * STATE_NOSYNC leaves commits to the page cache: a writer killed before
 * any state_sync() must still have every commit it made, because the
 * kernel, not the process, holds them.
 */
#define NOSYNC_WRITES 200

static void
test_nosync_killed_writer(void **pstate)
{
    struct fixture *f = *pstate;
    struct state *st;
    int status, fds[2];
    char done = 0;
    pid_t pid;

    assert_int_equal(pipe(fds), 0);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        struct state *cst = NULL;
        char addr[64];

        close(fds[0]);
        if (state_open(f->sub, STATE_NOSYNC, 0, &cst) < 0)
            _exit(1);
        for (int i = 0; i < NOSYNC_WRITES; i++) {
            snprintf(addr, sizeof(addr), "s%d@example.org", i);
            if (state_sender_add(cst, addr, T0) < 0)
                _exit(2);
        }
        if (write(fds[1], "x", 1) != 1)
            _exit(3);
        /* Bounded: the parent kills us long before. */
        for (int i = 0; i < 600; i++)
            sleep(1);
        _exit(0);
    }
    close(fds[1]);
    assert_int_equal(read(fds[0], &done, 1), 1);
    close(fds[0]);
    assert_int_equal(kill(pid, SIGKILL), 0);
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFSIGNALED(status));

    assert_int_equal(state_open(f->sub, STATE_READONLY, 0, &st), 0);
    for (int i = 0; i < NOSYNC_WRITES; i++) {
        char addr[64];

        snprintf(addr, sizeof(addr), "s%d@example.org", i);
        assert_int_equal(state_sender_count(st, addr, T0), 1);
    }
    assert_int_equal(state_sync(st), 0); /* nothing to flush read-only */
    state_close(st);
}

static void
test_nosync_claim_and_sync(void **pstate)
{
    struct fixture *f = *pstate;
    struct state *st = NULL;

    assert_int_equal(state_sync(NULL), -EINVAL);
    assert_int_equal(state_open(f->sub, STATE_NOSYNC, 0, &st), 0);
    assert_int_equal(claim(st, "a@example.org", T0, WEEK, 0), STATE_CLAIM_GRANTED);
    assert_int_equal(claim(st, "a@example.org", T0 + 1, WEEK, 0), STATE_CLAIM_RECENT);
    assert_int_equal(state_sender_add(st, "a@example.org", T0), 0);
    assert_int_equal(state_sync(st), 0);
    state_close(st);

    /* A later open without the flag sees the same data. */
    st = open_rw(f, 0);
    assert_int_equal(claim(st, "a@example.org", T0 + 2, WEEK, 0), STATE_CLAIM_RECENT);
    assert_int_equal(state_sender_count(st, "a@example.org", T0), 1);
    state_close(st);
}

/* Only StateDir itself is created: a missing parent is an error, and
 * nothing is made on the way. */
static void
test_no_parents(void **pstate)
{
    struct fixture *f = *pstate;
    struct state *st = NULL;
    char nested[192], parent[192];
    struct stat sb;

    snprintf(parent, sizeof(parent), "%s/var", f->dir);
    snprintf(nested, sizeof(nested), "%s/var/lib/slop", f->dir);
    assert_int_equal(state_open(nested, 0, 0, &st), -ENOENT);
    assert_null(st);
    assert_int_equal(stat(parent, &sb), -1);
    st = open_rw(f, 0);
    state_close(st);
    assert_int_equal(stat(f->sub, &sb), 0);
    assert_int_equal(sb.st_mode & 07777, 0750 & ~current_umask());
}

/* A file-level look before LMDB maps data.mdb: a file cut short would
 * fault there, an emptied or removed one would start over silently. */
static void
test_damaged_file(void **pstate)
{
    struct fixture *f = *pstate;
    struct state_check chk;
    struct state *st = NULL;
    char path[256], addr[64];
    enum state_claim claim;
    FILE *fp;

    assert_int_equal(state_check_file(f->sub, &chk), 0);
    assert_false(chk.present);

    st = open_rw(f, 0);
    for (int i = 0; i < 2000; i++) {
        snprintf(addr, sizeof(addr), "sender%d@example.org", i);
        assert_int_equal(state_reply_claim(st, addr, T0, 60, 0, &claim), 0);
    }
    state_close(st);
    assert_int_equal(state_check_file(f->sub, &chk), 0);
    assert_true(chk.present);
    assert_true(chk.txnid > 0);
    assert_int_equal(chk.generation, chk.txnid);
    assert_true(chk.file_bytes >= chk.need_bytes);
    assert_true(chk.need_bytes > 8000);

    snprintf(path, sizeof(path), "%s/data.mdb", f->sub);
    assert_int_equal(truncate(path, 8000), 0);
    assert_int_equal(state_check_file(f->sub, &chk), -EUCLEAN);
    assert_non_null(strstr(chk.reason, "8000 bytes"));
    assert_int_equal(state_open(f->sub, 0, 0, &st), -EUCLEAN);
    assert_int_equal(state_open(f->sub, STATE_READONLY, 0, &st), -EUCLEAN);

    assert_int_equal(truncate(path, 0), 0);
    assert_int_equal(state_check_file(f->sub, &chk), -EUCLEAN);
    assert_non_null(strstr(chk.reason, "empty"));
    assert_int_equal(state_open(f->sub, 0, 0, &st), -EUCLEAN);

    assert_int_equal(unlink(path), 0);
    assert_int_equal(state_check_file(f->sub, &chk), -EUCLEAN);
    assert_non_null(strstr(chk.reason, "missing"));
    assert_int_equal(state_open(f->sub, 0, 0, &st), -EUCLEAN);

    /* Starting over on purpose: remove the generation with the file. */
    snprintf(path, sizeof(path), "%s/state.generation", f->sub);
    assert_int_equal(unlink(path), 0);
    st = open_rw(f, 0);
    state_close(st);

    /* A meta page that is not LMDB's. */
    snprintf(path, sizeof(path), "%s/data.mdb", f->sub);
    fp = fopen(path, "r+");
    assert_non_null(fp);
    assert_int_equal(fseek(fp, 16, SEEK_SET), 0);
    assert_int_equal(fwrite("XXXX", 1, 4, fp), 4);
    assert_int_equal(fclose(fp), 0);
    assert_int_equal(state_check_file(f->sub, &chk), -EUCLEAN);
    assert_non_null(strstr(chk.reason, "magic"));
}

/* The backend is chosen once, by state_attach_redis(): from then on the
 * shared tables (ledger, seen mail, sender counts) go to the server, here
 * one that is down, and none falls back to the LMDB tables that hold the
 * same sender; errors name the server. Series stay the host's own. */
static void
test_backend_chosen_at_attach(void **pstate)
{
    struct fixture *f = *pstate;
    char server[200], buf[512];
    struct state_redis_options o = {.server = server, .timeout_ms = 100};
    struct state_redis *r = NULL, *r2 = NULL;
    struct state *st = NULL;
    enum state_claim claim;
    struct classifier_seen seen;
    uint64_t fp = 0x1234567890abcdefULL;
    int e;

    assert_int_equal(state_open(f->sub, 0, 0, &st), 0);
    assert_int_equal(state_sender_add(st, "a@example.org", T0), 0);
    assert_int_equal(state_seen_record(st, &fp, 1, 0, "<a@example.org>", NULL, T0, WEEK), 0);
    assert_int_equal(state_sender_count(st, "a@example.org", T0), 1);
    state_strerror(st, -EIO, buf, sizeof(buf));
    assert_non_null(strstr(buf, "StateDir '"));

    snprintf(server, sizeof(server), "unix:%s/no-redis.sock", f->dir);
    assert_int_equal(state_redis_new(&o, &r), 0);
    assert_int_equal(state_redis_new(&o, &r2), 0);
    assert_int_equal(state_attach_redis(st, r), 0);
    assert_ptr_equal(state_redis_of(st), r);
    assert_int_equal(state_attach_redis(st, r2), -EINVAL);
    state_redis_free(r2);

    e = state_reply_claim(st, "a@example.org", T0, WEEK, 0, &claim);
    assert_true(e < 0);
    state_strerror(st, e, buf, sizeof(buf));
    assert_non_null(strstr(buf, "Redis '"));
    assert_null(strstr(buf, "StateDir"));
    assert_true(state_reply_release(st, "a@example.org", T0) < 0);
    assert_true(state_sender_add(st, "a@example.org", T0) < 0);
    assert_int_equal(state_sender_count(st, "a@example.org", T0), 0);
    assert_true(state_seen_record(st, &fp, 1, 0, "<b@example.org>", NULL, T0 + 1, WEEK) < 0);
    assert_true(state_seen_find(st, &fp, 1, 0, NULL, T0 - 1, 0, &seen) < 0);

    assert_int_equal(state_series_cover_put(st, "<c@example.org>", "flagged", T0), 0);
    assert_int_equal(state_series_cover_find(st, "<c@example.org>", T0 - 1, buf, sizeof(buf)), 0);
    assert_string_equal(buf, "flagged");
    state_close(st);
}

/* ---- the learned counts' per-process copy against LMDB ---- */

#define LEARN_VOCAB 3000  /* tokens of the test's model */
#define LEARN_PER_MSG 400 /* tokens a message adds */
#define LEARN_N_MSGS 40

/* Token i of the vocabulary; token 0 is a token too (the copy keeps it
 * apart from its free slots). */
static uint64_t
vocab(size_t i)
{
    return i == 0 ? 0 : (uint64_t)i * UINT64_C(0x9e3779b97f4a7c15);
}

static int
cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

    return x < y ? -1 : x > y;
}

/* Message k: LEARN_PER_MSG tokens of the vocabulary picked by a fixed LCG, so
 * that messages share many tokens, sorted and distinct. */
static size_t
msg_tokens(unsigned k, uint64_t *ret)
{
    uint32_t x = 2654435761u * (k + 1);
    size_t n = 0, m = 0;

    for (size_t i = 0; i < LEARN_PER_MSG; i++) {
        x = x * 1103515245u + 12345u;
        ret[n++] = vocab((x >> 8) % LEARN_VOCAB);
    }
    qsort(ret, n, sizeof(*ret), cmp_u64);
    for (size_t i = 0; i < n; i++)
        if (m == 0 || ret[m - 1] != ret[i])
            ret[m++] = ret[i];
    return m;
}

static enum state_learn_outcome
learn(struct state *st, unsigned k, enum state_learn_class cls, time_t now)
{
    uint64_t tok[LEARN_PER_MSG];
    struct state_learn_msg m = {.tokens = tok, .hint = k};
    enum state_learn_outcome out;

    m.n = msg_tokens(k, tok);
    assert_int_equal(state_learn_add(st, &m, cls, now, &out), 0);
    return out;
}

static enum state_learn_outcome
forget(struct state *st, unsigned k)
{
    uint64_t tok[LEARN_PER_MSG];
    struct state_learn_msg m = {.tokens = tok};
    enum state_learn_outcome out;

    m.n = msg_tokens(k, tok);
    assert_int_equal(state_learn_forget(st, &m, &out), 0);
    return out;
}

/* The counts of the whole vocabulary (and one token never learned), in
 * calls of at most STATE_LEARN_MAX_TOKENS, into ret[LEARN_VOCAB + 1]. */
static void
counts_all(struct state *st, uint32_t (*ret)[2])
{
    uint64_t tok[STATE_LEARN_MAX_TOKENS];

    for (size_t base = 0; base <= LEARN_VOCAB; base += STATE_LEARN_MAX_TOKENS) {
        size_t n = 0;

        for (size_t i = base; i <= LEARN_VOCAB && n < STATE_LEARN_MAX_TOKENS; i++)
            tok[n++] = i < LEARN_VOCAB ? vocab(i) : UINT64_C(0xfeedfacecafebeef);
        assert_int_equal(state_learn_counts(st, tok, n, 1, ret + base, NULL), 0);
    }
}

static const struct state_learn_cache_limits eager = {
    .max_tokens = 1000000, .asks_min = 1, .interval_s = 0};
static const struct state_learn_cache_limits direct = {
    .max_tokens = 0, .asks_min = 1, .interval_s = 0};

/*
 * What the copy answers against what LMDB answers, after an operation:
 * LMDB's first (no copy), then twice through the copy (the first ask
 * under a new generation builds it, the second is answered by it), and
 * the copy must really have answered.
 */
static void
check_copy(struct state *st)
{
    static uint32_t want[LEARN_VOCAB + 1][2], got[LEARN_VOCAB + 1][2];
    struct state_learn_cache_stats s0, s1;

    assert_int_equal(state_learn_cache_configure(st, &direct), 0);
    counts_all(st, want);
    assert_int_equal(state_learn_cache_configure(st, &eager), 0);
    assert_int_equal(state_learn_cache_stats(st, &s0), 0);
    counts_all(st, got);
    assert_memory_equal(want, got, sizeof(want));
    counts_all(st, got);
    assert_memory_equal(want, got, sizeof(want));
    assert_int_equal(state_learn_cache_stats(st, &s1), 0);
    assert_true(s1.hits > s0.hits);
    assert_true(s1.tokens > 0);
    assert_true(s1.bytes >= s1.tokens * 16);
}

static uint64_t
generation(struct state *st)
{
    uint64_t g;

    assert_int_equal(state_learn_generation(st, &g), 0);
    return g;
}

static void
test_copy_follows_every_write(void **pstate)
{
    struct fixture *f = *pstate;
    struct state *st = open_rw(f, 0);
    uint64_t g;

    assert_int_equal(state_learn_cache_configure(st, &eager), 0);
    for (unsigned k = 0; k < LEARN_N_MSGS; k++)
        assert_int_equal(learn(st, k, k % 3 ? STATE_LEARN_GENUINE : STATE_LEARN_SLOP, T0),
                         STATE_LEARN_ADDED);
    check_copy(st);

    /* A move keeps the number of tokens stored: only the generation
     * tells the copy that the counts moved. */
    g = generation(st);
    assert_int_equal(learn(st, 1, STATE_LEARN_SLOP, T0), STATE_LEARN_MOVED);
    assert_true(generation(st) > g);
    check_copy(st);

    g = generation(st);
    assert_int_equal(learn(st, LEARN_N_MSGS + 5, STATE_LEARN_SLOP, T0 + 100), STATE_LEARN_ADDED);
    assert_true(generation(st) > g);
    check_copy(st);

    g = generation(st);
    assert_int_equal(forget(st, 2), STATE_LEARN_FORGOTTEN);
    assert_true(generation(st) > g);
    check_copy(st);

    /* Nothing changes, nothing bumps: the copy stays. */
    g = generation(st);
    assert_int_equal(learn(st, 4, STATE_LEARN_GENUINE, T0), STATE_LEARN_UNCHANGED);
    assert_int_equal(forget(st, 2), STATE_LEARN_UNKNOWN);
    assert_int_equal(generation(st), g);

    /* Prune what only T0's messages have: message LEARN_N_MSGS + 5 keeps its
     * tokens at T0 + 100. */
    {
        uint64_t removed = 0;

        g = generation(st);
        assert_int_equal(state_learn_prune(st, T0, 0, &removed), 0);
        assert_true(removed > 0);
        assert_true(generation(st) > g);
        check_copy(st);
        g = generation(st);
        assert_int_equal(state_learn_prune(st, T0, 0, &removed), 0);
        assert_int_equal(removed, 0);
        assert_int_equal(generation(st), g);
    }
    state_close(st);
}

/* An operation whose token count stays the same and that did not bump
 * the generation would be answered from the old copy: the counts of a
 * moved message's tokens are the ones the copy must not keep. */
static void
test_copy_after_move_answers_new_counts(void **pstate)
{
    struct fixture *f = *pstate;
    struct state *st = open_rw(f, 0);
    uint64_t tok[LEARN_PER_MSG];
    uint32_t before[LEARN_PER_MSG][2], after[LEARN_PER_MSG][2];
    size_t n;

    assert_int_equal(state_learn_cache_configure(st, &eager), 0);
    learn(st, 0, STATE_LEARN_SLOP, T0);
    learn(st, 1, STATE_LEARN_GENUINE, T0);
    n = msg_tokens(7, tok);
    learn(st, 7, STATE_LEARN_SLOP, T0);
    /* Twice: the copy is built, then answers. */
    assert_int_equal(state_learn_counts(st, tok, n, 1, before, NULL), 0);
    assert_int_equal(state_learn_counts(st, tok, n, 1, before, NULL), 0);
    assert_int_equal(learn(st, 7, STATE_LEARN_GENUINE, T0), STATE_LEARN_MOVED);
    assert_int_equal(state_learn_counts(st, tok, n, 1, after, NULL), 0);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(after[i][0] + 1, before[i][0]);
        assert_int_equal(after[i][1], before[i][1] + 1);
    }
    state_close(st);
}

/* Beyond the cap no copy is built, and the answers are LMDB's. */
static void
test_cap_reads_lmdb(void **pstate)
{
    struct fixture *f = *pstate;
    struct state *st = open_rw(f, 0);
    const struct state_learn_cache_limits small = {.max_tokens = 100, .asks_min = 1};
    struct state_learn_cache_stats s;
    static uint32_t want[LEARN_VOCAB + 1][2], got[LEARN_VOCAB + 1][2];

    for (unsigned k = 0; k < 6; k++)
        learn(st, k, k % 2 ? STATE_LEARN_GENUINE : STATE_LEARN_SLOP, T0);
    assert_int_equal(state_learn_cache_configure(st, &direct), 0);
    counts_all(st, want);
    assert_int_equal(state_learn_cache_configure(st, &small), 0);
    for (int round = 0; round < 3; round++) {
        counts_all(st, got);
        assert_memory_equal(want, got, sizeof(want));
    }
    assert_int_equal(state_learn_cache_stats(st, &s), 0);
    assert_int_equal(s.builds, 0);
    assert_int_equal(s.tokens, 0);
    assert_int_equal(s.hits, 0);
    assert_true(s.misses >= 3);
    /* The default waits for several asks: one look-up builds nothing. */
    {
        const struct state_learn_cache_limits dflt = {
            .max_tokens = 2000000, .asks_min = 16, .interval_s = 10};
        uint64_t tok[1] = {vocab(1)};
        uint32_t c[1][2];

        assert_int_equal(state_learn_cache_configure(st, &dflt), 0);
        assert_int_equal(state_learn_counts(st, tok, 1, 1, c, NULL), 0);
        assert_int_equal(state_learn_cache_stats(st, &s), 0);
        assert_int_equal(s.builds, 0);
    }
    state_close(st);
}

/*
 * Two readers and a learner. Every message the learner adds or forgets
 * holds all the tokens of shared[], so in any one answer they must all
 * carry the same counts: a copy built half-way through a transaction,
 * or swapped under a reader, would show two different ones.
 */
#define SHARED 300

struct learn_race {
    struct state *st;
    uint64_t shared[SHARED];
    atomic_bool stop;
    atomic_int torn;
    atomic_int answers;
};

static void *
learn_race_reader(void *arg)
{
    struct learn_race *r = arg;
    uint32_t c[SHARED][2];

    while (!atomic_load(&r->stop)) {
        if (state_learn_counts(r->st, r->shared, SHARED, 1, c, NULL) != 0)
            continue;
        for (size_t i = 1; i < SHARED; i++)
            if (c[i][0] != c[0][0] || c[i][1] != c[0][1])
                atomic_fetch_add(&r->torn, 1);
        atomic_fetch_add(&r->answers, 1);
    }
    return NULL;
}

static void
learn_race_msg(struct learn_race *r, unsigned k, uint64_t *tok, struct state_learn_msg *m)
{
    /* shared[] plus a token of its own, so that each message has its own
     * key. */
    memcpy(tok, r->shared, sizeof(r->shared));
    tok[SHARED] = UINT64_C(0xf000000000000000) + k;
    m->tokens = tok;
    m->n = SHARED + 1;
    m->hint = 0;
}

static void
test_threads_see_whole_messages(void **pstate)
{
    struct fixture *f = *pstate;
    struct state *st = open_rw(f, 0);
    static struct learn_race r;
    const struct state_learn_cache_limits busy = {
        .max_tokens = 1000000, .asks_min = 2, .interval_s = 0};
    pthread_t tid[2];
    uint64_t tok[SHARED + 1];

    memset(&r, 0, sizeof(r));
    r.st = st;
    for (size_t i = 0; i < SHARED; i++)
        r.shared[i] = vocab(i + 1);
    assert_int_equal(state_learn_cache_configure(st, &busy), 0);
    for (unsigned k = 0; k < 4; k++) {
        struct state_learn_msg m;

        learn_race_msg(&r, k, tok, &m);
        assert_int_equal(state_learn_add(st, &m, k % 2, T0, NULL), 0);
    }
    for (int i = 0; i < 2; i++)
        assert_int_equal(pthread_create(&tid[i], NULL, learn_race_reader, &r), 0);
    for (unsigned k = 4; k < 204; k++) {
        struct state_learn_msg m;

        learn_race_msg(&r, k, tok, &m);
        if (k % 5 == 4) {
            learn_race_msg(&r, k - 3, tok, &m);
            assert_int_equal(state_learn_forget(st, &m, NULL), 0);
            learn_race_msg(&r, k - 3, tok, &m);
            assert_int_equal(state_learn_add(st, &m, (k - 3) % 2, T0, NULL), 0);
        } else {
            assert_int_equal(state_learn_add(st, &m, k % 2, T0, NULL), 0);
        }
        /* Let the readers ask a few times under this generation. */
        for (int spin = 0; spin < 200 && atomic_load(&r.answers) < (int)(k * 4); spin++) {
            struct timespec ts = {0, 100000};

            nanosleep(&ts, NULL);
        }
    }
    atomic_store(&r.stop, true);
    for (int i = 0; i < 2; i++)
        pthread_join(tid[i], NULL);
    assert_int_equal(atomic_load(&r.torn), 0);
    assert_true(atomic_load(&r.answers) > 0);
    {
        struct state_learn_cache_stats s;

        assert_int_equal(state_learn_cache_stats(st, &s), 0);
        assert_true(s.builds > 0);
        assert_true(s.hits > 0);
    }
    state_close(st);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_open_close_reopen, setup, teardown),
        cmocka_unit_test_setup_teardown(test_schema_version, setup, teardown),
        cmocka_unit_test_setup_teardown(test_claim_interval, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hourly_cap, setup, teardown),
        cmocka_unit_test_setup_teardown(test_release, setup, teardown),
        cmocka_unit_test_setup_teardown(test_prune_and_stats, setup, teardown),
        cmocka_unit_test_setup_teardown(test_series, setup, teardown),
        cmocka_unit_test_setup_teardown(test_series_older_state, setup, teardown),
        cmocka_unit_test_setup_teardown(test_threads_one_grant, setup, teardown),
        cmocka_unit_test_setup_teardown(test_processes_one_grant, setup, teardown),
        cmocka_unit_test_setup_teardown(test_map_growth, setup, teardown),
        cmocka_unit_test_setup_teardown(test_readonly, setup, teardown),
        cmocka_unit_test_setup_teardown(test_killed_writer, setup, teardown),
        cmocka_unit_test_setup_teardown(test_nosync_killed_writer, setup, teardown),
        cmocka_unit_test_setup_teardown(test_nosync_claim_and_sync, setup, teardown),
        cmocka_unit_test_setup_teardown(test_damaged_file, setup, teardown),
        cmocka_unit_test_setup_teardown(test_no_parents, setup, teardown),
        cmocka_unit_test_setup_teardown(test_backend_chosen_at_attach, setup, teardown),
        cmocka_unit_test_setup_teardown(test_copy_follows_every_write, setup, teardown),
        cmocka_unit_test_setup_teardown(test_copy_after_move_answers_new_counts, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cap_reads_lmdb, setup, teardown),
        cmocka_unit_test_setup_teardown(test_threads_see_whole_messages, setup, teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
