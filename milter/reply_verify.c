/*
 * reply_verify.c - sender verification for automatic replies (see
 * reply_verify.h): the MTA's authentication and trusted
 * Authentication-Results, checked against the envelope sender that the
 * reply would go to.
 *
 * Everything here fails closed: a trusted field that does not parse, more
 * fields than the cap, a domain that is not a plain host name or is a
 * public suffix, or a From: that cannot be read proves nothing. The
 * parsed fields live on the heap (struct authres is tens of kilobytes),
 * one at a time.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <libpsl.h>

#include "authres.h"
#include "reply_verify.h"

#define DOMAIN_MAX 254

/* A usable domain name, lower-cased into out: letters, digits, '-', at
 * least two labels, none empty. len bytes of s are read. */
static bool
domain_copy(const char *s, size_t len, char out[DOMAIN_MAX])
{
    size_t label = 0, dots = 0;

    while (len > 0 && s[len - 1] == '.')
        len--;
    if (len == 0 || len >= DOMAIN_MAX)
        return false;
    for (size_t i = 0; i < len; i++) {
        char c = s[i];

        if (c == '.') {
            if (label == 0)
                return false;
            label = 0;
            dots++;
        } else if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-') {
            label++;
        } else if (c >= 'A' && c <= 'Z') {
            c = (char)(c - 'A' + 'a');
            label++;
        } else {
            return false;
        }
        out[i] = c;
    }
    out[len] = '\0';
    return label > 0 && dots > 0;
}

/* The domain of "user@domain", "<user@domain>" or a bare "domain". */
static bool
addr_domain(const char *s, char out[DOMAIN_MAX])
{
    const char *at, *end;

    if (s == NULL)
        return false;
    while (*s == ' ' || *s == '\t' || *s == '<')
        s++;
    end = s + strlen(s);
    while (end > s && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '>'))
        end--;
    at = memrchr(s, '@', (size_t)(end - s));
    if (at != NULL)
        s = at + 1;
    return domain_copy(s, (size_t)(end - s), out);
}

/* The domain of a From: value: the last <addr> when there is one, else
 * the bare address; a list of authors ("a@x, b@y") proves nothing. */
static bool
from_domain(const char *from, char out[DOMAIN_MAX])
{
    const char *lt, *gt;
    char addr[DOMAIN_MAX * 2];
    size_t n;

    if (from == NULL || strnlen(from, 2048) >= 2048)
        return false;
    lt = strrchr(from, '<');
    if (lt != NULL) {
        gt = strchr(lt, '>');
        if (gt == NULL)
            return false;
        n = (size_t)(gt - lt - 1);
        if (n >= sizeof(addr))
            return false;
        memcpy(addr, lt + 1, n);
        addr[n] = '\0';
    } else {
        if (strchr(from, ',') != NULL || strchr(from, '(') != NULL)
            return false;
        n = strlen(from);
        if (n >= sizeof(addr))
            return false;
        memcpy(addr, from, n + 1);
    }
    return strchr(addr, '@') != NULL && addr_domain(addr, out);
}

static pthread_mutex_t psl_lock = PTHREAD_MUTEX_INITIALIZER;
static psl_ctx_t *psl_list;
static int psl_status = 1; /* 1: not loaded yet */

/* The newest list, so that an updated publicsuffix package or a fresh
 * download counts without a rebuild. A named file is tried on its own
 * first: psl_latest() would pass over one it cannot read. */
static int
psl_load(const char *file)
{
    psl_ctx_t *f;

    if (file != NULL && file[0] != '\0') {
        f = psl_load_file(file);
        if (f == NULL || psl_suffix_count(f) == 0) { /* -1: a DAFSA, uncounted */
            psl_free(f);
            return -EINVAL;
        }
        psl_free(f);
    }
    psl_list = psl_latest(file != NULL && file[0] != '\0' ? file : NULL);
    return psl_list != NULL ? 0 : -ENOENT;
}

int
reply_verify_load_list(const char *file)
{
    int r;

    pthread_mutex_lock(&psl_lock);
    if (psl_status > 0)
        psl_status = psl_load(file);
    r = psl_status;
    pthread_mutex_unlock(&psl_lock);
    return r;
}

bool
reply_verify_org_domain(const char *domain, char *out, size_t size)
{
    char d[DOMAIN_MAX];
    const char *org;

    if (domain == NULL || !domain_copy(domain, strlen(domain), d) ||
        reply_verify_load_list(NULL) < 0)
        return false;
    /* NULL for a public suffix itself: no one registered it. */
    org = psl_registrable_domain(psl_list, d);
    if (org == NULL || strlen(org) >= size)
        return false;
    memcpy(out, org, strlen(org) + 1);
    return true;
}

static bool
aligned(const char *a, const char *b)
{
    char oa[DOMAIN_MAX], ob[DOMAIN_MAX];

    return reply_verify_org_domain(a, oa, sizeof(oa)) &&
           reply_verify_org_domain(b, ob, sizeof(ob)) && strcmp(oa, ob) == 0;
}

/* What the trusted fields say, gathered over all of them. */
struct tally {
    bool dmarc_pass, dmarc_veto;
    bool spf_pass, spf_veto;
    bool dkim_aligned;
};

