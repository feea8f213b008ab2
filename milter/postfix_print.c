/*
 * postfix_print.c - for -n and -f: the main.cf lines that hook this
 * daemon's socket into Postfix, as chrooted smtpd sees it (postconf's
 * queue_directory), and a warning when Postfix's user could not connect
 * to a unix socket. Runs postconf by absolute path only (the daemon never
 * searches PATH). Start-up only, before threads.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "config.h"
#include "ids.h"
#include "postfix_line.h"
#include "postfix_print.h"

/* Postfix's queue directory: `postconf -h queue_directory` (which reads
 * MAIL_CONFIG, so a second instance answers for itself), else Postfix's
 * default. */
static void
postfix_queue_dir(char *buf, size_t size)
{
    /* Absolute paths only: the daemon never searches PATH (exec*p). */
    static const char *const progs[] = {"/usr/sbin/postconf", "/usr/bin/postconf"};
    char *argv[] = {"postconf", "-h", "queue_directory", NULL};
    posix_spawn_file_actions_t fa;
    size_t got = 0, i;
    int fds[2], st = 1;
    pid_t pid = -1;
    char out[PATH_MAX];
    ssize_t n;

    snprintf(buf, size, "%s", POSTFIX_LINE_QUEUE_DIR);
    if (pipe2(fds, O_CLOEXEC) < 0)
        return;
    if (posix_spawn_file_actions_init(&fa) != 0) {
        close(fds[0]);
        close(fds[1]);
        return;
    }
    posix_spawn_file_actions_adddup2(&fa, fds[1], STDOUT_FILENO);
    posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
    for (i = 0; i < sizeof(progs) / sizeof(progs[0]) && pid < 0; i++)
        if (posix_spawn(&pid, progs[i], &fa, NULL, argv, environ) != 0)
            pid = -1;
    posix_spawn_file_actions_destroy(&fa);
    close(fds[1]);
    if (pid < 0) {
        close(fds[0]);
        return;
    }
    while (got < sizeof(out) - 1 && (n = read(fds[0], out + got, sizeof(out) - 1 - got)) != 0) {
        if (n < 0 && errno != EINTR)
            break;
        if (n > 0)
            got += (size_t)n;
    }
    close(fds[0]);
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    while (got > 0 && (out[got - 1] == '\n' || out[got - 1] == ' '))
        got--;
    out[got] = '\0';
    if (WIFEXITED(st) && WEXITSTATUS(st) == 0 && out[0] == '/' && strchr(out, '\n') == NULL)
        snprintf(buf, size, "%s", out);
}

/* Whether Postfix's user may connect to the unix socket PATH, owned as
 * SOCK says: one warning line on stderr naming the fix when it may not.
 * No postfix user: nothing to check (Sendmail, or Postfix elsewhere). */
static void
postfix_check_access(const char *path, const struct postfix_line_sock *sock)
{
    char pwbuf[16384], grbuf[16384], gname[64], line[PATH_MAX + 512];
    struct passwd pw, *pwp = NULL;
    struct group gr, *grp = NULL;
    gid_t groups[256];
    int ng = (int)(sizeof(groups) / sizeof(groups[0]));
    enum postfix_line_access a;

    if (getpwnam_r("postfix", &pw, pwbuf, sizeof(pwbuf), &pwp) != 0 || pwp == NULL)
        return;
    if (getgrouplist(pw.pw_name, pw.pw_gid, groups, &ng) < 0)
        ng = (int)(sizeof(groups) / sizeof(groups[0]));
    a = postfix_line_access(sock, pw.pw_uid, groups, (size_t)ng);
    if (a == POSTFIX_ACCESS_OK)
        return;
    if (getgrgid_r(sock->gid, &gr, grbuf, sizeof(grbuf), &grp) == 0 && grp != NULL)
        snprintf(gname, sizeof(gname), "%s", gr.gr_name);
    else
        snprintf(gname, sizeof(gname), "%lu", (unsigned long)sock->gid);
    if (postfix_line_warning(a, pw.pw_name, path, sock, gname, line, sizeof(line)) == 0)
        fprintf(stderr, "slop-milter: %s\n", line);
}

/* The main.cf lines for this socket (stdout), as the chroot sees it, and
 * a warning when Postfix's user could not connect. MADE: the socket
 * exists and its owner and mode are read; else they are foreseen from
 * UserID and SocketMode, as the daemon will set them. */
void
postfix_print(const struct config *cfg, const struct ids *ids, bool made)
{
    char qdir[PATH_MAX], line[3 * PATH_MAX + 512];
    const char *path = postfix_line_socket_path(cfg->socket);
    struct postfix_line_sock sock = {ids_run_uid(ids), ids_run_gid(ids), cfg->socket_mode};
    struct stat sb;

    postfix_queue_dir(qdir, sizeof(qdir));
    if (postfix_line_write(cfg->socket, qdir, line, sizeof(line)) < 0)
        return;
    printf("# Postfix main.cf:\n%s"
           "non_smtpd_milters = $smtpd_milters\n"
           "milter_default_action = accept\n",
           line);
    fflush(stdout);
    if (path == NULL)
        return;
    if (made && stat(path, &sb) == 0) {
        sock.uid = sb.st_uid;
        sock.gid = sb.st_gid;
        sock.mode = sb.st_mode & 07777;
    }
    postfix_check_access(path, &sock);
}
