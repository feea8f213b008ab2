/*
 * test_facts.c - the look-up measures (facts.c) and the rules of
 * rules/80-state.rules, with an in-memory struct classifier_lookup: each
 * finding fires on its fixture and stays quiet on the near miss, and no
 * look-up measure moves without a lookup.
 */
#include <ctype.h>
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
#include "facts.h"
#include "fingerprint.h"
#include "message.h"
#include "patch_parse.h"
#include "testutil.h"

#ifndef SLOP_RULES_DIR
#define SLOP_RULES_DIR "rules"
#endif

#define FAKE_MAX 16

/* The "merged" commit, as git log -p prints it: the same change as
 * state/patch-fixed.eml with other context lines and line numbers. */
static const char merged_diff[] =
    "diff --git a/drivers/usb/core/hub.c b/drivers/usb/core/hub.c\n"
    "index 5555555..6666666 100644\n"
    "--- a/drivers/usb/core/hub.c\n"
    "+++ b/drivers/usb/core/hub.c\n"
    "@@ -4901,8 +4901,8 @@ static int hub_port_init(struct usb_hub *hub, struct usb_device *udev,\n"
    " \t\tretval = hub_port_reset(hub, port1, udev, delay, false);\n"
    " \t}\n"
    "-\tusb_put_port(port_dev);\n"
    "+\tusb_put_port_after_reset(port_dev,  retval);\n"
    " \n"
    " \treturn retval;\n";

struct fake {
    bool tree;
    const char *symbols[FAKE_MAX];
    const char *paths[FAKE_MAX];
    const char *configs[FAKE_MAX];
    uint64_t fix_fps[FAKE_MAX];
    size_t n_fix_fps;
    const char *fix_function, *fix_class;
    uint64_t seen_fps[FAKE_MAX];
    size_t n_seen;
    uint64_t seen_simhash;
    const char *seen_id;
    const char *seen_from; /* the earlier message's sender; NULL: unknown */
    int64_t before;        /* the bound find_duplicate was asked with */
    const char *maint_prefix, *maint_addr, *maint_list;
    const char *trusted;
    uint32_t sender;
    unsigned calls;
};

static bool
in_list(const char *const *v, const char *s)
{
    for (size_t i = 0; i < FAKE_MAX && v[i] != NULL; i++)
        if (strcmp(v[i], s) == 0)
            return true;
    return false;
}

static bool
f_label(void *ctx, char *buf, size_t size)
{
    struct fake *f = ctx;

    f->calls++;
    snprintf(buf, size, "indexed tree of 2026-11-30");
    return f->tree;
}

static bool
f_symbol(void *ctx, const char *name)
{
    struct fake *f = ctx;

    f->calls++;
    return in_list(f->symbols, name);
}

static bool
f_path(void *ctx, const char *path)
{
    struct fake *f = ctx;

    f->calls++;
    return in_list(f->paths, path);
}

static bool
f_config(void *ctx, const char *name)
{
    struct fake *f = ctx;

    f->calls++;
    return in_list(f->configs, name);
}

static bool
f_fix(void *ctx, uint64_t fp, struct classifier_fix *ret)
{
    struct fake *f = ctx;

    f->calls++;
    for (size_t i = 0; i < f->n_fix_fps; i++) {
        if (f->fix_fps[i] == fp) {
            snprintf(ret->commit, sizeof(ret->commit), "0123456789abcdef0123456789abcdef01234567");
            snprintf(ret->subject, sizeof(ret->subject), "usb: hub: fix port refcount");
            return true;
        }
    }
    return false;
}

static bool
f_function_fix(void *ctx, const char *function, const char *bug_class, struct classifier_fix *ret)
{
    struct fake *f = ctx;

    f->calls++;
    if (f->fix_function == NULL || strcmp(function, f->fix_function) != 0 ||
        strcmp(bug_class, f->fix_class) != 0)
        return false;
    snprintf(ret->commit, sizeof(ret->commit), "fedcba9876543210fedcba9876543210fedcba98");
    snprintf(ret->subject, sizeof(ret->subject), "usb: hub: fix use-after-free in hub_port_init()");
    return true;
}

static bool
f_duplicate(void *ctx, const uint64_t *fps, size_t n, uint64_t simhash, const char *self_id,
            int64_t before, struct classifier_seen *ret)
{
    struct fake *f = ctx;
    bool hit = false;

    f->calls++;
    f->before = before;
    if (f->seen_id == NULL || (self_id != NULL && strcmp(self_id, f->seen_id) == 0))
        return false;
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < f->n_seen; k++)
            hit |= fps[i] == f->seen_fps[k];
    if (simhash != 0 && f->seen_simhash != 0 &&
        __builtin_popcountll(simhash ^ f->seen_simhash) <= FINGERPRINT_SIMHASH_DISTANCE)
        hit = true;
    if (!hit)
        return false;
    snprintf(ret->message_id, sizeof(ret->message_id), "%s", f->seen_id);
    snprintf(ret->from, sizeof(ret->from), "%s", f->seen_from ? f->seen_from : "");
    ret->date = 1796083200; /* 2026-12-01 */
    return true;
}

static size_t
f_maint(void *ctx, const char *path, struct classifier_maint *ret, size_t max)
{
    struct fake *f = ctx;
    size_t n = 0;

    f->calls++;
    if (f->maint_prefix == NULL || strncmp(path, f->maint_prefix, strlen(f->maint_prefix)) != 0)
        return 0;
    if (n < max) {
        snprintf(ret[n].addr, sizeof(ret[n].addr), "%s", f->maint_addr);
        ret[n++].list = false;
    }
    if (f->maint_list != NULL && n < max) {
        snprintf(ret[n].addr, sizeof(ret[n].addr), "%s", f->maint_list);
        ret[n++].list = true;
    }
    return n;
}

static bool
f_trusted(void *ctx, const char *addr)
{
    struct fake *f = ctx;

    f->calls++;
    return f->trusted != NULL && strcmp(addr, f->trusted) == 0;
}

static uint32_t
f_sender(void *ctx, const char *addr)
{
    struct fake *f = ctx;

    (void)addr;
    f->calls++;
    return f->sender;
}

static struct classifier_lookup
fake_lookup(struct fake *f)
{
    return (struct classifier_lookup){
        .ctx = f,
        .tree_label = f_label,
        .has_symbol = f_symbol,
        .has_path = f_path,
        .has_config = f_config,
        .find_fix = f_fix,
        .find_function_fix = f_function_fix,
        .find_duplicate = f_duplicate,
        .maintainers_of = f_maint,
        .is_trusted = f_trusted,
        .sender_count = f_sender,
    };
}

