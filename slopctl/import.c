/*
 * import.c - "slopctl import": the offline indices scan --state reads.
 *
 * "import tree DIR" walks a source tree (skipping .git), scans every
 * .c/.h/.S file with a small hand-written scanner for top-level function
 * definitions and declarations, #define names, EXPORT_SYMBOL() arguments
 * and the names SYSCALL_DEFINEn() generates, and Kconfig files for
 * "config FOO"; every name is sorted and appended to the index in batches.
 * "import fixes" reads `git log -p` text and stores each commit's hunk
 * fingerprints (classifier_diff_fingerprints(), the same function the scan
 * uses) and its (function, bug class) pairs. "import maintainers" hands a
 * MAINTAINERS file to state_maint_import().
 *
 * Every input-driven size is capped (files walked, bytes read per file,
 * names kept, bytes per commit). Single-threaded.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sysexits.h>
#include <time.h>
#include <unistd.h>

#include "classifier.h"
#include "backend.h"
#include "import.h"
#include "state.h"
#include "state_db.h"
#include "state_learn.h"
#include "statedir.h"

#define IMPORT_MAX_FILES 4000000u
#define IMPORT_MAX_DEPTH 64
#define IMPORT_MAX_FILE_BYTES (16u << 20)
#define IMPORT_MAX_NAME 127
#define IMPORT_BATCH 50000
#define IMPORT_MAX_COMMIT_BYTES (8u << 20)
#define IMPORT_MAX_FUNCS_PER_COMMIT 16
#define IMPORT_MAX_MAINTAINERS_BYTES (64u << 20)

/* ---- small helpers ---- */

