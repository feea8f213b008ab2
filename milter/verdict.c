/*
 * verdict.c - classifier result + configuration -> action plan.
 *
 * Invariants: every text that reaches the MTA is ASCII without control
 * characters; header lines stay under VERDICT_HEADER_LINE_MAX bytes and
 * reply lines under VERDICT_SMTP_LINE_MAX after %-escaping; inbound
 * X-Slop-* fields are always removed before ours are added, so a sender
 * cannot forge a verdict. Pure functions: thread-safe.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "textbuf.h"
#include "verdict.h"

#define VERDICT_VERSION CLASSIFIER_VERSION
#define VERDICT_REASON_MAX 200 /* bytes of a quarantine reason */

static const char *const result_names[] = {
    [VERDICT_ACCEPT] = "accept",
    [VERDICT_QUARANTINE] = "quarantine",
    [VERDICT_REJECT] = "reject",
    [VERDICT_TEMPFAIL] = "tempfail",
};

/* One cause a line. */
// clang-format off
static const char *const cause_names[] = {
    [VERDICT_SCANNED] = "scanned",
    [VERDICT_INTERNAL_ERROR] = "internal-error",
    [VERDICT_TIMEOUT] = "timeout",
    [VERDICT_OVERSIZE] = "oversize",
    [VERDICT_BUSY] = "busy",
};
// clang-format on

const char *
verdict_result_name(enum verdict_result r)
{
    return (unsigned)r < sizeof(result_names) / sizeof(result_names[0]) ? result_names[r] : "?";
}

const char *
verdict_cause_name(enum verdict_cause c)
{
    return (unsigned)c < sizeof(cause_names) / sizeof(cause_names[0]) ? cause_names[c] : "?";
}

void
verdict_plan_init(struct verdict_plan *plan)
{
    memset(plan, 0, sizeof(*plan));
}

void
verdict_plan_release(struct verdict_plan *plan)
{
    for (size_t i = 0; i < plan->n_add; i++)
        free(plan->add[i].value);
    for (size_t i = 0; i < plan->n_smtp_lines; i++)
        free(plan->smtp_lines[i]);
    free(plan->subject);
    free(plan->quarantine);
    verdict_plan_init(plan);
}

/* Free text from rules or mail, made safe for a header or SMTP line. */
static void
add_clean(struct textbuf *b, const char *s, size_t max)
{
    size_t n = 0;

    for (; s && *s && n < max; s++, n++) {
        unsigned char c = (unsigned char)*s;
        char out = (char)c;

        if (c < 0x20 || c == 0x7f)
            out = ' ';
        else if (c >= 0x80)
            out = '?';
        textbuf_add(b, &out, 1);
    }
}

int
verdict_escape(const char *in, char *out, size_t size)
{
    size_t o = 0;

    if (size == 0)
        return -ENOSPC;
    for (; *in; in++) {
        size_t need = *in == '%' ? 2 : 1;

        if (o + need >= size) {
            out[o] = '\0';
            return -ENOSPC;
        }
        out[o++] = *in;
        if (*in == '%')
            out[o++] = '%';
    }
    out[o] = '\0';
    return (int)o;
}

static size_t
escaped_len(const char *s)
{
    size_t n = 0;

    for (; *s; s++)
        n += *s == '%' ? 2 : 1;
    return n;
}

char *
verdict_fold(size_t name_len, const char *value)
{
    /* A word is cut so that indent + word always fits in one line. */
    const size_t word_max = VERDICT_HEADER_LINE_MAX - 20;
    struct textbuf b = {0};
    size_t col = name_len + 2;
    const char *p = value;
    bool line_empty = true;

    while (*p) {
        const char *sep = "";
        size_t wl;

        if (*p == '\n') {
            /* A forced break starts a new item line. */
            textbuf_add(&b, "\n\t", 2);
            col = 8;
            line_empty = true;
            p++;
            continue;
        }
        if (*p == ' ') {
            while (*p == ' ')
                p++;
            if (*p == '\0' || *p == '\n')
                continue;
            sep = " ";
        }
        /* A word runs to the next space or newline, or ends after a comma. */
        wl = strcspn(p, " \n,");
        if (p[wl] == ',')
            wl++;
        if (wl > word_max)
            wl = word_max;
        if (!line_empty && col + strlen(sep) + wl > VERDICT_FOLD_AT) {
            textbuf_add(&b, "\n\t  ", 4);
            col = 10;
            sep = "";
        }
        textbuf_add(&b, sep, strlen(sep));
        textbuf_add(&b, p, wl);
        col += strlen(sep) + wl;
        line_empty = false;
        p += wl;
        /* The rest of a cut word is dropped, not wrapped. */
        while (*p && *p != ' ' && *p != '\n' && wl == word_max)
            p++;
    }
    return textbuf_steal(&b, NULL);
}

