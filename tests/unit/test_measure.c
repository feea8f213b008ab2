/*
 * test_measure.c - the measures rules compare (measure.c): names, prose
 * counts, typography, Markdown, sections, facts, quotes, traces, diff
 * sizes and comment bloat. Each measure has a case where it fires and
 * one where it stays at zero.
 *
 * Messages are built by hand (regions set directly) or through
 * patch_parse() for the diff measures; message.c is not needed.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "message.h"
#include "patch_parse.h"
#include "testutil.h"

static struct message *
msg_new(enum classifier_kind kind)
{
    struct message *m = calloc(1, sizeof(*m));

    assert_non_null(m);
    m->kind = kind;
    return m;
}

/* The library's own destructor: a hand-built message owns the same
 * fields as a built one, so nothing here has to track what it frees. */
static void
msg_free(struct message *m)
{
    message_free(m);
}

static void
set_region(struct message *m, enum region_id id, const char *text)
{
    region_release(&m->regions[id]);
    m->regions[id].text = strdup(text);
    assert_non_null(m->regions[id].text);
    m->regions[id].len = strlen(text);
}

/* ---- names ---- */

/* The list in docs/rules.md, in enum order: the lower-case enum names. */
static const char *const doc_names[] = {
    "changelog_words",
    "changelog_lines",
    "changelog_long_lines",
    "changed_lines",
    "added_lines",
    "removed_lines",
    "files",
    "hunks",
    "words_per_changed_line",
    "added_comment_lines",
    "added_code_lines",
    "comment_ratio",
    "restating_comments",
    "comment_heavy_blocks",
    "markdown_lines",
    "markdown_density",
    "prose_words",
    "prose_lines",
    "sections",
    "facts_line",
    "em_dashes",
    "curly_quotes",
    "emoji",
    "quoted_lines",
    "quoted_ratio",
    "trace_lines",
    "code_lines",
    "versions",
    "identifiers",
    "recipients",
    "attachments",
    "html_only",
    "report_address",
    "series_index",
    "series_total",
    "patch_version",
    "cover_letter",
    "cover_words",
    "cover_changed_lines",
    "cover_words_per_patch",
    "cover_words_per_changed_line",
    "cover_cases",
    "cover_restated_share",
    /* look-up measures filled by facts.c */
    "tree_indexed",
    "missing_identifiers",
    "missing_paths",
    "diff_missing_paths",
    "already_fixed",
    "duplicate",
    "uncc_maintainers",
    "sender_daily",
    "trusted_sender",
    "series_cover_flagged",
    "series_repeated_words",
    "series_repeated_share",
    "series_repeating_patches",
    "learned_ready",
    "learned_slop",
    "limit_hit",
    "binding_schema_errors",
    "binding_driver_lines",
    "poc_programs",
    "poc_project_calls",
};

static void
test_names(void **state)
{
    enum measure_id id;

    (void)state;
    assert_int_equal(sizeof(doc_names) / sizeof(doc_names[0]), MEASURE__COUNT);
    for (unsigned i = 0; i < MEASURE__COUNT; i++) {
        assert_string_equal(measure_name((enum measure_id)i), doc_names[i]);
        assert_int_equal(measure_parse(doc_names[i], &id), 0);
        assert_int_equal(id, i);
    }
    assert_null(measure_name(MEASURE__COUNT));
    id = MEASURE_FILES;
    assert_int_equal(measure_parse("Changelog_words", &id), -EINVAL);
    assert_int_equal(measure_parse("", &id), -EINVAL);
    assert_int_equal(measure_parse("no_such_measure", &id), -EINVAL);
    assert_int_equal(id, MEASURE_FILES);
}

/* ---- prose measures, one region of text each ---- */

struct text_case {
    const char *what;
    enum classifier_kind kind;
    enum region_id region;
    const char *text;
    enum measure_id measure;
    double expect;
};

#define LONG70 "This sentence is padded out to be exactly seventy characters long ok.."

