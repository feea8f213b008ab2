/*
 * config_value.c - the syntax of one value: whole numbers with a unit
 * (sizes, durations), sockets, host:port, user[:group], address lists and
 * host lists (inline or a file of them, read here).
 *
 * Every list is capped at CONFIG_LIST_MAX entries and a host file at
 * CONFIG_MAX_HOSTS_FILE lines. Thread-safe: no shared state.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "config_internal.h"

/* GNU strerror_r may return a static string instead of filling buf. */
static const char *
errstr(int e, char *buf, size_t size)
{
    return strerror_r(e, buf, size);
}

void
config_value_list_release(struct config_list *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->items[i]);
    free(l->items);
    l->items = NULL;
    l->n = 0;
}

void
config_value_hosts_release(struct config_hosts *h)
{
    for (size_t i = 0; i < h->n_names; i++)
        free(h->names[i]);
    free(h->names);
    free(h->nets);
    memset(h, 0, sizeof(*h));
}

/* Parse an unsigned decimal, rejecting signs, blanks and overflow. */
int
config_value_u64(const char *s, const char **ret_end, uint64_t *ret)
{
    uint64_t v = 0;
    const char *p = s;

    if (!isdigit((unsigned char)*p))
        return -EINVAL;
    for (; isdigit((unsigned char)*p); p++) {
        unsigned d = (unsigned)(*p - '0');
        if (v > (UINT64_MAX - d) / 10)
            return -ERANGE;
        v = v * 10 + d;
    }
    *ret_end = p;
    *ret = v;
    return 0;
}

struct unit {
    char suffix;
    uint64_t mult;
};

/* A whole number with at most one suffix from units (none: mult 1), no
 * larger than max once multiplied. Sizes and durations differ only in
 * their table. */
static int
parse_scaled(const char *s, const struct unit *units, uint64_t max, uint64_t *ret)
{
    const char *end;
    uint64_t v, mult = 1;

    if (config_value_u64(s, &end, &v) < 0)
        return -EINVAL;
    if (*end != '\0') {
        const struct unit *u = units;

        while (u->suffix != '\0' && u->suffix != *end)
            u++;
        if (u->suffix == '\0')
            return -EINVAL;
        mult = u->mult;
        end++;
    }
    if (*end != '\0' || v > max / mult)
        return -EINVAL;
    *ret = v * mult;
    return 0;
}

int
config_parse_size(const char *s, uint64_t *ret)
{
    static const struct unit units[] = {
        {'k', 1024},
        {'K', 1024},
        {'m', 1024ull * 1024},
        {'M', 1024ull * 1024},
        {'g', 1ull << 30},
        {'G', 1ull << 30},
        {'\0', 0},
    };

    return parse_scaled(s, units, UINT64_MAX, ret);
}

int
config_parse_duration(const char *s, uint32_t *ret)
{
    static const struct unit units[] = {
        {'s', 1}, {'m', 60}, {'h', 3600}, {'d', 86400}, {'\0', 0},
    };
    uint64_t v = 0;
    int r = parse_scaled(s, units, UINT32_MAX, &v);

    if (r == 0)
        *ret = (uint32_t)v;
    return r;
}

static bool
port_valid(const char *s, size_t len)
{
    unsigned long v = 0;

    if (len == 0 || len > 5)
        return false;
    for (size_t i = 0; i < len; i++) {
        if (!isdigit((unsigned char)s[i]))
            return false;
        v = v * 10 + (unsigned long)(s[i] - '0');
    }
    return v >= 1 && v <= 65535;
}

static bool
hostname_valid(const char *s)
{
    if (*s == '\0' || strlen(s) > 253)
        return false;
    for (const char *p = s; *p; p++)
        if (!isalnum((unsigned char)*p) && *p != '.' && *p != '-' && *p != '_')
            return false;
    return true;
}

