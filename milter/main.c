/*
 * main.c - slop-milter's entry point: options, start-up, the signal
 * thread, smfi_main(), and the offline modes (-n, -t).
 *
 * Start-up order matters: configuration and rules are checked first (so
 * -n and a bad file fail before anything is touched), the socket and the
 * PID file are opened while still root, then the process detaches, drops
 * privileges, opens the state and starts threads. Signals are blocked in
 * every thread; one thread takes them with sigwait(): SIGUSR1 reloads,
 * SIGTERM and SIGINT stop libmilter.
 *
 * Threading: the values in `opts` are set before any thread starts and
 * are read-only afterwards.
 */
#include <errno.h>
#include <getopt.h>
#include <grp.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <pwd.h>
#include <signal.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sysexits.h>
#include <time.h>
#include <unistd.h>

#include <libmilter/mfapi.h>

#include "buildtree.h"
#include "callbacks.h"
#include "classifier.h"
#include "config.h"
#include "conn.h"
#include "file_read.h"
#include "gate.h"
#include "log.h"
#include "membudget.h"
#include "metrics_http.h"
#include "postfix_line.h"
#include "reply_dispatch.h"
#include "reply_verify.h"
#include "reply.h"
#include "scan_job.h"
#include "shared_state.h"
#include "snapshot.h"
#include "sockopt.h"
#include "state.h"

#ifndef SLOP_VERSION
#define SLOP_VERSION CLASSIFIER_VERSION
#endif

#define MAX_CLI_RCPTS 64
#define OFFLINE_READ_SLACK 65536 /* bytes read past MaxMessageSize to notice oversize */

static struct {
    const char *config_path;
    struct config_paths paths;
    bool foreground;
    bool check_only;
    bool offline;
    const char *from;
    const char *rcpts[MAX_CLI_RCPTS];
    size_t n_rcpts;
} opts;

static atomic_bool stopping;
static sigset_t daemon_sigs; /* taken by signal_thread() */

/*
 * Block before any thread starts (GLib may start some while the rules
 * load), so that every thread inherits the mask. SIGHUP is blocked too
 * but left to libmilter's own signal thread, which stops on it.
 */
static void
block_signals(void)
{
    sigset_t all;

    sigemptyset(&daemon_sigs);
    sigaddset(&daemon_sigs, SIGUSR1);
    sigaddset(&daemon_sigs, SIGTERM);
    sigaddset(&daemon_sigs, SIGINT);
    all = daemon_sigs;
    sigaddset(&all, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &all, NULL);
    signal(SIGPIPE, SIG_IGN);
}

/* What shutdown has to undo; set by run_daemon() before threads start. */
static struct {
    struct state *st;
    struct reply_sender *sender;
    struct metrics_http *metrics; /* MetricsSocket's server; reads st */
    struct reply_key reply_key;   /* signs our replies (ReplyKeyFile) */
    const char *sock_path;
    const char *pid_file;
    atomic_flag cleaned;
    pthread_mutex_t lock;
    pthread_cond_t cv;
    bool main_done;    /* smfi_main() returned */
    bool state_nosync; /* StateSyncInterval was not 0 at start: the signal thread syncs */
} rt = {
    .cleaned = ATOMIC_FLAG_INIT, .lock = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};

#define STOP_GRACE_MS 400 /* how long smfi_main() may take to return after smfi_stop() */

static void
usage(FILE *f)
{
    fprintf(f, "usage: slop-milter [-f] [-c FILE]\n"
               "       slop-milter -n [-c FILE]\n"
               "       slop-milter -t [-c FILE] [--from ADDR] [--rcpt ADDR]... FILE...\n"
               "       slop-milter -V | -h\n"
               "\n"
               "  -c FILE   configuration file (default: none, built-in defaults)\n"
               "  -f        stay in the foreground and log to standard error\n"
               "  -n        check the configuration, rules and reply template, then exit\n"
               "  -t        scan message files offline and print the MTA actions\n"
               "  --from ADDR, --rcpt ADDR   envelope for -t (default: the From: address,\n"
               "            no recipients)\n"
               "  -V        print the version\n"
               "  -h        print this help\n");
}

static void
diag_stderr(void *ctx, const char *text)
{
    (void)ctx;
    fprintf(stderr, "slop-milter: %s\n", text);
}

static void
diag_log(void *ctx, const char *text)
{
    (void)ctx;
    log_error("%s", text);
}

/* The source tree's rules when this binary runs from its build tree. */
static void
choose_rules_dir(void)
{
    static char dir[PATH_MAX];
    const char *src = buildtree_source();

    if (src != NULL && snprintf(dir, sizeof(dir), "%s/rules", src) < (int)sizeof(dir))
        opts.paths.rules_dir = dir;
}

/* ---- offline mode (-t) ------------------------------------------------- */

/* Without --from, the reply preview goes to the From: header's address. */
static void
sender_from_header(struct msg *m)
{
    for (size_t i = 0; i < m->n_headers; i++) {
        if (strcasecmp(m->headers[i].name, "From") == 0) {
            const char *v = m->headers[i].value;
            const char *lt = strrchr(v, '<');
            char buf[CONN_ADDR_MAX];

            msg_set_sender(m, conn_addr_strip(lt ? lt : v, buf, sizeof(buf)));
            return;
        }
    }
}

static void
print_indented(const char *text)
{
    const char *p = text;

    while (*p) {
        size_t len = strcspn(p, "\n");

        printf("  %.*s\n", (int)len, p);
        p += len;
        if (*p == '\n')
            p++;
    }
}