static int
add_header(struct verdict_plan *plan, const char *name, const char *value)
{
    struct verdict_header *h;

    if (plan->n_add >= VERDICT_MAX_ADD)
        return -ENOSPC;
    h = &plan->add[plan->n_add];
    snprintf(h->name, sizeof(h->name), "%s", name);
    h->value = verdict_fold(strlen(name), value);
    if (h->value == NULL)
        return -ENOMEM;
    plan->n_add++;
    return 0;
}

/* Inbound copies go first, per name from the highest index down, so the
 * remaining indices stay valid while removing. */
static void
plan_removals(struct verdict_plan *plan, const struct verdict_input *in)
{
    for (size_t i = 0; in != NULL && i < in->n_seen; i++) {
        for (unsigned idx = in->seen[i].count; idx >= 1; idx--) {
            struct verdict_removal *rm;

            if (plan->n_remove >= VERDICT_MAX_REMOVE) {
                plan->remove_truncated = true;
                return;
            }
            rm = &plan->remove[plan->n_remove++];
            snprintf(rm->name, sizeof(rm->name), "%s", in->seen[i].name);
            rm->index = idx;
        }
    }
}

static int
add_smtp_line(struct verdict_plan *plan, const char *text)
{
    struct textbuf b = {0};

    if (plan->n_smtp_lines >= VERDICT_MAX_SMTP_LINES)
        return -ENOSPC;
    add_clean(&b, text, VERDICT_SMTP_LINE_MAX);
    if (b.err < 0) {
        textbuf_release(&b);
        return -ENOMEM;
    }
    /* Trim until the escaped form fits. */
    while (b.p != NULL && escaped_len(b.p) > VERDICT_SMTP_LINE_MAX - 1)
        b.p[--b.len] = '\0';
    plan->smtp_lines[plan->n_smtp_lines] = textbuf_steal(&b, NULL);
    if (plan->smtp_lines[plan->n_smtp_lines] == NULL)
        return -ENOMEM;
    plan->n_smtp_lines++;
    return 0;
}

static void
tests_list(struct textbuf *b, const struct classifier_result *res)
{
    if (res == NULL || res->n_hits == 0) {
        textbuf_add(b, "none", 4);
        return;
    }
    for (size_t i = 0; i < res->n_hits; i++) {
        if (i)
            textbuf_add(b, ",", 1);
        add_clean(b, res->hits[i].rule, VERDICT_NAME_MAX);
    }
}

static int
scan_headers(struct verdict_plan *plan, const struct classifier_result *res, bool tagged)
{
    struct textbuf b = {0};
    char *v;
    int r;

    textbuf_printf(&b, "%s, score=%.1f required=%.1f tests=", tagged ? "Yes" : "No", res->score,
                   res->required);
    tests_list(&b, res);
    textbuf_printf(&b, " version=%s", VERDICT_VERSION);
    v = textbuf_steal(&b, NULL);
    if (v == NULL)
        return -ENOMEM;
    r = add_header(plan, "X-Slop-Status", v);
    free(v);
    if (r < 0)
        return r;

    textbuf_printf(&b, "%.1f", res->score);
    v = textbuf_steal(&b, NULL);
    if (v == NULL)
        return -ENOMEM;
    r = add_header(plan, "X-Slop-Score", v);
    free(v);
    if (r < 0 || res->n_hits == 0)
        return r;

    for (size_t i = 0; i < res->n_hits; i++) {
        const struct classifier_hit *h = &res->hits[i];

        if (i)
            textbuf_add(&b, "\n", 1);
        textbuf_printf(&b, "%.1f ", h->score);
        add_clean(&b, h->rule, VERDICT_NAME_MAX);
        if (h->description && *h->description) {
            textbuf_add(&b, " ", 1);
            add_clean(&b, h->description, VERDICT_HIT_TEXT_MAX);
        }
    }
    v = textbuf_steal(&b, NULL);
    if (v == NULL)
        return -ENOMEM;
    r = add_header(plan, "X-Slop-Report", v);
    free(v);
    return r;
}

static int
monitor_header(struct verdict_plan *plan, const char *what)
{
    return add_header(plan, "X-Slop-Action", what);
}

