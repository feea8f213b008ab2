/*
 * state_maint.c - MAINTAINERS: who looks after which files, and which
 * senders are trusted.
 *
 * A section is a run of non-blank lines holding "T:\tvalue" tags; we keep
 * its M: and R: people, its L: lists, and its F:/X: patterns with the
 * kernel's meaning: "dir/" is everything below dir, '*' and '?' do not
 * cross '/', a plain name is a file or a directory. Patterns without
 * wildcards are keys of maint_pat, so a path is looked up by its own name
 * and each of its parent directories; wildcard patterns sit in maint_glob
 * under the directory before their first wildcard ("*" when there is
 * none), so a path tries only the patterns under its own ancestors.
 * Threading: like state.h; every call is one short transaction.
 */
#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "state_db.h"
#include "state_internal.h"

#define MAINT_LINE_MAX 1024
#define MAINT_SECTION_MAX (64 << 10) /* bytes of one stored section */
#define MAINT_PATH_MAX 1024
#define MAINT_SECTIONS_MAX 16 /* sections considered per path */
#define MAINT_KEY_MAX 511

struct section {
    char *name;
    char *text; /* "M\taddr\n" ... */
    size_t len, cap;
    bool catch_all_only;
    unsigned patterns;
};

struct parse_ctx {
    const char *text;
    size_t len;
    struct state_maint_counts counts;
};

static void
be32(unsigned char out[4], uint32_t v)
{
    out[0] = (unsigned char)(v >> 24);
    out[1] = (unsigned char)(v >> 16);
    out[2] = (unsigned char)(v >> 8);
    out[3] = (unsigned char)v;
}

static uint32_t
get_be32(const void *p)
{
    const unsigned char *b = p;

    return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
}

static bool
has_wildcard(const char *s)
{
    return strpbrk(s, "*?[") != NULL;
}

/* Where the address of v[0..n) lies: inside <...>, else the first word. */
static bool
addr_bounds(const char *v, size_t n, const char **ret_b, const char **ret_e)
{
    const char *lt = memchr(v, '<', n), *b = v, *e;

    if (lt != NULL) {
        b = lt + 1;
        e = memchr(b, '>', n - (size_t)(b - v));
        if (e == NULL)
            return false;
    } else {
        while (b < v + n && isspace((unsigned char)*b))
            b++;
        e = b;
        while (e < v + n && !isspace((unsigned char)*e))
            e++;
    }
    *ret_b = b;
    *ret_e = e;
    return true;
}

/* "Full Name <Addr@X>" or "addr@x (comment)" -> "addr@x"; 0 when none. */
static size_t
extract_addr(const char *v, size_t n, char *out, size_t size)
{
    const char *b, *e;
    size_t k = 0;

    if (!addr_bounds(v, n, &b, &e))
        return 0;
    if (memchr(b, '@', (size_t)(e - b)) == NULL || (size_t)(e - b) >= size)
        return 0;
    for (const char *p = b; p < e; p++)
        out[k++] = (char)tolower((unsigned char)*p);
    out[k] = '\0';
    return k;
}

static int
sec_add(struct section *s, char tag, const char *v, size_t n)
{
    if (s->len + n + 3 > MAINT_SECTION_MAX)
        return 0;
    if (s->len + n + 3 > s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 256;
        char *p;

        while (cap < s->len + n + 3)
            cap *= 2;
        p = realloc(s->text, cap);
        if (p == NULL)
            return -ENOMEM;
        s->text = p;
        s->cap = cap;
    }
    s->text[s->len++] = tag;
    s->text[s->len++] = '\t';
    memcpy(s->text + s->len, v, n);
    s->len += n;
    s->text[s->len++] = '\n';
    return 0;
}

