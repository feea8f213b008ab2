/*
 * message_note.h - what the builders of a message note on it besides what
 * they parse: that a limit cut the input.
 */
#ifndef SLOP_MESSAGE_NOTE_H
#define SLOP_MESSAGE_NOTE_H

#include <stddef.h>

#include "message.h"

/* A limit (its struct classifier_limits field name, static) cut the
 * input: sets m->truncated and the limit_hit measure; the first limit
 * noted becomes that measure's evidence ("max_hunks=5000", or the name
 * alone when value is 0). Never fails: without memory the evidence is
 * only left out. */
void message_note_limit(struct message *m, const char *name, size_t value);

#endif
