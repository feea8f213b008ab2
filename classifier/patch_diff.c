/*
 * patch_diff.c - the diff of a patch read into m->files and m->hunks
 * (git and plain "---/+++" headers, renames, copies, binaries, hunk
 * ranges) and into the added, removed, context and comments regions, each
 * line mapped to its file and line number; comments found by a small
 * scanner per language (C, shell, Kconfig, Makefile, Python, reST).
 *
 * Invariants: files and hunks stop at max_files and max_hunks (m->truncated
 * set); a hunk takes no more lines than its header counts. Line maps
 * borrow the path strings of m->files[i], each its own allocation, so they
 * stay put while the files array grows.
 * Ownership: files[] with each old_path and new_path, hunks[] and the
 * region text added here belong to the message (freed by message_free()).
 * Threading: no shared state; each call works on its own parser.
 */
#include "ascii.h"
#include "patch_parser.h"

/* What the comment scanner remembers between lines of one hunk. */
struct comment_state {
    bool c_block; /* inside a C block comment */
    bool kc_help; /* inside Kconfig help text */
    unsigned kc_indent;
};

struct diff_state {
    long file; /* index into m->files, -1 before the first */
    bool file_has_hunk;
    bool file_has_minus;
    long hunk; /* index into m->hunks of the open hunk, -1 when none */
    uint32_t old_rem, new_rem, old_ln, new_ln;
    const char *label; /* path string map entries point to */
    struct comment_state cs;
};

static enum file_lang
lang_of(const char *path)
{
    const char *base, *dot;

    if (path == NULL)
        return FILE_LANG_OTHER;
    base = strrchr(path, '/');
    base = base ? base + 1 : path;
    dot = strrchr(base, '.');
    if (dot != NULL && (strcmp(dot, ".c") == 0 || strcmp(dot, ".h") == 0))
        return FILE_LANG_C;
    if (dot != NULL && strcmp(dot, ".sh") == 0)
        return FILE_LANG_SHELL;
    if (strncmp(base, "Kconfig", 7) == 0)
        return FILE_LANG_KCONFIG;
    if (strncmp(base, "Makefile", 8) == 0 || strncmp(base, "Kbuild", 6) == 0 ||
        (dot != NULL && strcmp(dot, ".mk") == 0))
        return FILE_LANG_MAKEFILE;
    if (dot != NULL && strcmp(dot, ".rst") == 0)
        return FILE_LANG_RST;
    if (dot != NULL && strcmp(dot, ".txt") == 0 && strncmp(path, "Documentation/", 14) == 0)
        return FILE_LANG_RST;
    if (dot != NULL && strcmp(dot, ".py") == 0)
        return FILE_LANG_PYTHON;
    return FILE_LANG_OTHER;
}

/* A path from a diff header: quotes, "a/"/"b/" and a trailing tab and
 * timestamp removed; "/dev/null" gives NULL with *ret_null set. */
static char *
diff_path(const char *p, size_t len, bool strip_prefix, bool *ret_null)
{
    const char *tab = memchr(p, '\t', len);

    *ret_null = false;
    if (tab != NULL)
        len = (size_t)(tab - p);
    ascii_trim(&p, &len);
    if (len >= 2 && p[0] == '"' && p[len - 1] == '"') {
        p++;
        len -= 2;
    }
    if (len == 9 && memcmp(p, "/dev/null", 9) == 0) {
        *ret_null = true;
        return NULL;
    }
    if (strip_prefix && len > 2 && (p[0] == 'a' || p[0] == 'b') && p[1] == '/') {
        p += 2;
        len -= 2;
    }
    return strndup(p, len);
}

static void
set_path(char **slot, char *path)
{
    free(*slot);
    *slot = path;
}

static void
hunk_close(struct diff_state *ds)
{
    ds->hunk = -1;
    ds->old_rem = ds->new_rem = 0;
}

static int
file_open(struct parser *ps, struct diff_state *ds)
{
    struct message *m = ps->m;
    void *arr = m->files;
    int r;

    hunk_close(ds);
    if (m->n_files >= ps->limits->max_files) {
        message_note_limit(m, "max_files", ps->limits->max_files);
        return 1;
    }
    r = grow_array(&arr, m->n_files, sizeof(*m->files));
    m->files = arr;
    if (r < 0)
        return r;
    memset(&m->files[m->n_files], 0, sizeof(m->files[0]));
    ds->file = (long)m->n_files++;
    ds->file_has_hunk = false;
    ds->file_has_minus = false;
    ds->label = NULL;
    m->has_diff = true;
    return 0;
}

