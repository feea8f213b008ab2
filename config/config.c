/*
 * config.c - the `Key value` parser: a file's lines into a struct config,
 * each value set by its row of the key table (config_keys.c), computed
 * defaults, and the checks across keys.
 *
 * Invariants: keys are matched case-insensitively; each may appear once;
 * the first problem stops parsing with "file:line: reason". A finished
 * struct config is never modified, so threads share it without locks.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <syslog.h>
#include <unistd.h>

#include "buildtree.h"
#include "config_internal.h"

#ifndef SLOP_DEFAULT_RULES_DIR
#define SLOP_DEFAULT_RULES_DIR "/usr/share/slop-milter/rules"
#endif

#define CONFIG_FILE_MAX (1u << 20) /* a configuration file larger than this is refused */

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
        void *field = (char *)cfg + config_keys[i].offset;

        switch (config_keys[i].type) {
        case T_STRING:
        case T_PATH:
        case T_SOCKET:
        case T_HOSTPORT:
        case T_USER:
            free(*(char **)field);
            break;
        case T_ADDRS:
            list_release(field);
            break;
        case T_HOSTS:
            hosts_release(field);
            break;
        default:
            break;
        }
    }
    free(cfg);
    return NULL;
}

static int
replace_string(char **field, const char *value)
{
    char *d = strdup(value);

    if (d == NULL)
        return -ENOMEM;
    free(*field);
    *field = d;
    return 0;
}

/* Blank- or comma-separated words of k->words, their values OR'd into
 * *field; at least one. */
static int
words_set(const struct key *k, const char *value, unsigned *field, char *why, size_t why_size)
{
    unsigned v = 0;
    size_t n = 0;

    for (const char *p = value; *p != '\0';) {
        size_t len = strcspn(p, " \t,");
        size_t i;

        if (len == 0) {
            p++;
            continue;
        }
        for (i = 0; k->words[i]; i++)
            if (strlen(k->words[i]) == len && strncasecmp(p, k->words[i], len) == 0)
                break;
        if (k->words[i] == NULL) {
            char words[128];

            words_join(k->words, words, sizeof(words));
            snprintf(why, why_size, "%s: bad value '%.*s' (use %s)", k->name,
                     (int)(len > 64 ? 64 : len), p, words);
            return -EINVAL;
        }
        v |= (unsigned)k->values[i];
        n++;
        p += len;
    }
    if (n == 0) {
        snprintf(why, why_size, "%s: empty value", k->name);
        return -EINVAL;
    }
    *field = v;
    return 0;
}

/*
 * Set one key from its text. On a bad value returns -EINVAL and writes the
 * reason (without file and line) to why.
 */