static const struct text_case text_cases[] = {
    /* words */
    {"words", CLASSIFIER_KIND_PATCH, REGION_CHANGELOG,
     "Fix the NULL dereference in foo_bar() when the device goes away.\n", MEASURE_CHANGELOG_WORDS,
     11},
    {"no words", CLASSIFIER_KIND_PATCH, REGION_CHANGELOG, "", MEASURE_CHANGELOG_WORDS, 0},
    {"utf-8 words", CLASSIFIER_KIND_PATCH, REGION_CHANGELOG,
     "Gr\xc3\xb6\xc3\x9f"
     "e \xc3\xa4ndern f\xc3\xbcr na\xc3\xafve caf\xc3\xa9 \xe2\x80\x94 ok\n",
     MEASURE_CHANGELOG_WORDS, 6},
    {"apostrophes", CLASSIFIER_KIND_PATCH, REGION_CHANGELOG, "don't split it\xe2\x80\x99s words\n",
     MEASURE_CHANGELOG_WORDS, 4},
    /* lines */
    {"lines", CLASSIFIER_KIND_PATCH, REGION_CHANGELOG, "a\n\n  \nb\n", MEASURE_CHANGELOG_LINES, 2},
    {"no lines", CLASSIFIER_KIND_PATCH, REGION_CHANGELOG, "\n\n", MEASURE_CHANGELOG_LINES, 0},
    /* long lines and checkpatch's exemptions */
    {"long", CLASSIFIER_KIND_PATCH, REGION_CHANGELOG, LONG70 " more words\nshort\n",
     MEASURE_CHANGELOG_LONG_LINES, 1},
    {"75 columns", CLASSIFIER_KIND_PATCH, REGION_CHANGELOG, LONG70 " 1234\n",
     MEASURE_CHANGELOG_LONG_LINES, 0},
    {"76 columns", CLASSIFIER_KIND_PATCH, REGION_CHANGELOG, LONG70 " 12345\n",
     MEASURE_CHANGELOG_LONG_LINES, 1},
    {"columns not bytes", CLASSIFIER_KIND_PATCH, REGION_CHANGELOG,
     LONG70 " \xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\n", MEASURE_CHANGELOG_LONG_LINES, 0},
    {"url", CLASSIFIER_KIND_PATCH, REGION_CHANGELOG,
     "See https://bugzilla.kernel.org/show_bug.cgi?id=123456 for the details of this report\n",
     MEASURE_CHANGELOG_LONG_LINES, 0},
    {"fixes", CLASSIFIER_KIND_PATCH, REGION_CHANGELOG,
     "Fixes: 0123456789ab (\"usb: typec: a very long subject line that goes past the limit\")\n",
     MEASURE_CHANGELOG_LONG_LINES, 0},
    {"tag", CLASSIFIER_KIND_PATCH, REGION_CHANGELOG,
     "Reported-by: Somebody With A Long Name <somebody.with.a.long.name@example.com>\n",
     MEASURE_CHANGELOG_LONG_LINES, 0},
    {"timestamp", CLASSIFIER_KIND_PATCH, REGION_CHANGELOG,
     "[   12.345678] usb 1-1: new high-speed USB device number 2 using xhci_hcd now\n",
     MEASURE_CHANGELOG_LONG_LINES, 0},
    {"stack", CLASSIFIER_KIND_PATCH, REGION_CHANGELOG,
     "  usb_hub_port_connect_change_and_other_long_names+0x1a2/0x3f0 [usbcore] here\n",
     MEASURE_CHANGELOG_LONG_LINES, 0},
    {"warning", CLASSIFIER_KIND_PATCH, REGION_CHANGELOG,
     "WARNING: CPU: 3 PID: 1234 at drivers/usb/core/hub.c:1234 hub_event+0x10/0x20 x\n",
     MEASURE_CHANGELOG_LONG_LINES, 0},
    {"dump paragraph", CLASSIFIER_KIND_PATCH, REGION_CHANGELOG,
     "WARNING: CPU: 0 PID: 1 at fs/btrfs/ctree.c:10\n"
     "CPU: 0 PID: 16153 Comm: snapperd Not tainted 5.2.9-1-default #1 openSUSE "
     "Tumbleweed\n\n" LONG70 " after the dump\n",
     MEASURE_CHANGELOG_LONG_LINES, 1},
    {"diffstat", CLASSIFIER_KIND_PATCH, REGION_CHANGELOG,
     " drivers/usb/typec/a/very/long/path/that/goes/on/and/on/mux.c         | 12 ++--\n",
     MEASURE_CHANGELOG_LONG_LINES, 0},
    /* markdown */
    {"markdown", CLASSIFIER_KIND_REPORT, REGION_REPORT,
     "## Summary\n**Bold** text\n```\ncode\n```\n| a | b |\n|---|:-:|\n- **Lead:** x\n"
     "- plain bullet\n# echo 1 > /proc/sys/kernel/foo\n__init__ and __func__ are identifiers\n"
     "# -> the file is empty now\ncleared in __qdisc_run(), __netif_schedule\n",
     MEASURE_MARKDOWN_LINES, 7},
    {"ascii diagram is no table", CLASSIFIER_KIND_REPORT, REGION_REPORT,
     "|<- RO ->|<- used ->|<--- RO --->|\n|///////|         |\n", MEASURE_MARKDOWN_LINES, 0},
    {"no markdown", CLASSIFIER_KIND_REPORT, REGION_REPORT,
     "Plain text.\n- a plain bullet\n  * another\n#include <linux/usb.h>\na ** b\n",
     MEASURE_MARKDOWN_LINES, 0},
    {"density", CLASSIFIER_KIND_REPORT, REGION_REPORT, "## Impact\n\nsome text\n",
     MEASURE_MARKDOWN_DENSITY, 0.5},
    {"no density", CLASSIFIER_KIND_REPORT, REGION_REPORT, "", MEASURE_MARKDOWN_DENSITY, 0},
    /* prose */
    {"prose words", CLASSIFIER_KIND_REPORT, REGION_REPORT, "The hub stops.\n\nIt hangs.\n",
     MEASURE_PROSE_WORDS, 5},
    {"prose words from body", CLASSIFIER_KIND_OTHER, REGION_BODY, "one two three\n",
     MEASURE_PROSE_WORDS, 3},
    {"prose lines", CLASSIFIER_KIND_REPORT, REGION_REPORT, "a\n\nb\nc\n", MEASURE_PROSE_LINES, 3},
    {"no prose", CLASSIFIER_KIND_REPORT, REGION_CODE, "int x;\n", MEASURE_PROSE_LINES, 0},
    {"patch prose is the log", CLASSIFIER_KIND_PATCH, REGION_REPORT, "not the log\n",
     MEASURE_PROSE_WORDS, 0},
    /* sections */
    {"sections", CLASSIFIER_KIND_REPORT, REGION_REPORT,
     "Summary:\nRoot Cause:\nIMPACT\n**Details**\n## Fix\n2. Proposed Fix\n"
     "This is a normal sentence that happens to end with a colon:\nCONFIG_FOO=y\n"
     "The oops follows.\n",
     MEASURE_SECTIONS, 6},
    {"no sections", CLASSIFIER_KIND_REPORT, REGION_REPORT,
     "The hub stops responding after resume.\nHere is what I see in the log below:\n"
     "   So we have:\nCall Trace:\n- CAN TX\nV1->V2:\nFix the checkpatch.pl warning:\n",
     MEASURE_SECTIONS, 0},
    /* facts */
    {"version line", CLASSIFIER_KIND_REPORT, REGION_REPORT,
     "Hello.\n\nIt crashes.\nOn 6.8.0-45-generic it fails.\n", MEASURE_FACTS_LINE, 4},
    {"v-version", CLASSIFIER_KIND_REPORT, REGION_REPORT, "Hi.\nTested on v6.9 only.\n",
     MEASURE_FACTS_LINE, 2},
    {"rc version", CLASSIFIER_KIND_REPORT, REGION_REPORT, "Seen on 7.1-rc4.\n", MEASURE_FACTS_LINE,
     1},
    {"path line", CLASSIFIER_KIND_REPORT, REGION_REPORT,
     "Hi,\nthe bug is in drivers/usb/core/hub.c somewhere.\n", MEASURE_FACTS_LINE, 2},
    {"function line", CLASSIFIER_KIND_REPORT, REGION_REPORT,
     "Hi,\nthanks.\nusb_submit_urb() fails.\n", MEASURE_FACTS_LINE, 3},
    {"no facts", CLASSIFIER_KIND_REPORT, REGION_REPORT,
     "Hi,\nserver 192.168.1.1 crashed, x() and f() and the web/index.html page\n",
     MEASURE_FACTS_LINE, 0},
    /* typography */
    {"em dashes", CLASSIFIER_KIND_REPORT, REGION_REPORT,
     "a \xe2\x80\x94 b \xe2\x80\x93 c\xe2\x80\x94\n", MEASURE_EM_DASHES, 3},
    {"no em dashes", CLASSIFIER_KIND_REPORT, REGION_REPORT, "a - b -- c\n", MEASURE_EM_DASHES, 0},
    {"curly quotes", CLASSIFIER_KIND_REPORT, REGION_REPORT,
     "\xe2\x80\x98"
     "a\xe2\x80\x99 \xe2\x80\x9c"
     "b\xe2\x80\x9d\n",
     MEASURE_CURLY_QUOTES, 4},
    {"straight quotes", CLASSIFIER_KIND_REPORT, REGION_REPORT, "'a' \"b\"\n", MEASURE_CURLY_QUOTES,
     0},
    {"emoji", CLASSIFIER_KIND_REPORT, REGION_REPORT,
     "\xf0\x9f\x9a\xa8 alert \xe2\x9c\x85 done \xf0\x9f\xa4\x96\n", MEASURE_EMOJI, 3},
    {"no emoji", CLASSIFIER_KIND_REPORT, REGION_REPORT, "caf\xc3\xa9 \xe2\x86\x92 ok\n",
     MEASURE_EMOJI, 0},
    /* quotes */
    {"quoted", CLASSIFIER_KIND_REPLY, REGION_QUOTED, "a\nb\n\n", MEASURE_QUOTED_LINES, 2},
    {"no quoted", CLASSIFIER_KIND_REPLY, REGION_BODY, "a\n", MEASURE_QUOTED_LINES, 0},
    {"quoted ratio, all quoted", CLASSIFIER_KIND_REPLY, REGION_QUOTED, "a\n", MEASURE_QUOTED_RATIO,
     1},
    {"no quoted ratio", CLASSIFIER_KIND_REPLY, REGION_BODY, "a\n", MEASURE_QUOTED_RATIO, 0},
    /* traces */
    {"trace", CLASSIFIER_KIND_REPORT, REGION_CODE,
     "[   12.345678] BUG: KASAN: slab-use-after-free in hub_event+0x1a/0x40\nCall Trace:\n"
     " <TASK>\n dump_stack_lvl+0x4e/0x70\nint main(void) { return 0; }\n",
     MEASURE_TRACE_LINES, 4},
    {"no trace", CLASSIFIER_KIND_REPORT, REGION_CODE, "int main(void)\n{\n}\n", MEASURE_TRACE_LINES,
     0},
    {"code lines", CLASSIFIER_KIND_REPORT, REGION_CODE, "int main(void)\n\n{\n}\n",
     MEASURE_CODE_LINES, 3},
    {"no code lines", CLASSIFIER_KIND_REPORT, REGION_REPORT, "text\n", MEASURE_CODE_LINES, 0},
    /* Both from one pass: white-space lines count as neither. */
    {"code lines of a trace", CLASSIFIER_KIND_REPORT, REGION_CODE,
     "BUG: x\n \t\n\nCall Trace:\nint x;\n\r\n RIP: 0010:f+0x1/0x2", MEASURE_CODE_LINES, 4},
    {"trace lines among code", CLASSIFIER_KIND_REPORT, REGION_CODE,
     "BUG: x\n \t\n\nCall Trace:\nint x;\n\r\n RIP: 0010:f+0x1/0x2", MEASURE_TRACE_LINES, 3},
    /* Table rows count once a rule is seen, before or after them. */
    {"table rows around the rule", CLASSIFIER_KIND_REPORT, REGION_REPORT,
     "| a | b |\n|---|---|\n| 1 | 2 |\n", MEASURE_MARKDOWN_LINES, 3},
    {"table rows, no rule", CLASSIFIER_KIND_REPORT, REGION_REPORT, "| a | b |\n| 1 | 2 |\n",
     MEASURE_MARKDOWN_LINES, 0},
    {"table row and heading", CLASSIFIER_KIND_REPORT, REGION_REPORT,
     "## Title\n| a | b |\n\n|---|---|\n", MEASURE_MARKDOWN_LINES, 3},
    /* A line has no more columns than bytes: the edges of 75. */
    {"75 columns", CLASSIFIER_KIND_PATCH, REGION_CHANGELOG, LONG70 "abcde\n",
     MEASURE_CHANGELOG_LONG_LINES, 0},
    {"76 columns", CLASSIFIER_KIND_PATCH, REGION_CHANGELOG, LONG70 "abcdef\n",
     MEASURE_CHANGELOG_LONG_LINES, 1},
    {"76 bytes, 75 columns", CLASSIFIER_KIND_PATCH, REGION_CHANGELOG, LONG70 "abcd\xc3\xa9\n",
     MEASURE_CHANGELOG_LONG_LINES, 0},
    {"77 bytes, 76 columns", CLASSIFIER_KIND_PATCH, REGION_CHANGELOG, LONG70 "abcde\xc3\xa9\n",
     MEASURE_CHANGELOG_LONG_LINES, 1},
    {"long line with an offset", CLASSIFIER_KIND_PATCH, REGION_CHANGELOG, LONG70 " f+0x1a/0x40\n",
     MEASURE_CHANGELOG_LONG_LINES, 0},
    {"long line, offset after a '+'", CLASSIFIER_KIND_PATCH, REGION_CHANGELOG,
     LONG70 " f++0x1a/0x40\n", MEASURE_CHANGELOG_LONG_LINES, 0},
    {"long line, no offset", CLASSIFIER_KIND_PATCH, REGION_CHANGELOG, LONG70 " f+0y1a/0x40\n",
     MEASURE_CHANGELOG_LONG_LINES, 1},
    {"long line ending in +0x", CLASSIFIER_KIND_PATCH, REGION_CHANGELOG, LONG70 " abcdef+0x\n",
     MEASURE_CHANGELOG_LONG_LINES, 1},
    /* ALL-CAPS headings: one lower-case or other byte rules them out. */
    {"caps heading", CLASSIFIER_KIND_REPORT, REGION_REPORT, "ROOT CAUSE\n", MEASURE_SECTIONS, 1},
    {"caps, last byte lower", CLASSIFIER_KIND_REPORT, REGION_REPORT, "ROOT CAUSe\n",
     MEASURE_SECTIONS, 0},
    {"caps, last byte a digit", CLASSIFIER_KIND_REPORT, REGION_REPORT, "ROOT CAUSE2\n",
     MEASURE_SECTIONS, 0},
    {"caps, two letters", CLASSIFIER_KIND_REPORT, REGION_REPORT, "AB\n", MEASURE_SECTIONS, 0},
    /* foo() cited: the '(' and the ')' found apart. */
    {"function at the end", CLASSIFIER_KIND_REPORT, REGION_REPORT, "x\nsee abc()\n",
     MEASURE_FACTS_LINE, 2},
    {"function name too short", CLASSIFIER_KIND_REPORT, REGION_REPORT, "see ab()\n",
     MEASURE_FACTS_LINE, 0},
    {"open parenthesis at the end", CLASSIFIER_KIND_REPORT, REGION_REPORT, "see abc(\n",
     MEASURE_FACTS_LINE, 0},
    {"double open parenthesis", CLASSIFIER_KIND_REPORT, REGION_REPORT, "see abc(()\n",
     MEASURE_FACTS_LINE, 0},
    {"version v", CLASSIFIER_KIND_REPORT, REGION_REPORT, "on v6.1\n", MEASURE_FACTS_LINE, 1},
    {"version 7", CLASSIFIER_KIND_REPORT, REGION_REPORT, "on 7.0\n", MEASURE_FACTS_LINE, 1},
    {"no version 8", CLASSIFIER_KIND_REPORT, REGION_REPORT, "on 8.1 and 1.2\n", MEASURE_FACTS_LINE,
     0},
    {"words across UTF-8", CLASSIFIER_KIND_REPORT, REGION_REPORT,
     "na\xc3\xafve caf\xc3\xa9 don\xe2\x80\x99t kernel's \xc3\xa9'x a\xff"
     "b\n",
     MEASURE_PROSE_WORDS, 7},
};

