/*
 * test_patch_parse.c - subject tags, changelog, trailers, notes, diffstat
 * and diff parsing (patch_parse.c, patch_subject.c, patch_log.c,
 * patch_diff.c), on hand-written kernel patches.
 *
 * Messages are built here without message.c: a calloc'ed struct message,
 * patch_subject_parse() and patch_parse() on the body of a fixture. The
 * local msg_free() frees exactly what those files document they
 * allocate, so AddressSanitizer checks that ownership list too.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "message.h"
#include "patch_parse.h"
#include "patch_subject.h"
#include "text_lines.h"
#include "testutil.h"

static const enum region_id patch_regions[] = {
    REGION_CHANGELOG, REGION_TRAILERS, REGION_NOTES,    REGION_ADDED,
    REGION_REMOVED,   REGION_CONTEXT,  REGION_COMMENTS, REGION_FILES,
};

/* The library's own destructor: a hand-built message owns the same
 * fields as a built one, so nothing here has to track what it frees. */
static void
msg_free(struct message *m)
{
    message_free(m);
}

static void
assert_regions_built(const struct message *m)
{
    for (size_t k = 0; k < sizeof(patch_regions) / sizeof(patch_regions[0]); k++) {
        const struct region *r = &m->regions[patch_regions[k]];

        assert_non_null(r->text);
        assert_int_equal(strlen(r->text), r->len);
        assert_true(r->len == 0 || r->text[r->len - 1] == '\n');
    }
}

/* Parse body[0..len) with subject; len is exact, body need not end in NUL. */
static struct message *
parse_len(const char *subject, const char *body, size_t len, const struct classifier_limits *limits)
{
    struct message *m = calloc(1, sizeof(*m));

    assert_non_null(m);
    if (subject != NULL) {
        m->subject = strdup(subject);
        assert_non_null(m->subject);
    }
    assert_int_equal(patch_subject_parse(m), 0);
    assert_int_equal(patch_parse(m, body, len, limits), 0);
    assert_regions_built(m);
    return m;
}

static struct message *
parse(const char *subject, const char *body)
{
    return parse_len(subject, body, strlen(body), testutil_limits());
}

/* A fixture mail: its Subject header and its body after the first blank
 * line, as message_build() would hand them over for 8bit text/plain. */
static struct message *
parse_fixture(const char *name)
{
    size_t len;
    char *raw = testutil_read_fixture(name, &len);
    char *body = strstr(raw, "\n\n"), *subject = NULL, *s;
    struct message *m;

    assert_non_null(body);
    *body = '\0';
    body += 2;
    s = strstr(raw, "\nSubject: ");
    if (s != NULL) {
        char *e;

        s += 10;
        e = strchr(s, '\n');
        subject = e ? strndup(s, (size_t)(e - s)) : strdup(s);
    }
    m = parse_len(subject, body, len - (size_t)(body - raw), testutil_limits());
    free(subject);
    free(raw);
    return m;
}

/* Line i (0-based) of a region's text, into buf. */
static const char *
region_line(const struct message *m, enum region_id id, size_t i, char *buf, size_t size)
{
    const char *p = m->regions[id].text;

    for (; i > 0 && p != NULL; i--) {
        p = strchr(p, '\n');
        if (p != NULL)
            p++;
    }
    assert_non_null(p);
    snprintf(buf, size, "%.*s", (int)strcspn(p, "\n"), p);
    return buf;
}

static size_t
region_lines(const struct message *m, enum region_id id)
{
    size_t n = 0;

    for (const char *p = m->regions[id].text; *p; p++)
        n += *p == '\n';
    return n;
}

static bool
region_has(const struct message *m, enum region_id id, const char *needle)
{
    return strstr(m->regions[id].text, needle) != NULL;
}

/* ---- subjects ---- */

struct subject_case {
    const char *subject;
    bool tagged;
    const char *prefix;
    unsigned version, index, total;
    bool rfc, resend, cover;
    const char *subsystem;
    const char *summary;
};

static const struct subject_case subject_cases[] = {
    {"[PATCH] usb: typec: mux: fix a leak", true, "PATCH", 1, 0, 0, false, false, false,
     "usb: typec: mux", "fix a leak"},
    {"[PATCH v3 2/7] net: foo: do bar", true, "PATCH v3 2/7", 3, 2, 7, false, false, false,
     "net: foo", "do bar"},
    {"[RFC PATCH net-next v2 01/12] net: sched: add a qdisc", true, "RFC PATCH net-next v2 01/12",
     2, 1, 12, true, false, false, "net: sched", "add a qdisc"},
    {"[PATCH RESEND] hwmon: (lm63) Add locking", true, "PATCH RESEND", 1, 0, 0, false, true, false,
     "hwmon", "(lm63) Add locking"},
    {"[PATCH 0/5] can: bcm: rx_op fixes", true, "PATCH 0/5", 1, 0, 5, false, false, true,
     "can: bcm", "rx_op fixes"},
    {"[PATCH bpf-next] bpf: fix verifier log", true, "PATCH bpf-next", 1, 0, 0, false, false, false,
     "bpf", "fix verifier log"},
    {"[PATCH] [net] ipv6: fix a race", true, "PATCH", 1, 0, 0, false, false, false, "ipv6",
     "fix a race"},
    {"Re: [PATCH v2 1/2] mfd: nct6694: Switch to devm_mfd_add_devices()", true, "PATCH v2 1/2", 2,
     1, 2, false, false, false, "mfd: nct6694", "Switch to devm_mfd_add_devices()"},
    {"Re: Re: usb: hub: odd behaviour", false, NULL, 1, 0, 0, false, false, false, "usb: hub",
     "odd behaviour"},
    {"[RFC] mm: a new idea", true, "RFC", 1, 0, 0, true, false, false, "mm", "a new idea"},
    {"[PATCHv4 3/3] ext4: fix a crash: null deref", true, "PATCHv4 3/3", 4, 3, 3, false, false,
     false, "ext4", "fix a crash: null deref"},
    {"[PATCH AUTOSEL 6.17-6.12] wifi: mac80211: support S1G", true, "PATCH AUTOSEL 6.17-6.12", 1, 0,
     0, false, false, false, "wifi: mac80211", "support S1G"},
    {"[GIT PULL] USB fixes for 7.1-rc5", false, NULL, 1, 0, 0, false, false, false, NULL,
     "USB fixes for 7.1-rc5"},
    {"Kernel crash in usb driver", false, NULL, 1, 0, 0, false, false, false, NULL,
     "Kernel crash in usb driver"},
    {"Revert \"usb: foo: bar\"", false, NULL, 1, 0, 0, false, false, false, NULL,
     "Revert \"usb: foo: bar\""},
    {"[PATCH v2 0/3", false, NULL, 1, 0, 0, false, false, false, NULL, "[PATCH v2 0/3"},
};