static void import_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void
import_err(const char *fmt, ...)
{
    va_list ap;

    fputs("slopctl: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

static double
now_seconds(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int
open_state(const char *dir, bool rdonly, struct state **ret)
{
    return statedir_open(dir, rdonly ? STATE_READONLY : 0, ret);
}

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

#define POOL_CHUNK (1u << 20)

static int
pool_add(struct pool *p, const char *s, size_t n, char kind)
{
    if (n == 0 || n > IMPORT_MAX_NAME)
        return 0;
    if (p->n == p->cap) {
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
    }
    if (p->chunk == NULL || p->used + n + 1 > p->size) {
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
    }
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
    batch = malloc(IMPORT_BATCH * sizeof(*batch));
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
        if (nb == IMPORT_BATCH) {
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

/* ---- the source scanner ---- */

struct tree_scan {
    struct pool paths, syms, configs;
    char path[4096];
    size_t files, dirs, scanned_bytes;
    char *buf;
    size_t buf_size;
    bool oom;
};

static bool
ident_start(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static bool
ident_char(char c)
{
    return ident_start(c) || (c >= '0' && c <= '9');
}

static void
sym_add(struct tree_scan *ts, const char *s, size_t n, char kind)
{
    if (pool_add(&ts->syms, s, n, kind) < 0)
        ts->oom = true;
}

static void
sym_add_prefixed(struct tree_scan *ts, const char *prefix, const char *s, size_t n, char kind)
{
    char buf[IMPORT_MAX_NAME + 1];
    size_t pn = strlen(prefix);

    if (pn + n > IMPORT_MAX_NAME)
        return;
    memcpy(buf, prefix, pn);
    memcpy(buf + pn, s, n);
    sym_add(ts, buf, pn + n, kind);
}

static bool
word_is(const char *s, size_t n, const char *w)
{
    return strlen(w) == n && memcmp(s, w, n) == 0;
}

static bool
word_starts(const char *s, size_t n, const char *w)
{
    size_t k = strlen(w);

    return n >= k && memcmp(s, w, k) == 0;
}

/* Macros whose first argument names a symbol the tree defines. */
static void
special_macro(struct tree_scan *ts, const char *m, size_t mn, const char *arg, size_t an)
{
    if (an == 0)
        return;
    if (word_starts(m, mn, "EXPORT_SYMBOL") || word_starts(m, mn, "EXPORT_PER_CPU_SYMBOL")) {
        sym_add(ts, arg, an, 'e');
    } else if (word_starts(m, mn, "SYSCALL_DEFINE")) {
        sym_add_prefixed(ts, "sys_", arg, an, 's');
        sym_add_prefixed(ts, "__do_sys_", arg, an, 's');
        sym_add_prefixed(ts, "__se_sys_", arg, an, 's');
    } else if (word_starts(m, mn, "COMPAT_SYSCALL_DEFINE")) {
        sym_add_prefixed(ts, "compat_sys_", arg, an, 's');
        sym_add_prefixed(ts, "__do_compat_sys_", arg, an, 's');
    } else if (word_starts(m, mn, "BPF_CALL_") || word_starts(m, mn, "SYM_FUNC_START") ||
               word_starts(m, mn, "SYM_CODE_START") || word_starts(m, mn, "SYM_TYPED_FUNC_START") ||
               word_is(m, mn, "ENTRY") || word_is(m, mn, "GLOBAL") ||
               word_is(m, mn, "SYM_INNER_LABEL") || word_is(m, mn, "SYM_DATA_START")) {
        sym_add(ts, arg, an, 'f');
    }
}

static bool
is_special(const char *m, size_t mn)
{
    return word_starts(m, mn, "EXPORT_") || word_starts(m, mn, "SYSCALL_DEFINE") ||
           word_starts(m, mn, "COMPAT_SYSCALL_DEFINE") || word_starts(m, mn, "BPF_CALL_") ||
           word_starts(m, mn, "SYM_") || word_is(m, mn, "ENTRY") || word_is(m, mn, "GLOBAL");
}

/*
 * One pass over a C or assembler file: comments, strings and preprocessor
 * lines are skipped (a #define's name is kept); at brace and paren depth 0
 * an identifier that follows an identifier or '*' and is followed by '('
 * is a function being defined or declared. Both branches of an #ifdef are
 * read, so a brace in column 0 resets the depth.
 */
static void
scan_c(struct tree_scan *ts, const char *s, size_t n)
{
    size_t i = 0;
    int braces = 0, parens = 0;
    char prev = 0; /* 'i' identifier, '*' star, 'o' anything else */
    bool line_start = true;

    while (i < n) {
        char c = s[i];

        if (c == '\n') {
            line_start = true;
            i++;
            continue;
        }
        if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
            i++;
            continue;
        }
        if (c == '/' && i + 1 < n && s[i + 1] == '*') {
            const char *e = memmem(s + i + 2, n - i - 2, "*/", 2);

            i = e ? (size_t)(e - s) + 2 : n;
            continue;
        }
        if (c == '/' && i + 1 < n && s[i + 1] == '/') {
            const char *e = memchr(s + i, '\n', n - i);

            i = e ? (size_t)(e - s) : n;
            continue;
        }
        if (c == '#' && line_start) {
            size_t j = i + 1, b;

            while (j < n && (s[j] == ' ' || s[j] == '\t'))
                j++;
            if (n - j > 6 && memcmp(s + j, "define", 6) == 0 &&
                (s[j + 6] == ' ' || s[j + 6] == '\t')) {
                j += 6;
                while (j < n && (s[j] == ' ' || s[j] == '\t'))
                    j++;
                b = j;
                while (j < n && ident_char(s[j]))
                    j++;
                if (j > b && ident_start(s[b]))
                    sym_add(ts, s + b, j - b, 'm');
            }
            /* The directive runs to an unescaped newline. */
            while (j < n && !(s[j] == '\n' && s[j - 1] != '\\'))
                j++;
            i = j;
            continue;
        }
        line_start = false;
        if (c == '"' || c == '\'') {
            size_t j = i + 1;

            while (j < n && s[j] != c && s[j] != '\n')
                j += s[j] == '\\' ? 2 : 1;
            i = j + 1;
            prev = 'o';
            continue;
        }
        if (ident_start(c)) {
            size_t b = i, j;

            while (i < n && ident_char(s[i]))
                i++;
            if (braces == 0 && parens == 0) {
                j = i;
                while (j < n && (s[j] == ' ' || s[j] == '\t' || s[j] == '\n'))
                    j++;
                if (j < n && s[j] == '(') {
                    if (is_special(s + b, i - b)) {
                        size_t a;

                        j++;
                        while (j < n && (s[j] == ' ' || s[j] == '\t'))
                            j++;
                        a = j;
                        while (j < n && ident_char(s[j]))
                            j++;
                        special_macro(ts, s + b, i - b, s + a, j - a);
                    } else if (prev == 'i' || prev == '*') {
                        sym_add(ts, s + b, i - b, 'f');
                    }
                }
            }
            prev = 'i';
            continue;
        }
        if (c == '{')
            braces++;
        else if (c == '}' && braces > 0)
            braces--;
        /* Kernel style puts a function's braces in column 0; resynchronise
         * there, so #ifdef branches that each open a brace cannot leave
         * the rest of the file looking nested. */
        if ((c == '{' || c == '}') && (i == 0 || s[i - 1] == '\n')) {
            braces = c == '{' ? 1 : 0;
            parens = 0;
        } else if (c == '(')
            parens++;
        else if (c == ')' && parens > 0)
            parens--;
        /* A ';' at file level ends any declaration a stray paren broke. */
        if (c == ';' && braces == 0)
            parens = 0;
        prev = c == '*' ? '*' : 'o';
        i++;
    }
}

static void
scan_kconfig(struct tree_scan *ts, const char *s, size_t n)
{
    size_t i = 0;

    while (i < n) {
        const char *l = s + i, *e = memchr(l, '\n', n - i);
        size_t len = e ? (size_t)(e - l) : n - i, k = 0, b;

        i += len + 1;
        while (k < len && (l[k] == ' ' || l[k] == '\t'))
            k++;
        if (len - k > 7 && memcmp(l + k, "config", 6) == 0 && (l[k + 6] == ' ' || l[k + 6] == '\t'))
            k += 7;
        else if (len - k > 11 && memcmp(l + k, "menuconfig", 10) == 0 &&
                 (l[k + 10] == ' ' || l[k + 10] == '\t'))
            k += 11;
        else
            continue;
        while (k < len && (l[k] == ' ' || l[k] == '\t'))
            k++;
        b = k;
        while (k < len && ident_char(l[k]))
            k++;
        if (k > b) {
            char buf[IMPORT_MAX_NAME + 1];

            if (k - b + 7 > IMPORT_MAX_NAME)
                continue;
            memcpy(buf, "CONFIG_", 7);
            memcpy(buf + 7, l + b, k - b);
            if (pool_add(&ts->configs, buf, k - b + 7, 'c') < 0)
                ts->oom = true;
        }
    }
}

static bool
ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);

    return n >= k && strcmp(s + n - k, suffix) == 0;
}

/* Read and scan the file at ts->path (relative name at rel). */
static void
scan_file(struct tree_scan *ts, int dirfd, const char *name)
{
    bool c_like = ends_with(name, ".c") || ends_with(name, ".h") || ends_with(name, ".S");
    bool kconfig = strncmp(name, "Kconfig", 7) == 0;
    struct stat sb;
    size_t got = 0;
    int fd;

    if (!c_like && !kconfig)
        return;
    fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return;
    if (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode) || sb.st_size <= 0 ||
        (uint64_t)sb.st_size > IMPORT_MAX_FILE_BYTES) {
        close(fd);
        return;
    }
    if ((size_t)sb.st_size > ts->buf_size) {
        char *b = realloc(ts->buf, (size_t)sb.st_size);

        if (b == NULL) {
            ts->oom = true;
            close(fd);
            return;
        }
        ts->buf = b;
        ts->buf_size = (size_t)sb.st_size;
    }
    while (got < (size_t)sb.st_size) {
        ssize_t k = read(fd, ts->buf + got, (size_t)sb.st_size - got);

        if (k <= 0)
            break;
        got += (size_t)k;
    }
    close(fd);
    ts->scanned_bytes += got;
    if (c_like)
        scan_c(ts, ts->buf, got);
    else
        scan_kconfig(ts, ts->buf, got);
}

/* Walk ts->path[0..len) (relative to the root fd dirfd). */
static int
walk(struct tree_scan *ts, int dirfd, size_t len, unsigned depth)
{
    DIR *d;
    struct dirent *de;
    int fd;

    if (depth > IMPORT_MAX_DEPTH)
        return 0;
    fd = dup(dirfd);
    if (fd < 0)
        return -errno;
    d = fdopendir(fd);
    if (d == NULL) {
        close(fd);
        return -errno;
    }
    while ((de = readdir(d)) != NULL && !ts->oom) {
        const char *name = de->d_name;
        size_t nl = strlen(name);
        unsigned char type = de->d_type;

        if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0 || strcmp(name, ".git") == 0)
            continue;
        if (len + nl + 2 >= sizeof(ts->path) || ts->files >= IMPORT_MAX_FILES)
            continue;
        if (type == DT_UNKNOWN) {
            struct stat sb;

            if (fstatat(dirfd, name, &sb, AT_SYMLINK_NOFOLLOW) < 0)
                continue;
            type = S_ISDIR(sb.st_mode) ? DT_DIR : S_ISREG(sb.st_mode) ? DT_REG : DT_LNK;
        }
        memcpy(ts->path + len, name, nl + 1);
        if (type == DT_DIR) {
            int sub = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);

            if (pool_add(&ts->paths, ts->path, len + nl, 'd') < 0)
                ts->oom = true;
            ts->dirs++;
            if (sub < 0)
                continue;
            ts->path[len + nl] = '/';
            ts->path[len + nl + 1] = '\0';
            walk(ts, sub, len + nl + 1, depth + 1);
            close(sub);
        } else {
            if (pool_add(&ts->paths, ts->path, len + nl, 'f') < 0)
                ts->oom = true;
            ts->files++;
            if (type == DT_REG)
                scan_file(ts, dirfd, name);
        }
        ts->path[len] = '\0';
    }
    closedir(d);
    return ts->oom ? -ENOMEM : 0;
}

