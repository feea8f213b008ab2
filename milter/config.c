/*
 * config.c - the key table and the `Key value` parser.
 *
 * Every key is one row of config_keys[]: name, type, default (as text,
 * parsed by the same code as a file value), limits, the struct field it
 * fills and its documentation. Nothing else in the daemon names a key.
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

#include "config.h"

#ifndef SLOP_DEFAULT_RULES_DIR
#define SLOP_DEFAULT_RULES_DIR "/usr/share/slop-milter/rules"
#endif
#ifndef SLOP_BUILD_DIR
#define SLOP_BUILD_DIR "."
#endif

#define CONFIG_FILE_MAX (1u << 20) /* a configuration file larger than this is refused */

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

static const char *const mode_words[] = {"enforce", "monitor", NULL};
static const int mode_values[] = {CONFIG_MODE_ENFORCE, CONFIG_MODE_MONITOR};
static const char *const fail_words[] = {"accept", "tempfail", "reject", "quarantine", NULL};
static const char *const oversize_words[] = {"scan",   "accept",     "tempfail",
                                             "reject", "quarantine", NULL};
static const int fail_values[] = {CONFIG_FAIL_ACCEPT, CONFIG_FAIL_TEMPFAIL, CONFIG_FAIL_REJECT,
                                  CONFIG_FAIL_QUARANTINE};
static const int oversize_values[] = {CONFIG_FAIL_SCAN, CONFIG_FAIL_ACCEPT, CONFIG_FAIL_TEMPFAIL,
                                      CONFIG_FAIL_REJECT, CONFIG_FAIL_QUARANTINE};
static const char *const transport_words[] = {"sendmail", "smtp", NULL};
static const int transport_values[] = {CONFIG_TRANSPORT_SENDMAIL, CONFIG_TRANSPORT_SMTP};
static const char *const require_words[] = {"authenticated", "dmarc-pass", "spf-pass",
                                            "dkim-aligned",  "any",        NULL};
static const int require_values[] = {CONFIG_REQUIRE_AUTHENTICATED, CONFIG_REQUIRE_DMARC_PASS,
                                     CONFIG_REQUIRE_SPF_PASS, CONFIG_REQUIRE_DKIM_ALIGNED,
                                     CONFIG_REQUIRE_ANY};
static const char *const facility_words[] = {"mail",   "daemon", "user",   "local0",
                                             "local1", "local2", "local3", "local4",
                                             "local5", "local6", "local7", NULL};
static const int facility_values[] = {LOG_MAIL,   LOG_DAEMON, LOG_USER,   LOG_LOCAL0,
                                      LOG_LOCAL1, LOG_LOCAL2, LOG_LOCAL3, LOG_LOCAL4,
                                      LOG_LOCAL5, LOG_LOCAL6, LOG_LOCAL7};

#define F(field) offsetof(struct config, field)
#define ENUM(w, v) .words = (w), .values = (v)

