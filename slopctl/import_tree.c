/*
 * import_tree.c - walk a source tree for "slopctl import tree" and store
 * its index.
 *
 * Every path is kept, and every .c, .h, .S and Kconfig* file is read and
 * handed to import_scan.c. The names go into arena-backed pools, which are
 * sorted, cleared of repeats and appended to the state in batches. Every
 * input-driven size is capped: files walked, directory depth, bytes read
 * per file, name length. Single-threaded.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "import_scan.h"
#include "import_tree.h"
#include "state.h"
#include "state_db.h"

#define IMPORT_TREE_MAX_FILES 4000000u
#define IMPORT_TREE_MAX_DEPTH 64
#define IMPORT_TREE_MAX_FILE_BYTES (16u << 20)
#define IMPORT_TREE_BATCH 50000
#define POOL_CHUNK (1u << 20)

/* ---- a pool of names to sort and store ---- */

struct pool {
    char **v;
    size_t n, cap;
    char *chunk; /* current arena chunk; older ones are kept in chunks */
    size_t used, size;
    char **chunks;
    size_t n_chunks;
    char *kinds;
};

static int
pool_grow(struct pool *p)
{
    size_t cap = p->cap ? p->cap * 2 : 4096;
    char **v = realloc(p->v, cap * sizeof(*v));
    char *k;

    if (v == NULL)
        return -ENOMEM;
    p->v = v;
    k = realloc(p->kinds, cap);
    if (k == NULL)
        return -ENOMEM;
    p->kinds = k;
    p->cap = cap;
    return 0;
}

static int
pool_new_chunk(struct pool *p)
{
    char **cs = realloc(p->chunks, (p->n_chunks + 1) * sizeof(*cs));

    if (cs == NULL)
        return -ENOMEM;
    p->chunks = cs;
    p->chunk = malloc(POOL_CHUNK);
    if (p->chunk == NULL)
        return -ENOMEM;
    p->chunks[p->n_chunks++] = p->chunk;
    p->used = 0;
    p->size = POOL_CHUNK;
    return 0;
}

static int
pool_add(struct pool *p, const char *s, size_t n, char kind)
{
    if (n == 0 || n > IMPORT_SCAN_MAX_NAME)
        return 0;
    if (p->n == p->cap && pool_grow(p) < 0)
        return -ENOMEM;
    if ((p->chunk == NULL || p->used + n + 1 > p->size) && pool_new_chunk(p) < 0)
        return -ENOMEM;
    memcpy(p->chunk + p->used, s, n);
    p->chunk[p->used + n] = '\0';
    p->v[p->n] = p->chunk + p->used;
    p->kinds[p->n] = kind;
    p->n++;
    p->used += n + 1;
    return 0;
}

static void
pool_release(struct pool *p)
{
    for (size_t i = 0; i < p->n_chunks; i++)
        free(p->chunks[i]);
    free(p->chunks);
    free(p->v);
    free(p->kinds);
    memset(p, 0, sizeof(*p));
}

struct pool_item {
    const char *s;
    char kind;
};

static int
cmp_item(const void *a, const void *b)
{
    return strcmp(((const struct pool_item *)a)->s, ((const struct pool_item *)b)->s);
}

/* Sort, drop repeats and append to the index in batches; *ret_n distinct. */
static int
pool_store(struct pool *p, struct state *st, enum state_tree_kind kind, size_t *ret_n)
{
    struct pool_item *items;
    struct state_tree_entry *batch;
    size_t n = 0, nb = 0;
    int r = 0;

    items = malloc((p->n ? p->n : 1) * sizeof(*items));
    batch = malloc(IMPORT_TREE_BATCH * sizeof(*batch));
    if (items == NULL || batch == NULL) {
        r = -ENOMEM;
        goto out;
    }
    for (size_t i = 0; i < p->n; i++)
        items[i] = (struct pool_item){p->v[i], p->kinds[i]};
    qsort(items, p->n, sizeof(*items), cmp_item);
    for (size_t i = 0; i < p->n; i++) {
        if (i > 0 && strcmp(items[i].s, items[i - 1].s) == 0)
            continue;
        batch[nb++] = (struct state_tree_entry){items[i].s, items[i].kind};
        n++;
        if (nb == IMPORT_TREE_BATCH) {
            r = state_tree_put(st, kind, batch, nb, true);
            if (r < 0)
                goto out;
            nb = 0;
        }
    }
    r = state_tree_put(st, kind, batch, nb, true);
    *ret_n = n;
out:
    free(items);
    free(batch);
    return r;
}

/* ---- the walk ---- */

struct import_tree {
    struct pool paths, syms, configs;
    struct import_tree_counts counts;
    char path[4096];
    char *buf;
    size_t buf_size;
    bool oom;
};

/* An import_scan_fn: CONFIG_ names and the others go to their pools. */
static void
name_add(void *ctx, const char *name, size_t n, char kind)
{
    struct import_tree *t = ctx;

    if (pool_add(kind == 'c' ? &t->configs : &t->syms, name, n, kind) < 0)
        t->oom = true;
}

static void
path_add(struct import_tree *t, size_t n, char kind)
{
    if (pool_add(&t->paths, t->path, n, kind) < 0)
        t->oom = true;
}

static bool
ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);

    return n >= k && strcmp(s + n - k, suffix) == 0;
}