static int
subject_change(struct verdict_plan *plan, const struct config *cfg, const struct verdict_input *in)
{
    const char *old = in ? in->subject : NULL;
    const char *tag = cfg->subject_tag;
    size_t tl = strlen(tag);
    struct textbuf b = {0};

    if (tl == 0)
        return 0;
    if (old == NULL) {
        plan->subject_add = true;
        plan->subject = strdup(tag);
        return plan->subject ? 0 : -ENOMEM;
    }
    {
        const char *o = old;

        while (*o == ' ' || *o == '\t')
            o++;
        /* Mail already tagged on an earlier hop keeps one tag. */
        if (strncasecmp(o, tag, tl) == 0)
            return 0;
    }
    textbuf_add(&b, tag, tl);
    textbuf_add(&b, " ", 1);
    textbuf_add(&b, old, strlen(old));
    plan->subject = textbuf_steal(&b, NULL);
    return plan->subject ? 0 : -ENOMEM;
}

static int
reject_lines(struct verdict_plan *plan, const struct config *cfg,
             const struct classifier_result *res)
{
    char line[VERDICT_SMTP_LINE_MAX];
    size_t room;
    int r;

    snprintf(plan->rcode, sizeof(plan->rcode), "550");
    snprintf(plan->xcode, sizeof(plan->xcode), "5.7.1");
    snprintf(line, sizeof(line), "%s (score %.1f, required %.1f)", cfg->reject_text, res->score,
             cfg->reject_threshold);
    r = add_smtp_line(plan, line);
    if (r < 0)
        return r;
    /* One line per finding, leaving room for the closing pointer and,
     * when findings are left out, the line that counts them. */
    room = VERDICT_MAX_SMTP_LINES - 2;
    if (res->n_hits > room)
        room--;
    for (size_t i = 0; i < res->n_hits && i < room; i++) {
        const struct classifier_hit *h = &res->hits[i];
        struct textbuf b = {0};

        add_clean(&b, h->rule, VERDICT_NAME_MAX);
        textbuf_add(&b, ": ", 2);
        add_clean(&b, h->description ? h->description : "", VERDICT_HIT_TEXT_MAX);
        if (h->doc) {
            textbuf_add(&b, " <", 2);
            add_clean(&b, h->doc, 400);
            textbuf_add(&b, ">", 1);
        }
        if (b.err < 0) {
            textbuf_release(&b);
            return -ENOMEM;
        }
        r = add_smtp_line(plan, textbuf_str(&b));
        textbuf_release(&b);
        if (r < 0)
            return r;
    }
    if (res->n_hits > room) {
        snprintf(line, sizeof(line), "... and %zu more findings", res->n_hits - room);
        r = add_smtp_line(plan, line);
        if (r < 0)
            return r;
    }
    /* A profile without a document base has no page to point to. */
    if (cfg->doc_base[0] == '\0')
        return r;
    snprintf(line, sizeof(line), "What a security report needs: %.400sprocess/threat-model.html",
             cfg->doc_base);
    if (plan->n_smtp_lines < VERDICT_MAX_SMTP_LINES)
        r = add_smtp_line(plan, line);
    return r;
}

static int
quarantine_reason(struct verdict_plan *plan, const struct classifier_result *res)
{
    struct textbuf b;

    /* A long list of tests is cut at VERDICT_REASON_MAX bytes. */
    textbuf_init(&b, VERDICT_REASON_MAX);
    textbuf_printf(&b, "slop-milter: score %.1f tests=", res->score);
    tests_list(&b, res);
    plan->quarantine = textbuf_steal(&b, NULL);
    return plan->quarantine ? 0 : -ENOMEM;
}

int
verdict_build(const struct config *cfg, const struct classifier_result *res,
              const struct verdict_input *in, struct verdict_plan *plan)
{
    bool tagged;
    int r;

    verdict_plan_release(plan);
    plan->cause = VERDICT_SCANNED;
    plan->action = res->action;
    plan->monitor = cfg->mode == CONFIG_MODE_MONITOR;
    plan->result = VERDICT_ACCEPT;
    plan_removals(plan, in);
    tagged = res->action >= CLASSIFIER_ACTION_TAG;

    if (plan->monitor) {
        r = scan_headers(plan, res, tagged);
        if (r == 0)
            r = monitor_header(plan, classifier_action_name(res->action));
        goto out;
    }
    if (res->action == CLASSIFIER_ACTION_REJECT) {
        /* Headers on a rejected message would be thrown away. */
        plan->n_remove = 0;
        plan->result = VERDICT_REJECT;
        r = reject_lines(plan, cfg, res);
        goto out;
    }
    r = scan_headers(plan, res, tagged);
    if (r == 0 && tagged)
        r = subject_change(plan, cfg, in);
    if (r == 0 && res->action == CLASSIFIER_ACTION_QUARANTINE) {
        plan->result = VERDICT_QUARANTINE;
        r = quarantine_reason(plan, res);
    }
    if (res->action == CLASSIFIER_ACTION_REPLY && cfg->reply_enable)
        plan->reply = true;
out:
    if (r < 0)
        verdict_plan_release(plan);
    return r;
}

