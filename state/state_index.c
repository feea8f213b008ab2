/*
 * state_index.c - the source tree index: paths, function and macro names,
 * CONFIG_ symbols, and the label that says an import finished.
 *
 * An import is clear, many puts (each its own transaction, so the daemon's
 * writes are never held up for long), then finish, which writes the label.
 * Look-ups treat the index as absent while the label is missing, so a
 * crash or a failed import never makes real code look made up.
 * Threading: like state.h; every call is one short transaction.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "state_db.h"
#include "state_internal.h"

#define STATE_KEY_MAX 511 /* LMDB's default key size limit */

static char key_label[] = "tree_label";
static char key_files[] = "tree_files";

static enum state_table
tree_table(enum state_tree_kind kind)
{
    switch (kind) {
    case STATE_TREE_SYMBOL:
        return STATE_T_TREE_SYM;
    case STATE_TREE_CONFIG:
        return STATE_T_TREE_CONFIG;
    case STATE_TREE_PATH:
    default:
        return STATE_T_TREE_PATH;
    }
}

static int
clear_txn(struct state *st, MDB_txn *txn, void *ctx)
{
    MDB_val key = {sizeof(key_label) - 1, key_label};
    int rc;

    (void)ctx;
    rc = mdb_del(txn, st->tables[STATE_T_INDEX_META], &key, NULL);
    if (rc != MDB_SUCCESS && rc != MDB_NOTFOUND)
        return rc;
    for (enum state_table t = STATE_T_TREE_PATH; t <= STATE_T_TREE_CONFIG; t++) {
        rc = mdb_drop(txn, st->tables[t], 0);
        if (rc != MDB_SUCCESS)
            return rc;
    }
    return MDB_SUCCESS;
}

int
state_tree_clear(struct state *st)
{
    if (st == NULL)
        return -EINVAL;
    if (st->readonly)
        return -EROFS;
    return state_run(st, false, clear_txn, NULL);
}

struct put_ctx {
    enum state_table table;
    const struct state_tree_entry *v;
    size_t n;
    bool sorted;
};

static int
put_txn(struct state *st, MDB_txn *txn, void *ctx)
{
    struct put_ctx *c = ctx;
    MDB_cursor *cur;
    int rc;

    rc = mdb_cursor_open(txn, st->tables[c->table], &cur);
    if (rc != MDB_SUCCESS)
        return rc;
    for (size_t i = 0; i < c->n; i++) {
        size_t len = strlen(c->v[i].key);
        char kind = c->v[i].kind;
        MDB_val key = {len, (void *)(uintptr_t)c->v[i].key};
        MDB_val val = {1, &kind};

        if (len == 0 || len > STATE_KEY_MAX)
            continue;
        rc = mdb_cursor_put(cur, &key, &val, c->sorted ? MDB_APPEND : 0);
        /* A key equal to the last one appended: already there. */
        if (rc == MDB_KEYEXIST)
            rc = MDB_SUCCESS;
        if (rc != MDB_SUCCESS)
            break;
    }
    mdb_cursor_close(cur);
    return rc;
}

int
state_tree_put(struct state *st, enum state_tree_kind kind, const struct state_tree_entry *v,
               size_t n, bool sorted)
{
    struct put_ctx c = {.table = tree_table(kind), .v = v, .n = n, .sorted = sorted};

    if (st == NULL || (v == NULL && n > 0))
        return -EINVAL;
    if (st->readonly)
        return -EROFS;
    if (n == 0)
        return 0;
    return state_run(st, false, put_txn, &c);
}

struct finish_ctx {
    char label[128];
    uint64_t files;
};

static int
finish_txn(struct state *st, MDB_txn *txn, void *ctx)
{
    struct finish_ctx *c = ctx;
    MDB_val key = {sizeof(key_files) - 1, key_files};
    MDB_val val = {sizeof(c->files), &c->files};
    int rc;

    rc = mdb_put(txn, st->tables[STATE_T_INDEX_META], &key, &val, 0);
    if (rc != MDB_SUCCESS)
        return rc;
    key = (MDB_val){sizeof(key_label) - 1, key_label};
    val = (MDB_val){strlen(c->label), c->label};
    return mdb_put(txn, st->tables[STATE_T_INDEX_META], &key, &val, 0);
}

int
state_tree_finish(struct state *st, const char *date, uint64_t files)
{
    struct finish_ctx c = {.files = files};

    if (st == NULL || date == NULL)
        return -EINVAL;
    if (st->readonly)
        return -EROFS;
    if (snprintf(c.label, sizeof(c.label), "indexed tree of %s", date) >= (int)sizeof(c.label))
        return -EINVAL;
    return state_run(st, false, finish_txn, &c);
}

struct label_ctx {
    char *buf;
    size_t size;
};

static int
label_txn(struct state *st, MDB_txn *txn, void *ctx)
{
    struct label_ctx *c = ctx;
    MDB_val key = {sizeof(key_label) - 1, key_label};
    MDB_val val;
    size_t n;
    int rc;

    rc = mdb_get(txn, st->tables[STATE_T_INDEX_META], &key, &val);
    if (rc != MDB_SUCCESS)
        return rc;
    n = val.mv_size < c->size - 1 ? val.mv_size : c->size - 1;
    memcpy(c->buf, val.mv_data, n);
    c->buf[n] = '\0';
    return MDB_SUCCESS;
}

int
state_tree_label(struct state *st, char *buf, size_t size)
{
    struct label_ctx c = {.buf = buf, .size = size};

    if (st == NULL || buf == NULL || size == 0)
        return -EINVAL;
    if (!st->have[STATE_T_INDEX_META])
        return -ENOENT;
    return state_run(st, true, label_txn, &c);
}

struct has_ctx {
    enum state_table table;
    MDB_val key;
};

static int
has_txn(struct state *st, MDB_txn *txn, void *ctx)
{
    struct has_ctx *c = ctx;
    MDB_val val;

    return mdb_get(txn, st->tables[c->table], &c->key, &val);
}

bool
state_tree_has(struct state *st, enum state_tree_kind kind, const char *key)
{
    struct has_ctx c = {.table = tree_table(kind)};
    size_t len;

    if (st == NULL || key == NULL || !st->have[c.table])
        return false;
    len = strlen(key);
    if (len == 0 || len > STATE_KEY_MAX)
        return false;
    c.key = (MDB_val){len, (void *)(uintptr_t)key};
    return state_run(st, true, has_txn, &c) == 0;
}
