/*
 * metrics_http.c - MetricsSocket: libmicrohttpd serves GET /metrics
 * (metrics_http.h).
 *
 * Everything here runs on one thread of ours that drives libmicrohttpd
 * (its epoll set, MHD_run()): reading the state's sizes (short LMDB read
 * transactions), rendering the counters, and keeping every client within
 * bounds. Milter threads never wait for it; they only increment atomics
 * (metrics.c).
 *
 * A client that trickles bytes must not hold a slot forever, nor may a
 * crowd of silent ones lock the scraper out (issue 32: libmicrohttpd's
 * timeout restarts on every byte). So each request has a total deadline,
 * METRICS_HTTP_DEADLINE seconds from the connection's start or the end of
 * its previous request to the last byte of the response, however busy
 * the client keeps it; and past METRICS_HTTP_CONNECTIONS clients a new one
 * closes the one that has waited longest without a request being
 * answered, so a scrape always finds room. Closing is a shutdown() of the
 * socket, which libmicrohttpd then sees as the client leaving.
 *
 * Content negotiation: OpenMetrics text unless the client's Accept names
 * text/plain and not application/openmetrics-text (Prometheus' own
 * format then, which promtool checks).
 */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <microhttpd.h>

#include "metrics.h"
#include "metrics_http.h"
#include "snapshot.h"
#include "state.h"
#include "state_db.h"

#define METRICS_HTTP_CONNECTIONS 16 /* clients kept at once; a new one closes the oldest idle */
#define METRICS_HTTP_SLOTS ((size_t)METRICS_HTTP_CONNECTIONS * 2) /* with those closing */
#define METRICS_HTTP_DEADLINE 5 /* seconds for a request: waiting, header, body, response */
#define METRICS_HTTP_BACKLOG 64
#define METRICS_HOST_MAX 256

#define CT_OPENMETRICS "application/openmetrics-text; version=1.0.0; charset=utf-8"
#define CT_PROMETHEUS "text/plain; version=0.0.4; charset=utf-8"

/* One client connection, from libmicrohttpd's start to its close. */
struct metrics_conn {
    struct MHD_Connection *c; /* NULL: a free slot */
    int fd;
    long long since_ms;     /* start of the current request's deadline */
    unsigned long long seq; /* order of since_ms, ties included */
    bool answering;         /* its request is being answered: not idle */
    bool closing;           /* shut down by us; waiting for libmicrohttpd */
};

struct metrics_http {
    struct MHD_Daemon *d;
    struct state *st;
    struct metrics_conn conns[METRICS_HTTP_SLOTS];
    unsigned long long seq;
    int wake[2]; /* metrics_http_free() writes to wake[1] */
    pthread_t thread;
    bool running;
};

/* Split "inet:PORT@HOST" into port and host; no HOST: loopback. */
static int
parse_spec(const char *spec, char *port, size_t port_size, char *host, size_t host_size)
{
    const char *rest, *at;
    bool v6;
    size_t pl, hl;

    if (strncmp(spec, "inet:", 5) == 0) {
        rest = spec + 5;
        v6 = false;
    } else if (strncmp(spec, "inet6:", 6) == 0) {
        rest = spec + 6;
        v6 = true;
    } else
        return -EINVAL;
    at = strchr(rest, '@');
    pl = at ? (size_t)(at - rest) : strlen(rest);
    if (pl == 0 || pl >= port_size)
        return -EINVAL;
    memcpy(port, rest, pl);
    port[pl] = '\0';
    if (at == NULL || at[1] == '\0') {
        snprintf(host, host_size, "%s", v6 ? "::1" : "127.0.0.1");
        return 0;
    }
    at++;
    hl = strlen(at);
    if (hl >= 2 && at[0] == '[' && at[hl - 1] == ']') {
        at++;
        hl -= 2;
    }
    if (hl == 0 || hl >= host_size)
        return -EINVAL;
    memcpy(host, at, hl);
    host[hl] = '\0';
    return 0;
}