/* The date of the tree's last commit when it is a git checkout, else today. */
static void
tree_date(const char *dir, char *buf, size_t size)
{
    time_t t = time(NULL);
    struct tm tm;
    int pfd[2];
    pid_t pid;

    buf[0] = '\0';
    if (pipe(pfd) == 0) {
        pid = fork();
        if (pid == 0) {
            int null = open("/dev/null", O_WRONLY);

            dup2(pfd[1], STDOUT_FILENO);
            if (null >= 0)
                dup2(null, STDERR_FILENO);
            close(pfd[0]);
            execlp("git", "git", "-C", dir, "log", "-1", "--format=%cs", (char *)NULL);
            _exit(127);
        }
        close(pfd[1]);
        if (pid > 0) {
            ssize_t k = read(pfd[0], buf, size - 1);
            int status;

            buf[k > 0 ? k : 0] = '\0';
            buf[strcspn(buf, "\r\n")] = '\0';
            waitpid(pid, &status, 0);
            if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || strlen(buf) != 10)
                buf[0] = '\0';
        }
        close(pfd[0]);
    }
    if (buf[0] == '\0' && gmtime_r(&t, &tm) != NULL)
        strftime(buf, size, "%Y-%m-%d", &tm);
}

static int
import_tree(const char *state_dir, const char *dir, const char *date_opt)
{
    struct tree_scan ts = {0};
    struct state *st = NULL;
    size_t n_paths = 0, n_syms = 0, n_configs = 0;
    char date[32], buf[128];
    double t0 = now_seconds(), t1;
    int fd, r, ret = EX_SOFTWARE;

    fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) {
        import_err("cannot open tree '%s': %s", dir, strerror_r(errno, buf, sizeof(buf)));
        return EX_NOINPUT;
    }
    if (date_opt != NULL)
        snprintf(date, sizeof(date), "%s", date_opt);
    else
        tree_date(dir, date, sizeof(date));
    r = walk(&ts, fd, 0, 0);
    close(fd);
    if (r < 0) {
        import_err("cannot walk '%s': %s", dir, strerror_r(-r, buf, sizeof(buf)));
        goto out;
    }
    t1 = now_seconds();

    ret = open_state(state_dir, false, &st);
    if (ret != 0)
        goto out;
    ret = EX_IOERR;
    r = state_tree_clear(st);
    if (r == 0)
        r = pool_store(&ts.paths, st, STATE_TREE_PATH, &n_paths);
    if (r == 0)
        r = pool_store(&ts.syms, st, STATE_TREE_SYMBOL, &n_syms);
    if (r == 0)
        r = pool_store(&ts.configs, st, STATE_TREE_CONFIG, &n_configs);
    if (r == 0)
        r = state_tree_finish(st, date, ts.files);
    if (r < 0) {
        import_err("cannot store the tree index in '%s': %s", state_dir,
                   strerror_r(-r, buf, sizeof(buf)));
        goto out;
    }
    printf("indexed %zu files, %zu directories, %zu symbols, %zu CONFIG_ symbols from '%s' "
           "(%.1f MiB scanned) in %.1fs (walk %.1fs, store %.1fs): indexed tree of %s\n",
           ts.files, ts.dirs, n_syms, n_configs, dir, (double)ts.scanned_bytes / 1048576.0,
           now_seconds() - t0, t1 - t0, now_seconds() - t1, date);
    (void)n_paths;
    ret = 0;