static void
test_subjects(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(subject_cases) / sizeof(subject_cases[0]); i++) {
        const struct subject_case *c = &subject_cases[i];
        struct message *m = calloc(1, sizeof(*m));

        assert_non_null(m);
        m->subject = strdup(c->subject);
        assert_int_equal(patch_subject_parse(m), 0);
        print_message("subject '%s'\n", c->subject);
        assert_int_equal(m->psubj.tagged, c->tagged);
        if (c->prefix)
            assert_string_equal(m->psubj.prefix, c->prefix);
        else
            assert_null(m->psubj.prefix);
        assert_int_equal(m->psubj.version, c->version);
        assert_int_equal(m->psubj.index, c->index);
        assert_int_equal(m->psubj.total, c->total);
        assert_int_equal(m->psubj.rfc, c->rfc);
        assert_int_equal(m->psubj.resend, c->resend);
        assert_int_equal(m->cover_letter, c->cover);
        if (c->subsystem)
            assert_string_equal(m->psubj.subsystem, c->subsystem);
        else
            assert_null(m->psubj.subsystem);
        assert_string_equal(m->psubj.summary, c->summary);
        /* a second call replaces, without leaking */
        assert_int_equal(patch_subject_parse(m), 0);
        assert_int_equal(m->psubj.tagged, c->tagged);
        msg_free(m);
    }
}

static void
test_subject_null(void **state)
{
    struct message *m = calloc(1, sizeof(*m));

    (void)state;
    assert_int_equal(patch_subject_parse(m), 0);
    assert_false(m->psubj.tagged);
    assert_null(m->psubj.summary);
    assert_int_equal(m->psubj.version, 1);
    msg_free(m);
}

/* ---- a normal patch ---- */

static void
test_normal_patch(void **state)
{
    struct message *m = parse_fixture("patch-normal.eml");
    const struct region *add, *rem, *ctx;
    char buf[256];

    (void)state;
    assert_true(m->psubj.tagged);
    assert_string_equal(m->psubj.subsystem, "usb: typec: mux");
    assert_true(m->has_diff);
    assert_true(m->has_separator);
    assert_true(m->has_diffstat);
    assert_false(m->disclosure);
    assert_false(m->truncated);

    /* changelog: the log without trailers, outer blank lines trimmed */
    assert_string_equal(region_line(m, REGION_CHANGELOG, 0, buf, sizeof(buf)),
                        "fwnode_connection_find_matches() returns a negative errno when the");
    assert_int_equal(region_lines(m, REGION_CHANGELOG), 9);
    assert_false(region_has(m, REGION_CHANGELOG, "Signed-off-by"));
    assert_false(region_has(m, REGION_CHANGELOG, "Fixes:"));
    assert_true(region_has(m, REGION_CHANGELOG, "late.\n"));

    /* trailers, in order, with their line in the body */
    assert_int_equal(m->n_trailers, 5);
    assert_string_equal(m->trailers[0].tag, "Fixes");
    assert_string_equal(m->trailers[0].value,
                        "3370db35193b (\"usb: typec: Registering real device entries for the "
                        "muxes\")");
    assert_int_equal(m->trailers[0].line, 11);
    assert_string_equal(m->trailers[1].tag, "Reported-by");
    assert_string_equal(m->trailers[3].tag, "Cc");
    assert_string_equal(m->trailers[3].value, "stable@vger.kernel.org");
    assert_string_equal(m->trailers[4].tag, "Signed-off-by");
    assert_int_equal(m->trailers[4].line, 15);
    assert_int_equal(region_lines(m, REGION_TRAILERS), 5);
    assert_string_equal(region_line(m, REGION_TRAILERS, 4, buf, sizeof(buf)),
                        "Signed-off-by: Jane Doe <jane.doe@example.org>");

    /* diffstat is not notes */
    assert_int_equal(m->regions[REGION_NOTES].len, 0);

    /* files */
    assert_int_equal(m->n_files, 2);
    assert_string_equal(m->files[0].old_path, "drivers/usb/typec/mux.c");
    assert_string_equal(m->files[0].new_path, "drivers/usb/typec/mux.c");
    assert_int_equal(m->files[0].lang, FILE_LANG_C);
    assert_int_equal(m->files[0].added, 4);
    assert_int_equal(m->files[0].removed, 1);
    assert_string_equal(m->files[1].new_path, "drivers/usb/typec/mux.h");
    assert_int_equal(m->files[1].added, 1);
    assert_int_equal(m->files[1].removed, 1);
    assert_string_equal(m->regions[REGION_FILES].text,
                        "drivers/usb/typec/mux.c\ndrivers/usb/typec/mux.h\n");

    /* hunks and their line-map indices */
    assert_int_equal(m->n_hunks, 3);
    assert_int_equal(m->hunks[0].file, 0);
    assert_int_equal(m->hunks[0].old_start, 55);
    assert_int_equal(m->hunks[0].new_count, 7);
    assert_int_equal(m->hunks[0].added_first, 0);
    assert_int_equal(m->hunks[0].added_count, 1);
    assert_int_equal(m->hunks[0].removed_first, 0);
    assert_int_equal(m->hunks[0].removed_count, 1);
    assert_int_equal(m->hunks[1].file, 0);
    assert_int_equal(m->hunks[1].new_start, 96);
    assert_int_equal(m->hunks[1].added_first, 1);
    assert_int_equal(m->hunks[1].added_count, 3);
    assert_int_equal(m->hunks[1].removed_count, 0);
    assert_int_equal(m->hunks[2].file, 1);
    assert_int_equal(m->hunks[2].added_first, 4);
    assert_int_equal(m->hunks[2].removed_first, 1);
    assert_int_equal(m->hunks[2].removed_count, 1);

    add = &m->regions[REGION_ADDED];
    rem = &m->regions[REGION_REMOVED];
    ctx = &m->regions[REGION_CONTEXT];
    assert_int_equal(add->n_lines, 5);
    assert_int_equal(rem->n_lines, 2);
    assert_ptr_equal(add->lines[0].file, m->files[0].new_path);
    assert_int_equal(add->lines[0].line, 58);
    assert_string_equal(region_line(m, REGION_ADDED, 0, buf, sizeof(buf)),
                        "\t\treturn count < 0 ? ERR_PTR(count) : NULL;");
    assert_int_equal(rem->lines[0].line, 58);
    assert_int_equal(add->lines[1].line, 99);
    assert_int_equal(add->lines[2].line, 100);
    assert_int_equal(add->lines[3].line, 104);
    assert_string_equal(region_line(m, REGION_ADDED, 3, buf, sizeof(buf)),
                        "\t\tsw->sw_devs[i] = NULL;");
    assert_ptr_equal(add->lines[4].file, m->files[1].new_path);
    assert_int_equal(add->lines[4].line, 24);
    assert_int_equal(rem->lines[1].line, 24);
    assert_ptr_equal(rem->lines[1].file, m->files[1].new_path);
    /* 6 + 9 + 6 context lines; the first is line 55 of the new file */
    assert_int_equal(ctx->n_lines, 21);
    assert_int_equal(ctx->lines[0].line, 55);
    /* region_line_at() finds the map entry of a match offset */
    assert_int_equal(region_line_at(add, add->lines[3].offset + 3)->line, 104);
    /* no comment was added */
    assert_int_equal(m->regions[REGION_COMMENTS].len, 0);
    msg_free(m);
}