bool
config_socket_valid(const char *s)
{
    const char *rest, *at;
    bool v6 = false;

    if (strncmp(s, "local:", 6) == 0 || strncmp(s, "unix:", 5) == 0) {
        rest = strchr(s, ':') + 1;
        return rest[0] == '/' && rest[1] != '\0' && strlen(rest) < 108;
    }
    if (s[0] == '/')
        return s[1] != '\0' && strlen(s) < 108;
    if (strncmp(s, "inet:", 5) == 0)
        rest = s + 5;
    else if (strncmp(s, "inet6:", 6) == 0) {
        rest = s + 6;
        v6 = true;
    } else
        return false;
    at = strchr(rest, '@');
    if (at == NULL)
        return port_valid(rest, strlen(rest));
    if (!port_valid(rest, (size_t)(at - rest)))
        return false;
    if (v6) {
        unsigned char buf[16];
        char host[64];
        const char *h = at + 1;
        size_t hl = strlen(h);

        if (hl >= 2 && h[0] == '[' && h[hl - 1] == ']') {
            h++;
            hl -= 2;
        }
        if (hl == 0 || hl >= sizeof(host))
            return hostname_valid(at + 1);
        memcpy(host, h, hl);
        host[hl] = '\0';
        return inet_pton(AF_INET6, host, buf) == 1 || hostname_valid(host);
    }
    return hostname_valid(at + 1);
}

bool
config_value_hostport_valid(const char *s)
{
    const char *colon;

    if (s[0] == '[') {
        const char *close = strchr(s, ']');
        char host[64];
        unsigned char buf[16];
        size_t hl;

        if (close == NULL || close[1] != ':')
            return false;
        hl = (size_t)(close - s - 1);
        if (hl == 0 || hl >= sizeof(host))
            return false;
        memcpy(host, s + 1, hl);
        host[hl] = '\0';
        return inet_pton(AF_INET6, host, buf) == 1 && port_valid(close + 2, strlen(close + 2));
    }
    colon = strrchr(s, ':');
    if (colon == NULL || colon == s || strchr(s, ':') != colon)
        return false;
    {
        char host[256];
        size_t hl = (size_t)(colon - s);

        if (hl >= sizeof(host))
            return false;
        memcpy(host, s, hl);
        host[hl] = '\0';
        return hostname_valid(host) && port_valid(colon + 1, strlen(colon + 1));
    }
}

bool
config_value_user_valid(const char *s)
{
    size_t colons = 0;

    if (*s == '\0' || *s == ':')
        return false;
    for (const char *p = s; *p; p++) {
        if (*p == ':') {
            if (++colons > 1 || p[1] == '\0')
                return false;
        } else if (!isalnum((unsigned char)*p) && *p != '_' && *p != '-' && *p != '.')
            return false;
    }
    return true;
}

static char *
lower_dup(const char *s, size_t len)
{
    char *d = malloc(len + 1);

    if (d == NULL)
        return NULL;
    for (size_t i = 0; i < len; i++)
        d[i] = (char)tolower((unsigned char)s[i]);
    d[len] = '\0';
    return d;
}

/* Split s on commas and blanks; calls fn for each non-empty item. */
int
config_value_split(const char *s, int (*fn)(void *ctx, const char *item, size_t len), void *ctx)
{
    const char *p = s;

    while (*p) {
        size_t len;
        int r;

        while (*p == ',' || *p == ' ' || *p == '\t')
            p++;
        len = strcspn(p, ", \t");
        if (len == 0)
            break;
        r = fn(ctx, p, len);
        if (r < 0)
            return r;
        p += len;
    }
    return 0;
}

int
config_value_list_add(void *ctx, const char *item, size_t len)
{
    struct config_value_list_ctx *lc = ctx;
    struct config_list *l = lc->list;
    const char *at = memchr(item, '@', len);
    char **items;

    /* "user@domain" or "@domain", one '@', something after it. */
    if (at == NULL || at == item + len - 1 || memchr(at + 1, '@', len - (size_t)(at - item) - 1)) {
        lc->bad = item;
        lc->bad_len = len;
        return -EINVAL;
    }
    if (l->n >= CONFIG_LIST_MAX)
        return -E2BIG;
    items = realloc(l->items, (l->n + 1) * sizeof(*items));
    if (items == NULL)
        return -ENOMEM;
    l->items = items;
    l->items[l->n] = lower_dup(item, len);
    if (l->items[l->n] == NULL)
        return -ENOMEM;
    l->n++;
    return 0;
}

