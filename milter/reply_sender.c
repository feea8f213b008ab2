/*
 * reply_sender.c - the reply queue and its worker thread (see struct
 * reply_sender in reply.h): submitters only take the queue mutex, never
 * wait on I/O; the worker runs with all signals blocked (the daemon's
 * signal thread handles them) and hands each job to the configured
 * transport (reply_sendmail.c, reply_smtp.c), reporting each outcome.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "reply_text.h"
#include "reply_transport.h"

static struct reply_job *
reply_job_free(struct reply_job *j)
{
    if (j == NULL)
        return NULL;
    free(j->rcpt);
    free(j->msg);
    free(j->id);
    free(j);
    return NULL;
}

static void
reply_report(struct reply_sender *s, const struct reply_job *j, bool ok, const char *reason)
{
    struct reply_status st = {
        .rcpt = j->rcpt,
        .id = j->id ? j->id : "",
        .claimed_at = j->claimed_at,
        .ok = ok,
        .reason = reason,
    };

    if (s->status_fn != NULL)
        s->status_fn(s->status_ctx, &st);
}

static void *
reply_worker(void *arg)
{
    struct reply_sender *s = arg;

    pthread_mutex_lock(&s->lock);
    for (;;) {
        struct reply_job *j;
        char reason[REPLY_OUTPUT_MAX + 128];
        bool ok;

        while (s->head == NULL && !s->stopping)
            pthread_cond_wait(&s->cond, &s->lock);
        if (s->head == NULL)
            break;
        if (s->stopping) {
            struct timespec now;

            clock_gettime(CLOCK_MONOTONIC, &now);
            if (now.tv_sec > s->drain_deadline.tv_sec || (now.tv_sec == s->drain_deadline.tv_sec &&
                                                          now.tv_nsec >= s->drain_deadline.tv_nsec))
                break;
        }
        j = s->head;
        s->head = j->next;
        if (s->head == NULL)
            s->tail = NULL;
        s->queued--;
        pthread_mutex_unlock(&s->lock);

        reason[0] = '\0';
        if (s->transport == REPLY_TRANSPORT_SMTP)
            ok = reply_smtp_send(s, j, reason, sizeof(reason));
        else
            ok = reply_sendmail_send(s, j, reason, sizeof(reason));
        reply_report(s, j, ok, reason[0] ? reason : (ok ? "sent" : "failed"));
        reply_job_free(j);

        pthread_mutex_lock(&s->lock);
    }
    /* Past the drain deadline: what is left is reported, not sent. */
    while (s->head != NULL) {
        struct reply_job *j = s->head;

        s->head = j->next;
        s->queued--;
        pthread_mutex_unlock(&s->lock);
        reply_report(s, j, false, "shutdown");
        reply_job_free(j);
        pthread_mutex_lock(&s->lock);
    }
    s->tail = NULL;
    pthread_mutex_unlock(&s->lock);
    return NULL;
}

