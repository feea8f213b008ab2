/*
 * state_series.c - what ties the mails of one patch series together:
 * flagged cover letters, and the changelog paragraphs of each patch.
 *
 * series_cover maps a cover letter's Message-ID to when it was flagged and
 * what for, so that its patches, which name it in In-Reply-To or
 * References, can carry the finding. series_log maps (series root, patch)
 * to the patch's version, index and changelog paragraph fingerprints;
 * the key starts with the root's hash, so a look-up reads one short run
 * of the series' own patches. Entries carry their time; look-ups ignore
 * entries older than the window and prune removes them.
 * Threading: like state.h; every call is one short transaction.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "state_db.h"
#include "state_internal.h"

#define SERIES_SCAN_MAX 256 /* patches of one series read per look-up */
#define SERIES_LOG_HEAD 20  /* i64 time, u32 version, u32 index, u32 n */

static uint64_t
fnv(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ULL;

    for (; s != NULL && *s != '\0'; s++) {
        h ^= (unsigned char)*s;
        h *= 0x100000001b3ULL;
    }
    return h;
}

static void
put_be64(unsigned char *p, uint64_t v)
{
    for (int i = 7; i >= 0; i--) {
        p[i] = (unsigned char)v;
        v >>= 8;
    }
}

static size_t
id_len(const char *id)
{
    return id ? strnlen(id, CLASSIFIER_MSGID_MAX - 1) : 0;
}

/* ---- flagged cover letters ---- */

struct cover_ctx {
    const char *id;
    const char *note;
    int64_t now, since;
    char *buf;
    size_t size;
};

static int
cover_put_txn(struct state *st, MDB_txn *txn, void *ctx)
{
    struct cover_ctx *c = ctx;
    char vbuf[8 + CLASSIFIER_NOTE_MAX];
    size_t nl = c->note ? strnlen(c->note, CLASSIFIER_NOTE_MAX - 1) : 0;
    MDB_val key = {id_len(c->id), (void *)(uintptr_t)c->id}, val = {8 + nl, vbuf};

    memcpy(vbuf, &c->now, 8);
    if (nl > 0)
        memcpy(vbuf + 8, c->note, nl);
    return mdb_put(txn, st->tables[STATE_T_SERIES_COVER], &key, &val, 0);
}

int
state_series_cover_put(struct state *st, const char *message_id, const char *note, time_t now)
{
    struct cover_ctx c = {.id = message_id, .note = note, .now = (int64_t)now};

    if (st == NULL || id_len(message_id) == 0)
        return -EINVAL;
    if (st->readonly)
        return -EROFS;
    return state_run(st, false, cover_put_txn, &c);
}

static int
cover_find_txn(struct state *st, MDB_txn *txn, void *ctx)
{
    struct cover_ctx *c = ctx;
    MDB_val key = {id_len(c->id), (void *)(uintptr_t)c->id}, val;
    int64_t when;
    size_t n;
    int rc;

    if (!st->have[STATE_T_SERIES_COVER])
        return MDB_NOTFOUND;
    rc = mdb_get(txn, st->tables[STATE_T_SERIES_COVER], &key, &val);
    if (rc != MDB_SUCCESS)
        return rc;
    if (val.mv_size < 8)
        return MDB_NOTFOUND;
    memcpy(&when, val.mv_data, 8);
    if (when < c->since)
        return MDB_NOTFOUND;
    n = val.mv_size - 8;
    if (c->size > 0) {
        if (n >= c->size)
            n = c->size - 1;
        memcpy(c->buf, (const char *)val.mv_data + 8, n);
        c->buf[n] = '\0';
    }
    return MDB_SUCCESS;
}

int
state_series_cover_find(struct state *st, const char *message_id, time_t since, char *buf,
                        size_t size)
{
    struct cover_ctx c = {.id = message_id, .since = (int64_t)since, .buf = buf, .size = size};

    if (st == NULL || (buf == NULL && size > 0))
        return -EINVAL;
    if (id_len(message_id) == 0)
        return -ENOENT;
    return state_run(st, true, cover_find_txn, &c);
}

/* ---- changelog paragraphs per patch ---- */

struct log_ctx {
    const struct classifier_series *s;
    const uint64_t *fps;
    size_t n;
    int64_t now, since;
    uint32_t patches, found;
};

static void
log_key(unsigned char key[16], const char *root, const char *id)
{
    put_be64(key, fnv(root));
    put_be64(key + 8, fnv(id));
}

