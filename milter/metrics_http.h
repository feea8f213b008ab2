/*
 * metrics_http.h - the MetricsSocket HTTP endpoint: GET /metrics served
 * by libmicrohttpd from its own thread, never from a milter thread.
 *
 * Start-up opens the socket (metrics_http_listen(), while still root, so
 * that a bad address reaches the caller's exit status) and starts serving
 * later (metrics_http_start(), after privileges are dropped).
 */
#ifndef SLOP_MILTER_METRICS_HTTP_H
#define SLOP_MILTER_METRICS_HTTP_H

struct metrics_http;
struct state;

/*
 * Bind and listen on spec, "inet:PORT@HOST" or "inet6:PORT@HOST" (HOST
 * may be bracketed; no HOST: loopback). Returns 0 with *ret_fd, -EINVAL
 * for a spec that is not TCP, or the bind's negative errno.
 */
int metrics_http_listen(const char *spec, int *ret_fd);

/*
 * Serve on fd (taken over, closed by metrics_http_free() or on failure).
 * st (may be NULL) is read for the state gauges and must outlive the
 * server. Returns 0 with *ret, or -EIO when libmicrohttpd cannot start.
 */
int metrics_http_start(int fd, struct state *st, struct metrics_http **ret);

/* Stop serving and wait for the server's threads. Accepts NULL; returns NULL. */
struct metrics_http *metrics_http_free(struct metrics_http *h);

#endif
