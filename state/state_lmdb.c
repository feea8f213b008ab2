/*
 * state_lmdb.c - the backend whose shared tables are the local LMDB
 * environment's: every state_open() starts on it. The operations
 * themselves live with their tables (state_reply.c, state_seen.c,
 * state_sender.c); this file only binds them into one table.
 * Threading: the table is const and shared by every state and thread.
 */
#include "state_internal.h"

/* A message's fingerprints, then its sender's count: two transactions, as
 * a failed count must not take the fingerprints back. */
static int
lmdb_record(struct state *st, const struct state_mail *m)
{
    int r = state_seen_lmdb_record(st, m);

    if (r == 0 && m->count_sender)
        r = state_sender_lmdb_add(st, m->from, m->now);
    return r;
}

/* Every error of this backend is the state directory's. */
static bool
lmdb_server_error(const struct state *st, int err, char *buf, size_t size)
{
    (void)st;
    (void)err;
    (void)buf;
    (void)size;
    return false;
}

const struct state_ops state_lmdb_ops = {
    .reply_claim = state_reply_lmdb_claim,
    .reply_release = state_reply_lmdb_release,
    .record = lmdb_record,
    .seen_find = state_seen_lmdb_find,
    .sender_count = state_sender_lmdb_count,
    .server_error = lmdb_server_error,
};