static void
test_notes_v2(void **state)
{
    struct message *m = parse_fixture("patch-notes-v2.eml");
    char buf[256];

    (void)state;
    assert_int_equal(m->psubj.version, 2);
    assert_int_equal(m->psubj.index, 2);
    assert_true(m->has_separator);
    assert_true(m->has_diffstat);
    assert_string_equal(region_line(m, REGION_NOTES, 0, buf, sizeof(buf)), "v2:");
    assert_true(region_has(m, REGION_NOTES, " - build debugfs.o only"));
    assert_true(region_has(m, REGION_NOTES, "Tested with and without CONFIG_DEBUG_FS"));
    assert_false(region_has(m, REGION_NOTES, "file changed"));
    assert_false(region_has(m, REGION_NOTES, "Makefile |"));
    assert_false(region_has(m, REGION_CHANGELOG, "v2:"));
    assert_int_equal(m->n_files, 1);
    assert_int_equal(m->files[0].lang, FILE_LANG_MAKEFILE);
    assert_int_equal(m->files[0].added, 1);
    assert_int_equal(m->regions[REGION_COMMENTS].len, 0);
    assert_int_equal(m->n_trailers, 1);
    msg_free(m);
}

static void
test_markdown_bloat(void **state)
{
    struct message *m = parse_fixture("patch-markdown-bloat.eml");
    const struct region *com;
    char buf[256];

    (void)state;
    assert_true(m->disclosure);
    assert_int_equal(m->n_trailers, 2);
    assert_string_equal(m->trailers[0].tag, "Assisted-by");
    assert_string_equal(region_line(m, REGION_CHANGELOG, 0, buf, sizeof(buf)), "## Summary");
    assert_true(region_has(m, REGION_CHANGELOG, "| all invalid | continue | -ENODEV |"));
    assert_false(region_has(m, REGION_CHANGELOG, "Assisted-by"));

    com = &m->regions[REGION_COMMENTS];
    /* a 10-line kernel-doc block and four one-line comments; the trailing
     * "// Initialize ..." sits on a code line and is not a comment line */
    assert_int_equal(com->n_lines, 14);
    assert_string_equal(region_line(m, REGION_COMMENTS, 0, buf, sizeof(buf)), "");
    assert_string_equal(region_line(m, REGION_COMMENTS, 1, buf, sizeof(buf)),
                        "typec_switch_count_valid - Count the valid switch devices");
    assert_string_equal(region_line(m, REGION_COMMENTS, 10, buf, sizeof(buf)),
                        "Loop over all switch devices");
    assert_string_equal(region_line(m, REGION_COMMENTS, 12, buf, sizeof(buf)),
                        "Increment the valid counter");
    assert_false(region_has(m, REGION_COMMENTS, "/*"));
    assert_false(region_has(m, REGION_COMMENTS, "*/"));
    assert_false(region_has(m, REGION_COMMENTS, "valid = 0"));
    /* comment map entries point at the same file:line as the added line */
    assert_ptr_equal(com->lines[0].file, m->files[0].new_path);
    assert_int_equal(com->lines[0].line, 26);
    assert_int_equal(com->lines[10].line, 41);
    msg_free(m);
}

