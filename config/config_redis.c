/*
 * config_redis.c - the settings of StateBackend redis that both programs
 * read the same way (see config.h): the options for state_redis_new() and
 * the password file. The daemon attaches and logs (milter/shared_state.c);
 * slopctl attaches and prints (slopctl/backend.c).
 *
 * No state kept: thread-safe.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "file_read.h"
#include "state_redis.h"

void
config_redis_options(const struct config *cfg, struct state_redis_options *ret)
{
    ret->server = cfg->redis_server;
    ret->user = cfg->redis_user;
    ret->prefix = cfg->redis_prefix;
    ret->timeout_ms = cfg->redis_timeout;
}

int
config_redis_password(const char *path, char *buf, size_t size)
{
    char *text = NULL, *nl;
    size_t len, line, n;
    int fd, r;

    buf[0] = '\0';
    if (path == NULL || *path == '\0')
        return 0;
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    /* The first line, as fgets() into size bytes would read it. */
    r = file_read_fd(fd, size - 1, FILE_READ_CUT, &text, &len);
    close(fd);
    if (r < 0)
        return r == -ENOMEM ? r : -EIO;
    nl = memchr(text, '\n', len);
    line = nl != NULL ? (size_t)(nl - text) + 1 : len;
    n = strnlen(text, line);
    if (n + 1 >= size && text[n - 1] != '\n')
        r = -E2BIG;
    memcpy(buf, text, n);
    buf[n] = '\0';
    buf[strcspn(buf, "\r\n")] = '\0';
    free(text);
    return r;
}
