/*
 * config_redis.c - the settings of StateBackend redis that both programs
 * read the same way (see config.h): the options for state_redis_new() and
 * the password file. The daemon attaches and logs (milter/shared_state.c);
 * slopctl attaches and prints (slopctl/backend.c).
 *
 * No state kept: thread-safe.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "config.h"
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
    FILE *f;
    size_t n;
    int r = 0;

    buf[0] = '\0';
    if (path == NULL || *path == '\0')
        return 0;
    f = fopen(path, "re");
    if (f == NULL)
        return -errno;
    if (fgets(buf, (int)size, f) == NULL)
        r = ferror(f) ? -EIO : 0;
    fclose(f);
    n = strlen(buf);
    if (n + 1 >= size && buf[n - 1] != '\n')
        r = -E2BIG;
    buf[strcspn(buf, "\r\n")] = '\0';
    return r;
}
