/*
 * report_html.h - write the moderator's report (slopctl report) as one
 * self-contained HTML document: a summary, the charts of report_svg.h and
 * a table of the messages with their findings.
 *
 * The document loads nothing: its Content-Security-Policy allows no
 * source but its own style sheet and sorting script, each by its SHA-256
 * hash, and images only as data: URLs (there are none). Every string from
 * mail goes through report_escape(); documentation links become links
 * only under the report's http(s) doc base. Without script the table is
 * already sorted by score, and findings open in <details>. The report is
 * only read. Single-threaded.
 */
#ifndef SLOPCTL_REPORT_HTML_H
#define SLOPCTL_REPORT_HTML_H

#include <stdio.h>

#include "report.h"

/* Write the document to f (rows as report_sort_rows() left them). Returns
 * 0, -ENOMEM, or the negative errno of a failed write. */
int report_html_write(FILE *f, const struct report *rep);

#endif
