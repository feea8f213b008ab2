/*
 * backend.c - slopctl's choice of state backend (see backend.h): the
 * command-line options win over what -c CONFIG says; without either, the
 * shared tables are the LMDB ones in the state directory.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>

#include "backend.h"
#include "config.h"
#include "state.h"
#include "state_db.h"
#include "state_redis.h"

/* Without -c: RedisServer and RedisPrefix as the daemon has them, but a
 * command may wait longer for Redis (2 s) than a message (RedisTimeout). */
static struct {
    bool redis;
    struct state_redis_options o; /* without the password */
    const char *password_file;
} be = {.o = {.server = "inet:6379@127.0.0.1", .prefix = "slop:", .timeout_ms = 2000}};

static struct config *be_cfg; /* -c: owns the strings be points into */

static int
load_config(const char *path)
{
    struct config_error err;
    int r = config_load(path, NULL, &be_cfg, &err);

    if (r < 0) {
        fprintf(stderr, "slopctl: %s\n", err.text);
        return EX_CONFIG;
    }
    be.redis = be_cfg->state_backend == CONFIG_BACKEND_REDIS;
    config_redis_options(be_cfg, &be.o);
    be.password_file = be_cfg->redis_password_file;
    return 0;
}

uint32_t
backend_learn_minimum(void)
{
    return be_cfg != NULL ? be_cfg->learn_minimum : STATE_LEARN_MINIMUM_DEFAULT;
}

int
backend_parse(int *argc, char ***argv)
{
    static const char *const with_value[] = {
        "-c",           "--state-backend",       "--redis-server", "--redis-prefix",
        "--redis-user", "--redis-password-file", "--redis-timeout"};
    int i = 1;

    while (i + 1 < *argc) {
        const char *opt = (*argv)[i], *val = (*argv)[i + 1];
        size_t k;

        for (k = 0; k < sizeof(with_value) / sizeof(with_value[0]); k++)
            if (strcmp(opt, with_value[k]) == 0)
                break;
        if (k == sizeof(with_value) / sizeof(with_value[0]))
            break;
        if (k == 0) {
            int r = load_config(val);

            if (r != 0)
                return r;
        } else if (k == 1) {
            if (strcmp(val, "redis") != 0 && strcmp(val, "lmdb") != 0) {
                fprintf(stderr, "slopctl: --state-backend: lmdb or redis, not '%s'\n", val);
                return EX_USAGE;
            }
            be.redis = strcmp(val, "redis") == 0;
        } else if (k == 2) {
            be.o.server = val;
        } else if (k == 3) {
            be.o.prefix = val;
        } else if (k == 4) {
            be.o.user = val;
        } else if (k == 5) {
            be.password_file = val;
        } else {
            char *end;
            unsigned long v = strtoul(val, &end, 10);

            if (*val == '\0' || *end != '\0' || v < 10 || v > 60000) {
                fprintf(stderr, "slopctl: --redis-timeout: 10 to 60000 ms\n");
                return EX_USAGE;
            }
            be.o.timeout_ms = (unsigned)v;
        }
        i += 2;
    }
    /* Shift the command and its arguments down to argv[1]. */
    if (i > 1) {
        memmove(*argv + 1, *argv + i, (size_t)(*argc - i + 1) * sizeof(**argv));
        *argc -= i - 1;
    }
    return 0;
}

bool
backend_is_redis(void)
{
    return be.redis;
}

int
backend_attach(struct state *st)
{
    struct state_redis_options o = be.o;
    char password[CONFIG_REDIS_PASSWORD_MAX], buf[128];
    struct state_redis *r = NULL;
    int e;

    if (!be.redis || st == NULL)
        return 0;
    e = config_redis_password(be.password_file, password, sizeof(password));
    if (e < 0) {
        fprintf(stderr, "slopctl: cannot read the Redis password file '%s': %s\n", be.password_file,
                strerror_r(-e, buf, sizeof(buf)));
        return EX_NOINPUT;
    }
    o.password = password;
    e = state_redis_new(&o, &r);
    explicit_bzero(password, sizeof(password));
    if (e < 0) {
        fprintf(stderr, "slopctl: bad Redis server '%s' or prefix '%s'\n", be.o.server,
                be.o.prefix);
        return EX_USAGE;
    }
    e = state_redis_ping(r);
    if (e < 0) {
        fprintf(stderr, "slopctl: Redis '%s': %s\n", be.o.server, strerror_r(-e, buf, sizeof(buf)));
        state_redis_free(r);
        return EX_UNAVAILABLE;
    }
    (void)state_attach_redis(st, r);
    return 0;
}

static void
print_kind(void *ctx, const char *kind, uint64_t n)
{
    (void)ctx;
    printf("  %-14s %10llu keys\n", kind, (unsigned long long)n);
}

int
backend_stats(struct state *st)
{
    char buf[128];
    int e;

    if (!be.redis)
        return 0;
    printf("shared state in Redis %s, prefix '%s' (the LMDB tables above hold what stays "
           "local):\n",
           be.o.server, be.o.prefix);
    e = state_redis_stats(state_redis_of(st), print_kind, NULL);
    if (e < 0) {
        fprintf(stderr, "slopctl: Redis '%s': %s\n", be.o.server, strerror_r(-e, buf, sizeof(buf)));
        return EX_UNAVAILABLE;
    }
    return 0;
}
