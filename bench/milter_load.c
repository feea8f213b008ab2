/*
 * milter_load.c - a load generator that speaks the milter protocol (v6)
 * straight to a milter, so that no MTA sits between the clock and the
 * filter. Each of N threads holds one milter connection: it negotiates
 * once (SMFIC_OPTNEG), plays connect and helo, then one transaction per
 * message (mail, rcpt, headers, eoh, body chunks, eom) as an MTA does for
 * several messages in one SMTP session. With -r every message gets a new
 * milter connection (Postfix with one message per SMTP session); with -q
 * every message gets a new SMTP session on the same milter connection,
 * announced with SMFIC_QUIT_NC.
 *
 * Latency is measured from the write of SMFIC_BODYEOB to the final reply
 * (accept, continue, reject, tempfail, discard, replycode), so it covers
 * the scan and every modification the milter sends before its answer.
 * Replies above 35 ms are counted as "stalls": on loopback nothing but a
 * Nagle/delayed-ACK wait (40 ms on Linux) takes that long for a small
 * message.
 *
 * Messages come from the paths on the command line (slopctl's mailbox
 * walker: files, directories, mboxes); each is turned into its packets
 * once, up front, with the body's bare LFs made CRLF as an MTA sends them.
 * Runs are bounded by a message count (-n) and a time limit (-t); every
 * socket has a receive and send timeout. Output: one line of key=value
 * pairs, and with -o one latency in microseconds per line.
 *
 * Threading: messages and options are read-only once the workers start;
 * each worker owns its socket and its latency slots; the message counter
 * is atomic.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "mailbox.h"

#define LOAD_MAX_CONNS 1024
#define LOAD_MAX_MESSAGES 200000
#define LOAD_MAX_MESSAGE_BYTES ((size_t)64 << 20)
#define LOAD_MAX_HEADERS 1000
/* libmilter drops a connection on a packet over 64 KB unless SMFIP_MDS_*
 * was negotiated; an MTA cuts a longer header field to fit, and so do we. */
#define LOAD_MAX_HEADER_VALUE 60000
#define LOAD_MAX_REPLY ((uint32_t)1 << 20) /* larger replies are a protocol error */
#define LOAD_BODY_CHUNK 65535              /* MILTER_CHUNK_SIZE without MDS_* */
#define LOAD_STALL_US 35000
#define LOAD_IO_TIMEOUT_S 30
#define LOAD_MAX_ADDR 1000 /* -f and -R; longer ones are refused */

/* Commands (MTA to milter). */
#define SMFIC_ABORT 'A'
#define SMFIC_BODY 'B'
#define SMFIC_CONNECT 'C'
#define SMFIC_MACRO 'D'
#define SMFIC_BODYEOB 'E'
#define SMFIC_HELO 'H'
#define SMFIC_QUIT_NC 'K'
#define SMFIC_HEADER 'L'
#define SMFIC_MAIL 'M'
#define SMFIC_EOH 'N'
#define SMFIC_OPTNEG 'O'
#define SMFIC_QUIT 'Q'
#define SMFIC_RCPT 'R'
#define SMFIC_DATA 'T'

/* Protocol flags the milter may ask for in its OPTNEG answer. */
#define SMFIP_NOCONNECT 0x1u
#define SMFIP_NOHELO 0x2u
#define SMFIP_NOMAIL 0x4u
#define SMFIP_NORCPT 0x8u
#define SMFIP_NOBODY 0x10u
#define SMFIP_NOHDRS 0x20u
#define SMFIP_NOEOH 0x40u
#define SMFIP_NR_HDR 0x80u
#define SMFIP_NODATA 0x200u
#define SMFIP_SKIP 0x400u
#define SMFIP_NR_CONN 0x1000u
#define SMFIP_NR_HELO 0x2000u
#define SMFIP_NR_MAIL 0x4000u
#define SMFIP_NR_RCPT 0x8000u
#define SMFIP_NR_DATA 0x10000u
#define SMFIP_NR_EOH 0x40000u
#define SMFIP_NR_BODY 0x80000u
#define SMFIP_HDR_LEADSPC 0x100000u
/* What this "MTA" offers: every step may be skipped or left unanswered. */
#define LOAD_OFFER_PROTO 0x1FFFFFu
#define LOAD_OFFER_ACTIONS 0x1FFu