static void
test_text_measures(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(text_cases) / sizeof(text_cases[0]); i++) {
        const struct text_case *c = &text_cases[i];
        struct message *m = msg_new(c->kind);

        print_message("case '%s'\n", c->what);
        set_region(m, c->region, c->text);
        measure_compute(m);
        assert_true(fabs(m->measures[c->measure] - c->expect) < 1e-9);
        msg_free(m);
    }
}

/* The report region wins over the body; the body is the fallback. */
static void
test_prose_choice(void **state)
{
    struct message *m = msg_new(CLASSIFIER_KIND_REPORT);

    (void)state;
    set_region(m, REGION_BODY, "one two three four\n");
    set_region(m, REGION_REPORT, "one two\n");
    measure_compute(m);
    assert_int_equal(m->measures[MEASURE_PROSE_WORDS], 2);
    set_region(m, REGION_REPORT, "  \n");
    measure_compute(m);
    assert_int_equal(m->measures[MEASURE_PROSE_WORDS], 4);
    msg_free(m);

    /* a patch counts Markdown in its notes too, against log + notes */
    m = msg_new(CLASSIFIER_KIND_PATCH);
    set_region(m, REGION_CHANGELOG, "Fix it.\n");
    set_region(m, REGION_NOTES, "**v2:** rebased\n");
    measure_compute(m);
    assert_int_equal(m->measures[MEASURE_MARKDOWN_LINES], 1);
    assert_true(fabs(m->measures[MEASURE_MARKDOWN_DENSITY] - 0.5) < 1e-9);
    assert_int_equal(m->measures[MEASURE_PROSE_LINES], 1);
    msg_free(m);
}

