/*
 * config_keys.c - the key table: every key is one row of config_keys[]:
 * name, type, default (as text, parsed by the same code as a file value),
 * limits, the struct field it fills and its documentation. Nothing else
 * in the daemon names a key. Also how a key's type, words and limits are
 * written in messages and in the man page.
 *
 * Read-only data and pure functions: thread-safe.
 */
#include <stddef.h>
#include <stdio.h>
#include <syslog.h>

#include "config_internal.h"

static const char *const mode_words[] = {"enforce", "monitor", NULL};
static const int mode_values[] = {CONFIG_MODE_ENFORCE, CONFIG_MODE_MONITOR};
static const char *const fail_words[] = {"accept", "tempfail", "reject", "quarantine", NULL};
static const char *const oversize_words[] = {"scan",   "accept",     "tempfail",
                                             "reject", "quarantine", NULL};
static const int fail_values[] = {CONFIG_FAIL_ACCEPT, CONFIG_FAIL_TEMPFAIL, CONFIG_FAIL_REJECT,
                                  CONFIG_FAIL_QUARANTINE};
static const int oversize_values[] = {CONFIG_FAIL_SCAN, CONFIG_FAIL_ACCEPT, CONFIG_FAIL_TEMPFAIL,
                                      CONFIG_FAIL_REJECT, CONFIG_FAIL_QUARANTINE};
static const char *const state_error_words[] = {"refuse", "run-without", "tempfail", "accept",
                                                NULL};
static const int state_error_values[] = {CONFIG_STATE_REFUSE, CONFIG_STATE_RUN_WITHOUT,
                                         CONFIG_STATE_TEMPFAIL, CONFIG_STATE_ACCEPT};
static const char *const backend_words[] = {"lmdb", "redis", NULL};
static const int backend_values[] = {CONFIG_BACKEND_LMDB, CONFIG_BACKEND_REDIS};
static const char *const redis_error_words[] = {"accept", "tempfail", NULL};
static const int redis_error_values[] = {CONFIG_FAIL_ACCEPT, CONFIG_FAIL_TEMPFAIL};
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

