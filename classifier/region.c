/*
 * region.c - names of the text regions and line-map look-ups.
 *
 * The name table is the one place that ties rule-file region names to
 * enum region_id; docs/rules.md documents the same list.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "region.h"

static const char *const region_names[REGION__COUNT] = {
    [REGION_SUBJECT] = "subject",     [REGION_HEADERS] = "headers",
    [REGION_BODY] = "body",           [REGION_QUOTED] = "quoted",
    [REGION_CHANGELOG] = "changelog", [REGION_TRAILERS] = "trailers",
    [REGION_NOTES] = "notes",         [REGION_REPORT] = "report",
    [REGION_CODE] = "code",           [REGION_ADDED] = "added",
    [REGION_REMOVED] = "removed",     [REGION_CONTEXT] = "context",
    [REGION_COMMENTS] = "comments",   [REGION_FILES] = "files",
};

const char *
region_name(enum region_id id)
{
    if ((unsigned)id >= REGION__COUNT)
        return NULL;
    return region_names[id];
}

int
region_parse(const char *name, enum region_id *ret)
{
    for (unsigned i = 0; i < REGION__COUNT; i++) {
        if (strcmp(region_names[i], name) == 0) {
            *ret = (enum region_id)i;
            return 0;
        }
    }
    return -EINVAL;
}

const struct region_line *
region_line_at(const struct region *r, size_t offset)
{
    size_t lo = 0, hi;

    if (r->lines == NULL || r->n_lines == 0)
        return NULL;
    /* Binary search for the last line starting at or before offset. */
    hi = r->n_lines;
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (r->lines[mid].offset <= offset)
            lo = mid;
        else
            hi = mid;
    }
    return &r->lines[lo];
}

void
region_line_text(const struct region *r, size_t i, const char **ret_p, size_t *ret_len)
{
    size_t start = r->lines[i].offset;
    size_t end = i + 1 < r->n_lines ? r->lines[i + 1].offset : r->len;

    if (end > start && r->text[end - 1] == '\n')
        end--;
    *ret_p = r->text + start;
    *ret_len = end - start;
}

void
region_release(struct region *r)
{
    if (r == NULL)
        return;
    free(r->text);
    free(r->lines);
    memset(r, 0, sizeof(*r));
}
