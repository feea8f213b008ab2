/*
 * state_timer.c - what the state's look-ups add to classifier_scan(): load
 * the rules once, open a state read-only, read every message below the
 * given paths into memory, then scan them all without and with the lookup,
 * alternating, over R rounds, keeping each mode's best round. A counting
 * wrapper around the lookup tells how many look-ups a message makes and
 * what one costs. Prints one line:
 *   messages=N rounds=R plain_ms=X state_ms=X ratio=X lookups_per_msg=X
 *   us_per_lookup=X lookup_ms_per_msg=X
 * Single-threaded benchmark program; exits 1 when a scan fails, 66 when
 * there is nothing to scan or no state, 78 when the rules do not load.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "classifier.h"
#include "corpus.h"
#include "state.h"
#include "state_db.h"

#define STATE_TIMER_MAX_MESSAGES 100000
#define STATE_TIMER_MAX_BYTES ((size_t)1 << 30)
#define STATE_TIMER_MAX_ROUNDS 100

/* The real lookup, and how many calls went through it. */
struct counting {
    const struct classifier_lookup *inner;
    uint64_t calls;
};

static bool
c_label(void *ctx, char *buf, size_t size)
{
    struct counting *c = ctx;

    c->calls++;
    return c->inner->tree_label(c->inner->ctx, buf, size);
}

static bool
c_symbol(void *ctx, const char *s)
{
    struct counting *c = ctx;

    c->calls++;
    return c->inner->has_symbol(c->inner->ctx, s);
}

static bool
c_path(void *ctx, const char *s)
{
    struct counting *c = ctx;

    c->calls++;
    return c->inner->has_path(c->inner->ctx, s);
}

static bool
c_config(void *ctx, const char *s)
{
    struct counting *c = ctx;

    c->calls++;
    return c->inner->has_config(c->inner->ctx, s);
}

static bool
c_fix(void *ctx, uint64_t fp, struct classifier_fix *ret)
{
    struct counting *c = ctx;

    c->calls++;
    return c->inner->find_fix(c->inner->ctx, fp, ret);
}

static bool
c_function_fix(void *ctx, const char *f, const char *b, struct classifier_fix *ret)
{
    struct counting *c = ctx;

    c->calls++;
    return c->inner->find_function_fix(c->inner->ctx, f, b, ret);
}

static bool
c_duplicate(void *ctx, const uint64_t *fps, size_t n, uint64_t sim, const char *self,
            int64_t before, struct classifier_seen *ret)
{
    struct counting *c = ctx;

    c->calls++;
    return c->inner->find_duplicate(c->inner->ctx, fps, n, sim, self, before, ret);
}

static size_t
c_maint(void *ctx, const char *path, struct classifier_maint *ret, size_t max)
{
    struct counting *c = ctx;

    c->calls++;
    return c->inner->maintainers_of(c->inner->ctx, path, ret, max);
}

static bool
c_trusted(void *ctx, const char *addr)
{
    struct counting *c = ctx;

    c->calls++;
    return c->inner->is_trusted(c->inner->ctx, addr);
}

static uint32_t
c_sender(void *ctx, const char *addr)
{
    struct counting *c = ctx;

    c->calls++;
    return c->inner->sender_count(c->inner->ctx, addr);
}

/* Scan every message once; returns the nanoseconds, or 0 on failure. */
static uint64_t
scan_all(const struct classifier *cl, const struct bench_corpus *corpus,
         const struct classifier_envelope *env)
{
    uint64_t t0 = bench_now_ns();

    for (size_t i = 0; i < corpus->n; i++) {
        struct classifier_result *res = NULL;
        int r = classifier_scan(cl, corpus->data[i], corpus->len[i], env, &res);

        classifier_result_free(res);
        if (r < 0) {
            fprintf(stderr, "state-timer: message %zu: %s\n", i, strerror(-r));
            return 0;
        }
    }
    return bench_now_ns() - t0;
}

int
main(int argc, char **argv)
{
    struct bench_corpus corpus = {.max_messages = STATE_TIMER_MAX_MESSAGES,
                                  .max_bytes = STATE_TIMER_MAX_BYTES,
                                  .prog = "state-timer"};
    struct classifier *cl = NULL;
    struct state *st = NULL;
    struct state_lookup sl;
    struct counting cnt = {0};
    struct classifier_lookup wrap;
    struct classifier_envelope env = {.mail_from = ""};
    uint64_t best_plain = UINT64_MAX, best_state = UINT64_MAX, calls = 0;
    unsigned long rounds = 5;
    int opt, status = 1, r;

    while ((opt = getopt(argc, argv, "r:")) != -1) {
        if (opt != 'r')
            goto usage;
        rounds = strtoul(optarg, NULL, 10);
    }
    if (argc - optind < 3 || rounds == 0 || rounds > STATE_TIMER_MAX_ROUNDS)
        goto usage;
    classifier_tune_allocator();
    r = classifier_new(argv[optind], NULL, NULL, NULL, &cl);
    if (r < 0) {
        fprintf(stderr, "state-timer: cannot load rules from '%s': %s\n", argv[optind],
                strerror(-r));
        return 78;
    }
    r = state_open(argv[optind + 1], STATE_READONLY, 0, &st);
    if (r < 0) {
        fprintf(stderr, "state-timer: cannot open state '%s': %s\n", argv[optind + 1],
                strerror(-r));
        status = 66;
        goto out;
    }
    state_lookup_init(&sl, st, NULL);
    cnt.inner = &sl.lookup;
    wrap = (struct classifier_lookup){
        .ctx = &cnt,
        .tree_label = c_label,
        .has_symbol = c_symbol,
        .has_path = c_path,
        .has_config = c_config,
        .find_fix = c_fix,
        .find_function_fix = c_function_fix,
        .find_duplicate = c_duplicate,
        .maintainers_of = c_maint,
        .is_trusted = c_trusted,
        .sender_count = c_sender,
    };
    env.lookup = &wrap;
    for (int i = optind + 2; i < argc; i++)
        if (bench_corpus_add_path(&corpus, argv[i]) < 0)
            break;
    if (corpus.n == 0) {
        fprintf(stderr, "state-timer: no messages\n");
        status = 66;
        goto out;
    }
    for (unsigned long k = 0; k < rounds; k++) {
        /* Alternate which mode goes first, so neither always gets the
         * warmer cache. */
        for (int pass = 0; pass < 2; pass++) {
            bool with_state = (pass == 0) == (k % 2 == 0);
            uint64_t t;

            cnt.calls = 0;
            t = scan_all(cl, &corpus, with_state ? &env : NULL);
            if (t == 0)
                goto out;
            if (with_state) {
                calls = cnt.calls;
                if (t < best_state)
                    best_state = t;
            } else if (t < best_plain) {
                best_plain = t;
            }
        }
    }
    {
        double plain = (double)best_plain / 1e6, with = (double)best_state / 1e6;
        double n = (double)corpus.n;

        printf("messages=%zu rounds=%lu plain_ms=%.1f state_ms=%.1f ratio=%.2f "
               "lookups_per_msg=%.1f us_per_lookup=%.2f lookup_ms_per_msg=%.3f\n",
               corpus.n, rounds, plain, with, with / plain, (double)calls / n,
               calls ? 1000.0 * (with - plain) / (double)calls : 0.0, (with - plain) / n);
    }
    status = 0;
    goto out;
usage:
    fprintf(stderr, "usage: state-timer [-r ROUNDS] RULES_DIR STATE_DIR PATH...\n");
    return 64;
out:
    bench_corpus_release(&corpus);
    state_close(st);
    classifier_free(cl);
    return status;
}
