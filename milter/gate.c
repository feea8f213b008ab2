/*
 * gate.c - MaxConnections: count the connections libmilter accepted,
 * answer the ones over the cap with tempfail on a thread of our own.
 *
 * Counting: each socket accept() returned is remembered with its device
 * and inode. libmilter closes sockets without telling us, so when the
 * count reaches the cap the list is checked with fstat(): a descriptor
 * closed, or reused for another file, no longer matches and is dropped.
 * The check costs one fstat() per open connection, only at the cap.
 *
 * Over the cap, the socket goes through a pipe to the tempfail thread
 * (gate_tempfail.c speaks the protocol). It holds at most
 * GATE_TEMPFAIL_MAX of them, each for at most GATE_TEMPFAIL_SECS (or
 * ReadTimeout when shorter), and closes the oldest to make room.
 *
 * Logging: one line when the cap is first reached and one when the
 * connections fall below GATE_LOW_WATER of it again, with the number
 * turned away in between; never a line per connection.
 *
 * Threading: the list and the episode are under gate.lock; accept() runs
 * on libmilter's listener thread, the tick on the tempfail thread.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "gate.h"
#include "gate_limit.h"
#include "gate_tempfail.h"
#include "log.h"

#define GATE_TEMPFAIL_MAX 256 /* over-cap connections answered at once */
#define GATE_TEMPFAIL_SECS 10 /* time an over-cap MTA has to reach its first command */
#define GATE_TICK_MS 1000
#define GATE_BUF (GATE_PACKET_MAX + 4)
#define GATE_NOTE_SECS 60 /* at most one gate_note() line a minute of each kind */

struct gate_entry {
    int fd;
    dev_t dev;
    ino_t ino;
};

struct gate_tf {
    int fd;
    time_t deadline; /* CLOCK_MONOTONIC seconds */
    size_t len;
    unsigned char *buf; /* GATE_BUF bytes */
};

static atomic_bool gate_on;
static atomic_ulong gate_note_n[GATE_NOTE_KINDS];   /* sessions since the last line */
static atomic_llong gate_note_log[GATE_NOTE_KINDS]; /* CLOCK_MONOTONIC second of that line */

static struct {
    pthread_mutex_t lock;
    unsigned cap;
    unsigned tf_secs;
    struct gate_entry *open; /* cap entries */
    unsigned n_open;
    int pipe_rd, pipe_wr;
    bool episode;
    time_t episode_start;
    unsigned long episode_turned; /* connections answered tempfail or closed */
} gate = {.lock = PTHREAD_MUTEX_INITIALIZER, .pipe_rd = -1, .pipe_wr = -1};

static time_t
mono_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec;
}

/* Drop the entries whose descriptor no longer is the socket accepted. Under gate.lock. */
static void
purge(void)
{
    unsigned i = 0;

    while (i < gate.n_open) {
        struct gate_entry *e = &gate.open[i];
        struct stat st;

        if (fstat(e->fd, &st) == 0 && st.st_dev == e->dev && st.st_ino == e->ino) {
            i++;
            continue;
        }
        *e = gate.open[--gate.n_open];
    }
}

/* Below this many, a cap episode is over: no line per connection at the edge. */
static unsigned
low_water(void)
{
    unsigned margin = gate.cap / 10;

    return gate.cap - (margin > 0 ? margin : 1);
}

/* Whether socket s may go to libmilter; counts it when so. */
static bool
admit(int s)
{
    struct stat st;
    bool ok = true;

    if (fstat(s, &st) != 0)
        return true; /* libmilter will find out */
    pthread_mutex_lock(&gate.lock);
    /* At the cap, first forget the sockets libmilter closed meanwhile. */
    if (gate.n_open >= gate.cap)
        purge();
    if (gate.n_open < gate.cap) {
        gate.open[gate.n_open++] = (struct gate_entry){.fd = s, .dev = st.st_dev, .ino = st.st_ino};
    } else {
        ok = false;
        if (!gate.episode) {
            gate.episode = true;
            gate.episode_start = mono_now();
            gate.episode_turned = 0;
            log_warning("MaxConnections %u reached: answering new milter connections tempfail "
                        "until some close (the MTA retries later)",
                        gate.cap);
        }
        gate.episode_turned++;
    }
    pthread_mutex_unlock(&gate.lock);
    return ok;
}

