/*
 * config.c - the `Key value` parser: a file's lines into a struct config,
 * each value set by its row of the key table (config_keys.c) through its
 * type's setter (config_type.c), computed defaults (config_default.c), and
 * the checks across keys.
 *
 * Invariants: keys are matched case-insensitively; each may appear once;
 * the first problem stops parsing with "file:line: reason". A finished
 * struct config is never modified, so threads share it without locks.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "config_internal.h"
#include "file_read.h"

#define CONFIG_FILE_MAX (1u << 20) /* a configuration file larger than this is refused */

/* One parse: the file's name for messages, the line being read, and the
 * line each key was set at (0: not set). */
struct parse {
    const char *name;
    unsigned lineno;
    unsigned seen[CONFIG_KEYS_MAX];
    struct config *cfg;
    struct config_error *err;
};

static void __attribute__((format(printf, 2, 3)))
err_set(struct config_error *err, const char *fmt, ...)
{
    va_list ap;

    if (err == NULL)
        return;
    va_start(ap, fmt);
    vsnprintf(err->text, sizeof(err->text), fmt, ap);
    va_end(ap);
}

/* GNU strerror_r may return a static string instead of filling buf. */
static const char *
errstr(int e, char *buf, size_t size)
{
    return strerror_r(e, buf, size);
}

struct config *
config_free(struct config *cfg)
{
    if (cfg == NULL)
        return NULL;
    for (size_t i = 0; i < config_n_keys; i++) {
        const struct config_type *t = &config_types[config_keys[i].type];

        if (t->release != NULL)
            t->release((char *)cfg + config_keys[i].offset);
    }
    free(cfg);
    return NULL;
}

/*
 * Set one key from its text. On a bad value returns -EINVAL and writes the
 * reason (without file and line) to why.
 */
static int
key_set(struct config *cfg, const struct key *k, const char *value, char *why, size_t why_size)
{
    const struct config_type *t = &config_types[k->type];

    if (*value == '\0' && !(k->flags & K_EMPTY_OK) && !t->empty_ok) {
        snprintf(why, why_size, "%s: empty value", k->name);
        return -EINVAL;
    }
    return t->set(k, (char *)cfg + k->offset, value, why, why_size);
}

static const struct key *
key_find(const char *name)
{
    for (size_t i = 0; i < config_n_keys; i++)
        if (strcasecmp(config_keys[i].name, name) == 0)
            return &config_keys[i];
    return NULL;
}

/* A profile name is matched against the rule files' profile lines. */
static int
project_check(const struct parse *ps)
{
    const char *p = ps->cfg->project != NULL ? ps->cfg->project : "";

    if (strspn(p, "abcdefghijklmnopqrstuvwxyz0123456789-_") == strlen(p) && strlen(p) <= 63)
        return 0;
    err_set(ps->err, "%s:%u: Project: bad name '%.64s' (a-z, 0-9, '-' and '_')", ps->name,
            ps->seen[key_find("Project") - config_keys], p);
    return -EINVAL;
}

/* Enabled thresholds must rise with the severity of their action. */
static int
thresholds_check(const struct parse *ps)
{
    static const char *const names[] = {"TagThreshold", "ReplyThreshold", "QuarantineThreshold",
                                        "RejectThreshold"};
    const struct config *cfg = ps->cfg;
    const double v[] = {cfg->tag_threshold, cfg->reply_threshold, cfg->quarantine_threshold,
                        cfg->reject_threshold};

    for (int i = 1; i < 4; i++) {
        for (int j = 0; j < i && v[i] > 0; j++) {
            if (v[j] > 0 && v[i] < v[j]) {
                const struct key *k = key_find(names[i]);
                unsigned line = ps->seen[k - config_keys];

                err_set(ps->err,
                        "%s:%u: %s (%g) is below %s (%g); enabled thresholds must rise "
                        "with severity",
                        ps->name, line, names[i], v[i], names[j], v[j]);
                return -EINVAL;
            }
        }
    }
    return 0;
}

static char *
trim(char *s)
{
    char *e;

    while (*s == ' ' || *s == '\t')
        s++;
    e = s + strlen(s);
    while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
        *--e = '\0';
    return s;
}

/* Every key with a built-in default, from its text. */
static int
builtin_defaults_set(struct parse *ps)
{
    char why[640];

    for (size_t i = 0; i < config_n_keys; i++) {
        int r;

        if (config_keys[i].def == NULL)
            continue;
        r = key_set(ps->cfg, &config_keys[i], config_keys[i].def, why, sizeof(why));
        if (r < 0) {
            /* The table itself is wrong: a build bug, but say where. */
            err_set(ps->err, "built-in default: %s", why);
            return r;
        }
    }
    return 0;
}

/* Quotes allow an empty value ("") or blanks at either end. */
static char *
unquote(char *value)
{
    size_t vl = strlen(value);

    if (vl >= 2 && value[0] == '"' && value[vl - 1] == '"') {
        value[vl - 1] = '\0';
        value++;
    }
    return value;
}

