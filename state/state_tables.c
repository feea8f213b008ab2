/*
 * state_tables.c - the named databases beyond the reply ledger: their
 * names and flags, opening them with the environment, statistics and
 * pruning of the whole set (each table's file prunes its own).
 *
 * Threading: state_tables_open() runs once inside state_open(); the rest
 * run short transactions through state_run() like every state call.
 */
#include <errno.h>
#include <string.h>

#include "state_db.h"
#include "state_internal.h"

struct table_def {
    const char *name;
    unsigned flags;
};

static const struct table_def table_defs[STATE_T__COUNT] = {
    [STATE_T_INDEX_META] = {"index_meta", 0},
    [STATE_T_TREE_PATH] = {"tree_path", 0},
    [STATE_T_TREE_SYM] = {"tree_sym", 0},
    [STATE_T_TREE_CONFIG] = {"tree_config", 0},
    [STATE_T_FIX_HUNK] = {"fix_hunk", 0},
    [STATE_T_FIX_FUNC] = {"fix_func", 0},
    [STATE_T_SEEN_FP] = {"seen_fp", 0},
    [STATE_T_SEEN_BAND] = {"seen_band", MDB_DUPSORT},
    [STATE_T_MAINT_PAT] = {"maint_pat", MDB_DUPSORT},
    [STATE_T_MAINT_GLOB] = {"maint_glob", MDB_DUPSORT},
    [STATE_T_MAINT_SEC] = {"maint_sec", 0},
    [STATE_T_MAINT_ADDR] = {"maint_addr", 0},
    [STATE_T_SENDER] = {"sender_day", 0},
    [STATE_T_SERIES_COVER] = {"series_cover", 0},
    [STATE_T_SERIES_LOG] = {"series_log", 0},
    [STATE_T_LEARN_TOKEN] = {"learn_token", MDB_INTEGERKEY},
    [STATE_T_LEARN_MSG] = {"learn_msg", 0},
};

const char *
state_table_name(enum state_table t)
{
    if ((unsigned)t >= STATE_T__COUNT)
        return NULL;
    return table_defs[t].name;
}

int
state_tables_open(struct state *st, MDB_txn *txn, bool readonly)
{
    for (unsigned t = 0; t < STATE_T__COUNT; t++) {
        int rc = mdb_dbi_open(txn, table_defs[t].name,
                              table_defs[t].flags | (readonly ? 0 : MDB_CREATE), &st->tables[t]);

        /* A read-only open of an older environment: the table is empty. */
        if (rc == MDB_NOTFOUND && readonly) {
            st->have[t] = false;
            continue;
        }
        if (rc != MDB_SUCCESS)
            return rc;
        st->have[t] = true;
    }
    return MDB_SUCCESS;
}

struct stats_ctx {
    void (*fn)(void *ctx, const struct state_table_stats *s);
    void *ctx;
    unsigned psize;
};

static int
stats_txn(struct state *st, MDB_txn *txn, void *ctx)
{
    struct stats_ctx *c = ctx;
    MDB_cursor *cur;
    MDB_val key, val;
    MDB_dbi main_dbi;
    int rc;

    (void)st;
    /* The main database lists every named one by name. */
    rc = mdb_dbi_open(txn, NULL, 0, &main_dbi);
    if (rc != MDB_SUCCESS)
        return rc;
    rc = mdb_cursor_open(txn, main_dbi, &cur);
    if (rc != MDB_SUCCESS)
        return rc;
    for (rc = mdb_cursor_get(cur, &key, &val, MDB_FIRST); rc == MDB_SUCCESS;
         rc = mdb_cursor_get(cur, &key, &val, MDB_NEXT)) {
        char name[64];
        struct state_table_stats s = {.name = name};
        MDB_stat ms;
        MDB_dbi dbi;

        if (key.mv_size == 0 || key.mv_size >= sizeof(name))
            continue;
        memcpy(name, key.mv_data, key.mv_size);
        name[key.mv_size] = '\0';
        if (mdb_dbi_open(txn, name, 0, &dbi) != MDB_SUCCESS || mdb_stat(txn, dbi, &ms) != 0)
            continue;
        s.entries = ms.ms_entries;
        s.bytes =
            (uint64_t)(ms.ms_branch_pages + ms.ms_leaf_pages + ms.ms_overflow_pages) * ms.ms_psize;
        c->fn(c->ctx, &s);
    }
    mdb_cursor_close(cur);
    return rc == MDB_NOTFOUND ? MDB_SUCCESS : rc;
}

int
state_tables_stats(struct state *st, void (*fn)(void *ctx, const struct state_table_stats *s),
                   void *ctx)
{
    struct stats_ctx c = {.fn = fn, .ctx = ctx};

    if (st == NULL || fn == NULL)
        return -EINVAL;
    return state_run(st, true, stats_txn, &c);
}

int
state_tables_prune(struct state *st, time_t before, uint64_t *ret_removed)
{
    uint64_t a = 0, b = 0, c = 0;
    int r;

    if (st == NULL)
        return -EINVAL;
    if (st->readonly)
        return -EROFS;
    r = state_seen_prune(st, before, &a);
    if (r == 0)
        r = state_sender_prune(st, before, &b);
    if (r == 0)
        r = state_series_prune(st, before, &c);
    if (r == 0 && ret_removed != NULL)
        *ret_removed = a + b + c;
    return r;
}