static void
test_script_comments(void **state)
{
    static const struct {
        const char *path;
        enum file_lang lang;
    } langs[] = {
        {"Documentation/driver-api/usb/typec.rst", FILE_LANG_RST},
        {"drivers/usb/typec/Kconfig", FILE_LANG_KCONFIG},
        {"drivers/usb/typec/Makefile", FILE_LANG_MAKEFILE},
        {"scripts/check_mux.py", FILE_LANG_PYTHON},
        {"tools/testing/selftests/usb/run.sh", FILE_LANG_SHELL},
    };
    static const char *const comments[] = {
        "Say Y here to expose the state of the Type-C muxes and switches",
        "in debugfs. This is only useful when bringing up a new board.",
        "If unsure, say N.",
        "The mux debugging helpers are only built on request.",
        "Echo the switch names so they can be diffed between boots.",
        "Skip when the typec class is not registered on this machine.",
        "power_role is optional on older controllers",
    };
    struct message *m = parse_fixture("patch-scripts.eml");
    char buf[256];

    (void)state;
    assert_int_equal(m->psubj.version, 3);
    assert_int_equal(m->n_files, 5);
    for (size_t i = 0; i < 5; i++) {
        assert_string_equal(m->files[i].new_path, langs[i].path);
        assert_int_equal(m->files[i].lang, langs[i].lang);
    }
    assert_int_equal(m->regions[REGION_COMMENTS].n_lines, 7);
    for (size_t i = 0; i < 7; i++)
        assert_string_equal(region_line(m, REGION_COMMENTS, i, buf, sizeof(buf)), comments[i]);
    /* rst prose is documentation, not comments */
    assert_false(region_has(m, REGION_COMMENTS, "Debugging"));
    assert_true(region_has(m, REGION_ADDED, "With CONFIG_TYPEC_MUX_DEBUG"));
    assert_int_equal(m->files[0].added, 5);
    msg_free(m);
}

static void
test_binary_rename(void **state)
{
    struct message *m = parse_fixture("patch-binary-rename.eml");
    const struct region *rem;

    (void)state;
    assert_true(m->psubj.resend);
    assert_true(m->has_diffstat);
    assert_int_equal(m->n_files, 4);
    /* rename with a change */
    assert_string_equal(m->files[0].old_path, "drivers/usb/typec/mux_old.c");
    assert_string_equal(m->files[0].new_path, "drivers/usb/typec/mux_legacy.c");
    assert_int_equal(m->files[0].added, 1);
    assert_int_equal(m->files[0].removed, 1);
    /* new file */
    assert_null(m->files[1].old_path);
    assert_string_equal(m->files[1].new_path, "drivers/usb/typec/retimer.h");
    assert_int_equal(m->files[1].added, 7);
    assert_int_equal(m->files[1].removed, 0);
    /* binary */
    assert_true(m->files[2].binary);
    assert_string_equal(m->files[2].new_path, "firmware/typec-fw.bin");
    assert_int_equal(m->files[2].added + m->files[2].removed, 0);
    /* deleted file: map entries use the old path */
    assert_string_equal(m->files[3].old_path, "scripts/check_mux.py");
    assert_null(m->files[3].new_path);
    assert_int_equal(m->files[3].removed, 10);
    assert_int_equal(m->n_hunks, 3);
    assert_int_equal(m->hunks[2].file, 3);
    rem = &m->regions[REGION_REMOVED];
    assert_int_equal(rem->n_lines, 11);
    assert_ptr_equal(rem->lines[1].file, m->files[3].old_path);
    assert_int_equal(rem->lines[1].line, 1);
    assert_int_equal(rem->lines[10].line, 10);
    assert_string_equal(m->regions[REGION_FILES].text,
                        "drivers/usb/typec/mux_old.c\ndrivers/usb/typec/mux_legacy.c\n"
                        "drivers/usb/typec/retimer.h\nfirmware/typec-fw.bin\n"
                        "scripts/check_mux.py\n");
    /* the C comment of the new header is a comment line */
    assert_true(region_has(m, REGION_COMMENTS, "SPDX-License-Identifier: GPL-2.0\n"));
    msg_free(m);
}

static void
test_plain_unified(void **state)
{
    struct message *m = parse_fixture("patch-plain-unified.eml");
    char buf[256];

    (void)state;
    assert_true(m->has_diff);
    assert_false(m->has_separator);
    assert_false(m->has_diffstat);
    assert_int_equal(m->n_files, 1);
    assert_string_equal(m->files[0].old_path, "linux-6.8.orig/drivers/usb/core/hub.c");
    assert_string_equal(m->files[0].new_path, "linux-6.8/drivers/usb/core/hub.c");
    assert_int_equal(m->files[0].lang, FILE_LANG_C);
    assert_int_equal(m->files[0].added, 5);
    assert_int_equal(m->files[0].removed, 2);
    assert_int_equal(m->n_trailers, 1);
    assert_int_equal(region_lines(m, REGION_CHANGELOG), 2);
    assert_string_equal(region_line(m, REGION_CHANGELOG, 1, buf, sizeof(buf)),
                        "partial setup, which leaves the port powered. Disconnect on failure.");
    assert_int_equal(m->regions[REGION_ADDED].lines[0].line, 6);
    assert_int_equal(m->regions[REGION_REMOVED].lines[1].line, 7);
    msg_free(m);
}

static void
test_scissors(void **state)
{
    struct message *m = parse_fixture("patch-scissors.eml");
    char buf[256];

    (void)state;
    assert_true(m->psubj.tagged);
    assert_int_equal(m->psubj.index, 1);
    assert_string_equal(region_line(m, REGION_CHANGELOG, 0, buf, sizeof(buf)),
                        "The PPM may change the capability data while we iterate, so read the");
    assert_false(region_has(m, REGION_CHANGELOG, "I think the problem"));
    assert_false(region_has(m, REGION_CHANGELOG, "From:"));
    assert_false(region_has(m, REGION_CHANGELOG, "Subject:"));
    assert_int_equal(m->n_trailers, 1);
    assert_int_equal(m->n_files, 1);
    assert_int_equal(m->files[0].added, 2);
    /* a hunk that starts inside nothing: the one-line comment is context */
    assert_int_equal(m->regions[REGION_COMMENTS].len, 0);
    msg_free(m);
}

