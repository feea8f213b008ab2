/*
 * test_state_index.c - the tables of state_db.h in a real LMDB
 * environment under a temporary directory: tree index and its label,
 * merged fixes, MAINTAINERS matching, seen mail with its window and
 * prune, sender counts, and the lookup built on all of them.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "classifier.h"
#include "state.h"
#include "state_db.h"

#define DAY 86400

struct fx {
    char dir[64];
    struct state *st;
};

static int
setup(void **state)
{
    struct fx *fx = calloc(1, sizeof(*fx));

    if (fx == NULL)
        return -1;
    strcpy(fx->dir, "/tmp/slop-state-index-XXXXXX");
    if (mkdtemp(fx->dir) == NULL || state_open(fx->dir, 0, 0, &fx->st) < 0)
        return -1;
    *state = fx;
    return 0;
}

static int
teardown(void **state)
{
    struct fx *fx = *state;
    char path[128];

    state_close(fx->st);
    snprintf(path, sizeof(path), "%s/data.mdb", fx->dir);
    unlink(path);
    snprintf(path, sizeof(path), "%s/lock.mdb", fx->dir);
    unlink(path);
    snprintf(path, sizeof(path), "%s/state.generation", fx->dir);
    unlink(path);
    rmdir(fx->dir);
    free(fx);
    return 0;
}

static void
test_tree(void **state)
{
    struct fx *fx = *state;
    const struct state_tree_entry a[] = {{"drivers/usb/core/hub.c", 'f'},
                                         {"drivers/usb/core/hub.h", 'f'}};
    const struct state_tree_entry b[] = {{"drivers/usb/core/quirks.c", 'f'},
                                         {"include/linux/usb.h", 'f'}};
    const struct state_tree_entry syms[] = {{"hub_port_init", 'f'}, {"usb_put_port", 'f'}};
    const struct state_tree_entry unsorted[] = {{"zeta_fn", 'f'}, {"alpha_fn", 'f'}};
    const struct state_tree_entry cfg[] = {{"CONFIG_USB", 'c'}};
    char label[128];
    struct state *ro = NULL;

    assert_int_equal(state_tree_label(fx->st, label, sizeof(label)), -ENOENT);
    assert_int_equal(state_tree_clear(fx->st), 0);
    /* two sorted batches append after each other */
    assert_int_equal(state_tree_put(fx->st, STATE_TREE_PATH, a, 2, true), 0);
    assert_int_equal(state_tree_put(fx->st, STATE_TREE_PATH, b, 2, true), 0);
    assert_int_equal(state_tree_put(fx->st, STATE_TREE_SYMBOL, syms, 2, true), 0);
    assert_int_equal(state_tree_put(fx->st, STATE_TREE_SYMBOL, unsorted, 2, false), 0);
    assert_int_equal(state_tree_put(fx->st, STATE_TREE_CONFIG, cfg, 1, true), 0);
    /* not finished yet: no label, so nothing counts as indexed */
    assert_int_equal(state_tree_label(fx->st, label, sizeof(label)), -ENOENT);
    assert_int_equal(state_tree_finish(fx->st, "2026-11-30", 4), 0);
    assert_int_equal(state_tree_label(fx->st, label, sizeof(label)), 0);
    assert_string_equal(label, "indexed tree of 2026-11-30");

    assert_true(state_tree_has(fx->st, STATE_TREE_PATH, "drivers/usb/core/hub.c"));
    assert_true(state_tree_has(fx->st, STATE_TREE_PATH, "include/linux/usb.h"));
    assert_false(state_tree_has(fx->st, STATE_TREE_PATH, "drivers/usb/core/hub_quirks.c"));
    assert_true(state_tree_has(fx->st, STATE_TREE_SYMBOL, "hub_port_init"));
    assert_true(state_tree_has(fx->st, STATE_TREE_SYMBOL, "alpha_fn"));
    assert_false(state_tree_has(fx->st, STATE_TREE_SYMBOL, "hub_port_verify"));
    /* kinds are separate tables */
    assert_false(state_tree_has(fx->st, STATE_TREE_SYMBOL, "CONFIG_USB"));
    assert_true(state_tree_has(fx->st, STATE_TREE_CONFIG, "CONFIG_USB"));

    /* a reader in read-only mode sees the same */
    assert_int_equal(state_open(fx->dir, STATE_READONLY, 0, &ro), 0);
    assert_true(state_tree_has(ro, STATE_TREE_SYMBOL, "usb_put_port"));
    assert_int_equal(state_tree_put(ro, STATE_TREE_SYMBOL, syms, 1, false), -EROFS);
    state_close(ro);

    /* a new import starts from nothing */
    assert_int_equal(state_tree_clear(fx->st), 0);
    assert_int_equal(state_tree_label(fx->st, label, sizeof(label)), -ENOENT);
    assert_false(state_tree_has(fx->st, STATE_TREE_SYMBOL, "hub_port_init"));
}

