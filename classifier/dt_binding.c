/*
 * dt_binding.c - schema mistakes in the device-tree bindings a diff adds.
 *
 * Only added lines of files under Documentation/devicetree/bindings/ are
 * read, so a message without bindings costs one prefix test per file.
 * Three mistakes are counted, each one the kernel's tools report on the
 * first run: a new binding written as .txt (checkpatch: bindings are DT
 * schema), a $id that names another file than the one it is in, and a
 * $ref to /schemas/types.yaml with nothing after the '#'. Each file counts
 * once per kind of mistake, so a long binding repeating one slip is one.
 * Apart from those, added lines of a binding that speak of a driver are
 * counted: writing-bindings.rst asks bindings to describe the hardware,
 * never Linux or its drivers.
 *
 * The evidence is a fixed buffer copied into the message at the end.
 * Threading: no shared state.
 */
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dt_binding.h"

#define DT_BINDING_DIR "Documentation/devicetree/bindings/"
#define DT_EVIDENCE_MAX 384
#define DT_EVIDENCE_ITEMS 3 /* mistakes named in the evidence; the rest only counted */

struct dt_found {
    char buf[DT_EVIDENCE_MAX];
    size_t len;
    unsigned n;
};

static void
dt_note(struct dt_found *f, const char *path, const char *what, const char *p, size_t len)
{
    int w;

    f->n++;
    if (f->n > DT_EVIDENCE_ITEMS || f->len >= sizeof(f->buf) - 1)
        return;
    if (len > 80)
        len = 80;
    w = snprintf(f->buf + f->len, sizeof(f->buf) - f->len, "%s%s: %s%s%.*s%s",
                 f->len > 0 ? "; " : "", path, what, len > 0 ? " '" : "", (int)len, p,
                 len > 0 ? "'" : "");
    if (w < 0)
        return;
    f->len += (size_t)w;
    if (f->len >= sizeof(f->buf))
        f->len = sizeof(f->buf) - 1;
}

static bool
ends_with(const char *s, const char *suffix)
{
    size_t sl = strlen(s), fl = strlen(suffix);

    return sl >= fl && strcmp(s + sl - fl, suffix) == 0;
}

/* The value of a top-level "key:" line, white space trimmed; NULL when
 * the line is not that key. Schema keys start in column 0 or are
 * indented; both count, as dt-schema reads them the same. */
