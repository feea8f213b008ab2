/*
 * mailbox.c - find the messages at a path and hand each to a callback.
 *
 * Regular files are mapped read-only (standard input and other streams are
 * read into memory), every file is capped at MAILBOX_MAX_FILE_BYTES, and a
 * message's bytes are borrowed from the mapping, except for mbox messages
 * with ">From " lines to unescape, which get a heap copy freed after the
 * callback. Directory listings are sorted with strcmp() so the order does
 * not depend on the locale. Not thread-safe; a walk keeps no global state.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "file_read.h"
#include "mailbox.h"

struct walker {
    mailbox_fn *fn;
    mailbox_error_fn *err;
    void *ctx;
    bool follow_symlinks; /* MAILBOX_FOLLOW_SYMLINKS */
};

static const char walker_symlink_text[] = "a symbolic link, not followed (--follow-symlinks)";

static void
walker_error(struct walker *w, const char *file, size_t index, int errnum)
{
    char buf[128];
    const char *text;

    switch (errnum) {
    case EFBIG:
        text = "larger than 1 GiB, skipped";
        break;
    case ELOOP:
        text = "directory nesting too deep, skipped";
        break;
    default:
        text = strerror_r(errnum, buf, sizeof(buf));
        break;
    }
    w->err(w->ctx, file, index, text);
}

/*
 * Mail starts with a header field (RFC 5322 2.2: a name of printable
 * ASCII but ':', then ':'). An empty file, a binary or a note has none:
 * scanning it would give a verdict about something that is not mail.
 */
static bool
is_mail(const char *p, size_t len)
{
    size_t n = 0;

    while (n < len && n < MAILBOX_MAX_FIELD_NAME && p[n] > ' ' && p[n] < 127 && p[n] != ':')
        n++;
    while (n > 0 && n < len && (p[n] == ' ' || p[n] == '\t'))
        n++;
    return n > 0 && n < len && p[n] == ':';
}

/* Hands m to the caller, or reports it when it is not mail. */
static int
walker_deliver(struct walker *w, const struct mailbox_msg *m)
{
    if (!is_mail(m->data, m->len)) {
        w->err(w->ctx, m->file, m->index,
               m->len == 0 ? "empty, not a mail message"
                           : "not a mail message (it does not start with a header field)");
        return 0;
    }
    return w->fn(w->ctx, m);
}

static bool
starts_with_from(const char *p, const char *end)
{
    return end - p >= 5 && memcmp(p, "From ", 5) == 0;
}

/* True when the line starting at p comes right after an empty line ("\n"
 * or "\r\n"); start is the first byte that may be looked at. */
static bool
follows_empty_line(const char *start, const char *p)
{
    if (p - start >= 2 && p[-1] == '\n' && p[-2] == '\n')
        return true;
    return p - start >= 3 && p[-1] == '\n' && p[-2] == '\r' && p[-3] == '\n';
}

/* ^>+From : an mboxrd-escaped line, which loses one '>'. */
static bool
is_escaped_from(const char *p, const char *end)
{
    if (p >= end || *p != '>')
        return false;
    while (p < end && *p == '>')
        p++;
    return starts_with_from(p, end);
}

static const char *
next_line(const char *p, const char *end)
{
    const char *nl = memchr(p, '\n', (size_t)(end - p));

    return nl != NULL ? nl + 1 : end;
}

static char *
mbox_unescape(const char *msg, size_t len, size_t *ret_len)
{
    const char *p = msg, *end = msg + len, *eol;
    char *copy, *o;

    copy = malloc(len + 1);
    if (copy == NULL)
        return NULL;
    o = copy;
    while (p < end) {
        eol = next_line(p, end);
        if (is_escaped_from(p, end))
            p++;
        memcpy(o, p, (size_t)(eol - p));
        o += eol - p;
        p = eol;
    }
    *ret_len = (size_t)(o - copy);
    return copy;
}

/* buf starts with "From ". */
static int
walk_mbox(struct walker *w, const char *file, const char *buf, size_t len)
{
    const char *end = buf + len, *p = buf, *msg, *q;
    size_t index = 0, mlen;
    bool escaped;
    char *copy;
    int r = 0;

    while (p < end && r == 0) {
        msg = next_line(p, end);
        escaped = false;
        for (q = msg; q < end; q = next_line(q, end)) {
            if (starts_with_from(q, end) && follows_empty_line(buf, q))
                break;
            if (!escaped && is_escaped_from(q, end))
                escaped = true;
        }
        mlen = (size_t)(q - msg);
        /* The empty line before the next From_ line (or at the end of the
         * file) separates messages; it is not part of the message. */
        if (mlen >= 2 && msg[mlen - 1] == '\n' && msg[mlen - 2] == '\n')
            mlen -= 1;
        else if (mlen >= 3 && msg[mlen - 1] == '\n' && msg[mlen - 2] == '\r' &&
                 msg[mlen - 3] == '\n')
            mlen -= 2;

        struct mailbox_msg m = {.file = file, .index = index, .in_mbox = true};
        copy = NULL;
        if (escaped) {
            copy = mbox_unescape(msg, mlen, &m.len);
            if (copy == NULL) {
                walker_error(w, file, index, ENOMEM);
                goto next;
            }
            m.data = copy;
        } else {
            m.data = msg;
            m.len = mlen;
        }
        r = walker_deliver(w, &m);
        free(copy);
    next:
        index++;
        p = q;
    }
    return r;
}

