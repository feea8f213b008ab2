/*
 * scan_job.c - one message's scan under ScanTimeout. The job owns what it
 * scans (the message buffer is handed over), runs on a scan thread
 * (scanner.c) and is shared by the waiting caller and that thread, each
 * holding a reference: after a timeout the caller goes on with its
 * failure plan and the late scan frees the job when it ends. AutoLearn's
 * write happens on the scan thread after the caller has its result.
 *
 * Threading: the job's fields after creation are guarded by its lock;
 * the count of jobs holding a state look-up is atomic.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "classifier.h"
#include "conn.h"
#include "log.h"
#include "membudget.h"
#include "scan_job.h"
#include "scanner.h"
#include "snapshot.h"
#include "state.h"
#include "state_db.h"
#include "state_learn.h"

static atomic_uint scan_job_users; /* jobs that hold a look-up into a state */

unsigned
scan_job_state_users(void)
{
    return atomic_load(&scan_job_users);
}

void
scan_job_lookup_options(const struct config *cfg, struct state_lookup_options *ret)
{
    memset(ret, 0, sizeof(*ret));
    ret->duplicate_days = (cfg->duplicate_window + 86399u) / 86400u;
    ret->trust_maintainers = cfg->trust_maintainers;
    ret->learn_minimum = cfg->learn_minimum;
}

struct scan_job {
    pthread_mutex_t lock;
    pthread_cond_t cv;
    unsigned refs; /* the waiting caller and the worker */
    bool done;
    int r;
    struct snapshot *snap;
    char *buf;
    size_t len;
    size_t reserved; /* MaxMemory budget held for buf */
    struct classifier_envelope env;
    struct state *st;       /* NULL: no look-ups and no learning */
    struct state_lookup sl; /* env.lookup points here when there is a state */
    char *from;
    char **rcpts;
    size_t n_rcpts;
    struct classifier_result *res;
    /* AutoLearn reads the message the job scanned, after the verdict: the
     * job owns the buffer (the caller's was handed over), so the learning
     * happens here and not in the caller. */
    bool auto_learn;
    bool abandoned; /* the caller timed out: no verdict from this scan */
    char queue_id[CONN_QUEUE_ID_MAX];
};

static void
job_free(struct scan_job *j)
{
    if (j->env.lookup != NULL)
        atomic_fetch_sub(&scan_job_users, 1);
    classifier_result_free(j->res);
    /* n_rcpts counts the strdup()ed entries, so it is 0 while rcpts is
     * NULL; the analyzer forgets calloc()'s zero once &j->lock escapes. */
    for (size_t i = 0; i < j->n_rcpts; i++)
        free(j->rcpts[i]); // NOLINT(clang-analyzer-core.NullDereference)
    free(j->rcpts);
    free(j->from);
    free(j->buf);
    membudget_release(j->reserved);
    membudget_trim(j->len);
    snapshot_unref(j->snap);
    pthread_cond_destroy(&j->cv);
    pthread_mutex_destroy(&j->lock);
    free(j);
}

static void
job_put(struct scan_job *j)
{
    bool last;

    pthread_mutex_lock(&j->lock);
    last = --j->refs == 0;
    pthread_mutex_unlock(&j->lock);
    if (last)
        job_free(j);
}

/* The score without the learned findings: what AutoLearn goes by, so
 * that what it learned does not feed what it learns next. */
static double
score_unlearned(const struct classifier_result *res)
{
    double score = res->score;

    for (size_t i = 0; i < res->n_hits; i++)
        if (strncmp(res->hits[i].rule, "LEARNED_", 8) == 0)
            score -= res->hits[i].score;
    return score;
}

/* AutoLearn's class for a scanned message by its score; -1: not learned. */
static int
auto_learn_class(const struct config *cfg, const struct classifier_result *res)
{
    double score;

    if (res == NULL || res->truncated)
        return -1;
    score = score_unlearned(res);
    if (score >= cfg->auto_learn_slop)
        return STATE_LEARN_SLOP;
    if (score <= cfg->auto_learn_genuine)
        return STATE_LEARN_GENUINE;
    return -1;
}

/* AutoLearn: one more write after the verdict, off by default
 * (slop-milter.conf(5) says why), of the message the job scanned. A
 * failure costs only the learning. */
static void
auto_learn(const struct scan_job *j, int cls)
{
    struct state_learn_msg lm = {0};
    uint64_t *tokens;
    char eb[128];
    int r;

    tokens = malloc(STATE_LEARN_MAX_TOKENS * sizeof(*tokens));
    if (tokens == NULL)
        return;
    r = classifier_learn_tokens(j->snap->classifier, j->buf, j->len, tokens, STATE_LEARN_MAX_TOKENS,
                                &lm.n, &lm.hint);
    lm.tokens = tokens;
    if (r == 0)
        r = state_learn_add(j->st, &lm, (enum state_learn_class)cls, time(NULL), NULL);
    if (r < 0)
        log_warning("%s: cannot learn the message in StateDir: %s, verdict unchanged", j->queue_id,
                    log_strerror(r, eb, sizeof(eb)));
    free(tokens);
}

