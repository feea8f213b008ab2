/*
 * reply_transport.h - the sender's queue and its two transports, shared by
 * reply_sender.c (queue, worker thread), reply_sendmail.c and reply_smtp.c.
 * Internal to milter/reply_*.c; the public API is reply.h.
 *
 * A transport runs on the worker thread only, sends one job within
 * s->timeout_s seconds and returns true when the MTA took the message;
 * reason (reasonlen bytes) says what happened either way.
 */
#ifndef SLOP_MILTER_REPLY_TRANSPORT_H
#define SLOP_MILTER_REPLY_TRANSPORT_H

#include <pthread.h>
#include <stdbool.h>
#include <sys/socket.h>
#include <time.h>

#include "reply.h"

#define REPLY_OUTPUT_MAX 512 /* bytes of sendmail's output kept */

struct reply_job {
    struct reply_job *next;
    char *rcpt;
    char *msg;
    char *id;
    time_t claimed_at;
};

struct reply_sender {
    enum reply_transport transport;
    char *sendmail_path;
    char *helo;
    struct sockaddr_storage smtp_addr;
    socklen_t smtp_addrlen;
    unsigned queue_max;
    unsigned timeout_s;
    reply_status_fn *status_fn;
    void *status_ctx;

    pthread_mutex_t lock;
    pthread_cond_t cond;
    struct reply_job *head, *tail;
    unsigned queued;
    bool stopping;
    struct timespec drain_deadline;
    pthread_t thread;
    bool thread_started;
};

bool reply_sendmail_send(struct reply_sender *s, const struct reply_job *j, char *reason,
                         size_t reasonlen);
bool reply_smtp_send(struct reply_sender *s, const struct reply_job *j, char *reason,
                     size_t reasonlen);

/* Resolve server ("host:port", "[v6]:port", "host") into s->smtp_addr;
 * -EINVAL when unusable or, without allow_remote, not loopback. */
int reply_smtp_resolve(struct reply_sender *s, const char *server, bool allow_remote);

#endif
