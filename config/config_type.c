/*
 * config_type.c - the value types of the key table: for each enum
 * key_type one row of config_types[] with its name, its setter (text into
 * the struct config field a key row points at, with the reason when the
 * text is bad), how the field is written back (--dump-config) and how it
 * is released. A key names its type; adding a key is adding a row to
 * config_keys[], adding a type a row here.
 *
 * A setter leaves the field as it was when it fails, and frees what it
 * replaces when it succeeds. Pure functions over caller-owned data.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "config_internal.h"

int
config_type_string_replace(char **field, const char *value)
{
    char *d = strdup(value);

    if (d == NULL)
        return -ENOMEM;
    free(*field);
    *field = d;
    return 0;
}

static int
set_string(const struct key *k, void *field, const char *value, char *why, size_t why_size)
{
    (void)k;
    (void)why;
    (void)why_size;
    return config_type_string_replace(field, value);
}

static int
set_path(const struct key *k, void *field, const char *value, char *why, size_t why_size)
{
    if (*value != '\0' && value[0] != '/') {
        snprintf(why, why_size, "%s: '%s' is not an absolute path", k->name, value);
        return -EINVAL;
    }
    return config_type_string_replace(field, value);
}

static int
set_socket(const struct key *k, void *field, const char *value, char *why, size_t why_size)
{
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
    return config_type_string_replace(field, value);
}

static int
set_hostport(const struct key *k, void *field, const char *value, char *why, size_t why_size)
{
    if (!config_value_hostport_valid(value)) {
        snprintf(why, why_size, "%s: bad address '%s' (use host:port or [IPv6]:port)", k->name,
                 value);
        return -EINVAL;
    }
    return config_type_string_replace(field, value);
}

static int
set_user(const struct key *k, void *field, const char *value, char *why, size_t why_size)
{
    if (*value != '\0' && !config_value_user_valid(value)) {
        snprintf(why, why_size, "%s: bad user '%s' (use user or user:group)", k->name, value);
        return -EINVAL;
    }
    return config_type_string_replace(field, value);
}

static int
set_bool(const struct key *k, void *field, const char *value, char *why, size_t why_size)
{
    static const char *const yes[] = {"yes", "true", "1", "on"};
    static const char *const no[] = {"no", "false", "0", "off"};

    for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
        if (strcasecmp(value, yes[i]) == 0) {
            *(bool *)field = true;
            return 0;
        }
        if (strcasecmp(value, no[i]) == 0) {
            *(bool *)field = false;
            return 0;
        }
    }
    snprintf(why, why_size, "%s: bad boolean '%s' (use yes or no)", k->name, value);
    return -EINVAL;
}

/* "Key: VALUE is out of range (LO to HI)", the row's limits written by fmt
 * (config_keys_fmt_limit, config_keys_fmt_size or config_keys_fmt_duration). */
static int
out_of_range(const struct key *k, const char *value, void (*fmt)(double, char *, size_t), char *why,
             size_t why_size)
{
    char lo[32], hi[32];

    fmt(k->min, lo, sizeof(lo));
    fmt(k->max, hi, sizeof(hi));
    snprintf(why, why_size, "%s: %s is out of range (%s to %s)", k->name, value, lo, hi);
    return -EINVAL;
}

static int
set_uint(const struct key *k, void *field, const char *value, char *why, size_t why_size)
{
    const char *end;
    uint64_t v;

    if (config_value_u64(value, &end, &v) < 0 || *end != '\0') {
        snprintf(why, why_size, "%s: bad number '%s'", k->name, value);
        return -EINVAL;
    }
    if ((double)v < k->min || (double)v > k->max)
        return out_of_range(k, value, config_keys_fmt_limit, why, why_size);
    *(unsigned *)field = (unsigned)v;
    return 0;
}

