/*
 * config.h - slop-milter's configuration: one table of keys, a parser for
 * `Key value` files like opendkim.conf, and the matchers for address and
 * host lists.
 *
 * The table in config_keys.c is the single source: parsing, range checks,
 * built-in defaults, the man page's key list (config_write_man()) and the
 * sample file (config_write_sample()) all come from it.
 *
 * A struct config is immutable once config_load() returns; it belongs to
 * one snapshot and is shared read-only by every connection thread.
 */
#ifndef SLOP_CONFIG_H
#define SLOP_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

struct sockaddr;
struct state_redis_options;

#define CONFIG_LINE_MAX 4096        /* longest line in a configuration file */
#define CONFIG_LIST_MAX 1024        /* entries in one address or host list */
#define CONFIG_MAX_HOSTS_FILE 65536 /* lines read from a PeerList file */

enum config_mode {
    CONFIG_MODE_ENFORCE = 0,
    CONFIG_MODE_MONITOR,
};

/* What to do with a message the classifier could not judge. */
enum config_failure {
    CONFIG_FAIL_ACCEPT = 0,
    CONFIG_FAIL_TEMPFAIL,
    CONFIG_FAIL_REJECT,
    CONFIG_FAIL_QUARANTINE,
    CONFIG_FAIL_SCAN, /* OnOversize only: scan the first MaxMessageSize bytes */
};

/* What to do when the state's data file is damaged at start-up. */
enum config_state_error {
    CONFIG_STATE_REFUSE = 0,
    CONFIG_STATE_RUN_WITHOUT,
    CONFIG_STATE_TEMPFAIL, /* run, answering every message 4xx */
    CONFIG_STATE_ACCEPT,   /* run, accepting every message unscanned */
};

/* Where the shared, per-message state lives (StateBackend). */
enum config_state_backend {
    CONFIG_BACKEND_LMDB = 0,
    CONFIG_BACKEND_REDIS,
};

enum config_transport {
    CONFIG_TRANSPORT_SENDMAIL = 0,
    CONFIG_TRANSPORT_SMTP,
};

/* ReplyRequires: the proofs of the sender accepted (reply_verify.h's
 * REPLY_REQUIRE_* have the same values). */
enum config_require {
    CONFIG_REQUIRE_ANY = 1 << 0,
    CONFIG_REQUIRE_AUTHENTICATED = 1 << 1,
    CONFIG_REQUIRE_DMARC_PASS = 1 << 2,
    CONFIG_REQUIRE_SPF_PASS = 1 << 3,
    CONFIG_REQUIRE_DKIM_ALIGNED = 1 << 4,
};

/* Lower-case addresses ("user@example.org") and domains ("@example.org"). */
struct config_list {
    char **items;
    size_t n;
};

struct config_net {
    int family; /* AF_INET or AF_INET6 */
    unsigned char addr[16];
    unsigned prefix;
};

/* Networks, exact host names, and ".domain" suffixes (lower case). */
struct config_hosts {
    struct config_net *nets;
    size_t n_nets;
    char **names;
    size_t n_names;
};

struct config {
    char *socket;
    unsigned socket_mode;
    char *metrics_socket; /* "": no metrics endpoint */
    char *user_id;
    char *pid_file;
    unsigned umask;
    bool syslog;
    int syslog_facility; /* LOG_MAIL, ... */
    char *rules_dir;
    char *state_dir;
    unsigned max_connections;     /* 0: from the task limit (gate_auto_cap) */
    uint32_t read_timeout;        /* seconds */
    uint32_t state_sync_interval; /* seconds; 0: LMDB syncs every commit */
    int on_state_error;           /* enum config_state_error */
    int state_backend;            /* enum config_state_backend */
    char *redis_server;           /* Socket notation */
    char *redis_user;             /* "": none */
    char *redis_password_file;    /* "": no AUTH */
    char *redis_prefix;
    unsigned redis_timeout;    /* milliseconds */
    int on_redis_error;        /* CONFIG_FAIL_ACCEPT or CONFIG_FAIL_TEMPFAIL */
    uint32_t duplicate_window; /* seconds */
    bool trust_maintainers;
    uint32_t learn_minimum;    /* messages per class before LEARNED_* speak */
    bool auto_learn;           /* learn scanned mail by its score (off) */
    double auto_learn_slop;    /* score (learned findings left out) learned as slop */
    double auto_learn_genuine; /* score at or below which it is learned as genuine */
    bool record_state;
    struct config_list recipients;
    struct config_hosts peer_list;
    struct config_hosts internal_hosts;
    bool skip_authenticated;
    struct config_list allow_senders;
    double tag_threshold;
    double reply_threshold;
    double quarantine_threshold;
    double reject_threshold;
    int mode; /* enum config_mode */
    char *subject_tag;
    char *project;
    char *doc_base;                       /* "": the profile has no document base */
    struct config_list report_recipients; /* patterns, lower case */
    bool reply_enable;
    unsigned reply_requires;  /* enum config_require bits */
    char *authserv_id;        /* "": the MTA's {j} */
    char *public_suffix_list; /* "": libpsl's and the packaged list only */
    char *reply_from;
    char *reply_template;
    char *reply_key_file;
    uint32_t reply_interval; /* seconds */
    unsigned reply_hourly_cap;
    int reply_transport; /* enum config_transport */
    char *sendmail_path;
    char *smtp_server;
    int on_internal_error; /* enum config_failure */
    int on_timeout;
    int on_oversize;
    uint64_t max_message_size; /* bytes */
    int on_busy;               /* enum config_failure, never CONFIG_FAIL_SCAN */
    uint64_t max_memory;       /* bytes; 0: sized from the cgroup (membudget.h) */
    bool trim_memory;
    unsigned scan_timeout; /* milliseconds */
    unsigned max_mime_depth;
    unsigned max_mime_parts;
    uint64_t max_part_size; /* bytes */
    unsigned max_headers;
    uint64_t max_header_size; /* bytes */
    unsigned max_lines;
    unsigned max_line_length; /* bytes */
    unsigned max_patch_files;
    unsigned max_patch_hunks;
    unsigned regex_match_limit;
    unsigned regex_depth_limit;
    char *reject_text;
};