out:
    state_close(st);
    pool_release(&ts.paths);
    pool_release(&ts.syms);
    pool_release(&ts.configs);
    free(ts.buf);
    return ret;
}

/* ---- git log -p ---- */

struct fix_rec {
    uint64_t fp;
    const char *bug_class;
    char commit[CLASSIFIER_COMMIT_MAX];
    char subject[CLASSIFIER_SUBJECT_MAX];
    char function[IMPORT_MAX_NAME + 1];
};

struct fixes_import {
    struct state *st;
    struct fix_rec *recs;
    struct state_fix *batch;
    size_t n;
    uint64_t commits, hunks, functions;
    int err;
    /* the commit being read */
    char id[CLASSIFIER_COMMIT_MAX];
    char subject[CLASSIFIER_SUBJECT_MAX];
    char *msg, *diff;
    size_t msg_len, diff_len;
    enum { FIX_NONE, FIX_HEADERS, FIX_MSG, FIX_DIFF } where;
    /* per-commit scratch for the function callback */
    char funcs[IMPORT_MAX_FUNCS_PER_COMMIT][IMPORT_MAX_NAME + 1];
    size_t n_funcs;
};

static int
fixes_flush(struct fixes_import *fi)
{
    int r;

    for (size_t i = 0; i < fi->n; i++) {
        const struct fix_rec *f = &fi->recs[i];

        /* fixes_rec() zeroed recs[0..n): the analyzer loses n's bound. */
        fi->batch[i] = (struct state_fix){
            .hunk_fp = f->fp,
            // NOLINTNEXTLINE(clang-analyzer-core.uninitialized.Branch)
            .function = f->function[0] ? f->function : NULL,
            .bug_class = f->bug_class,
            .commit = f->commit,
            .subject = f->subject,
        };
    }
    r = state_fixes_put(fi->st, fi->batch, fi->n);
    fi->n = 0;
    return r;
}

