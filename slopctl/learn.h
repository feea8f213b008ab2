/*
 * learn.h - "slopctl learn" and "slopctl forget": count the tokens of
 * mail a team has sorted as slop or genuine into the state, for the
 * LEARNED_* findings (docs/learning.md).
 */
#ifndef SLOPCTL_LEARN_H
#define SLOPCTL_LEARN_H

#include <stdbool.h>

/* argv[0] is the command's name; forget: "slopctl forget". Returns a
 * sysexits code. */
int learn_cmd(int argc, char **argv, bool forget);

#endif
