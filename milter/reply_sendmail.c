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

/* Sendmail transport: fork + execv, message on stdin, bounded wait. */
bool
reply_sendmail_send(struct reply_sender *s, const struct reply_job *j, char *reason,
                    size_t reasonlen)
{
    char *const argv[] = {"sendmail", "-i", "-f", "", "--", j->rcpt, NULL};
    int in_pipe[2] = {-1, -1}, out_pipe[2] = {-1, -1};
    char output[REPLY_OUTPUT_MAX];
    size_t output_len = 0, msg_len = strlen(j->msg), written = 0;
    int64_t deadline = reply_clock_ms() + (int64_t)s->timeout_s * 1000;
    bool exited = false, ok = false;
    int status = 0;
    pid_t pid;

    if (pipe2(in_pipe, O_CLOEXEC) < 0 || pipe2(out_pipe, O_CLOEXEC) < 0) {
        reply_reason_errno(reason, reasonlen, "pipe", errno);
        goto out;
    }
    pid = fork();
    if (pid < 0) {
        reply_reason_errno(reason, reasonlen, "fork", errno);
        goto out;
    }
    if (pid == 0) {
        /* Child: async-signal-safe calls only. */
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
        if (dup2(in_pipe[0], 0) < 0 || dup2(out_pipe[1], 1) < 0 || dup2(out_pipe[1], 2) < 0)
            _exit(127);
        /* Milter sockets and the LMDB files must not leak into sendmail. */
        closefrom(3);
        execv(s->sendmail_path, argv);
        if (write(2, msg, sizeof(msg) - 1) < 0)
            _exit(127);
        _exit(127);
    }
    close(in_pipe[0]);
    in_pipe[0] = -1;
    close(out_pipe[1]);
    out_pipe[1] = -1;
    fcntl(in_pipe[1], F_SETFL, O_NONBLOCK);
    fcntl(out_pipe[0], F_SETFL, O_NONBLOCK);

    for (;;) {
        struct pollfd pfd[2];
        nfds_t n = 0;
        int64_t left = deadline - reply_clock_ms();
        pid_t w;

        if (!exited) {
            w = waitpid(pid, &status, WNOHANG);
            if (w == pid)
                exited = true;
            else if (w < 0 && errno != EINTR) {
                reply_reason_errno(reason, reasonlen, "waitpid", errno);
                goto out;
            }
        }
        if (exited && in_pipe[1] < 0)
            break;
        if (exited && written < msg_len) {
            /* It went away before reading everything. */
            break;
        }
        if (left <= 0) {
            kill(pid, SIGKILL);
            while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
                ;
            snprintf(reason, reasonlen, "sendmail timed out after %us, killed", s->timeout_s);
            goto out;
        }
        if (in_pipe[1] >= 0)
            pfd[n++] = (struct pollfd){.fd = in_pipe[1], .events = POLLOUT};
        if (out_pipe[0] >= 0)
            pfd[n++] = (struct pollfd){.fd = out_pipe[0], .events = POLLIN};
        /* Short slices: the child's exit is noticed by polling waitpid. */
        if (poll(pfd, n, left < 50 ? (int)left : 50) < 0 && errno != EINTR) {
            reply_reason_errno(reason, reasonlen, "poll", errno);
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            goto out;
        }
        for (nfds_t k = 0; k < n; k++) {
            if (pfd[k].fd == in_pipe[1] && (pfd[k].revents & (POLLOUT | POLLERR | POLLHUP))) {
                ssize_t wr = write(in_pipe[1], j->msg + written, msg_len - written);

                if (wr > 0)
                    written += (size_t)wr;
                if ((wr < 0 && errno != EAGAIN && errno != EINTR) || written == msg_len) {
                    close(in_pipe[1]);
                    in_pipe[1] = -1;
                }
            } else if (pfd[k].fd == out_pipe[0] && (pfd[k].revents & (POLLIN | POLLHUP))) {
                char tmp[256];
                ssize_t rd = read(out_pipe[0], tmp, sizeof(tmp));

                if (rd > 0) {
                    size_t keep = (size_t)rd;

                    if (keep > sizeof(output) - output_len)
                        keep = sizeof(output) - output_len;
                    memcpy(output + output_len, tmp, keep);
                    output_len += keep;
                } else if (rd == 0 || (errno != EAGAIN && errno != EINTR)) {
                    close(out_pipe[0]);
                    out_pipe[0] = -1;
                }
            }
        }
    }
    /* Whatever it printed last (still buffered in the pipe) helps the log. */
    if (out_pipe[0] >= 0) {
        ssize_t rd = read(out_pipe[0], output + output_len, sizeof(output) - output_len);

        if (rd > 0)
            output_len += (size_t)rd;
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && written == msg_len) {
        snprintf(reason, reasonlen, "sent");
        ok = true;
    } else if (WIFEXITED(status)) {
        snprintf(reason, reasonlen, "sendmail exited with status %d", WEXITSTATUS(status));
        if (written < msg_len && WEXITSTATUS(status) == 0)
            snprintf(reason, reasonlen, "sendmail exited before reading the message");
        reply_reason_append(reason, reasonlen, ": ", output, output_len);
    } else if (WIFSIGNALED(status)) {
        snprintf(reason, reasonlen, "sendmail killed by signal %d", WTERMSIG(status));
    } else {
        snprintf(reason, reasonlen, "sendmail ended abnormally");
    }
out:
    if (in_pipe[0] >= 0)
        close(in_pipe[0]);
    if (in_pipe[1] >= 0)
        close(in_pipe[1]);
    if (out_pipe[0] >= 0)
        close(out_pipe[0]);
    if (out_pipe[1] >= 0)
        close(out_pipe[1]);
    return ok;
}
