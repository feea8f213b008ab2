/*
 * measure.c - the numbers rules compare ("measure changelog_words > 150").
 *
 * measure_compute() reads a built message model and fills the text and
 * diff measures of m->measures (up to MEASURE_PATCH_VERSION; series.c
 * adds the cover letter ones, and the look-up measures belong to
 * facts.c); it allocates nothing and cannot fail. The prose it measures
 * is the changelog for a patch, otherwise the report region (or the body
 * when the report region is empty). The measures are taken by job:
 * measure_prose.c (prose, changelog, Markdown, traces), measure_diff.c
 * (added code and comments) and measure_text.c (words and marked
 * characters under both). Every heuristic works line by line on text the
 * message already owns; none reads past a region's length.
 *
 * The name table ties rule-file measure names to enum measure_id;
 * docs/rules.md documents the same list. Threading: no shared state.
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "dt_binding.h"
#include "measure.h"
#include "measure_diff.h"
#include "measure_prose.h"
#include "message.h"
#include "poc_program.h"
#include "series.h"

static const char *const measure_names[MEASURE__COUNT] = {
    [MEASURE_CHANGELOG_WORDS] = "changelog_words",
    [MEASURE_CHANGELOG_LINES] = "changelog_lines",
    [MEASURE_CHANGELOG_LONG_LINES] = "changelog_long_lines",
    [MEASURE_CHANGED_LINES] = "changed_lines",
    [MEASURE_ADDED_LINES] = "added_lines",
    [MEASURE_REMOVED_LINES] = "removed_lines",
    [MEASURE_FILES] = "files",
    [MEASURE_HUNKS] = "hunks",
    [MEASURE_WORDS_PER_CHANGED_LINE] = "words_per_changed_line",
    [MEASURE_ADDED_COMMENT_LINES] = "added_comment_lines",
    [MEASURE_ADDED_CODE_LINES] = "added_code_lines",
    [MEASURE_COMMENT_RATIO] = "comment_ratio",
    [MEASURE_RESTATING_COMMENTS] = "restating_comments",
    [MEASURE_COMMENT_HEAVY_BLOCKS] = "comment_heavy_blocks",
    [MEASURE_MARKDOWN_LINES] = "markdown_lines",
    [MEASURE_MARKDOWN_DENSITY] = "markdown_density",
    [MEASURE_PROSE_WORDS] = "prose_words",
    [MEASURE_PROSE_LINES] = "prose_lines",
    [MEASURE_SECTIONS] = "sections",
    [MEASURE_FACTS_LINE] = "facts_line",
    [MEASURE_EM_DASHES] = "em_dashes",
    [MEASURE_CURLY_QUOTES] = "curly_quotes",
    [MEASURE_EMOJI] = "emoji",
    [MEASURE_QUOTED_LINES] = "quoted_lines",
    [MEASURE_QUOTED_RATIO] = "quoted_ratio",
    [MEASURE_TRACE_LINES] = "trace_lines",
    [MEASURE_CODE_LINES] = "code_lines",
    [MEASURE_VERSIONS] = "versions",
    [MEASURE_IDENTIFIERS] = "identifiers",
    [MEASURE_RECIPIENTS] = "recipients",
    [MEASURE_ATTACHMENTS] = "attachments",
    [MEASURE_HTML_ONLY] = "html_only",
    [MEASURE_REPORT_ADDRESS] = "report_address",
    [MEASURE_SERIES_INDEX] = "series_index",
    [MEASURE_SERIES_TOTAL] = "series_total",
    [MEASURE_PATCH_VERSION] = "patch_version",
    [MEASURE_COVER_LETTER] = "cover_letter",
    [MEASURE_COVER_WORDS] = "cover_words",
    [MEASURE_COVER_CHANGED_LINES] = "cover_changed_lines",
    [MEASURE_COVER_WORDS_PER_PATCH] = "cover_words_per_patch",
    [MEASURE_COVER_WORDS_PER_CHANGED_LINE] = "cover_words_per_changed_line",
    [MEASURE_COVER_CASES] = "cover_cases",
    [MEASURE_COVER_RESTATED_SHARE] = "cover_restated_share",
    [MEASURE_TREE_INDEXED] = "tree_indexed",
    [MEASURE_MISSING_IDENTIFIERS] = "missing_identifiers",
    [MEASURE_MISSING_PATHS] = "missing_paths",
    [MEASURE_DIFF_MISSING_PATHS] = "diff_missing_paths",
    [MEASURE_ALREADY_FIXED] = "already_fixed",
    [MEASURE_DUPLICATE] = "duplicate",
    [MEASURE_UNCC_MAINTAINERS] = "uncc_maintainers",
    [MEASURE_SENDER_DAILY] = "sender_daily",
    [MEASURE_TRUSTED_SENDER] = "trusted_sender",
    [MEASURE_SERIES_COVER_FLAGGED] = "series_cover_flagged",
    [MEASURE_SERIES_REPEATED_WORDS] = "series_repeated_words",
    [MEASURE_SERIES_REPEATED_SHARE] = "series_repeated_share",
    [MEASURE_SERIES_REPEATING_PATCHES] = "series_repeating_patches",
    [MEASURE_LEARNED_READY] = "learned_ready",
    [MEASURE_LEARNED_SLOP] = "learned_slop",
    [MEASURE_LIMIT_HIT] = "limit_hit",
    [MEASURE_BINDING_SCHEMA_ERRORS] = "binding_schema_errors",
    [MEASURE_BINDING_DRIVER_LINES] = "binding_driver_lines",
    [MEASURE_POC_PROGRAMS] = "poc_programs",
    [MEASURE_POC_PROJECT_CALLS] = "poc_project_calls",
};

const char *
measure_name(enum measure_id id)
{
    if ((unsigned)id >= MEASURE__COUNT)
        return NULL;
    return measure_names[id];
}

int
measure_parse(const char *name, enum measure_id *ret)
{
    if (name == NULL)
        return -EINVAL;
    for (unsigned i = 0; i < MEASURE__COUNT; i++) {
        if (measure_names[i] != NULL && strcmp(measure_names[i], name) == 0) {
            *ret = (enum measure_id)i;
            return 0;
        }
    }
    return -EINVAL;
}
void
measure_compute(struct message *m)
{
    double *ms = m->measures;
    struct measure_prose ps = {0};
    struct measure_diff ds = {0};
    struct measure_log lg = {0};
    size_t added = 0, removed = 0, quoted, own, code, trace, log_words;
    const struct region *prose = measure_prose_region(m);
    bool prose_is_log = prose == &m->regions[REGION_CHANGELOG];

    /* The measures after MEASURE_PATCH_VERSION come from look-ups made
     * elsewhere (facts.c) and are left alone. */
    memset(m->measures, 0, (MEASURE_PATCH_VERSION + 1) * sizeof(m->measures[0]));

    /* A patch's prose is its changelog: one pass takes both. */
    if (prose_is_log) {
        measure_prose_add(&ps, prose, &lg);
        log_words = ps.words;
    } else {
        log_words = measure_prose_changelog(&lg, &m->regions[REGION_CHANGELOG]);
        measure_prose_add(&ps, prose, NULL);
    }
    ms[MEASURE_CHANGELOG_WORDS] = (double)log_words;
    ms[MEASURE_CHANGELOG_LINES] = (double)lg.lines;
    ms[MEASURE_CHANGELOG_LONG_LINES] = (double)lg.long_lines;
    for (size_t i = 0; i < m->n_files; i++) {
        added += m->files[i].added;
        removed += m->files[i].removed;
    }
    ms[MEASURE_ADDED_LINES] = (double)added;
    ms[MEASURE_REMOVED_LINES] = (double)removed;
    ms[MEASURE_CHANGED_LINES] = (double)(added + removed);
    ms[MEASURE_FILES] = (double)m->n_files;
    ms[MEASURE_HUNKS] = (double)m->n_hunks;
    ms[MEASURE_WORDS_PER_CHANGED_LINE] =
        ms[MEASURE_CHANGELOG_WORDS] / (double)(added + removed > 0 ? added + removed : 1);

    measure_diff_compute(&ds, m);
    ms[MEASURE_ADDED_COMMENT_LINES] = (double)ds.comment;
    ms[MEASURE_ADDED_CODE_LINES] = (double)ds.code;
    if (ds.comment + ds.code > 0)
        ms[MEASURE_COMMENT_RATIO] = (double)ds.comment / (double)(ds.comment + ds.code);
    ms[MEASURE_RESTATING_COMMENTS] = (double)ds.restating;
    ms[MEASURE_COMMENT_HEAVY_BLOCKS] = (double)ds.heavy;

    if (m->kind == CLASSIFIER_KIND_PATCH)
        measure_prose_markdown(&ps, &m->regions[REGION_NOTES]);
    ms[MEASURE_MARKDOWN_LINES] = (double)ps.markdown;
    if (ps.md_lines > 0)
        ms[MEASURE_MARKDOWN_DENSITY] = (double)ps.markdown / (double)ps.md_lines;
    ms[MEASURE_PROSE_WORDS] = (double)ps.words;
    ms[MEASURE_PROSE_LINES] = (double)ps.lines;
    ms[MEASURE_SECTIONS] = (double)ps.sections;
    ms[MEASURE_FACTS_LINE] = (double)ps.facts_line;
    ms[MEASURE_EM_DASHES] = (double)ps.marks.em_dashes;
    ms[MEASURE_CURLY_QUOTES] = (double)ps.marks.curly;
    ms[MEASURE_EMOJI] = (double)ps.marks.emoji;

    quoted = measure_prose_nonblank(&m->regions[REGION_QUOTED]);
    own = measure_prose_nonblank(&m->regions[REGION_BODY]);
    ms[MEASURE_QUOTED_LINES] = (double)quoted;
    if (quoted + own > 0)
        ms[MEASURE_QUOTED_RATIO] = (double)quoted / (double)(quoted + own);
    measure_prose_code(&m->regions[REGION_CODE], &code, &trace);
    ms[MEASURE_TRACE_LINES] = (double)trace;
    ms[MEASURE_CODE_LINES] = (double)code;

    ms[MEASURE_VERSIONS] = (double)m->versions.n;
    ms[MEASURE_IDENTIFIERS] = (double)(m->functions.n + m->paths.n + m->configs.n);
    ms[MEASURE_RECIPIENTS] = (double)m->recipients.n;
    ms[MEASURE_ATTACHMENTS] = (double)m->attachments;
    ms[MEASURE_HTML_ONLY] = m->html_only ? 1.0 : 0.0;
    ms[MEASURE_REPORT_ADDRESS] = m->report_address ? 1.0 : 0.0;
    ms[MEASURE_SERIES_INDEX] = (double)m->psubj.index;
    ms[MEASURE_SERIES_TOTAL] = (double)m->psubj.total;
    if (m->psubj.tagged)
        ms[MEASURE_PATCH_VERSION] = m->psubj.version > 0 ? (double)m->psubj.version : 1.0;
    ms[MEASURE_LIMIT_HIT] = m->truncated ? 1.0 : 0.0;
    series_measure(m);
    /* Out of memory leaves a count without its evidence: the rule's hit
     * then shows "binding_schema_errors=N", which still names it. */
    (void)dt_binding_measure(m);
    (void)poc_program_measure(m);
}