static int
put_pattern(MDB_txn *txn, struct state *st, struct parse_ctx *c, const char *pat, size_t n,
            uint32_t id)
{
    unsigned char idb[4];
    MDB_val key, val = {4, idb};
    int rc;

    be32(idb, id);
    if (n == 0 || n > MAINT_KEY_MAX - 4)
        return MDB_SUCCESS;
    if (memchr(pat, '*', n) || memchr(pat, '?', n) || memchr(pat, '[', n)) {
        size_t lit = strcspn(pat, "*?["), dir = 0;
        char vb[MAINT_KEY_MAX];

        /* Keyed by the directory before the first wildcard, so a path only
         * meets the patterns under its own ancestors. */
        for (size_t k = 0; k < lit && k < n; k++)
            if (pat[k] == '/')
                dir = k + 1;
        memcpy(vb, idb, 4);
        memcpy(vb + 4, pat, n);
        key = dir > 0 ? (MDB_val){dir, (void *)(uintptr_t)pat} : (MDB_val){1, (void *)"*"};
        val = (MDB_val){4 + n, vb};
        c->counts.globs++;
        rc = mdb_put(txn, st->tables[STATE_T_MAINT_GLOB], &key, &val, MDB_NODUPDATA);
        return rc == MDB_KEYEXIST ? MDB_SUCCESS : rc;
    }
    key = (MDB_val){n, (void *)(uintptr_t)pat};
    c->counts.patterns++;
    rc = mdb_put(txn, st->tables[STATE_T_MAINT_PAT], &key, &val, MDB_NODUPDATA);
    return rc == MDB_KEYEXIST ? MDB_SUCCESS : rc;
}

/* Store one section; its F: patterns are in s->text as "F\t...". */
static int
put_section(MDB_txn *txn, struct state *st, struct parse_ctx *c, struct section *s)
{
    uint32_t id = (uint32_t)c->counts.sections;
    unsigned char kb[4];
    char *vb;
    size_t nl = s->name ? strlen(s->name) : 0;
    MDB_val key = {4, kb}, val;
    int rc;

    if (s->patterns == 0 || s->catch_all_only)
        return MDB_SUCCESS;
    for (size_t i = 0; i < s->len;) {
        char *e = memchr(s->text + i, '\n', s->len - i);
        size_t n = (size_t)(e - (s->text + i));

        if (s->text[i] == 'F') {
            rc = put_pattern(txn, st, c, s->text + i + 2, n - 2, id);
            if (rc != MDB_SUCCESS)
                return rc;
        } else if (s->text[i] == 'M' || s->text[i] == 'R') {
            MDB_val ak = {n - 2, s->text + i + 2}, av = {0, (void *)""};

            rc = mdb_put(txn, st->tables[STATE_T_MAINT_ADDR], &ak, &av, 0);
            if (rc != MDB_SUCCESS)
                return rc;
            c->counts.addresses++;
        }
        i += n + 1;
    }
    vb = malloc(nl + 1 + s->len);
    if (vb == NULL)
        return ENOMEM;
    memcpy(vb, s->name ? s->name : "", nl);
    vb[nl] = '\0';
    memcpy(vb + nl + 1, s->text, s->len);
    be32(kb, id);
    val = (MDB_val){nl + 1 + s->len, vb};
    rc = mdb_put(txn, st->tables[STATE_T_MAINT_SEC], &key, &val, 0);
    free(vb);
    c->counts.sections++;
    return rc;
}

static void
section_reset(struct section *s)
{
    free(s->name);
    free(s->text);
    memset(s, 0, sizeof(*s));
    s->catch_all_only = true;
}

/* The line at *pos of text[0..len) with its blanks at the end cut, its
 * length into *ret_n; *pos moves past it. After a last '\n' comes one
 * empty line, which ends the last section. */
static const char *
import_next_line(const char *text, size_t len, size_t *pos, size_t *ret_n)
{
    const char *l = text + *pos, *e;
    size_t n = 0;

    if (*pos < len) {
        e = memchr(l, '\n', len - *pos);
        n = e != NULL ? (size_t)(e - l) : len - *pos;
    }
    *pos += n + 1;
    while (n > 0 && (l[n - 1] == '\r' || l[n - 1] == ' ' || l[n - 1] == '\t'))
        n--;
    *ret_n = n;
    return l;
}