static struct fix_rec *
fixes_rec(struct fixes_import *fi)
{
    struct fix_rec *f;

    if (fi->n == IMPORT_BATCH && fi->err == 0)
        fi->err = fixes_flush(fi);
    if (fi->err != 0 || fi->n == IMPORT_BATCH)
        return NULL;
    f = &fi->recs[fi->n++];
    memset(f, 0, sizeof(*f));
    memcpy(f->commit, fi->id, sizeof(f->commit));
    memcpy(f->subject, fi->subject, sizeof(f->subject));
    return f;
}

static void
on_fp(void *ctx, uint64_t fp)
{
    struct fixes_import *fi = ctx;
    struct fix_rec *f = fixes_rec(fi);

    if (f == NULL)
        return;
    f->fp = fp;
    fi->hunks++;
}

static void
on_func(void *ctx, const char *name)
{
    struct fixes_import *fi = ctx;

    for (size_t i = 0; i < fi->n_funcs; i++)
        if (strcmp(fi->funcs[i], name) == 0)
            return;
    if (fi->n_funcs < IMPORT_MAX_FUNCS_PER_COMMIT && strlen(name) <= IMPORT_MAX_NAME)
        strcpy(fi->funcs[fi->n_funcs++], name);
}

static void
fixes_commit(struct fixes_import *fi)
{
    unsigned classes;

    if (fi->id[0] == '\0')
        return;
    fi->commits++;
    if (fi->diff_len > 0 && classifier_diff_fingerprints(fi->diff, fi->diff_len, on_fp, fi) < 0 &&
        fi->err == 0)
        fi->err = -ENOMEM;
    classes = classifier_bug_classes(fi->msg, fi->msg_len);
    if (classes != 0) {
        fi->n_funcs = 0;
        classifier_diff_functions(fi->msg, fi->msg_len, IMPORT_MAX_FUNCS_PER_COMMIT, on_func, fi);
        classifier_diff_functions(fi->diff, fi->diff_len, IMPORT_MAX_FUNCS_PER_COMMIT, on_func, fi);
        for (size_t i = 0; i < fi->n_funcs; i++) {
            for (unsigned bit = 0; classifier_bug_class_name(bit) != NULL; bit++) {
                struct fix_rec *f;

                if (!((classes >> bit) & 1) || (f = fixes_rec(fi)) == NULL)
                    continue;
                strcpy(f->function, fi->funcs[i]);
                f->bug_class = classifier_bug_class_name(bit);
                fi->functions++;
            }
        }
    }
    fi->id[0] = '\0';
    fi->subject[0] = '\0';
    fi->msg_len = fi->diff_len = 0;
}