static void
collect_fp(void *ctx, uint64_t fp)
{
    struct fake *f = ctx;

    if (f->n_fix_fps < FAKE_MAX)
        f->fix_fps[f->n_fix_fps++] = fp;
}

/* The tree every case starts from: the real code the near misses cite. */
static void
fake_tree(struct fake *f)
{
    static const char *const symbols[] = {"hub_port_init",
                                          "usb_hub_release",
                                          "hub_port_reset",
                                          "usb_put_port",
                                          "sys_ioctl",
                                          "hub_event",
                                          NULL};
    static const char *const paths[] = {"drivers/usb/core/hub.c", "drivers/usb/core/",
                                        "drivers/usb/core", "drivers/usb/core/hub.h", NULL};
    static const char *const configs[] = {"CONFIG_USB", NULL};

    memset(f, 0, sizeof(*f));
    f->tree = true;
    memcpy(f->symbols, symbols, sizeof(symbols));
    memcpy(f->paths, paths, sizeof(paths));
    memcpy(f->configs, configs, sizeof(configs));
}

/* Build fixture name's message and apply the facts with lookup f (NULL:
 * no lookup at all). */
static struct message *
facts_for(const char *name, struct fake *f, struct classifier_result *res)
{
    struct classifier_lookup lk;
    struct classifier_envelope env = {.mail_from = ""};
    struct message *m;
    char path[256];

    snprintf(path, sizeof(path), "state/%s", name);
    m = testutil_message_fixture(path);
    memset(res, 0, sizeof(*res));
    if (f != NULL) {
        lk = fake_lookup(f);
        env.lookup = &lk;
    }
    assert_int_equal(facts_apply(m, f ? &env : NULL, res), 0);
    return m;
}

enum setup {
    SETUP_TREE = 0,
    SETUP_NO_TREE,      /* lookups, but no tree indexed */
    SETUP_FIXES,        /* the merged diff's fingerprints */
    SETUP_FUNCTION_FIX, /* hub_port_init, use-after-free */
    SETUP_MAINTAINERS,  /* greg@maint.example for drivers/usb/ */
    SETUP_FLOOD,        /* 12 messages earlier today */
    SETUP_QUIET_SENDER, /* none earlier today */
};

struct measure_case {
    const char *fixture;
    enum setup setup;
    enum measure_id measure;
    double min, max;
    const char *evidence; /* substring of the measure's evidence, or NULL: none */
};

static const struct measure_case measure_cases[] = {
    /* made-up code */
    {"report-made-up.eml", SETUP_TREE, MEASURE_MISSING_IDENTIFIERS, 3, 3,
     "hub_port_verify_descriptor_chain(), usb_hub_apply_quirk_table(), "
     "CONFIG_USB_HUB_VALIDATION not found in the indexed tree of 2026-11-30"},
    {"report-made-up.eml", SETUP_TREE, MEASURE_MISSING_PATHS, 1, 1,
     "drivers/usb/core/hub_quirks.c not found in the indexed tree"},
    {"report-made-up.eml", SETUP_TREE, MEASURE_TREE_INDEXED, 1, 1, NULL},
    {"report-real.eml", SETUP_TREE, MEASURE_MISSING_IDENTIFIERS, 0, 0, NULL},
    {"report-real.eml", SETUP_TREE, MEASURE_MISSING_PATHS, 0, 0, NULL},
    {"report-made-up.eml", SETUP_NO_TREE, MEASURE_MISSING_IDENTIFIERS, 0, 0, NULL},
    {"report-made-up.eml", SETUP_NO_TREE, MEASURE_TREE_INDEXED, 0, 0, NULL},
    /* a diff against a file the tree does not have */
    {"patch-missing-path.eml", SETUP_TREE, MEASURE_DIFF_MISSING_PATHS, 1, 1,
     "drivers/usb/core/hub_quirks.c not found in the indexed tree"},
    {"patch-new-file.eml", SETUP_TREE, MEASURE_DIFF_MISSING_PATHS, 0, 0, NULL},
    {"patch-new-file.eml", SETUP_TREE, MEASURE_MISSING_IDENTIFIERS, 0, 0, NULL},
    {"patch-fixed.eml", SETUP_TREE, MEASURE_DIFF_MISSING_PATHS, 0, 0, NULL},
    /* functions a standalone patch calls that no tree has */
    {"patch-calls-made-up.eml", SETUP_TREE, MEASURE_MISSING_IDENTIFIERS, 2, 2,
     "not found in the indexed tree of 2026-11-30"},
    {"patch-calls-made-up.eml", SETUP_TREE, MEASURE_MISSING_IDENTIFIERS, 2, 2,
     "usb_hub_validate_desc_len() (called)"},
    {"patch-calls-real.eml", SETUP_TREE, MEASURE_MISSING_IDENTIFIERS, 0, 0, NULL},
    {"patch-calls-series.eml", SETUP_TREE, MEASURE_MISSING_IDENTIFIERS, 0, 0, NULL},
    /* already fixed */
    {"patch-fixed.eml", SETUP_FIXES, MEASURE_ALREADY_FIXED, 1, 1,
     "already fixed in 0123456789ab (\"usb: hub: fix port refcount\")"},
    {"patch-unfixed.eml", SETUP_FIXES, MEASURE_ALREADY_FIXED, 0, 0, NULL},
    {"report-fixed.eml", SETUP_FUNCTION_FIX, MEASURE_ALREADY_FIXED, 1, 1,
     "already fixed in fedcba987654 (\"usb: hub: fix use-after-free in hub_port_init()\")"},
    {"report-other-class.eml", SETUP_FUNCTION_FIX, MEASURE_ALREADY_FIXED, 0, 0, NULL},
    /* routing */
    {"patch-missing-path.eml", SETUP_MAINTAINERS, MEASURE_UNCC_MAINTAINERS, 1, 1,
     "maintainers not in Cc: greg@maint.example"},
    {"patch-new-file.eml", SETUP_MAINTAINERS, MEASURE_UNCC_MAINTAINERS, 0, 0, NULL},
    {"report-real.eml", SETUP_MAINTAINERS, MEASURE_UNCC_MAINTAINERS, 1, 1,
     "maintainers not in Cc: greg@maint.example"},
    {"report-real-cc.eml", SETUP_MAINTAINERS, MEASURE_UNCC_MAINTAINERS, 0, 0, NULL},
    /* flood */
    {"report-real.eml", SETUP_FLOOD, MEASURE_SENDER_DAILY, 13, 13,
     "13 patches and reports from sam@reporter.example today"},
    {"report-real.eml", SETUP_QUIET_SENDER, MEASURE_SENDER_DAILY, 1, 1, NULL},
};

