/*
 * scanner.c - a long-lived scan thread for each thread that asks for one.
 *
 * A scan runs on a thread of its own so that the caller can stop waiting
 * for it after ScanTimeout (callbacks.c). Starting a thread per message
 * cost about 40 us of CPU, a tenth of the daemon's work on a small
 * message; the scan thread now stays and takes the next job of the same
 * caller. libmilter's threads live as long as its worker pool keeps them,
 * so each keeps one scan thread, found through a thread-specific key.
 *
 * Ownership: the scanner is shared by its scan thread and the caller's
 * key; whichever lets go last frees it. A job that times out keeps its
 * scan thread: the caller abandons it (the thread exits when the job
 * ends) and the next call starts a new one. When the caller's thread
 * exits, the key's destructor lets its scanner go.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

#include "scanner.h"

struct scanner {
    pthread_mutex_t lock;
    pthread_cond_t cv;
    void (*fn)(void *); /* the job waiting to start; NULL: none */
    void *arg;
    bool quit; /* exit once no job is waiting */
    unsigned refs;
};

static pthread_key_t scanner_key;
static pthread_once_t scanner_once = PTHREAD_ONCE_INIT;
static bool scanner_key_ok;

static void
scanner_put(struct scanner *s)
{
    bool last;

    pthread_mutex_lock(&s->lock);
    last = --s->refs == 0;
    pthread_mutex_unlock(&s->lock);
    if (!last)
        return;
    pthread_cond_destroy(&s->cv);
    pthread_mutex_destroy(&s->lock);
    free(s);
}

/* The caller lets go: the thread finishes a running job, then exits. */
static void
scanner_release(void *p)
{
    struct scanner *s = p;

    pthread_mutex_lock(&s->lock);
    s->quit = true;
    pthread_cond_signal(&s->cv);
    pthread_mutex_unlock(&s->lock);
    scanner_put(s);
}

static void
key_init(void)
{
    scanner_key_ok = pthread_key_create(&scanner_key, scanner_release) == 0;
}

static void *
scanner_main(void *arg)
{
    struct scanner *s = arg;

    pthread_mutex_lock(&s->lock);
    for (;;) {
        void (*fn)(void *) = s->fn;
        void *fn_arg = s->arg;

        if (fn != NULL) {
            s->fn = NULL;
            pthread_mutex_unlock(&s->lock);
            fn(fn_arg);
            pthread_mutex_lock(&s->lock);
            continue;
        }
        if (s->quit)
            break;
        pthread_cond_wait(&s->cv, &s->lock);
    }
    pthread_mutex_unlock(&s->lock);
    scanner_put(s);
    return NULL;
}

static struct scanner *
scanner_new(void)
{
    struct scanner *s = calloc(1, sizeof(*s));
    pthread_attr_t attr;
    pthread_t tid;
    int r;

    if (s == NULL)
        return NULL;
    pthread_mutex_init(&s->lock, NULL);
    pthread_cond_init(&s->cv, NULL);
    s->refs = 2;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    r = pthread_create(&tid, &attr, scanner_main, s);
    pthread_attr_destroy(&attr);
    if (r != 0) {
        pthread_cond_destroy(&s->cv);
        pthread_mutex_destroy(&s->lock);
        free(s);
        return NULL;
    }
    if (pthread_setspecific(scanner_key, s) != 0) {
        scanner_release(s);
        return NULL;
    }
    return s;
}

int
scanner_run(void (*fn)(void *), void *arg)
{
    struct scanner *s;
    int r = 0;

    if (fn == NULL)
        return -EINVAL;
    pthread_once(&scanner_once, key_init);
    if (!scanner_key_ok)
        return -EAGAIN;
    s = pthread_getspecific(scanner_key);
    if (s == NULL && (s = scanner_new()) == NULL)
        return -EAGAIN;
    pthread_mutex_lock(&s->lock);
    if (s->fn != NULL) {
        r = -EBUSY;
    } else {
        s->fn = fn;
        s->arg = arg;
        pthread_cond_signal(&s->cv);
    }
    pthread_mutex_unlock(&s->lock);
    return r;
}

void
scanner_abandon(void)
{
    struct scanner *s;

    pthread_once(&scanner_once, key_init);
    if (!scanner_key_ok || (s = pthread_getspecific(scanner_key)) == NULL)
        return;
    (void)pthread_setspecific(scanner_key, NULL);
    scanner_release(s);
}
