/*
 * import.h - "slopctl import tree|fixes|maintainers": build the offline
 * indices that scan --state reads. Single-threaded; returns a sysexits
 * code.
 */
#ifndef SLOPCTL_IMPORT_H
#define SLOPCTL_IMPORT_H

int import_cmd(int argc, char **argv);

#endif