static int
offline_one(struct snapshot *snap, const char *path)
{
    const struct config *cfg = snap->cfg;
    struct decision d;
    struct msg *m = NULL;
    char *raw = NULL;
    size_t len = 0;
    int r;

    printf("file: %s\n", path);
    r = file_read(path, (size_t)cfg->max_message_size + OFFLINE_READ_SLACK, FILE_READ_CUT, &raw,
                  &len);
    if (r < 0) {
        char eb[128];

        printf("error: %s\n", log_strerror(r, eb, sizeof(eb)));
        return r;
    }
    m = msg_new((size_t)cfg->max_message_size);
    if (m == NULL) {
        free(raw);
        return -ENOMEM;
    }
    m->max_headers = cfg->max_headers;
    m->max_header_size = (size_t)cfg->max_header_size;
    for (size_t i = 0; i < opts.n_rcpts; i++) {
        bool protected = config_list_empty(&cfg->recipients) ||
                         config_list_match(&cfg->recipients, opts.rcpts[i]);

        msg_add_rcpt(m, opts.rcpts[i], protected);
    }
    msg_load_raw(m, raw, len);
    free(raw);
    if (opts.from)
        msg_set_sender(m, opts.from);
    else
        sender_from_header(m);
    printf("envelope: from=<%s>", m->mail_from ? m->mail_from : "");
    for (size_t i = 0; i < m->n_rcpts; i++)
        printf(" rcpt=<%s>%s", m->rcpts[i].addr, m->rcpts[i].protected ? "" : "(not protected)");
    printf("\n");

    if (m->mail_from && *m->mail_from && config_list_match(&cfg->allow_senders, m->mail_from)) {
        printf("skipped: sender in AllowSenders\nresult: accept\n");
        goto out;
    }
    if (opts.n_rcpts > 0 && m->n_protected == 0) {
        printf("skipped: no recipient in Recipients\nresult: accept\n");
        goto out;
    }

    decision_init(&d);
    callbacks_decide(snap, m, NULL, NULL, &d);
    if (d.res) {
        printf("scan: kind=%s score=%.1f required=%.1f action=%s hits=%zu%s\n",
               classifier_kind_name(d.res->kind), d.res->score, d.res->required,
               classifier_action_name(d.res->action), d.res->n_hits,
               d.res->truncated ? " truncated" : "");
    } else
        printf("scan: not scanned (%s)\n", verdict_cause_name(d.plan.cause));
    verdict_print(&d.plan, stdout);
    if (d.plan.reply) {
        if (d.reply_suppressed)
            printf("reply-to: <%s> (suppressed: %s)\n", m->mail_from ? m->mail_from : "",
                   d.reply_suppressed);
        else if (d.reply_unverified)
            printf("reply-to: <%s> (unverified: ReplyRequires not met%s%s)\n", m->mail_from,
                   d.reply_refusal ? ", Authentication-Results " : "",
                   d.reply_refusal ? d.reply_refusal : "");
        else {
            printf("reply-to: <%s> (would be sent)\n", m->mail_from);
            print_indented(d.reply_text);
        }
    }
    printf("result: %s\n", verdict_result_name(d.plan.result));
    decision_release(&d);
out:
    msg_free(m);
    return 0;
}

/*
 * The key of our replies into *ret: ReplyKeyFile, which must exist, else
 * reply.key in StateDir, made (mode 0600) when create and missing.
 * Returns 0, or a negative errno after writing why into err.
 */
static int
reply_key_setup(const struct config *cfg, bool create, struct reply_key *ret, char *err,
                size_t errlen)
{
    char path[PATH_MAX];

    if (cfg->reply_key_file[0] != '\0')
        return reply_key_load(cfg->reply_key_file, false, ret, err, errlen);
    if (snprintf(path, sizeof(path), "%s/reply.key", cfg->state_dir) >= (int)sizeof(path)) {
        snprintf(err, errlen, "StateDir '%s' is too long", cfg->state_dir);
        return -ENAMETOOLONG;
    }
    return reply_key_load(path, create, ret, err, errlen);
}

/*
 * The daemon's state, read-only, when StateDir holds one: -t then sees
 * the same indices and history without changing them. NULL otherwise.
 */
static struct state *
offline_state(const struct config *cfg)
{
    struct state *st = NULL;
    char path[PATH_MAX], eb[400];
    struct stat sb;
    int r;

    if (snprintf(path, sizeof(path), "%s/data.mdb", cfg->state_dir) >= (int)sizeof(path) ||
        stat(path, &sb) != 0)
        return NULL;
    r = state_open(cfg->state_dir, STATE_READONLY, 0, &st);
    if (r == -EUCLEAN) {
        state_open_strerror(cfg->state_dir, r, eb, sizeof(eb));
        fprintf(stderr, "slop-milter: StateDir: %s, scanning without it\n", eb);
        return NULL;
    }
    if (r < 0) {
        state_open_strerror(cfg->state_dir, r, eb, sizeof(eb));
        fprintf(stderr, "slop-milter: cannot read StateDir '%s': %s, scanning without it\n",
                cfg->state_dir, eb);
        return NULL;
    }
    return st;
}

static int
offline(struct snapshot *snap, char **files, int n)
{
    struct state *st;
    char err[PATH_MAX + 128];
    int status = EX_OK;

    if (n == 0) {
        fprintf(stderr, "slop-milter: -t needs at least one message file\n");
        return EX_USAGE;
    }
    st = offline_state(snap->cfg);
    callbacks_setup(st, false, NULL);
    /* -t knows our replies when the key is there; it never makes one. */
    if (reply_key_setup(snap->cfg, false, &rt.reply_key, err, sizeof(err)) == 0)
        callbacks_set_reply_key(&rt.reply_key);
    for (int i = 0; i < n; i++) {
        if (i > 0)
            printf("\n");
        if (offline_one(snap, files[i]) < 0)
            status = EX_NOINPUT;
    }
    callbacks_setup(NULL, false, NULL);
    callbacks_set_reply_key(NULL);
    if (scan_job_state_users() == 0)
        state_close(st);
    return status;
}

