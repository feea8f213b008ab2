/*
 * scan.h - "slopctl scan" and "slopctl report": classify mail files,
 * mboxes and Maildirs, printing a result per message or writing the HTML
 * report. Single-threaded.
 */
#ifndef SLOPCTL_SCAN_H
#define SLOPCTL_SCAN_H

#include <stdbool.h>

/* argv[0] is the command's name; as_html for report. Returns a sysexits
 * code: 0, 1 when some input could not be scanned, EX_USAGE, EX_NOINPUT,
 * EX_CONFIG, EX_IOERR. */
int scan_cmd(int argc, char **argv, bool as_html);

#endif