struct packet_buf {
    char *data;
    size_t len, cap;
};

/* One message, pre-built: headers are name/value offsets into text. */
struct message {
    char *text; /* header section as read, NUL-separated pieces */
    size_t n_headers;
    const char **names, **values;
    char *body; /* CRLF line ends */
    size_t body_len;
    size_t bytes; /* size on disk */
};

struct options {
    const char *socket;
    unsigned conns;
    unsigned long count;
    double seconds;
    double rate; /* offered messages/s over all connections; 0: as fast as answered */
    bool reconnect;
    bool quit_nc;
    bool nodelay;
    bool verbose;
    const char *latency_file;
    const char *mail_from; /* envelope sender, without <> */
    const char *rcpt_to;   /* envelope recipient, without <> */
};

struct worker {
    pthread_t tid;
    unsigned id;
    uint64_t *lat_us; /* slots for this worker's messages */
    size_t n_lat, cap_lat;
    unsigned long accept, reject, tempfail, other, errors, stalls, mods;
    char error[160];
};

static struct options opt = {
    .conns = 1,
    .count = 0,
    .seconds = 60.0,
    .nodelay = true,
    .mail_from = "author@bench.test",
    .rcpt_to = "security@bench.test",
};
static struct message *messages;
static size_t n_messages;
static atomic_ulong next_message;
static uint64_t deadline_us;
static uint64_t start_us;

static uint64_t
now_us(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static int
buf_reserve(struct packet_buf *b, size_t more)
{
    size_t cap;
    char *p;

    if (b->len + more <= b->cap)
        return 0;
    cap = b->cap ? b->cap : 4096;
    while (cap < b->len + more)
        cap *= 2;
    p = realloc(b->data, cap);
    if (p == NULL)
        return -ENOMEM;
    b->data = p;
    b->cap = cap;
    return 0;
}

static int
buf_add(struct packet_buf *b, const void *p, size_t n)
{
    if (buf_reserve(b, n) < 0)
        return -ENOMEM;
    memcpy(b->data + b->len, p, n);
    b->len += n;
    return 0;
}

static int
buf_addstr(struct packet_buf *b, const char *s)
{
    return buf_add(b, s, strlen(s) + 1);
}

/* Start a packet: 4-byte length (patched by packet_end) and the command. */
static size_t
packet_begin(struct packet_buf *b, char cmd)
{
    static const char zero[4];
    size_t at = b->len;

    buf_add(b, zero, 4);
    buf_add(b, &cmd, 1);
    return at;
}

static void
packet_end(struct packet_buf *b, size_t at)
{
    uint32_t n = htonl((uint32_t)(b->len - at - 4));

    memcpy(b->data + at, &n, 4);
}

static int
write_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);

        if (w < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

static int
read_all(int fd, char *p, size_t n)
{
    while (n > 0) {
        ssize_t r = recv(fd, p, n, 0);

        if (r < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        if (r == 0)
            return -ECONNRESET;
        p += r;
        n -= (size_t)r;
    }
    return 0;
}

/* Read one reply; *ret_data (owned by the caller's buffer) holds its payload. */
static int
read_reply(int fd, struct packet_buf *in, char *ret_cmd, uint32_t *ret_len)
{
    uint32_t n;
    int r;

    r = read_all(fd, (char *)&n, 4);
    if (r < 0)
        return r;
    n = ntohl(n);
    if (n == 0 || n > LOAD_MAX_REPLY)
        return -EPROTO;
    in->len = 0;
    if (buf_reserve(in, n) < 0)
        return -ENOMEM;
    r = read_all(fd, in->data, n);
    if (r < 0)
        return r;
    *ret_cmd = in->data[0];
    *ret_len = n - 1;
    return 0;
}

static bool
is_final(char c)
{
    return strchr("acdrtys", c) != NULL && c != '\0';
}

/*
 * Read replies until a final one. Modifications ('h', 'm', 'i', 'q', ...)
 * and progress ('p') may come first, at end of message only.
 */
static int
wait_final(struct worker *w, int fd, struct packet_buf *in, char *ret_cmd)
{
    char c;
    uint32_t len;
    int r, i;

    for (i = 0; i < 10000; i++) {
        r = read_reply(fd, in, &c, &len);
        if (r < 0)
            return r;
        if (is_final(c)) {
            *ret_cmd = c;
            return 0;
        }
        if (c == '4' || c == 'f')
            return -ECONNABORTED;
        if (c != 'p')
            w->mods++;
    }
    return -EPROTO;
}

static int
connect_milter(const char *spec, int *ret_fd)
{
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *ai = NULL;
    struct timeval tv = {.tv_sec = LOAD_IO_TIMEOUT_S};
    char host[256], port[16];
    const char *p, *at;
    int fd = -1, one = 1, r;

    if (strncmp(spec, "unix:", 5) == 0 || strncmp(spec, "local:", 6) == 0 || spec[0] == '/') {
        struct sockaddr_un sun = {.sun_family = AF_UNIX};

        p = spec[0] == '/' ? spec : strchr(spec, ':') + 1;
        if (strlen(p) >= sizeof(sun.sun_path))
            return -ENAMETOOLONG;
        strcpy(sun.sun_path, p);
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
            return -errno;
        if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0) {
            r = -errno;
            goto out;
        }
    } else if (strncmp(spec, "inet:", 5) == 0 || strncmp(spec, "inet6:", 6) == 0) {
        hints.ai_family = spec[4] == '6' ? AF_INET6 : AF_INET;
        p = strchr(spec, ':') + 1;
        at = strchr(p, '@');
        if (at == NULL || (size_t)(at - p) >= sizeof(port) || strlen(at + 1) >= sizeof(host))
            return -EINVAL;
        memcpy(port, p, (size_t)(at - p));
        port[at - p] = '\0';
        strcpy(host, at + 1);
        r = getaddrinfo(host, port, &hints, &ai);
        if (r != 0)
            return -EHOSTUNREACH;
        fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0) {
            r = -errno;
            goto out;
        }
        /* Our side must never be the one that stalls. */
        if (opt.nodelay)
            setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        if (connect(fd, ai->ai_addr, ai->ai_addrlen) < 0) {
            r = -errno;
            goto out;
        }
    } else {
        return -EINVAL;
    }
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    *ret_fd = fd;
    fd = -1;
    r = 0;
out:
    if (ai)
        freeaddrinfo(ai);
    if (fd >= 0)
        close(fd);
    return r;
}