static void
test_quoted_ratio(void **state)
{
    struct message *m = msg_new(CLASSIFIER_KIND_REPLY);

    (void)state;
    set_region(m, REGION_QUOTED, "q1\nq2\nq3\n");
    set_region(m, REGION_BODY, "mine\n\n");
    measure_compute(m);
    assert_int_equal(m->measures[MEASURE_QUOTED_LINES], 3);
    assert_true(fabs(m->measures[MEASURE_QUOTED_RATIO] - 0.75) < 1e-9);
    msg_free(m);
}

/* Counts taken from the model's fields. */
static void
test_model_measures(void **state)
{
    struct message *m = msg_new(CLASSIFIER_KIND_REPORT);

    (void)state;
    m->measures[MEASURE_TREE_INDEXED] = 1; /* not measure_compute()'s to clear */
    measure_compute(m);
    for (unsigned i = 0; i <= MEASURE_PATCH_VERSION; i++)
        assert_true(m->measures[i] == 0);
    assert_true(m->measures[MEASURE_TREE_INDEXED] == 1);

    assert_int_equal(strv_add(&m->versions, "6.8.0", 5, 10), 0);
    assert_int_equal(strv_add(&m->versions, "v6.9-rc2", 8, 10), 0);
    assert_int_equal(strv_add(&m->functions, "hub_event", 9, 10), 0);
    assert_int_equal(strv_add(&m->paths, "drivers/usb/core/hub.c", 22, 10), 0);
    assert_int_equal(strv_add(&m->configs, "CONFIG_USB", 10, 10), 0);
    assert_int_equal(strv_add(&m->recipients, "a@example.org", 13, 10), 0);
    m->attachments = 2;
    m->html_only = true;
    m->psubj.tagged = true;
    m->psubj.version = 3;
    m->psubj.index = 2;
    m->psubj.total = 7;
    measure_compute(m);
    assert_int_equal(m->measures[MEASURE_VERSIONS], 2);
    assert_int_equal(m->measures[MEASURE_IDENTIFIERS], 3);
    assert_int_equal(m->measures[MEASURE_RECIPIENTS], 1);
    assert_int_equal(m->measures[MEASURE_ATTACHMENTS], 2);
    assert_int_equal(m->measures[MEASURE_HTML_ONLY], 1);
    assert_int_equal(m->measures[MEASURE_SERIES_INDEX], 2);
    assert_int_equal(m->measures[MEASURE_SERIES_TOTAL], 7);
    assert_int_equal(m->measures[MEASURE_PATCH_VERSION], 3);

    m->psubj.version = 1;
    measure_compute(m);
    assert_int_equal(m->measures[MEASURE_PATCH_VERSION], 1);
    m->psubj.tagged = false;
    measure_compute(m);
    assert_int_equal(m->measures[MEASURE_PATCH_VERSION], 0);
    msg_free(m);
}