int
metrics_http_listen(const char *spec, int *ret_fd)
{
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE | AI_NUMERICSERV};
    struct addrinfo *ai = NULL;
    char port[8], host[METRICS_HOST_MAX];
    int fd = -1, one = 1, r;

    r = parse_spec(spec, port, sizeof(port), host, sizeof(host));
    if (r < 0)
        return r;
    hints.ai_family = strncmp(spec, "inet6:", 6) == 0 ? AF_INET6 : AF_UNSPEC;
    if (getaddrinfo(host, port, &hints, &ai) != 0 || ai == NULL) {
        r = -EADDRNOTAVAIL;
        goto out;
    }
    fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        r = -errno;
        goto out;
    }
    if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
        bind(fd, ai->ai_addr, ai->ai_addrlen) < 0 || listen(fd, METRICS_HTTP_BACKLOG) < 0) {
        r = -errno;
        goto out;
    }
    *ret_fd = fd;
    fd = -1;
    r = 0;
out:
    if (fd >= 0)
        close(fd);
    if (ai != NULL)
        freeaddrinfo(ai);
    return r;
}

static void
table_stat(void *ctx, const struct state_table_stats *s)
{
    struct metrics_gauges *g = ctx;
    struct metrics_table *t;

    if (g->n_tables == METRICS_TABLES_MAX)
        return;
    t = &g->tables[g->n_tables++];
    snprintf(t->name, sizeof(t->name), "%s", s->name);
    t->entries = s->entries;
    t->bytes = s->bytes;
}

static void
read_gauges(struct state *st, struct metrics_gauges *g)
{
    struct snapshot *snap = snapshot_current();
    struct state_stats ss;

    memset(g, 0, sizeof(*g));
    if (snap != NULL) {
        g->rules_generation = snap->generation;
        g->n_rules = classifier_rule_count(snap->classifier);
    }
    snapshot_unref(snap);
    if (st == NULL || state_stats(st, &ss) < 0)
        return;
    g->have_state = true;
    g->state_txnid = ss.txnid;
    g->state_map_bytes = ss.map_size;
    g->state_used_bytes = ss.used_bytes;
    if (state_tables_stats(st, table_stat, g) < 0)
        g->n_tables = 0;
}

static long long
now_ms(void)
{
    struct timespec t;

    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static struct metrics_conn *
conn_of(struct MHD_Connection *c)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

    return ci != NULL ? ci->socket_context : NULL;
}

/* Close mc: libmicrohttpd reads the end of the stream and lets it go. */
static void
conn_close(struct metrics_conn *mc)
{
    if (mc->closing)
        return;
    mc->closing = true;
    shutdown(mc->fd, SHUT_RDWR);
}

/* A new client over the cap closes the idle one waiting longest (by
 * order, not by the clock: a burst shares its millisecond); when every
 * other is being answered, the new one goes. */
static void
conn_make_room(struct metrics_http *h, struct metrics_conn *fresh)
{
    struct metrics_conn *oldest = NULL;
    size_t live = 0;

    for (size_t i = 0; i < METRICS_HTTP_SLOTS; i++) {
        struct metrics_conn *mc = &h->conns[i];

        if (mc->c == NULL || mc->closing)
            continue;
        live++;
        if (mc != fresh && !mc->answering && (oldest == NULL || mc->seq < oldest->seq))
            oldest = mc;
    }
    if (live > METRICS_HTTP_CONNECTIONS)
        conn_close(oldest != NULL ? oldest : fresh);
}

static void
conn_notify(void *cls, struct MHD_Connection *c, void **socket_context,
            enum MHD_ConnectionNotificationCode toe)
{
    struct metrics_http *h = cls;
    struct metrics_conn *mc = *socket_context;
    const union MHD_ConnectionInfo *ci;

