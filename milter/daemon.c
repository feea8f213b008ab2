/*
 * daemon.c - the daemon's life: start-up, the signal thread, smfi_main()
 * and the stop.
 *
 * Start-up order matters: the user, StateDir's owner and data file are
 * checked first, the socket and the PID file are made while still root,
 * then the process detaches, drops privileges, opens the state and starts
 * threads. Signals are blocked in every thread; one thread takes them with
 * sigwait(): SIGUSR1 reloads, SIGTERM and SIGINT stop libmilter. A stop
 * waits a short grace for smfi_main() to return, then exits; the MTA's
 * milter_default_action covers the connections still open.
 *
 * Threading: the daemon's options and `rt` are set before any thread
 * starts; after that rt's lock guards main_done, and cleanup runs once.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sysexits.h>
#include <time.h>
#include <unistd.h>

#include <libmilter/mfapi.h>

#include "callbacks.h"
#include "classifier.h"
#include "config.h"
#include "daemon.h"
#include "daemon_state.h"
#include "gate.h"
#include "ids.h"
#include "log.h"
#include "membudget.h"
#include "metrics_http.h"
#include "postfix_line.h"
#include "postfix_print.h"
#include "reply.h"
#include "reply_dispatch.h"
#include "reply_verify.h"
#include "scan_job.h"
#include "shared_state.h"
#include "snapshot.h"
#include "sockopt.h"
#include "state.h"

static struct daemon_options dopts; /* daemon_run()'s, for reloads */
static atomic_bool stopping;
static sigset_t daemon_sigs; /* taken by signal_thread() */

/*
 * Block before any thread starts (GLib may start some while the rules
 * load), so that every thread inherits the mask. SIGHUP is blocked too
 * but left to libmilter's own signal thread, which stops on it.
 */
void
daemon_block_signals(void)
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