/*
 * libmilter's listener calls this for every connection. A connection
 * over the cap is handed to the tempfail thread and reported as aborted
 * before accept() finished, which libmilter skips without a word.
 */
int
accept(int fd, __SOCKADDR_ARG addr, socklen_t *__restrict len) /* libc's exact prototype */
{
    int s = accept4(fd, addr, len, SOCK_CLOEXEC);

    if (s < 0 || !atomic_load(&gate_on) || admit(s))
        return s;
    if (write(gate.pipe_wr, &s, sizeof(s)) != (ssize_t)sizeof(s))
        close(s);
    errno = ECONNABORTED;
    return -1;
}

unsigned
gate_open_count(void)
{
    unsigned n;

    pthread_mutex_lock(&gate.lock);
    purge();
    n = gate.n_open;
    pthread_mutex_unlock(&gate.lock);
    return n;
}

static void
tick(void)
{
    pthread_mutex_lock(&gate.lock);
    if (gate.episode) {
        purge();
        if (gate.n_open <= low_water()) {
            log_info("milter connections below MaxConnections %u again after %lds: %lu "
                     "connections were answered tempfail",
                     gate.cap, (long)(mono_now() - gate.episode_start), gate.episode_turned);
            gate.episode = false;
        }
    }
    pthread_mutex_unlock(&gate.lock);
}

static void
tf_close(struct gate_tf *t)
{
    close(t->fd);
    free(t->buf);
    t->fd = -1;
    t->buf = NULL;
}

/* Read what arrived and answer each complete packet. */
static void
tf_read(struct gate_tf *t)
{
    ssize_t n = recv(t->fd, t->buf + t->len, GATE_BUF - t->len, MSG_DONTWAIT);
    size_t off = 0;

    if (n <= 0) {
        if (n == 0 || (errno != EAGAIN && errno != EINTR))
            tf_close(t);
        return;
    }
    t->len += (size_t)n;
    for (;;) {
        unsigned char out[GATE_REPLY_MAX];
        size_t used, out_len;
        int r = gate_tempfail_step(t->buf + off, t->len - off, &used, out, &out_len);

        if (out_len > 0 &&
            send(t->fd, out, out_len, MSG_DONTWAIT | MSG_NOSIGNAL) != (ssize_t)out_len)
            r = -EIO;
        if (r <= 0) {
            tf_close(t);
            return;
        }
        if (used == 0)
            break;
        off += used;
    }
    memmove(t->buf, t->buf + off, t->len - off);
    t->len -= off;
}

/*
 * A full table gives up its oldest connection for the new one: an MTA
 * finishes the exchange within milliseconds, so the oldest is a stalled
 * peer, and an MTA arriving behind a crowd of them still gets its answer.
 */
static void
tf_take(struct gate_tf *tf, unsigned *n_tf)
{
    int s;

    while (read(gate.pipe_rd, &s, sizeof(s)) == (ssize_t)sizeof(s)) {
        struct gate_tf *t = &tf[0];

        if (*n_tf >= GATE_TEMPFAIL_MAX) {
            for (unsigned i = 1; i < *n_tf; i++)
                if (tf[i].deadline < t->deadline)
                    t = &tf[i];
            tf_close(t);
        } else
            t = &tf[(*n_tf)++];
        t->buf = malloc(GATE_BUF);
        if (t->buf == NULL) {
            close(s);
            *t = tf[--(*n_tf)];
            continue;
        }
        t->fd = s;
        t->len = 0;
        t->deadline = mono_now() + (time_t)gate.tf_secs;
    }
}