/* "diff --git a/x b/y": when both halves are equal the split is
 * unambiguous even with spaces in the name. */
static int
file_open_git(struct parser *ps, struct diff_state *ds, const struct patch_line *s)
{
    const char *p = s->p + 11;
    size_t len = s->len - 11, split = 0;
    struct patch_file *f;
    bool isnull;
    int r;

    r = file_open(ps, ds);
    if (r != 0)
        return r;
    f = &ps->m->files[ds->file];
    if (len > 0 && p[0] == '"') {
        const char *q = memchr(p + 1, '"', len - 1);

        if (q != NULL && (size_t)(q - p) + 1 < len)
            split = (size_t)(q - p) + 1;
    }
    for (size_t i = 0; split == 0 && i + 3 <= len; i++) {
        if (memcmp(p + i, " b/", 3) != 0)
            continue;
        if (split == 0)
            split = i;
        if (i * 2 + 1 == len) {
            split = i;
            break;
        }
    }
    if (split == 0)
        return 0;
    f->old_path = diff_path(p, split, true, &isnull);
    f->new_path = diff_path(p + split + 1, len - split - 1, true, &isnull);
    if (f->old_path == NULL || f->new_path == NULL)
        return -ENOMEM;
    return 0;
}

/* "--- x" / "+++ y" pair at lines i, i+1. */
static int
file_minus_plus(struct parser *ps, struct diff_state *ds, size_t i)
{
    const struct patch_line *minus = &ps->lines[i], *plus = &ps->lines[i + 1];
    struct patch_file *f;
    char *old_path, *new_path;
    bool old_null, new_null;
    int r;

    if (ds->file < 0 || ds->file_has_hunk || ds->file_has_minus) {
        r = file_open(ps, ds);
        if (r != 0)
            return r;
    }
    ds->file_has_minus = true;
    f = &ps->m->files[ds->file];
    old_path = diff_path(minus->p + 4, minus->len - 4, true, &old_null);
    new_path = diff_path(plus->p + 4, plus->len - 4, true, &new_null);
    if ((old_path == NULL && !old_null) || (new_path == NULL && !new_null)) {
        free(old_path);
        free(new_path);
        return -ENOMEM;
    }
    /* "diff --git" and rename lines already named the file; "---"/"+++"
     * only add what they lack and the /dev/null of a new or deleted file. */
    if (old_null || f->old_path == NULL)
        set_path(&f->old_path, old_path);
    else
        free(old_path);
    if (new_null || f->new_path == NULL)
        set_path(&f->new_path, new_path);
    else
        free(new_path);
    return 0;
}

static bool
parse_range(const char **p, const char *end, uint32_t *start, uint32_t *count)
{
    unsigned long v = 0;
    bool digits = false;

    while (*p < end && isdigit((unsigned char)**p)) {
        v = v * 10 + (unsigned long)(**p - '0');
        if (v > UINT32_MAX)
            return false;
        digits = true;
        (*p)++;
    }
    if (!digits)
        return false;
    *start = (uint32_t)v;
    *count = 1;
    if (*p < end && **p == ',') {
        (*p)++;
        v = 0;
        digits = false;
        while (*p < end && isdigit((unsigned char)**p)) {
            v = v * 10 + (unsigned long)(**p - '0');
            if (v > UINT32_MAX)
                return false;
            digits = true;
            (*p)++;
        }
        if (!digits)
            return false;
        *count = (uint32_t)v;
    }
    return true;
}

static bool
parse_hunk_header(const struct patch_line *s, struct patch_hunk *h)
{
    const char *p = s->p + 4, *end = s->p + s->len;

    if (!parse_range(&p, end, &h->old_start, &h->old_count))
        return false;
    if (end - p < 2 || p[0] != ' ' || p[1] != '+')
        return false;
    p += 2;
    return parse_range(&p, end, &h->new_start, &h->new_count);
}

