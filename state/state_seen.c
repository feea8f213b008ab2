/*
 * state_seen.c - fingerprints of scanned patches and reports, for
 * "duplicate of <Message-ID> from <date>".
 *
 * seen_fp maps an exact fingerprint to when and in which message it was
 * first seen. seen_band indexes simhashes for near duplicates: the 64 bits
 * are cut into four 16-bit bands, and two hashes within
 * FINGERPRINT_SIMHASH_DISTANCE (3) bits share at least one band exactly,
 * so a look-up reads four short duplicate lists; a band entry also holds
 * the message's first fingerprint (a report's key), and near prose with a
 * different key is no duplicate. Entries carry their time;
 * look-ups ignore entries older than the window and prune removes them.
 * After the Message-ID an entry may hold '\0' and the sender's From:
 * address (entries written before it have none: sender unknown), so that
 * the same author's resend is told from someone else's copy.
 * Arrival order: a look-up takes only entries recorded before its bound
 * and before the message's own entry, when it has one (an offline scan of
 * mail the daemon recorded).
 * Threading: like state.h; every call is one short transaction.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "state_db.h"
#include "state_internal.h"

#define SEEN_BANDS 4
#define SEEN_NEAR_BITS 3
#define SEEN_BAND_SCAN_MAX 2000 /* candidates read per band */
#define SEEN_VALUE_MAX (24 + CLASSIFIER_MSGID_MAX + CLASSIFIER_ADDR_MAX)

static void
band_key(uint64_t simhash, unsigned band, unsigned char key[3])
{
    uint16_t v = (uint16_t)(simhash >> (16 * band));

    key[0] = (unsigned char)band;
    key[1] = (unsigned char)(v >> 8);
    key[2] = (unsigned char)v;
}

static size_t
msgid_len(const char *id)
{
    return id ? strnlen(id, CLASSIFIER_MSGID_MAX - 1) : 0;
}

/* Message-ID, and '\0' and the sender when known, at p; returns bytes. */
static size_t
put_id(char *p, const char *id, const char *from)
{
    size_t idn = msgid_len(id), fn = from ? strnlen(from, CLASSIFIER_ADDR_MAX - 1) : 0;

    memcpy(p, id ? id : "", idn);
    if (fn == 0)
        return idn;
    p[idn] = '\0';
    for (size_t i = 0; i < fn; i++)
        p[idn + 1 + i] = (char)(from[i] >= 'A' && from[i] <= 'Z' ? from[i] - 'A' + 'a' : from[i]);
    return idn + 1 + fn;
}

struct record_ctx {
    const struct state_mail *m;
    int64_t now;
    int64_t keep_after;
};

static int
record_txn(struct state *st, MDB_txn *txn, void *ctx)
{
    struct record_ctx *c = ctx;
    const struct state_mail *m = c->m;
    char vbuf[SEEN_VALUE_MAX];
    size_t idn;
    int rc;

    for (size_t i = 0; i < m->n; i++) {
        uint64_t fp = m->fps[i];
        MDB_val key = {sizeof(fp), &fp}, val;
        int64_t when;

        rc = mdb_get(txn, st->tables[STATE_T_SEEN_FP], &key, &val);
        if (rc == MDB_SUCCESS && val.mv_size >= sizeof(when)) {
            memcpy(&when, val.mv_data, sizeof(when));
            if (when >= c->keep_after)
                continue;
        } else if (rc != MDB_SUCCESS && rc != MDB_NOTFOUND) {
            return rc;
        }
        memcpy(vbuf, &c->now, sizeof(c->now));
        idn = put_id(vbuf + 8, m->message_id, m->from);
        val = (MDB_val){8 + idn, vbuf};
        rc = mdb_put(txn, st->tables[STATE_T_SEEN_FP], &key, &val, 0);
        if (rc != MDB_SUCCESS)
            return rc;
    }
    if (m->simhash == 0)
        return MDB_SUCCESS;
    memcpy(vbuf, &m->simhash, 8);
    memcpy(vbuf + 8, &c->now, 8);
    memcpy(vbuf + 16, m->n > 0 ? &m->fps[0] : &(uint64_t){0}, 8);
    idn = put_id(vbuf + 24, m->message_id, m->from);
    for (unsigned b = 0; b < SEEN_BANDS; b++) {
        unsigned char kb[3];
        MDB_val key = {sizeof(kb), kb}, val = {24 + idn, vbuf};

        band_key(m->simhash, b, kb);
        rc = mdb_put(txn, st->tables[STATE_T_SEEN_BAND], &key, &val, MDB_NODUPDATA);
        if (rc != MDB_SUCCESS && rc != MDB_KEYEXIST)
            return rc;
    }
    return MDB_SUCCESS;
}