static void
collect(void *ctx, uint64_t fp)
{
    uint64_t *v = ctx;

    if (v[0] < 8)
        v[1 + v[0]++] = fp;
}

static void
test_fixes(void **state)
{
    static const char diff[] = "diff --git a/kernel/foo.c b/kernel/foo.c\n"
                               "--- a/kernel/foo.c\n"
                               "+++ b/kernel/foo.c\n"
                               "@@ -10,3 +10,3 @@ int foo_get(struct foo *f)\n"
                               " \tspin_lock(&f->lock);\n"
                               "-\tf->refs--;\n"
                               "+\trefcount_dec(&f->refs);\n";
    struct fx *fx = *state;
    uint64_t fps[9] = {0};
    struct classifier_fix fix;

    assert_int_equal(classifier_diff_fingerprints(diff, strlen(diff), collect, fps), 1);
    {
        const struct state_fix recs[] = {
            {.hunk_fp = fps[1],
             .commit = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
             .subject = "foo: use refcount_t"},
            {.hunk_fp = fps[1],
             .commit = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb",
             .subject = "later commit with the same hunk"},
            {.function = "foo_get",
             .bug_class = "use-after-free",
             .commit = "cccccccccccccccccccccccccccccccccccccccc",
             .subject = "foo: fix UAF"},
        };

        assert_int_equal(state_fixes_put(fx->st, recs, 3), 0);
    }
    assert_int_equal(state_fixes_find(fx->st, fps[1], &fix), 0);
    assert_string_equal(fix.commit, "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa");
    assert_string_equal(fix.subject, "foo: use refcount_t");
    assert_int_equal(state_fixes_find(fx->st, fps[1] ^ 1, &fix), -ENOENT);
    assert_int_equal(state_fixes_find_function(fx->st, "foo_get", "use-after-free", &fix), 0);
    assert_string_equal(fix.subject, "foo: fix UAF");
    assert_int_equal(state_fixes_find_function(fx->st, "foo_get", "memory-leak", &fix), -ENOENT);
    assert_int_equal(state_fixes_find_function(fx->st, "foo_put", "use-after-free", &fix), -ENOENT);
}

static const char maintainers[] = "List of maintainers\n"
                                  "===================\n"
                                  "\n"
                                  "Descriptions of section entries:\n"
                                  "\tM: *Mail* patches to: FullName <address@domain>\n"
                                  "\n"
                                  "USB HUB DRIVER\n"
                                  "M:\tGreg Maintainer <Greg@Maint.Example>\n"
                                  "L:\tlinux-usb@vger.kernel.org\n"
                                  "S:\tMaintained\n"
                                  "F:\tdrivers/usb/core/\n"
                                  "X:\tdrivers/usb/core/quirks.c\n"
                                  "\n"
                                  "USB QUIRKS\n"
                                  "M:\tQuinn Quirk <quinn@quirk.example>\n"
                                  "F:\tdrivers/usb/core/quirks.c\n"
                                  "\n"
                                  "USB GADGET HEADERS\n"
                                  "R:\tRita Reviewer <rita@review.example>\n"
                                  "L:\tlinux-usb@vger.kernel.org\n"
                                  "F:\tinclude/linux/usb/*.h\n"
                                  "F:\tdrivers/usb/*/gadget_*.c\n"
                                  "\n"
                                  "THE REST\n"
                                  "M:\tLinus Torvalds <torvalds@linux-foundation.org>\n"
                                  "L:\tlinux-kernel@vger.kernel.org\n"
                                  "F:\t*\n"
                                  "F:\t*/\n";