static void
tally_result(struct tally *t, const struct authres_result *r, const char *from_dom,
             const char *env_dom)
{
    bool pass = strcmp(r->result, "pass") == 0;
    char d[DOMAIN_MAX];

    if (strcmp(r->method, "dmarc") == 0) {
        const char *hf = authres_prop(r, "header.from");

        /* A result about another From: domain says nothing of this one; a
         * pass that does not say which domain passed proves nothing, a
         * failure that does not say still vetoes. */
        if (hf != NULL && (from_dom == NULL || !addr_domain(hf, d) || strcmp(d, from_dom) != 0))
            return;
        if (!pass)
            t->dmarc_veto = true;
        else if (hf != NULL)
            t->dmarc_pass = true;
    } else if (strcmp(r->method, "spf") == 0) {
        const char *mf = authres_prop(r, "smtp.mailfrom");

        /* Likewise: a pass without smtp.mailfrom may be the HELO's. */
        if (mf != NULL && (env_dom == NULL || !addr_domain(mf, d) || strcmp(d, env_dom) != 0))
            return;
        if (!pass)
            t->spf_veto = true;
        else if (mf != NULL)
            t->spf_pass = true;
    } else if (strcmp(r->method, "dkim") == 0 && pass && from_dom != NULL) {
        const char *hd = authres_prop(r, "header.d");

        if (hd != NULL && addr_domain(hd, d) && aligned(d, from_dom))
            t->dkim_aligned = true;
    }
}

static bool
is_authres(const struct reply_header *h)
{
    return h->name != NULL && h->value != NULL &&
           strcasecmp(h->name, "Authentication-Results") == 0;
}

/*
 * Gather the trusted results of every field into *t. Fails closed: past
 * the cap the MTA's own field may be the one unread, and a field that may
 * be the trusted verifier's but does not parse may hide its verdict.
 */
static enum reply_verify_refusal
tally_fields(const struct reply_verify_input *in, const char *from_dom, const char *env_dom,
             struct tally *t)
{
    struct authres *ar;
    size_t fields = 0;
    enum reply_verify_refusal why = REPLY_VERIFY_READ;

    for (size_t i = 0; i < in->n_headers; i++)
        if (is_authres(&in->headers[i]) && ++fields > REPLY_VERIFY_FIELDS_MAX)
            return REPLY_VERIFY_OVER_CAP;
    if (fields == 0)
        return REPLY_VERIFY_READ;
    ar = malloc(sizeof(*ar));
    if (ar == NULL) /* unread is unparsed: fail closed */
        return REPLY_VERIFY_UNPARSED;
    for (size_t i = 0; i < in->n_headers; i++) {
        int r;

        if (!is_authres(&in->headers[i]))
            continue;
        r = authres_parse(in->headers[i].value, ar);
        if (r < 0 &&
            (ar->authserv_id[0] == '\0' || strcasecmp(ar->authserv_id, in->authserv_id) == 0)) {
            why = REPLY_VERIFY_UNPARSED;
            break;
        }
        if (r < 0 || strcasecmp(ar->authserv_id, in->authserv_id) != 0)
            continue;
        for (size_t k = 0; k < ar->n_results; k++)
            tally_result(t, &ar->results[k], from_dom, env_dom);
    }
    free(ar);
    return why;
}

unsigned
reply_verify(const struct reply_verify_input *in, enum reply_verify_refusal *ret_refusal)
{
    unsigned proved = REPLY_REQUIRE_ANY;
    char env_dom[DOMAIN_MAX], from_dom[DOMAIN_MAX];
    bool have_env, have_from, from_ok;
    struct tally t = {0};
    enum reply_verify_refusal why = REPLY_VERIFY_READ;

    if (in == NULL)
        goto out;
    if (in->auth_authen != NULL && in->auth_authen[0] != '\0')
        proved |= REPLY_REQUIRE_AUTHENTICATED;
    if (in->authserv_id == NULL || in->authserv_id[0] == '\0')
        goto out;
    have_env = addr_domain(in->env_sender, env_dom);
    have_from = from_domain(in->from, from_dom);
    why = tally_fields(in, have_from ? from_dom : NULL, have_env ? env_dom : NULL, &t);
    if (why != REPLY_VERIFY_READ)
        goto out;
    /* The reply goes to the envelope sender: a proof about From: counts
     * only when the two domains align. */
    from_ok = have_from && have_env && aligned(from_dom, env_dom);
    if (t.dmarc_pass && !t.dmarc_veto && from_ok)
        proved |= REPLY_REQUIRE_DMARC_PASS;
    if (t.dkim_aligned && from_ok)
        proved |= REPLY_REQUIRE_DKIM_ALIGNED;
    if (t.spf_pass && !t.spf_veto && have_env)
        proved |= REPLY_REQUIRE_SPF_PASS;
out:
    if (ret_refusal != NULL)
        *ret_refusal = why;
    return proved;
}

const char *
reply_verify_refusal_name(enum reply_verify_refusal r)
{
    switch (r) {
    case REPLY_VERIFY_OVER_CAP:
        return "over-cap";
    case REPLY_VERIFY_UNPARSED:
        return "unparsed";
    case REPLY_VERIFY_READ:
        break;
    }
    return "";
}

bool
reply_verify_ok(unsigned required, unsigned proved)
{
    return (required & proved) != 0;
}
