/*
 * import_fixes.c - read `git log -p` text for "slopctl import fixes".
 *
 * Each commit's diff gives hunk fingerprints (classifier_diff_fingerprints(),
 * the same function the scan uses); a commit whose message names a bug
 * class (use-after-free, NULL dereference, ...) also gives a (function,
 * bug class) pair for each function its message and diff name. Records
 * are stored in batches. Every input-driven size is capped: bytes per
 * commit message and diff, functions per commit. Single-threaded.
 */
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "classifier.h"
#include "import_fixes.h"
#include "state.h"
#include "state_db.h"

#define IMPORT_FIXES_MAX_NAME 127
#define IMPORT_FIXES_BATCH 50000
#define IMPORT_FIXES_MAX_COMMIT_BYTES (8u << 20)
#define IMPORT_FIXES_MAX_FUNCS 16

struct fix_rec {
    uint64_t fp;
    const char *bug_class;
    char commit[CLASSIFIER_COMMIT_MAX];
    char subject[CLASSIFIER_SUBJECT_MAX];
    char function[IMPORT_FIXES_MAX_NAME + 1];
};

struct import_fixes {
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
    char funcs[IMPORT_FIXES_MAX_FUNCS][IMPORT_FIXES_MAX_NAME + 1];
    size_t n_funcs;
};

static int
fixes_flush(struct import_fixes *fi)
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
fixes_rec(struct import_fixes *fi)
{
    struct fix_rec *f;

    if (fi->n == IMPORT_FIXES_BATCH && fi->err == 0)
        fi->err = fixes_flush(fi);
    if (fi->err != 0 || fi->n == IMPORT_FIXES_BATCH)
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
    struct import_fixes *fi = ctx;
    struct fix_rec *f = fixes_rec(fi);

    if (f == NULL)
        return;
    f->fp = fp;
    fi->hunks++;
}

static void
on_func(void *ctx, const char *name)
{
    struct import_fixes *fi = ctx;

    for (size_t i = 0; i < fi->n_funcs; i++)
        if (strcmp(fi->funcs[i], name) == 0)
            return;
    if (fi->n_funcs < IMPORT_FIXES_MAX_FUNCS && strlen(name) <= IMPORT_FIXES_MAX_NAME)
        strcpy(fi->funcs[fi->n_funcs++], name);
}

static void
fixes_commit(struct import_fixes *fi)
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
        classifier_diff_functions(fi->msg, fi->msg_len, IMPORT_FIXES_MAX_FUNCS, on_func, fi);
        classifier_diff_functions(fi->diff, fi->diff_len, IMPORT_FIXES_MAX_FUNCS, on_func, fi);
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
    if (*len + n + 1 > IMPORT_FIXES_MAX_COMMIT_BYTES)
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
fixes_line(struct import_fixes *fi, const char *l, size_t n)
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

int
import_fixes_new(struct state *st, struct import_fixes **ret)
{
    struct import_fixes *fi = calloc(1, sizeof(*fi));

    if (fi == NULL)
        return -ENOMEM;
    fi->st = st;
    fi->recs = malloc(IMPORT_FIXES_BATCH * sizeof(*fi->recs));
    fi->batch = malloc(IMPORT_FIXES_BATCH * sizeof(*fi->batch));
    fi->msg = malloc(IMPORT_FIXES_MAX_COMMIT_BYTES);
    fi->diff = malloc(IMPORT_FIXES_MAX_COMMIT_BYTES);
    if (fi->recs == NULL || fi->batch == NULL || fi->msg == NULL || fi->diff == NULL) {
        import_fixes_free(fi);
        return -ENOMEM;
    }
    *ret = fi;
    return 0;
}

int
import_fixes_read(struct import_fixes *fi, FILE *in, struct import_fixes_counts *ret_counts)
{
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;

    while ((n = getline(&line, &cap, in)) > 0 && fi->err == 0) {
        if (line[n - 1] == '\n')
            n--;
        if (n > 0 && line[n - 1] == '\r')
            n--;
        fixes_line(fi, line, (size_t)n);
    }
    free(line);
    fixes_commit(fi);
    if (fi->err == 0)
        fi->err = fixes_flush(fi);
    if (fi->err == 0)
        fi->err = state_fixes_finish(fi->st, fi->commits);
    *ret_counts = (struct import_fixes_counts){fi->commits, fi->hunks, fi->functions};
    return fi->err;
}

struct import_fixes *
import_fixes_free(struct import_fixes *fi)
{
    if (fi == NULL)
        return NULL;
    free(fi->recs);
    free(fi->batch);
    free(fi->msg);
    free(fi->diff);
    free(fi);
    return NULL;
}
