/*
 * log.h - the daemon's only way to log: syslog, or stderr in the
 * foreground (and before start-up has chosen).
 *
 * Messages are lower case, without a trailing period; user data goes in
 * single quotes. Per-message lines start with the MTA queue id.
 *
 * Threading: every function may be called from any thread; log_setup()
 * takes an internal lock so a reload may switch the destination while
 * connection threads log.
 */
#ifndef SLOP_MILTER_LOG_H
#define SLOP_MILTER_LOG_H

#include <stdbool.h>
#include <syslog.h>

#define LOG_FIELD_MAX 200 /* bytes of an address or message id in a log line */

#define LOG_PRINTF(a, b) __attribute__((format(printf, a, b)))

/*
 * Choose where lines go: syslog with facility (LOG_MAIL, ...) when
 * use_syslog, and stderr as well when to_stderr. The first call with
 * use_syslog opens the syslog connection with ident "slop-milter".
 */
void log_setup(bool use_syslog, int facility, bool to_stderr);

/* Raise (LOG_DEBUG) or lower the least important priority written. */
void log_set_level(int max_priority);

void log_msg(int priority, const char *fmt, ...) LOG_PRINTF(2, 3);

#define log_error(...) log_msg(LOG_ERR, __VA_ARGS__)
#define log_warning(...) log_msg(LOG_WARNING, __VA_ARGS__)
#define log_info(...) log_msg(LOG_INFO, __VA_ARGS__)
#define log_debug(...) log_msg(LOG_DEBUG, __VA_ARGS__)

/* strerror_r into a caller buffer; returns buf. errnum may be negative. */
const char *log_strerror(int errnum, char *buf, size_t size);

/* User data s (may be NULL) for a log line: visible ASCII but the single
 * quote, a '?' for anything else (spaces too), cut to fit size bytes
 * (size > 0) with its NUL. Returns buf. */
const char *log_clean(const char *s, char *buf, size_t size);

#endif
