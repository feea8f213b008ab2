/*
 * rules.h - "slopctl lint" and "slopctl rules": check a rule directory and
 * list its rules. Single-threaded.
 */
#ifndef SLOPCTL_RULES_H
#define SLOPCTL_RULES_H

/* argv[0] is the command's name. 0 when the rules are good, 1 when lint
 * found problems, else a sysexits code. */
int rules_lint_cmd(int argc, char **argv);

/* Print each rule: name, score in effect, class, profiles, description
 * and documentation link, tab-separated. 0 or a sysexits code. */
int rules_list_cmd(int argc, char **argv);

#endif
