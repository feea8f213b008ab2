/*
 * mime_walk.h - the parts of a view under construction (private to
 * mime_view.c and mime_walk.c): the walk of GMime's tree, and adding a
 * part whose text is read here.
 */
#ifndef SLOP_MIME_WALK_H
#define SLOP_MIME_WALK_H

#include <stddef.h>

#include <gmime/gmime.h>

#include "classifier.h"
#include "mime_view.h"

struct walker {
    struct mime_view *v;
    const struct classifier_limits *limits;
    size_t parts_cap;
    unsigned visited;
};

/* Remember the first limit that cut the view, for the finding's evidence. */
static inline void
view_note_limit(struct mime_view *v, const char *name, size_t value)
{
    v->truncated = true;
    if (v->limit == NULL) {
        v->limit = name;
        v->limit_value = value;
    }
}

/* Walk the tree from o, depth deep, into w's view: each leaf a part. 0
 * or -ENOMEM; a limit stops the walk and is noted. */
int mime_walk(struct walker *w, GMimeObject *o, unsigned depth);

/* Append p to w's view, which takes over its strings and leaves p
 * empty. 0 or -ENOMEM (p is still the caller's). */
int mime_walk_add_part(struct walker *w, struct mime_part *p);

/* Set p's text from the decoded content raw[0..n) in charset cs (NULL:
 * none given), as UTF-8, and from HTML when p is. 0 or -ENOMEM. */
int mime_walk_set_text(struct walker *w, struct mime_part *p, const char *raw, size_t n,
                       const char *cs);

/* Free p's strings and clear it. */
void mime_walk_part_release(struct mime_part *p);

#endif