/* The key named at the start of s (blanks trimmed, not a comment), once
 * and with a value: its row, and its value in *ret_value. */
static int
line_key(struct parse *ps, char *s, const struct key **ret_key, char **ret_value)
{
    char *key_end = s + strcspn(s, " \t");
    char *value = *key_end ? key_end + 1 : key_end;
    const struct key *k;

    *key_end = '\0';
    value = trim(value);
    k = key_find(s);
    if (k == NULL) {
        err_set(ps->err, "%s:%u: unknown key '%s'", ps->name, ps->lineno, s);
        return -EINVAL;
    }
    if (ps->seen[k - config_keys] != 0) {
        err_set(ps->err, "%s:%u: duplicate key '%s' (first set at line %u)", ps->name, ps->lineno,
                k->name, ps->seen[k - config_keys]);
        return -EINVAL;
    }
    if (*value == '\0') {
        err_set(ps->err, "%s:%u: missing value for '%s'", ps->name, ps->lineno, k->name);
        return -EINVAL;
    }
    *ret_key = k;
    *ret_value = unquote(value);
    return 0;
}

/* One line, without its newline: blank, a comment, or `Key value`. */
static int
line_apply(struct parse *ps, char *line)
{
    char *s = trim(line), *value, why[640];
    const struct key *k;
    int r;

    if (*s == '\0' || *s == '#')
        return 0;
    r = line_key(ps, s, &k, &value);
    if (r < 0)
        return r;
    ps->seen[k - config_keys] = ps->lineno;
    r = key_set(ps->cfg, k, value, why, sizeof(why));
    if (r == -ENOMEM)
        err_set(ps->err, "%s:%u: out of memory", ps->name, ps->lineno);
    else if (r < 0)
        err_set(ps->err, "%s:%u: %s", ps->name, ps->lineno, why);
    return r;
}

static int
lines_apply(struct parse *ps, const char *text, size_t len)
{
    const char *p = text, *end = text + len;

    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t ll = nl ? (size_t)(nl - p) : (size_t)(end - p);
        char line[CONFIG_LINE_MAX];
        int r;

        ps->lineno++;
        if (ll >= sizeof(line)) {
            err_set(ps->err, "%s:%u: line too long (more than %d bytes)", ps->name, ps->lineno,
                    CONFIG_LINE_MAX - 1);
            return -EINVAL;
        }
        memcpy(line, p, ll);
        line[ll] = '\0';
        p += ll + (nl ? 1 : 0);
        if (memchr(line, '\0', ll) != NULL) {
            err_set(ps->err, "%s:%u: NUL byte in line", ps->name, ps->lineno);
            return -EINVAL;
        }
        r = line_apply(ps, line);
        if (r < 0)
            return r;
    }
    return 0;
}

/* Every key without a built-in default that the file did not set. */
static int
computed_defaults_set(struct parse *ps, const struct config_paths *paths)
{
    for (size_t i = 0; i < config_n_keys; i++) {
        int r;

        if (config_keys[i].def != NULL || ps->seen[i] != 0)
            continue;
        r = config_default_compute(ps->cfg, &config_keys[i], paths);
        if (r < 0) {
            err_set(ps->err, "%s: cannot compute the default of %s", ps->name, config_keys[i].name);
            return r;
        }
    }
    return 0;
}

int
config_parse(const char *name, const char *text, size_t len, const struct config_paths *paths,
             struct config **ret, struct config_error *err)
{
    struct parse ps = {.name = name, .err = err};
    int r;

    ps.cfg = calloc(1, sizeof(*ps.cfg));
    if (ps.cfg == NULL)
        return -ENOMEM;
    r = builtin_defaults_set(&ps);
    if (r >= 0)
        r = lines_apply(&ps, text, len);
    if (r >= 0)
        r = computed_defaults_set(&ps, paths);
    if (r >= 0)
        r = thresholds_check(&ps);
    if (r >= 0)
        r = project_check(&ps);
    if (r < 0)
        goto out;

    *ret = ps.cfg;
    ps.cfg = NULL;
out:
    config_free(ps.cfg);
    return r;
}

int
config_load(const char *path, const struct config_paths *paths, struct config **ret,
            struct config_error *err)
{
    char *text = NULL;
    size_t len = 0;
    int fd, r;

    if (path == NULL)
        return config_parse("(built-in)", "", 0, paths, ret, err);

    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        char eb[128];

        r = -errno;
        err_set(err, "%s: cannot open: %s", path, errstr(-r, eb, sizeof(eb)));
        return r;
    }
    r = file_read_fd(fd, CONFIG_FILE_MAX, 0, &text, &len);
    close(fd);
    if (r == -EFBIG) {
        err_set(err, "%s: file larger than %u bytes", path, CONFIG_FILE_MAX);
        return r;
    }
    if (r == -ENOMEM)
        return r;
    if (r < 0) {
        err_set(err, "%s: read error", path);
        return -EIO;
    }
    r = config_parse(path, text, len, paths, ret, err);
    free(text);
    return r;
}