/* A tagged line's value v[0..vn) (blanks after the tag skipped) into s. */
static int
section_line(struct section *s, char tag, const char *v, size_t vn)
{
    if (tag == 'F' || tag == 'X') {
        const char *sp = v;

        while (sp < v + vn && !isspace((unsigned char)*sp))
            sp++;
        vn = (size_t)(sp - v);
        if (tag == 'F') {
            s->patterns++;
            if (!(vn == 1 && v[0] == '*') && !(vn == 2 && memcmp(v, "*/", 2) == 0))
                s->catch_all_only = false;
        }
        return sec_add(s, tag, v, vn) < 0 ? ENOMEM : MDB_SUCCESS;
    }
    if (tag == 'M' || tag == 'R' || tag == 'L') {
        char addr[CLASSIFIER_ADDR_MAX];
        size_t an = extract_addr(v, vn, addr, sizeof(addr));

        if (an > 0)
            return sec_add(s, tag, addr, an) < 0 ? ENOMEM : MDB_SUCCESS;
    }
    return MDB_SUCCESS;
}

/* One non-empty line l[0..n) of a section; an LMDB code. */
static int
import_line(struct section *s, const char *l, size_t n)
{
    const char *v;
    size_t vn;

    if (n > MAINT_LINE_MAX)
        return MDB_SUCCESS;
    if (!(n >= 2 && isupper((unsigned char)l[0]) && l[1] == ':')) {
        /* The first untagged line of a run names the section. */
        if (s->name == NULL && s->len == 0 && (s->name = strndup(l, n)) == NULL)
            return ENOMEM;
        return MDB_SUCCESS;
    }
    v = l + 2;
    vn = n - 2;
    while (vn > 0 && isspace((unsigned char)*v)) {
        v++;
        vn--;
    }
    if (vn == 0)
        return MDB_SUCCESS;
    return section_line(s, l[0], v, vn);
}

static int
import_txn(struct state *st, MDB_txn *txn, void *ctx)
{
    static const enum state_table tables[] = {STATE_T_MAINT_PAT, STATE_T_MAINT_GLOB,
                                              STATE_T_MAINT_SEC, STATE_T_MAINT_ADDR};
    struct parse_ctx *c = ctx;
    struct section s = {0};
    size_t i = 0;
    int rc = MDB_SUCCESS;

    memset(&c->counts, 0, sizeof(c->counts));
    for (size_t t = 0; t < sizeof(tables) / sizeof(tables[0]); t++) {
        rc = mdb_drop(txn, st->tables[tables[t]], 0);
        if (rc != MDB_SUCCESS)
            return rc;
    }
    section_reset(&s);
    while (i <= c->len && rc == MDB_SUCCESS) {
        size_t n;
        const char *l = import_next_line(c->text, c->len, &i, &n);

        if (n > 0) {
            rc = import_line(&s, l, n);
            continue;
        }
        rc = put_section(txn, st, c, &s);
        section_reset(&s);
    }
    section_reset(&s);
    free(s.name);
    return rc;
}

int
state_maint_import(struct state *st, const char *text, size_t len, struct state_maint_counts *ret)
{
    struct parse_ctx c = {.text = text, .len = len};
    int r;

    if (st == NULL || (text == NULL && len > 0))
        return -EINVAL;
    if (st->readonly)
        return -EROFS;
    r = state_run(st, false, import_txn, &c);
    if (r == 0 && ret != NULL)
        *ret = c.counts;
    return r;
}

/* Does pattern (an F: or X: value) cover path? */
static bool
pattern_matches(const char *pat, size_t pn, const char *path)
{
    char p[MAINT_PATH_MAX];
    size_t len = strlen(path);

    if (pn == 0 || pn >= sizeof(p))
        return false;
    memcpy(p, pat, pn);
    p[pn] = '\0';
    if (p[pn - 1] == '/') {
        /* "dir/": anything below; with wildcards, any matching ancestor. */
        p[pn - 1] = '\0';
        if (!has_wildcard(p))
            return strncmp(path, pat, pn) == 0;
        for (size_t k = 1; k < len; k++) {
            char pre[MAINT_PATH_MAX];

            if (path[k] != '/' || k >= sizeof(pre))
                continue;
            memcpy(pre, path, k);
            pre[k] = '\0';
            if (fnmatch(p, pre, FNM_PATHNAME) == 0)
                return true;
        }
        return false;
    }
    if (!has_wildcard(p))
        return strcmp(path, p) == 0 || (strncmp(path, p, pn) == 0 && path[pn] == '/');
    return fnmatch(p, path, FNM_PATHNAME) == 0;
}

