/*
 * message_build.h - build the message model from a decoded MIME view.
 *
 * message_build() turns a struct mime_view into a struct message: the
 * fields, the body's own and quoted text, the patch (patch_parse.h), the
 * kind, the report's facts (report_parse.h) and the measures. The message
 * does not borrow from the view, which may be freed right after building.
 */
#ifndef SLOP_MESSAGE_BUILD_H
#define SLOP_MESSAGE_BUILD_H

#include "classifier.h"
#include "message.h"
#include "mime_view.h"
#include "route.h"

/*
 * Build the model of v. On success *ret owns a message to free with
 * message_free(); measures are computed. Returns -ENOMEM on allocation
 * failure; bad input is never an error.
 */
int message_build(const struct mime_view *v, const struct classifier_limits *limits,
                  struct message **ret);
/* message_build() for mail that went to route's recipients (NULL: none
 * known): mail to a report address, or that the caller says is a report,
 * is a report unless it is a patch or a reply. */
int message_build_routed(const struct mime_view *v, const struct classifier_limits *limits,
                         const struct route *route, struct message **ret);

#endif