/* Send one packet and, unless the milter said it will not answer, read the answer. */
static int
exchange(struct worker *w, int fd, struct packet_buf *out, struct packet_buf *in, bool want_reply,
         char *ret_cmd)
{
    uint32_t len;
    int r;

    r = write_all(fd, out->data, out->len);
    out->len = 0;
    if (r < 0 || !want_reply)
        return r;
    r = read_reply(fd, in, ret_cmd, &len);
    if (r == 0 && !is_final(*ret_cmd)) {
        snprintf(w->error, sizeof(w->error), "unexpected reply '%c' before end of message",
                 *ret_cmd);
        r = -EPROTO;
    }
    return r;
}

static int
negotiate(struct worker *w, int fd, struct packet_buf *out, struct packet_buf *in,
          uint32_t *ret_proto)
{
    uint32_t v[3] = {htonl(6), htonl(LOAD_OFFER_ACTIONS), htonl(LOAD_OFFER_PROTO)};
    char c;
    uint32_t len;
    size_t at;
    int r;

    at = packet_begin(out, SMFIC_OPTNEG);
    buf_add(out, v, sizeof(v));
    packet_end(out, at);
    r = write_all(fd, out->data, out->len);
    out->len = 0;
    if (r < 0)
        return r;
    r = read_reply(fd, in, &c, &len);
    if (r < 0)
        return r;
    if (c != SMFIC_OPTNEG || len < 12) {
        snprintf(w->error, sizeof(w->error), "bad OPTNEG answer '%c' (%u bytes)", c, len);
        return -EPROTO;
    }
    memcpy(v, in->data + 1, 12);
    *ret_proto = ntohl(v[2]);
    return 0;
}

