/*
 * log.c - syslog or stderr output for the daemon.
 *
 * Invariant: the destination settings change only under log_lock, and a
 * line is formatted once into a bounded buffer before it is written, so
 * lines from concurrent connection threads never interleave on stderr.
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "log.h"

#define LOG_LINE_MAX 2048

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static bool log_syslog;
static bool log_stderr = true;
static bool log_opened;
static int log_facility = LOG_MAIL;
static int log_max = LOG_INFO;

void
log_setup(bool use_syslog, int facility, bool to_stderr)
{
    pthread_mutex_lock(&log_lock);
    if (use_syslog && (!log_opened || facility != log_facility)) {
        if (log_opened)
            closelog();
        openlog("slop-milter", LOG_PID | LOG_NDELAY, facility);
        log_opened = true;
    }
    log_syslog = use_syslog;
    log_stderr = to_stderr;
    log_facility = facility;
    pthread_mutex_unlock(&log_lock);
}

void
log_set_level(int max_priority)
{
    pthread_mutex_lock(&log_lock);
    log_max = max_priority;
    pthread_mutex_unlock(&log_lock);
}

static const char *
priority_name(int priority)
{
    switch (priority) {
    case LOG_EMERG:
    case LOG_ALERT:
    case LOG_CRIT:
    case LOG_ERR:
        return "error";
    case LOG_WARNING:
        return "warning";
    case LOG_DEBUG:
        return "debug";
    default:
        return "info";
    }
}

void
log_msg(int priority, const char *fmt, ...)
{
    char line[LOG_LINE_MAX];
    bool to_syslog, to_stderr;
    va_list ap;

    pthread_mutex_lock(&log_lock);
    to_syslog = log_syslog;
    to_stderr = log_stderr;
    if (priority > log_max) {
        pthread_mutex_unlock(&log_lock);
        return;
    }
    pthread_mutex_unlock(&log_lock);

    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);

    if (to_syslog)
        syslog(priority, "%s", line);
    if (to_stderr) {
        struct timespec ts;
        struct tm tm;
        char stamp[32] = "";

        if (clock_gettime(CLOCK_REALTIME, &ts) == 0 && localtime_r(&ts.tv_sec, &tm) != NULL)
            strftime(stamp, sizeof(stamp), "%H:%M:%S", &tm);
        /* One fprintf call per line: stdio locks the stream for it. */
        fprintf(stderr, "%s slop-milter[%s]: %s\n", stamp, priority_name(priority), line);
    }
}

const char *
log_strerror(int errnum, char *buf, size_t size)
{
    if (errnum < 0)
        errnum = -errnum;
    /* _GNU_SOURCE selects the GNU strerror_r, which may ignore buf. */
    const char *s = strerror_r(errnum, buf, size);
    if (s != buf)
        snprintf(buf, size, "%s", s);
    return buf;
}

/* Nothing but visible ASCII, and no quote: user data cannot break a line
 * or close the quotes around it. */
const char *
log_clean(const char *s, char *buf, size_t size)
{
    size_t n = 0;

    for (; s && *s && n + 1 < size; s++)
        buf[n++] = (*s >= 0x21 && *s <= 0x7e && *s != '\'') ? *s : '?';
    buf[n] = '\0';
    return buf;
}