/* ---- daemon ------------------------------------------------------------ */

/*
 * Check StateDir's data file before anything maps it: LMDB would fault on
 * a file cut short, start an emptied one over without a word, and abort
 * the daemon on a damaged page (so its pages are walked, when they are not
 * known whole). Sets *ret_without when OnStateError lets the daemon run
 * without state. Returns EX_OK, or EX_CANTCREAT to refuse. A file that
 * cannot be read at all is left for state_open() to report.
 */
static int
state_file_ok(const struct config *cfg, bool *ret_without)
{
    struct state_check chk;
    uint32_t schema;
    char why[400];
    const char *how;
    int r;

    *ret_without = false;
    r = state_check_pages(cfg->state_dir, &chk);
    /* A state from a newer release is no damage: refused whatever
     * OnStateError says, in the words slopctl uses. */
    if (r == 0 && chk.present && state_schema_read(cfg->state_dir, &schema) == 0 &&
        schema > STATE_SCHEMA_VERSION) {
        state_open_strerror(cfg->state_dir, -EPROTO, why, sizeof(why));
        log_error("cannot open StateDir '%s': %s", cfg->state_dir, why);
        return EX_CANTCREAT;
    }
    if (r != -EUCLEAN)
        return EX_OK;
    switch (cfg->on_state_error) {
    case CONFIG_STATE_RUN_WITHOUT:
        how = "running without state (OnStateError run-without): no replies, no findings "
              "that need it";
        break;
    case CONFIG_STATE_TEMPFAIL:
        how = "answering every message 4xx (OnStateError tempfail): the MTA keeps them queued";
        break;
    case CONFIG_STATE_ACCEPT:
        how = "accepting every message unscanned (OnStateError accept)";
        break;
    default:
        log_error("StateDir: data.mdb damaged (%s) in '%s', refusing to start "
                  "(see slopctl db check and db recover, or OnStateError)",
                  chk.reason, cfg->state_dir);
        return EX_CANTCREAT;
    }
    log_error("StateDir: data.mdb damaged (%s) in '%s', %s; see slopctl db check and db recover",
              chk.reason, cfg->state_dir, how);
    *ret_without = true;
    return EX_OK;
}

/* LMDB met a damaged page while serving: it aborts the daemon when this
 * returns. The damage is recorded; the next start applies OnStateError. */
static void
state_damaged_now(const char *dir, const char *reason)
{
    log_error("StateDir: data.mdb damaged (%s) in '%s', stopping; the next start applies "
              "OnStateError (see slopctl db check and db recover)",
              reason, dir);
}

struct ids {
    bool set;
    uid_t uid;
    gid_t gid;
    char user[64];
};

static int
ids_resolve(const char *spec, struct ids *ret)
{
    char user[64], buf[16384];
    const char *colon;
    struct passwd pw, *pwp = NULL;
    size_t ul;

    memset(ret, 0, sizeof(*ret));
    if (spec == NULL || *spec == '\0')
        return 0;
    colon = strchr(spec, ':');
    ul = colon ? (size_t)(colon - spec) : strlen(spec);
    if (ul >= sizeof(user))
        return -ENAMETOOLONG;
    memcpy(user, spec, ul);
    user[ul] = '\0';
    if (getpwnam_r(user, &pw, buf, sizeof(buf), &pwp) != 0 || pwp == NULL) {
        fprintf(stderr, "slop-milter: UserID: no user '%s'\n", user);
        return -ENOENT;
    }
    ret->uid = pw.pw_uid;
    ret->gid = pw.pw_gid;
    if (colon) {
        struct group gr, *grp = NULL;

        if (getgrnam_r(colon + 1, &gr, buf, sizeof(buf), &grp) != 0 || grp == NULL) {
            fprintf(stderr, "slop-milter: UserID: no group '%s'\n", colon + 1);
            return -ENOENT;
        }
        ret->gid = gr.gr_gid;
    }
    snprintf(ret->user, sizeof(ret->user), "%s", user);
    ret->set = true;
    return 0;
}

/* The user the daemon runs as: UserID when started as root, else the
 * caller (drop_privileges() ignores UserID then). */
static uid_t
ids_run_uid(const struct ids *ids)
{
    return ids->set && geteuid() == 0 ? ids->uid : geteuid();
}

static gid_t
ids_run_gid(const struct ids *ids)
{
    return ids->set && geteuid() == 0 ? ids->gid : getegid();
}

static int
drop_privileges(const struct ids *ids)
{
    if (!ids->set) {
        if (geteuid() == 0)
            log_warning("running as root: UserID is not set, so privileges are not dropped "
                        "(set UserID, e.g. slop-milter)");
        return 0;
    }
    if (geteuid() != 0) {
        if (geteuid() != ids->uid)
            log_warning("UserID '%s' ignored: not started as root", ids->user);
        return 0;
    }
    if (initgroups(ids->user, ids->gid) != 0 || setgid(ids->gid) != 0 || setuid(ids->uid) != 0) {
        char eb[128];

        log_error("cannot change to user '%s': %s, refusing to run as root", ids->user,
                  log_strerror(errno, eb, sizeof(eb)));
        return -EPERM;
    }
    if (ids->uid != 0 && setuid(0) == 0) {
        log_error("could regain root after changing to '%s', refusing to run", ids->user);
        return -EPERM;
    }
    return 0;
}

