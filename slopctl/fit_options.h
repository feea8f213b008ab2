/*
 * fit_options.h - the options of "slopctl fit" into a run (fit_run.h).
 * Single-threaded (getopt).
 */
#ifndef SLOPCTL_FIT_OPTIONS_H
#define SLOPCTL_FIT_OPTIONS_H

#include "fit_run.h"

/* argv's options into f, and --rules into *rules. Returns 0 to go on, -1
 * after the usage on stdout (-h), else EX_USAGE after a message. */
int fit_options_parse(struct fit *f, int argc, char **argv, const char **rules);

#endif