const struct key config_keys[] = {
    {"Socket", T_SOCKET, 0, NULL,
     "local:$RUNTIME_DIRECTORY/slop-milter.sock, else slop-milter.sock in the build directory "
     "when run from it (make run), else local:/run/slop-milter/slop-milter.sock",
     0, 0, NULL, NULL, F(socket),
     "Where the milter listens: local:/path or unix:/path (a UNIX-domain socket), "
     "inet:port@host or inet6:port@host (TCP; host defaults to all addresses). "
     "The MTA's milter setting must name the same socket."},
    {"SocketMode", T_OCTAL, 0, "0660", NULL, 0, 0777, NULL, NULL, F(socket_mode),
     "Permissions of a UNIX-domain socket, in octal. The MTA's user must be able to write "
     "to it: add it to the daemon's group (adduser postfix slop-milter; the Debian package "
     "does so when Postfix is installed) or use 0666. slop-milter -n warns when the user "
     "postfix could not."},
    {"MetricsSocket", T_SOCKET, K_EMPTY_OK | K_TCP_ONLY, "", NULL, 0, 0, NULL, NULL,
     F(metrics_socket),
     "Where to serve metrics over HTTP (GET /metrics, OpenMetrics text for Prometheus): "
     "inet:port@host or inet6:port@host, e.g. inet:9393@127.0.0.1. The endpoint has no "
     "authentication: keep it on loopback or behind a firewall. Served from its own thread, "
     "never from a milter connection's. Empty: off. Read at start-up only."},
    {"MaxConnections", T_UINT, 0, "0", NULL, 0, 65536, NULL, NULL, F(max_connections),
     "Milter connections served at once. A connection over it is answered tempfail by the "
     "daemon itself (4xx to the SMTP client; the MTA retries), and one log line says when "
     "the cap is reached and one when connections fall below it again. 0: as many as the "
     "task limit leaves room for, two threads each (TasksMax=512 of the unit gives 232; "
     "no task limit: 256). Above that, libmilter can fail to start a thread and then leaves "
     "the socket open for good. Read at start-up only."},
    {"ReadTimeout", T_DURATION, 0, "300s", NULL, 1, 7210, NULL, NULL, F(read_timeout),
     "How long a milter connection may send nothing: mid-packet (a stalled peer, which "
     "holds a thread) or between commands. The connection is then closed and the MTA "
     "applies its milter_default_action. Above Postfix's smtpd_timeout (300s), so a slow "
     "SMTP client does not lose its milter; far below libmilter's own 7210s. Read at "
     "start-up only."},
    {"UserID", T_USER, K_EMPTY_OK, "", NULL, 0, 0, NULL, NULL, F(user_id),
     "user[:group] to run as after opening the socket and the PID file. When started as "
     "root with UserID set and the change fails, the daemon refuses to run. Empty: stay as "
     "started (as root, with a warning in the log)."},
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
     "$STATE_DIRECTORY, else var/state/ in the build directory when run from it (make run, "
     "as any user), else /var/lib/slop-milter",
     0, 0, NULL, NULL, F(state_dir),
     "Directory of the LMDB state (reply ledger, counters, the indices slopctl imports, "
     "fingerprints of mail seen). Created (mode 0750) when missing, but not its parents. "
     "Read at start-up only: a change takes effect on restart, not on reload."},
    {"StateSyncInterval", T_DURATION, 0, "1s", NULL, 0, 3600, NULL, NULL, F(state_sync_interval),
     "How often the state's writes are flushed to disk. Between flushes a write reaches the "
     "page cache only: it survives a crash or kill of slop-milter, but a power loss or kernel "
     "crash may lose the last interval's fingerprints and sender counts (never mail; at most "
     "a missed duplicate). A granted reply is always flushed before it is sent. 0: flush at "
     "every write, which adds a disk sync (about 0.2 ms on a virtual disk, more on a busy "
     "one) between the end of each message and its answer. Whether it is 0 is read at "
     "start-up only."},
    {"OnStateError", T_ENUM, 0, "refuse", NULL, 0, 0, ENUM(state_error_words, state_error_values),
     F(on_state_error),
     "What to do at start-up when StateDir's data.mdb is damaged (cut short, emptied, bad "
     "meta pages, a damaged page found by the page walk a start runs when the file changed "
     "since it was last found whole, a damaged page LMDB met while serving, not a regular "
     "file, or missing where state.generation says state existed): refuse exits with "
     "status 73 and names the damage; run-without starts without any state, so the "
     "findings that need it (duplicates, floods, known fixes, the tree index, series) are "
     "skipped and no replies are sent; tempfail starts and answers every message 4xx, so "
     "the MTA keeps it queued until the state is mended; accept starts and accepts every "
     "message unscanned. A damaged page LMDB meets while serving aborts the daemon once "
     "(LMDB's own assertion) after recording the damage in state.damaged: the next start "
     "applies this setting instead of aborting again. The file is left as it is for "
     "slopctl db check and slopctl db recover. Read at start-up only."},
    {"StateBackend", T_ENUM, 0, "lmdb", NULL, 0, 0, ENUM(backend_words, backend_values),
     F(state_backend),
     "Where the shared, per-message state lives: the reply ledger and hourly reply count, the "
     "fingerprints of seen patches and reports (duplicates) and the daily count per sender "
     "(floods). lmdb: in StateDir, for one host. redis: in the Redis server RedisServer, "
     "shared by every host that names it, so that a duplicate, a flood or the one reply per "
     "interval holds across several MX hosts. The indices slopctl imports (tree, fixes, "
     "MAINTAINERS) and the series records stay in StateDir either way. Read at start-up only."},
    {"RedisServer", T_SOCKET, 0, "inet:6379@127.0.0.1", NULL, 0, 0, NULL, NULL, F(redis_server),
     "The Redis server of StateBackend redis, in the notation of Socket: unix:/path (or "
     "local:/path) for a UNIX-domain socket, inet:port@host or inet6:port@host for TCP. "
     "TLS is not supported (Debian's hiredis 0.14 has no TLS): use a UNIX socket, loopback or "
     "a tunnel. Read at start-up only."},
    {"RedisUser", T_STRING, K_EMPTY_OK, "", NULL, 0, 0, NULL, NULL, F(redis_user),
     "ACL user for AUTH (Redis 6 and later); empty: AUTH with the password only."},
    {"RedisPasswordFile", T_PATH, K_EMPTY_OK, "", NULL, 0, 0, NULL, NULL, F(redis_password_file),
     "File whose first line is the password for AUTH, read at start-up (before privileges are "
     "dropped) so that it may be readable by root only. Empty: no AUTH."},
    {"RedisPrefix", T_STRING, 0, "slop:", NULL, 0, 0, NULL, NULL, F(redis_prefix),
     "Prefix of every key slop-milter writes in Redis (at most 64 bytes, no braces or "
     "spaces); hosts that share state use the same prefix."},
    {"RedisTimeout", T_UINT, 0, "500", NULL, 10, 60000, NULL, NULL, F(redis_timeout),
     "Milliseconds a connect or a round trip to Redis may take. A message waits at most this "
     "long per look-up; after a failure the server counts as down and is tried again after a "
     "back-off (0.5 s, doubling to 30 s), meanwhile messages do not wait for it at all."},
    {"OnRedisError", T_ENUM, 0, "accept", NULL, 0, 0, ENUM(redis_error_words, redis_error_values),
     F(on_redis_error),
     "What to do with a message while Redis (StateBackend redis) cannot be reached or does "
     "not answer within RedisTimeout: accept scans it without the shared findings (no "
     "duplicate or flood finding) and sends no reply, since the ledger cannot be written; "
     "tempfail answers 451 4.3.0 so that the MTA retries it later. The outage is logged "
     "once when it starts and once when it ends, not per message."},
    {"DuplicateWindow", T_DURATION, 0, "30d", NULL, 86400, 366.0 * 86400, NULL, NULL,
     F(duplicate_window),
     "How far back a patch or report recorded in StateDir makes a new one a duplicate; "
     "rounded up to whole days (suffix s, m, h or d; no suffix: seconds)."},
    {"LearnMinimum", T_UINT, 0, "200", NULL, 1, 10000000, NULL, NULL, F(learn_minimum),
     "Messages each class (slop, genuine) needs learned into StateDir (slopctl learn) "
     "before the LEARNED_* findings speak; below it they stay silent. Learned counts are "
     "read per message: new ones count for the next message, without a reload."},
    {"AutoLearn", T_BOOL, 0, "no", NULL, 0, 0, NULL, NULL, F(auto_learn),
     "Learn scanned mail whose score, without the LEARNED_* findings, is at least "
     "AutoLearnSlopScore as slop and at most AutoLearnGenuineScore as genuine, as "
     "SpamAssassin's bayes_auto_learn. Off by default: the classifier then learns the "
     "rules' own mistakes and confirms them, and a sender who learns what passes can "
     "teach it; learn from what people sorted instead (slopctl learn)."},
    {"AutoLearnSlopScore", T_NUMBER, 0, "20", NULL, 0, 1000, NULL, NULL, F(auto_learn_slop),
     "With AutoLearn, the score at or above which mail is learned as slop."},
    {"AutoLearnGenuineScore", T_NUMBER, 0, "0", NULL, 0, 1000, NULL, NULL, F(auto_learn_genuine),
     "With AutoLearn, the score at or below which mail is learned as genuine."},
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
    {"Project", T_STRING, 0, "kernel", NULL, 0, 0, NULL, NULL, F(project),
     "Project profile (a-z, 0-9, '-', '_'): rules marked for other profiles are off. kernel "
     "(the threat model, checkpatch, tree-index and MAINTAINERS rules apply) or generic ship; "
     "a site names its own and marks its rule files with it (see docs/rules.md)."},
    {"DocBase", T_STRING, 0, NULL,
     "https://docs.kernel.org/ when Project is kernel, else none: findings then carry only "
     "their own full links, and replies and refusals no document link",
     0, 0, NULL, NULL, F(doc_base),
     "Base URL of the documents the findings link to (rules' @/ links), and of the "
     "threat-model and security-bugs pages that replies and refusals point to."},
    {"ReportRecipients", T_ADDRS, K_EMPTY_OK, "security@*", NULL, 0, 0, NULL, NULL,
     F(report_recipients),
     "Comma-separated patterns of the addresses where reports arrive ('*' any run, '?' one "
     "character, case-insensitive), matched on the envelope recipients: mail to one of them "
     "is a report, however short, when it names a problem (one word such as crash, overflow, "
     "leak, bug or security) and is not a patch or a reply in a thread; other mail is a "
     "report only if it reads like one. Empty: no address makes a report."},
    {"ReplyEnable", T_BOOL, 0, "yes", NULL, 0, 0, NULL, NULL, F(reply_enable),
     "Answer the sender of mail that reaches ReplyThreshold (RFC 3834 rules apply: never "
     "to <>, lists, bulk or auto-submitted mail)."},
    {"ReplyRequires", T_WORDS, 0, "authenticated dmarc-pass", NULL, 0, 0,
     ENUM(require_words, require_values), F(reply_requires),
     "Answer only a sender proved to be who it claims, by any one of: authenticated (the "
     "MTA's {auth_authen}: SMTP AUTH), dmarc-pass (a trusted Authentication-Results says "
     "dmarc=pass with header.from the From: domain, which aligns with the envelope "
     "sender's), dkim-aligned (a trusted dkim=pass whose header.d aligns with that From: "
     "domain), spf-pass (a trusted spf=pass with smtp.mailfrom the envelope sender's "
     "domain); any: no proof. Domains align when they share the organisational domain "
     "under the Public Suffix List (package publicsuffix). More than 32 "
     "Authentication-Results fields, or a trusted one that does not parse, prove nothing "
     "(logged authres=over-cap or authres=unparsed). Other mail is tagged as usual and "
     "logged reply=unverified. Replies to forged senders are backscatter."},
    {"AuthservID", T_STRING, K_EMPTY_OK, "", NULL, 0, 0, NULL, NULL, F(authserv_id),
     "authserv-id of the Authentication-Results fields trusted by ReplyRequires (written by "
     "OpenDKIM, OpenDMARC or rspamd on this host or the border MTA, which must remove "
     "incoming fields that claim this id). Empty: the MTA's host name (macro {j}), else "
     "the local host name."},
    {"PublicSuffixList", T_PATH, K_EMPTY_OK, "", NULL, 0, 0, NULL, NULL, F(public_suffix_list),
     "A Public Suffix List file (public_suffix_list.dat, or libpsl's DAFSA form) fetched "
     "from publicsuffix.org, for alignment in ReplyRequires. The newest of it, the "
     "packaged /usr/share/publicsuffix list and libpsl's own copy is used. Empty: the "
     "newer of those two. A file that cannot be read stops the start. Read at start-up "
     "only."},
    {"ReplyFrom", T_STRING, 0, NULL, "slop-milter <postmaster@HOSTNAME>", 0, 0, NULL, NULL,
     F(reply_from), "From: header of replies (the envelope sender is always <>)."},
    {"ReplyTemplate", T_PATH, K_EMPTY_OK, "", NULL, 0, 0, NULL, NULL, F(reply_template),
     "Template file for replies. Empty: the built-in template (milter/reply.tmpl; under "
     "another Project than kernel, the same without the kernel's wording and links)."},
    {"ReplyKeyFile", T_PATH, K_EMPTY_OK, "", NULL, 0, 0, NULL, NULL, F(reply_key_file),
     "Secret key (64 hex digits, mode 0600) that signs every reply's X-Slop-Reply-Token "
     "header, by which a reply that comes back through the milter is known as our own: it "
     "is passed untagged and never answered. Empty: reply.key in StateDir, created with a "
     "random key at the first start. A file named here must exist (hosts that share it "
     "know each other's replies). Read at start-up only."},
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
    {"MaxMemory", T_SIZE, 0, "0", NULL, 0, 1099511627776.0, NULL, NULL, F(max_memory),
     "Memory all connections together may use for messages; suffix K, M or G. A message "
     "is charged twice its size (its buffer and its scan), reserved as its bytes arrive "
     "(all at MAIL when the MTA announces SIZE=) and released when it ends or is aborted; "
     "a message that does not fit is handled by OnBusy. 0: half the MemoryMax of the "
     "daemon's cgroup (/sys/fs/cgroup/.../memory.max), or a quarter of the physical memory "
     "when there is no limit, at least 64M. The rest of MemoryMax covers the rules, the "
     "state map, thread stacks and allocator slack."},
    {"OnBusy", T_ENUM, 0, "tempfail", NULL, 0, 0, ENUM(fail_words, fail_values), F(on_busy),
     "What to do with a message that would take the buffered bytes past MaxMemory: tempfail "
     "(the MTA keeps the message and retries later, nothing is lost), or accept, reject, "
     "quarantine as OnInternalError (accept and quarantine pass it unscanned). Logged at "
     "most once a minute with the number of messages refused."},
    {"TrimMemory", T_BOOL, 0, "yes", NULL, 0, 0, NULL, NULL, F(trim_memory),
     "Return the memory of large messages to the system once they are done: message "
     "buffers get their own mappings and the heap is trimmed after each message of 1M or "
     "more. Read at start only."},
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

