/*
 * reply_reason.h - the words that say how one reply's sending went, built
 * by the transports (reply_sendmail.c, reply_smtp.c) into a caller's
 * fixed buffer and handed to the sender's status callback. Thread-safe.
 */
#ifndef SLOP_MILTER_REPLY_REASON_H
#define SLOP_MILTER_REPLY_REASON_H

#include <stddef.h>

/* The printable first line of text appended to reason after prefix. */
void reply_reason_append(char *reason, size_t reasonlen, const char *prefix, const char *text,
                         size_t textlen);

/* "what: strerror(err)" into reason. */
void reply_reason_errno(char *reason, size_t reasonlen, const char *what, int err);

#endif
