/*
 * reply_template.h - the inside of a loaded reply template, shared by
 * reply_template.c (which builds it) and reply_render.c (which walks it).
 * Internal to milter/reply_*.c. A template is immutable once loaded.
 */
#ifndef SLOP_MILTER_REPLY_TEMPLATE_H
#define SLOP_MILTER_REPLY_TEMPLATE_H

#include <stddef.h>

enum reply_seg_kind {
    SEG_TEXT = 0,
    SEG_NEWLINE,
    SEG_SUBJECT,
    SEG_MESSAGE_ID,
    SEG_FINDINGS,
    SEG_QUESTIONS,
    SEG_DISCLOSURE,
    SEG_THREAT_MODEL_URL,
    SEG_SECURITY_BUGS_URL,
    SEG_SCORE,
};

struct reply_seg {
    enum reply_seg_kind kind;
    size_t off; /* SEG_TEXT: bytes in reply_template.text */
    size_t len;
};

struct reply_template {
    char *text;
    struct reply_seg *segs;
    size_t n_segs;
};

#endif
