/*
 * dbcheck.h - "slopctl db check DIR" and "slopctl db recover DIR NEWDIR":
 * verify a state environment, and copy what can be read of a damaged one
 * into a new one. Each returns a sysexits code: 73 (EX_CANTCREAT) when
 * check finds damage, 65 (EX_DATAERR) when recover lost entries.
 */
#ifndef SLOPCTL_DBCHECK_H
#define SLOPCTL_DBCHECK_H

int dbcheck_check(const char *dir);
int dbcheck_recover(const char *dir, const char *newdir);

#endif
