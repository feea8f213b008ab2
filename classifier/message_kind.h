/*
 * message_kind.h - the questions that decide a message's kind beyond its
 * form: does it read like a report, does it only ask, is it a reply.
 */
#ifndef SLOP_MESSAGE_KIND_H
#define SLOP_MESSAGE_KIND_H

#include <stdbool.h>
#include <stddef.h>

#include "textbuf.h"

/* The subject starts "Re:" or "Aw:" (any case). */
bool message_kind_reply_subject(const char *subject);

/*
 * The subject, the own text or the text attachments read like a bug or
 * security report, each on its own: one strong word, or need different
 * weak ones. need 0: any mail does. With problem_only, the words that
 * name a topic rather than a problem do not count.
 */
bool message_kind_reads_like_report(const char *subject, const struct textbuf *own,
                                    const struct textbuf *attached, int need, bool problem_only);

/*
 * Whether the text s[0..n) only asks: it has a question, and no sentence
 * of four words or more ends in '.', '!' or ':'. A long text is not a
 * quick question, whatever its punctuation.
 */
bool message_kind_asks_only(const char *s, size_t n);

#endif