/* What shutdown has to undo; set by daemon_run() before threads start. */
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
diag_log(void *ctx, const char *text)
{
    (void)ctx;
    log_error("%s", text);
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

    r = snapshot_build(dopts.config_path, dopts.paths, diag_log, NULL, &fresh);
    if (r < 0) {
        log_error("reload failed, keeping the running configuration and rules");
        return;
    }
    old = snapshot_current();
    if (old) {
        warn_restart_keys(old->cfg, fresh->cfg);
        snapshot_unref(old);
    }
    log_setup(fresh->cfg->syslog && !dopts.foreground, fresh->cfg->syslog_facility,
              dopts.foreground);
    log_info("reloaded %s: %zu rules from %s", dopts.config_path ? dopts.config_path : "defaults",
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

/* What daemon_run() holds while it starts, shared by its steps. */
struct start {
    struct snapshot *snap;
    const struct config *cfg;
    struct ids ids;
    bool without_state;
    char *conn_spec;
    int metrics_fd;
    pthread_t sig_tid;
    bool sig_started;
    char redis_password[CONFIG_REDIS_PASSWORD_MAX];
};

/* UserID, StateDir's owner and data file: refused before anything is
 * made, so that the refusal reaches the caller's status. */
static int
start_check(struct start *s)
{
    const struct config *cfg = s->cfg;
    struct config_error cerr;
    int status;

    if (ids_resolve(cfg->user_id, &s->ids) < 0)
        return EX_NOUSER;
    if (config_check_state_owner(cfg, ids_run_uid(&s->ids), ids_run_gid(&s->ids), &cerr) < 0) {
        fprintf(stderr, "slop-milter: %s\n", cerr.text);
        return EX_CANTCREAT;
    }
    status = daemon_state_file_ok(cfg, &s->without_state);
    if (status != EX_OK)
        return status;
    umask((mode_t)cfg->umask);
    return EX_OK;
}

/* The milter socket, made as root and handed to UserID. */
static int
start_socket(struct start *s)
{
    const struct config *cfg = s->cfg;
    const char *sock_path;
    char eb[128];

    s->conn_spec = strdup(cfg->socket);
    if (s->conn_spec == NULL)
        return EX_OSERR;
    if (smfi_setconn(s->conn_spec) != MI_SUCCESS || callbacks_register() < 0) {
        fprintf(stderr, "slop-milter: cannot set up libmilter for '%s'\n", cfg->socket);
        return EX_SOFTWARE;
    }
    if (smfi_opensocket(true) != MI_SUCCESS) {
        fprintf(stderr, "slop-milter: cannot open socket '%s'\n", cfg->socket);
        return EX_UNAVAILABLE;
    }
    sockopt_listen_nodelay();
    sock_path = postfix_line_socket_path(cfg->socket);
    rt.sock_path = sock_path;
    rt.pid_file = cfg->pid_file;
    if (sock_path == NULL)
        return EX_OK;
    if (chmod(sock_path, (mode_t)cfg->socket_mode) != 0)
        fprintf(stderr, "slop-milter: chmod '%s': %s\n", sock_path,
                log_strerror(errno, eb, sizeof(eb)));
    if (s->ids.set && geteuid() == 0 && chown(sock_path, s->ids.uid, s->ids.gid) != 0)
        fprintf(stderr, "slop-milter: chown '%s': %s\n", sock_path,
                log_strerror(errno, eb, sizeof(eb)));
    return EX_OK;
}

/* MetricsSocket bound now, so that a taken port reaches the caller's
 * status; served only once privileges are dropped. */
static int
start_metrics_listen(struct start *s)
{
    const struct config *cfg = s->cfg;
    char eb[128];
    int r;

    if (*cfg->metrics_socket == '\0')
        return EX_OK;
    r = metrics_http_listen(cfg->metrics_socket, &s->metrics_fd);
    if (r < 0) {
        fprintf(stderr, "slop-milter: cannot listen on MetricsSocket '%s': %s\n",
                cfg->metrics_socket,
                r == -EINVAL ? "not inet:port@host or inet6:port@host"
                             : log_strerror(r, eb, sizeof(eb)));
        return r == -EINVAL ? EX_CONFIG : EX_UNAVAILABLE;
    }
    return EX_OK;
}

static int
start_detach(struct start *s)
{
    const struct config *cfg = s->cfg;
    char eb[128];

    /* Detached without syslog, every later message (a refused StateDir
     * included) would go nowhere: say so while stderr is still seen. */
    if (!dopts.foreground && !cfg->syslog)
        fprintf(stderr, "slop-milter: warning: Syslog is no and -f is not given: once detached, "
                        "nothing is logged (set Syslog yes, or run with -f)\n");
    if (!dopts.foreground && daemon(0, 0) != 0) {
        fprintf(stderr, "slop-milter: cannot detach: %s\n", log_strerror(errno, eb, sizeof(eb)));
        return EX_OSERR;
    }
    log_setup(cfg->syslog && !dopts.foreground, cfg->syslog_facility, dopts.foreground);
    if (reply_verify_load_list(cfg->public_suffix_list) < 0 &&
        (cfg->reply_requires & (CONFIG_REQUIRE_DMARC_PASS | CONFIG_REQUIRE_DKIM_ALIGNED)) != 0)
        log_warning("no Public Suffix List (install publicsuffix): dmarc-pass and dkim-aligned "
                    "in ReplyRequires prove nothing");
    return EX_OK;
}

/* What needs root (the PID file, RedisPasswordFile), then UserID. */
static int
start_become_user(struct start *s)
{
    const struct config *cfg = s->cfg;
    char eb[128];
    int r;

    r = write_pid_file(cfg->pid_file);
    if (r < 0) {
        log_error("cannot write PidFile '%s': %s", cfg->pid_file, log_strerror(r, eb, sizeof(eb)));
        return EX_CANTCREAT;
    }
    r = cfg->state_backend == CONFIG_BACKEND_REDIS
            ? config_redis_password(cfg->redis_password_file, s->redis_password,
                                    sizeof(s->redis_password))
            : 0;
    if (r < 0) {
        log_error("cannot read RedisPasswordFile '%s': %s", cfg->redis_password_file,
                  log_strerror(r, eb, sizeof(eb)));
        return EX_NOINPUT;
    }
    return ids_drop(&s->ids) < 0 ? EX_NOPERM : EX_OK;
}

/* StateDir opened as UserID; EX_OK also when OnStateError lets the
 * daemon run without it. */
static int
start_state_open(struct start *s)
{
    const struct config *cfg = s->cfg;
    char why[400], who[160];
    int r;

    rt.state_nosync = cfg->state_sync_interval > 0;
    if (s->without_state)
        return EX_OK;
    r = state_open(cfg->state_dir, rt.state_nosync ? STATE_NOSYNC : 0, 0, &rt.st);
    /* Damaged since the first look, or readable only as UserID. */
    if (r == -EUCLEAN)
        return daemon_state_file_ok(cfg, &s->without_state);
    if (r >= 0)
        return EX_OK;
    state_open_strerror(cfg->state_dir, r, why, sizeof(why));
    config_owner_name(geteuid(), getegid(), who, sizeof(who));
    if (r == -EACCES)
        log_error("cannot open StateDir '%s': %s: the daemon runs as %s; run: chown -R %s %s",
                  cfg->state_dir, why, who, who, cfg->state_dir);
    else
        log_error("cannot open StateDir '%s': %s", cfg->state_dir, why);
    return EX_CANTCREAT;
}

static int
start_state(struct start *s)
{
    const struct config *cfg = s->cfg;
    int status = start_state_open(s);
    int r;

    if (status != EX_OK)
        return status;
    r = shared_state_attach(cfg, s->redis_password, rt.st);
    explicit_bzero(s->redis_password, sizeof(s->redis_password));
    if (r < 0) {
        log_error("StateBackend redis: bad RedisServer '%s' or RedisPrefix '%s'", cfg->redis_server,
                  cfg->redis_prefix);
        return EX_CONFIG;
    }
    return EX_OK;
}

/* The reply sender's worker and the key that signs our replies. */
static int
start_replies(struct start *s)
{
    const struct config *cfg = s->cfg;
    struct reply_sender_config rsc = {0};
    char eb[128], keyerr[PATH_MAX + 128];
    int r;

    rsc.transport = cfg->reply_transport == CONFIG_TRANSPORT_SMTP ? REPLY_TRANSPORT_SMTP
                                                                  : REPLY_TRANSPORT_SENDMAIL;
    rsc.sendmail_path = cfg->sendmail_path;
    rsc.smtp_server = cfg->smtp_server;
    rsc.status_fn = reply_dispatch_status;
    rsc.status_ctx = rt.st;
    r = reply_sender_new(&rsc, &rt.sender);
    if (r < 0) {
        log_error("cannot start the reply sender: %s", log_strerror(r, eb, sizeof(eb)));
        return r == -EINVAL ? EX_CONFIG : EX_OSERR;
    }
    r = reply_key_setup(cfg->reply_key_file, cfg->state_dir, true, &rt.reply_key, keyerr,
                        sizeof(keyerr));
    if (r < 0) {
        log_error("ReplyKeyFile: %s", keyerr);
        return r == -EPERM || r == -EINVAL ? EX_CONFIG : EX_CANTCREAT;
    }
    return EX_OK;
}

/* What the callbacks judge with, and the snapshot they start from. */
static int
start_install(struct start *s)
{
    const struct config *cfg = s->cfg;

    membudget_setup_trim(cfg->trim_memory);
    callbacks_setup(rt.st, true, rt.sender);
    if (s->without_state)
        callbacks_state_down(cfg->on_state_error == CONFIG_STATE_TEMPFAIL ? CALLBACKS_STATE_TEMPFAIL
                             : cfg->on_state_error == CONFIG_STATE_ACCEPT ? CALLBACKS_STATE_ACCEPT
                                                                          : CALLBACKS_STATE_SCAN);
    callbacks_set_reply_key(&rt.reply_key);
    snapshot_install(snapshot_ref(s->snap));
    return EX_OK;
}

/* The metrics server and the connection limits, as UserID. */
static int
start_services(struct start *s)
{
    const struct config *cfg = s->cfg;
    char eb[128];
    int r;

    if (s->metrics_fd >= 0) {
        r = metrics_http_start(s->metrics_fd, rt.st, &rt.metrics);
        s->metrics_fd = -1;
        if (r < 0) {
            log_error("cannot serve MetricsSocket '%s': %s", cfg->metrics_socket,
                      log_strerror(r, eb, sizeof(eb)));
            return EX_OSERR;
        }
        log_info("metrics: GET /metrics on MetricsSocket %s", cfg->metrics_socket);
    }
    /* After dropping privileges: RLIMIT_NPROC binds the new user. */
    r = smfi_settimeout((int)cfg->read_timeout) == MI_SUCCESS
            ? gate_start(cfg->max_connections, cfg->read_timeout)
            : -EINVAL;
    if (r < 0) {
        log_error("cannot set up the connection limits: %s", log_strerror(r, eb, sizeof(eb)));
        return EX_OSERR;
    }
    return EX_OK;
}

static int
start_signals(struct start *s)
{
    char eb[128];
    int r = pthread_create(&s->sig_tid, NULL, signal_thread, &daemon_sigs);

    if (r != 0) {
        log_error("cannot start the signal thread: %s", log_strerror(r, eb, sizeof(eb)));
        return EX_OSERR;
    }
    s->sig_started = true;
    return EX_OK;
}

static int
serve(struct start *s)
{
    const struct config *cfg = s->cfg;

    log_info("slop-milter %s starting: %zu rules from %s, socket %s, mode %s", dopts.version,
             classifier_rule_count(s->snap->classifier), cfg->rules_dir, cfg->socket,
             config_mode_name(cfg->mode));
    log_info("memory budget: MaxMemory %llu bytes%s, OnBusy %s, TrimMemory %s",
             (unsigned long long)membudget_limit(cfg->max_memory),
             cfg->max_memory ? "" : " (sized from MemoryMax or RAM)",
             config_failure_name(cfg->on_busy), cfg->trim_memory ? "yes" : "no");
    if (dopts.foreground) {
        printf("slop-milter %s listening on %s\n", dopts.version, cfg->socket);
        postfix_print(cfg, &s->ids, true);
    }
    /* A stop asked for before smfi_main() ran makes it fail at once:
     * that failure is the stop, not an error. */
    if (smfi_main() != MI_SUCCESS && !atomic_load(&stopping)) {
        log_error("smfi_main failed");
        return EX_SOFTWARE;
    }
    return EX_OK;
}

/* After the socket is made, every step ends in finish(). */
static int (*const start_steps[])(struct start *) = {
    start_metrics_listen, start_detach,   start_become_user, start_state, start_replies,
    start_install,        start_services, start_signals,     serve,
};

static void
finish(struct start *s)
{
    pthread_mutex_lock(&rt.lock);
    rt.main_done = true;
    pthread_cond_broadcast(&rt.cv);
    pthread_mutex_unlock(&rt.lock);
    atomic_store(&stopping, true);
    if (s->sig_started) {
        pthread_kill(s->sig_tid, SIGUSR1);
        pthread_join(s->sig_tid, NULL);
    }
    daemon_cleanup(true);
    snapshot_install(NULL);
    log_info("stopped");
    if (s->metrics_fd >= 0)
        close(s->metrics_fd);
    explicit_bzero(s->redis_password, sizeof(s->redis_password));
}

int
daemon_run(struct snapshot *snap, const struct daemon_options *o)
{
    struct start s = {.snap = snap, .cfg = snap->cfg, .metrics_fd = -1};
    int status;

    dopts = *o;
    status = start_check(&s);
    if (status == EX_OK)
        status = start_socket(&s);
    if (status != EX_OK) {
        free(s.conn_spec);
        return status;
    }
    for (size_t i = 0; status == EX_OK && i < sizeof(start_steps) / sizeof(start_steps[0]); i++)
        status = start_steps[i](&s);
    finish(&s);
    free(s.conn_spec);
    return status;
}
