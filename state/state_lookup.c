/*
 * state_lookup.c - a struct classifier_lookup whose callbacks read the
 * state environment, and the write that records a scanned message.
 *
 * Each callback is one short read transaction, so a scan never waits for
 * an import or for the daemon's writes. The lookup object holds no LMDB
 * handle of its own and may be shared by threads like the state it reads.
 */
#include <errno.h>
#include <string.h>
#include <time.h>

#include "state_db.h"
#include "state_internal.h"
#include "state_learn.h"

#define LOOKUP_DEFAULT_DAYS 30

static time_t
lookup_now(const struct state_lookup *sl)
{
    return sl->opts.now != 0 ? sl->opts.now : time(NULL);
}

static time_t
lookup_since(const struct state_lookup *sl)
{
    return lookup_now(sl) - (time_t)sl->opts.duplicate_days * 86400;
}

static bool
cb_tree_label(void *ctx, char *buf, size_t size)
{
    const struct state_lookup *sl = ctx;

    return state_tree_label(sl->st, buf, size) == 0;
}

static bool
cb_has_symbol(void *ctx, const char *name)
{
    const struct state_lookup *sl = ctx;

    return state_tree_has(sl->st, STATE_TREE_SYMBOL, name);
}

static bool
cb_has_path(void *ctx, const char *path)
{
    const struct state_lookup *sl = ctx;

    return state_tree_has(sl->st, STATE_TREE_PATH, path);
}

static bool
cb_has_config(void *ctx, const char *name)
{
    const struct state_lookup *sl = ctx;

    return state_tree_has(sl->st, STATE_TREE_CONFIG, name);
}

static bool
cb_find_fix(void *ctx, uint64_t fp, struct classifier_fix *ret)
{
    const struct state_lookup *sl = ctx;

    return state_fixes_find(sl->st, fp, ret) == 0;
}

static bool
cb_find_function_fix(void *ctx, const char *function, const char *bug_class,
                     struct classifier_fix *ret)
{
    const struct state_lookup *sl = ctx;

    return state_fixes_find_function(sl->st, function, bug_class, ret) == 0;
}

static bool
cb_find_duplicate(void *ctx, const uint64_t *fps, size_t n, uint64_t simhash, const char *self_id,
                  int64_t before, struct classifier_seen *ret)
{
    const struct state_lookup *sl = ctx;
    /* The window reaches back from the message's arrival, not from now:
     * an offline scan of old mail looks at what came before it then. */
    time_t since =
        before != 0 ? (time_t)before - (time_t)sl->opts.duplicate_days * 86400 : lookup_since(sl);

    return state_seen_find(sl->st, fps, n, simhash, self_id, since, (time_t)before, ret) == 0;
}

static size_t
cb_maintainers_of(void *ctx, const char *path, struct classifier_maint *ret, size_t max)
{
    const struct state_lookup *sl = ctx;

    return state_maint_of(sl->st, path, ret, max);
}

static bool
cb_is_trusted(void *ctx, const char *addr)
{
    const struct state_lookup *sl = ctx;

    return sl->opts.trust_maintainers && state_maint_trusted(sl->st, addr);
}

static uint32_t
cb_sender_count(void *ctx, const char *addr)
{
    const struct state_lookup *sl = ctx;

    return state_sender_count(sl->st, addr, lookup_now(sl));
}

static bool
cb_cover_flagged(void *ctx, const char *id, char *buf, size_t size)
{
    const struct state_lookup *sl = ctx;

    return state_series_cover_find(sl->st, id, lookup_since(sl), buf, size) == 0;
}

static uint32_t
cb_series_repeats(void *ctx, const struct classifier_series *s, const uint64_t *fps, size_t n,
                  uint32_t *ret_found)
{
    const struct state_lookup *sl = ctx;
    uint32_t patches = 0, found = 0;

    if (state_series_log_find(sl->st, s, fps, n, lookup_since(sl), &patches, &found) != 0)
        return 0;
    *ret_found = found;
    return patches;
}

static bool
cb_learned_counts(void *ctx, const uint64_t *tokens, size_t n, uint32_t (*ret_counts)[2],
                  uint64_t ret_totals[2])
{
    const struct state_lookup *sl = ctx;
    struct state_learn_totals t;

    if (state_learn_counts(sl->st, tokens, n, sl->opts.learn_minimum, ret_counts, &t) != 0)
        return false;
    ret_totals[0] = t.messages[STATE_LEARN_SLOP];
    ret_totals[1] = t.messages[STATE_LEARN_GENUINE];
    return true;
}

void
state_lookup_init(struct state_lookup *sl, struct state *st,
                  const struct state_lookup_options *opts)
{
    memset(sl, 0, sizeof(*sl));
    sl->st = st;
    if (opts != NULL)
        sl->opts = *opts;
    if (sl->opts.duplicate_days == 0)
        sl->opts.duplicate_days = LOOKUP_DEFAULT_DAYS;
    if (sl->opts.learn_minimum == 0)
        sl->opts.learn_minimum = STATE_LEARN_MINIMUM_DEFAULT;
    sl->lookup = (struct classifier_lookup){
        .ctx = sl,
        .tree_label = cb_tree_label,
        .has_symbol = cb_has_symbol,
        .has_path = cb_has_path,
        .has_config = cb_has_config,
        .find_fix = cb_find_fix,
        .find_function_fix = cb_find_function_fix,
        .find_duplicate = cb_find_duplicate,
        .maintainers_of = cb_maintainers_of,
        .is_trusted = cb_is_trusted,
        .sender_count = cb_sender_count,
        .cover_flagged = cb_cover_flagged,
        .series_repeats = cb_series_repeats,
        .learned_counts = cb_learned_counts,
    };
}

int
state_lookup_record(const struct state_lookup *sl, const struct classifier_result *res)
{
    struct state_mail m;
    time_t now;
    int r;

    if (sl == NULL || sl->st == NULL || res == NULL)
        return -EINVAL;
    now = lookup_now(sl);
    m = (struct state_mail){
        .fps = res->fingerprints,
        .n = res->n_fingerprints,
        .simhash = res->simhash,
        .message_id = res->message_id,
        .from = res->from,
        .count_sender = res->count_sender && res->from != NULL && res->from[0] != '\0',
        .now = now,
        .window_s = sl->opts.duplicate_days * 86400u,
    };
    /* Under Redis one round trip for what other hosts must see. */
    r = sl->st->ops->record(sl->st, &m);
    if (r == 0 && res->cover_note != NULL && res->message_id != NULL)
        r = state_series_cover_put(sl->st, res->message_id, res->cover_note, now);
    if (r == 0 && res->n_log_paragraphs > 0 && res->series_root != NULL &&
        res->message_id != NULL) {
        struct classifier_series s = {.root = res->series_root,
                                      .self_id = res->message_id,
                                      .version = res->series_version,
                                      .index = res->series_index,
                                      .total = res->series_total};

        r = state_series_log_put(sl->st, &s, res->log_paragraphs, res->n_log_paragraphs, now);
    }
    return r;
}