/* Postfix's queue directory: `postconf -h queue_directory` (which reads
 * MAIL_CONFIG, so a second instance answers for itself), else Postfix's
 * default. */
static void
postfix_queue_dir(char *buf, size_t size)
{
    /* Absolute paths only: the daemon never searches PATH (exec*p). */
    static const char *const progs[] = {"/usr/sbin/postconf", "/usr/bin/postconf"};
    char *argv[] = {"postconf", "-h", "queue_directory", NULL};
    posix_spawn_file_actions_t fa;
    size_t got = 0, i;
    int fds[2], st = 1;
    pid_t pid = -1;
    char out[PATH_MAX];
    ssize_t n;

    snprintf(buf, size, "%s", POSTFIX_LINE_QUEUE_DIR);
    if (pipe2(fds, O_CLOEXEC) < 0)
        return;
    if (posix_spawn_file_actions_init(&fa) != 0) {
        close(fds[0]);
        close(fds[1]);
        return;
    }
    posix_spawn_file_actions_adddup2(&fa, fds[1], STDOUT_FILENO);
    posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
    for (i = 0; i < sizeof(progs) / sizeof(progs[0]) && pid < 0; i++)
        if (posix_spawn(&pid, progs[i], &fa, NULL, argv, environ) != 0)
            pid = -1;
    posix_spawn_file_actions_destroy(&fa);
    close(fds[1]);
    if (pid < 0) {
        close(fds[0]);
        return;
    }
    while (got < sizeof(out) - 1 && (n = read(fds[0], out + got, sizeof(out) - 1 - got)) != 0) {
        if (n < 0 && errno != EINTR)
            break;
        if (n > 0)
            got += (size_t)n;
    }
    close(fds[0]);
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    while (got > 0 && (out[got - 1] == '\n' || out[got - 1] == ' '))
        got--;
    out[got] = '\0';
    if (WIFEXITED(st) && WEXITSTATUS(st) == 0 && out[0] == '/' && strchr(out, '\n') == NULL)
        snprintf(buf, size, "%s", out);
}

/* Whether Postfix's user may connect to the unix socket PATH, owned as
 * SOCK says: one warning line on stderr naming the fix when it may not.
 * No postfix user: nothing to check (Sendmail, or Postfix elsewhere). */
static void
postfix_check_access(const char *path, const struct postfix_line_sock *sock)
{
    char pwbuf[16384], grbuf[16384], gname[64], line[PATH_MAX + 512];
    struct passwd pw, *pwp = NULL;
    struct group gr, *grp = NULL;
    gid_t groups[256];
    int ng = (int)(sizeof(groups) / sizeof(groups[0]));
    enum postfix_line_access a;

    if (getpwnam_r("postfix", &pw, pwbuf, sizeof(pwbuf), &pwp) != 0 || pwp == NULL)
        return;
    if (getgrouplist(pw.pw_name, pw.pw_gid, groups, &ng) < 0)
        ng = (int)(sizeof(groups) / sizeof(groups[0]));
    a = postfix_line_access(sock, pw.pw_uid, groups, (size_t)ng);
    if (a == POSTFIX_ACCESS_OK)
        return;
    if (getgrgid_r(sock->gid, &gr, grbuf, sizeof(grbuf), &grp) == 0 && grp != NULL)
        snprintf(gname, sizeof(gname), "%s", gr.gr_name);
    else
        snprintf(gname, sizeof(gname), "%lu", (unsigned long)sock->gid);
    if (postfix_line_warning(a, pw.pw_name, path, sock, gname, line, sizeof(line)) == 0)
        fprintf(stderr, "slop-milter: %s\n", line);
}

/* The main.cf lines for this socket (stdout), as the chroot sees it, and
 * a warning when Postfix's user could not connect. MADE: the socket
 * exists and its owner and mode are read; else they are foreseen from
 * UserID and SocketMode, as run_daemon() will set them. */
static void
postfix_print(const struct config *cfg, const struct ids *ids, bool made)
{
    char qdir[PATH_MAX], line[3 * PATH_MAX + 512];
    const char *path = postfix_line_socket_path(cfg->socket);
    struct postfix_line_sock sock = {ids_run_uid(ids), ids_run_gid(ids), cfg->socket_mode};
    struct stat sb;

    postfix_queue_dir(qdir, sizeof(qdir));
    if (postfix_line_write(cfg->socket, qdir, line, sizeof(line)) < 0)
        return;
    printf("# Postfix main.cf:\n%s"
           "non_smtpd_milters = $smtpd_milters\n"
           "milter_default_action = accept\n",
           line);
    fflush(stdout);
    if (path == NULL)
        return;
    if (made && stat(path, &sb) == 0) {
        sock.uid = sb.st_uid;
        sock.gid = sb.st_gid;
        sock.mode = sb.st_mode & 07777;
    }
    postfix_check_access(path, &sock);
}

static int
write_pid_file(const char *path)
{
    char line[32];
    int fd, n;

    if (path == NULL || *path == '\0')
        return 0;
    fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd < 0)
        return -errno;
    n = snprintf(line, sizeof(line), "%ld\n", (long)getpid());
    if (write(fd, line, (size_t)n) != n) {
        int e = errno ? errno : EIO;

        close(fd);
        return -e;
    }
    return close(fd) < 0 ? -errno : 0;
}

static bool
str_changed(const char *a, const char *b)
{
    return strcmp(a ? a : "", b ? b : "") != 0;
}