static int
hunk_open(struct parser *ps, struct diff_state *ds, const struct patch_line *s)
{
    struct message *m = ps->m;
    struct patch_file *f;
    struct patch_hunk h = {0};
    void *arr = m->hunks;
    int r;

    hunk_close(ds);
    if (ds->file < 0 || !parse_hunk_header(s, &h))
        return 0;
    if (m->n_hunks >= ps->limits->max_hunks) {
        message_note_limit(m, "max_hunks", ps->limits->max_hunks);
        return 1;
    }
    f = &m->files[ds->file];
    if (!ds->file_has_hunk) {
        /* Paths are final now; map entries borrow them from here on. */
        if (f->old_path == NULL && f->new_path == NULL) {
            f->new_path = strdup("(unknown)");
            if (f->new_path == NULL)
                return -ENOMEM;
        }
        f->lang = lang_of(f->new_path ? f->new_path : f->old_path);
        ds->file_has_hunk = true;
    }
    ds->label = f->new_path ? f->new_path : f->old_path;
    r = grow_array(&arr, m->n_hunks, sizeof(*m->hunks));
    m->hunks = arr;
    if (r < 0)
        return r;
    h.file = (size_t)ds->file;
    h.added_first = ps->rb[REGION_ADDED].n;
    h.removed_first = ps->rb[REGION_REMOVED].n;
    m->hunks[m->n_hunks] = h;
    ds->hunk = (long)m->n_hunks++;
    ds->old_rem = h.old_count;
    ds->new_rem = h.new_count;
    ds->old_ln = h.old_start;
    ds->new_ln = h.new_start;
    memset(&ds->cs, 0, sizeof(ds->cs));
    return 0;
}

static unsigned
indent_width(const char *p, size_t len, size_t *ret_skip)
{
    unsigned w = 0;
    size_t i = 0;

    for (; i < len && (p[i] == ' ' || p[i] == '\t'); i++)
        w = p[i] == '\t' ? (w / 8 + 1) * 8 : w + 1;
    *ret_skip = i;
    return w;
}

/* A " * text" line: the continuation of a block comment. */
static bool
is_block_continuation(const char *t, size_t tl)
{
    return tl > 0 && t[0] == '*' && (tl == 1 || t[1] == ' ' || t[1] == '\t' || t[1] == '/');
}

/* Inside a block comment, or a " * text" continuation whose opener lies
 * before the hunk: *t narrowed to the text, up to the block's end when
 * the line ends it. */
static void
block_rest(struct comment_state *cs, const char **t, size_t *tl)
{
    const char *close;

    cs->c_block = true;
    if (*tl > 0 && (*t)[0] == '*' && !(*tl > 1 && (*t)[1] == '/')) {
        (*t)++;
        (*tl)--;
    }
    close = ascii_find_pair(*t, *tl, '*', '/');
    if (close != NULL) {
        cs->c_block = false;
        *tl = (size_t)(close - *t);
    }
}

/* A line that opens a block comment ("/" "*"): *t narrowed to its text,
 * up to the block's end when the line ends it too. */
static void
block_open(struct comment_state *cs, const char **t, size_t *tl)
{
    const char *close;

    *t += 2;
    *tl -= 2;
    while (*tl > 0 && (*t)[0] == '*' && !(*tl > 1 && (*t)[1] == '/')) {
        (*t)++;
        (*tl)--;
    }
    close = ascii_find_pair(*t, *tl, '*', '/');
    if (close != NULL)
        *tl = (size_t)(close - *t);
    else
        cs->c_block = true;
}

/* A line of code, which may open a block comment it does not close. */
static void
code_line(struct comment_state *cs, const char *p, size_t len)
{
    for (const char *o = ascii_find_pair(p, len, '/', '*'); o != NULL;
         o = ascii_find_pair(o + 2, len - (size_t)(o + 2 - p), '/', '*')) {
        const char *close = ascii_find_pair(o + 2, len - (size_t)(o + 2 - p), '*', '/');

        if (close == NULL) {
            cs->c_block = true;
            break;
        }
        o = close;
    }
}

/* C comment state machine over one line of the new file. Returns true
 * when the whole line is comment and sets the comment text (markers
 * removed). */