static void
add_macros(struct packet_buf *out, char stage, const char *const *kv)
{
    size_t at = packet_begin(out, SMFIC_MACRO);

    buf_add(out, &stage, 1);
    for (; kv[0] != NULL; kv += 2) {
        buf_addstr(out, kv[0]);
        buf_addstr(out, kv[1]);
    }
    packet_end(out, at);
}

/*
 * SMTP-level session start: connect and helo, each answered unless NR.
 * *ret_c is the last answer, or 0 when none was asked for; anything but
 * continue ends the session before the message.
 */
static int
session_start(struct worker *w, int fd, uint32_t proto, struct packet_buf *out,
              struct packet_buf *in, char *ret_c)
{
    static const char *const conn_macros[] = {
        "j", "mx.bench.test", "_", "client.bench.test [192.0.2.10]", "{daemon_name}", "bench",
        NULL};
    char c = 0, fam = '4';
    uint16_t port = htons(40000);
    size_t at;
    int r = 0;

    *ret_c = 0;
    if (!(proto & SMFIP_NOCONNECT)) {
        add_macros(out, SMFIC_CONNECT, conn_macros);
        at = packet_begin(out, SMFIC_CONNECT);
        buf_addstr(out, "client.bench.test");
        buf_add(out, &fam, 1);
        buf_add(out, &port, 2);
        buf_addstr(out, "192.0.2.10");
        packet_end(out, at);
        r = exchange(w, fd, out, in, !(proto & SMFIP_NR_CONN), &c);
        if (r < 0 || (c != 0 && c != 'c'))
            goto out;
    }
    if (!(proto & SMFIP_NOHELO)) {
        at = packet_begin(out, SMFIC_HELO);
        buf_addstr(out, "client.bench.test");
        packet_end(out, at);
        r = exchange(w, fd, out, in, !(proto & SMFIP_NR_HELO), &c);
    }
out:
    *ret_c = c;
    return r;
}

/* One message; 0 with *ret_final set, or a negative errno. */
static int
send_message(struct worker *w, int fd, uint32_t proto, const struct message *m, unsigned long seq,
             struct packet_buf *out, struct packet_buf *in, char *ret_final, uint64_t *ret_us)
{
    char qid[32], c = 0, from[LOAD_MAX_ADDR + 3], rcpt[LOAD_MAX_ADDR + 3];
    const char *mail_macros[] = {"i", qid, "{mail_addr}", opt.mail_from, NULL};
    const char *eom_macros[] = {"i", qid, NULL};
    size_t at, off, i;
    uint64_t t0;
    int r;