int
reply_sender_new(const struct reply_sender_config *cfg, struct reply_sender **ret)
{
    struct reply_sender *s;
    char helo[REPLY_HOST_MAX + 1];
    sigset_t all, old;
    int r;

    if (cfg == NULL || ret == NULL)
        return -EINVAL;
    if (cfg->transport != REPLY_TRANSPORT_SENDMAIL && cfg->transport != REPLY_TRANSPORT_SMTP)
        return -EINVAL;
    s = calloc(1, sizeof(*s));
    if (s == NULL)
        return -ENOMEM;
    s->transport = cfg->transport;
    s->queue_max = cfg->queue_max ? cfg->queue_max : 100;
    s->timeout_s = cfg->timeout_s ? cfg->timeout_s : 30;
    s->status_fn = cfg->status_fn;
    s->status_ctx = cfg->status_ctx;
    s->sendmail_path = strdup(cfg->sendmail_path ? cfg->sendmail_path : "/usr/sbin/sendmail");
    reply_hostname(cfg->helo_name, helo);
    s->helo = strdup(helo);
    if (s->sendmail_path == NULL || s->helo == NULL) {
        r = -ENOMEM;
        goto out;
    }
    if (s->sendmail_path[0] != '/') {
        r = -EINVAL;
        goto out;
    }
    if (s->transport == REPLY_TRANSPORT_SMTP) {
        r = reply_smtp_resolve(s, cfg->smtp_server ? cfg->smtp_server : "127.0.0.1:25",
                               cfg->smtp_allow_remote);
        if (r < 0)
            goto out;
    }
    r = -pthread_mutex_init(&s->lock, NULL);
    if (r < 0)
        goto out;
    {
        pthread_condattr_t ca;

        pthread_condattr_init(&ca);
        pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
        r = -pthread_cond_init(&s->cond, &ca);
        pthread_condattr_destroy(&ca);
        if (r < 0) {
            pthread_mutex_destroy(&s->lock);
            goto out;
        }
    }
    /* The worker inherits a full mask: signals belong to the daemon's
     * signal thread, and a write to a dead sendmail must not raise SIGPIPE. */
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    r = -pthread_create(&s->thread, NULL, reply_worker, s);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (r < 0) {
        pthread_cond_destroy(&s->cond);
        pthread_mutex_destroy(&s->lock);
        goto out;
    }
    s->thread_started = true;
    *ret = s;
    return 0;
out:
    free(s->sendmail_path);
    free(s->helo);
    free(s);
    return r;
}

int
reply_sender_submit_job(struct reply_sender *s, const char *rcpt, const char *msg, const char *id,
                        time_t claimed_at)
{
    char addr[REPLY_ADDR_MAX + 1];
    struct reply_job *j;
    size_t len;
    int r = 0;

    if (s == NULL || msg == NULL || !reply_addr(rcpt, addr))
        return -EINVAL;
    len = strnlen(msg, REPLY_MESSAGE_MAX + 1);
    if (len == 0 || len > REPLY_MESSAGE_MAX)
        return -EINVAL;
    j = calloc(1, sizeof(*j));
    if (j == NULL)
        return -ENOMEM;
    j->rcpt = strdup(addr);
    j->msg = strndup(msg, len);
    j->id = id ? reply_clean_dup(id, 64) : NULL;
    j->claimed_at = claimed_at;
    if (j->rcpt == NULL || j->msg == NULL || (id != NULL && j->id == NULL)) {
        reply_job_free(j);
        return -ENOMEM;
    }

    pthread_mutex_lock(&s->lock);
    if (s->stopping)
        r = -ESHUTDOWN;
    else if (s->queued >= s->queue_max)
        r = -EAGAIN;
    if (r == 0) {
        if (s->tail != NULL)
            s->tail->next = j;
        else
            s->head = j;
        s->tail = j;
        s->queued++;
        j = NULL;
        pthread_cond_signal(&s->cond);
    }
    pthread_mutex_unlock(&s->lock);
    reply_job_free(j);
    return r;
}

int
reply_sender_submit(struct reply_sender *s, const char *rcpt, const char *msg)
{
    return reply_sender_submit_job(s, rcpt, msg, NULL, time(NULL));
}

struct reply_sender *
reply_sender_free(struct reply_sender *s)
{
    if (s == NULL)
        return NULL;
    if (s->thread_started) {
        pthread_mutex_lock(&s->lock);
        s->stopping = true;
        clock_gettime(CLOCK_MONOTONIC, &s->drain_deadline);
        s->drain_deadline.tv_sec += s->timeout_s;
        pthread_cond_broadcast(&s->cond);
        pthread_mutex_unlock(&s->lock);
        pthread_join(s->thread, NULL);
        pthread_cond_destroy(&s->cond);
        pthread_mutex_destroy(&s->lock);
    }
    free(s->sendmail_path);
    free(s->helo);
    free(s);
    return NULL;
}