static void
test_cover_letter(void **state)
{
    struct message *m = parse_fixture("patch-cover-letter.eml");

    (void)state;
    assert_true(m->cover_letter);
    assert_false(m->has_diff);
    assert_int_equal(m->n_files, 0);
    assert_int_equal(m->n_hunks, 0);
    assert_true(m->has_diffstat);
    assert_true(region_has(m, REGION_CHANGELOG, "Changes in v2:"));
    assert_true(region_has(m, REGION_CHANGELOG, "Jane Doe (3):"));
    assert_false(region_has(m, REGION_CHANGELOG, "files changed"));
    assert_false(region_has(m, REGION_CHANGELOG, "Makefile |"));
    assert_false(region_has(m, REGION_CHANGELOG, "2.39.5"));
    assert_int_equal(m->regions[REGION_FILES].len, 0);
    msg_free(m);
}

/* ---- trailers ---- */

struct trailer_case {
    const char *body;
    size_t n_trailers;
    const char *first_tag;
    bool disclosure;
    const char *changelog; /* exact */
};

static const struct trailer_case trailer_cases[] = {
    {"Fix the leak.\n\nSigned-off-by: A <a@example.org>\n", 1, "Signed-off-by", false,
     "Fix the leak.\n"},
    {"Fix the leak in foo().\nSigned-off-by: A <a@example.org>\n", 1, "Signed-off-by", false,
     "Fix the leak in foo().\n"},
    {"Fix it.\n\nFixes: 0123456789ab (\"foo: bar\")\n\nSigned-off-by: A <a@x.org>\n", 2, "Fixes",
     false, "Fix it.\n"},
    {"Fix it.\n\nSigned-off-by: A <a@x.org>\n\nThanks,\nA\n", 1, "Signed-off-by", false,
     "Fix it.\n\nThanks,\nA\n"},
    {"Fix it.\n\nSigned-off-by: A <a@x.org>\n\nChangelog:\nV1->V2:\n\t* add a tag.\nV2->V3:\n"
     "\t* rebase.\n",
     1, "Signed-off-by", false,
     "Fix it.\n\nChangelog:\nV1->V2:\n\t* add a tag.\nV2->V3:\n\t* rebase.\n"},
    {"Note: this is a plain sentence, not a trailer.\n", 0, NULL, false,
     "Note: this is a plain sentence, not a trailer.\n"},
    {"Fix it.\n\nSigned-off-by: A <a@x.org>\n[greg: reworded the log]\nSigned-off-by: G "
     "<g@x.org>\n",
     2, "Signed-off-by", false, "Fix it.\n\n[greg: reworded the log]\n"},
    {"Fix it.\n\nGenerated-by: some-tool 1.0\nSigned-off-by: A <a@x.org>\n", 2, "Generated-by",
     true, "Fix it.\n"},
    {"Fix it.\n\nCo-developed-by: Claude <noreply@anthropic.com>\nSigned-off-by: A <a@x.org>\n", 2,
     "Co-developed-by", true, "Fix it.\n"},
    {"Fix it.\n\nReviewed-by: B <b@x.org>\n", 1, "Reviewed-by", false, "Fix it.\n"},
    {"Fix it.\nSee the link below for the details.\nLink: https://lore.kernel.org/r/1\nMore "
     "text here.\n",
     1, "Link", false, "Fix it.\nSee the link below for the details.\nMore text here.\n"},
    {"\n\nFrom: Other Author <o@x.org>\n\nFix it.\n\nSigned-off-by: O <o@x.org>\n", 1,
     "Signed-off-by", false, "Fix it.\n"},
    {"Fix it.\n---\nthis text below a bare separator is notes\n", 0, NULL, false, "Fix it.\n"},
    {"", 0, NULL, false, ""},
};

static void
test_trailers(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(trailer_cases) / sizeof(trailer_cases[0]); i++) {
        const struct trailer_case *c = &trailer_cases[i];
        struct message *m = parse("[PATCH] foo: bar", c->body);

        print_message("trailer case %zu\n", i);
        assert_int_equal(m->n_trailers, c->n_trailers);
        if (c->first_tag)
            assert_string_equal(m->trailers[0].tag, c->first_tag);
        assert_int_equal(m->disclosure, c->disclosure);
        assert_string_equal(m->regions[REGION_CHANGELOG].text, c->changelog);
        assert_int_equal(region_lines(m, REGION_TRAILERS), c->n_trailers);
        assert_false(m->has_diff);
        msg_free(m);
    }
}

/* ---- malformed input ---- */

static const char *const garbage_cases[] = {
    "@@ -1,2 +1,2 @@\n+foo\n-bar\n",
    "diff --git a/x.c b/x.c\n--- a/x.c\n+++ b/x.c\n@@ -1,3 +1,3 @@\n+only one line",
    "diff --git a/x.c b/x.c\n--- a/x.c\n+++ b/x.c\n@@ -a,b +c @@\n+foo\n",
    "diff --git\n",
    "diff --git a/x b/x\n@@ -99999999999999 +1 @@\n+x\n",
    "diff --git a/x.c b/x.c\n@@ -1 +1 @@\n-a\n+b\n+c\n+d\n",
    "--- \n+++ \n@@ -0,0 +1 @@\n+x\n",
    "--- /dev/null\n+++ /dev/null\n@@ -0,0 +1,2 @@\n+/* open\n+ * never closed\n",
    "diff --git \"a/with space.c\" \"b/with space.c\"\n--- \"a/with space.c\"\n+++ "
    "\"b/with space.c\"\n@@ -1 +1 @@\n-x\n+y\n",
    "diff --git a/x.c b/x.c\n--- a/x.c\n+++ b/x.c\n@@ -1,2 +1,2 @@\n garbage line\nnot a diff\n",
    "---\n---\n---\n",
    "-- >8 --\n-- >8 --\n",
    "Subject: only a pseudo header\n",
    "diff --git a/Kconfig b/Kconfig\n--- a/Kconfig\n+++ b/Kconfig\n@@ -1 +1,3 @@\n help\n+\t  "
    "text\n+\thelp\n",
    "diff --git a/x.c b/x.c\r\n--- a/x.c\r\n+++ b/x.c\r\n@@ -1 +1 @@\r\n-a\r\n+b\r\n",
};

