/*
 * scan_options.h - the options of "slopctl scan" and "slopctl report":
 * read from argv into one struct, each value checked, with a usage error
 * naming the bad one. Single-threaded (getopt).
 */
#ifndef SLOPCTL_SCAN_OPTIONS_H
#define SLOPCTL_SCAN_OPTIONS_H

#include <stdbool.h>

#include "classifier.h"
#include "output.h"
#include "state_db.h"

struct scan_options {
    struct classifier_options opts; /* opts.report_recipients may point at report_rcpt */
    struct state_lookup_options lopts;
    const char *report_rcpt[CLASSIFIER_MAX_PATTERNS + 1];
    const char *rules;     /* --rules, or NULL */
    const char *state_dir; /* --state, or NULL */
    const char *html_path; /* report -o, or NULL for standard output */
    enum output_format format;
    unsigned walk_flags; /* MAILBOX_* */
    bool only_actions, as_report, record, no_state, mask_senders;
};

/* Parse argv (argv[0] the command's name; as_html for report) into *o,
 * which must not move afterwards. Returns -1 when the command goes on,
 * with the paths at argv[optind..argc); else the exit code, after the
 * usage (-h) or a usage error on stderr. */
int scan_options_parse(int argc, char **argv, bool as_html, struct scan_options *o);

#endif