static int
key_set(struct config *cfg, const struct key *k, const char *value, char *why, size_t why_size)
{
    void *field = (char *)cfg + k->offset;
    char lo[32], hi[32];
    int r;

    if (*value == '\0' && !(k->flags & K_EMPTY_OK) && k->type != T_ADDRS && k->type != T_HOSTS) {
        snprintf(why, why_size, "%s: empty value", k->name);
        return -EINVAL;
    }
    fmt_limit(k->min, lo, sizeof(lo));
    fmt_limit(k->max, hi, sizeof(hi));

    switch (k->type) {
    case T_STRING:
        return replace_string(field, value);
    case T_PATH:
        if (*value != '\0' && value[0] != '/') {
            snprintf(why, why_size, "%s: '%s' is not an absolute path", k->name, value);
            return -EINVAL;
        }
        return replace_string(field, value);
    case T_SOCKET:
        /* Reached with "" only for a K_EMPTY_OK key: "off". */
        if (*value != '\0' && !config_socket_valid(value)) {
            snprintf(why, why_size,
                     "%s: bad socket '%s' (use local:/path, unix:/path, inet:port@host or "
                     "inet6:port@host)",
                     k->name, value);
            return -EINVAL;
        }
        if (*value != '\0' && (k->flags & K_TCP_ONLY) && strncmp(value, "inet", 4) != 0) {
            snprintf(why, why_size,
                     "%s: '%s' is not a TCP socket (use inet:port@host or "
                     "inet6:port@host)",
                     k->name, value);
            return -EINVAL;
        }
        return replace_string(field, value);
    case T_HOSTPORT:
        if (!hostport_valid(value)) {
            snprintf(why, why_size, "%s: bad address '%s' (use host:port or [IPv6]:port)", k->name,
                     value);
            return -EINVAL;
        }
        return replace_string(field, value);
    case T_USER:
        if (*value != '\0' && !user_valid(value)) {
            snprintf(why, why_size, "%s: bad user '%s' (use user or user:group)", k->name, value);
            return -EINVAL;
        }
        return replace_string(field, value);
    case T_BOOL:
        if (!strcasecmp(value, "yes") || !strcasecmp(value, "true") || !strcmp(value, "1") ||
            !strcasecmp(value, "on"))
            *(bool *)field = true;
        else if (!strcasecmp(value, "no") || !strcasecmp(value, "false") || !strcmp(value, "0") ||
                 !strcasecmp(value, "off"))
            *(bool *)field = false;
        else {
            snprintf(why, why_size, "%s: bad boolean '%s' (use yes or no)", k->name, value);
            return -EINVAL;
        }
        return 0;
    case T_UINT: {
        const char *end;
        uint64_t v;

        if (parse_u64(value, &end, &v) < 0 || *end != '\0') {
            snprintf(why, why_size, "%s: bad number '%s'", k->name, value);
            return -EINVAL;
        }
        if ((double)v < k->min || (double)v > k->max) {
            snprintf(why, why_size, "%s: %s is out of range (%s to %s)", k->name, value, lo, hi);
            return -EINVAL;
        }
        *(unsigned *)field = (unsigned)v;
        return 0;
    }
    case T_OCTAL: {
        unsigned long v = 0;

        if (strspn(value, "01234567") != strlen(value) || strlen(value) > 6) {
            snprintf(why, why_size, "%s: bad octal number '%s'", k->name, value);
            return -EINVAL;
        }
        v = strtoul(value, NULL, 8);
        if ((double)v < k->min || (double)v > k->max) {
            snprintf(why, why_size, "%s: %s is out of range (0 to 0%o)", k->name, value,
                     (unsigned)k->max);
            return -EINVAL;
        }
        *(unsigned *)field = (unsigned)v;
        return 0;
    }
    case T_NUMBER: {
        char *end;
        double v;

        errno = 0;
        v = strtod(value, &end);
        if (errno != 0 || *end != '\0' || end == value || !isfinite(v) ||
            !(isdigit((unsigned char)value[0]) || value[0] == '-' || value[0] == '.')) {
            snprintf(why, why_size, "%s: bad number '%s'", k->name, value);
            return -EINVAL;
        }
        if (v < k->min || v > k->max) {
            snprintf(why, why_size, "%s: %s is out of range (%s to %s)", k->name, value, lo, hi);
            return -EINVAL;
        }
        *(double *)field = v;
        return 0;
    }
    case T_SIZE: {
        uint64_t v;

        if (config_parse_size(value, &v) < 0) {
            snprintf(why, why_size,
                     "%s: bad size '%s' (use a number with an optional K, M or G suffix)", k->name,
                     value);
            return -EINVAL;
        }
        if ((double)v < k->min || (double)v > k->max) {
            fmt_size(k->min, lo, sizeof(lo));
            fmt_size(k->max, hi, sizeof(hi));
            snprintf(why, why_size, "%s: %s is out of range (%s to %s)", k->name, value, lo, hi);
            return -EINVAL;
        }
        *(uint64_t *)field = v;
        return 0;
    }
    case T_DURATION: {
        uint32_t v = 0;

        if (config_parse_duration(value, &v) < 0) {
            snprintf(why, why_size,
                     "%s: bad duration '%s' (use a number with an optional s, m, h or d suffix)",
                     k->name, value);
            return -EINVAL;
        }
        if ((double)v < k->min || (double)v > k->max) {
            fmt_duration(k->min, lo, sizeof(lo));
            fmt_duration(k->max, hi, sizeof(hi));
            snprintf(why, why_size, "%s: %s is out of range (%s to %s)", k->name, value, lo, hi);
            return -EINVAL;
        }
        *(uint32_t *)field = v;
        return 0;
    }
    case T_ENUM:
        for (size_t i = 0; k->words[i]; i++) {
            if (strcasecmp(value, k->words[i]) == 0) {
                *(int *)field = k->values[i];
                return 0;
            }
        }
        {
            char words[128];

            words_join(k->words, words, sizeof(words));
            snprintf(why, why_size, "%s: bad value '%s' (use %s)", k->name, value, words);
        }
        return -EINVAL;
    case T_ADDRS: {
        struct config_list fresh = {0};
        struct list_ctx lc = {.list = &fresh};

        r = split_items(value, list_add, &lc);
        if (r < 0) {
            if (r == -EINVAL)
                snprintf(why, why_size, "%s: bad address '%.*s' (use user@domain or @domain)",
                         k->name, (int)(lc.bad_len > 200 ? 200 : lc.bad_len), lc.bad);
            else if (r == -E2BIG)
                snprintf(why, why_size, "%s: more than %d entries", k->name, CONFIG_LIST_MAX);
            list_release(&fresh);
            return r == -E2BIG ? -EINVAL : r;
        }
        list_release(field);
        *(struct config_list *)field = fresh;
        return 0;
    }
    case T_WORDS:
        return words_set(k, value, field, why, why_size);
    case T_HOSTS: {
        struct config_hosts fresh = {0};
        char reason[512] = "";

        r = hosts_parse(value, &fresh, reason, sizeof(reason));
        if (r < 0) {
            hosts_release(&fresh);
            if (r == -ENOMEM)
                return r;
            snprintf(why, why_size, "%s: %s", k->name, reason);
            return -EINVAL;
        }
        hosts_release(field);
        *(struct config_hosts *)field = fresh;
        return 0;
    }
    }
    return -EINVAL;
}

