/*
 * state_check.c - is data.mdb whole, before LMDB maps it?
 *
 * LMDB maps the data file and trusts its meta pages: a file cut short
 * under a valid meta page faults (SIGBUS) on the first page past its end,
 * and an empty file is silently made into a new environment. So the two
 * meta pages are read here with pread, never through a map, and the file
 * must hold every page the newest valid one counts. The layout read is
 * LMDB 0.9's (mdb.c: MDB_page header, then MDB_meta): a meta page has
 * flag P_META, magic 0xBEEFC0DE, data version 1, the page size in the
 * free database's md_pad, then mm_last_pg and mm_txnid.
 *
 * state.generation beside the data file holds the newest transaction id
 * seen at the last open or close, written atomically (temporary file,
 * fsync, rename), so that a data file gone missing or empty where state
 * existed is told apart from a first start. state.damaged (state_mark.c)
 * keeps a data file found damaged so. The pages themselves are walked by
 * state_check_pages() (state_walk.c).
 *
 * Threading: no shared state; safe anywhere. Never logs.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "state.h"
#include "state_internal.h"

#define CHECK_PAGE_HDR 16   /* PAGEHDRSZ: pgno, pad, flags, lower/upper */
#define CHECK_PAGE_FLAGS 10 /* offset of mp_flags in the page header */
#define CHECK_P_META 0x08   /* P_META */
#define CHECK_MAGIC 0xBEEFC0DEu
#define CHECK_DATA_VERSION 1u /* MDB_DATA_VERSION without MDB_VL32 */
#define CHECK_OFF_PSIZE 24    /* mm_dbs[FREE_DBI].md_pad */
#define CHECK_OFF_LAST_PG 120 /* mm_last_pg */
#define CHECK_OFF_TXNID 128   /* mm_txnid */
#define CHECK_META_READ (CHECK_PAGE_HDR + CHECK_OFF_TXNID + 8)
#define CHECK_PSIZE_MIN 512
#define CHECK_PSIZE_MAX 65536
#define CHECK_LAST_PG_MAX ((uint64_t)1 << 40) /* far past any map STATE_MAP_MAX allows */
#define CHECK_GEN_MAX 32                      /* bytes of state.generation read */
#define CHECK_PATH_MAX 4096

struct check_meta {
    uint32_t psize;
    uint64_t last_pg;
    uint64_t txnid;
};

static void check_reason(struct state_check *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void
check_reason(struct state_check *c, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(c->reason, sizeof(c->reason), fmt, ap);
    va_end(ap);
}

static uint32_t
check_u32(const unsigned char *p)
{
    uint32_t v;

    memcpy(&v, p, sizeof(v));
    return v;
}

static uint64_t
check_u64(const unsigned char *p)
{
    uint64_t v;

    memcpy(&v, p, sizeof(v));
    return v;
}

/* Read meta page i (at offset off); a description of what is wrong in
 * why, or 0 and *ret. */
static int
check_meta_read(int fd, unsigned i, off_t off, struct check_meta *ret, char *why, size_t size)
{
    unsigned char buf[CHECK_META_READ];
    const unsigned char *m = buf + CHECK_PAGE_HDR;
    ssize_t n;
    uint16_t flags;

    n = pread(fd, buf, sizeof(buf), off);
    if (n < 0)
        return -errno;
    if ((size_t)n < sizeof(buf)) {
        snprintf(why, size, "meta page %u cut short", i);
        return -EUCLEAN;
    }
    memcpy(&flags, buf + CHECK_PAGE_FLAGS, sizeof(flags));
    if (!(flags & CHECK_P_META) || check_u32(m) != CHECK_MAGIC) {
        snprintf(why, size, "meta page %u has no LMDB magic", i);
        return -EUCLEAN;
    }
    if (check_u32(m + 4) != CHECK_DATA_VERSION) {
        snprintf(why, size, "meta page %u has data version %" PRIu32, i, check_u32(m + 4));
        return -EUCLEAN;
    }
    ret->psize = check_u32(m + CHECK_OFF_PSIZE);
    ret->last_pg = check_u64(m + CHECK_OFF_LAST_PG);
    ret->txnid = check_u64(m + CHECK_OFF_TXNID);
    if (ret->psize < CHECK_PSIZE_MIN || ret->psize > CHECK_PSIZE_MAX ||
        (ret->psize & (ret->psize - 1)) != 0) {
        snprintf(why, size, "meta page %u has page size %" PRIu32, i, ret->psize);
        return -EUCLEAN;
    }
    if (ret->last_pg < 1 || ret->last_pg > CHECK_LAST_PG_MAX) {
        snprintf(why, size, "meta page %u has last page %" PRIu64, i, ret->last_pg);
        return -EUCLEAN;
    }
    return 0;
}

static bool
check_regular(int fd)
{
    struct stat sb;

    return fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode);
}