static bool
comment_c(struct comment_state *cs, const char *p, size_t len, const char **ret_t, size_t *ret_tlen)
{
    const char *t = p;
    size_t tl = len;

    ascii_trim(&t, &tl);
    if (cs->c_block || is_block_continuation(t, tl)) {
        block_rest(cs, &t, &tl);
    } else if (tl >= 2 && t[0] == '/' && t[1] == '/') {
        while (tl > 0 && t[0] == '/') {
            t++;
            tl--;
        }
    } else if (tl >= 2 && t[0] == '/' && t[1] == '*') {
        block_open(cs, &t, &tl);
    } else {
        code_line(cs, p, len);
        return false;
    }
    ascii_trim(&t, &tl);
    *ret_t = t;
    *ret_tlen = tl;
    return true;
}

static bool
comment_hash(const char *p, size_t len, const char **ret_t, size_t *ret_tlen)
{
    const char *t = p;
    size_t tl = len;

    ascii_trim(&t, &tl);
    if (tl == 0 || t[0] != '#' || (tl > 1 && t[1] == '!'))
        return false;
    while (tl > 0 && t[0] == '#') {
        t++;
        tl--;
    }
    ascii_trim(&t, &tl);
    *ret_t = t;
    *ret_tlen = tl;
    return true;
}

/* Kconfig help text: lines indented deeper than the "help" keyword, or
 * by the conventional tab and two spaces when the keyword lies before
 * the hunk. */
static bool
comment_kconfig(struct comment_state *cs, const char *p, size_t len, const char **ret_t,
                size_t *ret_tlen)
{
    const char *t = p;
    size_t tl = len, skip;
    unsigned ind = indent_width(p, len, &skip);

    ascii_trim(&t, &tl);
    if (tl == 0)
        return false;
    if (cs->kc_help && ind <= cs->kc_indent)
        cs->kc_help = false;
    if (!cs->kc_help && (is_word_token(t, tl, "help") || is_word_token(t, tl, "---help---"))) {
        cs->kc_help = true;
        cs->kc_indent = ind;
        return false;
    }
    if (cs->kc_help || (len > 3 && memcmp(p, "\t  ", 3) == 0)) {
        *ret_t = t;
        *ret_tlen = tl;
        return true;
    }
    return comment_hash(p, len, ret_t, ret_tlen);
}

static bool
comment_of(enum file_lang lang, struct comment_state *cs, const char *p, size_t len,
           const char **ret_t, size_t *ret_tlen)
{
    switch (lang) {
    case FILE_LANG_C:
        return comment_c(cs, p, len, ret_t, ret_tlen);
    case FILE_LANG_SHELL:
    case FILE_LANG_MAKEFILE:
    case FILE_LANG_PYTHON:
        return comment_hash(p, len, ret_t, ret_tlen);
    case FILE_LANG_KCONFIG:
        return comment_kconfig(cs, p, len, ret_t, ret_tlen);
    default:
        return false;
    }
}

/* One line inside an open hunk. Returns 1 when the line does not belong
 * to the hunk (the hunk is closed and the caller looks at it again). */
static int
hunk_line(struct parser *ps, struct diff_state *ds, const struct patch_line *s)
{
    struct message *m = ps->m;
    struct patch_hunk *h = &m->hunks[ds->hunk];
    struct patch_file *f = &m->files[ds->file];
    char c = s->len > 0 ? s->p[0] : ' ';
    const char *body = s->len > 0 ? s->p + 1 : s->p;
    size_t blen = s->len > 0 ? s->len - 1 : 0;
    const char *ct;
    size_t ctl;
    int r = 0;

    switch (c) {
    case ' ':
        if (ds->old_rem == 0 || ds->new_rem == 0)
            goto end;
        r = patch_rbuf_add(&ps->rb[REGION_CONTEXT], body, blen, ds->label, ds->new_ln);
        (void)comment_of(f->lang, &ds->cs, body, blen, &ct, &ctl);
        ds->old_rem--;
        ds->new_rem--;
        ds->old_ln++;
        ds->new_ln++;
        break;
    case '+':
        if (ds->new_rem == 0)
            goto end;
        r = patch_rbuf_add(&ps->rb[REGION_ADDED], body, blen, ds->label, ds->new_ln);
        if (r == 0 && comment_of(f->lang, &ds->cs, body, blen, &ct, &ctl))
            r = patch_rbuf_add(&ps->rb[REGION_COMMENTS], ct, ctl, ds->label, ds->new_ln);
        h->added_count++;
        f->added++;
        ds->new_rem--;
        ds->new_ln++;
        break;
    case '-':
        if (ds->old_rem == 0)
            goto end;
        r = patch_rbuf_add(&ps->rb[REGION_REMOVED], body, blen, ds->label, ds->old_ln);
        h->removed_count++;
        f->removed++;
        ds->old_rem--;
        ds->old_ln++;
        break;
    case '\\':
        return 0; /* "\ No newline at end of file" */
    default:
        goto end;
    }
    if (r < 0)
        return r;
    if (ds->old_rem == 0 && ds->new_rem == 0)
        hunk_close(ds);
    return 0;
end:
    hunk_close(ds);
    return 1;
}

