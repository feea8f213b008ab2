/*
 * metrics_http.c - MetricsSocket: libmicrohttpd serves GET /metrics
 * (metrics_http.h).
 *
 * Everything here runs on libmicrohttpd's one polling thread: reading the
 * state's sizes (short LMDB read transactions) and rendering the
 * counters. Milter threads never wait for it; they only increment
 * atomics (metrics.c). Connections are capped and time out, so a client
 * that stalls costs one slot of METRICS_HTTP_CONNECTIONS, not a thread.
 *
 * Content negotiation: OpenMetrics text unless the client's Accept names
 * text/plain and not application/openmetrics-text (Prometheus' own
 * format then, which promtool checks).
 */
#include <errno.h>
#include <netdb.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <microhttpd.h>

#include "metrics.h"
#include "metrics_http.h"
#include "snapshot.h"
#include "state.h"
#include "state_db.h"

#define METRICS_HTTP_CONNECTIONS 16 /* clients served at once */
#define METRICS_HTTP_TIMEOUT 10     /* seconds a client may stay silent */
#define METRICS_HOST_MAX 256

#define CT_OPENMETRICS "application/openmetrics-text; version=1.0.0; charset=utf-8"
#define CT_PROMETHEUS "text/plain; version=0.0.4; charset=utf-8"

struct metrics_http {
    struct MHD_Daemon *d;
    struct state *st;
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
        bind(fd, ai->ai_addr, ai->ai_addrlen) < 0 || listen(fd, METRICS_HTTP_CONNECTIONS) < 0) {
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

int
metrics_http_start(int fd, struct state *st, struct metrics_http **ret)
{
    struct metrics_http *h = calloc(1, sizeof(*h));

    if (h == NULL) {
        close(fd);
        return -ENOMEM;
    }
    h->st = st;
    /* One polling thread for every client: scrapes are rare and short. */
    h->d = MHD_start_daemon(MHD_USE_AUTO_INTERNAL_THREAD, 0, NULL, NULL, handle, h,
                            MHD_OPTION_LISTEN_SOCKET, (MHD_socket)fd, MHD_OPTION_CONNECTION_LIMIT,
                            (unsigned)METRICS_HTTP_CONNECTIONS, MHD_OPTION_CONNECTION_TIMEOUT,
                            (unsigned)METRICS_HTTP_TIMEOUT, MHD_OPTION_END);
    if (h->d == NULL) {
        close(fd);
        free(h);
        return -EIO;
    }
    *ret = h;
    return 0;
}

struct metrics_http *
metrics_http_free(struct metrics_http *h)
{
    if (h == NULL)
        return NULL;
    /* MHD_stop_daemon() also closes the listening socket it was given. */
    MHD_stop_daemon(h->d);
    free(h);
    return NULL;
}