/* What a file that is not a regular one is, for the reason. */
static const char *
check_kind(mode_t mode)
{
    if (S_ISDIR(mode))
        return "a directory";
    if (S_ISFIFO(mode))
        return "a FIFO";
    if (S_ISSOCK(mode))
        return "a socket";
    if (S_ISCHR(mode) || S_ISBLK(mode))
        return "a device";
    return "not a regular file";
}

/* dir's lock.mdb, when present, must be a regular file too: LMDB opens and
 * maps it. 0, or -EUCLEAN with the reason. */
static int
check_lock_file(const char *dir, struct state_check *c)
{
    char path[CHECK_PATH_MAX];
    struct stat sb;

    if (snprintf(path, sizeof(path), "%s/lock.mdb", dir) >= (int)sizeof(path))
        return -ENAMETOOLONG;
    if (stat(path, &sb) < 0 || S_ISREG(sb.st_mode))
        return 0;
    check_reason(c, "lock.mdb is %s, not a regular file", check_kind(sb.st_mode));
    return -EUCLEAN;
}

/* The generation recorded in dir, or 0 when none (or unreadable). */
static uint64_t
check_generation_read(const char *dir)
{
    char path[CHECK_PATH_MAX], buf[CHECK_GEN_MAX + 1], *end;
    unsigned long long v;
    ssize_t n;
    int fd;

    if (snprintf(path, sizeof(path), "%s/state.generation", dir) >= (int)sizeof(path))
        return 0;
    /* O_NONBLOCK: a FIFO put there must not hang the start. */
    fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if (fd < 0)
        return 0;
    if (!check_regular(fd)) {
        close(fd);
        return 0;
    }
    n = read(fd, buf, CHECK_GEN_MAX);
    close(fd);
    if (n <= 0)
        return 0;
    buf[n] = '\0';
    errno = 0;
    v = strtoull(buf, &end, 10);
    if (errno != 0 || end == buf || (*end != '\n' && *end != '\0'))
        return 0;
    return v;
}

/* data.mdb could not be opened (err): a first start, or damage where
 * state existed. */
static int
check_open_failed(struct state_check *c, int err)
{
    if (err == -ENOENT && c->generation > 0) {
        check_reason(c, "missing, where state of generation %" PRIu64 " existed", c->generation);
        return -EUCLEAN;
    }
    if (err == -ENOENT)
        return 0; /* a first start */
    check_reason(c, "cannot open: %s", strerror(-err));
    return err;
}

/* The open data.mdb fd: a regular file beside a regular lock.mdb, not
 * found damaged before, not empty. */
static int
check_data_file(int fd, const char *dir, struct state_check *c)
{
    struct stat sb;
    int r;

    if (fstat(fd, &sb) < 0) {
        r = -errno;
        check_reason(c, "cannot stat: %s", strerror(-r));
        return r;
    }
    if (!S_ISREG(sb.st_mode)) {
        check_reason(c, "%s, not a regular file", check_kind(sb.st_mode));
        return -EUCLEAN;
    }
    r = check_lock_file(dir, c);
    if (r < 0)
        return r;
    /* Found damaged before (a page walk, or LMDB's assertion): it stays
     * so until the file is replaced. */
    if (state_mark_damaged(dir, &sb, c->reason, sizeof(c->reason)))
        return -EUCLEAN;
    c->file_bytes = (uint64_t)sb.st_size;
    /* LMDB writes both meta pages when it creates the file, so an empty
     * data.mdb was emptied: it would start over without a word. */
    if (sb.st_size == 0) {
        if (c->generation > 0)
            check_reason(c, "empty file, where state of generation %" PRIu64 " existed",
                         c->generation);
        else
            check_reason(c, "empty file");
        return -EUCLEAN;
    }
    return 0;
}

