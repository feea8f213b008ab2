/*
 * message_note.c - note on a message that a limit cut its input.
 *
 * The parsers and message_build() call it wherever a cap bites; only the
 * first limit noted is kept as the evidence. Threading: one message per
 * thread.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "message_note.h"

void
message_note_limit(struct message *m, const char *name, size_t value)
{
    char text[96];

    m->truncated = true;
    m->measures[MEASURE_LIMIT_HIT] = 1.0;
    if (m->measure_evidence[MEASURE_LIMIT_HIT] != NULL)
        return;
    if (value > 0)
        snprintf(text, sizeof(text), "%s=%zu", name, value);
    else
        snprintf(text, sizeof(text), "%s", name);
    m->measure_evidence[MEASURE_LIMIT_HIT] = strdup(text);
}
