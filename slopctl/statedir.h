/*
 * statedir.h - the state directory every slopctl state command shares:
 * which one (the daemon's default unless --state says otherwise), and
 * opening it with the owner check, the backend attached and the failure
 * said on stderr. Below import, db, dbcheck, learn, fit and scan, which
 * all open the state through it. Single-threaded.
 */
#ifndef SLOPCTL_STATEDIR_H
#define SLOPCTL_STATEDIR_H

struct state;

/* --state DIR if given, else the daemon's default StateDir:
 * $STATE_DIRECTORY (its first entry, when absolute), else the build
 * directory's var/state/ when run from it, else /var/lib/slop-milter,
 * whoever runs it. The result points into opt or a static buffer. */
const char *statedir_resolve(const char *opt);

/* state_open() dir with flags, saying on stderr why it failed; 0 or a
 * sysexits code (EX_CANTCREAT for a damaged data.mdb, EX_NOPERM for a
 * writer that is not the state's owner). On success *ret is the open
 * state, closed with state_close(); on failure *ret is NULL. */
int statedir_open(const char *dir, unsigned flags, struct state **ret);

#endif