static void
setup_fake(struct fake *f, enum setup s)
{
    fake_tree(f);
    switch (s) {
    case SETUP_NO_TREE:
        f->tree = false;
        break;
    case SETUP_FIXES:
        assert_int_equal(
            classifier_diff_fingerprints(merged_diff, strlen(merged_diff), collect_fp, f), 1);
        break;
    case SETUP_FUNCTION_FIX:
        f->fix_function = "hub_port_init";
        f->fix_class = "use-after-free";
        break;
    case SETUP_MAINTAINERS:
        f->maint_prefix = "drivers/usb/";
        f->maint_addr = "greg@maint.example";
        f->maint_list = "linux-usb@vger.kernel.org";
        break;
    case SETUP_FLOOD:
        f->sender = 12;
        break;
    default:
        break;
    }
}

static void
test_measures(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(measure_cases) / sizeof(measure_cases[0]); i++) {
        const struct measure_case *c = &measure_cases[i];
        struct classifier_result res;
        struct fake f;
        struct message *m;
        double v;
        const char *ev;

        setup_fake(&f, c->setup);
        m = facts_for(c->fixture, &f, &res);
        v = m->measures[c->measure];
        ev = m->measure_evidence[c->measure];
        if (v < c->min || v > c->max ||
            (c->evidence != NULL && (ev == NULL || strstr(ev, c->evidence) == NULL))) {
            print_error("case %zu (%s, %s): value %g, evidence '%s'\n", i, c->fixture,
                        measure_name(c->measure), v, ev ? ev : "(none)");
            fail();
        }
        if (c->evidence == NULL && v == 0)
            assert_null(ev);
        free(res.fingerprints);
        free(res.series_root);
        free(res.log_paragraphs);
        message_free(m);
    }
}

/* Without a lookup nothing is looked up and no look-up measure moves,
 * but the fingerprints the caller records are still there. */
static void
test_no_lookup(void **state)
{
    static const char *const fixtures[] = {"report-made-up.eml", "patch-missing-path.eml",
                                           "patch-fixed.eml", "report-fixed.eml"};

    (void)state;
    for (size_t i = 0; i < sizeof(fixtures) / sizeof(fixtures[0]); i++) {
        struct classifier_result res;
        struct message *m = facts_for(fixtures[i], NULL, &res);

        for (int id = MEASURE_TREE_INDEXED; id <= MEASURE_TRUSTED_SENDER; id++) {
            assert_true(m->measures[id] == 0);
            assert_null(m->measure_evidence[id]);
        }
        assert_int_equal(res.n_fingerprints, 1);
        assert_true(res.count_sender);
        free(res.fingerprints);
        free(res.series_root);
        free(res.log_paragraphs);
        message_free(m);
    }
}

/* The fingerprint of a hunk ignores context, line numbers and white
 * space, and changes when the change does. */
static void
test_fingerprints(void **state)
{
    struct fake a = {0}, b = {0};
    static const char other[] = "diff --git a/drivers/usb/core/hub.c b/drivers/usb/core/hub.c\n"
                                "--- a/drivers/usb/core/hub.c\n"
                                "+++ b/drivers/usb/core/hub.c\n"
                                "@@ -1,3 +1,3 @@\n"
                                " \t}\n"
                                "-\tusb_put_port(port_dev);\n"
                                "+\tusb_put_port_after_reset(port_dev, ret);\n";
    static const char moved[] = "diff --git a/drivers/usb/core/hub2.c b/drivers/usb/core/hub2.c\n"
                                "--- a/drivers/usb/core/hub2.c\n"
                                "+++ b/drivers/usb/core/hub2.c\n"
                                "@@ -9,2 +9,2 @@\n"
                                "-\tusb_put_port(port_dev);\n"
                                "+\tusb_put_port_after_reset(port_dev, retval);\n";
    static const char same[] = "diff --git a/drivers/usb/core/hub.c b/drivers/usb/core/hub.c\n"
                               "--- a/drivers/usb/core/hub.c\n"
                               "+++ b/drivers/usb/core/hub.c\n"
                               "@@ -77,2 +77,2 @@ other context\n"
                               "-usb_put_port( port_dev );\n"
                               "+    usb_put_port_after_reset(port_dev,retval);\n";

    (void)state;
    assert_int_equal(classifier_diff_fingerprints(merged_diff, strlen(merged_diff), collect_fp, &a),
                     1);
    assert_int_equal(classifier_diff_fingerprints(same, strlen(same), collect_fp, &b), 1);
    assert_true(a.fix_fps[0] == b.fix_fps[0]);
    assert_int_equal(classifier_diff_fingerprints(other, strlen(other), collect_fp, &b), 1);
    assert_true(a.fix_fps[0] != b.fix_fps[1]);
    assert_int_equal(classifier_diff_fingerprints(moved, strlen(moved), collect_fp, &b), 1);
    assert_true(a.fix_fps[0] != b.fix_fps[2]);
    assert_int_equal(classifier_diff_fingerprints("", 0, collect_fp, &b), 0);
}

/* ---- the fast paths of fingerprint.c against plain reference code ---- */

/* A small deterministic generator, so a failure repeats. */
static uint32_t
test_rand(uint32_t *seed)
{
    *seed = *seed * 1103515245u + 12345u;
    return *seed >> 8;
}

static bool
ref_is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
}

/* The bytes a hunk's fingerprint covers, spelled out: the tag, then the
 * line's bytes but white space, per line of r[first..first + count). */
static size_t
ref_hunk_bytes(const struct region *r, size_t first, size_t count, char tag, char *out,
               size_t *nonblank)
{
    size_t n = 0;

    for (size_t k = first; r->lines != NULL && k < r->n_lines && k < first + count; k++) {
        out[n++] = tag;
        for (size_t i = r->lines[k].offset; i < r->len && r->text[i] != '\n'; i++) {
            if (!ref_is_space(r->text[i])) {
                out[n++] = r->text[i];
                (*nonblank)++;
            }
        }
    }
    return n;
}

struct fp_list {
    uint64_t v[64];
    size_t n;
};

static void
fp_list_add(void *ctx, uint64_t fp)
{
    struct fp_list *l = ctx;

    if (l->n < 64)
        l->v[l->n++] = fp;
}

/* FNV-1a streams, so hashing the path, its NUL and the spelled-out
 * lines in one call must equal the line-by-line hashing of the code. */
