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

/* -c CONFIG: the backend and the Redis settings of the daemon's file. */
static int
opt_config(const char *path)
{
    struct config_error err;
    struct config *cfg = NULL;
    int r = config_load(path, NULL, &cfg, &err);

    if (r < 0) {
        fprintf(stderr, "slopctl: %s\n", err.text);
        return EX_CONFIG;
    }
    be.redis = cfg->state_backend == CONFIG_BACKEND_REDIS;
    config_redis_options(cfg, &be.o);
    be.password_file = cfg->redis_password_file;
    /* A second -c replaced every pointer into the first. */
    config_free(be_cfg);
    be_cfg = cfg;
    return 0;
}

static int
opt_state_backend(const char *val)
{
    if (strcmp(val, "redis") != 0 && strcmp(val, "lmdb") != 0) {
        fprintf(stderr, "slopctl: --state-backend: lmdb or redis, not '%s'\n", val);
        return EX_USAGE;
    }
    be.redis = strcmp(val, "redis") == 0;
    return 0;
}

static int
opt_redis_server(const char *val)
{
    be.o.server = val;
    return 0;
}

static int
opt_redis_prefix(const char *val)
{
    be.o.prefix = val;
    return 0;
}

static int
opt_redis_user(const char *val)
{
    be.o.user = val;
    return 0;
}

static int
opt_redis_password_file(const char *val)
{
    be.password_file = val;
    return 0;
}

static int
opt_redis_timeout(const char *val)
{
    char *end;
    unsigned long v = strtoul(val, &end, 10);

    if (*val == '\0' || *end != '\0' || v < 10 || v > 60000) {
        fprintf(stderr, "slopctl: --redis-timeout: 10 to 60000 ms\n");
        return EX_USAGE;
    }
    be.o.timeout_ms = (unsigned)v;
    return 0;
}

/* The options before the command, each with a value; the last one given
 * wins, -c included. */
static const struct {
    const char *name;
    int (*set)(const char *val); /* 0 or a sysexits code, with its message */
} backend_options[] = {
    {"-c", opt_config},
    {"--state-backend", opt_state_backend},
    {"--redis-server", opt_redis_server},
    {"--redis-prefix", opt_redis_prefix},
    {"--redis-user", opt_redis_user},
    {"--redis-password-file", opt_redis_password_file},
    {"--redis-timeout", opt_redis_timeout},
};

uint32_t
backend_learn_minimum(void)
{
    return be_cfg != NULL ? be_cfg->learn_minimum : STATE_LEARN_MINIMUM_DEFAULT;
}

int
backend_parse(int *argc, char ***argv)
{
    size_t n = sizeof(backend_options) / sizeof(backend_options[0]);
    int i = 1;

    while (i + 1 < *argc) {
        size_t k = 0;
        int r;

        while (k < n && strcmp((*argv)[i], backend_options[k].name) != 0)
            k++;
        if (k == n)
            break;
        r = backend_options[k].set((*argv)[i + 1]);
        if (r != 0)
            return r;
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
