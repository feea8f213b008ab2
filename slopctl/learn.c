/*
 * learn.c - "slopctl learn (--slop | --genuine) PATH...", "slopctl learn
 * --stats" and "slopctl forget PATH...".
 *
 * Each message is tokenised exactly as the scan does
 * (classifier_learn_tokens()) and learned in one transaction of its own
 * (state_learn.h), so a learner killed at any point leaves whole
 * messages counted and the daemon reading the counts never waits. Commits
 * go to the page cache and are flushed every LEARN_SYNC_EVERY messages
 * and at the end: a power loss costs at most those, to be learned again.
 * Single-threaded.
 */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>
#include <time.h>

#include "backend.h"
#include "classifier.h"
#include "cli.h"
#include "learn.h"
#include "mailbox.h"
#include "output.h"
#include "state.h"
#include "state_db.h"
#include "state_learn.h"
#include "statedir.h"

#define LEARN_SYNC_EVERY 256

struct learn_run {
    const struct classifier *c;
    struct state *st;
    int cls; /* enum state_learn_class, or -1 to forget */
    uint64_t *tokens;
    uint64_t outcomes[STATE_LEARN_UNKNOWN + 1];
    uint64_t done, failed;
    time_t now;
};

static void
learn_error(void *ctx, const char *file, size_t index, const char *reason)
{
    struct learn_run *lr = ctx;

    lr->failed++;
    fprintf(stderr, "slopctl: %s", file);
    if (index > 0)
        fprintf(stderr, " (message %zu)", index + 1);
    fprintf(stderr, ": %s\n", reason);
}

static int
learn_message(void *ctx, const struct mailbox_msg *m)
{
    struct learn_run *lr = ctx;
    enum state_learn_outcome out = STATE_LEARN_UNKNOWN;
    struct state_learn_msg lm = {.tokens = lr->tokens};
    char buf[128];
    int r;

    r = classifier_learn_tokens(lr->c, m->data, m->len, lr->tokens, STATE_LEARN_MAX_TOKENS, &lm.n,
                                &lm.hint);
    if (r == 0) {
        if (lr->cls < 0)
            r = state_learn_forget(lr->st, &lm, &out);
        else
            r = state_learn_add(lr->st, &lm, (enum state_learn_class)lr->cls, lr->now, &out);
    }
    if (r == -ENOSPC || r == -EIO || r == -EROFS)
        return r; /* the state, not this message: stop */
    if (r < 0) {
        learn_error(lr, m->file, m->index, strerror_r(-r, buf, sizeof(buf)));
        return 0;
    }
    lr->outcomes[out]++;
    if (++lr->done % LEARN_SYNC_EVERY == 0)
        return state_sync(lr->st);
    return 0;
}

/* Whether the LEARNED_* findings speak: each class needs minimum
 * messages learned (LearnMinimum, state_lookup.c's gate). */
static void
learn_print_active(const struct state_learn_totals *t, uint32_t minimum)
{
    uint64_t slop = t->messages[STATE_LEARN_SLOP], genuine = t->messages[STATE_LEARN_GENUINE];

    if (slop >= minimum && genuine >= minimum) {
        printf("learned findings  active (LearnMinimum %lu per class)\n", (unsigned long)minimum);
        return;
    }
    printf("learned findings  not active: ");
    if (slop < minimum)
        printf("%llu more slop", (unsigned long long)(minimum - slop));
    if (slop < minimum && genuine < minimum)
        printf(" and ");
    if (genuine < minimum)
        printf("%llu more genuine", (unsigned long long)(minimum - genuine));
    printf(" messages to learn (LearnMinimum %lu per class)\n", (unsigned long)minimum);
}

static int
learn_stats(struct state *st, const char *dir, uint32_t minimum)
{
    struct state_learn_totals t;
    char buf[128];
    int r;

    r = state_learn_totals(st, &t);
    if (r < 0) {
        fprintf(stderr, "slopctl: cannot read '%s': %s\n", dir, strerror_r(-r, buf, sizeof(buf)));
        return EX_IOERR;
    }
    printf("slop messages     %llu\n", (unsigned long long)t.messages[STATE_LEARN_SLOP]);
    printf("genuine messages  %llu\n", (unsigned long long)t.messages[STATE_LEARN_GENUINE]);
    printf("tokens            %llu\n", (unsigned long long)t.tokens);
    learn_print_active(&t, minimum);
    return fflush(stdout) == 0 ? 0 : EX_IOERR;
}

static void
learn_report(const struct learn_run *lr)
{
    if (lr->cls < 0) {
        printf("forgot %llu messages, %llu were not learned\n",
               (unsigned long long)lr->outcomes[STATE_LEARN_FORGOTTEN],
               (unsigned long long)lr->outcomes[STATE_LEARN_UNKNOWN]);
        return;
    }
    printf("learned %llu %s messages: %llu new, %llu moved from %s, %llu already learned\n",
           (unsigned long long)lr->done, lr->cls == STATE_LEARN_SLOP ? "slop" : "genuine",
           (unsigned long long)lr->outcomes[STATE_LEARN_ADDED],
           (unsigned long long)lr->outcomes[STATE_LEARN_MOVED],
           lr->cls == STATE_LEARN_SLOP ? "genuine" : "slop",
           (unsigned long long)lr->outcomes[STATE_LEARN_UNCHANGED]);
}

struct learn_options {
    const char *state_dir, *rules;
    int cls; /* enum state_learn_class, or -1 */
    bool stats;
    uint32_t minimum;
};

