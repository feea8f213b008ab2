/*
 * config_internal.h - what the files of the configuration share and
 * nothing else sees: the key table's row type and the helpers one file
 * defines and another calls.
 *
 *   config_keys.c   the key table, its words and how keys are described
 *   config_type.c   the value types: each one's setter, writer and release
 *   config_default.c  the defaults computed from where the program runs
 *   config.c        the parser: a file's lines into a struct config
 *   config_value.c  the syntax of one value (sizes, sockets, lists, hosts)
 *   config_match.c  the address and host list matchers
 *   config_write.c  the man page's key list, the sample, the effective values
 *   config_check.c  what -n checks beyond the file
 *   config_redis.c  the settings of StateBackend redis both programs read
 */
#ifndef SLOP_CONFIG_INTERNAL_H
#define SLOP_CONFIG_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "config.h"

/* A value's type: which row of config_types[] sets, writes and releases
 * the field of a key row. */
enum key_type {
    T_STRING,
    T_PATH,
    T_BOOL,
    T_UINT,
    T_OCTAL,
    T_NUMBER,
    T_SIZE,
    T_DURATION,
    T_SOCKET,
    T_ENUM,
    T_ADDRS,
    T_HOSTS,
    T_HOSTPORT,
    T_USER,
    T_WORDS, /* a list of T_ENUM words; the field holds their values OR'd */
};

enum key_flags {
    K_EMPTY_OK = 1 << 0, /* an empty value is allowed (means "off" or "none") */
    K_TCP_ONLY = 1 << 1, /* T_SOCKET: inet: or inet6: only */
};

struct key {
    const char *name;
    enum key_type type;
    unsigned flags;
    const char *def;          /* default, parsed like a file value; NULL: computed */
    const char *def_doc;      /* how a computed default is chosen, for the man page */
    double min, max;          /* T_UINT, T_OCTAL, T_NUMBER, T_SIZE, T_DURATION */
    const char *const *words; /* T_ENUM, NULL-terminated */
    const int *values;        /* T_ENUM: value stored for each word */
    size_t offset;
    const char *doc;
};

/* config_type.c */
struct config_type {
    const char *name; /* in the man page and the sample: "integer" */
    /* Set the field from the text of a value. On a bad value returns
     * -EINVAL and writes the reason (without file and line) to why. */
    int (*set)(const struct key *k, void *field, const char *value, char *why, size_t why_size);
    /* The field as --dump-config writes it, read back the same. */
    void (*write)(const struct key *k, const void *field, FILE *f);
    void (*release)(void *field); /* NULL: the field owns nothing */
    bool empty_ok;                /* an empty value is an empty list */
};
extern const struct config_type config_types[];
/* *field becomes a copy of value; the old string is freed. */
int config_type_string_replace(char **field, const char *value);

/* config_default.c */
/* Set k's field (a row with def NULL) to its computed default. 0, -ENOMEM,
 * or -EINVAL when k has no computed default. */
int config_default_compute(struct config *cfg, const struct key *k,
                           const struct config_paths *paths);

/* config_keys.c */
#define CONFIG_KEYS_MAX 128 /* rows config_keys[] may have: config_parse() counts each */
extern const struct key config_keys[];
extern const size_t config_n_keys;
/* What the sample file shows for a key whose default is computed. */
const char *config_keys_sample_value(const struct key *k);
/* "a, b or c" into buf. */
void config_keys_words_join(const char *const *words, char *buf, size_t size);
void config_keys_fmt_limit(double v, char *buf, size_t size);
void config_keys_fmt_duration(double v, char *buf, size_t size);
void config_keys_fmt_size(double v, char *buf, size_t size);
const char *config_keys_enum_word(const char *const *words, const int *values, int v);

/* config_value.c */
/* An unsigned decimal up to *ret_end, rejecting signs, blanks and overflow. */
int config_value_u64(const char *s, const char **ret_end, uint64_t *ret);
bool config_value_hostport_valid(const char *s);
bool config_value_user_valid(const char *s);
int config_value_split(const char *s, int (*fn)(void *ctx, const char *item, size_t len),
                       void *ctx);
struct config_value_list_ctx {
    struct config_list *list;
    const char *bad; /* first bad item, for the message */
    size_t bad_len;
};
/* config_value_split() callback: one address or "@domain" into ctx's list. */
int config_value_list_add(void *ctx, const char *item, size_t len);
int config_value_hosts_parse(const char *value, struct config_hosts *hosts, char *why,
                             size_t why_size);
void config_value_list_release(struct config_list *l);
void config_value_hosts_release(struct config_hosts *h);

#endif
