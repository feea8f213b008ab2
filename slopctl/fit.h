/*
 * fit.h - "slopctl fit": fit the rules' scores to labelled mail by
 * regularised logistic regression, cross-validate them against the
 * hand-set scores and write a scores file (docs/scoring.md).
 * Single-threaded; returns a sysexits code.
 */
#ifndef SLOPCTL_FIT_H
#define SLOPCTL_FIT_H

/* rules_resolve picks the rule directory from --rules (NULL: not given),
 * as slopctl scan does. */
int fit_cmd(int argc, char **argv, const char *(*rules_resolve)(const char *opt));

#endif