/* A line of a file's extended header (new, deleted, renamed, copied,
 * binary) before its first hunk. 0 or -ENOMEM. */
static int
file_meta_line(struct patch_file *f, const struct patch_line *s)
{
    bool isnull;

    if (span_starts(s, "new file mode")) {
        set_path(&f->old_path, NULL);
    } else if (span_starts(s, "deleted file mode")) {
        set_path(&f->new_path, NULL);
    } else if (span_starts(s, "rename from ") || span_starts(s, "copy from ")) {
        const char *p = (const char *)memchr(s->p, ' ', s->len) + 6;

        set_path(&f->old_path, diff_path(p, s->len - (size_t)(p - s->p), false, &isnull));
        return f->old_path ? 0 : -ENOMEM;
    } else if (span_starts(s, "rename to ") || span_starts(s, "copy to ")) {
        const char *p = (const char *)memchr(s->p, ' ', s->len) + 4;

        set_path(&f->new_path, diff_path(p, s->len - (size_t)(p - s->p), false, &isnull));
        return f->new_path ? 0 : -ENOMEM;
    } else if (span_starts(s, "Binary files ") || span_starts(s, "GIT binary patch")) {
        f->binary = true;
        if (span_starts(s, "Binary files /dev/null "))
            set_path(&f->old_path, NULL);
        else if (s->len > 17 && memcmp(s->p + s->len - 17, " /dev/null differ", 17) == 0)
            set_path(&f->new_path, NULL);
    }
    return 0;
}

int
patch_diff_parse(struct parser *ps, size_t from)
{
    struct diff_state ds = {.file = -1, .hunk = -1};
    struct message *m = ps->m;
    int r = 0;

    for (size_t i = from; i < ps->n && r >= 0; i++) {
        const struct patch_line *s = &ps->lines[i];

        if (ds.hunk >= 0) {
            r = hunk_line(ps, &ds, s);
            if (r <= 0)
                continue;
            r = 0;
        }
        if (span_starts(s, "diff --git ")) {
            r = file_open_git(ps, &ds, s);
        } else if (span_starts(s, "--- ") && i + 1 < ps->n &&
                   span_starts(&ps->lines[i + 1], "+++ ")) {
            r = file_minus_plus(ps, &ds, i);
            i++;
        } else if (span_starts(s, "@@ -")) {
            r = hunk_open(ps, &ds, s);
        } else if (ds.file >= 0 && !ds.file_has_hunk) {
            r = file_meta_line(&m->files[ds.file], s);
        }
        if (r > 0)
            break; /* a cap was reached */
    }
    return r < 0 ? r : 0;
}

int
patch_diff_files(struct parser *ps, size_t first_file)
{
    struct message *m = ps->m;
    int r;

    for (size_t i = first_file; i < m->n_files; i++) {
        struct patch_file *f = &m->files[i];

        if (f->lang == FILE_LANG_OTHER)
            f->lang = lang_of(f->new_path ? f->new_path : f->old_path);
        if (f->old_path != NULL && (f->new_path == NULL || strcmp(f->old_path, f->new_path) != 0)) {
            r = patch_rbuf_add(&ps->rb[REGION_FILES], f->old_path, strlen(f->old_path), NULL, 0);
            if (r < 0)
                return r;
        }
        if (f->new_path != NULL) {
            r = patch_rbuf_add(&ps->rb[REGION_FILES], f->new_path, strlen(f->new_path), NULL, 0);
            if (r < 0)
                return r;
        }
    }
    return 0;
}