    if (toe == MHD_CONNECTION_NOTIFY_CLOSED) {
        if (mc != NULL)
            memset(mc, 0, sizeof(*mc));
        *socket_context = NULL;
        return;
    }
    ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
    for (size_t i = 0; i < METRICS_HTTP_SLOTS && mc == NULL; i++)
        if (h->conns[i].c == NULL)
            mc = &h->conns[i];
    if (mc == NULL || ci == NULL) {
        /* libmicrohttpd's own limit is the number of slots: not reached. */
        if (ci != NULL)
            shutdown(ci->connect_fd, SHUT_RDWR);
        return;
    }
    *mc =
        (struct metrics_conn){.c = c, .fd = ci->connect_fd, .since_ms = now_ms(), .seq = h->seq++};
    *socket_context = mc;
    conn_make_room(h, mc);
}

/* The request's header is in: it is being answered, no longer idle. */
static void
conn_answering(struct MHD_Connection *c)
{
    struct metrics_conn *mc = conn_of(c);

    if (mc != NULL)
        mc->answering = true;
}

/* The response is out: the next request's deadline starts now. */
static void
request_completed(void *cls, struct MHD_Connection *c, void **req_cls,
                  enum MHD_RequestTerminationCode toe)
{
    struct metrics_http *h = cls;
    struct metrics_conn *mc = conn_of(c);

    (void)req_cls;
    (void)toe;
    if (mc != NULL) {
        mc->answering = false;
        mc->since_ms = now_ms();
        mc->seq = h->seq++;
    }
}

/* Close every client past its deadline; the milliseconds until the next
 * deadline, or -1 when there is none. */
static long long
conn_sweep(struct metrics_http *h)
{
    long long now = now_ms(), next = -1;

    for (size_t i = 0; i < METRICS_HTTP_SLOTS; i++) {
        struct metrics_conn *mc = &h->conns[i];
        long long end = mc->since_ms + METRICS_HTTP_DEADLINE * 1000LL;

        if (mc->c == NULL || mc->closing)
            continue;
        if (end <= now)
            conn_close(mc);
        else if (next < 0 || end - now < next)
            next = end - now;
    }
    return next;
}

static bool
wants_openmetrics(struct MHD_Connection *conn)
{
    const char *accept = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT);

    if (accept == NULL || strstr(accept, "application/openmetrics-text") != NULL)
        return true;
    return strstr(accept, "text/plain") == NULL;
}

static enum MHD_Result
respond_text(struct MHD_Connection *conn, unsigned code, const char *text, const char *allow)
{
    /* libmicrohttpd 0.9.75 takes void * even for a buffer it only reads. */
    union {
        const char *in;
        void *out;
    } buf = {.in = text};
    struct MHD_Response *resp;
    enum MHD_Result ret;

    resp = MHD_create_response_from_buffer(strlen(text), buf.out, MHD_RESPMEM_PERSISTENT);
    if (resp == NULL)
        return MHD_NO;
    if (MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "text/plain; charset=utf-8") !=
            MHD_YES ||
        (allow != NULL && MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, allow) != MHD_YES))
        ret = MHD_NO;
    else
        ret = MHD_queue_response(conn, code, resp);
    MHD_destroy_response(resp);
    return ret;
}

static enum MHD_Result
handle(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
       const char *version, const char *upload_data, size_t *upload_data_size, void **req_cls)
{
    struct metrics_http *h = cls;
    struct metrics_gauges g;
    struct MHD_Response *resp;
    enum MHD_Result ret;
    bool om;
    char *body = NULL;
    size_t len = 0;

    (void)version;
    (void)upload_data;
    (void)upload_data_size;
    (void)req_cls;
    conn_answering(conn);
    if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 && strcmp(method, MHD_HTTP_METHOD_HEAD) != 0)
        return respond_text(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "method not allowed\n", "GET, HEAD");
    if (strcmp(url, "/metrics") != 0)
        return respond_text(conn, MHD_HTTP_NOT_FOUND, "not found: try /metrics\n", NULL);
    om = wants_openmetrics(conn);
    read_gauges(h->st, &g);
    if (metrics_render(&g, om, &body, &len) < 0)
        return respond_text(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "cannot render metrics\n", NULL);
    resp = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
    if (resp == NULL) {
        free(body);
        return MHD_NO;
    }
    if (MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE,
                                om ? CT_OPENMETRICS : CT_PROMETHEUS) != MHD_YES)
        ret = MHD_NO;
    else
        ret = MHD_queue_response(conn, MHD_HTTP_OK, resp);
    MHD_destroy_response(resp);
    return ret;
}