static void
test_garbage(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(garbage_cases) / sizeof(garbage_cases[0]); i++) {
        size_t len = strlen(garbage_cases[i]);
        /* an exact-size copy without NUL: any read past len trips ASan */
        char *copy = malloc(len ? len : 1);
        struct message *m;

        print_message("garbage case %zu\n", i);
        assert_non_null(copy);
        memcpy(copy, garbage_cases[i], len);
        m = parse_len("[PATCH] x", copy, len, testutil_limits());
        for (size_t h = 0; h < m->n_hunks; h++) {
            assert_true(m->hunks[h].file < m->n_files);
            assert_true(m->hunks[h].added_first + m->hunks[h].added_count <=
                        m->regions[REGION_ADDED].n_lines);
            assert_true(m->hunks[h].removed_first + m->hunks[h].removed_count <=
                        m->regions[REGION_REMOVED].n_lines);
        }
        for (size_t l = 0; l < m->regions[REGION_ADDED].n_lines; l++)
            assert_non_null(m->regions[REGION_ADDED].lines[l].file);
        msg_free(m);
        /* every prefix too: a diff cut anywhere */
        for (size_t cut = 0; cut < len; cut++) {
            m = parse_len("[PATCH] x", copy, cut, testutil_limits());
            msg_free(m);
        }
        free(copy);
    }
}

static void
test_garbage_specifics(void **state)
{
    struct message *m;

    (void)state;
    /* a hunk without a file is ignored */
    m = parse(NULL, garbage_cases[0]);
    assert_int_equal(m->n_files, 0);
    assert_int_equal(m->n_hunks, 0);
    msg_free(m);
    /* quoted names with spaces */
    m = parse(NULL, garbage_cases[8]);
    assert_int_equal(m->n_files, 1);
    assert_string_equal(m->files[0].new_path, "with space.c");
    assert_int_equal(m->files[0].added, 1);
    msg_free(m);
    /* lines after a hunk that are not diff lines end it */
    m = parse(NULL, garbage_cases[9]);
    assert_int_equal(m->n_hunks, 1);
    assert_int_equal(m->regions[REGION_CONTEXT].n_lines, 1);
    msg_free(m);
    /* CRLF line ends are not part of the lines */
    m = parse(NULL, garbage_cases[14]);
    assert_string_equal(m->regions[REGION_ADDED].text, "b\n");
    assert_string_equal(m->files[0].new_path, "x.c");
    msg_free(m);
    /* NUL bytes do not end a region early */
    m = parse_len(NULL, "diff --git a/x b/x\n@@ -0,0 +1 @@\n+a\0b\n", 37, testutil_limits());
    assert_string_equal(m->regions[REGION_ADDED].text, "a b\n");
    msg_free(m);
    /* NULL text is an empty patch */
    m = parse_len(NULL, NULL, 0, testutil_limits());
    assert_false(m->has_diff);
    msg_free(m);
}

/* ---- C comments against a plain reference ---- */

/* The pair search as first written, one byte at a time. */
static const char *
ref_find2(const char *p, size_t len, char a, char b)
{
    for (size_t i = 0; i + 1 < len; i++)
        if (p[i] == a && p[i + 1] == b)
            return p + i;
    return NULL;
}

/* Whether a line of code leaves a block comment open at its end. */
static bool
ref_opens_block(const char *p, size_t len)
{
    for (const char *o = ref_find2(p, len, '/', '*'); o != NULL;
         o = ref_find2(o + 2, len - (size_t)(o + 2 - p), '/', '*')) {
        const char *close = ref_find2(o + 2, len - (size_t)(o + 2 - p), '*', '/');

        if (close == NULL)
            return true;
        o = close;
    }
    return false;
}

/* Random lines of '/', '*', ' ' and 'a' after "x" (code) or after a
 * comment opener: the comment text and whether the next line is inside
 * a block must be what the byte-by-byte search gives. */
static void
test_comment_search_reference(void **state)
{
    static const char alphabet[] = "/* a";
    uint32_t seed = 3;

    (void)state;
    for (int round = 0; round < 3000; round++) {
        char line[32], diff[256], want[64];
        size_t n = 0, tail = (size_t)(seed >> 8) % 14;
        bool comment = round % 2 == 1;
        const char *body, *close;
        struct message *m;
        int len;

        memcpy(line, comment ? "/* " : "x", comment ? 3 : 1);
        n = comment ? 3 : 1;
        for (size_t k = 0; k < tail; k++) {
            seed = seed * 1103515245u + 12345u;
            line[n++] = alphabet[(seed >> 8) % 4];
        }
        seed = seed * 1103515245u + 12345u;
        line[n] = '\0';
        len = snprintf(diff, sizeof(diff), "diff --git a/f.c b/f.c\n@@ -0,0 +1,2 @@\n+%s\n+next\n",
                       line);
        m = parse_len(NULL, diff, (size_t)len, testutil_limits());
        want[0] = '\0';
        if (comment) {
            /* comment_c(): the text up to the closer, trimmed */
            size_t tl;

            body = line + 3;
            close = ref_find2(body, n - 3, '*', '/');
            tl = close ? (size_t)(close - body) : n - 3;
            while (tl > 0 && (body[tl - 1] == ' '))
                tl--;
            while (tl > 0 && body[0] == ' ') {
                body++;
                tl--;
            }
            snprintf(want, sizeof(want), "%.*s\n%s", (int)tl, body, close ? "" : "next\n");
        } else if (ref_opens_block(line, n)) {
            snprintf(want, sizeof(want), "next\n");
        }
        if (strcmp(m->regions[REGION_COMMENTS].text, want) != 0) {
            print_error("line '%s': comments '%s', reference '%s'\n", line,
                        m->regions[REGION_COMMENTS].text, want);
            fail();
        }
        msg_free(m);
    }
}

