/*
 * reply_smtp.c - the SMTP transport: one session per reply to SMTPServer
 * (loopback unless allowed otherwise), MAIL FROM:<>, the message with CRLF
 * line ends and dot-stuffing, every step under the send deadline, reply
 * lines capped. Runs on the worker thread; resolving runs at start-up.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include "reply_clock.h"
#include "reply_reason.h"
#include "reply_text.h"
#include "reply_transport.h"

#define REPLY_SMTP_LINE_MAX 1000 /* bytes of one SMTP reply line kept */
#define REPLY_SMTP_LINES_MAX 100 /* lines of one multi-line SMTP reply */

struct reply_smtp {
    int fd;
    int64_t deadline;
    char buf[REPLY_SMTP_LINE_MAX + 2];
    size_t have;
    char last[REPLY_SMTP_LINE_MAX + 1]; /* the last reply line, for reasons */
};

static int
reply_smtp_wait(struct reply_smtp *c, short events)
{
    for (;;) {
        struct pollfd pfd = {.fd = c->fd, .events = events};
        int64_t left = c->deadline - reply_clock_ms();
        int n;

        if (left <= 0)
            return -ETIMEDOUT;
        n = poll(&pfd, 1, left > 1000 ? 1000 : (int)left);
        if (n < 0 && errno != EINTR)
            return -errno;
        if (n > 0)
            return 0;
    }
}

