/*
 * authres.c - an Authentication-Results (RFC 8601) parser (see authres.h).
 *
 * A recursive-descent reader over the field body: CFWS is skipped between
 * every two tokens, words and values are copied into the caller's fixed
 * arrays (never longer than their caps), and the first syntax error stops
 * the parse so that a half-read field is never used.
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <strings.h>

#include "authres.h"

struct cursor {
    const char *p;
    int err;
};

static bool
is_ws(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* Ldh-str and the '_' some verifiers use ("dkim-adsp", "x_foo"). */
static bool
is_keyword(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '_';
}

/* RFC 2045 token characters. */
static bool
is_token(char c)
{
    return c > 0x20 && c < 0x7f && strchr("()<>@,;:\\\"/[]?=", c) == NULL;
}

static void
fail(struct cursor *c, int err)
{
    if (c->err == 0)
        c->err = err;
}

static void
skip_cfws(struct cursor *c)
{
    while (c->err == 0) {
        unsigned depth = 0;

        while (is_ws(*c->p))
            c->p++;
        if (*c->p != '(')
            return;
        do {
            char ch = *c->p++;

            if (ch == '\0') {
                fail(c, -EINVAL);
                c->p--;
                return;
            }
            if (ch == '\\' && *c->p != '\0')
                c->p++;
            else if (ch == '(' && ++depth > AUTHRES_COMMENT_DEPTH)
                fail(c, -EINVAL);
            else if (ch == ')')
                depth--;
        } while (depth > 0 && c->err == 0);
    }
}

/* Append ch to out (capacity cap, kept NUL-terminated); -EMSGSIZE past it. */
static void
put(struct cursor *c, char *out, size_t cap, size_t *len, char ch)
{
    if (*len + 1 >= cap) {
        fail(c, -EMSGSIZE);
        return;
    }
    out[(*len)++] = ch;
    out[*len] = '\0';
}

/* A keyword, lower-cased; empty is a syntax error. */
static void
read_keyword(struct cursor *c, char *out, size_t cap)
{
    size_t len = 0;

    out[0] = '\0';
    while (c->err == 0 && is_keyword(*c->p)) {
        char ch = *c->p++;

        put(c, out, cap, &len, (char)(ch >= 'A' && ch <= 'Z' ? ch - 'A' + 'a' : ch));
    }
    if (len == 0)
        fail(c, -EINVAL);
}

static void
read_quoted(struct cursor *c, char *out, size_t cap, size_t *len)
{
    c->p++;
    while (c->err == 0) {
        char ch = *c->p++;

        if (ch == '\0') {
            c->p--;
            fail(c, -EINVAL);
        } else if (ch == '"') {
            return;
        } else if (ch == '\\' && *c->p != '\0') {
            put(c, out, cap, len, *c->p++);
        } else if (ch == '\r' || ch == '\n') {
            /* folding inside the string */
        } else {
            put(c, out, cap, len, ch);
        }
    }
}

/* The characters of an unquoted pvalue: up to blank, ';' or '('. */
static bool
is_pvalue(char c)
{
    return (unsigned char)c > 0x20 && c != 0x7f && c != ';' && c != '(' && c != '"';
}

/*
 * A quoted string or a run of characters that pass ok: with is_token, a
 * value (the authserv-id); with is_pvalue, a pvalue = value / [[local-part]
 * "@"] domain-name, where a quoted local part may precede "@domain".
 */
static void
read_value(struct cursor *c, char *out, size_t cap, bool (*ok)(char))
{
    size_t len = 0;

    out[0] = '\0';
    if (*c->p == '"') {
        read_quoted(c, out, cap, &len);
        if (ok == is_token || *c->p != '@')
            return;
    }
    while (c->err == 0 && ok(*c->p))
        put(c, out, cap, &len, *c->p++);
    if (len == 0)
        fail(c, -EINVAL);
}

