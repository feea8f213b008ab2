/*
 * postfix_line.h - the smtpd_milters line -n and -f print, and whether
 * Postfix's user may connect to the socket. Pure: the caller asks
 * postconf, the password file and stat(); these only decide and word.
 *
 * Threading: no state; safe from any thread.
 */
#ifndef SLOP_MILTER_POSTFIX_LINE_H
#define SLOP_MILTER_POSTFIX_LINE_H

#include <stddef.h>
#include <sys/types.h>

/* Postfix's own default, used when postconf cannot be asked. */
#define POSTFIX_LINE_QUEUE_DIR "/var/spool/postfix"

enum postfix_line_reach {
    POSTFIX_LINE_TCP,     /* inet: the same for chrooted and unchrooted smtpd */
    POSTFIX_LINE_CHROOT,  /* unix socket under the queue directory, as the chroot sees it */
    POSTFIX_LINE_OUTSIDE, /* unix socket elsewhere: a chrooted smtpd cannot reach it */
};

/*
 * Write to BUF the smtpd_milters value for Socket SPEC (local:/p,
 * unix:/p, /p, inet:port@host, inet6:port@host) with Postfix's queue
 * directory QUEUE_DIR, followed by a '#' comment line saying which smtpd
 * it works for. Returns the reach, or -ENAMETOOLONG when BUF is too small.
 */
int postfix_line_write(const char *spec, const char *queue_dir, char *buf, size_t size);

/* The unix socket's path in SPEC, or NULL for a TCP socket. */
const char *postfix_line_socket_path(const char *spec);

enum postfix_line_access {
    POSTFIX_ACCESS_OK,
    POSTFIX_ACCESS_GROUP, /* the socket's group may write; the user is not in it */
    POSTFIX_ACCESS_MODE,  /* the user's class (owner or group) lacks the write bit */
    POSTFIX_ACCESS_BOTH,  /* not in the group, and the group may not write either */
};

struct postfix_line_sock {
    uid_t uid;
    gid_t gid;
    unsigned mode; /* permission bits */
};

/*
 * Whether the user UID with groups GROUPS[0..N) (as getgrouplist gives
 * them) may connect to the socket: connect(2) on a UNIX socket needs
 * write permission, judged by the first class that applies (owner,
 * group, other), as the kernel does. Root is never refused.
 */
enum postfix_line_access postfix_line_access(const struct postfix_line_sock *sock, uid_t uid,
                                             const gid_t *groups, size_t n);

/*
 * Write one warning line (no newline) for a refusal A of user USER to
 * the socket at PATH whose group is named GROUP_NAME, naming the fix.
 * Returns 0, or -ENAMETOOLONG when BUF is too small.
 */
int postfix_line_warning(enum postfix_line_access a, const char *user, const char *path,
                         const struct postfix_line_sock *sock, const char *group_name, char *buf,
                         size_t size);

#endif