    snprintf(qid, sizeof(qid), "B%02u%07lu", w->id % 100, seq % 10000000);
    snprintf(from, sizeof(from), "<%s>", opt.mail_from);
    snprintf(rcpt, sizeof(rcpt), "<%s>", opt.rcpt_to);
    if (!(proto & SMFIP_NOMAIL)) {
        add_macros(out, SMFIC_MAIL, mail_macros);
        at = packet_begin(out, SMFIC_MAIL);
        buf_addstr(out, from);
        packet_end(out, at);
        r = exchange(w, fd, out, in, !(proto & SMFIP_NR_MAIL), &c);
        if (r < 0 || (c != 0 && c != 'c'))
            goto early;
    }
    if (!(proto & SMFIP_NORCPT)) {
        at = packet_begin(out, SMFIC_RCPT);
        buf_addstr(out, rcpt);
        packet_end(out, at);
        r = exchange(w, fd, out, in, !(proto & SMFIP_NR_RCPT), &c);
        if (r < 0 || (c != 0 && c != 'c'))
            goto early;
    }
    if (!(proto & SMFIP_NODATA)) {
        at = packet_begin(out, SMFIC_DATA);
        packet_end(out, at);
        r = exchange(w, fd, out, in, !(proto & SMFIP_NR_DATA), &c);
        if (r < 0 || (c != 0 && c != 'c'))
            goto early;
    }
    if (!(proto & SMFIP_NOHDRS)) {
        for (i = 0; i < m->n_headers; i++) {
            at = packet_begin(out, SMFIC_HEADER);
            buf_addstr(out, m->names[i]);
            buf_addstr(out, m->values[i]);
            packet_end(out, at);
            r = exchange(w, fd, out, in, !(proto & SMFIP_NR_HDR), &c);
            if (r < 0 || (c != 0 && c != 'c'))
                goto early;
        }
    }
    if (!(proto & SMFIP_NOEOH)) {
        at = packet_begin(out, SMFIC_EOH);
        packet_end(out, at);
        r = exchange(w, fd, out, in, !(proto & SMFIP_NR_EOH), &c);
        if (r < 0 || (c != 0 && c != 'c'))
            goto early;
    }
    if (!(proto & SMFIP_NOBODY)) {
        for (off = 0; off < m->body_len;) {
            size_t n = m->body_len - off < LOAD_BODY_CHUNK ? m->body_len - off : LOAD_BODY_CHUNK;

            at = packet_begin(out, SMFIC_BODY);
            buf_add(out, m->body + off, n);
            packet_end(out, at);
            off += n;
            c = 0;
            r = exchange(w, fd, out, in, !(proto & SMFIP_NR_BODY), &c);
            if (r < 0)
                return r;
            if (c == 's') /* SMFIR_SKIP: the milter has seen enough body */
                break;
            if (c != 0 && c != 'c')
                goto early;
        }
    }
    add_macros(out, SMFIC_BODYEOB, eom_macros);
    at = packet_begin(out, SMFIC_BODYEOB);
    packet_end(out, at);
    t0 = now_us();
    r = write_all(fd, out->data, out->len);
    out->len = 0;
    if (r < 0)
        return r;
    r = wait_final(w, fd, in, &c);
    if (r < 0)
        return r;
    *ret_us = now_us() - t0;
    *ret_final = c;
    return 0;
early:
    /* Rejected or failed before end of message: no latency sample. */
    if (r < 0)
        return r;
    *ret_final = c;
    *ret_us = UINT64_MAX;
    return 0;
}

static void
count_final(struct worker *w, char c)
{
    switch (c) {
    case 'a':
    case 'c':
        w->accept++;
        break;
    case 'r':
    case 'y':
        w->reject++;
        break;
    case 't':
        w->tempfail++;
        break;
    default:
        w->other++;
    }
}

/* With -p, message seq is due at start + seq / rate whatever the answers
 * to earlier ones (an open loop, as an MTA's sessions arrive); the
 * latency measured is still the milter's, end-of-body to reply. */
static void
wait_due(unsigned long seq)
{
    uint64_t due = start_us + (uint64_t)((double)seq * 1e6 / opt.rate);
    uint64_t now = now_us();

    while (now < due && now < deadline_us) {
        uint64_t d = due - now;
        struct timespec ts = {.tv_sec = (time_t)(d / 1000000),
                              .tv_nsec = (long)(d % 1000000) * 1000};

        nanosleep(&ts, NULL);
        now = now_us();
    }
}

static bool
take_message(unsigned long *ret_seq)
{
    unsigned long seq = atomic_fetch_add(&next_message, 1);

    if (seq >= opt.count || now_us() >= deadline_us)
        return false;
    if (opt.rate > 0)
        wait_due(seq);
    *ret_seq = seq;
    return true;
}