static bool
has_addr(const struct classifier_maint *v, size_t n, const char *addr, bool list)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(v[i].addr, addr) == 0 && v[i].list == list)
            return true;
    return false;
}

static void
test_maintainers(void **state)
{
    struct fx *fx = *state;
    struct state_maint_counts counts;
    struct classifier_maint v[8];
    size_t n;

    assert_int_equal(state_maint_import(fx->st, maintainers, strlen(maintainers), &counts), 0);
    assert_int_equal(counts.sections, 3); /* the catch-all is left out */

    n = state_maint_of(fx->st, "drivers/usb/core/hub.c", v, 8);
    assert_int_equal(n, 2);
    assert_true(has_addr(v, n, "greg@maint.example", false));
    assert_true(has_addr(v, n, "linux-usb@vger.kernel.org", true));
    /* X: excludes the hub section; the quirks section takes it */
    n = state_maint_of(fx->st, "drivers/usb/core/quirks.c", v, 8);
    assert_int_equal(n, 1);
    assert_true(has_addr(v, n, "quinn@quirk.example", false));
    /* '*' does not cross '/' */
    n = state_maint_of(fx->st, "include/linux/usb/ch9.h", v, 8);
    assert_int_equal(n, 1);
    assert_true(has_addr(v, n, "linux-usb@vger.kernel.org", true));
    assert_int_equal(state_maint_of(fx->st, "include/linux/usb/x/ch9.h", v, 8), 0);
    n = state_maint_of(fx->st, "drivers/usb/dwc3/gadget_ep.c", v, 8);
    assert_int_equal(n, 1);
    /* THE REST is not anybody's file list */
    assert_int_equal(state_maint_of(fx->st, "kernel/fork.c", v, 8), 0);
    /* max is respected */
    assert_int_equal(state_maint_of(fx->st, "drivers/usb/core/hub.c", v, 1), 1);

    assert_true(state_maint_trusted(fx->st, "greg@maint.example"));
    assert_true(state_maint_trusted(fx->st, "GREG@maint.example"));
    assert_true(state_maint_trusted(fx->st, "rita@review.example"));
    assert_false(state_maint_trusted(fx->st, "linux-usb@vger.kernel.org"));
    assert_false(state_maint_trusted(fx->st, "torvalds@linux-foundation.org"));

    /* a new import replaces the old one */
    {
        static const char only[] = "ONLY\nM:\tx@y.example\nF:\tfs/\n";

        assert_int_equal(state_maint_import(fx->st, only, strlen(only), NULL), 0);
    }
    assert_int_equal(state_maint_of(fx->st, "drivers/usb/core/hub.c", v, 8), 0);
    assert_int_equal(state_maint_of(fx->st, "fs/open.c", v, 8), 1);
    assert_false(state_maint_trusted(fx->st, "greg@maint.example"));
}