/* Keys read only at start-up: say so when a reload changes them. */
static void
warn_restart_keys(const struct config *old, const struct config *new)
{
    if (str_changed(old->metrics_socket, new->metrics_socket))
        log_warning("reload: MetricsSocket takes effect on restart only");
    if (str_changed(old->public_suffix_list, new->public_suffix_list))
        log_warning("reload: PublicSuffixList takes effect on restart only");
    if (str_changed(old->socket, new->socket) || old->socket_mode != new->socket_mode ||
        str_changed(old->user_id, new->user_id) || str_changed(old->pid_file, new->pid_file) ||
        old->umask != new->umask || str_changed(old->state_dir, new->state_dir) ||
        old->reply_transport != new->reply_transport ||
        str_changed(old->sendmail_path, new->sendmail_path) ||
        str_changed(old->smtp_server, new->smtp_server) ||
        (old->state_sync_interval == 0) != (new->state_sync_interval == 0))
        log_warning("reload: Socket, SocketMode, UserID, PidFile, UMask, StateDir, "
                    "ReplyTransport, SendmailPath, SMTPServer and whether StateSyncInterval is 0 "
                    "take effect on restart only");
    if (old->max_connections != new->max_connections || old->read_timeout != new->read_timeout)
        log_warning("reload: MaxConnections and ReadTimeout take effect on restart only");
}

static void
reload(void)
{
    struct snapshot *fresh = NULL, *old;
    int r;

    r = snapshot_build(opts.config_path, &opts.paths, diag_log, NULL, &fresh);
    if (r < 0) {
        log_error("reload failed, keeping the running configuration and rules");
        return;
    }
    old = snapshot_current();
    if (old) {
        warn_restart_keys(old->cfg, fresh->cfg);
        snapshot_unref(old);
    }
    log_setup(fresh->cfg->syslog && !opts.foreground, fresh->cfg->syslog_facility, opts.foreground);
    log_info("reloaded %s: %zu rules from %s", opts.config_path ? opts.config_path : "defaults",
             classifier_rule_count(fresh->classifier), fresh->cfg->rules_dir);
    snapshot_install(fresh);
}

/*
 * Runs once, from whichever thread finishes first. release is false when
 * connection threads may still be running: then nothing they use is
 * freed (LMDB needs no close to stay consistent).
 */
static void
daemon_cleanup(bool release)
{
    if (atomic_flag_test_and_set(&rt.cleaned))
        return;
    if (rt.sock_path)
        unlink(rt.sock_path);
    if (rt.pid_file && *rt.pid_file && unlink(rt.pid_file) < 0 && errno != ENOENT) {
        char eb[128];

        log_warning("cannot remove PidFile '%s': %s (its directory must be writable by UserID)",
                    rt.pid_file, log_strerror(errno, eb, sizeof(eb)));
    }
    /* Whether or not the state is closed below: the page cache would
     * keep its writes past our exit, but not past a power loss. */
    if (rt.st != NULL && rt.state_nosync)
        (void)state_sync(rt.st);
    if (!release)
        return;
    callbacks_setup(NULL, false, NULL);
    /* Before the state closes: a scrape reads its sizes. */
    rt.metrics = metrics_http_free(rt.metrics);
    rt.sender = reply_sender_free(rt.sender);
    /* A scan that timed out may still read it; exit closes it then. */
    if (scan_job_state_users() == 0)
        rt.st = state_close(rt.st);
}

/*
 * libmilter's listener notices smfi_stop() only at its next poll timeout,
 * up to 5 s later; a stop must not take that long. Connections still open then end
 * with the MTA applying milter_default_action, so no mail is lost.
 */
static void
wait_for_main_or_exit(void)
{
    struct timespec deadline;
    bool done;

    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_nsec += STOP_GRACE_MS * 1000000L;
    if (deadline.tv_nsec >= 1000000000L) {
        deadline.tv_sec++;
        deadline.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&rt.lock);
    while (!rt.main_done)
        if (pthread_cond_timedwait(&rt.cv, &rt.lock, &deadline) != 0)
            break;
    done = rt.main_done;
    pthread_mutex_unlock(&rt.lock);
    if (done)
        return;
    daemon_cleanup(false);
    log_info("stopped");
    /* Other threads still run: skip atexit handlers and destructors. */
    fflush(NULL);
    _exit(EX_OK);
}

static void *
stop_thread(void *arg)
{
    (void)arg;
    if (smfi_stop() != MI_SUCCESS)
        log_error("smfi_stop failed");
    return NULL;
}

/*
 * libmilter runs its own thread that also waits for SIGTERM and SIGINT;
 * whichever thread the kernel picks gets the signal. mi_stop() (exported
 * by every libmilter since 8.12, though not in mfapi.h) tells us when
 * libmilter's thread took it, so the stop keeps its deadline either way.
 */
extern int mi_stop(void) __attribute__((weak));

#define SIGNAL_POLL_MS 200

/*
 * Under StateSyncInterval the state's commits skip their fsync; flush
 * them here, off the path of any message. A failed flush is retried at
 * the next tick: the writes stay in the page cache meanwhile.
 */
static void
state_sync_tick(struct timespec *last)
{
    struct snapshot *snap;
    struct timespec now;
    uint32_t interval;
    int r;

    if (!rt.state_nosync || rt.st == NULL)
        return;
    snap = snapshot_current();
    interval = snap != NULL ? snap->cfg->state_sync_interval : 0;
    snapshot_unref(snap);
    clock_gettime(CLOCK_MONOTONIC, &now);
    if (now.tv_sec - last->tv_sec < (time_t)interval)
        return;
    *last = now;
    r = state_sync(rt.st);
    if (r < 0) {
        char eb[128];

        log_error("cannot flush StateDir to disk: %s", log_strerror(r, eb, sizeof(eb)));
    }
}