static void
job_run(struct scan_job *j)
{
    struct classifier_result *res = NULL;
    int r = classifier_scan(j->snap->classifier, j->buf, j->len, &j->env, &res);
    int cls = r == 0 && j->auto_learn ? auto_learn_class(j->snap->cfg, res) : -1;
    bool abandoned;

    pthread_mutex_lock(&j->lock);
    j->r = r;
    j->res = res;
    j->done = true;
    abandoned = j->abandoned;
    pthread_cond_signal(&j->cv);
    pthread_mutex_unlock(&j->lock);
    /* After the caller has its verdict: the write does not delay it. */
    if (cls >= 0 && !abandoned)
        auto_learn(j, cls);
}

/* The scan thread's side: scan, then let go of the job. */
static void
job_work(void *arg)
{
    struct scan_job *j = arg;

    job_run(j);
    job_put(j);
}

static struct scan_job *
job_new(struct snapshot *snap, struct msg *m, struct state *st, bool record)
{
    pthread_condattr_t ca;
    struct scan_job *j = calloc(1, sizeof(*j));

    if (j == NULL)
        return NULL;
    pthread_mutex_init(&j->lock, NULL);
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&j->cv, &ca);
    pthread_condattr_destroy(&ca);
    j->refs = 1;
    j->snap = snapshot_ref(snap);
    /* The job owns what it scans: after a timeout it outlives the message. */
    j->buf = m->buf;
    j->len = m->len;
    j->reserved = m->reserved;
    m->reserved = 0;
    m->buf = NULL;
    m->len = m->cap = 0;
    j->auto_learn = st != NULL && record && snap->cfg->auto_learn && !m->oversize;
    memcpy(j->queue_id, m->queue_id, sizeof(j->queue_id));
    j->from = strdup(m->mail_from ? m->mail_from : "");
    j->rcpts = calloc(m->n_rcpts ? m->n_rcpts : 1, sizeof(*j->rcpts));
    if (j->from == NULL || j->rcpts == NULL) {
        job_free(j);
        return NULL;
    }
    for (size_t i = 0; i < m->n_rcpts; i++) {
        j->rcpts[i] = strdup(m->rcpts[i].addr);
        if (j->rcpts[i] == NULL) {
            job_free(j);
            return NULL;
        }
        j->n_rcpts++;
    }
    j->env.mail_from = j->from;
    j->env.rcpt = (const char *const *)j->rcpts;
    j->env.n_rcpt = j->n_rcpts;
    /* Mail recorded up to the second this one began (times are whole
     * seconds) came before it; -t reads a message that arrived earlier,
     * and its own Received: says when. */
    j->env.arrival = record ? (int64_t)m->arrived + 1 : classifier_arrival(j->buf, j->len);
    if (st != NULL) {
        struct state_lookup_options lo;

        j->st = st;
        scan_job_lookup_options(snap->cfg, &lo);
        state_lookup_init(&j->sl, st, &lo);
        j->env.lookup = &j->sl.lookup;
        atomic_fetch_add(&scan_job_users, 1);
    }
    return j;
}

int
scan_job_run(struct snapshot *snap, struct msg *m, struct state *st, bool record,
             void (*progress)(void *), void *pctx, struct classifier_result **ret)
{
    unsigned timeout_ms = snap->cfg->scan_timeout;
    struct timespec deadline, slice;
    struct scan_job *j;
    int r;

    j = job_new(snap, m, st, record);
    if (j == NULL)
        return -ENOMEM;

    j->refs = 2;
    if (scanner_run(job_work, j) < 0) {
        /* No thread to spare: scan here, without the time limit. */
        j->refs = 1;
        job_run(j);
    }

    clock_gettime(CLOCK_MONOTONIC, &deadline);
    deadline.tv_sec += timeout_ms / 1000;
    deadline.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
    if (deadline.tv_nsec >= 1000000000L) {
        deadline.tv_sec++;
        deadline.tv_nsec -= 1000000000L;
    }

    pthread_mutex_lock(&j->lock);
    while (!j->done) {
        clock_gettime(CLOCK_MONOTONIC, &slice);
        if (slice.tv_sec > deadline.tv_sec ||
            (slice.tv_sec == deadline.tv_sec && slice.tv_nsec >= deadline.tv_nsec))
            break;
        /* Wake at least once a second to tell the MTA we are alive. */
        slice.tv_sec += 1;
        if (slice.tv_sec > deadline.tv_sec ||
            (slice.tv_sec == deadline.tv_sec && slice.tv_nsec > deadline.tv_nsec))
            slice = deadline;
        pthread_cond_timedwait(&j->cv, &j->lock, &slice);
        if (!j->done && progress) {
            pthread_mutex_unlock(&j->lock);
            progress(pctx);
            pthread_mutex_lock(&j->lock);
        }
    }
    if (j->done) {
        r = j->r;
        *ret = j->res;
        j->res = NULL;
    } else {
        r = -ETIMEDOUT;
        j->abandoned = true;
    }
    pthread_mutex_unlock(&j->lock);
    /* The scan thread stays with the late job and exits after it. */
    if (r == -ETIMEDOUT)
        scanner_abandon();
    job_put(j);
    return r;
}