static void *
worker_run(void *arg)
{
    struct worker *w = arg;
    struct packet_buf out = {0}, in = {0};
    unsigned long seq;
    uint32_t proto = 0;
    bool have = false, in_session = false;
    int fd = -1, r = 0;

    while ((have = take_message(&seq))) {
        const struct message *m = &messages[seq % n_messages];
        uint64_t us = UINT64_MAX;
        char c = 0;

        if (fd < 0) {
            r = connect_milter(opt.socket, &fd);
            if (r == 0)
                r = negotiate(w, fd, &out, &in, &proto);
            if (r < 0)
                break;
            in_session = false;
        }
        if (!in_session) {
            r = session_start(w, fd, proto, &out, &in, &c);
            if (r < 0)
                break;
            in_session = c == 0 || c == 'c';
        }
        if (in_session) {
            r = send_message(w, fd, proto, m, seq, &out, &in, &c, &us);
            if (r < 0)
                break;
        }
        count_final(w, c);
        if (us != UINT64_MAX) {
            if (w->n_lat == w->cap_lat) {
                size_t cap = w->cap_lat ? 2 * w->cap_lat : 1024;
                uint64_t *p = realloc(w->lat_us, cap * sizeof(*p));

                if (p == NULL) {
                    r = -ENOMEM;
                    break;
                }
                w->lat_us = p;
                w->cap_lat = cap;
            }
            w->lat_us[w->n_lat++] = us;
            if (us > LOAD_STALL_US)
                w->stalls++;
        }
        if (opt.reconnect || opt.quit_nc || !in_session) {
            size_t at = packet_begin(&out, opt.reconnect ? SMFIC_QUIT : SMFIC_QUIT_NC);

            packet_end(&out, at);
            r = write_all(fd, out.data, out.len);
            out.len = 0;
            if (r < 0)
                break;
            in_session = false;
            if (opt.reconnect) {
                close(fd);
                fd = -1;
            }
        }
    }
    if (r < 0) {
        w->errors++;
        if (w->error[0] == '\0')
            snprintf(w->error, sizeof(w->error), "%s", strerror(-r));
    }
    if (fd >= 0) {
        if (r == 0) {
            size_t at = packet_begin(&out, SMFIC_QUIT);
            packet_end(&out, at);
            write_all(fd, out.data, out.len);
        }
        close(fd);
    }
    free(out.data);
    free(in.data);
    return NULL;
}

/*
 * Split a message into header fields and a CRLF body. Continuation lines
 * stay in the value (joined with "\n" as Postfix hands them over); the
 * space after the colon is dropped unless the milter asked for it.
 */
static int
message_build(struct message *m, const char *data, size_t len)
{
    size_t hdr_end = len, i, cap = 16, n_lf = 0;
    char *p, *line, *end;
    int r = -ENOMEM;

    memset(m, 0, sizeof(*m));
    m->bytes = len;
    for (i = 0; i < len; i++) {
        if (data[i] == '\n' && (i + 1 == len || data[i + 1] == '\n' ||
                                (data[i + 1] == '\r' && i + 2 < len && data[i + 2] == '\n'))) {
            hdr_end = i + 1;
            break;
        }
    }
    m->text = malloc(hdr_end + 1);
    m->names = malloc(cap * sizeof(*m->names));
    m->values = malloc(cap * sizeof(*m->values));
    if (m->text == NULL || m->names == NULL || m->values == NULL)
        goto out;
    memcpy(m->text, data, hdr_end);
    m->text[hdr_end] = '\0';

    for (line = m->text; *line && m->n_headers < LOAD_MAX_HEADERS; line = end) {
        char *colon, *v;

        end = line;
        /* A field runs until a newline not followed by white space. */
        while (*end && !(*end == '\n' && end[1] != ' ' && end[1] != '\t'))
            end++;
        if (*end)
            *end++ = '\0';
        if (end - line > 1 && end[-2] == '\r')
            end[-2] = '\0';
        colon = strchr(line, ':');
        if (colon == NULL || colon == line || strncmp(line, "From ", 5) == 0)
            continue;
        *colon = '\0';
        v = colon + 1;
        if (*v == ' ')
            v++;
        if (m->n_headers == cap) {
            const char **a, **b;

            cap *= 2;
            a = realloc(m->names, cap * sizeof(*a));
            if (a)
                m->names = a;
            b = realloc(m->values, cap * sizeof(*b));
            if (b)
                m->values = b;
            if (a == NULL || b == NULL)
                goto out;
        }
        if (strlen(v) > LOAD_MAX_HEADER_VALUE)
            v[LOAD_MAX_HEADER_VALUE] = '\0';
        m->names[m->n_headers] = line;
        m->values[m->n_headers] = v;
        m->n_headers++;
    }

    data += hdr_end;
    len -= hdr_end;
    if (len > 0 && data[0] == '\r')
        data++, len--;
    if (len > 0 && data[0] == '\n')
        data++, len--;
    for (i = 0; i < len; i++)
        n_lf += data[i] == '\n';
    m->body = malloc(len + n_lf + 1);
    if (m->body == NULL)
        goto out;
    p = m->body;
    for (i = 0; i < len; i++) {
        if (data[i] == '\n' && (i == 0 || data[i - 1] != '\r'))
            *p++ = '\r';
        *p++ = data[i];
    }
    m->body_len = (size_t)(p - m->body);
    r = 0;
out:
    return r;
}

