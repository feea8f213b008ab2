/*
 * message_disclosure.h - whether a text discloses that an AI tool wrote
 * or helped write it. A disclosure is information, never a reason to
 * score a mail up.
 */
#ifndef SLOP_MESSAGE_DISCLOSURE_H
#define SLOP_MESSAGE_DISCLOSURE_H

#include <stdbool.h>
#include <stddef.h>

/*
 * A disclosed AI origin on any line of text[0..len): an Assisted-by:/
 * Generated-by:/AI-assisted-by: trailer, a Co-authored-by: or
 * Co-developed-by: naming an AI tool, "generated with/by/using <tool>"
 * or "I used (an) AI".
 */
bool message_disclosure_find(const char *text, size_t len);

#endif
