/*
 * state_fixes.c - merged fixes: hunk fingerprints and (function, bug
 * class) pairs of commits, each pointing at the commit id and subject.
 *
 * Imports only add: running "slopctl import fixes" again on a newer log
 * adds the new commits, and the first record stored for a key stays.
 * Threading: like state.h; every call is one short transaction.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "state_db.h"
#include "state_internal.h"

#define FIX_VALUE_MAX (CLASSIFIER_COMMIT_MAX + CLASSIFIER_SUBJECT_MAX)
#define FIX_KEY_MAX 256

static char key_commits[] = "fix_commits";

/* commit '\0' subject, cut to the sizes of struct classifier_fix. */
static size_t
fix_value(char *buf, const char *commit, const char *subject)
{
    size_t c = strnlen(commit ? commit : "", CLASSIFIER_COMMIT_MAX - 1);
    size_t s = strnlen(subject ? subject : "", CLASSIFIER_SUBJECT_MAX - 1);

    memcpy(buf, commit ? commit : "", c);
    buf[c] = '\0';
    memcpy(buf + c + 1, subject ? subject : "", s);
    return c + 1 + s;
}

static void
fix_parse(const MDB_val *val, struct classifier_fix *ret)
{
    const char *p = val->mv_data;
    const char *nul = memchr(p, '\0', val->mv_size);
    size_t c = nul ? (size_t)(nul - p) : val->mv_size, s;

    memset(ret, 0, sizeof(*ret));
    if (c >= sizeof(ret->commit))
        c = sizeof(ret->commit) - 1;
    memcpy(ret->commit, p, c);
    if (nul == NULL)
        return;
    s = val->mv_size - (size_t)(nul + 1 - p);
    if (s >= sizeof(ret->subject))
        s = sizeof(ret->subject) - 1;
    memcpy(ret->subject, nul + 1, s);
}

/* function '\0' bug class; 0 when it does not fit. */
static size_t
func_key(char *buf, const char *function, const char *bug_class)
{
    size_t f = strlen(function), b = strlen(bug_class);

    if (f == 0 || f + 1 + b > FIX_KEY_MAX)
        return 0;
    memcpy(buf, function, f);
    buf[f] = '\0';
    memcpy(buf + f + 1, bug_class, b);
    return f + 1 + b;
}

struct put_ctx {
    const struct state_fix *v;
    size_t n;
};

static int
put_txn(struct state *st, MDB_txn *txn, void *ctx)
{
    struct put_ctx *c = ctx;

    for (size_t i = 0; i < c->n; i++) {
        const struct state_fix *f = &c->v[i];
        char kbuf[FIX_KEY_MAX], vbuf[FIX_VALUE_MAX];
        uint64_t fp = f->hunk_fp;
        MDB_val key, val = {0, vbuf};
        enum state_table t;
        int rc;

        if (f->function != NULL) {
            if (f->bug_class == NULL)
                continue;
            key.mv_size = func_key(kbuf, f->function, f->bug_class);
            key.mv_data = kbuf;
            if (key.mv_size == 0)
                continue;
            t = STATE_T_FIX_FUNC;
        } else {
            key = (MDB_val){sizeof(fp), &fp};
            t = STATE_T_FIX_HUNK;
        }
        val.mv_size = fix_value(vbuf, f->commit, f->subject);
        rc = mdb_put(txn, st->tables[t], &key, &val, MDB_NOOVERWRITE);
        if (rc != MDB_SUCCESS && rc != MDB_KEYEXIST)
            return rc;
    }
    return MDB_SUCCESS;
}

int
state_fixes_put(struct state *st, const struct state_fix *v, size_t n)
{
    struct put_ctx c = {.v = v, .n = n};

    if (st == NULL || (v == NULL && n > 0))
        return -EINVAL;
    if (st->readonly)
        return -EROFS;
    if (n == 0)
        return 0;
    return state_run(st, false, put_txn, &c);
}

static int
finish_txn(struct state *st, MDB_txn *txn, void *ctx)
{
    MDB_val key = {sizeof(key_commits) - 1, key_commits};
    MDB_val val;
    uint64_t total = 0, add = *(const uint64_t *)ctx;
    int rc;

    rc = mdb_get(txn, st->tables[STATE_T_INDEX_META], &key, &val);
    if (rc == MDB_SUCCESS && val.mv_size == sizeof(total))
        memcpy(&total, val.mv_data, sizeof(total));
    else if (rc != MDB_SUCCESS && rc != MDB_NOTFOUND)
        return rc;
    total += add;
    val = (MDB_val){sizeof(total), &total};
    return mdb_put(txn, st->tables[STATE_T_INDEX_META], &key, &val, 0);
}

int
state_fixes_finish(struct state *st, uint64_t commits)
{
    if (st == NULL)
        return -EINVAL;
    if (st->readonly)
        return -EROFS;
    return state_run(st, false, finish_txn, &commits);
}

struct find_ctx {
    enum state_table table;
    MDB_val key;
    struct classifier_fix *ret;
};

static int
find_txn(struct state *st, MDB_txn *txn, void *ctx)
{
    struct find_ctx *c = ctx;
    MDB_val val;
    int rc;

    rc = mdb_get(txn, st->tables[c->table], &c->key, &val);
    if (rc == MDB_SUCCESS)
        fix_parse(&val, c->ret);
    return rc;
}

int
state_fixes_find(struct state *st, uint64_t hunk_fp, struct classifier_fix *ret)
{
    struct find_ctx c = {.table = STATE_T_FIX_HUNK, .key = {sizeof(hunk_fp), &hunk_fp}, .ret = ret};

    if (st == NULL || ret == NULL)
        return -EINVAL;
    if (!st->have[STATE_T_FIX_HUNK])
        return -ENOENT;
    return state_run(st, true, find_txn, &c);
}

int
state_fixes_find_function(struct state *st, const char *function, const char *bug_class,
                          struct classifier_fix *ret)
{
    struct find_ctx c = {.table = STATE_T_FIX_FUNC, .ret = ret};
    char kbuf[FIX_KEY_MAX];

    if (st == NULL || function == NULL || bug_class == NULL || ret == NULL)
        return -EINVAL;
    if (!st->have[STATE_T_FIX_FUNC])
        return -ENOENT;
    c.key.mv_size = func_key(kbuf, function, bug_class);
    c.key.mv_data = kbuf;
    if (c.key.mv_size == 0)
        return -ENOENT;
    return state_run(st, true, find_txn, &c);
}