static const char *
key_value(const char *p, size_t len, const char *key, size_t *ret_len)
{
    const char *end = p + len;
    size_t kl = strlen(key);

    while (p < end && (*p == ' ' || *p == '\t'))
        p++;
    if ((size_t)(end - p) < kl || memcmp(p, key, kl) != 0)
        return NULL;
    p += kl;
    while (p < end && (*p == ' ' || *p == '\t'))
        p++;
    while (end > p && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r'))
        end--;
    /* a quoted value reads the same as a bare one */
    if (end - p >= 2 && (*p == '"' || *p == '\'') && end[-1] == *p) {
        p++;
        end--;
    }
    *ret_len = (size_t)(end - p);
    return p;
}

/* The $id URL names the file: http(s)://devicetree.org/schemas/REL# where
 * REL is the path below the bindings directory. */
static bool
id_names_file(const char *v, size_t vl, const char *rel)
{
    static const char *const bases[] = {"http://devicetree.org/schemas/",
                                        "https://devicetree.org/schemas/"};
    size_t rl = strlen(rel);

    for (size_t i = 0; i < sizeof(bases) / sizeof(bases[0]); i++) {
        size_t bl = strlen(bases[i]);

        if (vl < bl || memcmp(v, bases[i], bl) != 0)
            continue;
        v += bl;
        vl -= bl;
        if (vl > 0 && v[vl - 1] == '#')
            vl--;
        return vl == rl && memcmp(v, rel, rl) == 0;
    }
    /* another base is a different mistake the check reports too, but
     * not one this counts: stay quiet */
    return true;
}

static bool
bare_types_ref(const char *v, size_t vl)
{
    static const char *const bare[] = {"/schemas/types.yaml#", "/schemas/types.yaml"};

    for (size_t i = 0; i < sizeof(bare) / sizeof(bare[0]); i++)
        if (vl == strlen(bare[i]) && memcmp(v, bare[i], vl) == 0)
            return true;
    return false;
}

/* A word "driver" or "drivers", in any case, not part of a longer name
 * ("driver-strength" and "drivers/" paths still count: both speak of one). */
static bool
says_driver(const char *p, size_t len)
{
    static const char word[] = "driver";
    size_t wl = sizeof(word) - 1;

    for (size_t i = 0; i + wl <= len; i++) {
        size_t j = 0;

        while (j < wl && (p[i + j] | 0x20) == word[j])
            j++;
        if (j < wl)
            continue;
        if (i > 0 && (isalnum((unsigned char)p[i - 1]) || p[i - 1] == '_'))
            continue;
        j = i + wl;
        if (j < len && (p[j] == 's' || p[j] == 'S'))
            j++;
        if (j < len && (isalnum((unsigned char)p[j]) || p[j] == '_'))
            continue;
        return true;
    }
    return false;
}

/* One file of a patch as dt_check_line() reads it: its path, whether it
 * is a YAML schema, and the schema problems already noted (one of each
 * kind per file). */
struct dt_file {
    const char *path, *rel;
    bool yaml, bad_id, bad_ref;
};

static void
dt_check_line(struct dt_file *f, const char *p, size_t len, struct dt_found *schema,
              struct dt_found *driver)
{
    const char *v;
    size_t vl;

    if (says_driver(p, len)) {
        while (len > 0 && (*p == ' ' || *p == '\t')) {
            p++;
            len--;
        }
        dt_note(driver, f->path, "speaks of a driver:", p, len);
    }
    if (!f->yaml)
        return;
    if (!f->bad_id && (v = key_value(p, len, "$id:", &vl)) != NULL &&
        !id_names_file(v, vl, f->rel)) {
        f->bad_id = true;
        dt_note(schema, f->path, "$id names another file", v, vl);
    }
    if (!f->bad_ref && (v = key_value(p, len, "$ref:", &vl)) != NULL && bare_types_ref(v, vl)) {
        f->bad_ref = true;
        dt_note(schema, f->path, "$ref to the types schema without a definition", v, vl);
    }
}

static void
dt_check_file(const struct message *m, size_t file, const char *path, bool yaml,
              struct dt_found *schema, struct dt_found *driver)
{
    const struct region *add = &m->regions[REGION_ADDED];
    struct dt_file f = {.path = path, .rel = path + strlen(DT_BINDING_DIR), .yaml = yaml};

    if (add->lines == NULL)
        return;
    for (size_t h = 0; h < m->n_hunks; h++) {
        const struct patch_hunk *hk = &m->hunks[h];
        size_t end = hk->added_first + hk->added_count;

        if (hk->file != file)
            continue;
        if (end > add->n_lines)
            end = add->n_lines;
        for (size_t i = hk->added_first; i < end; i++) {
            const char *p;
            size_t len;

            region_line_text(add, i, &p, &len);
            dt_check_line(&f, p, len, schema, driver);
        }
    }
}

/* Sets measure id to f's count and its evidence to f's text. */
static int
dt_set(struct message *m, enum measure_id id, struct dt_found *f)
{
    m->measures[id] = (double)f->n;
    if (f->n == 0)
        return 0;
    if (f->n > DT_EVIDENCE_ITEMS) {
        int w = snprintf(f->buf + f->len, sizeof(f->buf) - f->len, " and %u more",
                         f->n - DT_EVIDENCE_ITEMS);

        if (w > 0)
            f->len = f->len + (size_t)w < sizeof(f->buf) ? f->len + (size_t)w : sizeof(f->buf) - 1;
    }
    m->measure_evidence[id] = strndup(f->buf, f->len);
    return m->measure_evidence[id] != NULL ? 0 : -ENOMEM;
}

int
dt_binding_measure(struct message *m)
{
    static const enum measure_id ids[] = {MEASURE_BINDING_SCHEMA_ERRORS,
                                          MEASURE_BINDING_DRIVER_LINES};
    struct dt_found schema = {.len = 0}, driver = {.len = 0};
    int r;

    for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
        m->measures[ids[i]] = 0;
        free(m->measure_evidence[ids[i]]);
        m->measure_evidence[ids[i]] = NULL;
    }
    for (size_t i = 0; i < m->n_files; i++) {
        const struct patch_file *pf = &m->files[i];
        const char *path = pf->new_path;
        bool yaml;

        if (path == NULL || pf->binary ||
            strncmp(path, DT_BINDING_DIR, strlen(DT_BINDING_DIR)) != 0)
            continue;
        yaml = ends_with(path, ".yaml");
        /* edits to the remaining .txt bindings are fine; new ones are not */
        if (pf->old_path == NULL && ends_with(path, ".txt"))
            dt_note(&schema, path, "new binding in .txt, not DT schema", "", 0);
        if (yaml || ends_with(path, ".txt"))
            dt_check_file(m, i, path, yaml, &schema, &driver);
    }
    r = dt_set(m, MEASURE_BINDING_SCHEMA_ERRORS, &schema);
    if (dt_set(m, MEASURE_BINDING_DRIVER_LINES, &driver) < 0)
        r = -ENOMEM;
    return r;
}