static void
ref_fingerprint_hunks(const struct message *m, struct fp_list *out)
{
    static char buf[1 << 16];

    for (size_t i = 0; i < m->n_hunks; i++) {
        const struct patch_hunk *hk = &m->hunks[i];
        const struct patch_file *f = hk->file < m->n_files ? &m->files[hk->file] : NULL;
        const char *path = f == NULL ? NULL : f->new_path ? f->new_path : f->old_path;
        size_t n = 0, nonblank = 0;

        if (path != NULL) {
            memcpy(buf, path, strlen(path) + 1);
            n = strlen(path) + 1;
        }
        n += ref_hunk_bytes(&m->regions[REGION_REMOVED], hk->removed_first, hk->removed_count, '-',
                            buf + n, &nonblank);
        n += ref_hunk_bytes(&m->regions[REGION_ADDED], hk->added_first, hk->added_count, '+',
                            buf + n, &nonblank);
        if (nonblank >= FINGERPRINT_HUNK_MIN)
            fp_list_add(out, fingerprint_fnv(FINGERPRINT_FNV_INIT, buf, n));
    }
}

static void
check_hunks_match(const struct message *m, const char *what)
{
    struct fp_list fast = {0}, slow = {0};
    size_t calls = fingerprint_hunks(m, fp_list_add, &fast);

    ref_fingerprint_hunks(m, &slow);
    if (calls != slow.n || fast.n != slow.n ||
        memcmp(fast.v, slow.v, fast.n * sizeof(fast.v[0])) != 0) {
        print_error("%s: %zu fingerprints, reference %zu\n", what, fast.n, slow.n);
        fail();
    }
}

/* Random diffs whose lines mix every white space byte, other control
 * bytes and UTF-8, cut at every length. */
static void
test_hunk_fingerprint_reference(void **state)
{
    static const char bytes[] = " \t\r\f\v\n\x01\xc3\xa9\x7f_azAZ09(){};-+@/";
    struct classifier_options opts;
    uint32_t seed = 1;

    (void)state;
    classifier_options_default(&opts);
    for (int round = 0; round < 40; round++) {
        char diff[2048];
        size_t len = 0;

        len += (size_t)snprintf(diff + len, sizeof(diff) - len,
                                "diff --git a/x%d.c b/x%d.c\n--- a/x%d.c\n+++ b/x%d.c\n", round,
                                round, round, round);
        for (int hunk = 0; hunk < 3; hunk++) {
            len += (size_t)snprintf(diff + len, sizeof(diff) - len, "@@ -1,6 +1,6 @@\n");
            for (int line = 0; line < 12 && len + 64 < sizeof(diff); line++) {
                size_t n = test_rand(&seed) % 24;

                diff[len++] = " +-"[test_rand(&seed) % 3];
                for (size_t k = 0; k < n; k++) {
                    char c = bytes[test_rand(&seed) % (sizeof(bytes) - 1)];

                    diff[len++] = c == '\n' ? 'n' : c;
                }
                diff[len++] = '\n';
            }
        }
        for (size_t cut = len > 400 ? len - 400 : 0; cut <= len; cut++) {
            struct message *m = calloc(1, sizeof(*m));

            assert_non_null(m);
            assert_int_equal(patch_parse(m, diff, cut, &opts.limits), 0);
            check_hunks_match(m, "random diff");
            message_free(m);
        }
    }
}

/* Map entries the parser never makes: past the end of the text, and a
 * last line with no '\n'. */
static void
test_hunk_fingerprint_edges(void **state)
{
    static char added_text[] = "a b\tc d e f g\n  h\vi\fj\rk";
    static char removed_text[] = "x y z w v u t s r";
    struct region_line added_lines[] = {{0, NULL, 1}, {14, NULL, 2}, {40, NULL, 3}};
    struct region_line removed_lines[] = {{0, NULL, 1}, {17, NULL, 2}, {99, NULL, 3}};
    struct patch_file file = {.new_path = (char *)"dir/file.c"};
    struct patch_hunk hunks[] = {
        {.added_first = 0, .added_count = 3, .removed_first = 0, .removed_count = 3},
        {.added_first = 1, .added_count = 9, .removed_first = 5, .removed_count = 1},
        {.added_first = 2, .added_count = 1, .removed_first = 0, .removed_count = 1},
        {.file = 7, .added_first = 0, .added_count = 2},
    };
    struct message m = {0};

    (void)state;
    m.regions[REGION_ADDED] = (struct region){added_text, strlen(added_text), added_lines, 3};
    m.regions[REGION_REMOVED] =
        (struct region){removed_text, strlen(removed_text), removed_lines, 3};
    m.files = &file;
    m.n_files = 1;
    m.hunks = hunks;
    m.n_hunks = sizeof(hunks) / sizeof(hunks[0]);
    check_hunks_match(&m, "hand-made map");
}

/* The simhash as first written: one counter update per bit per shingle. */
static uint64_t
ref_simhash(const char *text, size_t len)
{
    int32_t v[64] = {0};
    uint64_t w[3] = {0}, out = 0;
    size_t words = 0, i = 0;

    while (i < len && words < 20000) {
        char word[64];
        size_t k = 0;

        while (i < len && !(isalnum((unsigned char)text[i]) && (unsigned char)text[i] < 0x80))
            i++;
        while (i < len && ((isalnum((unsigned char)text[i]) && (unsigned char)text[i] < 0x80) ||
                           text[i] == '_')) {
            if (k < sizeof(word))
                word[k++] = (char)tolower((unsigned char)text[i]);
            i++;
        }
        if (k == 0)
            continue;
        w[0] = w[1];
        w[1] = w[2];
        w[2] = fingerprint_fnv(FINGERPRINT_FNV_INIT, word, k);
        if (++words < 3)
            continue;
        {
            uint64_t sh = fingerprint_fnv(FINGERPRINT_FNV_INIT, w, sizeof(w));

            sh ^= sh >> 30;
            sh *= UINT64_C(0xbf58476d1ce4e5b9);
            sh ^= sh >> 27;
            sh *= UINT64_C(0x94d049bb133111eb);
            sh ^= sh >> 31;
            for (int b = 0; b < 64; b++)
                v[b] += (sh >> b) & 1 ? 1 : -1;
        }
    }
    if (words < FINGERPRINT_SIMHASH_MIN_WORDS)
        return 0;
    for (int b = 0; b < 64; b++)
        if (v[b] > 0)
            out |= UINT64_C(1) << b;
    return out ? out : 1;
}

/* Word counts around the minimum, small vocabularies (counts that tie
 * and carry far), and texts past the word cap. */
