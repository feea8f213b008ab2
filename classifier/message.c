/*
 * message.c - the message model (message.h): what a message owns, and its
 * release. The builders (message_build.c and the parsers it calls) fill
 * it; the model calls none of them.
 *
 * Ownership: a message owns every string, list and region in it.
 * Threading: one message per thread.
 */
#include <stdlib.h>

#include "message.h"

struct message *
message_free(struct message *m)
{
    if (m == NULL)
        return NULL;
    free(m->subject);
    free(m->from);
    free(m->from_addr);
    free(m->message_id);
    free(m->in_reply_to);
    strv_release(&m->recipients);
    for (unsigned i = 0; i < REGION__COUNT; i++)
        region_release(&m->regions[i]);
    free(m->psubj.prefix);
    free(m->psubj.subsystem);
    free(m->psubj.summary);
    for (size_t i = 0; i < m->n_trailers; i++) {
        free(m->trailers[i].tag);
        free(m->trailers[i].value);
    }
    free(m->trailers);
    for (size_t i = 0; i < m->n_files; i++) {
        free(m->files[i].old_path);
        free(m->files[i].new_path);
    }
    free(m->files);
    free(m->hunks);
    strv_release(&m->versions);
    strv_release(&m->functions);
    strv_release(&m->paths);
    strv_release(&m->configs);
    strv_release(&m->urls);
    for (unsigned i = 0; i < MEASURE__COUNT; i++)
        free(m->measure_evidence[i]);
    free(m);
    return NULL;
}