static int
collect(void *ctx, const struct mailbox_msg *mm)
{
    size_t *cap = ctx;

    if (n_messages >= LOAD_MAX_MESSAGES)
        return -E2BIG;
    if (mm->len > LOAD_MAX_MESSAGE_BYTES)
        return 0;
    if (n_messages == *cap) {
        size_t c = *cap ? 2 * *cap : 256;
        struct message *p = realloc(messages, c * sizeof(*p));

        if (p == NULL)
            return -ENOMEM;
        messages = p;
        *cap = c;
    }
    if (message_build(&messages[n_messages], mm->data, mm->len) < 0)
        return -ENOMEM;
    n_messages++;
    return 0;
}

static void
collect_error(void *ctx, const char *file, size_t index, const char *reason)
{
    (void)ctx;
    fprintf(stderr, "milter-load: %s[%zu]: %s\n", file, index, reason);
}

static int
cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

    return x < y ? -1 : x > y;
}

static double
pct_ms(const uint64_t *v, size_t n, double p)
{
    size_t i;

    if (n == 0)
        return 0.0;
    i = (size_t)(p / 100.0 * (double)(n - 1) + 0.5);
    return (double)v[i] / 1000.0;
}

static void
usage(FILE *f)
{
    fprintf(f,
            "usage: milter-load [-c CONNS] [-n COUNT] [-t SECONDS] [-p RATE] [-r|-q] [-D]\n"
            "                   [-o FILE] [-v] [-f FROM] [-R RCPT] SOCKET PATH...\n"
            "  SOCKET   unix:/path, local:/path or inet:port@host\n"
            "  PATH     message files, directories or mboxes (cycled until COUNT)\n"
            "  -c       concurrent milter connections (default 1, at most %d)\n"
            "  -n       messages in total (default: one pass over PATHs)\n"
            "  -t       stop after this many seconds (default 60)\n"
            "  -p RATE  offer RATE messages/s over all connections, each on time whatever\n"
            "           the answers (default: the next as soon as one is answered)\n"
            "  -r       a new milter connection for every message\n"
            "  -q       a new SMTP session (SMFIC_QUIT_NC) for every message\n"
            "  -D       leave Nagle on for our TCP sockets (to show a stall)\n"
            "  -o FILE  write each latency (microseconds) on its own line\n"
            "  -f FROM  envelope sender, without <> (default author@bench.test)\n"
            "  -R RCPT  envelope recipient, without <> (default security@bench.test)\n",
            LOAD_MAX_CONNS);
}

