/*
 * reply_suppress.c - may this message be answered at all: the RFC 3834
 * section 2 checks (null sender, Auto-Submitted, List-*, Precedence,
 * X-Auto-Response-Suppress, system addresses, our own addresses). See
 * reply_suppress_reason() in reply.h. Pure functions, thread-safe.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "reply_text.h"

static bool
reply_ieq_prefix(const char *s, const char *prefix)
{
    return strncasecmp(s, prefix, strlen(prefix)) == 0;
}

static const char *const reply_system_exact[] = {
    "mailer-daemon", "mailer", "postmaster", "listserv", "majordomo",
    "nobody",        "bounce", "bounces",    "uucp",
};
static const char *const reply_system_prefix[] = {"owner-", "bounce-", "bounces-", "bounces+"};
static const char *const reply_system_suffix[] = {"-request", "-owner", "-bounces", "-relay"};
static const char *const reply_system_infix[] = {
    "noreply", "no-reply", "no_reply", "donotreply", "do-not-reply", "do_not_reply",
};

static bool
reply_system_local(const char *addr)
{
    char local[REPLY_ADDR_MAX + 1];
    const char *at = strrchr(addr, '@');
    size_t len = (size_t)(at - addr), base;

    for (size_t i = 0; i < len; i++)
        local[i] = (char)((addr[i] >= 'A' && addr[i] <= 'Z') ? addr[i] - 'A' + 'a' : addr[i]);
    local[len] = '\0';
    for (size_t i = 0; i < sizeof(reply_system_exact) / sizeof(*reply_system_exact); i++)
        if (strcmp(local, reply_system_exact[i]) == 0)
            return true;
    for (size_t i = 0; i < sizeof(reply_system_prefix) / sizeof(*reply_system_prefix); i++)
        if (strncmp(local, reply_system_prefix[i], strlen(reply_system_prefix[i])) == 0)
            return true;
    for (size_t i = 0; i < sizeof(reply_system_infix) / sizeof(*reply_system_infix); i++)
        if (strstr(local, reply_system_infix[i]) != NULL)
            return true;
    /* Suffixes are checked before any +detail (list-bounces+user=host). */
    base = strcspn(local, "+");
    local[base] = '\0';
    for (size_t i = 0; i < sizeof(reply_system_suffix) / sizeof(*reply_system_suffix); i++) {
        size_t sl = strlen(reply_system_suffix[i]);

        if (base >= sl && strcmp(local + base - sl, reply_system_suffix[i]) == 0)
            return true;
    }
    return false;
}

static bool
reply_own(const char *addr, const char *const *own, size_t n_own)
{
    char buf[REPLY_ADDR_MAX + 1];

    for (size_t i = 0; i < n_own; i++) {
        const char *o = own[i], *lt;
        size_t len;

        if (o == NULL)
            continue;
        while (*o == ' ' || *o == '\t')
            o++;
        /* "Name <addr>" as in ReplyFrom: compare the part in <>. */
        lt = strrchr(o, '<');
        if (lt != NULL) {
            const char *gt = strchr(lt, '>');

            if (gt == NULL)
                continue;
            o = lt + 1;
            len = (size_t)(gt - o);
        } else {
            len = strcspn(o, " \t");
        }
        if (len == 0 || len > REPLY_ADDR_MAX || o[0] == '@')
            continue;
        memcpy(buf, o, len);
        buf[len] = '\0';
        if (strcasecmp(buf, addr) == 0)
            return true;
    }
    return false;
}

/* The first word of a header value, lower-cased, for keyword tests. */
static void
reply_first_token(const char *value, char *out, size_t outlen)
{
    size_t n = 0;

    while (*value == ' ' || *value == '\t' || *value == '\r' || *value == '\n')
        value++;
    while (*value != '\0' && n + 1 < outlen &&
           ((*value >= 'a' && *value <= 'z') || (*value >= 'A' && *value <= 'Z') ||
            (*value >= '0' && *value <= '9') || *value == '-' || *value == '_')) {
        char c = *value++;

        out[n++] = (char)((c >= 'A' && c <= 'Z') ? c - 'A' + 'a' : c);
    }
    out[n] = '\0';
}

/* Why the envelope sender must not be answered; NULL: it may be. */
static const char *
sender_reason(const char *env_sender, const char *const *own_addrs, size_t n_own)
{
    char addr[REPLY_ADDR_MAX + 1];
    size_t len;

    if (env_sender == NULL)
        return "null sender";
    while (*env_sender == ' ' || *env_sender == '\t')
        env_sender++;
    len = strlen(env_sender);
    while (len > 0 && (env_sender[len - 1] == ' ' || env_sender[len - 1] == '\t'))
        len--;
    if (len == 0 || (len == 2 && env_sender[0] == '<' && env_sender[1] == '>'))
        return "null sender";
    if (len != strlen(env_sender) || !reply_addr(env_sender, addr))
        return "bad sender";
    if (reply_own(addr, own_addrs, n_own))
        return "own address";
    if (reply_system_local(addr))
        return "system sender";
    return NULL;
}

/* Why a header field forbids a reply; NULL: it does not. */
static const char *
header_reason(const char *name, const char *value)
{
    char tok[32];

    if (strcasecmp(name, "Auto-Submitted") == 0) {
        reply_first_token(value, tok, sizeof(tok));
        return strcmp(tok, "no") != 0 ? "auto-submitted" : NULL;
    }
    if ((reply_ieq_prefix(name, "List-") && name[5] != '\0') ||
        strcasecmp(name, "Mailing-List") == 0 || strcasecmp(name, "X-Mailing-List") == 0)
        return "list header";
    if (strcasecmp(name, "Precedence") == 0) {
        reply_first_token(value, tok, sizeof(tok));
        if (strcmp(tok, "bulk") == 0 || strcmp(tok, "list") == 0 || strcmp(tok, "junk") == 0)
            return "precedence";
        return NULL;
    }
    if (strcasecmp(name, "X-Auto-Response-Suppress") == 0) {
        /* Any class named (All, OOF, AutoReply, DR...) covers us;
         * only an explicit None lets a reply through. */
        reply_first_token(value, tok, sizeof(tok));
        return strcmp(tok, "none") != 0 ? "auto-response-suppress" : NULL;
    }
    return NULL;
}

const char *
reply_suppress_reason(const char *env_sender, const struct reply_header *headers, size_t n_headers,
                      const char *const *own_addrs, size_t n_own)
{
    const char *why = sender_reason(env_sender, own_addrs, n_own);

    for (size_t i = 0; why == NULL && i < n_headers; i++)
        if (headers[i].name != NULL)
            why = header_reason(headers[i].name, headers[i].value ? headers[i].value : "");
    return why;
}