struct of_ctx {
    const char *path;
    struct classifier_maint *ret;
    size_t max, n;
    uint32_t ids[MAINT_SECTIONS_MAX];
    size_t n_ids;
};

static void
add_id(struct of_ctx *c, uint32_t id)
{
    for (size_t i = 0; i < c->n_ids; i++)
        if (c->ids[i] == id)
            return;
    if (c->n_ids < MAINT_SECTIONS_MAX)
        c->ids[c->n_ids++] = id;
}

static int
collect_pattern(struct state *st, MDB_txn *txn, MDB_cursor *cur, struct of_ctx *c,
                const char *key_text, size_t kn)
{
    MDB_val key = {kn, (void *)(uintptr_t)key_text}, val;
    int rc;

    (void)st;
    (void)txn;
    for (rc = mdb_cursor_get(cur, &key, &val, MDB_SET_KEY); rc == MDB_SUCCESS;
         rc = mdb_cursor_get(cur, &key, &val, MDB_NEXT_DUP))
        if (val.mv_size == 4)
            add_id(c, get_be32(val.mv_data));
    return rc == MDB_NOTFOUND ? MDB_SUCCESS : rc;
}

/* Whether one of a section's X: lines covers path. */
static bool
section_excludes(const char *text, size_t len, const char *path)
{
    for (size_t i = 0; i < len;) {
        const char *l = text + i, *e = memchr(l, '\n', len - i);
        size_t n = e ? (size_t)(e - l) : len - i;

        i += n + 1;
        if (n >= 3 && l[0] == 'X' && pattern_matches(l + 2, n - 2, path))
            return true;
    }
    return false;
}

/* Add addr[0..n) (a list when list) unless it is there or c is full. */
static void
of_add(struct of_ctx *c, const char *addr, size_t n, bool list)
{
    if (c->n >= c->max || n >= CLASSIFIER_ADDR_MAX)
        return;
    for (size_t k = 0; k < c->n; k++)
        if (strlen(c->ret[k].addr) == n && memcmp(c->ret[k].addr, addr, n) == 0)
            return;
    memcpy(c->ret[c->n].addr, addr, n);
    c->ret[c->n].addr[n] = '\0';
    c->ret[c->n].list = list;
    c->n++;
}

/* Add the section's people and lists unless one of its X: covers path. */
static void
section_take(struct of_ctx *c, const char *text, size_t len)
{
    if (section_excludes(text, len, c->path))
        return;
    for (size_t i = 0; i < len;) {
        const char *l = text + i, *e = memchr(l, '\n', len - i);
        size_t n = e ? (size_t)(e - l) : len - i;

        i += n + 1;
        if (n >= 3 && (l[0] == 'M' || l[0] == 'L'))
            of_add(c, l + 2, n - 2, l[0] == 'L');
    }
}

/* The sections of the plain patterns naming path or one of its
 * directories ("dir/" and "dir"); an LMDB code. */
static int
of_patterns(struct state *st, MDB_txn *txn, struct of_ctx *c, size_t len)
{
    MDB_cursor *cur;
    int rc;

    rc = mdb_cursor_open(txn, st->tables[STATE_T_MAINT_PAT], &cur);
    if (rc != MDB_SUCCESS)
        return rc;
    rc = collect_pattern(st, txn, cur, c, c->path, len);
    for (size_t k = 1; k < len && rc == MDB_SUCCESS; k++) {
        if (c->path[k] != '/')
            continue;
        rc = collect_pattern(st, txn, cur, c, c->path, k + 1); /* "dir/" */
        if (rc == MDB_SUCCESS)
            rc = collect_pattern(st, txn, cur, c, c->path, k); /* "dir" */
    }
    mdb_cursor_close(cur);
    return rc;
}