static const struct key *
key_find(const char *name)
{
    for (size_t i = 0; i < config_n_keys; i++)
        if (strcasecmp(config_keys[i].name, name) == 0)
            return &config_keys[i];
    return NULL;
}

/* The first entry of a systemd colon-separated directory list. */
static void
first_dir(const char *list, char *buf, size_t size)
{
    size_t len = strcspn(list, ":");

    if (len >= size)
        len = size - 1;
    memcpy(buf, list, len);
    buf[len] = '\0';
}

static int
computed_default(struct config *cfg, const struct key *k, const struct config_paths *paths)
{
    char buf[1024], dir[900];
    const char *env;

    if (k->offset == offsetof(struct config, socket)) {
        if (paths && paths->runtime_dir)
            snprintf(dir, sizeof(dir), "%s", paths->runtime_dir);
        else if ((env = getenv("RUNTIME_DIRECTORY")) != NULL && *env == '/')
            first_dir(env, dir, sizeof(dir));
        else if (buildtree_dir() != NULL) /* make run: the build tree's own */
            snprintf(dir, sizeof(dir), "%s", buildtree_dir());
        else
            snprintf(dir, sizeof(dir), "/run/slop-milter");
        snprintf(buf, sizeof(buf), "local:%s/slop-milter.sock", dir);
        if (!config_socket_valid(buf)) /* a path too long for sun_path */
            snprintf(buf, sizeof(buf), "local:/tmp/slop-milter.sock");
        return replace_string(&cfg->socket, buf);
    }
    if (k->offset == offsetof(struct config, rules_dir))
        return replace_string(&cfg->rules_dir, paths && paths->rules_dir ? paths->rules_dir
                                                                         : SLOP_DEFAULT_RULES_DIR);
    if (k->offset == offsetof(struct config, state_dir)) {
        if (paths && paths->state_dir)
            snprintf(dir, sizeof(dir), "%s", paths->state_dir);
        else if ((env = getenv("STATE_DIRECTORY")) != NULL && *env == '/')
            first_dir(env, dir, sizeof(dir));
        else if (buildtree_dir() != NULL) /* whoever runs it: never the system's */
            snprintf(dir, sizeof(dir), "%s/var/state", buildtree_dir());
        else
            snprintf(dir, sizeof(dir), "/var/lib/slop-milter");
        return replace_string(&cfg->state_dir, dir);
    }
    if (k->offset == offsetof(struct config, reply_from)) {
        char host[256] = "localhost";

        if (paths && paths->hostname)
            snprintf(host, sizeof(host), "%s", paths->hostname);
        else if (gethostname(host, sizeof(host)) != 0 || host[0] == '\0')
            snprintf(host, sizeof(host), "localhost");
        host[sizeof(host) - 1] = '\0';
        snprintf(buf, sizeof(buf), "slop-milter <postmaster@%s>", host);
        return replace_string(&cfg->reply_from, buf);
    }
    /* Runs after every key was read, so Project is known. */
    if (k->offset == offsetof(struct config, doc_base))
        return replace_string(&cfg->doc_base,
                              cfg->project != NULL && strcmp(cfg->project, "kernel") == 0
                                  ? "https://docs.kernel.org/"
                                  : "");
    return -EINVAL;
}

