/*
 * scan_timer.c - per-message cost of classifier_scan(): load the rules once,
 * read every message below the given paths into memory (slopctl's mailbox
 * walker), then time each scan on its own, over R rounds. Rule loading and
 * reading are outside the clock, and so is one first round that warms
 * up, so the figures are the scan alone, as the daemon pays it per message. With -k KIND only the
 * messages of that kind (patch, report, reply, other) are scanned. Prints one line: rules=N
 * messages=N bytes=N rounds=R seconds=S msgs_per_s=X mb_per_s=X p50_ms=X p99_ms=X max_ms=X
 * mean_ms=X best_ms=X load_ms=X best_ms is the mean over messages of each one's fastest round: what
 * is left of the mean without the preemptions of a shared machine. With -s STATE_DIR the scans
 * read that state (read-only) as the daemon's do, so a learned model (slopctl learn) speaks; -m N
 * sets the messages each class needs learned (LearnMinimum, default 200). Single-threaded benchmark
 * program; exits 1 when a scan fails, 66 when there is nothing to scan, 78 when the rules do not
 * load.
 */
#include <errno.h>
#include <stdbool.h>
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

#define SCAN_TIMER_MAX_MESSAGES 200000
#define SCAN_TIMER_MAX_BYTES ((size_t)2 << 30) /* all messages together */
#define SCAN_TIMER_MAX_ROUNDS 1000

static void
diag_print(void *ctx, const struct classifier_diag *d)
{
    (void)ctx;
    (void)d;
}

static int
cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

    return x < y ? -1 : x > y;
}

static double
pct_ms(const uint64_t *v, size_t n, double p)
{
    return n ? (double)v[(size_t)(p / 100.0 * (double)(n - 1) + 0.5)] / 1e6 : 0.0;
}

/* The mean over messages of each one's fastest round, in ms; lat holds
 * rounds rows of n. */
static double
best_ms(const uint64_t *lat, size_t n, size_t rounds)
{
    double sum = 0;

    for (size_t i = 0; i < n; i++) {
        uint64_t b = lat[i];

        for (size_t k = 1; k < rounds; k++)
            if (lat[k * n + i] < b)
                b = lat[k * n + i];
        sum += (double)b;
    }
    return n ? sum / 1e6 / (double)n : 0.0;
}

int
main(int argc, char **argv)
{
    struct bench_corpus corpus = {.max_messages = SCAN_TIMER_MAX_MESSAGES,
                                  .max_bytes = SCAN_TIMER_MAX_BYTES,
                                  .prog = "scan-timer"};
    struct classifier *c = NULL;
    uint64_t *lat = NULL, t0, load_ns, total = 0;
    unsigned long rounds = 1;
    enum classifier_kind kind = CLASSIFIER_KIND_OTHER;
    struct state_lookup_options lo = {0};
    struct classifier_envelope env = {0}, *envp = NULL;
    struct state_lookup sl;
    struct state *st = NULL;
    const char *state_dir = NULL;
    bool by_kind = false;
    size_t i, k, n;
    double best;
    int opt, status = 1, r;

    while ((opt = getopt(argc, argv, "k:m:r:s:")) != -1) {
        if (opt == 'r')
            rounds = strtoul(optarg, NULL, 10);
        else if (opt == 's')
            state_dir = optarg;
        else if (opt == 'm')
            lo.learn_minimum = (uint32_t)strtoul(optarg, NULL, 10);
        else if (opt == 'k' && bench_kind_parse(optarg, &kind) == 0)
            by_kind = true;
        else
            goto usage;
    }
    if (argc - optind < 2 || rounds == 0 || rounds > SCAN_TIMER_MAX_ROUNDS)
        goto usage;

    /* As the daemon and slopctl run. */
    classifier_tune_allocator();
    t0 = bench_now_ns();
    r = classifier_new(argv[optind], NULL, diag_print, NULL, &c);
    load_ns = bench_now_ns() - t0;
    if (r < 0) {
        fprintf(stderr, "scan-timer: cannot load rules from '%s': %s\n", argv[optind],
                strerror(-r));
        return 78;
    }
    if (state_dir != NULL) {
        r = state_open(state_dir, STATE_READONLY, 0, &st);
        if (r < 0) {
            fprintf(stderr, "scan-timer: cannot open state '%s': %s\n", state_dir, strerror(-r));
            goto out;
        }
        state_lookup_init(&sl, st, &lo);
        env.lookup = &sl.lookup;
        envp = &env;
    }
    for (i = (size_t)optind + 1; i < (size_t)argc; i++)
        if (bench_corpus_add_path(&corpus, argv[i]) < 0)
            break;
    if (by_kind && bench_corpus_keep_kind(&corpus, kind) < 0)
        goto out;
    if (corpus.n == 0) {
        fprintf(stderr, "scan-timer: no messages\n");
        status = 66;
        goto out;
    }
    n = corpus.n * rounds;
    lat = malloc(n * sizeof(*lat));
    if (lat == NULL)
        goto out;
    /* One untimed round first: the first scans pay one-time set-up (GMime's
     * types and charset converters, the per-thread parser), as the floor's
     * first parses would. */
    for (i = 0; i < corpus.n; i++) {
        struct classifier_result *res = NULL;

        r = classifier_scan(c, corpus.data[i], corpus.len[i], envp, &res);
        classifier_result_free(res);
        if (r < 0) {
            fprintf(stderr, "scan-timer: message %zu: %s\n", i, strerror(-r));
            goto out;
        }
    }
    for (k = 0; k < rounds; k++) {
        for (i = 0; i < corpus.n; i++) {
            struct classifier_result *res = NULL;
            uint64_t t;

            t = bench_now_ns();
            r = classifier_scan(c, corpus.data[i], corpus.len[i], envp, &res);
            t = bench_now_ns() - t;
            classifier_result_free(res);
            if (r < 0) {
                fprintf(stderr, "scan-timer: message %zu: %s\n", i, strerror(-r));
                goto out;
            }
            lat[k * corpus.n + i] = t;
            total += t;
        }
    }
    best = best_ms(lat, corpus.n, rounds);
    qsort(lat, n, sizeof(*lat), cmp_u64);
    printf("rules=%zu messages=%zu bytes=%zu rounds=%lu seconds=%.4f msgs_per_s=%.1f "
           "mb_per_s=%.2f p50_ms=%.4f p99_ms=%.4f max_ms=%.4f mean_ms=%.4f best_ms=%.4f "
           "load_ms=%.1f\n",
           classifier_rule_count(c), corpus.n, corpus.bytes, rounds, (double)total / 1e9,
           (double)n / ((double)total / 1e9),
           (double)corpus.bytes * (double)rounds / 1048576.0 / ((double)total / 1e9),
           pct_ms(lat, n, 50), pct_ms(lat, n, 99), pct_ms(lat, n, 100),
           (double)total / 1e6 / (double)n, best, (double)load_ns / 1e6);
    status = 0;
out:
    bench_corpus_release(&corpus);
    free(lat);
    classifier_free(c);
    state_close(st);
    return status;
usage:
    fprintf(stderr,
            "usage: scan-timer [-r ROUNDS] [-k KIND] [-s STATE_DIR [-m N]] RULES_DIR PATH...\n");
    return 64;
}
