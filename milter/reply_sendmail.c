/*
 * reply_sendmail.c - the sendmail transport: fork + execv of SendmailPath
 * with no shell ("sendmail -i -f <> -- rcpt"), the message on its stdin,
 * its output kept for the reason, a bounded wait, and a kill of exactly
 * the pid started when the time is up. Runs on the worker thread.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "reply_clock.h"
#include "reply_reason.h"
#include "reply_text.h"
#include "reply_transport.h"

/* One sendmail child and our ends of its pipes (-1 once closed). */
struct child {
    pid_t pid;
    int fds[4]; /* its stdin (read, write), its output (read, write) */
    const char *msg;
    size_t msg_len, written;
    char output[REPLY_OUTPUT_MAX];
    size_t output_len;
    int64_t deadline; /* reply_clock_ms() when it is killed */
    int status;
    bool exited;
};

#define CHILD_IN_R 0
#define CHILD_IN_W 1
#define CHILD_OUT_R 2
#define CHILD_OUT_W 3

static void
child_close_fd(struct child *c, int which)
{
    if (c->fds[which] >= 0)
        close(c->fds[which]);
    c->fds[which] = -1;
}

/* In the child: async-signal-safe calls only. */
static _Noreturn void
child_exec(const char *path, char *const argv[], const struct child *c)
{
    static const char msg[] = "exec of sendmail failed\n";
    struct sigaction dfl = {.sa_handler = SIG_DFL};
    sigset_t none;

    sigemptyset(&none);
    sigaction(SIGPIPE, &dfl, NULL);
    sigaction(SIGCHLD, &dfl, NULL);
    sigaction(SIGTERM, &dfl, NULL);
    sigaction(SIGINT, &dfl, NULL);
    sigaction(SIGHUP, &dfl, NULL);
    sigprocmask(SIG_SETMASK, &none, NULL);
    if (dup2(c->fds[CHILD_IN_R], 0) < 0 || dup2(c->fds[CHILD_OUT_W], 1) < 0 ||
        dup2(c->fds[CHILD_OUT_W], 2) < 0)
        _exit(127);
    /* Milter sockets and the LMDB files must not leak into sendmail. */
    closefrom(3);
    execv(path, argv);
    if (write(2, msg, sizeof(msg) - 1) < 0)
        _exit(127);
    _exit(127);
}

/* Pipes, fork and exec; false with reason set when there is no child. */
static bool
child_start(const struct reply_sender *s, const struct reply_job *j, struct child *c, char *reason,
            size_t reasonlen)
{
    char *const argv[] = {"sendmail", "-i", "-f", "", "--", j->rcpt, NULL};

    if (pipe2(c->fds + CHILD_IN_R, O_CLOEXEC) < 0 || pipe2(c->fds + CHILD_OUT_R, O_CLOEXEC) < 0) {
        reply_reason_errno(reason, reasonlen, "pipe", errno);
        return false;
    }
    c->pid = fork();
    if (c->pid < 0) {
        reply_reason_errno(reason, reasonlen, "fork", errno);
        return false;
    }
    if (c->pid == 0)
        child_exec(s->sendmail_path, argv, c);
    child_close_fd(c, CHILD_IN_R);
    child_close_fd(c, CHILD_OUT_W);
    fcntl(c->fds[CHILD_IN_W], F_SETFL, O_NONBLOCK);
    fcntl(c->fds[CHILD_OUT_R], F_SETFL, O_NONBLOCK);
    return true;
}

static void
child_write(struct child *c)
{
    ssize_t wr = write(c->fds[CHILD_IN_W], c->msg + c->written, c->msg_len - c->written);

    if (wr > 0)
        c->written += (size_t)wr;
    if ((wr < 0 && errno != EAGAIN && errno != EINTR) || c->written == c->msg_len)
        child_close_fd(c, CHILD_IN_W);
}

/* Keep the first REPLY_OUTPUT_MAX bytes of its output; read the rest
 * away so that it never blocks on a full pipe. */
static void
child_read(struct child *c)
{
    char tmp[256];
    ssize_t rd = read(c->fds[CHILD_OUT_R], tmp, sizeof(tmp));

    if (rd > 0) {
        size_t keep = (size_t)rd;

        if (keep > sizeof(c->output) - c->output_len)
            keep = sizeof(c->output) - c->output_len;
        memcpy(c->output + c->output_len, tmp, keep);
        c->output_len += keep;
    } else if (rd == 0 || (errno != EAGAIN && errno != EINTR)) {
        child_close_fd(c, CHILD_OUT_R);
    }
}