/* The first problem found: "file:line: reason" (or "file: reason"). */
struct config_error {
    char text[768];
};

/*
 * Directories the computed defaults come from; NULL fields use the
 * environment ($RUNTIME_DIRECTORY, $STATE_DIRECTORY) and the compiled-in
 * paths. Tests set them to stay independent of the machine.
 */
struct config_paths {
    const char *runtime_dir;
    const char *state_dir;
    const char *rules_dir;
    const char *hostname;
};

/*
 * Read path (NULL: built-in defaults only) into a new configuration.
 * paths may be NULL. On success *ret owns it (config_free()); on failure
 * returns -EINVAL (bad content), -ENOENT/-EACCES/... (unreadable file) or
 * -ENOMEM, and err holds the message.
 */
int config_load(const char *path, const struct config_paths *paths, struct config **ret,
                struct config_error *err);

/*
 * Parse configuration text as if read from a file called name. Same
 * results as config_load(); used by it and by the tests.
 */
int config_parse(const char *name, const char *text, size_t len, const struct config_paths *paths,
                 struct config **ret, struct config_error *err);

struct config *config_free(struct config *cfg);

/* Parsers shared with the command line; 0 or -EINVAL. */
int config_parse_size(const char *s, uint64_t *ret);
int config_parse_duration(const char *s, uint32_t *ret);
bool config_socket_valid(const char *s);

/* addr is an envelope address without <>; case is ignored. */
bool config_list_match(const struct config_list *list, const char *addr);
bool config_list_empty(const struct config_list *list);

/* sa may be NULL (unknown peer); hostname may be NULL or "[1.2.3.4]". */
bool config_hosts_match(const struct config_hosts *hosts, const struct sockaddr *sa,
                        const char *hostname);

const char *config_failure_name(int failure);
const char *config_mode_name(int mode);

/* Write the KEYS section of slop-milter.conf(5) in roff, from the table. */
void config_write_man(FILE *f);

/* Write a sample configuration with every key commented out. */
void config_write_sample(FILE *f);

/* Print every effective value as `Key value` (for -n -v style dumps). */
void config_write_effective(const struct config *cfg, FILE *f);

/*
 * The checks `slop-milter -n` runs on the paths cfg names (config_check.c),
 * each 0 or a negative errno with err filled: SendmailPath is an
 * executable file when replies go through it; StateDir exists, or its
 * parent does (only StateDir itself is created).
 */
int config_check_sendmail(const struct config *cfg, struct config_error *err);
int config_check_state_parent(const struct config *cfg, struct config_error *err);

/*
 * StateDir and its files belong to uid, the user the daemon runs as (a
 * directory `make run` made as root does not): 0, or -EACCES with err
 * naming the path, its owner and the chown to run. Always 0 for root.
 */
int config_check_state_owner(const struct config *cfg, uid_t uid, gid_t gid,
                             struct config_error *err);

#define CONFIG_REDIS_PASSWORD_MAX 512 /* bytes of RedisPasswordFile's line, with its NUL */

/* cfg's RedisServer, RedisUser, RedisPrefix and RedisTimeout into ret's
 * fields of the same names, borrowed from cfg; the other fields (the
 * password, notify) are left for the caller. (config_redis.c) */
void config_redis_options(const struct config *cfg, struct state_redis_options *ret);

/* First line of path (RedisPasswordFile) into buf, without its line end
 * (empty path: empty password). 0 or -errno; -E2BIG when the line does not
 * fit. (config_redis.c) */
int config_redis_password(const char *path, char *buf, size_t size);

/* "user:group" for uid and gid, numbers where they have no name. */
void config_owner_name(uid_t uid, gid_t gid, char *buf, size_t size);

#endif
