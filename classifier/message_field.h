/*
 * message_field.h - the header fields of a mail as the message model
 * keeps them: the headers region, the subject, the sender, the
 * recipients, the ids that thread it, and whether a program sent it.
 */
#ifndef SLOP_MESSAGE_FIELD_H
#define SLOP_MESSAGE_FIELD_H

#include <stdbool.h>
#include <stddef.h>

#include "message.h"
#include "mime_view.h"

/*
 * Whether message_build() reads the header field named name[0..nlen)
 * (case ignored) for more than the headers region: Subject, From, To,
 * Cc, Message-ID, In-Reply-To, Auto-Submitted, and References for a
 * series. A view of only these fields (mime_view_parse_fields()) builds
 * the same message but for that region.
 */
bool message_field_used(const char *name, size_t nlen);

/*
 * One pass over v's fields: the headers and subject regions, the
 * recipients, and copies of the first Subject, From (and its bare
 * address), Message-ID and In-Reply-To (as mime_view_header() would find
 * them) and Auto-Submitted, into m. 0 or -ENOMEM.
 */
int message_field_read(struct message *m, const struct mime_view *v);

#endif