int
state_seen_lmdb_record(struct state *st, const struct state_mail *m)
{
    struct record_ctx c = {
        .m = m, .now = (int64_t)m->now, .keep_after = (int64_t)m->now - m->window_s};

    if (m->n == 0 && m->simhash == 0)
        return 0;
    if (m->fps == NULL && m->n > 0)
        return -EINVAL;
    if (st->readonly)
        return -EROFS;
    return state_run(st, false, record_txn, &c);
}

int
state_seen_record(struct state *st, const uint64_t *fps, size_t n, uint64_t simhash,
                  const char *message_id, const char *from, time_t now, uint32_t window_s)
{
    struct state_mail m = {.fps = fps,
                           .n = n,
                           .simhash = simhash,
                           .message_id = message_id,
                           .from = from,
                           .now = now,
                           .window_s = window_s};

    if (st == NULL || (fps == NULL && n > 0))
        return -EINVAL;
    if (st->readonly)
        return -EROFS;
    if (n == 0 && simhash == 0)
        return 0;
    return st->ops->record(st, &m);
}

struct find_ctx {
    const uint64_t *fps;
    size_t n;
    uint64_t simhash;
    const char *self;
    int64_t since;
    int64_t bound;  /* the caller's; INT64_MAX: none */
    int64_t before; /* bound, or self's own entry's time when earlier */
    struct classifier_seen *ret;
    bool found;
};

/* An entry's Message-ID and sender from p[0..n) (put_id()'s layout); the
 * time it was recorded is when. Keeps the earliest; an entry of the
 * message itself lowers the bound instead. */
static void
take(struct find_ctx *c, int64_t when, const char *p, size_t n)
{
    const char *nul = memchr(p, '\0', n);
    size_t idn = nul != NULL ? (size_t)(nul - p) : n;
    size_t fn = nul != NULL ? n - idn - 1 : 0;

    if (c->self != NULL && strlen(c->self) == idn && memcmp(c->self, p, idn) == 0) {
        if (when < c->before)
            c->before = when;
        return;
    }
    if (when < c->since || (c->found && c->ret->date <= when))
        return;
    if (idn >= sizeof(c->ret->message_id))
        idn = sizeof(c->ret->message_id) - 1;
    if (fn >= sizeof(c->ret->from))
        fn = 0; /* no address is that long: not ours */
    memcpy(c->ret->message_id, p, idn);
    c->ret->message_id[idn] = '\0';
    memcpy(c->ret->from, nul != NULL ? nul + 1 : "", fn);
    c->ret->from[fn] = '\0';
    c->ret->date = when;
    c->found = true;
}

/* The earliest match, when it came before the bound. */
static int
found_rc(const struct find_ctx *c)
{
    return c->found && c->ret->date < c->before ? MDB_SUCCESS : MDB_NOTFOUND;
}

/* The exact fingerprints; an LMDB code. */
static int
find_fps(struct state *st, MDB_txn *txn, struct find_ctx *c)
{
    for (size_t i = 0; i < c->n && st->have[STATE_T_SEEN_FP]; i++) {
        uint64_t fp = c->fps[i];
        MDB_val key = {sizeof(fp), &fp}, val;
        int64_t when;
        int rc;

        rc = mdb_get(txn, st->tables[STATE_T_SEEN_FP], &key, &val);
        if (rc == MDB_NOTFOUND)
            continue;
        if (rc != MDB_SUCCESS)
            return rc;
        if (val.mv_size < 8)
            continue;
        memcpy(&when, val.mv_data, 8);
        take(c, when, (const char *)val.mv_data + 8, val.mv_size - 8);
    }
    return MDB_SUCCESS;
}