static int
set_octal(const struct key *k, void *field, const char *value, char *why, size_t why_size)
{
    unsigned long v;

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

static int
set_number(const struct key *k, void *field, const char *value, char *why, size_t why_size)
{
    char *end;
    double v;

    errno = 0;
    v = strtod(value, &end);
    if (errno != 0 || *end != '\0' || end == value || !isfinite(v) ||
        !(isdigit((unsigned char)value[0]) || value[0] == '-' || value[0] == '.')) {
        snprintf(why, why_size, "%s: bad number '%s'", k->name, value);
        return -EINVAL;
    }
    if (v < k->min || v > k->max)
        return out_of_range(k, value, config_keys_fmt_limit, why, why_size);
    *(double *)field = v;
    return 0;
}

static int
set_size(const struct key *k, void *field, const char *value, char *why, size_t why_size)
{
    uint64_t v;

    if (config_parse_size(value, &v) < 0) {
        snprintf(why, why_size,
                 "%s: bad size '%s' (use a number with an optional K, M or G suffix)", k->name,
                 value);
        return -EINVAL;
    }
    if ((double)v < k->min || (double)v > k->max)
        return out_of_range(k, value, config_keys_fmt_size, why, why_size);
    *(uint64_t *)field = v;
    return 0;
}

static int
set_duration(const struct key *k, void *field, const char *value, char *why, size_t why_size)
{
    uint32_t v = 0;

    if (config_parse_duration(value, &v) < 0) {
        snprintf(why, why_size,
                 "%s: bad duration '%s' (use a number with an optional s, m, h or d suffix)",
                 k->name, value);
        return -EINVAL;
    }
    if ((double)v < k->min || (double)v > k->max)
        return out_of_range(k, value, config_keys_fmt_duration, why, why_size);
    *(uint32_t *)field = v;
    return 0;
}

/* "Key: bad value 'VALUE' (use a, b or c)"; len bytes of value, at most 64
 * when capped (a word list item may be long). */
static int
bad_word(const struct key *k, const char *value, int len, char *why, size_t why_size)
{
    char words[128];

    config_keys_words_join(k->words, words, sizeof(words));
    snprintf(why, why_size, "%s: bad value '%.*s' (use %s)", k->name, len, value, words);
    return -EINVAL;
}

static int
set_enum(const struct key *k, void *field, const char *value, char *why, size_t why_size)
{
    for (size_t i = 0; k->words[i]; i++) {
        if (strcasecmp(value, k->words[i]) == 0) {
            *(int *)field = k->values[i];
            return 0;
        }
    }
    return bad_word(k, value, (int)strlen(value), why, why_size);
}

/* The index in k->words of the len bytes at p, or -1. */
static int
word_index(const struct key *k, const char *p, size_t len)
{
    for (int i = 0; k->words[i]; i++)
        if (strlen(k->words[i]) == len && strncasecmp(p, k->words[i], len) == 0)
            return i;
    return -1;
}

/* Blank- or comma-separated words of k->words, their values OR'd into the
 * field; at least one. */
static int
set_words(const struct key *k, void *field, const char *value, char *why, size_t why_size)
{
    unsigned v = 0;
    size_t n = 0;

    for (const char *p = value; *p != '\0';) {
        size_t len = strcspn(p, " \t,");
        int i;

        if (len == 0) {
            p++;
            continue;
        }
        i = word_index(k, p, len);
        if (i < 0)
            return bad_word(k, p, (int)(len > 64 ? 64 : len), why, why_size);
        v |= (unsigned)k->values[i];
        n++;
        p += len;
    }
    if (n == 0) {
        snprintf(why, why_size, "%s: empty value", k->name);
        return -EINVAL;
    }
    *(unsigned *)field = v;
    return 0;
}

static int
set_addrs(const struct key *k, void *field, const char *value, char *why, size_t why_size)
{
    struct config_list fresh = {0};
    struct config_value_list_ctx lc = {.list = &fresh};
    int r = config_value_split(value, config_value_list_add, &lc);

    if (r < 0) {
        if (r == -EINVAL)
            snprintf(why, why_size, "%s: bad address '%.*s' (use user@domain or @domain)", k->name,
                     (int)(lc.bad_len > 200 ? 200 : lc.bad_len), lc.bad);
        else if (r == -E2BIG)
            snprintf(why, why_size, "%s: more than %d entries", k->name, CONFIG_LIST_MAX);
        config_value_list_release(&fresh);
        return r == -E2BIG ? -EINVAL : r;
    }
    config_value_list_release(field);
    *(struct config_list *)field = fresh;
    return 0;
}

static int
set_hosts(const struct key *k, void *field, const char *value, char *why, size_t why_size)
{
    struct config_hosts fresh = {0};
    char reason[512] = "";
    int r = config_value_hosts_parse(value, &fresh, reason, sizeof(reason));

    if (r < 0) {
        config_value_hosts_release(&fresh);
        if (r == -ENOMEM)
            return r;
        snprintf(why, why_size, "%s: %s", k->name, reason);
        return -EINVAL;
    }
    config_value_hosts_release(field);
    *(struct config_hosts *)field = fresh;
    return 0;
}

static void
write_string(const struct key *k, const void *field, FILE *f)
{
    const char *s = *(char *const *)field;

    (void)k;
    if (*s == '\0' || s[0] == ' ' || s[strlen(s) - 1] == ' ')
        fprintf(f, "\"%s\"", s);
    else
        fputs(s, f);
}

static void
write_bool(const struct key *k, const void *field, FILE *f)
{
    (void)k;
    fputs(*(const bool *)field ? "yes" : "no", f);
}

static void
write_uint(const struct key *k, const void *field, FILE *f)
{
    (void)k;
    fprintf(f, "%u", *(const unsigned *)field);
}

static void
write_octal(const struct key *k, const void *field, FILE *f)
{
    (void)k;
    fprintf(f, "%04o", *(const unsigned *)field);
}

static void
write_number(const struct key *k, const void *field, FILE *f)
{
    (void)k;
    fprintf(f, "%g", *(const double *)field);
}

static void
write_size(const struct key *k, const void *field, FILE *f)
{
    (void)k;
    fprintf(f, "%llu", (unsigned long long)*(const uint64_t *)field);
}

static void
write_duration(const struct key *k, const void *field, FILE *f)
{
    (void)k;
    fprintf(f, "%lus", (unsigned long)*(const uint32_t *)field);
}

static void
write_enum(const struct key *k, const void *field, FILE *f)
{
    fputs(config_keys_enum_word(k->words, k->values, *(const int *)field), f);
}

static void
write_words(const struct key *k, const void *field, FILE *f)
{
    for (size_t w = 0, n = 0; k->words[w]; w++)
        if (*(const unsigned *)field & (unsigned)k->values[w])
            fprintf(f, "%s%s", n++ ? " " : "", k->words[w]);
}

static void
write_addrs(const struct key *k, const void *field, FILE *f)
{
    const struct config_list *l = field;

    (void)k;
    for (size_t i = 0; i < l->n; i++)
        fprintf(f, "%s%s", i ? "," : "", l->items[i]);
    if (l->n == 0)
        fputs("\"\"", f);
}

static void
write_hosts(const struct key *k, const void *field, FILE *f)
{
    const struct config_hosts *h = field;
    size_t n = 0;

    (void)k;
    for (size_t i = 0; i < h->n_nets; i++) {
        char buf[INET6_ADDRSTRLEN];

        if (inet_ntop(h->nets[i].family, h->nets[i].addr, buf, sizeof(buf)) != NULL)
            fprintf(f, "%s%s/%u", n++ ? "," : "", buf, h->nets[i].prefix);
    }
    for (size_t i = 0; i < h->n_names; i++)
        fprintf(f, "%s%s", n++ ? "," : "", h->names[i]);
    if (h->n_nets + h->n_names == 0)
        fputs("\"\"", f);
}

static void
release_string(void *field)
{
    free(*(char **)field);
}

static void
release_addrs(void *field)
{
    config_value_list_release(field);
}

static void
release_hosts(void *field)
{
    config_value_hosts_release(field);
}

#define STRING_LIKE .write = write_string, .release = release_string

const struct config_type config_types[] = {
    [T_STRING] = {"string", set_string, STRING_LIKE},
    [T_PATH] = {"path", set_path, STRING_LIKE},
    [T_BOOL] = {"yes|no", set_bool, write_bool},
    [T_UINT] = {"integer", set_uint, write_uint},
    [T_OCTAL] = {"octal", set_octal, write_octal},
    [T_NUMBER] = {"number", set_number, write_number},
    [T_SIZE] = {"size", set_size, write_size},
    [T_DURATION] = {"duration", set_duration, write_duration},
    [T_SOCKET] = {"socket", set_socket, STRING_LIKE},
    [T_ENUM] = {"word", set_enum, write_enum},
    [T_ADDRS] = {"address list", set_addrs, write_addrs, release_addrs, .empty_ok = true},
    [T_HOSTS] = {"host list", set_hosts, write_hosts, release_hosts, .empty_ok = true},
    [T_HOSTPORT] = {"host:port", set_hostport, STRING_LIKE},
    [T_USER] = {"user[:group]", set_user, STRING_LIKE},
    [T_WORDS] = {"word list", set_words, write_words},
};
_Static_assert(sizeof(config_types) / sizeof(config_types[0]) == T_WORDS + 1,
               "a row of config_types[] for each enum key_type");
