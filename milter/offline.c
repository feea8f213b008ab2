/*
 * offline.c - the offline mode (-t): each message file is read (capped a
 * little past MaxMessageSize, so an oversize message is seen as one),
 * given the envelope of --from and --rcpt, judged by the same decision as
 * end-of-message (callbacks_decide()), and the result printed. The
 * daemon's state is opened read-only when StateDir holds one; the reply
 * key is used when it exists and never made. Single-threaded but for the
 * scan threads.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sysexits.h>

#include "callbacks.h"
#include "classifier.h"
#include "config.h"
#include "conn.h"
#include "file_read.h"
#include "log.h"
#include "offline.h"
#include "reply.h"
#include "scan_job.h"
#include "snapshot.h"
#include "state.h"

#define OFFLINE_READ_SLACK 65536 /* bytes read past MaxMessageSize to notice oversize */

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

/* The message of raw with env's envelope, as eom would have it; NULL
 * without memory. */
static struct msg *
offline_message(const struct config *cfg, const struct offline_envelope *env, const char *raw,
                size_t len)
{
    struct msg *m = msg_new((size_t)cfg->max_message_size);

    if (m == NULL)
        return NULL;
    m->max_headers = cfg->max_headers;
    m->max_header_size = (size_t)cfg->max_header_size;
    for (size_t i = 0; i < env->n_rcpts; i++) {
        bool protected = config_list_empty(&cfg->recipients) ||
                         config_list_match(&cfg->recipients, env->rcpts[i]);

        msg_add_rcpt(m, env->rcpts[i], protected);
    }
    msg_load_raw(m, raw, len);
    if (env->from)
        msg_set_sender(m, env->from);
    else
        sender_from_header(m);
    return m;
}

/* What envfrom and eoh would pass unscanned; true after saying so. */
static bool
offline_skipped(const struct config *cfg, const struct offline_envelope *env, const struct msg *m)
{
    if (m->mail_from && *m->mail_from && config_list_match(&cfg->allow_senders, m->mail_from)) {
        printf("skipped: sender in AllowSenders\nresult: accept\n");
        return true;
    }
    if (env->n_rcpts > 0 && m->n_protected == 0) {
        printf("skipped: no recipient in Recipients\nresult: accept\n");
        return true;
    }
    return false;
}

static void
print_reply(const struct msg *m, const struct decision *d)
{
    if (d->reply_suppressed)
        printf("reply-to: <%s> (suppressed: %s)\n", m->mail_from ? m->mail_from : "",
               d->reply_suppressed);
    else if (d->reply_unverified)
        printf("reply-to: <%s> (unverified: ReplyRequires not met%s%s)\n", m->mail_from,
               d->reply_refusal ? ", Authentication-Results " : "",
               d->reply_refusal ? d->reply_refusal : "");
    else {
        printf("reply-to: <%s> (would be sent)\n", m->mail_from);
        print_indented(d->reply_text);
    }
}

static void
print_decision(const struct msg *m, const struct decision *d)
{
    if (d->res) {
        printf("scan: kind=%s score=%.1f required=%.1f action=%s hits=%zu%s\n",
               classifier_kind_name(d->res->kind), d->res->score, d->res->required,
               classifier_action_name(d->res->action), d->res->n_hits,
               d->res->truncated ? " truncated" : "");
    } else
        printf("scan: not scanned (%s)\n", verdict_cause_name(d->plan.cause));
    verdict_print(&d->plan, stdout);
    if (d->plan.reply)
        print_reply(m, d);
    printf("result: %s\n", verdict_result_name(d->plan.result));
}

static int
offline_one(struct snapshot *snap, const struct offline_envelope *env, const char *path)
{
    const struct config *cfg = snap->cfg;
    struct decision d;
    struct msg *m;
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
    m = offline_message(cfg, env, raw, len);
    free(raw);
    if (m == NULL)
        return -ENOMEM;
    printf("envelope: from=<%s>", m->mail_from ? m->mail_from : "");
    for (size_t i = 0; i < m->n_rcpts; i++)
        printf(" rcpt=<%s>%s", m->rcpts[i].addr, m->rcpts[i].protected ? "" : "(not protected)");
    printf("\n");
    if (!offline_skipped(cfg, env, m)) {
        decision_init(&d);
        callbacks_decide(snap, m, NULL, NULL, &d);
        print_decision(m, &d);
        decision_release(&d);
    }
    msg_free(m);
    return 0;
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

int
offline_run(struct snapshot *snap, const struct offline_envelope *env, char **files, int n)
{
    static struct reply_key key; /* read by scans that may outlive this call */
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
    if (reply_key_setup(snap->cfg->reply_key_file, snap->cfg->state_dir, false, &key, err,
                        sizeof(err)) == 0)
        callbacks_set_reply_key(&key);
    for (int i = 0; i < n; i++) {
        if (i > 0)
            printf("\n");
        if (offline_one(snap, env, files[i]) < 0)
            status = EX_NOINPUT;
    }
    callbacks_setup(NULL, false, NULL);
    callbacks_set_reply_key(NULL);
    if (scan_job_state_users() == 0)
        state_close(st);
    return status;
}