int
main(int argc, char **argv)
{
    struct worker *workers = NULL;
    unsigned long total = 0, acc = 0, rej = 0, tmp = 0, oth = 0, errs = 0, stalls = 0, mods = 0;
    unsigned long long bytes = 0;
    uint64_t *all = NULL, t0, t1;
    size_t cap = 0, n_all = 0, i, j;
    double secs, sum = 0;
    int c, status = 1;

    while ((c = getopt(argc, argv, "c:n:t:p:rqDo:f:R:vh")) != -1) {
        switch (c) {
        case 'c':
            opt.conns = (unsigned)strtoul(optarg, NULL, 10);
            break;
        case 'n':
            opt.count = strtoul(optarg, NULL, 10);
            break;
        case 't':
            opt.seconds = strtod(optarg, NULL);
            break;
        case 'p':
            opt.rate = strtod(optarg, NULL);
            break;
        case 'r':
            opt.reconnect = true;
            break;
        case 'q':
            opt.quit_nc = true;
            break;
        case 'D':
            opt.nodelay = false;
            break;
        case 'o':
            opt.latency_file = optarg;
            break;
        case 'f':
            opt.mail_from = optarg;
            break;
        case 'R':
            opt.rcpt_to = optarg;
            break;
        case 'v':
            opt.verbose = true;
            break;
        case 'h':
            usage(stdout);
            return 0;
        default:
            usage(stderr);
            return 64;
        }
    }
    if (argc - optind < 2 || opt.conns == 0 || opt.conns > LOAD_MAX_CONNS || opt.seconds <= 0 ||
        opt.seconds > 86400 || opt.rate < 0 || opt.rate > 1e6 ||
        strlen(opt.mail_from) > LOAD_MAX_ADDR || strlen(opt.rcpt_to) > LOAD_MAX_ADDR) {
        usage(stderr);
        return 64;
    }
    opt.socket = argv[optind++];
    for (; optind < argc; optind++)
        if (mailbox_walk(argv[optind], 0, collect, collect_error, &cap) < 0)
            break;
    if (n_messages == 0) {
        fprintf(stderr, "milter-load: no messages\n");
        return 66;
    }
    if (opt.count == 0)
        opt.count = n_messages;
    signal(SIGPIPE, SIG_IGN);

    workers = calloc(opt.conns, sizeof(*workers));
    if (workers == NULL)
        goto out;
    t0 = now_us();
    start_us = t0;
    deadline_us = t0 + (uint64_t)(opt.seconds * 1e6);
    for (i = 0; i < opt.conns; i++) {
        workers[i].id = (unsigned)i;
        if (pthread_create(&workers[i].tid, NULL, worker_run, &workers[i]) != 0) {
            fprintf(stderr, "milter-load: cannot start thread %zu\n", i);
            opt.conns = (unsigned)i;
            break;
        }
    }
    for (i = 0; i < opt.conns; i++)
        pthread_join(workers[i].tid, NULL);
    t1 = now_us();
    secs = (double)(t1 - t0) / 1e6;

    for (i = 0; i < opt.conns; i++)
        n_all += workers[i].n_lat;
    all = malloc((n_all ? n_all : 1) * sizeof(*all));
    if (all == NULL)
        goto out;
    n_all = 0;
    for (i = 0; i < opt.conns; i++) {
        struct worker *w = &workers[i];

        for (j = 0; j < w->n_lat; j++) {
            all[n_all++] = w->lat_us[j];
            sum += (double)w->lat_us[j];
        }
        acc += w->accept;
        rej += w->reject;
        tmp += w->tempfail;
        oth += w->other;
        errs += w->errors;
        stalls += w->stalls;
        mods += w->mods;
        if (w->error[0])
            fprintf(stderr, "milter-load: connection %zu: %s\n", i, w->error);
    }
    total = acc + rej + tmp + oth;
    {
        unsigned long done = total < opt.count ? total : opt.count;

        for (i = 0; i < done; i++)
            bytes += messages[i % n_messages].bytes;
    }
    qsort(all, n_all, sizeof(*all), cmp_u64);
    if (opt.latency_file) {
        FILE *f = fopen(opt.latency_file, "w");

        if (f == NULL) {
            fprintf(stderr, "milter-load: %s: %s\n", opt.latency_file, strerror(errno));
            goto out;
        }
        for (i = 0; i < n_all; i++)
            fprintf(f, "%" PRIu64 "\n", all[i]);
        fclose(f);
    }
    printf("conns=%u messages=%lu seconds=%.3f msgs_per_s=%.1f mb_per_s=%.2f "
           "p50_ms=%.3f p90_ms=%.3f p99_ms=%.3f max_ms=%.3f mean_ms=%.3f "
           "accept=%lu reject=%lu tempfail=%lu other=%lu mods=%lu stalls=%lu errors=%lu\n",
           opt.conns, total, secs, secs > 0 ? (double)total / secs : 0.0,
           secs > 0 ? (double)bytes / 1048576.0 / secs : 0.0, pct_ms(all, n_all, 50),
           pct_ms(all, n_all, 90), pct_ms(all, n_all, 99), pct_ms(all, n_all, 100),
           n_all ? sum / (double)n_all / 1000.0 : 0.0, acc, rej, tmp, oth, mods, stalls, errs);
    status = errs ? 2 : 0;
out:
    if (workers)
        for (i = 0; i < opt.conns; i++)
            free(workers[i].lat_us);
    free(workers);
    free(all);
    for (i = 0; i < n_messages; i++) {
        free(messages[i].text);
        free(messages[i].names);
        free(messages[i].values);
        free(messages[i].body);
    }
    free(messages);
    return status;
}