static void
buf_append(char *buf, size_t *len, const char *s, size_t n)
{
    if (*len + n + 1 > IMPORT_MAX_COMMIT_BYTES)
        return;
    memcpy(buf + *len, s, n);
    *len += n;
    buf[*len] = '\0';
}

static bool
is_commit_line(const char *l, size_t n)
{
    size_t k = 7;

    if (n < 14 || memcmp(l, "commit ", 7) != 0)
        return false;
    while (k < n && isxdigit((unsigned char)l[k]))
        k++;
    return k - 7 >= 7 && (k == n || l[k] == ' ');
}

static void
fixes_line(struct fixes_import *fi, const char *l, size_t n)
{
    if (is_commit_line(l, n)) {
        size_t k = 7;

        fixes_commit(fi);
        while (k < n && isxdigit((unsigned char)l[k]) && k - 7 < sizeof(fi->id) - 1)
            k++;
        memcpy(fi->id, l + 7, k - 7);
        fi->id[k - 7] = '\0';
        fi->where = FIX_HEADERS;
        return;
    }
    switch (fi->where) {
    case FIX_NONE:
        return;
    case FIX_HEADERS:
        if (n == 0)
            fi->where = FIX_MSG;
        return;
    case FIX_MSG:
        if (n >= 4 && memcmp(l, "    ", 4) == 0) {
            if (fi->subject[0] == '\0' && n > 4) {
                size_t k = n - 4 < sizeof(fi->subject) - 1 ? n - 4 : sizeof(fi->subject) - 1;

                memcpy(fi->subject, l + 4, k);
                fi->subject[k] = '\0';
            }
            buf_append(fi->msg, &fi->msg_len, l + 4, n - 4);
            buf_append(fi->msg, &fi->msg_len, "\n", 1);
            return;
        }
        if (n == 0) {
            buf_append(fi->msg, &fi->msg_len, "\n", 1);
            return;
        }
        fi->where = FIX_DIFF;
        /* fall through */
    case FIX_DIFF:
        buf_append(fi->diff, &fi->diff_len, l, n);
        buf_append(fi->diff, &fi->diff_len, "\n", 1);
        return;
    }
}

