/*
 * postfix_line.c - the Postfix lines the daemon prints: the socket as a
 * chrooted smtpd sees it, and whether Postfix's user may connect to it.
 * A line that names a path the chroot cannot see, or a socket Postfix may
 * not write, makes Postfix deliver unscanned with nothing in our log; so
 * both are said where the admin copies the line from.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "postfix_line.h"

const char *
postfix_line_socket_path(const char *spec)
{
    if (strncmp(spec, "local:", 6) == 0)
        return spec + 6;
    if (strncmp(spec, "unix:", 5) == 0)
        return spec + 5;
    if (spec[0] == '/')
        return spec;
    return NULL;
}

/* A ".." component: the lexical comparison below cannot judge the path. */
static bool
has_dotdot(const char *path)
{
    const char *p = path;

    while ((p = strstr(p, "..")) != NULL) {
        if ((p == path || p[-1] == '/') && (p[2] == '/' || p[2] == '\0'))
            return true;
        p += 2;
    }
    return false;
}

/* PATH as seen from inside QUEUE_DIR ("/x/y"), or NULL when not under it. */
static const char *
inside_queue(const char *path, const char *queue_dir)
{
    size_t n = strlen(queue_dir);
    const char *rest;

    if (path[0] != '/' || queue_dir[0] != '/' || has_dotdot(path) || has_dotdot(queue_dir))
        return NULL;
    while (n > 1 && queue_dir[n - 1] == '/')
        n--;
    if (n == 1)
        rest = path;
    else if (strncmp(path, queue_dir, n) == 0 && path[n] == '/')
        rest = path + n;
    else
        return NULL;
    while (rest[1] == '/')
        rest++;
    return rest[1] == '\0' ? NULL : rest;
}

int
postfix_line_write(const char *spec, const char *queue_dir, char *buf, size_t size)
{
    const char *path = postfix_line_socket_path(spec);
    const char *rest, *at, *inside;
    int n, reach;

    if (path == NULL) {
        rest = strchr(spec, ':');
        rest = rest ? rest + 1 : spec;
        at = strchr(rest, '@');
        if (at == NULL)
            n = snprintf(buf, size, "smtpd_milters = inet:%s:%s\n",
                         strncmp(spec, "inet6", 5) ? "127.0.0.1" : "[::1]", rest);
        else
            n = snprintf(buf, size, "smtpd_milters = inet:%s:%.*s\n", at + 1, (int)(at - rest),
                         rest);
        reach = POSTFIX_LINE_TCP;
    } else if ((inside = inside_queue(path, queue_dir)) != NULL) {
        n = snprintf(buf, size,
                     "smtpd_milters = unix:%s\n"
                     "# as smtpd chrooted in queue_directory %s sees %s;"
                     " with chroot n in master.cf: unix:%s\n",
                     inside, queue_dir, path, path);
        reach = POSTFIX_LINE_CHROOT;
    } else {
        n = snprintf(buf, size,
                     "smtpd_milters = unix:%s\n"
                     "# a chrooted smtpd (master.cf chroot y, Debian's default) cannot reach it:"
                     " put the socket under %s (Socket local:%s/slop-milter/slop-milter.sock)"
                     " or use inet:PORT@127.0.0.1\n",
                     path, queue_dir, queue_dir);
        reach = POSTFIX_LINE_OUTSIDE;
    }
    if (n < 0 || (size_t)n >= size)
        return -ENAMETOOLONG;
    return reach;
}

enum postfix_line_access
postfix_line_access(const struct postfix_line_sock *sock, uid_t uid, const gid_t *groups, size_t n)
{
    bool member = false;
    size_t i;

    if (uid == 0)
        return POSTFIX_ACCESS_OK;
    if (uid == sock->uid)
        return sock->mode & 0200 ? POSTFIX_ACCESS_OK : POSTFIX_ACCESS_MODE;
    for (i = 0; i < n && !member; i++)
        member = groups[i] == sock->gid;
    if (member)
        return sock->mode & 0020 ? POSTFIX_ACCESS_OK : POSTFIX_ACCESS_MODE;
    if (sock->mode & 0002)
        return POSTFIX_ACCESS_OK;
    return sock->mode & 0020 ? POSTFIX_ACCESS_GROUP : POSTFIX_ACCESS_BOTH;
}

int
postfix_line_warning(enum postfix_line_access a, const char *user, const char *path,
                     const struct postfix_line_sock *sock, const char *group_name, char *buf,
                     size_t size)
{
    char join[160];
    const char *mode_fix = a == POSTFIX_ACCESS_GROUP ? "" : "set SocketMode 0660";
    const char *and = a == POSTFIX_ACCESS_BOTH ? " and " : "";
    int n;

    /* Joining root's group would hand Postfix far more than the socket. */
    if (a == POSTFIX_ACCESS_MODE)
        join[0] = '\0';
    else if (sock->gid == 0)
        snprintf(join, sizeof(join),
                 "set UserID to a user of its own (e.g. slop-milter), whose group the socket "
                 "gets, then run 'adduser %s slop-milter'",
                 user);
    else
        snprintf(join, sizeof(join), "run 'adduser %s %s' and restart Postfix", user, group_name);
    n = snprintf(buf, size,
                 "warning: Postfix's user %s cannot connect to %s (group %s, mode %04o): %s%s%s",
                 user, path, group_name, sock->mode & 07777, mode_fix, and, join);
    if (n < 0 || (size_t)n >= size)
        return -ENAMETOOLONG;
    return 0;
}
