/*
 * state_mark.c - what is known of data.mdb, in small files beside it.
 *
 * state.checked: this data.mdb was found whole by a page walk and has not
 * changed since: its device, inode, size and modification and change
 * times, as stat() gives them. Any write (LMDB's or anyone's) moves the
 * change time, which no one can set back, so a file changed since no
 * longer matches. A clean close does not write it: the closing process
 * cannot vouch for what another process or the disk did meanwhile.
 *
 * state.damaged: this data.mdb (device and inode) was found damaged, and
 * why: by a page walk, or by LMDB's assertion handler just before LMDB
 * aborted the process. It holds until data.mdb is replaced (db recover
 * into a new directory, then the directories swapped).
 *
 * Every file is written atomically (a temporary name, fsync, rename) and
 * read without blocking (a FIFO put there reads as nothing).
 *
 * Threading: no shared state. Never logs.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "state.h"
#include "state_internal.h"

#define MARK_PATH_MAX 4096
#define MARK_READ_MAX 512 /* bytes of a mark read */

int
state_mark_write(const char *dir, const char *name, const char *text)
{
    char path[MARK_PATH_MAX], tmp[MARK_PATH_MAX];
    size_t n = strlen(text);
    int fd, r = 0;

    if (snprintf(path, sizeof(path), "%s/%s", dir, name) >= (int)sizeof(path) ||
        snprintf(tmp, sizeof(tmp), "%s/%s.XXXXXX", dir, name) >= (int)sizeof(tmp))
        return -ENAMETOOLONG;
    /* A name of its own: processes opening the state at once each write. */
    fd = mkostemp(tmp, O_CLOEXEC);
    if (fd < 0)
        return -errno;
    errno = 0;
    /* The mode of LMDB's own files: mkostemp makes 0600. */
    if (fchmod(fd, 0640) < 0 || write(fd, text, n) != (ssize_t)n || fsync(fd) < 0)
        r = errno ? -errno : -EIO;
    if (close(fd) < 0 && r == 0)
        r = -errno;
    if (r == 0 && rename(tmp, path) < 0)
        r = -errno;
    if (r < 0)
        (void)unlink(tmp);
    return r;
}

/* Up to size - 1 bytes of dir/name, NUL-terminated; the count, or -errno. */
static ssize_t
mark_read(const char *dir, const char *name, char *buf, size_t size)
{
    char path[MARK_PATH_MAX];
    struct stat sb;
    ssize_t n;
    int fd;

    if (snprintf(path, sizeof(path), "%s/%s", dir, name) >= (int)sizeof(path))
        return -ENAMETOOLONG;
    fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if (fd < 0)
        return -errno;
    if (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode)) {
        close(fd);
        return -EINVAL;
    }
    n = read(fd, buf, size - 1);
    close(fd);
    if (n < 0)
        return -errno;
    buf[n] = '\0';
    return n;
}

/* The identity of data.mdb as state.checked holds it. */
static void
mark_identity(const struct stat *sb, char *buf, size_t size)
{
    snprintf(buf, size, "%" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRId64 ".%09ld %" PRId64 ".%09ld\n",
             (uint64_t)sb->st_dev, (uint64_t)sb->st_ino, (uint64_t)sb->st_size,
             (int64_t)sb->st_mtim.tv_sec, sb->st_mtim.tv_nsec, (int64_t)sb->st_ctim.tv_sec,
             sb->st_ctim.tv_nsec);
}

static int
mark_stat(const char *dir, struct stat *sb)
{
    char path[MARK_PATH_MAX];

    if (snprintf(path, sizeof(path), "%s/data.mdb", dir) >= (int)sizeof(path))
        return -ENAMETOOLONG;
    return stat(path, sb) < 0 ? -errno : 0;
}

bool
state_mark_checked(const char *dir, const struct stat *sb)
{
    char want[160], got[160];

    mark_identity(sb, want, sizeof(want));
    return mark_read(dir, "state.checked", got, sizeof(got)) > 0 && strcmp(want, got) == 0;
}

int
state_mark_checked_write(const char *dir, const struct stat *sb)
{
    char line[160];

    mark_identity(sb, line, sizeof(line));
    return state_mark_write(dir, "state.checked", line);
}

int
state_mark_damaged_write(const char *dir, const char *reason)
{
    char text[MARK_READ_MAX];
    struct stat sb;
    int r = mark_stat(dir, &sb);

    if (r < 0)
        return r;
    snprintf(text, sizeof(text), "%" PRIu64 " %" PRIu64 "\n%s\n", (uint64_t)sb.st_dev,
             (uint64_t)sb.st_ino, reason);
    return state_mark_write(dir, "state.damaged", text);
}

bool
state_mark_damaged(const char *dir, const struct stat *sb, char *reason, size_t size)
{
    char text[MARK_READ_MAX], *nl, *end;
    unsigned long long dev, ino;

    if (mark_read(dir, "state.damaged", text, sizeof(text)) <= 0)
        return false;
    errno = 0;
    dev = strtoull(text, &end, 10);
    if (errno != 0 || *end != ' ')
        return false;
    ino = strtoull(end + 1, &end, 10);
    if (errno != 0 || *end != '\n' || dev != (uint64_t)sb->st_dev || ino != (uint64_t)sb->st_ino)
        return false;
    nl = strchr(end + 1, '\n');
    if (nl != NULL)
        *nl = '\0';
    snprintf(reason, size, "%s", end + 1);
    return true;
}