static int
import_fixes(const char *state_dir, const char *file, const char *repo, const char *since)
{
    struct fixes_import fi = {0};
    FILE *in = NULL;
    pid_t pid = -1;
    char *line = NULL, buf[128];
    size_t cap = 0;
    ssize_t n;
    double t0 = now_seconds();
    int ret, r;

    ret = open_state(state_dir, false, &fi.st);
    if (ret != 0)
        return ret;
    ret = EX_SOFTWARE;
    fi.recs = malloc(IMPORT_BATCH * sizeof(*fi.recs));
    fi.batch = malloc(IMPORT_BATCH * sizeof(*fi.batch));
    fi.msg = malloc(IMPORT_MAX_COMMIT_BYTES);
    fi.diff = malloc(IMPORT_MAX_COMMIT_BYTES);
    if (fi.recs == NULL || fi.batch == NULL || fi.msg == NULL || fi.diff == NULL) {
        import_err("out of memory");
        goto out;
    }
    if (repo != NULL) {
        char since_arg[128];
        int pfd[2];

        snprintf(since_arg, sizeof(since_arg), "--since=%s", since ? since : "");
        if (pipe(pfd) < 0 || (pid = fork()) < 0) {
            import_err("cannot run git: %s", strerror_r(errno, buf, sizeof(buf)));
            ret = EX_OSERR;
            goto out;
        }
        if (pid == 0) {
            dup2(pfd[1], STDOUT_FILENO);
            close(pfd[0]);
            close(pfd[1]);
            if (since != NULL)
                execlp("git", "git", "-C", repo, "-c", "core.quotepath=off", "log", "-p",
                       "--no-merges", "--no-color", "--no-ext-diff", "--no-renames",
                       "--format=medium", since_arg, (char *)NULL);
            else
                execlp("git", "git", "-C", repo, "-c", "core.quotepath=off", "log", "-p",
                       "--no-merges", "--no-color", "--no-ext-diff", "--no-renames",
                       "--format=medium", (char *)NULL);
            _exit(127);
        }
        close(pfd[1]);
        in = fdopen(pfd[0], "r");
    } else if (strcmp(file, "-") == 0) {
        in = stdin;
    } else {
        in = fopen(file, "r");
    }
    if (in == NULL) {
        import_err("cannot read '%s': %s", repo ? repo : file, strerror_r(errno, buf, sizeof(buf)));
        ret = EX_NOINPUT;
        goto out;
    }
    while ((n = getline(&line, &cap, in)) > 0 && fi.err == 0) {
        if (line[n - 1] == '\n')
            n--;
        if (n > 0 && line[n - 1] == '\r')
            n--;
        fixes_line(&fi, line, (size_t)n);
    }
    fixes_commit(&fi);
    if (fi.err == 0)
        fi.err = fixes_flush(&fi);
    if (fi.err == 0)
        fi.err = state_fixes_finish(fi.st, fi.commits);
    if (pid > 0) {
        int status;

        fclose(in);
        in = NULL;
        waitpid(pid, &status, 0);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            import_err("git log in '%s' failed", repo);
            ret = EX_DATAERR;
            goto out;
        }
    }
    if (fi.err != 0) {
        r = fi.err;
        import_err("cannot store fixes in '%s': %s", state_dir, strerror_r(-r, buf, sizeof(buf)));
        ret = EX_IOERR;
        goto out;
    }
    printf("imported %llu commits, %llu hunk fingerprints, %llu function fixes in %.1fs\n",
           (unsigned long long)fi.commits, (unsigned long long)fi.hunks,
           (unsigned long long)fi.functions, now_seconds() - t0);
    ret = 0;