/* Map a regular file of st's size: *ret_map stays NULL for any other
 * file, an empty one, or one the kernel will not map. 0, or -EFBIG past
 * the cap. */
static int
map_file(int fd, const struct stat *st, void **ret_map, size_t *ret_len)
{
    size_t len;
    void *map;

    *ret_map = NULL;
    *ret_len = 0;
    if (!S_ISREG(st->st_mode) || st->st_size <= 0)
        return 0;
    if ((uintmax_t)st->st_size > MAILBOX_MAX_FILE_BYTES)
        return -EFBIG;
    len = (size_t)st->st_size;
    map = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
    if (map == MAP_FAILED)
        return 0;
    (void)madvise(map, len, MADV_SEQUENTIAL);
    *ret_map = map;
    *ret_len = len;
    return 0;
}

/* nofollow: path must not be a symbolic link (checked by the open
 * itself, so a link swapped in after a look is refused too). */
static int
walk_file(struct walker *w, const char *path, bool nofollow)
{
    bool is_stdin = strcmp(path, "-") == 0;
    const char *data = "";
    void *map = NULL;
    char *heap = NULL;
    size_t len = 0;
    struct stat st;
    int fd, r = 0, e;

    fd = is_stdin ? STDIN_FILENO
                  : open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | (nofollow ? O_NOFOLLOW : 0));
    if (fd < 0 && nofollow && errno == ELOOP) {
        w->err(w->ctx, path, 0, walker_symlink_text);
        return 0;
    }
    if (fd < 0) {
        walker_error(w, path, 0, errno);
        return 0;
    }
    if (fstat(fd, &st) < 0) {
        walker_error(w, path, 0, errno);
        goto out;
    }
    if (S_ISDIR(st.st_mode)) {
        walker_error(w, path, 0, EISDIR);
        goto out;
    }
    e = map_file(fd, &st, &map, &len);
    if (e < 0) {
        walker_error(w, path, 0, -e);
        goto out;
    }
    if (map != NULL)
        data = map;
    /* Pipes, character devices, and files the kernel will not map (some
     * /proc and FUSE files report size 0) are read instead. */
    if (map == NULL) {
        e = file_read_fd(fd, MAILBOX_MAX_FILE_BYTES, 0, &heap, &len);
        if (e < 0) {
            walker_error(w, path, 0, -e);
            goto out;
        }
        data = heap;
    }

    if (starts_with_from(data, data + len)) {
        r = walk_mbox(w, path, data, len);
    } else {
        struct mailbox_msg m = {.file = path, .data = data, .len = len};
        r = walker_deliver(w, &m);
    }
out:
    if (map != NULL)
        munmap(map, len);
    free(heap);
    if (!is_stdin)
        close(fd);
    return r;
}

static int
name_filter(const struct dirent *d)
{
    return d->d_name[0] != '.';
}

static int
name_cmp(const struct dirent **a, const struct dirent **b)
{
    return strcmp((*a)->d_name, (*b)->d_name);
}

static bool
has_suffix(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);

    return n >= m && strcmp(s + n - m, suffix) == 0;
}

static int
path_join(char *buf, size_t size, const char *dir, const char *name)
{
    size_t n = strlen(dir);
    int k;

    k = snprintf(buf, size, "%s%s%s", dir, n > 0 && dir[n - 1] == '/' ? "" : "/", name);
    if (k < 0 || (size_t)k >= size)
        return -ENAMETOOLONG;
    return 0;
}

static bool
is_dir(const char *path, bool follow)
{
    struct stat st;

    return (follow ? stat(path, &st) : lstat(path, &st)) == 0 && S_ISDIR(st.st_mode);
}

/* cur/ and new/ that are links elsewhere make no Maildir unless links are
 * followed: the directory is then walked as any other. */
static bool
is_maildir(const struct walker *w, const char *path)
{
    char sub[PATH_MAX];

    return path_join(sub, sizeof(sub), path, "cur") == 0 && is_dir(sub, w->follow_symlinks) &&
           path_join(sub, sizeof(sub), path, "new") == 0 && is_dir(sub, w->follow_symlinks);
}

static int walk_tree(struct walker *w, const char *path, unsigned depth);

/*
 * One entry found in a directory. Links to files are followed, links to
 * directories are not (a link back up would repeat the tree up to the depth
 * cap). In a Maildir (in_maildir) only files count and every name is mail;
 * links there are not followed unless asked: a Maildir is written by its
 * owner, and slopctl run as root must not read any file on the host
 * through a link in it.
 */