static void *
tf_main(void *arg)
{
    static struct gate_tf tf[GATE_TEMPFAIL_MAX];
    struct pollfd pfd[GATE_TEMPFAIL_MAX + 1];
    unsigned n_tf = 0;
    time_t last_tick = mono_now();

    (void)arg;
    for (;;) {
        unsigned i, j;
        time_t now;

        pfd[0] = (struct pollfd){.fd = gate.pipe_rd, .events = POLLIN};
        for (i = 0; i < n_tf; i++)
            pfd[i + 1] = (struct pollfd){.fd = tf[i].fd, .events = POLLIN};
        if (poll(pfd, n_tf + 1, GATE_TICK_MS) < 0 && errno != EINTR)
            continue;
        now = mono_now();
        for (i = 0; i < n_tf; i++) {
            if (pfd[i + 1].revents != 0)
                tf_read(&tf[i]);
            if (tf[i].fd >= 0 && now >= tf[i].deadline)
                tf_close(&tf[i]);
        }
        for (i = j = 0; i < n_tf; i++)
            if (tf[i].fd >= 0)
                tf[j++] = tf[i];
        n_tf = j;
        if (pfd[0].revents != 0)
            tf_take(tf, &n_tf);
        if (now - last_tick >= GATE_TICK_MS / 1000) {
            tick();
            last_tick = now;
        }
    }
    return NULL;
}

/* MaxConnections, or the most the task limit leaves room for; says which. */
static unsigned
choose_cap(unsigned max_connections, unsigned read_timeout)
{
    uint64_t limit = gate_task_limit();
    unsigned safe = gate_auto_cap(limit);

    if (max_connections > safe && limit > 0)
        log_warning("MaxConnections %u leaves too few threads under the task limit %llu "
                    "(TasksMax): past %u connections, libmilter may fail to start threads "
                    "and leave sockets open",
                    max_connections, (unsigned long long)limit, safe);
    if (max_connections == 0 && limit > 0)
        log_info("at most %u milter connections at once (MaxConnections 0: task limit %llu), "
                 "ReadTimeout %us",
                 safe, (unsigned long long)limit, read_timeout);
    else
        log_info("at most %u milter connections at once, ReadTimeout %us",
                 max_connections ? max_connections : safe, read_timeout);
    return max_connections ? max_connections : safe;
}

int
gate_start(unsigned max_connections, unsigned read_timeout)
{
    unsigned cap = choose_cap(max_connections, read_timeout);
    pthread_attr_t attr;
    pthread_t tid;
    int p[2], r;

    gate.open = calloc(cap, sizeof(*gate.open));
    if (gate.open == NULL)
        return -ENOMEM;
    if (pipe2(p, O_CLOEXEC | O_NONBLOCK) != 0) {
        r = -errno;
        goto fail;
    }
    gate.cap = cap;
    gate.tf_secs = read_timeout < GATE_TEMPFAIL_SECS ? read_timeout : GATE_TEMPFAIL_SECS;
    gate.pipe_rd = p[0];
    gate.pipe_wr = p[1];
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    r = -pthread_create(&tid, &attr, tf_main, NULL);
    pthread_attr_destroy(&attr);
    if (r < 0) {
        close(p[0]);
        close(p[1]);
        goto fail;
    }
    atomic_store(&gate_on, true);
    return 0;
fail:
    free(gate.open);
    gate.open = NULL;
    return r;
}

void
gate_note(enum gate_note what, unsigned read_timeout)
{
    long long last = atomic_load(&gate_note_log[what]);
    time_t now = mono_now();
    unsigned long n = atomic_fetch_add(&gate_note_n[what], 1) + 1;

    if (last != 0 && now - last < GATE_NOTE_SECS)
        return;
    if (!atomic_compare_exchange_strong(&gate_note_log[what], &last, (long long)now))
        return;
    atomic_fetch_sub(&gate_note_n[what], n);
    if (what == GATE_NOTE_UNNEGOTIATED)
        log_info("%lu milter connection%s closed outside a session since the last such line: "
                 "a peer stalled before option negotiation past ReadTimeout or closed early, "
                 "or an MTA closed a connection it had reused (SMFIC_QUIT_NC)",
                 n, n == 1 ? "" : "s");
    else
        log_warning("%lu milter session%s cut after ReadTimeout (%us) without a command "
                    "since the last such line",
                    n, n == 1 ? " was" : "s were", read_timeout);
}