static void
test_simhash_reference(void **state)
{
    static const char *const vocab[] = {"the", "Hub",  "port", "x",   "reset_it", "a1",
                                        "é",   "loop", "__",   "ZZZ", "0x1f"};
    size_t cap = 220000;
    char *text = malloc(cap);
    uint32_t seed = 7;

    (void)state;
    assert_non_null(text);
    for (size_t round = 0; round < 60; round++) {
        size_t words = round < 40 ? 25 + round : 1000 * round, vn = 2 + round % 10, len = 0;

        for (size_t k = 0; k < words && len + 16 < cap; k++) {
            const char *w = vocab[test_rand(&seed) % vn];
            size_t n = strlen(w);

            memcpy(text + len, w, n);
            len += n;
            text[len++] = " ,\n.-"[test_rand(&seed) % 5];
        }
        /* Long texts only at a few cuts: the reference is slow. */
        for (size_t cut = len > 40 ? len - 40 : 0; cut <= len; cut += round < 40 ? 1 : 13) {
            uint64_t fast = fingerprint_simhash(text, cut), slow = ref_simhash(text, cut);
            /* Where the CPU has AVX-512, fast took the vector path. */
            uint64_t portable = fingerprint_simhash_portable(text, cut);

            if (fast != slow || portable != slow) {
                print_error("round %zu cut %zu: %#llx, portable %#llx, reference %#llx\n", round,
                            cut, (unsigned long long)fast, (unsigned long long)portable,
                            (unsigned long long)slow);
                fail();
            }
        }
    }
    free(text);
}

/* Words longer than the 64 bytes hashed, up to thousands of bytes,
 * underscores before and inside words, and a word that runs to the end
 * of the text. */
static void
test_simhash_long_words(void **state)
{
    size_t cap = 64 * 1024, lens[] = {1, 2, 63, 64, 65, 130, 700, 2047, 2049, 5000};
    char *text = malloc(cap);
    uint32_t seed = 11;

    (void)state;
    assert_non_null(text);
    for (size_t round = 0; round < 200; round++) {
        size_t len = 0;

        while (len + 5100 < cap && len < 3000 + 90 * round) {
            size_t n = lens[test_rand(&seed) % (sizeof(lens) / sizeof(lens[0]))];

            if (test_rand(&seed) % 4 == 0)
                for (size_t u = test_rand(&seed) % 3 + 1; u > 0; u--)
                    text[len++] = '_';
            for (size_t k = 0; k < n; k++)
                text[len++] = "aB_c9dE"[(test_rand(&seed) + k) % 7];
            text[len++] = " .\n-:"[test_rand(&seed) % 5];
        }
        for (size_t cut = len - 3; cut <= len; cut++) {
            uint64_t slow = ref_simhash(text, cut);

            if (fingerprint_simhash(text, cut) != slow ||
                fingerprint_simhash_portable(text, cut) != slow)
                fail_msg("round %zu cut %zu: not the reference %#llx", round, cut,
                         (unsigned long long)slow);
        }
    }
    free(text);
}

/* The bug classes as first written: a plain search per phrase. */
static unsigned
ref_bug_classes(const char *text, size_t len)
{
    static char low[16u << 10];
    const char *phrase;
    unsigned mask = 0, bit;
    bool word;

    if (len > sizeof(low))
        len = sizeof(low);
    for (size_t i = 0; i < len; i++)
        low[i] = (char)tolower((unsigned char)text[i]);
    for (size_t p = 0; fingerprint_bug_phrase(p, &bit, &phrase, &word); p++) {
        size_t n = strlen(phrase);

        for (size_t at = 0; at + n <= len; at++) {
            if (memcmp(low + at, phrase, n) != 0)
                continue;
            if (!word || ((at == 0 || !isalnum((unsigned char)low[at - 1])) &&
                          (at + n >= len || !isalnum((unsigned char)low[at + n]))))
                mask |= 1u << bit;
        }
    }
    return mask;
}

/* Both paths against the reference: the machine's (the vector one where
 * it has AVX-512) and the portable one. */
static void
check_bug_classes(const char *text, size_t len)
{
    unsigned fast = classifier_bug_classes(text, len), slow = ref_bug_classes(text, len);
    unsigned portable = fingerprint_bug_classes_portable(text, len);

    if (fast != slow || portable != slow) {
        print_error("'%.*s' (%zu bytes): %#x, portable %#x, reference %#x\n",
                    (int)(len < 80 ? len : 80), text, len, fast, portable, slow);
        fail();
    }
}

/* Every phrase in three cases at every offset of a text long enough for
 * a few blocks of the vector path (64 positions each), among fillers
 * that make near misses, and the text cut around the blocks' ends. */
static void
test_bug_classes_blocks(void **state)
{
    static const char fillers[] = "x u-";
    char buf[200];
    const char *phrase;
    unsigned bit;
    bool word;

    (void)state;
    for (size_t p = 0; fingerprint_bug_phrase(p, &bit, &phrase, &word); p++) {
        size_t n = strlen(phrase);

        for (int c = 0; c < 3; c++) {
            for (size_t at = 0; at + n <= 140; at++) {
                size_t cuts[] = {sizeof(buf), at + n, at + n - 1, 65, 66, 67, 130, 131};

                for (size_t i = 0; i < sizeof(buf); i++)
                    buf[i] = fillers[(i + at) % (sizeof(fillers) - 1)];
                for (size_t i = 0; i < n; i++)
                    buf[at + i] =
                        (char)(c == 0   ? phrase[i]
                               : c == 1 ? toupper((unsigned char)phrase[i])
                                        : (i % 2 ? toupper((unsigned char)phrase[i]) : phrase[i]));
                for (size_t k = 0; k < sizeof(cuts) / sizeof(cuts[0]); k++)
                    check_bug_classes(buf, cuts[k]);
            }
        }
    }
}

/* Every pattern, in any case, glued to letters or not, cut at every
 * byte, and straddling the 16 KiB the scan looks at. */
static void
test_bug_classes_reference(void **state)
{
    static const char *const texts[] = {
        "UAF",
        "xuaf",
        "uafx",
        "a uaf.",
        "OOB",
        "oob1",
        "-oob-",
        "leak",
        "Leaks",
        "leaked",
        "kmemleak",
        "race",
        "races",
        "raceway",
        "data race",
        "Data-Race",
        "use-after-free",
        "Use After Free",
        "slab-use-after-free",
        "double free",
        "NULL-ptr-deref",
        "null pointer dereference",
        "Out-Of-Bounds",
        "buffer overflow",
        "overrun",
        "memory leak",
        "DeadLock",
        "circular locking",
        "int overflow",
        "integer underflow",
        "wraparound",
        "uninit-value",
        "uninitialized",
        "uninitialised",
        "divide error",
        "division by zero",
        "divide-by-zero",
        "div by zero",
        "the leakage current; a race: a UAF, oob",
        /* A short word inside longer ones first, then whole. */
        "Call Trace: traced, raced, then a race",
        "leaked; leaky; LEAKS",
        "oobs xoob uafs ouaf",
        "\xc3\xa9uaf\xc3\xa9 le\xff\x61k r\0ace",
        "u",
        "ua",
        "dea",
        "nul",
        "",
    };
    size_t big = (16u << 10) + 64;
    char *buf = malloc(big);

    (void)state;
    assert_non_null(buf);
    for (size_t t = 0; t < sizeof(texts) / sizeof(texts[0]); t++) {
        size_t n = strlen(texts[t]);

        for (size_t cut = 0; cut <= n; cut++)
            check_bug_classes(texts[t], cut);
    }
    /* The NUL inside one text must not end it. */
    check_bug_classes("a r\0ace and a uaf", 17);
    for (size_t t = 0; t < sizeof(texts) / sizeof(texts[0]); t++) {
        size_t n = strlen(texts[t]);

        for (size_t at = (16u << 10) - n - 2; at <= (16u << 10) + 2; at++) {
            memset(buf, 'x', big);
            memcpy(buf + at, texts[t], n);
            check_bug_classes(buf, big);
            buf[at - 1] = ' ';
            check_bug_classes(buf, big);
            check_bug_classes(buf, at + n);
        }
    }
    free(buf);
}