static void *
signal_thread(void *arg)
{
    const struct timespec poll = {0, SIGNAL_POLL_MS * 1000000L};
    struct timespec last_sync;
    sigset_t *set = arg;

    clock_gettime(CLOCK_MONOTONIC, &last_sync);
    for (;;) {
        int sig = sigtimedwait(set, NULL, &poll);

        if (atomic_load(&stopping))
            return NULL;
        state_sync_tick(&last_sync);
        if (sig == SIGUSR1) {
            reload();
            continue;
        }
        if (sig < 0) {
            if (mi_stop == NULL || mi_stop() == 0)
                continue;
            log_info("libmilter is stopping");
        } else {
            log_info("got signal %d, stopping", sig);
            atomic_store(&stopping, true);
            /* smfi_stop() waits for the listener's lock, held for seconds
             * while it polls; call it on its own thread and keep the clock. */
            pthread_attr_t attr;
            pthread_t tid;

            pthread_attr_init(&attr);
            pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
            if (pthread_create(&tid, &attr, stop_thread, NULL) != 0)
                stop_thread(NULL);
            pthread_attr_destroy(&attr);
        }
        atomic_store(&stopping, true);
        wait_for_main_or_exit();
        return NULL;
    }
}

static int
run_daemon(struct snapshot *snap)
{
    const struct config *cfg = snap->cfg;
    struct reply_sender_config rsc = {0};
    struct config_error cerr;
    char eb[128], keyerr[PATH_MAX + 128];
    pthread_t sig_tid;
    bool sig_started = false;
    const char *sock_path;
    struct ids ids;
    char *conn_spec;
    bool without_state;
    char redis_password[CONFIG_REDIS_PASSWORD_MAX];
    int r, metrics_fd = -1, status = EX_OK;

    if (ids_resolve(cfg->user_id, &ids) < 0)
        return EX_NOUSER;
    /* Before detaching, so that a refusal reaches the caller's status. */
    if (config_check_state_owner(cfg, ids_run_uid(&ids), ids_run_gid(&ids), &cerr) < 0) {
        fprintf(stderr, "slop-milter: %s\n", cerr.text);
        return EX_CANTCREAT;
    }
    status = state_file_ok(cfg, &without_state);
    if (status != EX_OK)
        return status;
    umask((mode_t)cfg->umask);

    conn_spec = strdup(cfg->socket);
    if (conn_spec == NULL)
        return EX_OSERR;
    if (smfi_setconn(conn_spec) != MI_SUCCESS || callbacks_register() < 0) {
        fprintf(stderr, "slop-milter: cannot set up libmilter for '%s'\n", cfg->socket);
        free(conn_spec);
        return EX_SOFTWARE;
    }
    if (smfi_opensocket(true) != MI_SUCCESS) {
        fprintf(stderr, "slop-milter: cannot open socket '%s'\n", cfg->socket);
        free(conn_spec);
        return EX_UNAVAILABLE;
    }
    sockopt_listen_nodelay();
    sock_path = postfix_line_socket_path(cfg->socket);
    rt.sock_path = sock_path;
    rt.pid_file = cfg->pid_file;
    if (sock_path) {
        if (chmod(sock_path, (mode_t)cfg->socket_mode) != 0)
            fprintf(stderr, "slop-milter: chmod '%s': %s\n", sock_path,
                    log_strerror(errno, eb, sizeof(eb)));
        if (ids.set && geteuid() == 0 && chown(sock_path, ids.uid, ids.gid) != 0)
            fprintf(stderr, "slop-milter: chown '%s': %s\n", sock_path,
                    log_strerror(errno, eb, sizeof(eb)));
    }

    /* Bound now, so that a taken port reaches the caller's status; served
     * only once privileges are dropped. */
    if (*cfg->metrics_socket != '\0') {
        r = metrics_http_listen(cfg->metrics_socket, &metrics_fd);
        if (r < 0) {
            fprintf(stderr, "slop-milter: cannot listen on MetricsSocket '%s': %s\n",
                    cfg->metrics_socket,
                    r == -EINVAL ? "not inet:port@host or inet6:port@host"
                                 : log_strerror(r, eb, sizeof(eb)));
            status = r == -EINVAL ? EX_CONFIG : EX_UNAVAILABLE;
            goto out;
        }
    }

    /* Detached without syslog, every later message (a refused StateDir
     * included) would go nowhere: say so while stderr is still seen. */
    if (!opts.foreground && !cfg->syslog)
        fprintf(stderr, "slop-milter: warning: Syslog is no and -f is not given: once detached, "
                        "nothing is logged (set Syslog yes, or run with -f)\n");
    if (!opts.foreground && daemon(0, 0) != 0) {
        fprintf(stderr, "slop-milter: cannot detach: %s\n", log_strerror(errno, eb, sizeof(eb)));
        status = EX_OSERR;
        goto out;
    }
    log_setup(cfg->syslog && !opts.foreground, cfg->syslog_facility, opts.foreground);
    if (reply_verify_load_list(cfg->public_suffix_list) < 0 &&
        (cfg->reply_requires & (CONFIG_REQUIRE_DMARC_PASS | CONFIG_REQUIRE_DKIM_ALIGNED)) != 0)
        log_warning("no Public Suffix List (install publicsuffix): dmarc-pass and dkim-aligned "
                    "in ReplyRequires prove nothing");

    r = write_pid_file(cfg->pid_file);
    if (r < 0) {
        log_error("cannot write PidFile '%s': %s", cfg->pid_file, log_strerror(r, eb, sizeof(eb)));
        status = EX_CANTCREAT;
        goto out;
    }
    /* Before the privileges go: the file may be readable by root only. */
    r = cfg->state_backend == CONFIG_BACKEND_REDIS
            ? config_redis_password(cfg->redis_password_file, redis_password,
                                    sizeof(redis_password))
            : 0;
    if (r < 0) {
        log_error("cannot read RedisPasswordFile '%s': %s", cfg->redis_password_file,
                  log_strerror(r, eb, sizeof(eb)));
        status = EX_NOINPUT;
        goto out;
    }
    if (drop_privileges(&ids) < 0) {
        status = EX_NOPERM;
        goto out;
    }

    rt.state_nosync = cfg->state_sync_interval > 0;
    r = without_state ? 0
                      : state_open(cfg->state_dir, rt.state_nosync ? STATE_NOSYNC : 0, 0, &rt.st);
    if (r == -EUCLEAN) {
        /* Damaged since the first look, or readable only as UserID. */
        status = state_file_ok(cfg, &without_state);
        if (status != EX_OK)
            goto out;
    } else if (r < 0) {
        char why[400], who[160];

        state_open_strerror(cfg->state_dir, r, why, sizeof(why));
        config_owner_name(geteuid(), getegid(), who, sizeof(who));
        if (r == -EACCES)
            log_error("cannot open StateDir '%s': %s: the daemon runs as %s; run: chown -R %s %s",
                      cfg->state_dir, why, who, who, cfg->state_dir);
        else
            log_error("cannot open StateDir '%s': %s", cfg->state_dir, why);
        status = EX_CANTCREAT;
        goto out;
    }
    r = shared_state_attach(cfg, redis_password, rt.st);
    explicit_bzero(redis_password, sizeof(redis_password));
    if (r < 0) {
        log_error("StateBackend redis: bad RedisServer '%s' or RedisPrefix '%s'", cfg->redis_server,
                  cfg->redis_prefix);
        status = EX_CONFIG;
        goto out;
    }
    rsc.transport = cfg->reply_transport == CONFIG_TRANSPORT_SMTP ? REPLY_TRANSPORT_SMTP
                                                                  : REPLY_TRANSPORT_SENDMAIL;
    rsc.sendmail_path = cfg->sendmail_path;
    rsc.smtp_server = cfg->smtp_server;
    rsc.status_fn = reply_dispatch_status;
    rsc.status_ctx = rt.st;
    r = reply_sender_new(&rsc, &rt.sender);
    if (r < 0) {
        log_error("cannot start the reply sender: %s", log_strerror(r, eb, sizeof(eb)));
        status = r == -EINVAL ? EX_CONFIG : EX_OSERR;
        goto out;
    }
    r = reply_key_setup(cfg, true, &rt.reply_key, keyerr, sizeof(keyerr));
    if (r < 0) {
        log_error("ReplyKeyFile: %s", keyerr);
        status = r == -EPERM || r == -EINVAL ? EX_CONFIG : EX_CANTCREAT;
        goto out;
    }
    membudget_setup_trim(cfg->trim_memory);
    callbacks_setup(rt.st, true, rt.sender);
    if (without_state)
        callbacks_state_down(cfg->on_state_error == CONFIG_STATE_TEMPFAIL ? CALLBACKS_STATE_TEMPFAIL
                             : cfg->on_state_error == CONFIG_STATE_ACCEPT ? CALLBACKS_STATE_ACCEPT
                                                                          : CALLBACKS_STATE_SCAN);
    callbacks_set_reply_key(&rt.reply_key);
    snapshot_install(snapshot_ref(snap));
    if (metrics_fd >= 0) {
        r = metrics_http_start(metrics_fd, rt.st, &rt.metrics);
        metrics_fd = -1;
        if (r < 0) {
            log_error("cannot serve MetricsSocket '%s': %s", cfg->metrics_socket,
                      log_strerror(r, eb, sizeof(eb)));
            status = EX_OSERR;
            goto out;
        }
        log_info("metrics: GET /metrics on MetricsSocket %s", cfg->metrics_socket);
    }
    /* After dropping privileges: RLIMIT_NPROC binds the new user. */
    r = smfi_settimeout((int)cfg->read_timeout) == MI_SUCCESS
            ? gate_start(cfg->max_connections, cfg->read_timeout)
            : -EINVAL;
    if (r < 0) {
        log_error("cannot set up the connection limits: %s", log_strerror(r, eb, sizeof(eb)));
        status = EX_OSERR;
        goto out;
    }

    r = pthread_create(&sig_tid, NULL, signal_thread, &daemon_sigs);
    if (r != 0) {
        log_error("cannot start the signal thread: %s", log_strerror(r, eb, sizeof(eb)));
        status = EX_OSERR;
        goto out;
    }
    sig_started = true;

    log_info("slop-milter %s starting: %zu rules from %s, socket %s, mode %s", SLOP_VERSION,
             classifier_rule_count(snap->classifier), cfg->rules_dir, cfg->socket,
             config_mode_name(cfg->mode));
    log_info("memory budget: MaxMemory %llu bytes%s, OnBusy %s, TrimMemory %s",
             (unsigned long long)membudget_limit(cfg->max_memory),
             cfg->max_memory ? "" : " (sized from MemoryMax or RAM)",
             config_failure_name(cfg->on_busy), cfg->trim_memory ? "yes" : "no");
    if (opts.foreground) {
        printf("slop-milter %s listening on %s\n", SLOP_VERSION, cfg->socket);
        postfix_print(cfg, &ids, true);
    }

    /* A stop asked for before smfi_main() ran makes it fail at once:
     * that failure is the stop, not an error. */
    if (smfi_main() != MI_SUCCESS && !atomic_load(&stopping)) {
        log_error("smfi_main failed");
        status = EX_SOFTWARE;
    }
out:
    pthread_mutex_lock(&rt.lock);
    rt.main_done = true;
    pthread_cond_broadcast(&rt.cv);
    pthread_mutex_unlock(&rt.lock);
    atomic_store(&stopping, true);
    if (sig_started) {
        pthread_kill(sig_tid, SIGUSR1);
        pthread_join(sig_tid, NULL);
    }
    daemon_cleanup(true);
    snapshot_install(NULL);
    log_info("stopped");
    if (metrics_fd >= 0)
        close(metrics_fd);
    free(conn_spec);
    return status;
}