/* A profile name is matched against the rule files' profile lines. */
static int
project_check(const struct config *cfg, const char *name, const unsigned *seen,
              struct config_error *err)
{
    const char *p = cfg->project != NULL ? cfg->project : "";

    if (strspn(p, "abcdefghijklmnopqrstuvwxyz0123456789-_") == strlen(p) && strlen(p) <= 63)
        return 0;
    err_set(err, "%s:%u: Project: bad name '%.64s' (a-z, 0-9, '-' and '_')", name,
            seen[key_find("Project") - config_keys], p);
    return -EINVAL;
}

/* Enabled thresholds must rise with the severity of their action. */
static int
thresholds_check(const struct config *cfg, const char *name, const unsigned *seen,
                 struct config_error *err)
{
    static const char *const names[] = {"TagThreshold", "ReplyThreshold", "QuarantineThreshold",
                                        "RejectThreshold"};
    const double v[] = {cfg->tag_threshold, cfg->reply_threshold, cfg->quarantine_threshold,
                        cfg->reject_threshold};

    for (int i = 1; i < 4; i++) {
        if (v[i] <= 0)
            continue;
        for (int j = 0; j < i; j++) {
            if (v[j] > 0 && v[i] < v[j]) {
                const struct key *k = key_find(names[i]);
                unsigned line = seen[k - config_keys];

                err_set(err,
                        "%s:%u: %s (%g) is below %s (%g); enabled thresholds must rise "
                        "with severity",
                        name, line, names[i], v[i], names[j], v[j]);
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

int
config_parse(const char *name, const char *text, size_t len, const struct config_paths *paths,
             struct config **ret, struct config_error *err)
{
    unsigned seen[CONFIG_KEYS_MAX] = {0};
    struct config *cfg;
    const char *p = text, *end = text + len;
    unsigned lineno = 0;
    char why[640];
    int r = 0;

    cfg = calloc(1, sizeof(*cfg));
    if (cfg == NULL)
        return -ENOMEM;

    for (size_t i = 0; i < config_n_keys; i++) {
        if (config_keys[i].def == NULL)
            continue;
        r = key_set(cfg, &config_keys[i], config_keys[i].def, why, sizeof(why));
        if (r < 0) {
            /* The table itself is wrong: a build bug, but say where. */
            err_set(err, "built-in default: %s", why);
            goto out;
        }
    }

    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t ll = nl ? (size_t)(nl - p) : (size_t)(end - p);
        char line[CONFIG_LINE_MAX];
        char *s, *key_end, *value;
        const struct key *k;

        lineno++;
        if (ll >= sizeof(line)) {
            err_set(err, "%s:%u: line too long (more than %d bytes)", name, lineno,
                    CONFIG_LINE_MAX - 1);
            r = -EINVAL;
            goto out;
        }
        memcpy(line, p, ll);
        line[ll] = '\0';
        p += ll + (nl ? 1 : 0);
        if (memchr(line, '\0', ll) != NULL) {
            err_set(err, "%s:%u: NUL byte in line", name, lineno);
            r = -EINVAL;
            goto out;
        }

        s = trim(line);
        if (*s == '\0' || *s == '#')
            continue;
        key_end = s + strcspn(s, " \t");
        value = *key_end ? key_end + 1 : key_end;
        *key_end = '\0';
        value = trim(value);

        k = key_find(s);
        if (k == NULL) {
            err_set(err, "%s:%u: unknown key '%s'", name, lineno, s);
            r = -EINVAL;
            goto out;
        }
        if (seen[k - config_keys] != 0) {
            err_set(err, "%s:%u: duplicate key '%s' (first set at line %u)", name, lineno, k->name,
                    seen[k - config_keys]);
            r = -EINVAL;
            goto out;
        }
        if (*value == '\0') {
            err_set(err, "%s:%u: missing value for '%s'", name, lineno, k->name);
            r = -EINVAL;
            goto out;
        }
        /* Quotes allow an empty value ("") or blanks at either end. */
        {
            size_t vl = strlen(value);

            if (vl >= 2 && value[0] == '"' && value[vl - 1] == '"') {
                value[vl - 1] = '\0';
                value++;
            }
        }
        seen[k - config_keys] = lineno;
        r = key_set(cfg, k, value, why, sizeof(why));
        if (r < 0) {
            if (r != -ENOMEM)
                err_set(err, "%s:%u: %s", name, lineno, why);
            else
                err_set(err, "%s:%u: out of memory", name, lineno);
            goto out;
        }
    }

    for (size_t i = 0; i < config_n_keys; i++) {
        if (config_keys[i].def != NULL || seen[i] != 0)
            continue;
        r = computed_default(cfg, &config_keys[i], paths);
        if (r < 0) {
            err_set(err, "%s: cannot compute the default of %s", name, config_keys[i].name);
            goto out;
        }
    }
    r = thresholds_check(cfg, name, seen, err);
    if (r >= 0)
        r = project_check(cfg, name, seen, err);
    if (r < 0)
        goto out;

    *ret = cfg;
    cfg = NULL;
out:
    config_free(cfg);
    return r;
}

int
config_load(const char *path, const struct config_paths *paths, struct config **ret,
            struct config_error *err)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = NULL;
    int r;

    if (path == NULL)
        return config_parse("(built-in)", "", 0, paths, ret, err);

    f = fopen(path, "re");
    if (f == NULL) {
        char eb[128];

        r = -errno;
        err_set(err, "%s: cannot open: %s", path, errstr(-r, eb, sizeof(eb)));
        return r;
    }
    text = malloc(CONFIG_FILE_MAX + 1);
    if (text == NULL) {
        r = -ENOMEM;
        goto out;
    }
    len = fread(text, 1, CONFIG_FILE_MAX + 1, f);
    if (ferror(f)) {
        err_set(err, "%s: read error", path);
        r = -EIO;
        goto out;
    }
    if (len > CONFIG_FILE_MAX) {
        err_set(err, "%s: file larger than %u bytes", path, CONFIG_FILE_MAX);
        r = -EFBIG;
        goto out;
    }
    r = config_parse(path, text, len, paths, ret, err);
out:
    free(text);
    if (f)
        fclose(f);
    return r;
}
