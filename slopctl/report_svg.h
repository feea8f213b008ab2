/*
 * report_svg.h - the charts of slopctl report, drawn as inline SVG in the
 * HTML document: the score distribution with the thresholds, findings by
 * rule, actions over time and the top senders.
 *
 * Each function writes one <svg> element (no script, no external
 * reference, no style attribute: colours come from the document's style
 * sheet through the classes a-none, a-tag, a-reply, a-quarantine,
 * a-reject). Coordinates are whole numbers, so the output does not depend
 * on the locale. Labels from mail go through report_escape(). The report
 * is only read. Single-threaded.
 */
#ifndef SLOPCTL_REPORT_SVG_H
#define SLOPCTL_REPORT_SVG_H

#include <stdio.h>

#include "report.h"

/* Bars drawn at most: rules and senders (the rest are summed in a note),
 * and periods over time (the latest are drawn). */
#define REPORT_SVG_TOP 15
#define REPORT_SVG_MAX_PERIODS 120
/* Days drawn one bar each up to this many, months beyond. */
#define REPORT_SVG_MAX_DAYS 92

/* Each returns 0, or -ENOMEM (nothing useful was written then). */
int report_svg_scores(FILE *f, const struct report *rep);
int report_svg_rules(FILE *f, const struct report *rep);
int report_svg_time(FILE *f, const struct report *rep);
int report_svg_senders(FILE *f, const struct report *rep);

#endif