static void
test_seen(void **state)
{
    struct fx *fx = *state;
    const time_t t0 = 1796083200;
    uint64_t fp = 0x1234567890abcdefULL, other = 0x1111;
    uint64_t sim = 0xf0f0f0f0aaaa5555ULL;
    struct classifier_seen seen;
    uint64_t removed = 0;

    assert_int_equal(
        state_seen_record(fx->st, &fp, 1, sim, "first@example.org", "A@Example.org", t0, 30 * DAY),
        0);
    /* a later copy keeps the first sender inside the window */
    assert_int_equal(
        state_seen_record(fx->st, &fp, 1, 0, "second@example.org", NULL, t0 + DAY, 30 * DAY), 0);
    assert_int_equal(state_seen_find(fx->st, &fp, 1, 0, NULL, t0 - DAY, 0, &seen), 0);
    assert_string_equal(seen.message_id, "first@example.org");
    assert_string_equal(seen.from, "a@example.org");
    assert_true(seen.date == (int64_t)t0);
    /* arrival order: only what was recorded before the bound */
    assert_int_equal(state_seen_find(fx->st, &fp, 1, 0, NULL, t0 - DAY, t0, &seen), -ENOENT);
    assert_int_equal(state_seen_find(fx->st, &fp, 1, 0, NULL, t0 - DAY, t0 + 1, &seen), 0);
    assert_int_equal(state_seen_find(fx->st, NULL, 0, sim ^ 0x0101, NULL, t0 - DAY, t0, &seen),
                     -ENOENT);
    /* outside the window */
    assert_int_equal(state_seen_find(fx->st, &fp, 1, 0, NULL, t0 + 1, 0, &seen), -ENOENT);
    /* itself */
    assert_int_equal(state_seen_find(fx->st, &fp, 1, 0, "first@example.org", t0 - DAY, 0, &seen),
                     -ENOENT);
    /* near duplicates by simhash: 2 bits off is near, 12 is not */
    assert_int_equal(state_seen_find(fx->st, NULL, 0, sim ^ 0x0101, NULL, t0 - DAY, 0, &seen), 0);
    assert_string_equal(seen.message_id, "first@example.org");
    assert_int_equal(
        state_seen_find(fx->st, NULL, 0, sim ^ 0x0fff00000000ULL, NULL, t0 - DAY, 0, &seen),
        -ENOENT);
    /* near prose about other code (another key) is a template, not a copy */
    assert_int_equal(state_seen_find(fx->st, &other, 1, sim ^ 0x0101, NULL, t0 - DAY, 0, &seen),
                     -ENOENT);
    /* prune */
    assert_int_equal(state_seen_prune(fx->st, t0 + 1, &removed), 0);
    assert_int_equal(removed, 1);
    assert_int_equal(state_seen_find(fx->st, &fp, 1, sim, NULL, 0, 0, &seen), -ENOENT);
}

/* Issue 31, finding 3: an offline scan of mail the daemon recorded. The
 * earlier report is no duplicate of the later one, whose own entry is
 * there too; the later one is a duplicate of the earlier. An entry of
 * the message itself bounds the look-up even with no bound given. */
static void
test_seen_arrival(void **state)
{
    struct fx *fx = *state;
    const time_t t0 = 1796083200;
    uint64_t fp = 0x5555, sim = 0x0123456789abcdefULL;
    struct classifier_seen seen;

    assert_int_equal(
        state_seen_record(fx->st, &fp, 1, sim, "early@example.org", "a@example.org", t0, 30 * DAY),
        0);
    assert_int_equal(state_seen_record(fx->st, &fp, 1, sim ^ 1, "late@example.org", "b@example.org",
                                       t0 + 60, 30 * DAY),
                     0);
    assert_int_equal(state_seen_find(fx->st, &fp, 1, sim, "early@example.org", t0 - DAY, 0, &seen),
                     -ENOENT);
    assert_int_equal(
        state_seen_find(fx->st, &fp, 1, sim ^ 1, "late@example.org", t0 - DAY, 0, &seen), 0);
    assert_string_equal(seen.message_id, "early@example.org");
    assert_string_equal(seen.from, "a@example.org");
    /* a message never recorded, arrived before both */
    assert_int_equal(
        state_seen_find(fx->st, &fp, 1, sim, "new@example.org", t0 - DAY, t0 - 1, &seen), -ENOENT);
}

