/*
 * cli.h - what slopctl's commands share on the command line: the usage
 * text, usage errors and the default rule directory. Single-threaded.
 */
#ifndef SLOPCTL_CLI_H
#define SLOPCTL_CLI_H

#include <stdarg.h>
#include <stdio.h>

/* The whole usage text, every command's, on f. */
void cli_usage(FILE *f);

/* "slopctl: " and the message on stderr, no newline. */
void cli_verror(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0)));

/* "slopctl: ", the message and a newline on stderr. */
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* "slopctl: " and the message on stderr, then a pointer to slopctl help;
 * returns EX_USAGE. */
int cli_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* A command's -h (0 after the usage on stdout), or an option getopt
 * refused in command cmd (EX_USAGE after a message). */
int cli_help_or_bad_option(int opt, const char *cmd);

/* The rule directory: opt (--rules) when given, else $SLOP_RULES_DIR,
 * else the source tree's rules/ when run from its build tree, else the
 * installed rules. The result points into opt, the environment or a
 * static buffer. */
const char *cli_rules_dir(const char *opt);

#endif