/* ---- diff measures, through patch_parse() ---- */

static struct message *
patch_msg(const char *text)
{
    struct message *m = msg_new(CLASSIFIER_KIND_PATCH);

    assert_int_equal(patch_parse(m, text, strlen(text), testutil_limits()), 0);
    measure_compute(m);
    return m;
}

static void
test_diff_sizes(void **state)
{
    struct message *m;

    (void)state;
    m = patch_msg("Fix the leak of the urb in the error path of probe now.\n\n"
                  "Signed-off-by: A <a@example.org>\n---\n"
                  "diff --git a/drivers/a.c b/drivers/a.c\n--- a/drivers/a.c\n+++ b/drivers/a.c\n"
                  "@@ -1,3 +1,3 @@\n a\n-b\n+c\n d\n@@ -10,2 +10,3 @@\n e\n+f\n f\n"
                  "diff --git a/drivers/b.c b/drivers/b.c\n--- a/drivers/b.c\n+++ b/drivers/b.c\n"
                  "@@ -1 +0,0 @@\n-gone\n");
    assert_int_equal(m->measures[MEASURE_CHANGELOG_WORDS], 13);
    assert_int_equal(m->measures[MEASURE_ADDED_LINES], 2);
    assert_int_equal(m->measures[MEASURE_REMOVED_LINES], 2);
    assert_int_equal(m->measures[MEASURE_CHANGED_LINES], 4);
    assert_int_equal(m->measures[MEASURE_FILES], 2);
    assert_int_equal(m->measures[MEASURE_HUNKS], 3);
    assert_true(fabs(m->measures[MEASURE_WORDS_PER_CHANGED_LINE] - 13.0 / 4) < 1e-9);
    assert_int_equal(m->measures[MEASURE_ADDED_CODE_LINES], 2);
    assert_int_equal(m->measures[MEASURE_ADDED_COMMENT_LINES], 0);
    assert_int_equal(m->measures[MEASURE_COMMENT_RATIO], 0);
    msg_free(m);

    /* no diff: words per changed line divides by one */
    m = patch_msg("Just words here.\n");
    assert_int_equal(m->measures[MEASURE_CHANGED_LINES], 0);
    assert_int_equal(m->measures[MEASURE_FILES], 0);
    assert_int_equal(m->measures[MEASURE_HUNKS], 0);
    assert_int_equal(m->measures[MEASURE_WORDS_PER_CHANGED_LINE], 3);
    msg_free(m);
}

/* ---- device-tree bindings (dt_binding.c) ---- */

#define DT_LOG "Add a binding.\n\nSigned-off-by: A <a@example.org>\n---\n"
#define DT_NEW(path, n)                                                                            \
    "diff --git a/" path " b/" path "\nnew file mode 100644\n--- /dev/null\n+++ b/" path           \
    "\n@@ -0,0 +1," #n " @@\n"
#define DT_YAML "Documentation/devicetree/bindings/misc/acme,frob.yaml"

struct dt_case {
    const char *name;
    const char *text;
    unsigned schema; /* binding_schema_errors */
    unsigned driver; /* binding_driver_lines */
};