/* The function a trace line names, found as first written: memmem(). */
static bool
ref_traced(const char *p, size_t len, char *name, size_t size)
{
    const char *in, *b, *q;

    if ((!memmem(p, len, "BUG: ", 5) && !memmem(p, len, "WARNING: ", 9)) ||
        (in = memmem(p, len, " in ", 4)) == NULL)
        return false;
    for (b = q = in + 4; q < p + len && (isalnum((unsigned char)*q) || *q == '_'); q++)
        ;
    if (q == b || (size_t)(q - b) >= size)
        return false;
    memcpy(name, b, (size_t)(q - b));
    name[q - b] = '\0';
    return true;
}

/* The functions the lines of text[0..len) name, at most eight, each as
 * ref_traced() finds it in its line, into names. */
static void
ref_traced_lines(const char *text, size_t len, struct strv *names)
{
    const char *p = text, *end = text + len;

    while (p < end && names->n < 8) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
        char name[128];

        if (ref_traced(p, n, name, sizeof(name)))
            assert_int_equal(strv_add(names, name, strlen(name), 64), 0);
        p += n + 1;
    }
}

/* Trace text built from the pieces the search looks for, line breaks
 * among them, cut at every byte: the report key must name the functions
 * the reference finds, line by line. */
static void
test_traced_function_reference(void **state)
{
    static const char *const pieces[] = {
        "BUG: ", "WARNING: ", " in ",    "foo_bar", "B",   "W",     " ",   "i",
        "n",     "BUG:",      "WARNING", "\n",      "x\n", "LOG: ", "NG: "};
    uint32_t seed = 11;

    (void)state;
    for (int round = 0; round < 601; round++) {
        char line[512];
        size_t n = 0;
        /* Most texts of six pieces, as before; some of 30; the last
         * eleven named lines, past the cap of eight. */
        int pieces_n = round % 4 == 3 ? 30 : 6;

        if (round == 600) {
            for (int k = 0; k < 11; k++)
                n += (size_t)snprintf(line + n, sizeof(line) - n, "BUG: x in f%d\n", k);
            pieces_n = 0;
        }
        for (int k = 0; k < pieces_n; k++) {
            const char *piece = pieces[test_rand(&seed) % (sizeof(pieces) / sizeof(pieces[0]))];

            memcpy(line + n, piece, strlen(piece));
            n += strlen(piece);
        }
        for (size_t cut = 0; cut <= n; cut++) {
            struct message *m = calloc(1, sizeof(*m));
            struct classifier_result res = {0};
            struct strv names = {0}, none = {0};
            uint64_t want = 0;

            assert_non_null(m);
            m->kind = CLASSIFIER_KIND_REPORT;
            m->regions[REGION_REPORT].text = strdup("");
            m->regions[REGION_CODE].text = strndup(line, cut);
            m->regions[REGION_CODE].len = cut;
            assert_non_null(m->regions[REGION_REPORT].text);
            assert_non_null(m->regions[REGION_CODE].text);
            ref_traced_lines(line, cut, &names);
            if (names.n > 0) {
                struct strv unique = {0};

                for (size_t i = 0; i < names.n; i++)
                    assert_int_equal(strv_add_unique(&unique, names.v[i], strlen(names.v[i]), 64),
                                     0);
                want = fingerprint_report_key(&unique, &none,
                                              classifier_bug_classes("", 0) |
                                                  classifier_bug_classes(line, cut));
                strv_release(&unique);
            }
            assert_int_equal(facts_apply(m, NULL, &res), 0);
            if ((res.n_fingerprints ? res.fingerprints[0] : 0) != want) {
                print_error("'%.*s': report key %#llx, reference %#llx\n", (int)cut, line,
                            (unsigned long long)(res.n_fingerprints ? res.fingerprints[0] : 0),
                            (unsigned long long)want);
                fail();
            }
            free(res.fingerprints);
            free(res.series_root);
            free(res.log_paragraphs);
            strv_release(&names);
            message_free(m);
        }
    }
}

static void
test_simhash(void **state)
{
    static const char text[] =
        "The hub driver keeps resetting a port when a device never answers the "
        "descriptor request, because the retry counter is reset after the port "
        "is released, so the loop never ends and the hub stays busy forever. "
        "Plugging a crafted device into a test machine shows it within seconds.";
    char edited[sizeof(text)];
    uint64_t a, b, c;

    (void)state;
    memcpy(edited, text, sizeof(text));
    memcpy(strstr(edited, "forever"), "for ever", 8);
    a = fingerprint_simhash(text, strlen(text));
    b = fingerprint_simhash(edited, strlen(edited));
    c = fingerprint_simhash("A different report about a memory leak in the sound "
                            "driver that shows after a suspend and resume cycle on "
                            "a laptop with two codecs and an external amplifier board.",
                            160);
    assert_true(a != 0);
    assert_true(__builtin_popcountll(a ^ b) <= 12);
    assert_true(__builtin_popcountll(a ^ c) > FINGERPRINT_SIMHASH_DISTANCE);
    assert_true(fingerprint_simhash("too short", 9) == 0);
}

static void
test_checkable(void **state)
{
    static const struct {
        const char *name;
        bool checkable;
    } cases[] = {
        {"hub_port_init", true},   {"usb_hub_apply_quirk_table", true},
        {"kfree", false},          {"malloc", false},
        {"trace_usb_hub", false},  {"DEFINE_MUTEX", false},
        {"pthread_create", false}, {"io_uring_prep_read", false},
        {"__x64_sys_ioctl", true}, {"a##b_c", false},
    };

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        if (facts_checkable_symbol(cases[i].name) != cases[i].checkable) {
            print_error("%s\n", cases[i].name);
            fail();
        }
}

