/*
 * fit.h - "slopctl fit": fit the rules' scores to labelled mail by
 * regularised logistic regression, cross-validate them against the
 * hand-set scores and write a scores file (docs/scoring.md).
 * Single-threaded; returns a sysexits code.
 */
#ifndef SLOPCTL_FIT_H
#define SLOPCTL_FIT_H

/* argv[0] is the command's name; the rule directory is --rules, else
 * cli_rules_dir()'s default, as for slopctl scan. */
int fit_cmd(int argc, char **argv);

#endif