static const struct dt_case dt_cases[] = {
    {"right $id, http and https, quoted",
     DT_LOG DT_NEW(DT_YAML, 3) "+$id: http://devicetree.org/schemas/misc/acme,frob.yaml#\n"
                               "+  $id: 'https://devicetree.org/schemas/misc/acme,frob.yaml#'\n"
                               "+$ref: /schemas/types.yaml#/definitions/uint32\n",
     0, 0},
    {"$id names another file, counted once per file",
     DT_LOG DT_NEW(DT_YAML, 2) "+$id: http://devicetree.org/schemas/misc/frob.yaml#\n"
                               "+$id: http://devicetree.org/schemas/frob.yaml#\n",
     1, 0},
    {"$id with a base other than devicetree.org is not judged",
     DT_LOG DT_NEW(DT_YAML, 1) "+$id: http://example.org/schemas/x.yaml#\n", 0, 0},
    {"bare $ref to the types schema, with and without the '#'",
     DT_LOG DT_NEW(DT_YAML, 2) "+    $ref: /schemas/types.yaml#\n"
                               "+    $ref: \"/schemas/types.yaml\"\n",
     1, 0},
    {"new .txt binding",
     DT_LOG DT_NEW("Documentation/devicetree/bindings/misc/frob.txt", 1) "+Frob binding\n", 1, 0},
    {"edit of an old .txt binding",
     DT_LOG "diff --git a/Documentation/devicetree/bindings/misc/frob.txt "
            "b/Documentation/devicetree/bindings/misc/frob.txt\n"
            "--- a/Documentation/devicetree/bindings/misc/frob.txt\n"
            "+++ b/Documentation/devicetree/bindings/misc/frob.txt\n"
            "@@ -1,1 +1,2 @@\n Frob binding\n+- clocks: the bus clock\n",
     0, 0},
    {"driver words, each line once; driver-strength counts, drivername does not",
     DT_LOG DT_NEW(DT_YAML, 4) "+  The frob driver maps it; the drivers of the bus too.\n"
                               "+  Drivers load it.\n"
                               "+  drive-strength-microamp: the driver-strength\n"
                               "+  drivername: not a word of its own\n",
     0, 3},
    {"the same lines outside the bindings directory",
     DT_LOG DT_NEW("Documentation/misc/frob.yaml",
                   2) "+$id: http://devicetree.org/schemas/x.yaml#\n"
                      "+  The frob driver maps it.\n",
     0, 0},
    {"removed lines are not read",
     DT_LOG "diff --git a/" DT_YAML " b/" DT_YAML "\n--- a/" DT_YAML "\n+++ b/" DT_YAML "\n"
            "@@ -1,2 +1,1 @@\n-$id: http://devicetree.org/schemas/x.yaml#\n-  The driver.\n keep\n",
     0, 0},
};

static void
test_dt_binding(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(dt_cases) / sizeof(dt_cases[0]); i++) {
        const struct dt_case *c = &dt_cases[i];
        struct message *m = patch_msg(c->text);

        if (m->measures[MEASURE_BINDING_SCHEMA_ERRORS] != c->schema ||
            m->measures[MEASURE_BINDING_DRIVER_LINES] != c->driver)
            fail_msg("%s: schema %.0f (want %u), driver %.0f (want %u)", c->name,
                     m->measures[MEASURE_BINDING_SCHEMA_ERRORS], c->schema,
                     m->measures[MEASURE_BINDING_DRIVER_LINES], c->driver);
        /* a count of mistakes comes with the evidence naming them */
        assert_true((c->schema > 0) ==
                    (m->measure_evidence[MEASURE_BINDING_SCHEMA_ERRORS] != NULL));
        assert_true((c->driver > 0) == (m->measure_evidence[MEASURE_BINDING_DRIVER_LINES] != NULL));
        msg_free(m);
    }
}

static void
test_comment_counts(void **state)
{
    struct message *m;

    (void)state;
    m = patch_msg("diff --git a/x.c b/x.c\n--- a/x.c\n+++ b/x.c\n@@ -1,2 +1,9 @@\n a\n"
                  "+/*\n+ * Why: the device may be gone.\n+ */\n+x = 1; /* trailing */\n"
                  "+\n+y = 2;\n+// one more\n b\n"
                  "diff --git a/doc.rst b/doc.rst\n--- a/doc.rst\n+++ b/doc.rst\n"
                  "@@ -1 +1,3 @@\n a\n+Some documentation.\n+More of it.\n");
    assert_int_equal(m->measures[MEASURE_ADDED_COMMENT_LINES], 4);
    /* the rst lines and the blank line are neither comment nor code */
    assert_int_equal(m->measures[MEASURE_ADDED_CODE_LINES], 2);
    assert_true(fabs(m->measures[MEASURE_COMMENT_RATIO] - 4.0 / 6) < 1e-9);
    assert_int_equal(m->measures[MEASURE_RESTATING_COMMENTS], 0);
    msg_free(m);
}

struct restate_case {
    const char *lines; /* added lines of one hunk, each with its '+' */
    unsigned n;        /* how many added lines */
    double expect;
};

static const struct restate_case restate_cases[] = {
    {"+\t/* Lock the mutex */\n+\tmutex_lock(&dev->lock);\n", 2, 1},
    {"+\t// Increment the counter\n+\tcounter++;\n", 2, 1},
    {"+\t/* Check if the pointer is NULL */\n+\tif (!ptr)\n", 2, 1},
    {"+\t/* Free the buffer */\n+\tkfree(buf);\n", 2, 1},
    {"+\t/* Set the device state to running */\n+\tdevState = STATE_RUNNING;\n", 2, 1},
    {"+\t/* The PPM may change the data while we iterate */\n"
     "+\tnum = ucsi->cap.num_connectors;\n",
     2, 0},
    {"+\t/* Pairs with smp_store_release() in foo_wake() */\n+\tif (READ_ONCE(dev->ready))\n", 2,
     0},
    {"+\t/*\n+\t * Lock the mutex\n+\t */\n+\tmutex_lock(&lock);\n", 4, 0},
    {"+\t/* Lock the mutex */\n+\n+\tmutex_lock(&lock);\n", 3, 0},
    {"+\t/* Lock */\n+\tmutex_lock(&lock);\n", 2, 0},
    {"+\t/* Lock for TX operations */\n+\tspinlock_t tx_lock;\n", 2, 0},
    {"+\t/* Within hysteresis */\n+\tdev_dbg(dev, \"Within hysteresis limit\\n\");\n", 2, 0},
    {"+\t/* Lock the mutex */\n+\t/* and the spinlock */\n", 2, 0},
};