static const struct key config_keys[] = {
    {"Socket", T_SOCKET, 0, NULL,
     "local:$RUNTIME_DIRECTORY/slop-milter.sock, else local:/run/slop-milter/slop-milter.sock "
     "when that directory is writable, else a socket in the build directory",
     0, 0, NULL, NULL, F(socket),
     "Where the milter listens: local:/path or unix:/path (a UNIX-domain socket), "
     "inet:port@host or inet6:port@host (TCP; host defaults to all addresses). "
     "The MTA's milter setting must name the same socket."},
    {"SocketMode", T_OCTAL, 0, "0660", NULL, 0, 0777, NULL, NULL, F(socket_mode),
     "Permissions of a UNIX-domain socket, in octal. The MTA's user must be able to write "
     "to it: add it to the daemon's group (e.g. usermod -aG slop-milter postfix) or use 0666."},
    {"UserID", T_USER, K_EMPTY_OK, "", NULL, 0, 0, NULL, NULL, F(user_id),
     "user[:group] to run as after opening the socket and the PID file. When started as "
     "root with UserID set and the change fails, the daemon refuses to run. Empty: stay as "
     "started."},
    {"PidFile", T_PATH, K_EMPTY_OK, "", NULL, 0, 0, NULL, NULL, F(pid_file),
     "File to write the daemon's process id to, written before privileges are dropped and "
     "removed at exit, for which its directory must be writable by UserID (the systemd unit's "
     "/run/slop-milter is). Empty: none."},
    {"UMask", T_OCTAL, 0, "0007", NULL, 0, 0777, NULL, NULL, F(umask),
     "File mode creation mask (octal) applied at start-up, before the socket, PID file and "
     "state files are created."},
    {"Syslog", T_BOOL, 0, "yes", NULL, 0, 0, NULL, NULL, F(syslog),
     "Log to syslog when running in the background. In the foreground (-f) the log goes to "
     "standard error instead."},
    {"SyslogFacility", T_ENUM, 0, "mail", NULL, 0, 0, ENUM(facility_words, facility_values),
     F(syslog_facility), "Syslog facility."},
    {"RulesDir", T_PATH, 0, NULL,
     "the source tree's rules/ when run from the build directory, else the installed "
     "rules directory (share/slop-milter/rules)",
     0, 0, NULL, NULL, F(rules_dir),
     "Directory of *.rules files, loaded in name order, then of *.scores files "
     "(from slopctl fit), whose scores win."},
    {"StateDir", T_PATH, 0, NULL,
     "$STATE_DIRECTORY, else /var/lib/slop-milter when running as root, else var/state/ in the "
     "build directory",
     0, 0, NULL, NULL, F(state_dir),
     "Directory of the LMDB state (reply ledger, counters, the indices slopctl imports, "
     "fingerprints of mail seen). Read at start-up only: a change takes effect on restart, "
     "not on reload."},
    {"StateSyncInterval", T_DURATION, 0, "1s", NULL, 0, 3600, NULL, NULL, F(state_sync_interval),
     "How often the state's writes are flushed to disk. Between flushes a write reaches the "
     "page cache only: it survives a crash or kill of slop-milter, but a power loss or kernel "
     "crash may lose the last interval's fingerprints and sender counts (never mail; at most "
     "a missed duplicate). A granted reply is always flushed before it is sent. 0: flush at "
     "every write, which adds a disk sync (about 0.2 ms on a virtual disk, more on a busy "
     "one) between the end of each message and its answer. Whether it is 0 is read at "
     "start-up only."},
    {"DuplicateWindow", T_DURATION, 0, "30d", NULL, 86400, 366.0 * 86400, NULL, NULL,
     F(duplicate_window),
     "How far back a patch or report recorded in StateDir makes a new one a duplicate; "
     "rounded up to whole days (suffix s, m, h or d; no suffix: seconds)."},
    {"TrustMaintainers", T_BOOL, 0, "yes", NULL, 0, 0, NULL, NULL, F(trust_maintainers),
     "Trust senders whose From: address is an M: or R: address of the MAINTAINERS imported "
     "into StateDir (slopctl import maintainers): their mail is scored and tagged as usual, "
     "but never answered, quarantined or rejected."},
    {"RecordState", T_BOOL, 0, "yes", NULL, 0, 0, NULL, NULL, F(record_state),
     "Record the fingerprints of each scanned patch and report, and count it for its "
     "sender, in StateDir, so that later duplicates and floods are found; also a flagged "
     "cover letter's findings and each series patch's changelog paragraphs, for the rest "
     "of the series. no: the state is only read."},
    {"Recipients", T_ADDRS, K_EMPTY_OK, "", NULL, 0, 0, NULL, NULL, F(recipients),
     "Comma-separated addresses (security@example.org) or domains (@example.org) whose mail "
     "is scanned; mail with none of them among its recipients passes untouched. Empty: "
     "all mail is scanned."},
    {"PeerList", T_HOSTS, K_EMPTY_OK, "", NULL, 0, 0, NULL, NULL, F(peer_list),
     "Clients whose mail passes unscanned: a comma-separated list of IP addresses, networks "
     "(192.0.2.0/24, 2001:db8::/32), host names and .domain suffixes, or the absolute path "
     "of a file with one entry per line (# comments)."},
    {"InternalHosts", T_HOSTS, K_EMPTY_OK, "", NULL, 0, 0, NULL, NULL, F(internal_hosts),
     "Hosts of your own network, in PeerList syntax; their mail passes unscanned. Note that "
     "Postfix's pickup service (non_smtpd_milters) connects from 127.0.0.1, so listing the "
     "loopback here also skips locally submitted mail."},
    {"SkipAuthenticated", T_BOOL, 0, "no", NULL, 0, 0, NULL, NULL, F(skip_authenticated),
     "Pass mail from SMTP-authenticated clients (the {auth_authen} macro is set) unscanned."},
    {"AllowSenders", T_ADDRS, K_EMPTY_OK, "", NULL, 0, 0, NULL, NULL, F(allow_senders),
     "Envelope senders (addresses or @domains, comma-separated) whose mail passes unscanned."},
    {"TagThreshold", T_NUMBER, 0, "5", NULL, 0, 1000, NULL, NULL, F(tag_threshold),
     "Score from which mail is tagged (X-Slop-Status: Yes, subject prefix). 0 disables."},
    {"ReplyThreshold", T_NUMBER, 0, "12", NULL, 0, 1000, NULL, NULL, F(reply_threshold),
     "Score from which the sender gets one automatic reply (see ReplyEnable); the mail is "
     "delivered with its tags. 0 disables."},
    {"QuarantineThreshold", T_NUMBER, 0, "0", NULL, 0, 1000, NULL, NULL, F(quarantine_threshold),
     "Score from which mail is quarantined (held by the MTA: Postfix's hold queue). 0 disables."},
    {"RejectThreshold", T_NUMBER, 0, "0", NULL, 0, 1000, NULL, NULL, F(reject_threshold),
     "Score from which mail is rejected with 550 5.7.1 and the findings. 0 disables."},
    {"Mode", T_ENUM, 0, "enforce", NULL, 0, 0, ENUM(mode_words, mode_values), F(mode),
     "enforce: act on the verdict. monitor: only add the X-Slop-* headers and "
     "X-Slop-Action: with the action that would have been taken; never change the subject, "
     "reject, quarantine, defer or reply."},
    {"SubjectTag", T_STRING, K_EMPTY_OK, "[SLOP]", NULL, 0, 0, NULL, NULL, F(subject_tag),
     "Text put before the Subject of tagged mail (followed by a space). Empty (\"\"): the "
     "subject is left alone."},
    {"DocBase", T_STRING, 0, "https://docs.kernel.org/", NULL, 0, 0, NULL, NULL, F(doc_base),
     "Base URL of the documents the findings link to (rules' @/ links)."},
    {"ReplyEnable", T_BOOL, 0, "yes", NULL, 0, 0, NULL, NULL, F(reply_enable),
     "Answer the sender of mail that reaches ReplyThreshold (RFC 3834 rules apply: never "
     "to <>, lists, bulk or auto-submitted mail)."},
    {"ReplyRequires", T_WORDS, 0, "authenticated dmarc-pass", NULL, 0, 0,
     ENUM(require_words, require_values), F(reply_requires),
     "Answer only a sender proved to be who it claims, by any one of: authenticated (the "
     "MTA's {auth_authen}: SMTP AUTH), dmarc-pass (a trusted Authentication-Results says "
     "dmarc=pass for the From: domain, which aligns with the envelope sender's), "
     "dkim-aligned (a trusted dkim=pass whose header.d aligns with that From: domain), "
     "spf-pass (a trusted spf=pass for the envelope sender's domain); any: no proof. "
     "Other mail is tagged as usual and logged reply=unverified. Replies to forged "
     "senders are backscatter."},
    {"AuthservID", T_STRING, K_EMPTY_OK, "", NULL, 0, 0, NULL, NULL, F(authserv_id),
     "authserv-id of the Authentication-Results fields trusted by ReplyRequires (written by "
     "OpenDKIM, OpenDMARC or rspamd on this host or the border MTA, which must remove "
     "incoming fields that claim this id). Empty: the MTA's host name (macro {j}), else "
     "the local host name."},
    {"ReplyFrom", T_STRING, 0, NULL, "slop-milter <postmaster@HOSTNAME>", 0, 0, NULL, NULL,
     F(reply_from), "From: header of replies (the envelope sender is always <>)."},
    {"ReplyTemplate", T_PATH, K_EMPTY_OK, "", NULL, 0, 0, NULL, NULL, F(reply_template),
     "Template file for replies. Empty: the built-in template."},
    {"ReplyInterval", T_DURATION, 0, "7d", NULL, 60, 366.0 * 86400, NULL, NULL, F(reply_interval),
     "At most one reply per sender address in this interval (suffix s, m, h or d; "
     "no suffix: seconds)."},
    {"ReplyHourlyCap", T_UINT, 0, "50", NULL, 0, 1000000, NULL, NULL, F(reply_hourly_cap),
     "At most this many replies per hour in total. 0: no cap."},
    {"ReplyTransport", T_ENUM, 0, "sendmail", NULL, 0, 0, ENUM(transport_words, transport_values),
     F(reply_transport),
     "How replies leave: sendmail runs SendmailPath, smtp talks to SMTPServer."},
    {"SendmailPath", T_PATH, 0, "/usr/sbin/sendmail", NULL, 0, 0, NULL, NULL, F(sendmail_path),
     "The sendmail(8) program used by ReplyTransport sendmail."},
    {"SMTPServer", T_HOSTPORT, 0, "127.0.0.1:25", NULL, 0, 0, NULL, NULL, F(smtp_server),
     "host:port (or [IPv6]:port) of the SMTP server used by ReplyTransport smtp; it "
     "must be a loopback address."},
    {"OnInternalError", T_ENUM, 0, "accept", NULL, 0, 0, ENUM(fail_words, fail_values),
     F(on_internal_error),
     "What to do when a message cannot be scanned (out of memory, failed MTA call): accept, "
     "tempfail (451 4.7.1), reject (550 5.7.1) or quarantine. Accepted and quarantined mail "
     "carries X-Slop-Status: Unknown, reason=..."},
    {"OnTimeout", T_ENUM, 0, "accept", NULL, 0, 0, ENUM(fail_words, fail_values), F(on_timeout),
     "What to do when a scan takes longer than ScanTimeout; values as OnInternalError."},
    {"OnOversize", T_ENUM, 0, "scan", NULL, 0, 0, ENUM(oversize_words, oversize_values),
     F(on_oversize),
     "What to do with mail larger than MaxMessageSize: scan (scan the first MaxMessageSize "
     "bytes), or accept, tempfail, reject, quarantine as OnInternalError. The other Max* "
     "limits do not use this: when one of them cuts the input, the scan still completes on "
     "what was kept, the mail is tagged as its score says, the finding LIMIT_REACHED "
     "(score 0) names the limit and the decision line logs limit=..."},
    {"MaxMessageSize", T_SIZE, 0, "10M", NULL, 65536, 1073741824.0, NULL, NULL, F(max_message_size),
     "Bytes of a message (headers and body) kept for scanning; suffix K, M or G (powers of "
     "1024)."},
    {"ScanTimeout", T_UINT, 0, "5000", NULL, 10, 600000, NULL, NULL, F(scan_timeout),
     "Milliseconds a scan may take before OnTimeout applies: the time budget of one "
     "message. The scan runs on its own thread, so a message that would take longer never "
     "holds up the MTA beyond this."},
    {"MaxMimeDepth", T_UINT, 0, "32", NULL, 1, 1000, NULL, NULL, F(max_mime_depth),
     "Nesting depth of multipart parts followed; deeper parts are not analysed."},
    {"MaxMimeParts", T_UINT, 0, "256", NULL, 1, 100000, NULL, NULL, F(max_mime_parts),
     "MIME parts walked per message; later parts are not analysed."},
    {"MaxPartSize", T_SIZE, 0, "4M", NULL, 1024, 1073741824.0, NULL, NULL, F(max_part_size),
     "Decoded bytes kept of each text part; the rest of the part is not analysed (suffix K, "
     "M or G)."},
    {"MaxHeaders", T_UINT, 0, "1000", NULL, 1, 100000, NULL, NULL, F(max_headers),
     "Header fields kept and analysed per message; later fields are dropped, except the "
     "first Subject, Message-ID and From, kept wherever they appear (the Subject tagged is "
     "the one the message has)."},
    {"MaxHeaderSize", T_SIZE, 0, "64K", NULL, 1024, 16777216.0, NULL, NULL, F(max_header_size),
     "Bytes kept of one header field's value; the rest is cut (suffix K, M or G)."},
    {"MaxLines", T_UINT, 0, "100000", NULL, 100, 10000000, NULL, NULL, F(max_lines),
     "Text lines analysed per message; later lines are not analysed."},
    {"MaxLineLength", T_UINT, 0, "4096", NULL, 80, 1048576, NULL, NULL, F(max_line_length),
     "Bytes analysed of one line; longer lines are cut."},
    {"MaxPatchFiles", T_UINT, 0, "500", NULL, 1, 100000, NULL, NULL, F(max_patch_files),
     "Files of a patch analysed; the diff of later files is not."},
    {"MaxPatchHunks", T_UINT, 0, "5000", NULL, 1, 1000000, NULL, NULL, F(max_patch_hunks),
     "Hunks of a patch analysed; later hunks are not."},
    {"RegexMatchLimit", T_UINT, 0, "100000", NULL, 1000, 100000000, NULL, NULL,
     F(regex_match_limit),
     "PCRE2 match limit of one rule pattern on one text: a match that needs more steps "
     "fails (the rule does not fire) instead of running away."},
    {"RegexDepthLimit", T_UINT, 0, "5000", NULL, 100, 10000000, NULL, NULL, F(regex_depth_limit),
     "PCRE2 depth limit (backtracking memory) of one rule pattern on one text; beyond it "
     "the match fails."},
    {"RejectText", T_STRING, 0, "Message refused by an automated review, findings follow", NULL, 0,
     0, NULL, NULL, F(reject_text),
     "First line of the SMTP reply of rejected mail; one line per finding follows."},
};