/* --learn-minimum N; false when N is no count from 1 to the maximum. */
static bool
minimum_parse(const char *arg, uint32_t *ret)
{
    unsigned long v;
    char *end;

    errno = 0;
    v = strtoul(arg, &end, 10);
    if (*arg < '0' || *arg > '9' || *end != '\0' || errno != 0 || v == 0 ||
        v > STATE_LEARN_MINIMUM_MAX)
        return false;
    *ret = (uint32_t)v;
    return true;
}

/* One option: -1 to go on, else the exit code. */
static int
learn_option(struct learn_options *o, int opt, bool forget)
{
    switch (opt) {
    case 's':
    case 'g':
        if (forget || o->cls >= 0) {
            fprintf(stderr, "slopctl: give --slop or --genuine once, to learn only\n");
            return EX_USAGE;
        }
        o->cls = opt == 's' ? STATE_LEARN_SLOP : STATE_LEARN_GENUINE;
        return -1;
    case 'S':
        o->stats = true;
        return -1;
    case 'd':
        o->state_dir = optarg;
        return -1;
    case 'r':
        o->rules = optarg;
        return -1;
    case 'M':
        if (!minimum_parse(optarg, &o->minimum)) {
            fprintf(stderr, "slopctl: bad --learn-minimum '%s', expected 1 to %u\n", optarg,
                    STATE_LEARN_MINIMUM_MAX);
            return EX_USAGE;
        }
        return -1;
    case 'h':
        printf("usage: slopctl learn (--slop | --genuine) [--state DIR] [--rules DIR] PATH...\n"
               "       slopctl learn --stats [--state DIR] [--learn-minimum N]\n"
               "       slopctl forget [--state DIR] [--rules DIR] PATH...\n");
        return 0;
    default:
        fprintf(stderr, "try 'slopctl help'\n");
        return EX_USAGE;
    }
}

/* -1 to go on (state_dir resolved), else the exit code. */
static int
learn_options_parse(int argc, char **argv, bool forget, struct learn_options *o)
{
    static const struct option longopts[] = {
        {"slop", no_argument, NULL, 's'},        {"genuine", no_argument, NULL, 'g'},
        {"stats", no_argument, NULL, 'S'},       {"state", required_argument, NULL, 'd'},
        {"rules", required_argument, NULL, 'r'}, {"learn-minimum", required_argument, NULL, 'M'},
        {"help", no_argument, NULL, 'h'},        {NULL, 0, NULL, 0},
    };
    int opt, ret;

    while ((opt = getopt_long(argc, argv, "r:h", longopts, NULL)) != -1) {
        ret = learn_option(o, opt, forget);
        if (ret >= 0)
            return ret;
    }
    o->state_dir = statedir_resolve(o->state_dir);
    return -1;
}

/* learn --stats; the exit code. */
static int
learn_stats_cmd(const struct learn_options *o)
{
    struct state *st = NULL;
    int ret;

    ret = statedir_open(o->state_dir, STATE_READONLY, &st);
    if (ret != 0)
        return ret;
    ret = learn_stats(st, o->state_dir, o->minimum);
    state_close(st);
    return ret;
}

/* Learn or forget every message at paths into the open lr->st; the exit
 * code. */
static int
learn_paths(struct learn_run *lr, const char *state_dir, char **paths, int n)
{
    char buf[128];
    int r = 0;

    for (int i = 0; i < n && r == 0; i++)
        r = mailbox_walk(paths[i], 0, learn_message, learn_error, lr);
    if (r == 0)
        r = state_sync(lr->st);
    if (r < 0) {
        fprintf(stderr, "slopctl: cannot write '%s': %s\n", state_dir,
                strerror_r(-r, buf, sizeof(buf)));
        return EX_IOERR;
    }
    learn_report(lr);
    if (fflush(stdout) != 0)
        return EX_IOERR;
    if (lr->failed > 0)
        return lr->done == 0 ? EX_NOINPUT : 1;
    return 0;
}

int
learn_cmd(int argc, char **argv, bool forget)
{
    struct output_diag_sink sink = {.f = stderr};
    struct learn_options o = {.cls = -1, .minimum = backend_learn_minimum()};
    struct learn_run lr = {.cls = -1, .now = time(NULL)};
    struct classifier *c = NULL;
    const char *rules;
    int r, ret;

    ret = learn_options_parse(argc, argv, forget, &o);
    if (ret >= 0)
        return ret;
    if (o.stats) {
        if (o.cls >= 0 || forget || optind < argc) {
            fprintf(stderr, "slopctl: --stats takes no class and no PATH\n");
            return EX_USAGE;
        }
        return learn_stats_cmd(&o);
    }
    if ((!forget && o.cls < 0) || optind >= argc) {
        fprintf(stderr, "slopctl: %s needs %sat least one PATH\ntry 'slopctl help'\n",
                forget ? "forget" : "learn", forget ? "" : "--slop or --genuine and ");
        return EX_USAGE;
    }

    rules = cli_rules_dir(o.rules);
    classifier_tune_allocator();
    r = classifier_new(rules, NULL, output_diag, &sink, &c);
    if (r < 0) {
        fprintf(stderr, "slopctl: cannot load rules from '%s'\n", rules);
        return EX_CONFIG;
    }
    lr.c = c;
    lr.cls = o.cls;
    lr.tokens = malloc(STATE_LEARN_MAX_TOKENS * sizeof(*lr.tokens));
    if (lr.tokens == NULL) {
        ret = EX_OSERR;
        goto out;
    }
    ret = statedir_open(o.state_dir, STATE_NOSYNC, &lr.st);
    if (ret == 0)
        ret = learn_paths(&lr, o.state_dir, argv + optind, argc - optind);
out:
    free(lr.tokens);
    state_close(lr.st);
    classifier_free(c);
    return ret;
}