static void
test_restating(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(restate_cases) / sizeof(restate_cases[0]); i++) {
        const struct restate_case *c = &restate_cases[i];
        char buf[1024];
        struct message *m;

        snprintf(buf, sizeof(buf),
                 "diff --git a/d/x.c b/d/x.c\n--- a/d/x.c\n+++ b/d/x.c\n@@ -10,2 +10,%u @@ "
                 "static int f(void)\n {\n%s }\n",
                 c->n + 2, c->lines);
        print_message("restating case %zu\n", i);
        m = patch_msg(buf);
        assert_int_equal(m->n_hunks, 1);
        assert_int_equal(m->measures[MEASURE_ADDED_LINES], c->n);
        assert_true(m->measures[MEASURE_RESTATING_COMMENTS] == c->expect);
        msg_free(m);
    }

    /* a comment followed by a context line, not an added one */
    {
        struct message *m =
            patch_msg("diff --git a/x.c b/x.c\n--- a/x.c\n+++ b/x.c\n@@ -1,2 +1,3 @@\n a\n"
                      "+\t/* Lock the mutex */\n \tmutex_lock(&lock);\n");
        assert_int_equal(m->measures[MEASURE_RESTATING_COMMENTS], 0);
        msg_free(m);
    }
    /* shell comments are not checked for restating */
    {
        struct message *m =
            patch_msg("diff --git a/x.sh b/x.sh\n--- a/x.sh\n+++ b/x.sh\n@@ -1 +1,3 @@\n a\n"
                      "+# run the test\n+run_test\n");
        assert_int_equal(m->measures[MEASURE_ADDED_COMMENT_LINES], 1);
        assert_int_equal(m->measures[MEASURE_RESTATING_COMMENTS], 0);
        msg_free(m);
    }
}

/* The ASCII rule of words (measure.h), byte by byte. */
static size_t
ascii_words(const char *p, size_t len)
{
    size_t n = 0;
    bool in = false;

    for (size_t i = 0; i < len; i++) {
        bool w = (p[i] >= '0' && p[i] <= '9') || (p[i] >= 'a' && p[i] <= 'z') ||
                 (p[i] >= 'A' && p[i] <= 'Z') || p[i] == '_';

        n += w && !in;
        in = w || (in && p[i] == '\'');
    }
    return n;
}

static const char *const prose_texts[] = {
    "Don't split it's words; foo_bar2 x'y 'z' '' a''b _c.\n\nNext line, 3 words.\n",
    "## Heading\n**bold** text \xe2\x80\x94 and \xe2\x80\x9cquotes\xe2\x80\x9d \xf0\x9f\x9a\x80\n"
    "| a | b |\n|---|---|\nkernel\xe2\x80\x99s caf\xc3\xa9 na\xc3\xafve\n",
    "ROOT CAUSE\n\nSee drivers/usb/core/hub.c and hub_event() on v6.9-rc2.\n"
    "[   12.345678] BUG: KASAN: slab-use-after-free in hub_event+0x1a/0x40 and more text here\n"
    "\n" LONG70 "abcdef\n" LONG70 "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\n",
    /* Long ASCII runs, counted eight bytes a step: words across blocks,
     * apostrophes at every lane, and each byte next to a word range. */
    "abcdefgh'ijklmnop q_r 0123456789 /:@[`{^~ '' x' 'y a'b'c'd'e'f'g'h'i\n"
    "ABCDEFGHIJKLMNOPQRSTUVWXYZ_az09 /0 9: @A Z[ `a z{ _ __ a_ _a 1'2'3 end'\n",
};

static const enum measure_id prose_ids[] = {
    MEASURE_CHANGELOG_WORDS, MEASURE_CHANGELOG_LINES,  MEASURE_CHANGELOG_LONG_LINES,
    MEASURE_MARKDOWN_LINES,  MEASURE_MARKDOWN_DENSITY, MEASURE_PROSE_WORDS,
    MEASURE_PROSE_LINES,     MEASURE_SECTIONS,         MEASURE_FACTS_LINE,
    MEASURE_EM_DASHES,       MEASURE_CURLY_QUOTES,     MEASURE_EMOJI,
};

/*
 * A patch's changelog is its prose, and one pass measures both; any
 * other message measures its changelog and its prose apart. Cut at every
 * byte (through UTF-8 sequences too), the two ways must agree, and on
 * ASCII the word count must match the byte-by-byte rule.
 */
static void
test_prose_one_pass(void **state)
{
    (void)state;
    for (size_t t = 0; t < sizeof(prose_texts) / sizeof(prose_texts[0]); t++) {
        size_t len = strlen(prose_texts[t]);

        for (size_t cut = 0; cut <= len; cut++) {
            char *text = strndup(prose_texts[t], cut);
            struct message *patch = msg_new(CLASSIFIER_KIND_PATCH);
            struct message *other = msg_new(CLASSIFIER_KIND_OTHER);
            bool ascii = true;

            assert_non_null(text);
            print_message("text %zu cut %zu\n", t, cut);
            set_region(patch, REGION_CHANGELOG, text);
            set_region(other, REGION_CHANGELOG, text);
            set_region(other, REGION_REPORT, text);
            set_region(other, REGION_BODY, text);
            measure_compute(patch);
            measure_compute(other);
            for (size_t i = 0; i < sizeof(prose_ids) / sizeof(prose_ids[0]); i++)
                assert_true(fabs(patch->measures[prose_ids[i]] - other->measures[prose_ids[i]]) <
                            1e-9);
            for (size_t i = 0; i < cut; i++)
                ascii &= (unsigned char)text[i] < 0x80;
            if (ascii)
                assert_int_equal(patch->measures[MEASURE_PROSE_WORDS], ascii_words(text, cut));
            msg_free(patch);
            msg_free(other);
            free(text);
        }
    }
}

/* The version rule (measure.h, facts_line) read byte by byte from every
 * possible start: the reference for the dot-first search in measure.c. */
static bool
ref_boundary(const char *line, const char *q)
{
    return q == line || !(isalnum((unsigned char)q[-1]) || q[-1] == '_' || q[-1] == '.');
}

