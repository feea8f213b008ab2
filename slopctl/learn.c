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
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>
#include <time.h>

#include "backend.h"
#include "classifier.h"
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

int
learn_cmd(int argc, char **argv, bool forget, const char *(*rules_resolve)(const char *opt))
{
    static const struct option longopts[] = {
        {"slop", no_argument, NULL, 's'},        {"genuine", no_argument, NULL, 'g'},
        {"stats", no_argument, NULL, 'S'},       {"state", required_argument, NULL, 'd'},
        {"rules", required_argument, NULL, 'r'}, {"learn-minimum", required_argument, NULL, 'M'},
        {"help", no_argument, NULL, 'h'},        {NULL, 0, NULL, 0},
    };
    struct output_diag_sink sink = {.f = stderr};
    struct learn_run lr = {.cls = -1, .now = time(NULL)};
    struct classifier *c = NULL;
    const char *state_dir = NULL, *rules = NULL;
    bool stats = false;
    uint32_t minimum = backend_learn_minimum();
    unsigned long v;
    char buf[128], *end;
    int opt, r, ret = 0;

    while ((opt = getopt_long(argc, argv, "r:h", longopts, NULL)) != -1) {
        switch (opt) {
        case 's':
        case 'g':
            if (forget || lr.cls >= 0) {
                fprintf(stderr, "slopctl: give --slop or --genuine once, to learn only\n");
                return EX_USAGE;
            }
            lr.cls = opt == 's' ? STATE_LEARN_SLOP : STATE_LEARN_GENUINE;
            break;
        case 'S':
            stats = true;
            break;
        case 'd':
            state_dir = optarg;
            break;
        case 'r':
            rules = optarg;
            break;
        case 'M':
            errno = 0;
            v = strtoul(optarg, &end, 10);
            if (*optarg < '0' || *optarg > '9' || *end != '\0' || errno != 0 || v == 0 ||
                v > STATE_LEARN_MINIMUM_MAX) {
                fprintf(stderr, "slopctl: bad --learn-minimum '%s', expected 1 to %u\n", optarg,
                        STATE_LEARN_MINIMUM_MAX);
                return EX_USAGE;
            }
            minimum = (uint32_t)v;
            break;
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
    state_dir = statedir_resolve(state_dir);
    if (stats) {
        if (lr.cls >= 0 || forget || optind < argc) {
            fprintf(stderr, "slopctl: --stats takes no class and no PATH\n");
            return EX_USAGE;
        }
        r = statedir_open(state_dir, STATE_READONLY, &lr.st);
        if (r != 0)
            return r;
        ret = learn_stats(lr.st, state_dir, minimum);
        state_close(lr.st);
        return ret;
    }
    if ((!forget && lr.cls < 0) || optind >= argc) {
        fprintf(stderr, "slopctl: %s needs %sat least one PATH\ntry 'slopctl help'\n",
                forget ? "forget" : "learn", forget ? "" : "--slop or --genuine and ");
        return EX_USAGE;
    }

    rules = rules_resolve(rules);
    classifier_tune_allocator();
    r = classifier_new(rules, NULL, output_diag, &sink, &c);
    if (r < 0) {
        fprintf(stderr, "slopctl: cannot load rules from '%s'\n", rules);
        return EX_CONFIG;
    }
    lr.c = c;
    lr.tokens = malloc(STATE_LEARN_MAX_TOKENS * sizeof(*lr.tokens));
    if (lr.tokens == NULL) {
        ret = EX_OSERR;
        goto out;
    }
    ret = statedir_open(state_dir, STATE_NOSYNC, &lr.st);
    if (ret != 0)
        goto out;
    r = 0;
    for (int i = optind; i < argc && r == 0; i++)
        r = mailbox_walk(argv[i], 0, learn_message, learn_error, &lr);
    if (r == 0)
        r = state_sync(lr.st);
    if (r < 0) {
        fprintf(stderr, "slopctl: cannot write '%s': %s\n", state_dir,
                strerror_r(-r, buf, sizeof(buf)));
        ret = EX_IOERR;
        goto out;
    }
    learn_report(&lr);
    if (fflush(stdout) != 0)
        ret = EX_IOERR;
    else if (lr.failed > 0)
        ret = lr.done == 0 ? EX_NOINPUT : 1;
out:
    free(lr.tokens);
    state_close(lr.st);
    classifier_free(c);
    return ret;
}