/* The sections of the wildcard patterns kept under path's ancestors (and
 * "*" for those with no directory) that match it; an LMDB code. */
static int
of_globs(struct state *st, MDB_txn *txn, struct of_ctx *c, size_t len)
{
    MDB_cursor *cur;
    MDB_val key, val;
    int rc;

    rc = mdb_cursor_open(txn, st->tables[STATE_T_MAINT_GLOB], &cur);
    if (rc != MDB_SUCCESS)
        return rc;
    for (size_t k = 0; k < len && rc == MDB_SUCCESS; k++) {
        size_t kn = k == 0 ? 1 : k + 1;

        if (k > 0 && c->path[k] != '/')
            continue;
        key = (MDB_val){kn, k == 0 ? (void *)"*" : (void *)(uintptr_t)c->path};
        for (rc = mdb_cursor_get(cur, &key, &val, MDB_SET_KEY); rc == MDB_SUCCESS;
             rc = mdb_cursor_get(cur, &key, &val, MDB_NEXT_DUP))
            if (val.mv_size > 4 &&
                pattern_matches((const char *)val.mv_data + 4, val.mv_size - 4, c->path))
                add_id(c, get_be32(val.mv_data));
        if (rc == MDB_NOTFOUND)
            rc = MDB_SUCCESS;
    }
    mdb_cursor_close(cur);
    return rc;
}

static int
of_txn(struct state *st, MDB_txn *txn, void *ctx)
{
    struct of_ctx *c = ctx;
    size_t len = strlen(c->path);
    MDB_val key, val;
    int rc;

    c->n = 0;
    c->n_ids = 0;
    rc = of_patterns(st, txn, c, len);
    if (rc == MDB_SUCCESS)
        rc = of_globs(st, txn, c, len);
    if (rc != MDB_SUCCESS)
        return rc;

    for (size_t i = 0; i < c->n_ids; i++) {
        unsigned char kb[4];
        const char *p, *nul;

        be32(kb, c->ids[i]);
        key = (MDB_val){4, kb};
        rc = mdb_get(txn, st->tables[STATE_T_MAINT_SEC], &key, &val);
        if (rc == MDB_NOTFOUND)
            continue;
        if (rc != MDB_SUCCESS)
            return rc;
        p = val.mv_data;
        nul = memchr(p, '\0', val.mv_size);
        if (nul != NULL)
            section_take(c, nul + 1, val.mv_size - (size_t)(nul + 1 - p));
    }
    return MDB_SUCCESS;
}

size_t
state_maint_of(struct state *st, const char *path, struct classifier_maint *ret, size_t max)
{
    struct of_ctx c = {.path = path, .ret = ret, .max = max};

    if (st == NULL || path == NULL || ret == NULL || max == 0 || !st->have[STATE_T_MAINT_SEC] ||
        strlen(path) >= MAINT_PATH_MAX)
        return 0;
    if (state_run(st, true, of_txn, &c) < 0)
        return 0;
    return c.n;
}

static int
trusted_txn(struct state *st, MDB_txn *txn, void *ctx)
{
    MDB_val val;

    return mdb_get(txn, st->tables[STATE_T_MAINT_ADDR], ctx, &val);
}

bool
state_maint_trusted(struct state *st, const char *addr)
{
    char buf[CLASSIFIER_ADDR_MAX];
    size_t n;
    MDB_val key;

    if (st == NULL || addr == NULL || !st->have[STATE_T_MAINT_ADDR])
        return false;
    n = strlen(addr);
    if (n == 0 || n >= sizeof(buf))
        return false;
    for (size_t i = 0; i < n; i++)
        buf[i] = (char)tolower((unsigned char)addr[i]);
    key = (MDB_val){n, buf};
    return state_run(st, true, trusted_txn, &key) == 0;
}