/* One slice of feeding and hearing the child: 0, or -errno of poll. */
static int
child_poll(struct child *c, int64_t left)
{
    struct pollfd pfd[2];
    nfds_t n = 0;

    if (c->fds[CHILD_IN_W] >= 0)
        pfd[n++] = (struct pollfd){.fd = c->fds[CHILD_IN_W], .events = POLLOUT};
    if (c->fds[CHILD_OUT_R] >= 0)
        pfd[n++] = (struct pollfd){.fd = c->fds[CHILD_OUT_R], .events = POLLIN};
    /* Short slices: the child's exit is noticed by polling waitpid. */
    if (poll(pfd, n, left < 50 ? (int)left : 50) < 0 && errno != EINTR)
        return -errno;
    for (nfds_t k = 0; k < n; k++) {
        if (pfd[k].fd == c->fds[CHILD_IN_W] && (pfd[k].revents & (POLLOUT | POLLERR | POLLHUP)))
            child_write(c);
        else if (pfd[k].fd == c->fds[CHILD_OUT_R] && (pfd[k].revents & (POLLIN | POLLHUP)))
            child_read(c);
    }
    return 0;
}

static void
child_kill(struct child *c)
{
    kill(c->pid, SIGKILL);
    while (waitpid(c->pid, &c->status, 0) < 0 && errno == EINTR)
        ;
}

/* Feed and hear the child until it exits or the deadline passes: true
 * when it exited; false with reason set when it was killed or lost. */
static bool
child_wait(const struct reply_sender *s, struct child *c, char *reason, size_t reasonlen)
{
    for (;;) {
        int64_t left = c->deadline - reply_clock_ms();
        int r;

        if (!c->exited) {
            pid_t w = waitpid(c->pid, &c->status, WNOHANG);

            if (w == c->pid)
                c->exited = true;
            else if (w < 0 && errno != EINTR) {
                reply_reason_errno(reason, reasonlen, "waitpid", errno);
                return false;
            }
        }
        /* Done, or it went away before reading everything. */
        if (c->exited && (c->fds[CHILD_IN_W] < 0 || c->written < c->msg_len))
            return true;
        if (left <= 0) {
            child_kill(c);
            snprintf(reason, reasonlen, "sendmail timed out after %us, killed", s->timeout_s);
            return false;
        }
        r = child_poll(c, left);
        if (r < 0) {
            reply_reason_errno(reason, reasonlen, "poll", -r);
            kill(c->pid, SIGKILL);
            waitpid(c->pid, &c->status, 0);
            return false;
        }
    }
}

/* The exited child's outcome in reason; true when it took the message. */
static bool
child_outcome(struct child *c, char *reason, size_t reasonlen)
{
    int st = c->status;

    /* Whatever it printed last (still buffered in the pipe) helps the log. */
    if (c->fds[CHILD_OUT_R] >= 0) {
        ssize_t rd =
            read(c->fds[CHILD_OUT_R], c->output + c->output_len, sizeof(c->output) - c->output_len);

        if (rd > 0)
            c->output_len += (size_t)rd;
    }
    if (WIFEXITED(st) && WEXITSTATUS(st) == 0 && c->written == c->msg_len) {
        snprintf(reason, reasonlen, "sent");
        return true;
    }
    if (WIFEXITED(st)) {
        snprintf(reason, reasonlen, "sendmail exited with status %d", WEXITSTATUS(st));
        if (c->written < c->msg_len && WEXITSTATUS(st) == 0)
            snprintf(reason, reasonlen, "sendmail exited before reading the message");
        reply_reason_append(reason, reasonlen, ": ", c->output, c->output_len);
    } else if (WIFSIGNALED(st)) {
        snprintf(reason, reasonlen, "sendmail killed by signal %d", WTERMSIG(st));
    } else {
        snprintf(reason, reasonlen, "sendmail ended abnormally");
    }
    return false;
}

/* Sendmail transport: fork + execv, message on stdin, bounded wait. */
bool
reply_sendmail_send(struct reply_sender *s, const struct reply_job *j, char *reason,
                    size_t reasonlen)
{
    struct child c = {.fds = {-1, -1, -1, -1},
                      .msg = j->msg,
                      .msg_len = strlen(j->msg),
                      .deadline = reply_clock_ms() + (int64_t)s->timeout_s * 1000};
    bool ok = false;

    if (child_start(s, j, &c, reason, reasonlen) && child_wait(s, &c, reason, reasonlen))
        ok = child_outcome(&c, reason, reasonlen);
    for (int i = 0; i < 4; i++)
        child_close_fd(&c, i);
    return ok;
}
