/*
 * reply.h - automatic replies: whether to answer, what to say, how to send.
 *
 * Three independent parts:
 *  - reply_suppress_reason(): the RFC 3834 section 2 checks (null sender,
 *    Auto-Submitted, List-*, Precedence, X-Auto-Response-Suppress, system
 *    addresses, our own addresses). Pure function, thread-safe.
 *  - reply_template_*() and reply_render(): a template with {placeholders}
 *    turned into one complete RFC 5322 message (LF line ends, for
 *    "sendmail -i"; the SMTP transport converts to CRLF). No header value
 *    ever carries CR or LF taken from input. A loaded template is
 *    immutable and may be shared by threads; rendering is thread-safe.
 *  - struct reply_sender: a bounded queue and one worker thread that hands
 *    each message to sendmail (fork + execv, no shell; envelope sender <>)
 *    or to an SMTP server on loopback (MAIL FROM:<>). Submitting never
 *    blocks; each job's outcome is reported through a callback that runs
 *    on the worker thread.
 *
 * One file per job: reply_suppress.c, reply_verify.c (ReplyRequires, its
 * own header), reply_token.c (our replies' signed header), reply_template.c, reply_render.c,
 * reply_sender.c (queue and worker), reply_sendmail.c and reply_smtp.c (transports), reply_text.c
 * (text helpers they share).
 *
 * The ledger (at most one reply per sender per interval) lives in
 * state/state.h; the caller claims before submitting and releases the
 * claim when the status callback reports a failure.
 */
#ifndef SLOP_REPLY_H
#define SLOP_REPLY_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include "classifier.h"

/* Caps on input-driven sizes. */
#define REPLY_ADDR_MAX 254          /* longest envelope sender answered */
#define REPLY_SUBJECT_MAX 200       /* bytes of original subject kept */
#define REPLY_MSGID_MAX 250         /* longer Message-IDs are not referenced */
#define REPLY_TEMPLATE_MAX 65536    /* bytes of template file */
#define REPLY_MESSAGE_MAX (1 << 20) /* bytes of a rendered reply */

/* ---- suppression ------------------------------------------------------ */

/* One header field of the original message (name without ':', value
 * unfolded or not; both borrowed). */
struct reply_header {
    const char *name;
    const char *value;
};

/*
 * Decide whether an automatic reply to env_sender (the SMTP MAIL FROM,
 * with or without <>) is allowed. headers are the original message's
 * header fields; own_addrs are addresses we must never answer (ReplyFrom,
 * the protected Recipients...), compared case-insensitively, with or
 * without <>. Returns NULL when a reply may be sent, else a static string
 * naming the reason, suitable for a log line, e.g. "null sender",
 * "auto-submitted", "list header", "precedence", "auto-response-suppress",
 * "system sender", "own address", "bad sender". headers and own_addrs may
 * be NULL when their count is 0.
 */
const char *reply_suppress_reason(const char *env_sender, const struct reply_header *headers,
                                  size_t n_headers, const char *const *own_addrs, size_t n_own);

/* ---- our own replies (reply_token.c) ----------------------------------- */

#define REPLY_KEY_BYTES 32
#define REPLY_TOKEN_LEN 64 /* hex digits of HMAC-SHA256 */
#define REPLY_TOKEN_HEADER "X-Slop-Reply-Token"

/* The secret our replies are signed with. */
struct reply_key {
    unsigned char bytes[REPLY_KEY_BYTES];
};

/*
 * Read the key at path (64 hex digits, mode 0600 or stricter); with
 * create, make a new random one there (mode 0600) when none exists. On
 * failure returns a negative errno and writes one line naming path and
 * what to do into err: -ENOENT, -EACCES, -EPERM (others may read it),
 * -EINVAL (not a key, or not a regular file).
 */
int reply_key_load(const char *path, bool create, struct reply_key *ret, char *err, size_t errlen);