/* Both meta pages valid and agreeing on the page size, into meta. */
static int
check_metas(int fd, struct state_check *c, struct check_meta meta[2])
{
    char why[2][96];
    int r, ok = 0;

    r = check_meta_read(fd, 0, 0, &meta[0], why[0], sizeof(why[0]));
    if (r < 0 && r != -EUCLEAN) {
        check_reason(c, "cannot read: %s", strerror(-r));
        return r;
    }
    if (r == 0) {
        ok |= 1;
        /* Meta page 1 sits one page further, at the size page 0 gives. */
        r = check_meta_read(fd, 1, (off_t)meta[0].psize, &meta[1], why[1], sizeof(why[1]));
        if (r < 0 && r != -EUCLEAN) {
            check_reason(c, "cannot read: %s", strerror(-r));
            return r;
        }
        if (r == 0 && meta[1].psize == meta[0].psize)
            ok |= 2;
        else if (r == 0)
            snprintf(why[1], sizeof(why[1]), "meta pages disagree on the page size");
    }
    /* LMDB 0.9 refuses an environment when either meta page is bad. */
    if (ok != 3) {
        check_reason(c, "%s", (ok & 1) ? why[1] : why[0]);
        return -EUCLEAN;
    }
    return 0;
}

/* The file holds every page the newer of the meta pages counts. */
static int
check_size(int fd, struct state_check *c, const struct check_meta meta[2])
{
    const struct check_meta *m = &meta[meta[1].txnid > meta[0].txnid ? 1 : 0];
    struct stat sb;
    int r;

    /* The size again, after the meta pages: a writer extends the file
     * before it writes the meta page that counts the new pages. */
    if (fstat(fd, &sb) < 0) {
        r = -errno;
        check_reason(c, "cannot stat: %s", strerror(-r));
        return r;
    }
    c->file_bytes = (uint64_t)sb.st_size;
    c->txnid = m->txnid;
    c->page_size = m->psize;
    c->need_bytes = (m->last_pg + 1) * m->psize;
    if (c->file_bytes < c->need_bytes) {
        check_reason(c,
                     "%" PRIu64 " bytes, but transaction %" PRIu64 " uses %" PRIu64
                     " pages of %" PRIu32 " bytes (%" PRIu64 ")",
                     c->file_bytes, c->txnid, m->last_pg + 1, c->page_size, c->need_bytes);
        return -EUCLEAN;
    }
    return 0;
}

int
state_check_file(const char *dir, struct state_check *ret)
{
    struct state_check c = {0};
    struct check_meta meta[2] = {0};
    char path[CHECK_PATH_MAX];
    int r, fd;

    if (dir == NULL || *dir == '\0' || ret == NULL)
        return -EINVAL;
    if (snprintf(path, sizeof(path), "%s/data.mdb", dir) >= (int)sizeof(path))
        return -ENAMETOOLONG;
    c.generation = check_generation_read(dir);

    /* O_NONBLOCK: opening a FIFO for reading would wait for a writer,
     * forever and without a word; it is refused below instead. */
    fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
        r = check_open_failed(&c, -errno);
        goto out;
    }
    c.present = true;
    r = check_data_file(fd, dir, &c);
    if (r == 0)
        r = check_metas(fd, &c, meta);
    if (r == 0)
        r = check_size(fd, &c, meta);
out:
    if (fd >= 0)
        close(fd);
    *ret = c;
    return r;
}

int
state_generation_write(const char *dir, uint64_t txnid)
{
    char line[CHECK_GEN_MAX];

    snprintf(line, sizeof(line), "%" PRIu64 "\n", txnid);
    return state_mark_write(dir, "state.generation", line);
}

int
state_check_owner(const char *dir, uid_t uid, char *ret_path, size_t size, uid_t *ret_uid,
                  gid_t *ret_gid)
{
    static const char *const names[] = {
        "", "data.mdb", "lock.mdb", "state.generation", "state.checked", "state.damaged"};
    char path[4096];
    struct stat sb;

    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        if (snprintf(path, sizeof(path), "%s%s%s", dir, *names[i] ? "/" : "", names[i]) >=
            (int)sizeof(path))
            return -ENAMETOOLONG;
        if (stat(path, &sb) != 0) {
            if (errno == ENOENT)
                continue;
            return -errno;
        }
        if (sb.st_uid == uid)
            continue;
        snprintf(ret_path, size, "%s", path);
        *ret_uid = sb.st_uid;
        *ret_gid = sb.st_gid;
        return 1;
    }
    return 0;
}