static void
read_props(struct cursor *c, struct authres_result *r)
{
    for (;;) {
        char ptype[AUTHRES_WORD_MAX], prop[AUTHRES_WORD_MAX] = "";
        char value[AUTHRES_VALUE_MAX];

        skip_cfws(c);
        if (c->err != 0 || *c->p == ';' || *c->p == '\0')
            return;
        read_keyword(c, ptype, sizeof(ptype));
        skip_cfws(c);
        if (c->err == 0 && *c->p == '.') {
            c->p++;
            skip_cfws(c);
            read_keyword(c, prop, sizeof(prop));
            skip_cfws(c);
        }
        if (c->err == 0 && *c->p != '=')
            fail(c, -EINVAL);
        if (c->err != 0)
            return;
        c->p++;
        skip_cfws(c);
        read_value(c, value, sizeof(value), is_pvalue);
        if (c->err != 0)
            return;
        if (r->n_props < AUTHRES_PROPS_MAX) {
            struct authres_prop *p = &r->props[r->n_props];
            size_t tl = strlen(ptype), pl = strlen(prop);

            if (tl + 1 + pl >= sizeof(p->name)) {
                fail(c, -EMSGSIZE);
                return;
            }
            memcpy(p->name, ptype, tl);
            p->name[tl] = '\0';
            if (pl > 0) {
                p->name[tl] = '.';
                memcpy(p->name + tl + 1, prop, pl + 1);
            }
            memcpy(p->value, value, sizeof(p->value));
            r->n_props++;
        }
    }
}

/* One resinfo after its ';': method [/version] = result [props]. A lone
 * "none" is the no-result form and adds nothing. */
static void
read_resinfo(struct cursor *c, struct authres *ar)
{
    struct authres_result *r;
    char method[AUTHRES_WORD_MAX];

    skip_cfws(c);
    if (c->err != 0 || *c->p == '\0' || *c->p == ';')
        return;
    read_keyword(c, method, sizeof(method));
    skip_cfws(c);
    if (c->err != 0)
        return;
    if ((*c->p == '\0' || *c->p == ';') && strcmp(method, "none") == 0)
        return;
    if (*c->p == '/') {
        c->p++;
        skip_cfws(c);
        if (!(*c->p >= '0' && *c->p <= '9'))
            fail(c, -EINVAL);
        while (*c->p >= '0' && *c->p <= '9')
            c->p++;
        skip_cfws(c);
    }
    if (c->err == 0 && *c->p != '=')
        fail(c, -EINVAL);
    if (c->err != 0)
        return;
    if (ar->n_results == AUTHRES_RESULTS_MAX) {
        fail(c, -EMSGSIZE);
        return;
    }
    r = &ar->results[ar->n_results];
    memset(r, 0, sizeof(*r));
    memcpy(r->method, method, sizeof(r->method));
    c->p++;
    skip_cfws(c);
    read_keyword(c, r->result, sizeof(r->result));
    if (c->err != 0)
        return;
    read_props(c, r);
    if (c->err == 0)
        ar->n_results++;
}

int
authres_parse(const char *value, struct authres *ret)
{
    struct cursor c = {.p = value, .err = 0};

    if (value == NULL || ret == NULL)
        return -EINVAL;
    ret->n_results = 0;
    skip_cfws(&c);
    read_value(&c, ret->authserv_id, sizeof(ret->authserv_id), is_token);
    /* The id alone is kept on failure: whose field failed matters. */
    if (c.err != 0) {
        ret->authserv_id[0] = '\0';
        return c.err;
    }
    if (strnlen(value, AUTHRES_FIELD_MAX + 1) > AUTHRES_FIELD_MAX)
        return -EMSGSIZE;
    skip_cfws(&c);
    /* authres-version */
    if (c.err == 0 && *c.p >= '0' && *c.p <= '9') {
        while (*c.p >= '0' && *c.p <= '9')
            c.p++;
        skip_cfws(&c);
    }
    while (c.err == 0 && *c.p != '\0') {
        if (*c.p != ';') {
            fail(&c, -EINVAL);
            break;
        }
        c.p++;
        read_resinfo(&c, ret);
    }
    return c.err;
}

const char *
authres_prop(const struct authres_result *r, const char *name)
{
    for (size_t i = 0; r != NULL && i < r->n_props; i++)
        if (strcasecmp(r->props[i].name, name) == 0)
            return r->props[i].value;
    return NULL;
}