out:
    if (in != NULL && in != stdin)
        fclose(in);
    if (pid > 0 && in != NULL)
        waitpid(pid, NULL, 0);
    free(line);
    free(fi.recs);
    free(fi.batch);
    free(fi.msg);
    free(fi.diff);
    state_close(fi.st);
    return ret;
}

static int
import_maintainers(const char *state_dir, const char *file)
{
    struct state_maint_counts counts;
    struct state *st = NULL;
    char *text = NULL, buf[128];
    size_t len = 0;
    FILE *f;
    int ret, r;

    f = strcmp(file, "-") == 0 ? stdin : fopen(file, "r");
    if (f == NULL) {
        import_err("cannot read '%s': %s", file, strerror_r(errno, buf, sizeof(buf)));
        return EX_NOINPUT;
    }
    text = malloc(IMPORT_MAX_MAINTAINERS_BYTES);
    if (text == NULL) {
        if (f != stdin)
            fclose(f);
        return EX_OSERR;
    }
    len = fread(text, 1, IMPORT_MAX_MAINTAINERS_BYTES, f);
    if (f != stdin)
        fclose(f);
    ret = open_state(state_dir, false, &st);
    if (ret != 0)
        goto out;
    r = state_maint_import(st, text, len, &counts);
    if (r < 0) {
        import_err("cannot store MAINTAINERS in '%s': %s", state_dir,
                   strerror_r(-r, buf, sizeof(buf)));
        ret = EX_IOERR;
        goto out;
    }
    printf("imported %llu sections, %llu file patterns, %llu wildcard patterns, %llu addresses\n",
           (unsigned long long)counts.sections, (unsigned long long)counts.patterns,
           (unsigned long long)counts.globs, (unsigned long long)counts.addresses);
    ret = 0;
out:
    state_close(st);
    free(text);
    return ret;
}

static const char import_usage[] =
    "usage: slopctl import tree [--state DIR] [--date YYYY-MM-DD] SOURCE_DIR\n"
    "       slopctl import fixes [--state DIR] (FILE | - | --git REPO [--since DATE])\n"
    "       slopctl import maintainers [--state DIR] FILE\n";

int
import_cmd(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"state", required_argument, NULL, 's'}, {"date", required_argument, NULL, 'd'},
        {"git", required_argument, NULL, 'g'},   {"since", required_argument, NULL, 'S'},
        {"help", no_argument, NULL, 'h'},        {NULL, 0, NULL, 0},
    };
    const char *state_dir = NULL, *date = NULL, *repo = NULL, *since = NULL, *what;
    int opt;

    if (argc < 2) {
        fputs(import_usage, stderr);
        return EX_USAGE;
    }
    what = argv[1];
    optind = 2;
    while ((opt = getopt_long(argc, argv, "s:h", longopts, NULL)) != -1) {
        switch (opt) {
        case 's':
            state_dir = optarg;
            break;
        case 'd':
            date = optarg;
            break;
        case 'g':
            repo = optarg;
            break;
        case 'S':
            since = optarg;
            break;
        case 'h':
            fputs(import_usage, stdout);
            return 0;
        default:
            fputs(import_usage, stderr);
            return EX_USAGE;
        }
    }
    state_dir = statedir_resolve(state_dir);
    if (strcmp(what, "tree") == 0 && optind == argc - 1)
        return import_tree(state_dir, argv[optind], date);
    if (strcmp(what, "fixes") == 0 && repo != NULL && optind == argc)
        return import_fixes(state_dir, NULL, repo, since);
    if (strcmp(what, "fixes") == 0 && repo == NULL && optind == argc - 1)
        return import_fixes(state_dir, argv[optind], NULL, NULL);
    if (strcmp(what, "maintainers") == 0 && optind == argc - 1)
        return import_maintainers(state_dir, argv[optind]);
    fputs(import_usage, stderr);
    return EX_USAGE;
}