/* The near duplicates in band b's list (cur on seen_band); an LMDB code. */
static int
find_band(MDB_cursor *cur, unsigned b, struct find_ctx *c)
{
    uint64_t my_key = c->n > 0 ? c->fps[0] : 0;
    unsigned char kb[3];
    MDB_val key = {sizeof(kb), kb}, val;
    unsigned scanned = 0;
    int rc;

    band_key(c->simhash, b, kb);
    for (rc = mdb_cursor_get(cur, &key, &val, MDB_SET_KEY);
         rc == MDB_SUCCESS && scanned < SEEN_BAND_SCAN_MAX;
         rc = mdb_cursor_get(cur, &key, &val, MDB_NEXT_DUP), scanned++) {
        uint64_t other, other_key;
        int64_t when;

        if (val.mv_size < 24)
            continue;
        memcpy(&other, val.mv_data, 8);
        memcpy(&when, (const char *)val.mv_data + 8, 8);
        memcpy(&other_key, (const char *)val.mv_data + 16, 8);
        /* Similar prose about different code is a template (a bot's
         * boilerplate), not a duplicate. */
        if (other_key != 0 && my_key != 0 && other_key != my_key)
            continue;
        if (__builtin_popcountll(other ^ c->simhash) > SEEN_NEAR_BITS)
            continue;
        take(c, when, (const char *)val.mv_data + 24, val.mv_size - 24);
    }
    return rc == MDB_NOTFOUND ? MDB_SUCCESS : rc;
}

static int
find_txn(struct state *st, MDB_txn *txn, void *ctx)
{
    struct find_ctx *c = ctx;
    MDB_cursor *cur = NULL;
    int rc;

    c->found = false;
    c->before = c->bound;
    rc = find_fps(st, txn, c);
    if (rc != MDB_SUCCESS)
        return rc;
    if (c->simhash == 0 || !st->have[STATE_T_SEEN_BAND])
        return found_rc(c);

    rc = mdb_cursor_open(txn, st->tables[STATE_T_SEEN_BAND], &cur);
    if (rc != MDB_SUCCESS)
        return rc;
    for (unsigned b = 0; b < SEEN_BANDS && rc == MDB_SUCCESS; b++)
        rc = find_band(cur, b, c);
    mdb_cursor_close(cur);
    if (rc != MDB_SUCCESS)
        return rc;
    return found_rc(c);
}

int
state_seen_lmdb_find(struct state *st, const uint64_t *fps, size_t n, uint64_t simhash,
                     const char *self_id, time_t since, time_t before, struct classifier_seen *ret)
{
    struct find_ctx c = {.fps = fps,
                         .n = n,
                         .simhash = simhash,
                         .self = self_id,
                         .since = (int64_t)since,
                         .bound = before != 0 ? (int64_t)before : INT64_MAX,
                         .ret = ret};

    return state_run(st, true, find_txn, &c);
}

int
state_seen_find(struct state *st, const uint64_t *fps, size_t n, uint64_t simhash,
                const char *self_id, time_t since, time_t before, struct classifier_seen *ret)
{
    if (st == NULL || ret == NULL || (fps == NULL && n > 0))
        return -EINVAL;
    if (n == 0 && simhash == 0)
        return -ENOENT;
    return st->ops->seen_find(st, fps, n, simhash, self_id, since, before, ret);
}

int
state_seen_prune(struct state *st, time_t before, uint64_t *ret_removed)
{
    static const struct state_expiry seen[] = {
        {STATE_T_SEEN_FP, 0, true},
        {STATE_T_SEEN_BAND, 8, false}, /* a band entry is a copy, not a message */
    };

    return state_expire(st, seen, 2, before, ret_removed);
}