/* Rule level: each rule of 80-state.rules fires on its fixture and not
 * on the near miss; the classifier runs the facts itself. */
struct rule_case {
    const char *fixture;
    enum setup setup;
    const char *rule;
    bool fires;
};

static const struct rule_case rule_cases[] = {
    {"report-made-up.eml", SETUP_TREE, "MADE_UP_CODE", true},
    {"report-real.eml", SETUP_TREE, "MADE_UP_CODE", false},
    {"report-made-up.eml", SETUP_NO_TREE, "MADE_UP_CODE", false},
    {"report-made-up.eml", SETUP_TREE, "MADE_UP_PATH", true},
    {"report-real.eml", SETUP_TREE, "MADE_UP_PATH", false},
    {"patch-calls-made-up.eml", SETUP_TREE, "MADE_UP_CODE", true},
    {"patch-calls-real.eml", SETUP_TREE, "MADE_UP_CODE", false},
    {"patch-calls-series.eml", SETUP_TREE, "MADE_UP_CODE", false},
    {"patch-missing-path.eml", SETUP_TREE, "DIFF_AGAINST_MISSING_PATH", true},
    {"patch-new-file.eml", SETUP_TREE, "DIFF_AGAINST_MISSING_PATH", false},
    {"patch-fixed.eml", SETUP_FIXES, "ALREADY_FIXED", true},
    {"patch-unfixed.eml", SETUP_FIXES, "ALREADY_FIXED", false},
    {"report-fixed.eml", SETUP_FUNCTION_FIX, "ALREADY_FIXED", true},
    {"report-other-class.eml", SETUP_FUNCTION_FIX, "ALREADY_FIXED", false},
    {"patch-missing-path.eml", SETUP_MAINTAINERS, "MAINTAINERS_NOT_CC", true},
    {"patch-new-file.eml", SETUP_MAINTAINERS, "MAINTAINERS_NOT_CC", false},
    {"report-real.eml", SETUP_FLOOD, "SENDER_FLOOD", true},
    {"report-real.eml", SETUP_QUIET_SENDER, "SENDER_FLOOD", false},
};

static char rules_dir[64];

static int
setup_rules(void **state)
{
    char src[512], dst[128];
    char *text;
    size_t len;
    FILE *f;

    (void)state;
    strcpy(rules_dir, "/tmp/slop-facts-XXXXXX");
    if (mkdtemp(rules_dir) == NULL)
        return -1;
    snprintf(src, sizeof(src), "%s/80-state.rules", SLOP_RULES_DIR);
    snprintf(dst, sizeof(dst), "%s/80-state.rules", rules_dir);
    text = testutil_read_file(src, &len);
    f = fopen(dst, "w");
    if (f == NULL)
        return -1;
    fwrite(text, 1, len, f);
    fclose(f);
    free(text);
    return 0;
}

static int
teardown_rules(void **state)
{
    char path[128];

    (void)state;
    snprintf(path, sizeof(path), "%s/80-state.rules", rules_dir);
    unlink(path);
    rmdir(rules_dir);
    return 0;
}

static struct classifier_result *
scan_with(const struct classifier *c, const char *fixture, struct fake *f)
{
    struct classifier_lookup lk = fake_lookup(f);
    struct classifier_envelope env = {.mail_from = "", .lookup = &lk};
    struct classifier_result *res = NULL;
    char path[256];
    size_t len;
    char *raw;

    snprintf(path, sizeof(path), "state/%s", fixture);
    raw = testutil_read_fixture(path, &len);
    assert_int_equal(classifier_scan(c, raw, len, &env, &res), 0);
    free(raw);
    return res;
}

static const struct classifier_hit *
find_hit(const struct classifier_result *r, const char *rule)
{
    for (size_t i = 0; i < r->n_hits; i++)
        if (strcmp(r->hits[i].rule, rule) == 0)
            return &r->hits[i];
    return NULL;
}

static void
test_rules(void **state)
{
    struct classifier *c = NULL;

    (void)state;
    assert_int_equal(classifier_new(rules_dir, NULL, NULL, NULL, &c), 0);
    for (size_t i = 0; i < sizeof(rule_cases) / sizeof(rule_cases[0]); i++) {
        const struct rule_case *rc = &rule_cases[i];
        struct classifier_result *res;
        const struct classifier_hit *h;
        struct fake f;

        setup_fake(&f, rc->setup);
        res = scan_with(c, rc->fixture, &f);
        h = find_hit(res, rc->rule);
        if ((h != NULL) != rc->fires) {
            print_error("case %zu: %s on %s: %s\n", i, rc->rule, rc->fixture,
                        h ? "fired" : "quiet");
            fail();
        }
        /* The evidence is the look-up's sentence, not "name=value". */
        if (h != NULL)
            assert_true(h->evidence != NULL && strchr(h->evidence, '=') == NULL);
        classifier_result_free(res);
    }
    classifier_free(c);
}

/* A message seen before under another Message-ID is a duplicate; the
 * same message scanned again (same Message-ID) is not. */
static void
test_duplicate(void **state)
{
    static const char *const fixtures[] = {"patch-fixed.eml", "report-made-up.eml"};
    struct classifier *c = NULL;

    (void)state;
    assert_int_equal(classifier_new(rules_dir, NULL, NULL, NULL, &c), 0);
    for (size_t i = 0; i < sizeof(fixtures) / sizeof(fixtures[0]); i++) {
        struct classifier_result *first, *again, *other;
        struct fake f;

        fake_tree(&f);
        f.tree = false;
        first = scan_with(c, fixtures[i], &f);
        assert_int_equal(first->n_fingerprints, 1);
        f.seen_fps[0] = first->fingerprints[0];
        f.n_seen = 1;
        f.seen_id = "earlier@example.org";
        again = scan_with(c, fixtures[i], &f);
        assert_non_null(find_hit(again, "DUPLICATE"));
        assert_non_null(strstr(find_hit(again, "DUPLICATE")->evidence,
                               "duplicate of <earlier@example.org> from 2026-12-01"));
        /* the near miss: another message */
        other = scan_with(c, i == 0 ? "patch-unfixed.eml" : "report-real.eml", &f);
        assert_null(find_hit(other, "DUPLICATE"));
        classifier_result_free(other);
        classifier_result_free(again);
        /* a new version of a patch repeats its hunks on purpose */
        if (i == 0) {
            struct classifier_lookup lk = fake_lookup(&f);
            struct classifier_envelope env = {.mail_from = "", .lookup = &lk};
            size_t len, at;
            char *raw = testutil_read_fixture("state/patch-fixed.eml", &len);
            char *v2 = malloc(len + 3);

            assert_non_null(v2);
            assert_non_null(strstr(raw, "[PATCH]"));
            at = (size_t)(strstr(raw, "[PATCH]") - raw);
            memcpy(v2, raw, at);
            memcpy(v2 + at, "[PATCH v2]", 10);
            memcpy(v2 + at + 10, raw + at + 7, len - at - 7);
            assert_int_equal(classifier_scan(c, v2, len + 3, &env, &other), 0);
            assert_null(find_hit(other, "DUPLICATE"));
            classifier_result_free(other);
            free(v2);
            free(raw);
        }
        /* itself, under its own Message-ID */
        f.seen_id = first->message_id;
        again = scan_with(c, fixtures[i], &f);
        assert_null(find_hit(again, "DUPLICATE"));
        classifier_result_free(again);
        classifier_result_free(first);
    }
    classifier_free(c);
}