static bool
ref_has_version(const char *p, size_t len)
{
    const char *e = p + len;

    for (const char *q = p; q < e; q++) {
        const char *r = q;

        if (!ref_boundary(p, q))
            continue;
        if (*r == 'v' && r + 1 < e && isdigit((unsigned char)r[1])) {
            r++;
            while (r < e && isdigit((unsigned char)*r))
                r++;
            if (r + 1 < e && *r == '.' && isdigit((unsigned char)r[1]))
                return true;
            continue;
        }
        if (*r < '2' || *r > '7' || r + 2 >= e || r[1] != '.' || !isdigit((unsigned char)r[2]))
            continue;
        r += 2;
        while (r < e && isdigit((unsigned char)*r))
            r++;
        if (r == e || !(isalpha((unsigned char)*r) || *r == '_'))
            return true;
    }
    return false;
}

/* Every line of up to five bytes over an alphabet of the bytes that
 * matter (no '/' or '(', so only a version can set facts_line). */
static void
test_version_exhaustive(void **state)
{
    static const char alpha[] = "v2719._-x ";
    const size_t na = sizeof(alpha) - 1;
    struct message *m = msg_new(CLASSIFIER_KIND_REPORT);

    (void)state;
    for (size_t n = 1; n <= 5; n++) {
        size_t total = 1;

        for (size_t i = 0; i < n; i++)
            total *= na;
        for (size_t k = 0; k < total; k++) {
            char line[8];
            size_t x = k;
            bool blank = true;

            for (size_t i = 0; i < n; i++, x /= na) {
                line[i] = alpha[x % na];
                blank &= line[i] == ' ';
            }
            line[n] = '\n';
            line[n + 1] = '\0';
            set_region(m, REGION_REPORT, line);
            measure_compute(m);
            if (m->measures[MEASURE_FACTS_LINE] != (ref_has_version(line, n) && !blank ? 1 : 0))
                fail_msg("line '%.*s'", (int)n, line);
        }
    }
    msg_free(m);
}

/* Notes have tables of their own: a rule in the log does not make the
 * notes' rows Markdown, nor the other way round. */
static void
test_markdown_tables_apart(void **state)
{
    struct message *m = msg_new(CLASSIFIER_KIND_PATCH);

    (void)state;
    set_region(m, REGION_CHANGELOG, "| a | b |\n|---|---|\n");
    set_region(m, REGION_NOTES, "| c | d |\n");
    measure_compute(m);
    assert_int_equal(m->measures[MEASURE_MARKDOWN_LINES], 2);
    set_region(m, REGION_CHANGELOG, "| a | b |\n");
    set_region(m, REGION_NOTES, "| c | d |\n|:--|--:|\n");
    measure_compute(m);
    assert_int_equal(m->measures[MEASURE_MARKDOWN_LINES], 2);
    assert_true(fabs(m->measures[MEASURE_MARKDOWN_DENSITY] - 2.0 / 3.0) < 1e-9);
    msg_free(m);
}

/* Whole fixtures: a plain kernel patch next to a bloated one. */
static void
test_fixture_contrast(void **state)
{
    static const char *const names[] = {"patch-normal.eml", "patch-markdown-bloat.eml"};
    double ms[2][MEASURE__COUNT];

    (void)state;
    for (size_t f = 0; f < 2; f++) {
        size_t len;
        char *raw = testutil_read_fixture(names[f], &len);
        char *body = strstr(raw, "\n\n");
        struct message *m = msg_new(CLASSIFIER_KIND_PATCH);

        assert_non_null(body);
        body += 2;
        assert_int_equal(patch_parse(m, body, len - (size_t)(body - raw), testutil_limits()), 0);
        measure_compute(m);
        memcpy(ms[f], m->measures, sizeof(ms[f]));
        msg_free(m);
        free(raw);
    }
    assert_int_equal(ms[0][MEASURE_CHANGELOG_LONG_LINES], 0);
    assert_int_equal(ms[0][MEASURE_MARKDOWN_LINES], 0);
    assert_int_equal(ms[0][MEASURE_SECTIONS], 0);
    assert_int_equal(ms[0][MEASURE_EMOJI], 0);
    assert_int_equal(ms[0][MEASURE_EM_DASHES], 0);
    assert_int_equal(ms[0][MEASURE_ADDED_COMMENT_LINES], 0);
    assert_int_equal(ms[0][MEASURE_RESTATING_COMMENTS], 0);
    assert_int_equal(ms[0][MEASURE_FACTS_LINE], 1);

    assert_true(ms[1][MEASURE_CHANGELOG_LONG_LINES] >= 3);
    assert_true(ms[1][MEASURE_MARKDOWN_LINES] >= 8);
    assert_true(ms[1][MEASURE_MARKDOWN_DENSITY] > 0.5);
    assert_true(ms[1][MEASURE_SECTIONS] >= 3);
    assert_int_equal(ms[1][MEASURE_EMOJI], 2);
    assert_int_equal(ms[1][MEASURE_EM_DASHES], 2);
    assert_int_equal(ms[1][MEASURE_CURLY_QUOTES], 2);
    assert_int_equal(ms[1][MEASURE_ADDED_COMMENT_LINES], 14);
    assert_int_equal(ms[1][MEASURE_ADDED_CODE_LINES], 11);
    assert_int_equal(ms[1][MEASURE_RESTATING_COMMENTS], 2);
    assert_true(ms[1][MEASURE_COMMENT_RATIO] > 0.5);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_text_measures),
        cmocka_unit_test(test_prose_choice),
        cmocka_unit_test(test_prose_one_pass),
        cmocka_unit_test(test_markdown_tables_apart),
        cmocka_unit_test(test_version_exhaustive),
        cmocka_unit_test(test_quoted_ratio),
        cmocka_unit_test(test_model_measures),
        cmocka_unit_test(test_diff_sizes),
        cmocka_unit_test(test_comment_counts),
        cmocka_unit_test(test_restating),
        cmocka_unit_test(test_dt_binding),
        cmocka_unit_test(test_fixture_contrast),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