static int
log_put_txn(struct state *st, MDB_txn *txn, void *ctx)
{
    struct log_ctx *c = ctx;
    unsigned char key[16], vbuf[SERIES_LOG_HEAD + 8 * CLASSIFIER_SERIES_PARAS];
    uint32_t n = (uint32_t)c->n;
    MDB_val k = {sizeof(key), key}, v = {SERIES_LOG_HEAD + 8 * c->n, vbuf};

    log_key(key, c->s->root, c->s->self_id);
    memcpy(vbuf, &c->now, 8);
    memcpy(vbuf + 8, &c->s->version, 4);
    memcpy(vbuf + 12, &c->s->index, 4);
    memcpy(vbuf + 16, &n, 4);
    memcpy(vbuf + SERIES_LOG_HEAD, c->fps, 8 * c->n);
    return mdb_put(txn, st->tables[STATE_T_SERIES_LOG], &k, &v, 0);
}

int
state_series_log_put(struct state *st, const struct classifier_series *s, const uint64_t *fps,
                     size_t n, time_t now)
{
    struct log_ctx c = {.s = s, .fps = fps, .n = n, .now = (int64_t)now};

    if (st == NULL || s == NULL || id_len(s->root) == 0 || id_len(s->self_id) == 0 ||
        (fps == NULL && n > 0))
        return -EINVAL;
    if (st->readonly)
        return -EROFS;
    if (n == 0)
        return 0;
    if (c.n > CLASSIFIER_SERIES_PARAS)
        c.n = CLASSIFIER_SERIES_PARAS;
    return state_run(st, false, log_put_txn, &c);
}

/* One recorded patch of the series: count it when it is another patch of
 * the same version and shares a paragraph. */
static void
log_compare(struct log_ctx *c, const MDB_val *v)
{
    const unsigned char *p = v->mv_data;
    uint32_t version, index, n;
    uint32_t hit = 0;
    int64_t when;

    if (v->mv_size < SERIES_LOG_HEAD)
        return;
    memcpy(&when, p, 8);
    memcpy(&version, p + 8, 4);
    memcpy(&index, p + 12, 4);
    memcpy(&n, p + 16, 4);
    if (when < c->since || version != c->s->version || index == c->s->index ||
        n > (v->mv_size - SERIES_LOG_HEAD) / 8)
        return;
    for (uint32_t j = 0; j < n; j++) {
        uint64_t fp;

        memcpy(&fp, p + SERIES_LOG_HEAD + (size_t)8 * j, 8);
        for (size_t i = 0; i < c->n; i++)
            if (c->fps[i] == fp)
                hit |= 1u << i;
    }
    if (hit != 0) {
        c->patches++;
        c->found |= hit;
    }
}

static int
log_find_txn(struct state *st, MDB_txn *txn, void *ctx)
{
    struct log_ctx *c = ctx;
    unsigned char key[16], self[16];
    MDB_cursor *cur;
    MDB_val k = {sizeof(key), key}, v;
    unsigned scanned = 0;
    int rc;

    c->patches = 0;
    c->found = 0;
    if (!st->have[STATE_T_SERIES_LOG])
        return MDB_SUCCESS;
    log_key(self, c->s->root, c->s->self_id);
    memcpy(key, self, 8);
    memset(key + 8, 0, 8);
    rc = mdb_cursor_open(txn, st->tables[STATE_T_SERIES_LOG], &cur);
    if (rc != MDB_SUCCESS)
        return rc;
    for (rc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE);
         rc == MDB_SUCCESS && scanned < SERIES_SCAN_MAX;
         rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT), scanned++) {
        if (k.mv_size != 16 || memcmp(k.mv_data, self, 8) != 0)
            break;
        if (c->s->self_id != NULL && memcmp(k.mv_data, self, 16) == 0)
            continue;
        log_compare(c, &v);
    }
    mdb_cursor_close(cur);
    return rc == MDB_SUCCESS || rc == MDB_NOTFOUND ? MDB_SUCCESS : rc;
}

int
state_series_log_find(struct state *st, const struct classifier_series *s, const uint64_t *fps,
                      size_t n, time_t since, uint32_t *ret_patches, uint32_t *ret_found)
{
    struct log_ctx c = {.s = s, .fps = fps, .n = n, .since = (int64_t)since};
    int r;

    if (st == NULL || s == NULL || (fps == NULL && n > 0) || ret_patches == NULL ||
        ret_found == NULL)
        return -EINVAL;
    if (id_len(s->root) == 0 || n == 0)
        return -ENOENT;
    if (c.n > CLASSIFIER_SERIES_PARAS)
        c.n = CLASSIFIER_SERIES_PARAS;
    r = state_run(st, true, log_find_txn, &c);
    if (r < 0)
        return r;
    *ret_patches = c.patches;
    *ret_found = c.found;
    return c.patches > 0 ? 0 : -ENOENT;
}

/* ---- expiry ---- */

int
state_series_prune(struct state *st, time_t before, uint64_t *ret_removed)
{
    static const struct state_expiry series[] = {
        {STATE_T_SERIES_COVER, 0, true},
        {STATE_T_SERIES_LOG, 0, true},
    };

    return state_expire(st, series, 2, before, ret_removed);
}