/*
 * The key of our replies: key_file (ReplyKeyFile), which must exist, when
 * not empty; else reply.key in state_dir, made when create and missing.
 * As reply_key_load(), and -ENAMETOOLONG for a state_dir too long.
 */
int reply_key_setup(const char *key_file, const char *state_dir, bool create, struct reply_key *ret,
                    char *err, size_t errlen);

/* The token of a reply whose Message-ID and Date are written exactly as
 * given: REPLY_TOKEN_LEN hex digits and a NUL into out. 0, -EINVAL or
 * -ENOMEM. */
int reply_token_make(const struct reply_key *key, const char *message_id, const char *date,
                     char out[REPLY_TOKEN_LEN + 1]);

/* headers (a message's fields) hold one REPLY_TOKEN_HEADER that key made
 * for their Message-ID and Date: the message is one of our replies. */
bool reply_token_valid(const struct reply_key *key, const struct reply_header *headers,
                       size_t n_headers);

/* ---- template and rendering ------------------------------------------- */

/*
 * Template placeholders (anything else between braces is a load error;
 * "{{" is a literal "{"):
 *   {subject}           the original subject, as received (sanitised)
 *   {message_id}        the original Message-ID with <>, or "(none)"
 *   {score}             the score, one decimal
 *   {findings}          one paragraph per hit: description, "Evidence:"
 *                       when any, "See: <doc>" when the rule has a link
 *   {questions}         the questions a maintainer would ask, from the
 *                       rule names that hit, one "- " line each:
 *                         name contains TEST          -> how was it tested
 *                         name contains VERSION, EOL  -> which version
 *                         name contains REPRO, CRASH, TRACE
 *                                                     -> reproducer
 *                         name starts TM_ or contains THREAT, SECURITY,
 *                         CVSS, SEVERITY, IMPACT      -> trust boundary
 *                         name starts LOCK_, or contains MUTEX, KFREE,
 *                         PUT_DEVICE                  -> lifetime / locking
 *                         name contains FIXES         -> which commit
 *                         name contains SIGN_OFF      -> Signed-off-by
 *                         name starts LOG_, or contains CP_COMMIT,
 *                         CHATBOT, PLACEHOLDER, COMMENT, MARKDOWN,
 *                         STYLE, FACTS_LATE           -> own words, why
 *                       plus a generic question when none of these match
 *   {disclosure_note}   the AI-assistance note when result->disclosure,
 *                       else empty
 *   {threat_model_url}  doc base + "process/threat-model.html"
 *   {security_bugs_url} doc base + "process/security-bugs.html"
 */
struct reply_template;

/*
 * Load the template at path (UTF-8 text, at most REPLY_TEMPLATE_MAX
 * bytes), or the built-in default (the text of milter/reply.tmpl) when
 * path is NULL. On success *ret owns the template (free it with
 * reply_template_free()). On failure returns a negative errno and writes
 * "path:line: reason" to err (when errlen > 0): -EINVAL for an unknown or
 * unterminated placeholder, -EFBIG when too large, -errno when unreadable.
 */
int reply_template_load(const char *path, struct reply_template **ret, char *err, size_t errlen);
/* reply_template_load() for a profile: with path NULL and kernel false, the
 * built-in template for another project (no kernel wording, no links). */
int reply_template_load_for(const char *path, bool kernel, struct reply_template **ret, char *err,
                            size_t errlen);

struct reply_template *reply_template_free(struct reply_template *t);

struct reply_input {
    const char *from;            /* From: header value, e.g. "slop-milter <postmaster@host>";
                                  * NULL: "slop-milter <postmaster@HOSTNAME>" */
    const char *to;              /* the recipient: envelope sender, with or without <> */
    const char *subject;         /* original subject (UTF-8); NULL: result->subject */
    const char *message_id;      /* original Message-ID with or without <>;
                                  * NULL: result->message_id */
    const char *doc_base;        /* DocBase; NULL: "https://docs.kernel.org/"; "": no links */
    bool other_project;          /* Project is not kernel: questions do not name the kernel */
    const char *hostname;        /* right side of our Message-ID; NULL: gethostname() */
    time_t now;                  /* Date:; 0: time(NULL) */
    const struct reply_key *key; /* signs REPLY_TOKEN_HEADER; NULL: no token */
    const struct classifier_result *result; /* may be NULL (no findings) */
};

