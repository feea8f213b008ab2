/*
 * file_read.c - the capped whole-file reader (see file_read.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "file_read.h"
#include "textbuf.h"

#define FILE_READ_CHUNK 8192 /* bytes asked of read() when the size is unknown */

/* Bytes to ask of the first read(): a regular file's size plus the byte
 * that shows it grew meanwhile, so it takes one call; a chunk for a pipe
 * or device. */
static size_t
file_read_first(int fd, size_t max)
{
    struct stat st;

    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size >= 0)
        return (size_t)st.st_size < max ? (size_t)st.st_size + 1 : max + 1;
    return FILE_READ_CHUNK;
}

int
file_read_fd(int fd, size_t max, unsigned flags, char **ret, size_t *ret_len)
{
    struct textbuf b;
    char *text;
    size_t want, len;
    int r;

    /* One byte over max tells a file that is too long from one that fits. */
    textbuf_init(&b, max + 1);
    want = file_read_first(fd, max);
    for (;;) {
        ssize_t n;

        if (want > max + 1 - b.len)
            want = max + 1 - b.len;
        r = textbuf_reserve(&b, want);
        if (r < 0)
            goto out;
        n = read(fd, b.p + b.len, want);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            r = -errno;
            goto out;
        }
        if (n == 0)
            break;
        b.len += (size_t)n;
        if (b.len > max) {
            if (!(flags & FILE_READ_CUT)) {
                r = -EFBIG;
                goto out;
            }
            b.len = max;
            break;
        }
        want = FILE_READ_CHUNK;
    }
    r = textbuf_reserve(&b, 0);
    if (r < 0)
        goto out;
    b.p[b.len] = '\0';
    text = textbuf_steal(&b, &len);
    if (text == NULL) {
        r = -ENOMEM;
        goto out;
    }
    *ret = text;
    *ret_len = len;
out:
    textbuf_release(&b);
    return r;
}

int
file_read(const char *path, size_t max, unsigned flags, char **ret, size_t *ret_len)
{
    int fd, r;

    fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0)
        return -errno;
    r = file_read_fd(fd, max, flags, ret, ret_len);
    close(fd);
    return r;
}