#define N_KEYS (sizeof(config_keys) / sizeof(config_keys[0]))

/* What the sample file shows for keys whose default is computed. */
static const struct {
    size_t offset;
    const char *value;
} sample_values[] = {
    {F(socket), "local:/run/slop-milter/slop-milter.sock"},
    {F(rules_dir), "/usr/share/slop-milter/rules"},
    {F(state_dir), "/var/lib/slop-milter"},
    {F(reply_from), "slop-milter <postmaster@mail.example.org>"},
};

static const char *
sample_value(const struct key *k)
{
    for (size_t i = 0; i < sizeof(sample_values) / sizeof(sample_values[0]); i++)
        if (sample_values[i].offset == k->offset)
            return sample_values[i].value;
    return "";
}

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

static void
list_release(struct config_list *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->items[i]);
    free(l->items);
    l->items = NULL;
    l->n = 0;
}

static void
hosts_release(struct config_hosts *h)
{
    for (size_t i = 0; i < h->n_names; i++)
        free(h->names[i]);
    free(h->names);
    free(h->nets);
    memset(h, 0, sizeof(*h));
}

struct config *
config_free(struct config *cfg)
{
    if (cfg == NULL)
        return NULL;
    for (size_t i = 0; i < N_KEYS; i++) {
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

/* Parse an unsigned decimal, rejecting signs, blanks and overflow. */
static int
parse_u64(const char *s, const char **ret_end, uint64_t *ret)
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

    if (parse_u64(s, &end, &v) < 0)
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

static bool
hostport_valid(const char *s)
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

static bool
user_valid(const char *s)
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
static int
split_items(const char *s, int (*fn)(void *ctx, const char *item, size_t len), void *ctx)
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

struct list_ctx {
    struct config_list *list;
    const char *bad; /* first bad item, for the message */
    size_t bad_len;
};

static int
list_add(void *ctx, const char *item, size_t len)
{
    struct list_ctx *lc = ctx;
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

        if (parse_u64(slash + 1, &end, &v) < 0 || *end != '\0' || v > max)
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
static int
hosts_parse(const char *value, struct config_hosts *hosts, char *why, size_t why_size)
{
    struct hosts_ctx hc = {.hosts = hosts};
    char line[CONFIG_LINE_MAX];
    unsigned lineno = 0;
    FILE *f;
    int r = 0;

    if (value[0] != '/') {
        r = split_items(value, hosts_add, &hc);
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
        r = split_items(line, hosts_add, &hc);
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

static void
words_join(const char *const *words, char *buf, size_t size)
{
    size_t n = 0, used = 0;

    while (words[n])
        n++;
    buf[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        const char *sep = i == 0 ? "" : i + 1 == n ? " or " : ", ";
        int w = snprintf(buf + used, size - used, "%s%s", sep, words[i]);

        if (w < 0 || (size_t)w >= size - used)
            break;
        used += (size_t)w;
    }
}

static const char *
type_name(const struct key *k)
{
    switch (k->type) {
    case T_STRING:
        return "string";
    case T_PATH:
        return "path";
    case T_BOOL:
        return "yes|no";
    case T_UINT:
        return "integer";
    case T_OCTAL:
        return "octal";
    case T_NUMBER:
        return "number";
    case T_SIZE:
        return "size";
    case T_DURATION:
        return "duration";
    case T_SOCKET:
        return "socket";
    case T_ENUM:
        return "word";
    case T_ADDRS:
        return "address list";
    case T_HOSTS:
        return "host list";
    case T_HOSTPORT:
        return "host:port";
    case T_USER:
        return "user[:group]";
    case T_WORDS:
        return "word list";
    }
    return "?";
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

/* Format a limit without trailing zeros: 1000, 0.5, 65536. */
static void
fmt_limit(double v, char *buf, size_t size)
{
    snprintf(buf, size, "%.10g", v);
}

/* A duration limit in its largest whole unit: 1m, 366d. */
static void
fmt_duration(double v, char *buf, size_t size)
{
    unsigned long s = (unsigned long)v;

    if (s != 0 && s % 86400 == 0)
        snprintf(buf, size, "%lud", s / 86400);
    else if (s != 0 && s % 3600 == 0)
        snprintf(buf, size, "%luh", s / 3600);
    else if (s != 0 && s % 60 == 0)
        snprintf(buf, size, "%lum", s / 60);
    else
        snprintf(buf, size, "%lus", s);
}

/* A size limit in its largest whole power-of-1024 unit: 64K, 1G. */
static void
fmt_size(double v, char *buf, size_t size)
{
    unsigned long long b = (unsigned long long)v;

    if (b != 0 && b % (1ull << 30) == 0)
        snprintf(buf, size, "%lluG", b >> 30);
    else if (b != 0 && b % (1ull << 20) == 0)
        snprintf(buf, size, "%lluM", b >> 20);
    else if (b != 0 && b % 1024 == 0)
        snprintf(buf, size, "%lluK", b >> 10);
    else
        snprintf(buf, size, "%llu", b);
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
        if (!config_socket_valid(value)) {
            snprintf(why, why_size,
                     "%s: bad socket '%s' (use local:/path, unix:/path, inet:port@host or "
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
    for (size_t i = 0; i < N_KEYS; i++)
        if (strcasecmp(config_keys[i].name, name) == 0)
            return &config_keys[i];
    return NULL;
}

static bool
dir_writable(const char *dir)
{
    return dir != NULL && *dir != '\0' && access(dir, W_OK | X_OK) == 0;
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
        else if (dir_writable("/run/slop-milter"))
            snprintf(dir, sizeof(dir), "/run/slop-milter");
        else
            snprintf(dir, sizeof(dir), "%s", SLOP_BUILD_DIR);
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
        else if (geteuid() == 0)
            snprintf(dir, sizeof(dir), "/var/lib/slop-milter");
        else
            snprintf(dir, sizeof(dir), "%s/var/state", SLOP_BUILD_DIR);
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
    unsigned seen[N_KEYS] = {0};
    struct config *cfg;
    const char *p = text, *end = text + len;
    unsigned lineno = 0;
    char why[640];
    int r = 0;

    cfg = calloc(1, sizeof(*cfg));
    if (cfg == NULL)
        return -ENOMEM;

    for (size_t i = 0; i < N_KEYS; i++) {
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

    for (size_t i = 0; i < N_KEYS; i++) {
        if (config_keys[i].def != NULL || seen[i] != 0)
            continue;
        r = computed_default(cfg, &config_keys[i], paths);
        if (r < 0) {
            err_set(err, "%s: cannot compute the default of %s", name, config_keys[i].name);
            goto out;
        }
    }
    r = thresholds_check(cfg, name, seen, err);
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

bool
config_list_empty(const struct config_list *list)
{
    return list->n == 0;
}

bool
config_list_match(const struct config_list *list, const char *addr)
{
    const char *at = strrchr(addr, '@');

    for (size_t i = 0; i < list->n; i++) {
        const char *item = list->items[i];

        if (item[0] == '@') {
            if (at != NULL && strcasecmp(at, item) == 0)
                return true;
        } else if (strcasecmp(addr, item) == 0)
            return true;
    }
    return false;
}

static bool
net_match(const struct config_net *net, int family, const unsigned char *addr)
{
    unsigned full = net->prefix / 8, rest = net->prefix % 8;

    if (net->family != family)
        return false;
    if (memcmp(net->addr, addr, full) != 0)
        return false;
    if (rest == 0)
        return true;
    {
        unsigned char mask = (unsigned char)(0xff << (8 - rest));

        return (net->addr[full] & mask) == (addr[full] & mask);
    }
}

bool
config_hosts_match(const struct config_hosts *hosts, const struct sockaddr *sa,
                   const char *hostname)
{
    if (sa != NULL && hosts->n_nets > 0) {
        unsigned char v4[4];
        const unsigned char *a = NULL;
        int family = 0;

        if (sa->sa_family == AF_INET) {
            a = (const unsigned char *)&((const struct sockaddr_in *)(const void *)sa)->sin_addr;
            family = AF_INET;
        } else if (sa->sa_family == AF_INET6) {
            const struct in6_addr *a6 = &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr;

            a = a6->s6_addr;
            family = AF_INET6;
            /* An IPv4 client on a dual-stack socket matches IPv4 entries. */
            if (IN6_IS_ADDR_V4MAPPED(a6)) {
                memcpy(v4, a6->s6_addr + 12, 4);
                a = v4;
                family = AF_INET;
            }
        }
        for (size_t i = 0; a != NULL && i < hosts->n_nets; i++)
            if (net_match(&hosts->nets[i], family, a))
                return true;
    }
    if (hostname != NULL && hostname[0] != '[' && hostname[0] != '\0') {
        size_t hl = strlen(hostname);

        for (size_t i = 0; i < hosts->n_names; i++) {
            const char *n = hosts->names[i];
            size_t nl = strlen(n);

            if (n[0] == '.') {
                if (hl > nl && strcasecmp(hostname + hl - nl, n) == 0)
                    return true;
            } else if (strcasecmp(hostname, n) == 0)
                return true;
        }
    }
    return false;
}

static const char *
enum_word(const char *const *words, const int *values, int v)
{
    for (size_t i = 0; words[i]; i++)
        if (values[i] == v)
            return words[i];
    return "?";
}

const char *
config_failure_name(int failure)
{
    return enum_word(oversize_words, oversize_values, failure);
}

const char *
config_mode_name(int mode)
{
    return enum_word(mode_words, mode_values, mode);
}

/* roff: a backslash is \e, a leading dot or quote would be a request. */
static void
roff_text(FILE *f, const char *s)
{
    if (*s == '.' || *s == '\'')
        fputs("\\&", f);
    for (; *s; s++) {
        if (*s == '\\')
            fputs("\\e", f);
        else if (*s == '-')
            fputs("\\-", f);
        else
            fputc(*s, f);
    }
}

static void
key_value_doc(const struct key *k, char *buf, size_t size)
{
    char lo[32], hi[32];

    fmt_limit(k->min, lo, sizeof(lo));
    fmt_limit(k->max, hi, sizeof(hi));
    switch (k->type) {
    case T_ENUM:
        words_join(k->words, buf, size);
        break;
    case T_WORDS: {
        char w[128];

        words_join(k->words, w, sizeof(w));
        snprintf(buf, size, "one or more of %s", w);
        break;
    }
    case T_UINT:
    case T_NUMBER:
        snprintf(buf, size, "%s, %s to %s", type_name(k), lo, hi);
        break;
    case T_OCTAL:
        snprintf(buf, size, "octal, 0 to 0%o", (unsigned)k->max);
        break;
    case T_SIZE:
        fmt_size(k->min, lo, sizeof(lo));
        fmt_size(k->max, hi, sizeof(hi));
        snprintf(buf, size, "size, %s to %s", lo, hi);
        break;
    case T_DURATION:
        fmt_duration(k->min, lo, sizeof(lo));
        fmt_duration(k->max, hi, sizeof(hi));
        snprintf(buf, size, "duration, %s to %s", lo, hi);
        break;
    default:
        snprintf(buf, size, "%s", type_name(k));
    }
}

void
config_write_man(FILE *f)
{
    for (size_t i = 0; i < N_KEYS; i++) {
        const struct key *k = &config_keys[i];
        char vd[160];

        key_value_doc(k, vd, sizeof(vd));
        fprintf(f, ".TP\n.BI \"%s \" ", k->name);
        fputc('"', f);
        roff_text(f, vd);
        fputs("\"\n", f);
        roff_text(f, k->doc);
        fputs("\n.br\nDefault: ", f);
        if (k->def == NULL)
            roff_text(f, k->def_doc);
        else if (k->def[0] == '\0')
            fputs("empty", f);
        else {
            fputs("\\fB", f);
            roff_text(f, k->def);
            fputs("\\fR", f);
        }
        fputs(".\n", f);
    }
}

/* Wrap doc text into "# " comment lines of at most 76 columns. */
static void
sample_comment(FILE *f, const char *s)
{
    while (*s) {
        size_t len = strlen(s), cut = len;

        if (len > 74) {
            cut = 74;
            while (cut > 0 && s[cut] != ' ')
                cut--;
            if (cut == 0)
                cut = 74;
        }
        fprintf(f, "# %.*s\n", (int)cut, s);
        s += cut;
        while (*s == ' ')
            s++;
    }
}

void
config_write_sample(FILE *f)
{
    fputs("# slop-milter.conf - sample configuration for slop-milter(8).\n"
          "#\n"
          "# Every key is shown commented out with its built-in default; the daemon runs\n"
          "# with no configuration file at all. One `Key value` per line; keys are\n"
          "# case-insensitive; \"\" quotes an empty value. See slop-milter.conf(5).\n"
          "# Check a changed file with `slop-milter -n -c FILE`, then reload with\n"
          "# `systemctl reload slop-milter` (SIGUSR1).\n",
          f);
    for (size_t i = 0; i < N_KEYS; i++) {
        const struct key *k = &config_keys[i];
        char vd[160];

        key_value_doc(k, vd, sizeof(vd));
        fputs("\n", f);
        sample_comment(f, k->doc);
        fprintf(f, "# (%s)\n", vd);
        if (k->def == NULL) {
            char line[512];

            snprintf(line, sizeof(line), "Default: %s.", k->def_doc);
            sample_comment(f, line);
            fprintf(f, "#%s %s\n", k->name, sample_value(k));
        } else if (k->def[0] == '\0')
            fprintf(f, "#%s \"\"\n", k->name);
        else
            fprintf(f, "#%s %s\n", k->name, k->def);
    }
}

static void
write_list(FILE *f, const struct config_list *l)
{
    for (size_t i = 0; i < l->n; i++)
        fprintf(f, "%s%s", i ? "," : "", l->items[i]);
}

static void
write_hosts(FILE *f, const struct config_hosts *h)
{
    size_t n = 0;

    for (size_t i = 0; i < h->n_nets; i++) {
        char buf[INET6_ADDRSTRLEN];

        if (inet_ntop(h->nets[i].family, h->nets[i].addr, buf, sizeof(buf)) != NULL)
            fprintf(f, "%s%s/%u", n++ ? "," : "", buf, h->nets[i].prefix);
    }
    for (size_t i = 0; i < h->n_names; i++)
        fprintf(f, "%s%s", n++ ? "," : "", h->names[i]);
}

void
config_write_effective(const struct config *cfg, FILE *f)
{
    for (size_t i = 0; i < N_KEYS; i++) {
        const struct key *k = &config_keys[i];
        const void *field = (const char *)cfg + k->offset;

        fprintf(f, "%s ", k->name);
        switch (k->type) {
        case T_STRING:
        case T_PATH:
        case T_SOCKET:
        case T_HOSTPORT:
        case T_USER: {
            const char *s = *(char *const *)field;

            if (*s == '\0' || s[0] == ' ' || s[strlen(s) - 1] == ' ')
                fprintf(f, "\"%s\"", s);
            else
                fputs(s, f);
            break;
        }
        case T_BOOL:
            fputs(*(const bool *)field ? "yes" : "no", f);
            break;
        case T_UINT:
            fprintf(f, "%u", *(const unsigned *)field);
            break;
        case T_OCTAL:
            fprintf(f, "%04o", *(const unsigned *)field);
            break;
        case T_NUMBER:
            fprintf(f, "%g", *(const double *)field);
            break;
        case T_SIZE:
            fprintf(f, "%llu", (unsigned long long)*(const uint64_t *)field);
            break;
        case T_DURATION:
            fprintf(f, "%lus", (unsigned long)*(const uint32_t *)field);
            break;
        case T_ENUM:
            fputs(enum_word(k->words, k->values, *(const int *)field), f);
            break;
        case T_WORDS:
            for (size_t w = 0, n = 0; k->words[w]; w++)
                if (*(const unsigned *)field & (unsigned)k->values[w])
                    fprintf(f, "%s%s", n++ ? " " : "", k->words[w]);
            break;
        case T_ADDRS:
            write_list(f, field);
            if (((const struct config_list *)field)->n == 0)
                fputs("\"\"", f);
            break;
        case T_HOSTS: {
            const struct config_hosts *h = field;

            write_hosts(f, h);
            if (h->n_nets + h->n_names == 0)
                fputs("\"\"", f);
            break;
        }
        }
        fputc('\n', f);
    }
}