/* Issue 31, finding 2: the same report sent again by its own author is a
 * resend, not a duplicate; the same text from someone else still is. The
 * look-up is asked with the message's arrival, so that only mail that
 * came before it can be what it duplicates. */
static void
test_duplicate_resend(void **state)
{
    static const char *const fixtures[] = {"report-real.eml", "patch-fixed.eml"};
    static const char *const senders[] = {"Sam@Reporter.example", "pat@sender.example"};
    struct classifier *c = NULL;

    (void)state;
    assert_int_equal(classifier_new(rules_dir, NULL, NULL, NULL, &c), 0);
    for (size_t i = 0; i < sizeof(fixtures) / sizeof(fixtures[0]); i++) {
        struct classifier_result *first, *again;
        struct fake f;

        fake_tree(&f);
        f.tree = false;
        first = scan_with(c, fixtures[i], &f);
        assert_int_equal(first->n_fingerprints, 1);
        f.seen_fps[0] = first->fingerprints[0];
        f.seen_simhash = first->simhash;
        f.n_seen = 1;
        f.seen_id = "earlier@example.org";
        f.seen_from = senders[i];
        again = scan_with(c, fixtures[i], &f);
        assert_null(find_hit(again, "DUPLICATE"));
        classifier_result_free(again);

        f.seen_from = "someone-else@example.net";
        again = scan_with(c, fixtures[i], &f);
        assert_non_null(find_hit(again, "DUPLICATE"));
        /* DUPLICATE alone never reaches the tag threshold. */
        if (first->score < 0.5)
            assert_true(again->score < 5.0);
        classifier_result_free(again);
        classifier_result_free(first);
    }
    classifier_free(c);
}

/* The arrival the caller gives is the bound the look-up is asked with. */
static void
test_duplicate_arrival(void **state)
{
    struct classifier *c = NULL;
    struct classifier_result *res = NULL;
    struct fake f;
    struct classifier_lookup lk;
    struct classifier_envelope env = {.mail_from = ""};
    size_t len;
    char *raw = testutil_read_fixture("state/report-real.eml", &len);

    (void)state;
    assert_int_equal(classifier_new(rules_dir, NULL, NULL, NULL, &c), 0);
    fake_tree(&f);
    f.tree = false;
    f.seen_id = "earlier@example.org";
    lk = fake_lookup(&f);
    env.lookup = &lk;
    env.arrival = 1796000000;
    assert_int_equal(classifier_scan(c, raw, len, &env, &res), 0);
    assert_int_equal(f.before, 1796000000);
    classifier_result_free(res);
    free(raw);
    classifier_free(c);
}

/* A maintainer's mail is scored but never answered or held. */
static void
test_trusted(void **state)
{
    struct classifier_options opts;
    struct classifier *c = NULL;
    struct classifier_result *res;
    struct fake f;

    (void)state;
    classifier_options_default(&opts);
    opts.thresholds.score[CLASSIFIER_ACTION_TAG] = 1;
    opts.thresholds.score[CLASSIFIER_ACTION_REPLY] = 2;
    assert_int_equal(classifier_new(rules_dir, &opts, NULL, NULL, &c), 0);
    setup_fake(&f, SETUP_TREE);
    res = scan_with(c, "patch-missing-path.eml", &f);
    assert_false(res->trusted_sender);
    assert_int_equal(res->action, CLASSIFIER_ACTION_REPLY);
    classifier_result_free(res);
    f.trusted = "pat@sender.example";
    res = scan_with(c, "patch-missing-path.eml", &f);
    assert_true(res->trusted_sender);
    assert_non_null(find_hit(res, "DIFF_AGAINST_MISSING_PATH"));
    assert_int_equal(res->action, CLASSIFIER_ACTION_TAG);
    classifier_result_free(res);
    classifier_free(c);
}

static void
test_bug_classes(void **state)
{
    static const struct {
        const char *text;
        const char *cls; /* NULL: none */
    } cases[] = {
        {"BUG: KASAN: slab-use-after-free in foo", "use-after-free"},
        {"fix a UAF in the teardown path", "use-after-free"},
        {"kmemleak: memory leak in bar", "memory-leak"},
        {"general protection fault: NULL pointer dereference", "null-deref"},
        {"the leakage current of the regulator", NULL},
        {"a raceway for the boot path", NULL},
        {"fix a data race on the counter", "race"},
    };

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        unsigned mask = classifier_bug_classes(cases[i].text, strlen(cases[i].text));
        bool ok = true;

        if (cases[i].cls == NULL) {
            ok = mask == 0;
        } else {
            unsigned bit = 0;

            while (classifier_bug_class_name(bit) &&
                   strcmp(classifier_bug_class_name(bit), cases[i].cls) != 0)
                bit++;
            ok = classifier_bug_class_name(bit) != NULL && ((mask >> bit) & 1);
        }
        if (!ok) {
            print_error("'%s': mask %#x\n", cases[i].text, mask);
            fail();
        }
    }
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_measures),
        cmocka_unit_test(test_no_lookup),
        cmocka_unit_test(test_fingerprints),
        cmocka_unit_test(test_simhash),
        cmocka_unit_test(test_checkable),
        cmocka_unit_test(test_bug_classes),
        cmocka_unit_test(test_rules),
        cmocka_unit_test(test_duplicate),
        cmocka_unit_test(test_duplicate_resend),
        cmocka_unit_test(test_duplicate_arrival),
        cmocka_unit_test(test_trusted),
        cmocka_unit_test(test_hunk_fingerprint_reference),
        cmocka_unit_test(test_hunk_fingerprint_edges),
        cmocka_unit_test(test_simhash_reference),
        cmocka_unit_test(test_simhash_long_words),
        cmocka_unit_test(test_bug_classes_reference),
        cmocka_unit_test(test_bug_classes_blocks),
        cmocka_unit_test(test_traced_function_reference),
    };

    return cmocka_run_group_tests(tests, setup_rules, teardown_rules);
}