/* The server's thread: wait on libmicrohttpd's epoll set (readable while
 * it has events; a socket we shut down is one) and on the wake-up pipe,
 * never past the nearest deadline, then let libmicrohttpd work. */
static void *
serve(void *arg)
{
    struct metrics_http *h = arg;
    const union MHD_DaemonInfo *di = MHD_get_daemon_info(h->d, MHD_DAEMON_INFO_EPOLL_FD);
    struct pollfd pfd[2] = {
        {.fd = di != NULL ? di->epoll_fd : -1, .events = POLLIN},
        {.fd = h->wake[0], .events = POLLIN},
    };

    for (;;) {
        MHD_UNSIGNED_LONG_LONG mhd_ms;
        long long wait = conn_sweep(h);

        if (MHD_get_timeout(h->d, &mhd_ms) == MHD_YES && (wait < 0 || (long long)mhd_ms < wait))
            wait = (long long)mhd_ms;
        if (poll(pfd, 2, wait > 60000 ? 60000 : (int)wait) < 0 && errno != EINTR)
            break;
        if (pfd[1].revents != 0)
            break;
        /* A failure here is one client's; the next turn serves the rest. */
        (void)MHD_run(h->d);
    }
    return NULL;
}

int
metrics_http_start(int fd, struct state *st, struct metrics_http **ret)
{
    struct metrics_http *h = calloc(1, sizeof(*h));
    int r;

    if (h == NULL) {
        close(fd);
        return -ENOMEM;
    }
    h->st = st;
    h->wake[0] = h->wake[1] = -1;
    if (pipe2(h->wake, O_CLOEXEC | O_NONBLOCK) < 0) {
        r = -errno;
        close(fd);
        goto fail;
    }
    /* No thread of libmicrohttpd's own: serve() drives it, so that the
     * deadlines are kept even while no client sends anything. The limit
     * leaves room for the connections being closed. */
    h->d = MHD_start_daemon(
        MHD_USE_EPOLL, 0, NULL, NULL, handle, h, MHD_OPTION_LISTEN_SOCKET, (MHD_socket)fd,
        MHD_OPTION_CONNECTION_LIMIT, (unsigned)METRICS_HTTP_SLOTS, MHD_OPTION_CONNECTION_TIMEOUT,
        (unsigned)METRICS_HTTP_DEADLINE, MHD_OPTION_NOTIFY_CONNECTION, conn_notify, h,
        MHD_OPTION_NOTIFY_COMPLETED, request_completed, h, MHD_OPTION_END);
    if (h->d == NULL) {
        close(fd);
        r = -EIO;
        goto fail;
    }
    r = -pthread_create(&h->thread, NULL, serve, h);
    if (r < 0)
        goto fail;
    h->running = true;
    *ret = h;
    return 0;
fail:
    metrics_http_free(h);
    return r;
}

struct metrics_http *
metrics_http_free(struct metrics_http *h)
{
    if (h == NULL)
        return NULL;
    if (h->running) {
        /* A full pipe already holds a wake-up: nothing to retry. */
        ssize_t w = write(h->wake[1], "x", 1);

        (void)w;
        pthread_join(h->thread, NULL);
    }
    /* MHD_stop_daemon() also closes the listening socket it was given. */
    if (h->d != NULL)
        MHD_stop_daemon(h->d);
    if (h->wake[0] >= 0)
        close(h->wake[0]);
    if (h->wake[1] >= 0)
        close(h->wake[1]);
    free(h);
    return NULL;
}
