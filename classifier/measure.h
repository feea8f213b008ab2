/*
 * measure.h - numbers computed once per message that rules compare.
 *
 * measure_compute() fills message->measures from the already-built
 * message model. Each measure has a stable name used in rule files
 * ("measure changelog_words > 150"); docs/rules.md lists them.
 */
#ifndef SLOP_MEASURE_H
#define SLOP_MEASURE_H

enum measure_id {
    MEASURE_CHANGELOG_WORDS = 0,  /* words in the changelog */
    MEASURE_CHANGELOG_LINES,      /* non-blank changelog lines */
    MEASURE_CHANGELOG_LONG_LINES, /* log lines over 75 columns, checkpatch exemptions applied */
    MEASURE_CHANGED_LINES,        /* added + removed diff lines */
    MEASURE_ADDED_LINES,
    MEASURE_REMOVED_LINES,
    MEASURE_FILES, /* files in the diff */
    MEASURE_HUNKS,
    MEASURE_WORDS_PER_CHANGED_LINE, /* changelog words / max(1, changed lines) */
    MEASURE_ADDED_COMMENT_LINES,
    MEASURE_ADDED_CODE_LINES,     /* added non-blank, non-comment lines */
    MEASURE_COMMENT_RATIO,        /* comment lines / (comment + code lines), 0..1 */
    MEASURE_RESTATING_COMMENTS,   /* added comments whose words mostly repeat the next code line */
    MEASURE_COMMENT_HEAVY_BLOCKS, /* added comments of 3+ lines over 1-2 added statements */
    MEASURE_MARKDOWN_LINES,       /* Markdown constructs in prose (log, notes, report, body) */
    MEASURE_MARKDOWN_DENSITY,     /* markdown lines / non-blank prose lines, 0..1 */
    MEASURE_PROSE_WORDS,          /* words in the author's own prose (log or report, unquoted) */
    MEASURE_PROSE_LINES,          /* non-blank lines of that prose */
    MEASURE_SECTIONS,             /* heading-like lines in the prose */
    MEASURE_FACTS_LINE,   /* 1-based prose line of the first version, path or function; 0 if none */
    MEASURE_EM_DASHES,    /* U+2014 and U+2013 in prose */
    MEASURE_CURLY_QUOTES, /* U+2018/2019/201C/201D in prose */
    MEASURE_EMOJI,        /* pictographic code points in prose */
    MEASURE_QUOTED_LINES, /* quoted lines in the body */
    MEASURE_QUOTED_RATIO, /* quoted / (quoted + own) body lines */
    MEASURE_TRACE_LINES,  /* lines recognised as oops/KASAN/call trace */
    MEASURE_CODE_LINES,   /* lines in the code region */
    MEASURE_VERSIONS,     /* version strings found */
    MEASURE_IDENTIFIERS,  /* distinct functions, paths and CONFIG_ symbols cited */
    MEASURE_RECIPIENTS,   /* To + Cc addresses */
    MEASURE_ATTACHMENTS,  /* non-text attachments */
    MEASURE_HTML_ONLY,    /* 1 if the only text was HTML */
    MEASURE_REPORT_ADDRESS, /* 1 if sent to a report address (ReportRecipients) or --kind report */
    MEASURE_SERIES_INDEX,   /* N of [PATCH N/M]; 0 otherwise */
    MEASURE_SERIES_TOTAL,   /* M of [PATCH N/M]; 0 otherwise */
    MEASURE_PATCH_VERSION,  /* v of [PATCH vN]; 1 when absent on a patch */
    /* Filled by series.c for a cover letter ([PATCH 0/N]); 0 otherwise. */
    MEASURE_COVER_LETTER,          /* 1 for a cover letter */
    MEASURE_COVER_WORDS,           /* words of its own prose: no shortlog, diffstat, history */
    MEASURE_COVER_CHANGED_LINES,   /* insertions + deletions of its diffstat summary */
    MEASURE_COVER_WORDS_PER_PATCH, /* cover_words / N */
    MEASURE_COVER_WORDS_PER_CHANGED_LINE, /* cover_words / cover_changed_lines; 0 without */
    MEASURE_COVER_CASES,                  /* lines arguing cases: corner cases, Q:/A:, "Why not" */
    MEASURE_COVER_RESTATED_SHARE,         /* patches restated in a full paragraph / N, 0..1 */
    /* Filled by facts.c from the caller's look-ups; 0 without them. */
    MEASURE_TREE_INDEXED,         /* 1 when a source tree index is loaded */
    MEASURE_MISSING_IDENTIFIERS,  /* cited functions and CONFIG_ symbols not in the indexed tree */
    MEASURE_MISSING_PATHS,        /* cited paths not in the indexed tree */
    MEASURE_DIFF_MISSING_PATHS,   /* diff files (not new) not in the indexed tree */
    MEASURE_ALREADY_FIXED,        /* 1 when the change or the cited bug is already merged */
    MEASURE_DUPLICATE,            /* 1 when the same patch or report was seen in the window */
    MEASURE_UNCC_MAINTAINERS,     /* maintainers of touched files none of whom is in To/Cc */
    MEASURE_SENDER_DAILY,         /* patches and reports from the sender today, this one included */
    MEASURE_TRUSTED_SENDER,       /* 1 when the sender is listed in MAINTAINERS */
    MEASURE_SERIES_COVER_FLAGGED, /* 1 when the series' cover letter was recorded as flagged */
    MEASURE_SERIES_REPEATED_WORDS, /* words of log paragraphs also in earlier patches of the series
                                    */
    MEASURE_SERIES_REPEATED_SHARE, /* those words / the log's paragraph words, 0..1 */
    MEASURE_SERIES_REPEATING_PATCHES, /* earlier patches of the series sharing them */
    /* Filled by learn.c from the learned token counts; 0 without them. */
    MEASURE_LEARNED_READY, /* 1 when both classes have LearnMinimum messages learned */
    MEASURE_LEARNED_SLOP,  /* Robinson-Fisher probability that the mail is slop, 0..1 */
    /* Set where the input is cut (message_note_limit()). */
    MEASURE_LIMIT_HIT, /* 1 when a limit cut the input; evidence names the limit */
    /* Filled by dt_binding.c; kept after the measures learn.c hashes by
     * number, so a learned model stays valid. */
    MEASURE_BINDING_SCHEMA_ERRORS, /* schema mistakes in added device-tree bindings */
    MEASURE_BINDING_DRIVER_LINES,  /* added binding lines that speak of a driver */
    /* Filled by poc_program.c for a report; 0 otherwise. */
    MEASURE_POC_PROGRAMS,      /* 1 when the body holds a C program with main() */
    MEASURE_POC_PROJECT_CALLS, /* names it calls beyond itself and the in-process C library */
    MEASURE__COUNT,
};

struct message;

const char *measure_name(enum measure_id id);
/* Returns 0 and sets *ret, or -EINVAL for an unknown name. */
int measure_parse(const char *name, enum measure_id *ret);

/* Fill m->measures; cannot fail. */
void measure_compute(struct message *m);

#endif