/* The whole regular file fd into t->buf; its length, 0 for none. */
static size_t
read_whole(struct import_tree *t, int fd)
{
    struct stat sb;
    size_t got = 0;

    if (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode) || sb.st_size <= 0 ||
        (uint64_t)sb.st_size > IMPORT_TREE_MAX_FILE_BYTES)
        return 0;
    if ((size_t)sb.st_size > t->buf_size) {
        char *b = realloc(t->buf, (size_t)sb.st_size);

        if (b == NULL) {
            t->oom = true;
            return 0;
        }
        t->buf = b;
        t->buf_size = (size_t)sb.st_size;
    }
    while (got < (size_t)sb.st_size) {
        ssize_t k = read(fd, t->buf + got, (size_t)sb.st_size - got);

        if (k <= 0)
            break;
        got += (size_t)k;
    }
    return got;
}

/* Read and scan the file name in dirfd when it is one the scanner reads. */
static void
scan_file(struct import_tree *t, int dirfd, const char *name)
{
    bool c_like = ends_with(name, ".c") || ends_with(name, ".h") || ends_with(name, ".S");
    bool kconfig = strncmp(name, "Kconfig", 7) == 0;
    size_t got;
    int fd;

    if (!c_like && !kconfig)
        return;
    fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return;
    got = read_whole(t, fd);
    close(fd);
    if (got == 0)
        return;
    t->counts.scanned_bytes += got;
    if (c_like)
        import_scan_c(t->buf, got, name_add, t);
    else
        import_scan_kconfig(t->buf, got, name_add, t);
}

/* The entry's type, looked up when readdir does not say; DT_UNKNOWN
 * when it cannot be. */
static unsigned char
entry_type(int dirfd, const struct dirent *de)
{
    struct stat sb;

    if (de->d_type != DT_UNKNOWN)
        return de->d_type;
    if (fstatat(dirfd, de->d_name, &sb, AT_SYMLINK_NOFOLLOW) < 0)
        return DT_UNKNOWN;
    return S_ISDIR(sb.st_mode) ? DT_DIR : S_ISREG(sb.st_mode) ? DT_REG : DT_LNK;
}

static bool
entry_skipped(const char *name)
{
    return strcmp(name, ".") == 0 || strcmp(name, "..") == 0 || strcmp(name, ".git") == 0;
}

static int walk(struct import_tree *t, int dirfd, size_t len, unsigned depth);

/* The subdirectory whose path is t->path[0..len): kept, then walked. */
static void
walk_subdir(struct import_tree *t, int dirfd, const char *name, size_t len, unsigned depth)
{
    int sub = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);

    path_add(t, len, 'd');
    t->counts.dirs++;
    if (sub < 0)
        return;
    t->path[len] = '/';
    t->path[len + 1] = '\0';
    walk(t, sub, len + 1, depth + 1);
    close(sub);
}

/* Walk t->path[0..len) (open at dirfd). */
static int
walk(struct import_tree *t, int dirfd, size_t len, unsigned depth)
{
    DIR *d;
    struct dirent *de;
    int fd;

    if (depth > IMPORT_TREE_MAX_DEPTH)
        return 0;
    fd = dup(dirfd);
    if (fd < 0)
        return -errno;
    d = fdopendir(fd);
    if (d == NULL) {
        close(fd);
        return -errno;
    }
    while ((de = readdir(d)) != NULL && !t->oom) {
        size_t nl = strlen(de->d_name);
        unsigned char type;

        if (entry_skipped(de->d_name) || len + nl + 2 >= sizeof(t->path) ||
            t->counts.files >= IMPORT_TREE_MAX_FILES)
            continue;
        type = entry_type(dirfd, de);
        if (type == DT_UNKNOWN)
            continue;
        memcpy(t->path + len, de->d_name, nl + 1);
        if (type == DT_DIR) {
            walk_subdir(t, dirfd, de->d_name, len + nl, depth);
        } else {
            path_add(t, len + nl, 'f');
            t->counts.files++;
            if (type == DT_REG)
                scan_file(t, dirfd, de->d_name);
        }
        t->path[len] = '\0';
    }
    closedir(d);
    return t->oom ? -ENOMEM : 0;
}

int
import_tree_walk(int dirfd, struct import_tree **ret)
{
    struct import_tree *t = calloc(1, sizeof(*t));
    int r;

    if (t == NULL)
        return -ENOMEM;
    r = walk(t, dirfd, 0, 0);
    if (r < 0) {
        import_tree_free(t);
        return r;
    }
    *ret = t;
    return 0;
}

int
import_tree_store(struct import_tree *t, struct state *st, const char *date)
{
    size_t n_paths = 0;
    int r;

    r = state_tree_clear(st);
    if (r == 0)
        r = pool_store(&t->paths, st, STATE_TREE_PATH, &n_paths);
    if (r == 0)
        r = pool_store(&t->syms, st, STATE_TREE_SYMBOL, &t->counts.symbols);
    if (r == 0)
        r = pool_store(&t->configs, st, STATE_TREE_CONFIG, &t->counts.configs);
    if (r == 0)
        r = state_tree_finish(st, date, t->counts.files);
    return r;
}

const struct import_tree_counts *
import_tree_counts(const struct import_tree *t)
{
    return &t->counts;
}

struct import_tree *
import_tree_free(struct import_tree *t)
{
    if (t == NULL)
        return NULL;
    pool_release(&t->paths);
    pool_release(&t->syms);
    pool_release(&t->configs);
    free(t->buf);
    free(t);
    return NULL;
}
