/*
 * reply_reason.c - a transport's reason for one reply's outcome: the
 * printable first line of what the child or server said, or an errno's
 * words. Writes only the caller's buffer; safe on any thread.
 */
#include <stdio.h>
#include <string.h>

#include "reply_reason.h"

/* Keep the printable part of a child's or server's words for a reason. */
void
reply_reason_append(char *reason, size_t reasonlen, const char *prefix, const char *text,
                    size_t textlen)
{
    size_t n = strlen(reason);

    if (textlen == 0)
        return;
    n += (size_t)snprintf(reason + n, reasonlen > n ? reasonlen - n : 0, "%s", prefix);
    for (size_t i = 0; i < textlen && n + 1 < reasonlen; i++) {
        unsigned char c = (unsigned char)text[i];

        if (c == '\n' || c == '\r') {
            /* First line only. */
            if (i > 0)
                break;
            continue;
        }
        reason[n++] = (c >= 0x20 && c < 0x7f) ? (char)c : '?';
    }
    reason[n < reasonlen ? n : reasonlen - 1] = '\0';
}

/* "what: strerror(err)" into reason; strerror_r, as threads share this. */
void
reply_reason_errno(char *reason, size_t reasonlen, const char *what, int err)
{
    char eb[128];

    snprintf(reason, reasonlen, "%s: %s", what, strerror_r(err, eb, sizeof(eb)));
}