static int
policy_of(const struct config *cfg, enum verdict_cause cause)
{
    switch (cause) {
    case VERDICT_TIMEOUT:
        return cfg->on_timeout;
    case VERDICT_OVERSIZE:
        return cfg->on_oversize == CONFIG_FAIL_SCAN ? CONFIG_FAIL_ACCEPT : cfg->on_oversize;
    case VERDICT_BUSY:
        return cfg->on_busy;
    default:
        return cfg->on_internal_error;
    }
}

int
verdict_build_failure(const struct config *cfg, enum verdict_cause cause,
                      const struct verdict_input *in, struct verdict_plan *plan)
{
    const char *why = verdict_cause_name(cause);
    int policy = policy_of(cfg, cause);
    char text[256];
    int r = 0;

    verdict_plan_release(plan);
    plan->cause = cause;
    plan->action = CLASSIFIER_ACTION_NONE;
    plan->monitor = cfg->mode == CONFIG_MODE_MONITOR;
    plan->result = VERDICT_ACCEPT;

    if (!plan->monitor && policy == CONFIG_FAIL_TEMPFAIL) {
        plan->result = VERDICT_TEMPFAIL;
        snprintf(plan->rcode, sizeof(plan->rcode), "451");
        snprintf(plan->xcode, sizeof(plan->xcode), "4.7.1");
        snprintf(text, sizeof(text), "Message deferred by slop-milter (%s), try again later", why);
        r = add_smtp_line(plan, text);
        goto out;
    }
    if (!plan->monitor && policy == CONFIG_FAIL_REJECT) {
        plan->result = VERDICT_REJECT;
        if (cause == VERDICT_OVERSIZE) {
            snprintf(plan->rcode, sizeof(plan->rcode), "552");
            snprintf(plan->xcode, sizeof(plan->xcode), "5.3.4");
            snprintf(text, sizeof(text), "Message too large for review by slop-milter");
        } else {
            snprintf(plan->rcode, sizeof(plan->rcode), "550");
            snprintf(plan->xcode, sizeof(plan->xcode), "5.7.1");
            snprintf(text, sizeof(text), "Message refused by slop-milter (%s)", why);
        }
        r = add_smtp_line(plan, text);
        goto out;
    }

    plan_removals(plan, in);
    snprintf(text, sizeof(text), "Unknown, reason=%s version=%s", why, VERDICT_VERSION);
    r = add_header(plan, "X-Slop-Status", text);
    if (r == 0 && plan->monitor)
        r = monitor_header(plan, config_failure_name(policy));
    if (r == 0 && !plan->monitor && policy == CONFIG_FAIL_QUARANTINE) {
        plan->result = VERDICT_QUARANTINE;
        snprintf(text, sizeof(text), "slop-milter: %s", why);
        plan->quarantine = strdup(text);
        if (plan->quarantine == NULL)
            r = -ENOMEM;
    }
out:
    if (r < 0)
        verdict_plan_release(plan);
    return r;
}

void
verdict_print(const struct verdict_plan *plan, FILE *f)
{
    for (size_t i = 0; i < plan->n_remove; i++)
        fprintf(f, "header-remove: %s[%u]\n", plan->remove[i].name, plan->remove[i].index);
    if (plan->remove_truncated)
        fprintf(f, "header-remove: (more than %d, not all removed)\n", VERDICT_MAX_REMOVE);
    for (size_t i = 0; i < plan->n_add; i++)
        fprintf(f, "header-add: %s: %s\n", plan->add[i].name, plan->add[i].value);
    if (plan->subject)
        fprintf(f, "subject: %s%s\n", plan->subject, plan->subject_add ? " (added)" : "");
    if (plan->quarantine)
        fprintf(f, "quarantine: %s\n", plan->quarantine);
    for (size_t i = 0; i < plan->n_smtp_lines; i++)
        fprintf(f, "smtp-reply: %s %s %s\n", plan->rcode, plan->xcode, plan->smtp_lines[i]);
}