static int
walk_entry(struct walker *w, const char *path, const char *name, unsigned depth, bool in_maildir)
{
    struct stat st;

    if (lstat(path, &st) < 0) {
        walker_error(w, path, 0, errno);
        return 0;
    }
    if (S_ISLNK(st.st_mode) && in_maildir && !w->follow_symlinks) {
        w->err(w->ctx, path, 0, walker_symlink_text);
        return 0;
    }
    if (S_ISLNK(st.st_mode)) {
        if (stat(path, &st) < 0) {
            walker_error(w, path, 0, errno);
            return 0;
        }
        if (S_ISDIR(st.st_mode))
            return 0;
    }
    if (S_ISDIR(st.st_mode))
        return in_maildir ? 0 : walk_tree(w, path, depth);
    if (!S_ISREG(st.st_mode))
        return 0;
    if (!in_maildir && (has_suffix(name, ".md") || has_suffix(name, ".csv")))
        return 0;
    return walk_file(w, path, in_maildir && !w->follow_symlinks);
}

static int
walk_dir(struct walker *w, const char *path, unsigned depth)
{
    struct dirent **ents = NULL;
    char child[PATH_MAX];
    int n, i, r = 0, e;

    n = scandir(path, &ents, name_filter, name_cmp);
    if (n < 0) {
        walker_error(w, path, 0, errno);
        return 0;
    }
    for (i = 0; i < n; i++) {
        if (r == 0) {
            e = path_join(child, sizeof(child), path, ents[i]->d_name);
            if (e < 0)
                walker_error(w, path, 0, -e);
            else
                r = walk_entry(w, child, ents[i]->d_name, depth + 1, false);
        }
        free(ents[i]);
    }
    free(ents);
    return r;
}

struct maildir_list {
    struct dirent **ents;
    int n;
    int next;
};

static void
maildir_list_scan(struct walker *w, const char *path, const char *sub, struct maildir_list *l)
{
    char dir[PATH_MAX];
    struct dirent **ents = NULL;
    int e, n;

    l->ents = NULL;
    l->n = 0;
    l->next = 0;
    e = path_join(dir, sizeof(dir), path, sub);
    if (e < 0) {
        walker_error(w, path, 0, -e);
        return;
    }
    n = scandir(dir, &ents, name_filter, name_cmp);
    if (n < 0) {
        walker_error(w, dir, 0, errno);
        return;
    }
    l->ents = ents;
    l->n = n;
}

/* cur/ and new/ merged by name: Maildir names start with the delivery
 * time, so this is roughly delivery order. */
static int
walk_maildir(struct walker *w, const char *path, unsigned depth)
{
    struct maildir_list lists[2];
    const char *subs[2] = {"cur", "new"};
    char child[PATH_MAX];
    struct maildir_list *l;
    const char *name;
    int r = 0, e, i, k;

    maildir_list_scan(w, path, subs[0], &lists[0]);
    maildir_list_scan(w, path, subs[1], &lists[1]);
    for (;;) {
        struct maildir_list *a = &lists[0], *b = &lists[1];

        if (a->next < a->n && b->next < b->n)
            k = strcmp(a->ents[a->next]->d_name, b->ents[b->next]->d_name) <= 0 ? 0 : 1;
        else if (a->next < a->n)
            k = 0;
        else if (b->next < b->n)
            k = 1;
        else
            break;
        l = &lists[k];
        name = l->ents[l->next]->d_name;
        l->next++;
        if (r != 0)
            continue;
        e = snprintf(child, sizeof(child), "%s%s%s/%s", path,
                     path[0] != '\0' && path[strlen(path) - 1] == '/' ? "" : "/", subs[k], name);
        if (e < 0 || (size_t)e >= sizeof(child))
            walker_error(w, path, 0, ENAMETOOLONG);
        else
            r = walk_entry(w, child, name, depth + 1, true);
    }
    for (k = 0; k < 2; k++) {
        for (i = 0; i < lists[k].n; i++)
            free(lists[k].ents[i]);
        free(lists[k].ents);
    }
    return r;
}

static int
walk_tree(struct walker *w, const char *path, unsigned depth)
{
    if (depth > MAILBOX_MAX_DEPTH) {
        walker_error(w, path, 0, ELOOP);
        return 0;
    }
    if (is_maildir(w, path))
        return walk_maildir(w, path, depth);
    return walk_dir(w, path, depth);
}

int
mailbox_walk(const char *path, unsigned flags, mailbox_fn *fn, mailbox_error_fn *err, void *ctx)
{
    struct walker w = {.fn = fn,
                       .err = err,
                       .ctx = ctx,
                       .follow_symlinks = (flags & MAILBOX_FOLLOW_SYMLINKS) != 0};
    struct stat st;

    if (strcmp(path, "-") == 0)
        return walk_file(&w, path, false);
    if (stat(path, &st) < 0) {
        walker_error(&w, path, 0, errno);
        return 0;
    }
    if (S_ISDIR(st.st_mode))
        return walk_tree(&w, path, 0);
    return walk_file(&w, path, false);
}
