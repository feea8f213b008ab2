/*
 * db.h - "slopctl db stats|check|recover|prune|dump|load": look after the
 * state environment. Single-threaded; returns a sysexits code.
 */
#ifndef SLOPCTL_DB_H
#define SLOPCTL_DB_H

int db_cmd(int argc, char **argv);

#endif