/* One NUL anywhere in the text: every region it reaches gets a space. */
static void
test_nul_everywhere(void **state)
{
    static const char text[] = "fix a\0b\n"
                               "\n"
                               "Signed-off-by: A \0B <a@b.c>\n"
                               "---\n"
                               "note\0x\n"
                               "diff --git a/f.c b/f.c\n"
                               "@@ -1,2 +1,2 @@\n"
                               " c\0d\n"
                               "-r\0s\n"
                               "+/* p\0q */\n";
    struct message *m;

    (void)state;
    m = parse_len(NULL, text, sizeof(text) - 1, testutil_limits());
    assert_string_equal(m->regions[REGION_CHANGELOG].text, "fix a b\n");
    assert_string_equal(m->regions[REGION_TRAILERS].text, "Signed-off-by: A  B <a@b.c>\n");
    assert_string_equal(m->regions[REGION_NOTES].text, "note x\n");
    assert_string_equal(m->regions[REGION_CONTEXT].text, "c d\n");
    assert_string_equal(m->regions[REGION_REMOVED].text, "r s\n");
    assert_string_equal(m->regions[REGION_ADDED].text, "/* p q */\n");
    assert_string_equal(m->regions[REGION_COMMENTS].text, "p q\n");
    msg_free(m);
}

/* Notes keep inner blank lines, drop outer ones and every diffstat line
 * wherever it stands. */
static void
test_notes_layouts(void **state)
{
    static const struct {
        const char *notes, *want;
        bool stat;
    } cases[] = {
        {"", "", false},
        {"\n\n", "", false},
        {"\n\nv2: a\n\n b | 2 +-\n\nmore\n\n\n", "v2: a\n\n\nmore\n", true},
        {" b | 2 +-\n 1 file changed, 1 insertion(+)\n", "", true},
        {"note\n\n b | 2 +-\n", "note\n", true},
        {" b | 2 +-\n\nnote\n", "note\n", true},
        {"a\n b | 1 +\nb\n", "a\nb\n", true},
        {"a\n \t \n\n b | 1 +\n\t\nb\n\n", "a\n \t \n\n\t\nb\n", true},
        {"a\n\n\nb\n\nc\n", "a\n\n\nb\n\nc\n", false},
        {" create mode 100644 x.c\nz\n", "z\n", false},
    };

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char body[512];
        int len = snprintf(body, sizeof(body),
                           "Fix it.\n---\n%sdiff --git a/f.c b/f.c\n@@ -1 +1 @@\n-a\n+b\n",
                           cases[i].notes);
        struct message *m = parse_len(NULL, body, (size_t)len, testutil_limits());

        if (strcmp(m->regions[REGION_NOTES].text, cases[i].want) != 0 ||
            m->has_diffstat != cases[i].stat) {
            print_error("case %zu: notes '%s', want '%s'\n", i, m->regions[REGION_NOTES].text,
                        cases[i].want);
            fail();
        }
        msg_free(m);
    }
}

/* ---- caps ---- */

static char *
many_files_patch(unsigned files, unsigned hunks_per_file)
{
    size_t cap = 256 + (size_t)files * (128 + hunks_per_file * 64), len = 0;
    char *buf = malloc(cap);

    assert_non_null(buf);
    len += (size_t)snprintf(buf + len, cap - len,
                            "Touch many files.\n\nSigned-off-by: A <a@x>\n---\n");
    for (unsigned f = 0; f < files; f++) {
        len += (size_t)snprintf(buf + len, cap - len,
                                "diff --git a/d/f%u.c b/d/f%u.c\n--- a/d/f%u.c\n+++ b/d/f%u.c\n", f,
                                f, f, f);
        for (unsigned h = 0; h < hunks_per_file; h++)
            len += (size_t)snprintf(buf + len, cap - len, "@@ -%u,1 +%u,1 @@\n-old%u\n+new%u\n",
                                    h * 10 + 1, h * 10 + 1, h, h);
    }
    assert_true(len < cap);
    return buf;
}

static void
test_caps(void **state)
{
    struct classifier_limits lim = *testutil_limits();
    struct message *m;
    char *p;

    (void)state;
    p = many_files_patch(20, 2);
    m = parse_len(NULL, p, strlen(p), &lim);
    assert_int_equal(m->n_files, 20);
    assert_int_equal(m->n_hunks, 40);
    assert_false(m->truncated);
    msg_free(m);

    lim.max_files = 5;
    m = parse_len(NULL, p, strlen(p), &lim);
    assert_int_equal(m->n_files, 5);
    assert_int_equal(m->n_hunks, 10);
    assert_true(m->truncated);
    assert_int_equal(region_lines(m, REGION_FILES), 5);
    msg_free(m);

    lim = *testutil_limits();
    lim.max_hunks = 3;
    m = parse_len(NULL, p, strlen(p), &lim);
    assert_int_equal(m->n_hunks, 3);
    assert_int_equal(m->regions[REGION_ADDED].n_lines, 3);
    assert_true(m->truncated);
    msg_free(m);

    lim = *testutil_limits();
    lim.max_lines = 10;
    m = parse_len(NULL, p, strlen(p), &lim);
    assert_true(m->truncated);
    assert_true(m->regions[REGION_ADDED].n_lines + m->regions[REGION_REMOVED].n_lines < 10);
    msg_free(m);
    free(p);

    lim = *testutil_limits();
    lim.max_line_bytes = 13;
    p = strdup(
        "--- x\n+++ x\n@@ -0,0 +1 @@\n+caf\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\n");
    m = parse_len(NULL, p, strlen(p), &lim);
    assert_true(m->truncated);
    /* cut to 13 bytes, then back to a whole UTF-8 sequence */
    assert_string_equal(m->regions[REGION_ADDED].text, "caf\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\n");
    msg_free(m);
    free(p);
}