int
main(int argc, char **argv)
{
    enum { OPT_FROM = 256, OPT_RCPT, OPT_DUMP_MAN, OPT_DUMP_SAMPLE, OPT_DUMP_CONFIG };
    static const struct option longopts[] = {
        {"from", required_argument, NULL, OPT_FROM},
        {"rcpt", required_argument, NULL, OPT_RCPT},
        {"dump-config-man", no_argument, NULL, OPT_DUMP_MAN},
        {"dump-config-sample", no_argument, NULL, OPT_DUMP_SAMPLE},
        {"dump-config", no_argument, NULL, OPT_DUMP_CONFIG},
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},
        {NULL, 0, NULL, 0},
    };
    struct snapshot *snap = NULL;
    bool dump_config = false, without_state;
    int c, status;

    while ((c = getopt_long(argc, argv, "c:fntVh", longopts, NULL)) != -1) {
        switch (c) {
        case 'c':
            opts.config_path = optarg;
            break;
        case 'f':
            opts.foreground = true;
            break;
        case 'n':
            opts.check_only = true;
            break;
        case 't':
            opts.offline = true;
            break;
        case 'V':
            printf("slop-milter %s\n", SLOP_VERSION);
            return EX_OK;
        case 'h':
            usage(stdout);
            return EX_OK;
        case OPT_FROM:
            opts.from = optarg;
            break;
        case OPT_RCPT:
            if (opts.n_rcpts >= MAX_CLI_RCPTS) {
                fprintf(stderr, "slop-milter: at most %d --rcpt\n", MAX_CLI_RCPTS);
                return EX_USAGE;
            }
            opts.rcpts[opts.n_rcpts++] = optarg;
            break;
        case OPT_DUMP_MAN:
            config_write_man(stdout);
            return EX_OK;
        case OPT_DUMP_SAMPLE:
            config_write_sample(stdout);
            return EX_OK;
        case OPT_DUMP_CONFIG:
            dump_config = true;
            break;
        default:
            usage(stderr);
            return EX_USAGE;
        }
    }
    if (!opts.offline && optind < argc) {
        usage(stderr);
        return EX_USAGE;
    }

    if (!opts.offline && !opts.check_only && !dump_config)
        block_signals();
    state_on_damage(state_damaged_now);
    log_setup(false, LOG_MAIL, true);
    classifier_tune_allocator();
    choose_rules_dir();
    /* The daemon changes to / when it detaches; reloads must still find the file. */
    if (opts.config_path && opts.config_path[0] != '/') {
        static char abs_path[PATH_MAX];

        if (realpath(opts.config_path, abs_path) != NULL)
            opts.config_path = abs_path;
    }
    if (snapshot_build(opts.config_path, &opts.paths, diag_stderr, NULL, &snap) < 0)
        return EX_CONFIG;
    if (dump_config) {
        config_write_effective(snap->cfg, stdout);
        snapshot_unref(snap);
        return EX_OK;
    }
    /* Once per process, before -n says OK and -t judges: a list named
     * but unreadable is a mistake to report now, not a silent fallback. */
    if (reply_verify_load_list(snap->cfg->public_suffix_list) < 0 &&
        snap->cfg->public_suffix_list[0] != '\0') {
        fprintf(stderr, "slop-milter: PublicSuffixList '%s': cannot be read as a list\n",
                snap->cfg->public_suffix_list);
        snapshot_unref(snap);
        return EX_CONFIG;
    }
    if (opts.check_only) {
        struct config_error cerr;
        struct ids ids;

        status = EX_OK;
        /* UserID is only used at start-up, so check it now rather than
         * let a typo stop the daemon after a "configuration OK". */
        if (ids_resolve(snap->cfg->user_id, &ids) < 0) {
            snapshot_unref(snap);
            return EX_NOUSER;
        }
        if (config_check_sendmail(snap->cfg, &cerr) < 0)
            status = EX_CONFIG;
        else if (config_check_state_parent(snap->cfg, &cerr) < 0 ||
                 config_check_state_owner(snap->cfg, ids_run_uid(&ids), ids_run_gid(&ids), &cerr) <
                     0)
            status = EX_CANTCREAT;
        if (status != EX_OK) {
            fprintf(stderr, "slop-milter: %s\n", cerr.text);
            snapshot_unref(snap);
            return status;
        }
        status = state_file_ok(snap->cfg, &without_state);
        if (status != EX_OK) {
            snapshot_unref(snap);
            return status;
        }
        printf("%s: configuration OK, %zu rules from %s\n",
               opts.config_path ? opts.config_path : "(built-in defaults)",
               classifier_rule_count(snap->classifier), snap->cfg->rules_dir);
        postfix_print(snap->cfg, &ids, false);
        snapshot_unref(snap);
        return EX_OK;
    }
    if (opts.offline)
        status = offline(snap, argv + optind, argc - optind);
    else
        status = run_daemon(snap);
    snapshot_unref(snap);
    return status;
}
