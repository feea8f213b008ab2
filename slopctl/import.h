/*
 * import.h - slopctl's state commands: "import tree|fixes|maintainers"
 * build the offline indices, "db stats|check|recover|prune|dump|load" look after the
 * environment, and statedir_resolve() picks the state directory every
 * state command shares. Single-threaded; each returns a sysexits code.
 */
#ifndef SLOPCTL_IMPORT_H
#define SLOPCTL_IMPORT_H

/* --state DIR if given, else the daemon's default StateDir:
 * $STATE_DIRECTORY (its first entry, when absolute), else the build
 * directory's var/state/ when run from it, else /var/lib/slop-milter,
 * whoever runs it. The result points
 * into opt or a static buffer. */
const char *import_state_dir(const char *opt);

/* state_open() dir with flags, saying on stderr why it failed; 0 or a
 * sysexits code (EX_CANTCREAT for a damaged data.mdb). */
struct state;
int import_open_state(const char *dir, unsigned flags, struct state **ret);

int import_cmd(int argc, char **argv);
int import_db_cmd(int argc, char **argv);

#endif