/*
 * Render the complete reply (headers, blank line, body; LF line ends).
 * On success *ret_msg is a NUL-terminated string the caller frees with
 * free(). Returns -EINVAL when in->to is not a usable address (same
 * checks as reply_suppress_reason()'s "bad sender"), -EMSGSIZE when the
 * result would exceed REPLY_MESSAGE_MAX, -ENOMEM.
 */
int reply_render(const struct reply_template *t, const struct reply_input *in, char **ret_msg);

/* ---- sending ---------------------------------------------------------- */

enum reply_transport {
    REPLY_TRANSPORT_SENDMAIL = 0,
    REPLY_TRANSPORT_SMTP,
};

/* Outcome of one job, passed to the status callback. All pointers are
 * borrowed for the duration of the call only. */
struct reply_status {
    const char *rcpt;   /* the reply's recipient */
    const char *id;     /* caller's job id (queue id), "" when none */
    time_t claimed_at;  /* as given to reply_sender_submit_job() */
    bool ok;            /* handed to the MTA */
    const char *reason; /* on failure: what went wrong, e.g.
                         * "sendmail exited with status 75: <its words>",
                         * "sendmail timed out after 30s, killed",
                         * "smtp RCPT TO: 550 ...", "shutdown";
                         * on success: "sent" */
};

/* Runs on the worker thread, also for jobs dropped at shutdown (while
 * reply_sender_free() waits); must be thread-safe and must not call back
 * into the sender. */
typedef void reply_status_fn(void *ctx, const struct reply_status *status);

struct reply_sender_config {
    enum reply_transport transport;
    const char *sendmail_path;  /* NULL: "/usr/sbin/sendmail" */
    const char *smtp_server;    /* "host:port", "[v6addr]:port" or "host"
                                 * (port 25); NULL: "127.0.0.1:25" */
    bool smtp_allow_remote;     /* false: the server must be a loopback address */
    const char *helo_name;      /* NULL: gethostname() */
    unsigned queue_max;         /* jobs waiting; 0: 100 */
    unsigned timeout_s;         /* per send; 0: 30 */
    reply_status_fn *status_fn; /* may be NULL */
    void *status_ctx;
};

struct reply_sender;

/*
 * Start a sender with its worker thread. cfg is copied (strings too).
 * Returns 0, -EINVAL for a bad configuration (e.g. a non-loopback
 * smtp_server without smtp_allow_remote, an unparsable port), -ENOMEM,
 * or a negative errno from pthread_create.
 */
int reply_sender_new(const struct reply_sender_config *cfg, struct reply_sender **ret);

/*
 * Queue one message for rcpt; never blocks on I/O. rcpt and msg are
 * copied. id (may be NULL) and claimed_at are passed back in the status.
 * Returns 0, -EAGAIN when the queue is full, -EINVAL when rcpt is not a
 * usable address or msg is empty/too large, -ESHUTDOWN after free began,
 * -ENOMEM. No status callback is made for a job that was not queued.
 */
int reply_sender_submit_job(struct reply_sender *s, const char *rcpt, const char *msg,
                            const char *id, time_t claimed_at);

/* Same with id NULL and claimed_at time(NULL). */
int reply_sender_submit(struct reply_sender *s, const char *rcpt, const char *msg);

/*
 * Stop accepting jobs and let the worker drain the queue: it starts new
 * sends for at most timeout_s seconds more, so this returns within about
 * twice the send timeout. Jobs still queued then are reported as failed
 * ("shutdown"). Accepts NULL; returns NULL.
 */
struct reply_sender *reply_sender_free(struct reply_sender *s);

#endif