static int
net_parse(const char *s, struct config_net *ret)
{
    char buf[64];
    const char *slash = strchr(s, '/');
    size_t alen = slash ? (size_t)(slash - s) : strlen(s);
    unsigned max;

    if (alen == 0 || alen >= sizeof(buf))
        return -EINVAL;
    memcpy(buf, s, alen);
    buf[alen] = '\0';
    memset(ret, 0, sizeof(*ret));
    if (inet_pton(AF_INET, buf, ret->addr) == 1) {
        ret->family = AF_INET;
        max = 32;
    } else if (inet_pton(AF_INET6, buf, ret->addr) == 1) {
        ret->family = AF_INET6;
        max = 128;
    } else
        return -EINVAL;
    ret->prefix = max;
    if (slash) {
        const char *end;
        uint64_t v;

        if (config_value_u64(slash + 1, &end, &v) < 0 || *end != '\0' || v > max)
            return -EINVAL;
        ret->prefix = (unsigned)v;
    }
    return 0;
}

struct hosts_ctx {
    struct config_hosts *hosts;
    char bad[128];
};

static int
hosts_add(void *ctx, const char *item, size_t len)
{
    struct hosts_ctx *hc = ctx;
    struct config_hosts *h = hc->hosts;
    char buf[256];
    struct config_net net;

    if (len >= sizeof(buf)) {
        snprintf(hc->bad, sizeof(hc->bad), "%.64s...", item);
        return -EINVAL;
    }
    memcpy(buf, item, len);
    buf[len] = '\0';
    if (h->n_nets + h->n_names >= CONFIG_LIST_MAX)
        return -E2BIG;
    if (net_parse(buf, &net) == 0) {
        struct config_net *nets = realloc(h->nets, (h->n_nets + 1) * sizeof(*nets));

        if (nets == NULL)
            return -ENOMEM;
        h->nets = nets;
        h->nets[h->n_nets++] = net;
        return 0;
    }
    if (strchr(buf, '/') != NULL || strchr(buf, ':') != NULL ||
        !hostname_valid(buf[0] == '.' ? buf + 1 : buf)) {
        snprintf(hc->bad, sizeof(hc->bad), "%.100s", buf);
        return -EINVAL;
    }
    {
        char **names = realloc(h->names, (h->n_names + 1) * sizeof(*names));

        if (names == NULL)
            return -ENOMEM;
        h->names = names;
        h->names[h->n_names] = lower_dup(buf, len);
        if (h->names[h->n_names] == NULL)
            return -ENOMEM;
        h->n_names++;
    }
    return 0;
}

/* A host list is inline, or the absolute path of a file of entries. */
int
config_value_hosts_parse(const char *value, struct config_hosts *hosts, char *why, size_t why_size)
{
    struct hosts_ctx hc = {.hosts = hosts};
    char line[CONFIG_LINE_MAX];
    unsigned lineno = 0;
    FILE *f;
    int r = 0;

    if (value[0] != '/') {
        r = config_value_split(value, hosts_add, &hc);
        if (r == -EINVAL)
            snprintf(why, why_size, "bad host or network '%s'", hc.bad);
        else if (r == -E2BIG)
            snprintf(why, why_size, "more than %d entries", CONFIG_LIST_MAX);
        return r;
    }
    f = fopen(value, "re");
    if (f == NULL) {
        char eb[128];
        int e = errno;

        snprintf(why, why_size, "cannot open '%s': %s", value, errstr(e, eb, sizeof(eb)));
        return -e;
    }
    while (fgets(line, sizeof(line), f) != NULL && lineno < CONFIG_MAX_HOSTS_FILE) {
        char *hash;

        lineno++;
        hash = strchr(line, '#');
        if (hash)
            *hash = '\0';
        line[strcspn(line, "\r\n")] = '\0';
        r = config_value_split(line, hosts_add, &hc);
        if (r < 0) {
            if (r == -EINVAL)
                snprintf(why, why_size, "%s:%u: bad host or network '%s'", value, lineno, hc.bad);
            else if (r == -E2BIG)
                snprintf(why, why_size, "%s: more than %d entries", value, CONFIG_LIST_MAX);
            break;
        }
    }
    fclose(f);
    return r;
}