/* Two calls append: a log in the body, then an attached patch. */
static void
test_append(void **state)
{
    struct message *m;
    const char *p;

    (void)state;
    m = parse(NULL, "diff --git a/a.c b/a.c\n@@ -1 +1 @@\n-x\n+y\n");
    p = "diff --git a/b.c b/b.c\n@@ -5 +5,2 @@\n-x\n+y\n+z\n";
    assert_int_equal(patch_parse(m, p, strlen(p), testutil_limits()), 0);
    assert_int_equal(m->n_files, 2);
    assert_int_equal(m->n_hunks, 2);
    assert_int_equal(m->hunks[1].file, 1);
    assert_int_equal(m->hunks[1].added_first, 1);
    assert_int_equal(m->hunks[1].added_count, 2);
    assert_string_equal(m->regions[REGION_ADDED].text, "y\ny\nz\n");
    assert_ptr_equal(m->regions[REGION_ADDED].lines[0].file, m->files[0].new_path);
    assert_ptr_equal(m->regions[REGION_ADDED].lines[2].file, m->files[1].new_path);
    assert_int_equal(m->regions[REGION_ADDED].lines[2].line, 6);
    assert_string_equal(m->regions[REGION_FILES].text, "a.c\nb.c\n");
    msg_free(m);
}

/* text_lines_split() against a byte loop: every cut of texts with empty
 * lines, "\r\n" and no last '\n', at every cap. */
static void
test_text_lines_split(void **state)
{
    static const char *const texts[] = {"a\n\nbc\r\n\r\nd", "\n\n\n", "x\ny\n", "\r\nab"};

    (void)state;
    for (size_t t = 0; t < sizeof(texts) / sizeof(texts[0]); t++) {
        const char *text = texts[t];
        size_t full = strlen(text);

        for (size_t len = 0; len <= full; len++) {
            for (size_t max = 0; max <= full + 1; max++) {
                struct text_line want[16];
                size_t n = 0, start = 0;
                bool want_cut = false, cut = true;
                struct text_lines got;

                for (size_t i = 0; i <= len; i++) {
                    if (i < len && text[i] != '\n')
                        continue;
                    if (i == len && start == len)
                        break;
                    if (n == max) {
                        want_cut = true;
                        break;
                    }
                    want[n++] = (struct text_line){start, i - start};
                    start = i + 1;
                }
                print_message("text %zu len %zu max %zu\n", t, len, max);
                assert_int_equal(text_lines_split(text, len, max, &got, &cut), 0);
                assert_int_equal(got.n, n);
                assert_int_equal(cut, want_cut);
                for (size_t i = 0; i < n; i++) {
                    assert_int_equal(got.v[i].off, want[i].off);
                    assert_int_equal(got.v[i].len, want[i].len);
                }
                free(got.v);
            }
        }
    }
}

/* Lines given by the caller: '\r' dropped, long lines cut, at most
 * max_lines taken, and the first limit met (a long line before the line
 * cap) stays the evidence, as when patch_parse() splits the text itself. */
static void
test_given_lines(void **state)
{
    static const char text[] = "log line\r\nsecond \xc3\xa9\xc3\xa9\xc3\xa9 long\nthird\r\n"
                               "fourth\n";
    struct classifier_limits lim = *testutil_limits();
    struct text_lines lines;
    bool cut;

    (void)state;
    lim.max_lines = 3;
    lim.max_line_bytes = 10;
    assert_int_equal(text_lines_split(text, sizeof(text) - 1, 100, &lines, &cut), 0);
    assert_int_equal(lines.n, 4);
    for (int given = 0; given < 2; given++) {
        struct message *m = calloc(1, sizeof(*m));

        assert_non_null(m);
        assert_int_equal(patch_parse_lines(m, text, sizeof(text) - 1, given ? &lines : NULL, &lim),
                         0);
        assert_regions_built(m);
        /* "second é" is 9 bytes: a cut at 10 would split the next 'é'. */
        assert_string_equal(m->regions[REGION_CHANGELOG].text,
                            "log line\nsecond \xc3\xa9\nthird\n");
        assert_true(m->truncated);
        assert_string_equal(m->measure_evidence[MEASURE_LIMIT_HIT], "max_line_bytes=10");
        msg_free(m);
    }
    free(lines.v);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_subjects),
        cmocka_unit_test(test_subject_null),
        cmocka_unit_test(test_normal_patch),
        cmocka_unit_test(test_notes_v2),
        cmocka_unit_test(test_markdown_bloat),
        cmocka_unit_test(test_script_comments),
        cmocka_unit_test(test_binary_rename),
        cmocka_unit_test(test_plain_unified),
        cmocka_unit_test(test_scissors),
        cmocka_unit_test(test_cover_letter),
        cmocka_unit_test(test_trailers),
        cmocka_unit_test(test_garbage),
        cmocka_unit_test(test_garbage_specifics),
        cmocka_unit_test(test_caps),
        cmocka_unit_test(test_append),
        cmocka_unit_test(test_comment_search_reference),
        cmocka_unit_test(test_nul_everywhere),
        cmocka_unit_test(test_notes_layouts),
        cmocka_unit_test(test_text_lines_split),
        cmocka_unit_test(test_given_lines),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
