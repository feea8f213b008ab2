/*
 * learn_cache_timer.c - what the learned counts' per-process copy costs
 * (state_learn_cache.c): the one-time build over a state's learn_token
 * table, its memory, and a look-up of 512 tokens from the copy against
 * one from LMDB. With -n N it first fills DIR with a synthetic model of
 * about N tokens (messages of 512 random tokens, alternately slop and
 * genuine). Run under callgrind with
 * --toggle-collect=state_learn_cache_build for the build's instructions.
 *
 * Usage: learn-cache-timer [-n TOKENS] [-r ROUNDS] STATE_DIR
 * Prints one line of key=value pairs.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "corpus.h"
#include "state.h"
#include "state_learn.h"

#define MSG_TOKENS STATE_LEARN_MAX_TOKENS

static double
now_ms(void)
{
    return (double)bench_now_ns() / 1e6;
}

static uint64_t
rng_next(uint64_t *s)
{
    /* splitmix64: even 64-bit tokens, as FNV hashes are. */
    uint64_t z = (*s += UINT64_C(0x9e3779b97f4a7c15));

    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

static int
cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

    return x < y ? -1 : x > y;
}

static int
fill(struct state *st, uint64_t tokens)
{
    uint64_t tok[MSG_TOKENS], seed = 1;
    uint64_t msgs = (tokens + MSG_TOKENS - 1) / MSG_TOKENS;

    for (uint64_t k = 0; k < msgs; k++) {
        struct state_learn_msg m = {.tokens = tok, .n = MSG_TOKENS};
        int r;

        for (size_t i = 0; i < MSG_TOKENS; i++)
            tok[i] = rng_next(&seed);
        qsort(tok, MSG_TOKENS, sizeof(tok[0]), cmp_u64);
        r = state_learn_add(st, &m, k % 2 ? STATE_LEARN_GENUINE : STATE_LEARN_SLOP, time(NULL),
                            NULL);
        if (r < 0)
            return r;
    }
    return state_sync(st);
}

/* A look-up's tokens: half of them stored, half not. */
static void
probe_tokens(uint64_t *tok, size_t n)
{
    uint64_t seed = 1, other = 99;

    for (size_t i = 0; i < n; i++)
        tok[i] = i % 2 ? rng_next(&seed) : rng_next(&other);
    qsort(tok, n, sizeof(tok[0]), cmp_u64);
}

static double
lookups_ms(struct state *st, const uint64_t *tok, int rounds)
{
    static uint32_t c[MSG_TOKENS][2];
    double t0 = now_ms();

    for (int i = 0; i < rounds; i++)
        if (state_learn_counts(st, tok, MSG_TOKENS, 1, c, NULL) < 0)
            return -1;
    return (now_ms() - t0) / rounds;
}

int
main(int argc, char **argv)
{
    const struct state_learn_cache_limits direct = {.max_tokens = 0, .asks_min = 1};
    const struct state_learn_cache_limits eager = {.max_tokens = UINT64_C(100000000),
                                                   .asks_min = 1};
    struct state_learn_cache_stats s;
    struct state *st = NULL;
    uint64_t tok[MSG_TOKENS], n_fill = 0;
    double t_direct, t_first, t_hit;
    int rounds = 200, opt, r;

    while ((opt = getopt(argc, argv, "n:r:")) != -1) {
        if (opt == 'n')
            n_fill = strtoull(optarg, NULL, 10);
        else if (opt == 'r')
            rounds = (int)strtol(optarg, NULL, 10);
        else
            goto usage;
    }
    if (optind != argc - 1 || rounds < 1)
        goto usage;
    r = state_open(argv[optind], n_fill > 0 ? STATE_NOSYNC : 0, n_fill > 0 ? (size_t)1 << 31 : 0,
                   &st);
    if (r == 0 && n_fill > 0)
        r = fill(st, n_fill);
    if (r < 0) {
        fprintf(stderr, "learn-cache-timer: %s: %s\n", argv[optind], strerror(-r));
        state_close(st);
        return 1;
    }
    probe_tokens(tok, MSG_TOKENS);
    state_learn_cache_configure(st, &direct);
    t_direct = lookups_ms(st, tok, rounds);
    state_learn_cache_configure(st, &eager);
    /* The first ask misses, reads LMDB and builds the copy. */
    t_first = lookups_ms(st, tok, 1);
    t_hit = lookups_ms(st, tok, rounds);
    state_learn_cache_stats(st, &s);
    printf("tokens=%" PRIu64 " bytes=%zu build_ms=%.1f lookup512_lmdb_us=%.1f "
           "lookup512_copy_us=%.1f builds=%" PRIu64 "\n",
           s.tokens, s.bytes, t_first - t_direct, t_direct * 1e3, t_hit * 1e3, s.builds);
    state_close(st);
    return 0;
usage:
    fprintf(stderr, "usage: learn-cache-timer [-n TOKENS] [-r ROUNDS] STATE_DIR\n");
    return 64;
}