const size_t config_n_keys = sizeof(config_keys) / sizeof(config_keys[0]);
_Static_assert(sizeof(config_keys) / sizeof(config_keys[0]) <= CONFIG_KEYS_MAX,
               "raise CONFIG_KEYS_MAX");

/* What the sample file shows for keys whose default is computed. */
static const struct {
    size_t offset;
    const char *value;
} sample_values[] = {
    {F(socket), "local:/run/slop-milter/slop-milter.sock"},
    {F(rules_dir), "/usr/share/slop-milter/rules"},
    {F(state_dir), "/var/lib/slop-milter"},
    {F(reply_from), "slop-milter <postmaster@mail.example.org>"},
    {F(doc_base), "https://docs.kernel.org/"},
};

const char *
config_keys_sample_value(const struct key *k)
{
    for (size_t i = 0; i < sizeof(sample_values) / sizeof(sample_values[0]); i++)
        if (sample_values[i].offset == k->offset)
            return sample_values[i].value;
    return "";
}

void
config_keys_words_join(const char *const *words, char *buf, size_t size)
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

/* Format a limit without trailing zeros: 1000, 0.5, 65536. */
void
config_keys_fmt_limit(double v, char *buf, size_t size)
{
    snprintf(buf, size, "%.10g", v);
}

/* A duration limit in its largest whole unit: 1m, 366d. */
void
config_keys_fmt_duration(double v, char *buf, size_t size)
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
void
config_keys_fmt_size(double v, char *buf, size_t size)
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

const char *
config_keys_enum_word(const char *const *words, const int *values, int v)
{
    for (size_t i = 0; words[i]; i++)
        if (values[i] == v)
            return words[i];
    return "?";
}

const char *
config_failure_name(int failure)
{
    return config_keys_enum_word(oversize_words, oversize_values, failure);
}

const char *
config_mode_name(int mode)
{
    return config_keys_enum_word(mode_words, mode_values, mode);
}
