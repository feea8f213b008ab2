/*
 * mime_ctype.c - a text/plain Content-Type of the usual shape (RFC 2045
 * tokens and quoted strings without escapes) read without a decode, an
 * unfold or a GMimeContentType; any other shape is left to GMime. No
 * state; thread-safe.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <glib.h>

#include "mime_ctype.h"

/* White space between the items of a Content-Type value: folding too. */
static bool
ct_space(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* RFC 2045's token characters. */
static bool
ct_token(char c)
{
    return c > 0x20 && c < 0x7f && strchr("()<>@,;:\\\"/[]?=", c) == NULL;
}

/* raw[*i..n) from *i past white space. */
static size_t
ct_skip(const char *raw, size_t i, size_t n)
{
    while (i < n && ct_space(raw[i]))
        i++;
    return i;
}

/* One parameter at raw[*i..n): attribute a[0..*alen) and value
 * v[0..*vlen), a token or a quoted string without escapes. False when it
 * has another shape (RFC 2231's '*', a comment, an escape). */
static bool
ct_param(const char *raw, size_t n, size_t *i, size_t *a, size_t *alen, size_t *v, size_t *vlen)
{
    size_t j = *i;

    *a = j;
    while (j < n && ct_token(raw[j]) && raw[j] != '*')
        j++;
    *alen = j - *a;
    j = ct_skip(raw, j, n);
    if (*alen == 0 || j >= n || raw[j] != '=')
        return false;
    j = ct_skip(raw, j + 1, n);
    if (j < n && raw[j] == '"') {
        *v = ++j;
        while (j < n && raw[j] != '"' && raw[j] != '\\' && raw[j] >= 0x20 && raw[j] < 0x7f)
            j++;
        if (j >= n || raw[j] != '"')
            return false;
        *vlen = j++ - *v;
    } else {
        *v = j;
        while (j < n && ct_token(raw[j]))
            j++;
        *vlen = j - *v;
    }
    *i = ct_skip(raw, j, n);
    return *vlen > 0;
}

/* "text/plain" at raw[*ip]: *ip moved past it and the white space after. */
static bool
ct_text_plain(const char *raw, size_t n, size_t *ip)
{
    size_t i = *ip;

    if (n - i < 4 || g_ascii_strncasecmp(raw + i, "text", 4) != 0)
        return false;
    i = ct_skip(raw, i + 4, n);
    if (i >= n || raw[i] != '/')
        return false;
    i = ct_skip(raw, i + 1, n);
    if (n - i < 5 || g_ascii_strncasecmp(raw + i, "plain", 5) != 0)
        return false;
    *ip = ct_skip(raw, i + 5, n);
    return true;
}

/* The name and charset parameters of a Content-Type. */
struct ct_params {
    bool named, has_cs;
    size_t cs, csn; /* the charset's value, raw[cs .. cs + csn) */
};

/* The parameters from raw[i] on into pp; false when GMime's reading must
 * decide (a shape not read here, a second name or charset). */
static bool
ct_params_read(const char *raw, size_t n, size_t i, struct ct_params *pp)
{
    while (i < n) {
        size_t a, alen, v, vlen;

        if (raw[i] != ';')
            return false;
        i = ct_skip(raw, i + 1, n);
        if (i >= n || raw[i] == ';')
            continue;
        if (!ct_param(raw, n, &i, &a, &alen, &v, &vlen))
            return false;
        /* A second name or charset: GMime's choice is its own. */
        if (alen == 4 && g_ascii_strncasecmp(raw + a, "name", 4) == 0) {
            if (pp->named)
                return false;
            pp->named = true;
        } else if (alen == 7 && g_ascii_strncasecmp(raw + a, "charset", 7) == 0) {
            if (pp->has_cs)
                return false;
            pp->has_cs = true;
            pp->cs = v;
            pp->csn = vlen;
        }
    }
    return true;
}

int
mime_ctype_plain(const char *raw, size_t n, bool *plain, char **charset)
{
    size_t i = ct_skip(raw, 0, n);
    struct ct_params pp = {0};

    *plain = false;
    *charset = NULL;
    if (!ct_text_plain(raw, n, &i) || !ct_params_read(raw, n, i, &pp))
        return 0;
    if (pp.named)
        return 1;
    if (pp.has_cs) {
        *charset = strndup(raw + pp.cs, pp.csn);
        if (*charset == NULL)
            return -ENOMEM;
    }
    *plain = true;
    return 1;
}