static void
test_sender(void **state)
{
    struct fx *fx = *state;
    const time_t t0 = 1796083200 + 3600;
    uint64_t removed = 0;

    assert_int_equal(state_sender_count(fx->st, "a@example.org", t0), 0);
    for (int i = 0; i < 3; i++)
        assert_int_equal(state_sender_add(fx->st, "A@Example.org", t0 + i), 0);
    assert_int_equal(state_sender_add(fx->st, "b@example.org", t0), 0);
    assert_int_equal(state_sender_count(fx->st, "a@example.org", t0 + 60), 3);
    assert_int_equal(state_sender_count(fx->st, "b@example.org", t0), 1);
    assert_int_equal(state_sender_count(fx->st, "a@example.org", t0 + DAY), 0);
    assert_int_equal(state_sender_add(fx->st, "", t0), -EINVAL);
    assert_int_equal(state_sender_prune(fx->st, t0 + DAY, &removed), 0);
    assert_int_equal(removed, 2);
    assert_int_equal(state_sender_count(fx->st, "a@example.org", t0), 0);
}

static void
stat_fn(void *ctx, const struct state_table_stats *s)
{
    unsigned *n = ctx;

    if (strcmp(s->name, "tree_sym") == 0 || strcmp(s->name, "seen_fp") == 0 ||
        strcmp(s->name, "maint_sec") == 0)
        (*n)++;
}

/* The lookup reads what the tables hold and records what a scan leaves. */
static void
test_lookup(void **state)
{
    struct fx *fx = *state;
    const struct state_tree_entry syms[] = {{"hub_port_init", 'f'}};
    struct state_lookup_options o = {
        .duplicate_days = 7, .trust_maintainers = true, .now = 1796083200};
    struct state_lookup sl;
    const struct classifier_lookup *lk;
    uint64_t fp = 42;
    struct classifier_result res = {.fingerprints = &fp,
                                    .n_fingerprints = 1,
                                    .message_id = (char *)"m1@example.org",
                                    .from = (char *)"a@example.org",
                                    .count_sender = true};
    struct classifier_seen seen;
    char label[64];
    unsigned tables = 0;

    assert_int_equal(state_tree_clear(fx->st), 0);
    assert_int_equal(state_tree_put(fx->st, STATE_TREE_SYMBOL, syms, 1, true), 0);
    assert_int_equal(state_tree_finish(fx->st, "2026-11-30", 1), 0);
    assert_int_equal(state_maint_import(fx->st, maintainers, strlen(maintainers), NULL), 0);

    state_lookup_init(&sl, fx->st, &o);
    lk = &sl.lookup;
    assert_true(lk->tree_label(lk->ctx, label, sizeof(label)));
    assert_true(lk->has_symbol(lk->ctx, "hub_port_init"));
    assert_false(lk->has_symbol(lk->ctx, "hub_port_made_up"));
    assert_true(lk->is_trusted(lk->ctx, "greg@maint.example"));
    assert_int_equal(lk->sender_count(lk->ctx, "a@example.org"), 0);
    assert_false(lk->find_duplicate(lk->ctx, &fp, 1, 0, NULL, 0, &seen));

    assert_int_equal(state_lookup_record(&sl, &res), 0);
    assert_int_equal(lk->sender_count(lk->ctx, "a@example.org"), 1);
    assert_true(lk->find_duplicate(lk->ctx, &fp, 1, 0, "m2@example.org", 0, &seen));
    assert_string_equal(seen.message_id, "m1@example.org");
    assert_false(lk->find_duplicate(lk->ctx, &fp, 1, 0, "m1@example.org", 0, &seen));
    /* eight days later the window of seven has passed */
    sl.opts.now += 8 * DAY;
    assert_false(lk->find_duplicate(lk->ctx, &fp, 1, 0, "m2@example.org", 0, &seen));
    /* not trusted when the caller says so */
    sl.opts.trust_maintainers = false;
    assert_false(lk->is_trusted(lk->ctx, "greg@maint.example"));

    assert_int_equal(state_tables_stats(fx->st, stat_fn, &tables), 0);
    assert_int_equal(tables, 3);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_tree, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fixes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_maintainers, setup, teardown),
        cmocka_unit_test_setup_teardown(test_seen_arrival, setup, teardown),
        cmocka_unit_test_setup_teardown(test_seen, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sender, setup, teardown),
        cmocka_unit_test_setup_teardown(test_lookup, setup, teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
