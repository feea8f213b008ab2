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

int
mime_ctype_plain(const char *raw, size_t n, bool *plain, char **charset)
{
    size_t i = ct_skip(raw, 0, n), cs = 0, csn = 0;
    bool named = false, has_cs = false;

    *plain = false;
    *charset = NULL;
    if (n - i < 4 || g_ascii_strncasecmp(raw + i, "text", 4) != 0)
        return 0;
    i = ct_skip(raw, i + 4, n);
    if (i >= n || raw[i] != '/')
        return 0;
    i = ct_skip(raw, i + 1, n);
    if (n - i < 5 || g_ascii_strncasecmp(raw + i, "plain", 5) != 0)
        return 0;
    i = ct_skip(raw, i + 5, n);
    while (i < n) {
        size_t a, alen, v, vlen;

        if (raw[i] != ';')
            return 0;
        i = ct_skip(raw, i + 1, n);
        if (i >= n || raw[i] == ';')
            continue;
        if (!ct_param(raw, n, &i, &a, &alen, &v, &vlen))
            return 0;
        /* A second name or charset: GMime's choice is its own. */
        if (alen == 4 && g_ascii_strncasecmp(raw + a, "name", 4) == 0) {
            if (named)
                return 0;
            named = true;
        } else if (alen == 7 && g_ascii_strncasecmp(raw + a, "charset", 7) == 0) {
            if (has_cs)
                return 0;
            has_cs = true;
            cs = v;
            csn = vlen;
        }
    }
    if (named)
        return 1;
    if (has_cs) {
        *charset = strndup(raw + cs, csn);
        if (*charset == NULL)
            return -ENOMEM;
    }
    *plain = true;
    return 1;
}
