/*
 * shared_timer.c - per-message cost of the shared state: for N generated
 * messages, the calls the daemon makes on the shared tables for one
 * patch or report (a duplicate look-up of 4 fingerprints and a simhash,
 * the sender's daily count, the record of the message, and a reply claim
 * for its sender), first with the LMDB tables of a fresh state in DIR
 * (written without a sync per commit, as the daemon does), then with the
 * same state's shared tables in the Redis server given.
 * Prints one line per backend:
 *   backend=B messages=N ms_per_msg=X
 * Usage: shared-timer DIR REDIS_SERVER [N]. Single-threaded benchmark
 * program; exits 1 when a call fails, 69 when Redis cannot be reached.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "state.h"
#include "state_db.h"
#include "state_redis.h"

#define SHARED_TIMER_MAX 1000000

static double
now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static uint64_t
mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    return x;
}

/* One message's calls; 0 or -errno. */
static int
one_message(struct state *st, unsigned i, time_t now)
{
    struct state_lookup_options lo = {.duplicate_days = 30, .now = now};
    struct classifier_result res;
    struct classifier_seen seen;
    struct state_lookup sl;
    enum state_claim claim;
    uint64_t fps[4];
    char id[64], from[64];
    int r;

    for (unsigned k = 0; k < 4; k++)
        fps[k] = mix((uint64_t)i * 4 + k + 1);
    snprintf(id, sizeof(id), "<bench-%u@example.test>", i);
    snprintf(from, sizeof(from), "sender%u@example.test", i % 100);
    r = state_seen_find(st, fps, 4, mix(i + 7), id, now - 30 * 86400, 0, &seen);
    if (r < 0 && r != -ENOENT)
        return r;
    (void)state_sender_count(st, from, now);
    memset(&res, 0, sizeof(res));
    res.fingerprints = fps;
    res.n_fingerprints = 4;
    res.simhash = mix(i + 7);
    res.message_id = id;
    res.from = from;
    res.count_sender = true;
    state_lookup_init(&sl, st, &lo);
    r = state_lookup_record(&sl, &res);
    if (r < 0)
        return r;
    return state_reply_claim(st, from, now, 7 * 86400, 0, &claim);
}

static int
run(const char *name, struct state *st, unsigned n)
{
    time_t now = time(NULL);
    double t0 = now_ms();

    for (unsigned i = 0; i < n; i++) {
        int r = one_message(st, i, now);

        if (r < 0) {
            fprintf(stderr, "shared-timer: %s: message %u: %s\n", name, i, strerror(-r));
            return 1;
        }
    }
    printf("backend=%s messages=%u ms_per_msg=%.4f\n", name, n, (now_ms() - t0) / n);
    return 0;
}

int
main(int argc, char **argv)
{
    struct state_redis_options o = {.prefix = "bench:", .timeout_ms = 2000};
    struct state_redis *rd = NULL;
    struct state *st = NULL;
    unsigned long n = 20000;
    int r, ret = 1;

    if (argc < 3 || argc > 4) {
        fprintf(stderr, "usage: shared-timer DIR REDIS_SERVER [N]\n");
        return 64;
    }
    if (argc == 4)
        n = strtoul(argv[3], NULL, 10);
    if (n == 0 || n > SHARED_TIMER_MAX)
        n = 20000;
    r = state_open(argv[1], STATE_NOSYNC, 0, &st);
    if (r < 0) {
        fprintf(stderr, "shared-timer: cannot open '%s': %s\n", argv[1], strerror(-r));
        return 73;
    }
    if (run("lmdb", st, (unsigned)n) != 0)
        goto out;
    o.server = argv[2];
    if (state_redis_new(&o, &rd) < 0 || state_redis_ping(rd) < 0) {
        fprintf(stderr, "shared-timer: Redis '%s' unreachable\n", argv[2]);
        state_redis_free(rd);
        ret = 69;
        goto out;
    }
    (void)state_attach_redis(st, rd);
    ret = run("redis", st, (unsigned)n);
out:
    state_close(st);
    return ret;
}
