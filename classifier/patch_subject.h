/*
 * patch_subject.h - read the [PATCH ...] tag of a message's subject.
 */
#ifndef SLOP_PATCH_SUBJECT_H
#define SLOP_PATCH_SUBJECT_H

#include "message.h"

/* Parse m->subject's [PATCH ...] tag into m->psubj. 0 or -ENOMEM. */
int patch_subject_parse(struct message *m);

#endif
