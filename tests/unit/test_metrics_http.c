/*
 * test_metrics_http.c - the MetricsSocket server (milter/metrics_http.c)
 * under hostile clients, on a loopback port of its own: a crowd of silent
 * connections, and slowloris clients that send a header line every second
 * (well inside any idle timeout). A scrape must be answered meanwhile,
 * the oldest idle client is the one closed for room, and a trickling
 * client is closed however busy it keeps its connection.
 *
 * Every wait is bounded; every socket is closed and the server stopped.
 * The bounds are far above what the server needs and below what the
 * unbounded server took (issue 32: a scrape waited for the 10 s idle
 * timeout of some client, forever under the slowloris load).
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "metrics.h"
#include "metrics_http.h"

#define CROWD 97        /* silent clients, as the red team's */
#define SLOW 16         /* slowloris clients, as the red team's */
#define SCRAPE_MS 8000  /* bound on one scrape */
#define CLOSE_MS 15000  /* bound on the server closing a slowloris client */
#define LINE_EVERY 1000 /* a slowloris client's pace, ms */

struct server {
    struct metrics_http *h;
    int port;
};

static long long
now_ms(void)
{
    struct timespec t;

    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static int
server_setup(void **state)
{
    struct server *s = calloc(1, sizeof(*s));
    struct sockaddr_in sa;
    socklen_t len = sizeof(sa);
    int fd = -1;

    assert_non_null(s);
    assert_int_equal(metrics_http_listen("inet:0@127.0.0.1", &fd), 0);
    assert_int_equal(getsockname(fd, (struct sockaddr *)&sa, &len), 0);
    s->port = ntohs(sa.sin_port);
    assert_int_equal(metrics_http_start(fd, NULL, &s->h), 0);
    *state = s;
    return 0;
}

static int
server_teardown(void **state)
{
    struct server *s = *state;

    assert_null(metrics_http_free(s->h));
    free(s);
    return 0;
}

/* A non-blocking connection to the server, not waited for. */
static int
client(int port)
{
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

    assert_true(fd >= 0);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
        assert_int_equal(errno, EINPROGRESS);
    return fd;
}

/* Wait for events on fd until the deadline; false when it passed. */
static bool
wait_fd(int fd, short events, long long deadline)
{
    struct pollfd p = {.fd = fd, .events = events};
    long long left;

    while ((left = deadline - now_ms()) > 0) {
        int r = poll(&p, 1, (int)left);

        if (r > 0)
            return true;
        if (r < 0 && errno != EINTR)
            return false;
    }
    return false;
}

/* GET /metrics on a new connection; the HTTP status, or -1 when none came
 * within SCRAPE_MS. */
static int
scrape(int port)
{
    static const char req[] = "GET /metrics HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n";
    long long deadline = now_ms() + SCRAPE_MS;
    char buf[4096];
    size_t got = 0;
    int fd = client(port), status = -1;

    if (!wait_fd(fd, POLLOUT, deadline) || send(fd, req, sizeof(req) - 1, MSG_NOSIGNAL) < 0)
        goto out;
    while (got < 12 && wait_fd(fd, POLLIN, deadline)) {
        ssize_t n = recv(fd, buf + got, sizeof(buf) - 1 - got, 0);

        if (n <= 0)
            break;
        got += (size_t)n;
    }
    buf[got] = '\0';
    if (got >= 12 && strncmp(buf, "HTTP/1.", 7) == 0)
        status = (int)strtol(buf + 9, NULL, 10);
out:
    close(fd);
    return status;
}

/* Has the server closed fd (end of stream or reset), without waiting? */
static bool
closed_by_server(int fd)
{
    char c;
    ssize_t n = recv(fd, &c, 1, MSG_DONTWAIT);

    return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK);
}

/* 97 silent clients: a scrape is answered, and the room for it was made
 * by closing the oldest of them, not the newest. */
static void
test_silent_crowd(void **state)
{
    struct server *s = *state;
    int fds[CROWD];
    long long newest;

    assert_int_equal(scrape(s->port), 200);
    /* One at a time, so that the server meets them in this order. */
    for (int i = 0; i < CROWD; i++) {
        fds[i] = client(s->port);
        assert_true(wait_fd(fds[i], POLLOUT, now_ms() + SCRAPE_MS));
    }
    newest = now_ms();
    assert_int_equal(scrape(s->port), 200);
    assert_true(wait_fd(fds[0], POLLIN, now_ms() + SCRAPE_MS));
    assert_true(closed_by_server(fds[0]));
    /* Unless the machine was so slow that its deadline passed too. */
    if (now_ms() - newest < 4000)
        assert_false(closed_by_server(fds[CROWD - 1]));
    for (int i = 0; i < CROWD; i++)
        close(fds[i]);
}

/*
 * 16 clients each sending a header line every second, never silent long
 * enough for an idle timeout: scrapes among them are answered, and each
 * of them is closed by the server, its request never complete.
 */
static void
test_slowloris(void **state)
{
    struct server *s = *state;
    int fds[SLOW];
    bool open[SLOW];
    int n_open = SLOW, scrapes = 0;
    long long start = now_ms(), next_line = start;

    for (int i = 0; i < SLOW; i++) {
        fds[i] = client(s->port);
        open[i] = true;
        assert_true(wait_fd(fds[i], POLLOUT, start + SCRAPE_MS));
        assert_int_equal(send(fds[i], "GET /metrics HTTP/1.1\r\n", 23, MSG_NOSIGNAL), 23);
    }
    while (n_open > 0 && now_ms() - start < CLOSE_MS) {
        if (now_ms() >= next_line) {
            for (int i = 0; i < SLOW; i++)
                if (open[i] && (closed_by_server(fds[i]) ||
                                send(fds[i], "X-Slow: 1\r\n", 11, MSG_NOSIGNAL) < 0)) {
                    open[i] = false;
                    n_open--;
                }
            next_line += LINE_EVERY;
            /* A scrape every other round while they hold on. */
            if (n_open > 0 && (next_line - start) % (2LL * LINE_EVERY) == 0) {
                assert_int_equal(scrape(s->port), 200);
                scrapes++;
            }
        }
        usleep(50000);
    }
    for (int i = 0; i < SLOW; i++)
        close(fds[i]);
    assert_int_equal(n_open, 0);
    assert_true(scrapes >= 1);
    /* And the server is still there. */
    assert_int_equal(scrape(s->port), 200);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_silent_crowd, server_setup, server_teardown),
        cmocka_unit_test_setup_teardown(test_slowloris, server_setup, server_teardown),
    };

    metrics_reset();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