static int
reply_smtp_write(struct reply_smtp *c, const char *s, size_t n)
{
    while (n > 0) {
        ssize_t w;
        int r = reply_smtp_wait(c, POLLOUT);

        if (r < 0)
            return r;
        w = send(c->fd, s, n, MSG_NOSIGNAL);
        if (w < 0 && (errno == EAGAIN || errno == EINTR))
            continue;
        if (w < 0)
            return -errno;
        s += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Take the buffered line ending at nl into c->last; its code, with
 * *ret_final set when no continuation follows, or -EPROTO. */
static int
reply_smtp_line(struct reply_smtp *c, const char *nl, bool *ret_final)
{
    size_t len = (size_t)(nl - c->buf);

    if (len > 0 && c->buf[len - 1] == '\r')
        len--;
    memcpy(c->last, c->buf, len);
    c->last[len] = '\0';
    memmove(c->buf, nl + 1, c->have - (size_t)(nl + 1 - c->buf));
    c->have -= (size_t)(nl + 1 - c->buf);
    if (len < 3 || c->last[0] < '1' || c->last[0] > '5' || c->last[1] < '0' || c->last[1] > '9' ||
        c->last[2] < '0' || c->last[2] > '9')
        return -EPROTO;
    *ret_final = len == 3 || c->last[3] == ' ';
    return (c->last[0] - '0') * 100 + (c->last[1] - '0') * 10 + (c->last[2] - '0');
}

/* More of the server's words into c->buf: 0 (also when interrupted),
 * or -errno. */
static int
reply_smtp_fill(struct reply_smtp *c)
{
    ssize_t n;
    int r;

    if (c->have >= sizeof(c->buf) - 1)
        return -EPROTO; /* a line longer than SMTP allows */
    r = reply_smtp_wait(c, POLLIN);
    if (r < 0)
        return r;
    n = recv(c->fd, c->buf + c->have, sizeof(c->buf) - 1 - c->have, 0);
    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return 0;
    if (n < 0)
        return -errno;
    if (n == 0)
        return -ECONNRESET;
    c->have += (size_t)n;
    return 0;
}

/* Read one reply (all continuation lines); returns the code or -errno. */
static int
reply_smtp_reply(struct reply_smtp *c)
{
    for (unsigned lines = 0; lines < REPLY_SMTP_LINES_MAX;) {
        char *nl = memchr(c->buf, '\n', c->have);
        bool final = false;
        int r;

        if (nl == NULL) {
            r = reply_smtp_fill(c);
            if (r < 0)
                return r;
            continue;
        }
        lines++;
        r = reply_smtp_line(c, nl, &final);
        if (r < 0 || final)
            return r;
    }
    return -EPROTO;
}

/* Send cmd (may be NULL: just read) and expect a reply in [lo, hi]. */
static bool
reply_smtp_step(struct reply_smtp *c, const char *cmd, const char *what, int lo, int hi,
                char *reason, size_t reasonlen)
{
    int r = 0;

    if (cmd != NULL)
        r = reply_smtp_write(c, cmd, strlen(cmd));
    if (r == 0)
        r = reply_smtp_reply(c);
    if (r < 0) {
        char eb[128];

        snprintf(reason, reasonlen, "smtp %s: %s", what,
                 r == -EPROTO ? "bad reply" : strerror_r(-r, eb, sizeof(eb)));
        return false;
    }
    if (r < lo || r > hi) {
        snprintf(reason, reasonlen, "smtp %s", what);
        reply_reason_append(reason, reasonlen, ": ", c->last, strlen(c->last));
        return false;
    }
    return true;
}

/* A non-blocking connection to SMTPServer within the deadline; false
 * with reason set when there is none. */
static bool
reply_smtp_connect(const struct reply_sender *s, struct reply_smtp *c, char *reason,
                   size_t reasonlen)
{
    int soerr = 0, r;
    socklen_t sl = sizeof(soerr);

    c->fd = socket(s->smtp_addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (c->fd < 0) {
        reply_reason_errno(reason, reasonlen, "smtp socket", errno);
        return false;
    }
    if (connect(c->fd, (const struct sockaddr *)&s->smtp_addr, s->smtp_addrlen) == 0)
        return true;
    if (errno != EINPROGRESS) {
        reply_reason_errno(reason, reasonlen, "smtp connect", errno);
        return false;
    }
    r = reply_smtp_wait(c, POLLOUT);
    if (r == 0 && getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) == 0 && soerr != 0)
        r = -soerr;
    if (r < 0) {
        reply_reason_errno(reason, reasonlen, "smtp connect", -r);
        return false;
    }
    return true;
}

/* Greeting, EHLO (or HELO), MAIL FROM:<>, RCPT TO and DATA. */
static bool
reply_smtp_envelope(const struct reply_sender *s, struct reply_smtp *c, const char *rcpt,
                    char *reason, size_t reasonlen)
{
    char cmd[REPLY_ADDR_MAX + REPLY_HOST_MAX + 32];

    if (!reply_smtp_step(c, NULL, "greeting", 220, 220, reason, reasonlen))
        return false;
    snprintf(cmd, sizeof(cmd), "EHLO %s\r\n", s->helo);
    if (!reply_smtp_step(c, cmd, "EHLO", 250, 250, reason, reasonlen)) {
        snprintf(cmd, sizeof(cmd), "HELO %s\r\n", s->helo);
        if (!reply_smtp_step(c, cmd, "HELO", 250, 250, reason, reasonlen))
            return false;
    }
    if (!reply_smtp_step(c, "MAIL FROM:<>\r\n", "MAIL FROM", 250, 250, reason, reasonlen))
        return false;
    snprintf(cmd, sizeof(cmd), "RCPT TO:<%s>\r\n", rcpt);
    if (!reply_smtp_step(c, cmd, "RCPT TO", 250, 251, reason, reasonlen))
        return false;
    return reply_smtp_step(c, "DATA\r\n", "DATA", 354, 354, reason, reasonlen);
}

/* The message with CRLF line ends and dot-stuffing, then its end. */
static bool
reply_smtp_data(struct reply_smtp *c, const char *msg, char *reason, size_t reasonlen)
{
    struct textbuf data;
    bool ok = false;
    int r;

    reply_buf_init(&data);
    for (const char *p = msg; *p != '\0';) {
        size_t len = strcspn(p, "\n");
        size_t tl = len;

        if (tl > 0 && p[tl - 1] == '\r')
            tl--;
        if (p[0] == '.')
            textbuf_add(&data, ".", 1);
        textbuf_add(&data, p, tl);
        textbuf_add(&data, "\r\n", 2);
        p += len;
        if (*p == '\n')
            p++;
    }
    textbuf_add(&data, ".\r\n", 3);
    if (data.err != 0) {
        reply_reason_errno(reason, reasonlen, "smtp", -reply_buf_err(&data));
        goto out;
    }
    r = reply_smtp_write(c, data.p, data.len);
    if (r < 0) {
        reply_reason_errno(reason, reasonlen, "smtp DATA", -r);
        goto out;
    }
    ok = reply_smtp_step(c, NULL, "end of DATA", 250, 250, reason, reasonlen);
out:
    textbuf_release(&data);
    return ok;
}

bool
reply_smtp_send(struct reply_sender *s, const struct reply_job *j, char *reason, size_t reasonlen)
{
    struct reply_smtp *c;
    bool ok;

    c = calloc(1, sizeof(*c));
    if (c == NULL) {
        snprintf(reason, reasonlen, "out of memory");
        return false;
    }
    c->deadline = reply_clock_ms() + (int64_t)s->timeout_s * 1000;
    ok = reply_smtp_connect(s, c, reason, reasonlen) &&
         reply_smtp_envelope(s, c, j->rcpt, reason, reasonlen) &&
         reply_smtp_data(c, j->msg, reason, reasonlen);
    if (ok) {
        snprintf(reason, reasonlen, "sent");
        /* The message is accepted; a failed QUIT changes nothing. */
        reply_smtp_write(c, "QUIT\r\n", 6);
        reply_smtp_reply(c);
    }
    if (c->fd >= 0)
        close(c->fd);
    free(c);
    return ok;
}

static bool
reply_loopback(const struct sockaddr *sa)
{
    if (sa->sa_family == AF_INET) {
        const struct sockaddr_in *in = (const struct sockaddr_in *)sa;

        return (ntohl(in->sin_addr.s_addr) >> 24) == 127;
    }
    if (sa->sa_family == AF_INET6) {
        const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;

        return IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr);
    }
    return false;
}

/* "host:port", "[v6]:port" or "host" into host (REPLY_HOST_MAX + 1
 * bytes) and *ret_port (into server, or "25"); -EINVAL when malformed. */
static int
reply_smtp_split(const char *server, char *host, const char **ret_port)
{
    const char *colon;
    size_t hlen;

    if (server[0] == '[') {
        const char *close_br = strchr(server, ']');

        if (close_br == NULL)
            return -EINVAL;
        hlen = (size_t)(close_br - server - 1);
        server++;
        colon = close_br[1] == ':' ? close_br + 1 : NULL;
        if (close_br[1] != '\0' && colon == NULL)
            return -EINVAL;
    } else {
        colon = strrchr(server, ':');
        if (colon != NULL && strchr(server, ':') != colon)
            return -EINVAL; /* a bare IPv6 address needs brackets */
        hlen = colon ? (size_t)(colon - server) : strlen(server);
    }
    if (hlen == 0 || hlen > REPLY_HOST_MAX)
        return -EINVAL;
    memcpy(host, server, hlen);
    host[hlen] = '\0';
    *ret_port = "25";
    if (colon != NULL) {
        const char *port = colon + 1;
        char *end;
        long p = strtol(port, &end, 10);

        if (*port == '\0' || *end != '\0' || p < 1 || p > 65535)
            return -EINVAL;
        *ret_port = port;
    }
    return 0;
}

/* Resolve "host:port", "[v6]:port" or "host" once, at start-up. */
int
reply_smtp_resolve(struct reply_sender *s, const char *server, bool allow_remote)
{
    char host[REPLY_HOST_MAX + 1];
    const char *port;
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *ai = NULL;
    int r = reply_smtp_split(server, host, &port);

    if (r < 0)
        return r;
    r = getaddrinfo(host, port, &hints, &ai);
    if (r != 0)
        return r == EAI_MEMORY ? -ENOMEM : -EHOSTUNREACH;
    r = -EINVAL;
    for (struct addrinfo *a = ai; a != NULL; a = a->ai_next) {
        if (a->ai_addrlen > sizeof(s->smtp_addr))
            continue;
        if (!allow_remote && !reply_loopback(a->ai_addr))
            continue;
        memcpy(&s->smtp_addr, a->ai_addr, a->ai_addrlen);
        s->smtp_addrlen = a->ai_addrlen;
        r = 0;
        break;
    }
    freeaddrinfo(ai);
    return r;
}
