/*
 * rule_prefilter_lit.c - one literal of the prefilter's analyser as the
 * tables take it: its core without the word-boundary marks (PF_WB) and
 * the white space at its ends, and the PF_WB_* and PF_WS_* tests that
 * stand for them; and a required set less the literals that contain
 * another. No state; thread-safe.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rule_prefilter_lit.h"

/* True when the first n strings of v hold s[0..len); lens[] has the
 * length of each. */
bool
rule_prefilter_lit_has(const struct strv *v, size_t n, const size_t *lens, const char *s,
                       size_t len)
{
    for (size_t i = 0; i < n; i++)
        if (lens[i] == len && memcmp(v->v[i], s, len) == 0)
            return true;
    return false;
}

/* The core of lit into out (PF_LIT_MAX + 1 bytes): without its word
 * boundaries and the white space at its ends. *flags gets the PF_* tests
 * that stand for them: white space at an end needs a white space byte
 * there; a boundary before a word character needs a non-word byte (or
 * the start) before it, and likewise at the end. Returns the length. */
size_t
rule_prefilter_lit_core(const char *lit, char *out, unsigned *flags)
{
    char tmp[PF_LIT_MAX + 1];
    size_t n = 0, len = strlen(lit), lead = 0;

    *flags = 0;
    out[0] = '\0';
    /* Longer than the analyser makes them: no literal, never a cut one. */
    if (len > PF_LIT_MAX)
        return 0;
    for (size_t i = 0; i < len; i++)
        if (lit[i] != PF_WB)
            tmp[n++] = lit[i];
    while (lead < n && pf_is_space((unsigned char)tmp[lead]))
        lead++;
    while (n > lead && pf_is_space((unsigned char)tmp[n - 1])) {
        n--;
        *flags |= PF_WS_END;
    }
    if (lead > 0)
        *flags |= PF_WS_START;
    n -= lead;
    memcpy(out, tmp + lead, n);
    out[n] = '\0';
    if (n > 0 && lead == 0 && lit[0] == PF_WB && pf_is_word((unsigned char)out[0]))
        *flags |= PF_WB_START;
    if (n > 0 && (*flags & PF_WS_END) == 0 && lit[len - 1] == PF_WB &&
        pf_is_word((unsigned char)out[n - 1]))
        *flags |= PF_WB_END;
    return n;
}

/* Strength of a literal: the length of its core, one more per test. */
size_t
rule_prefilter_lit_strength(const char *lit)
{
    char buf[PF_LIT_MAX + 1];
    unsigned flags;
    size_t n = rule_prefilter_lit_core(lit, buf, &flags);

    for (; flags != 0; flags &= flags - 1)
        n++;
    return n;
}

/* True when every literal of v keeps at least PF_LIT_MIN characters once
 * its boundaries are taken out: the table needs them. */
bool
rule_prefilter_lit_usable(const struct strv *v)
{
    char buf[PF_LIT_MAX + 1];
    unsigned flags;

    for (size_t i = 0; i < v->n; i++)
        if (rule_prefilter_lit_core(v->v[i], buf, &flags) < PF_LIT_MIN)
            return false;
    return v->n > 0;
}

/* v with its boundaries taken out, as the public functions give it. */
int
rule_prefilter_lit_unmark(struct strv *v)
{
    struct strv out = {0};
    char buf[PF_LIT_MAX + 1];
    unsigned flags;
    int r = 0;

    for (size_t i = 0; i < v->n && r == 0; i++) {
        size_t n = rule_prefilter_lit_core(v->v[i], buf, &flags);

        r = strv_add_unique(&out, buf, n, PF_REQ_MAX);
    }
    strv_release(v);
    if (r < 0) {
        strv_release(&out);
        return r;
    }
    *v = out;
    return 0;
}

/* What redundant() knows of a literal before comparing it: its length
 * and the bytes in it, each as bit (byte % 64). */
struct lit_shape {
    size_t len;
    uint64_t bytes;
};

static struct lit_shape
lit_shape(const char *s)
{
    struct lit_shape sh = {strlen(s), 0};

    for (size_t i = 0; i < sh.len; i++)
        sh.bytes |= UINT64_C(1) << ((unsigned char)s[i] % 64);
    return sh;
}

/* True when some other literal of v is a substring of v[i]: v[i] then
 * adds nothing to the filter. An equal one only counts once, so the
 * first of equals stays. Only a literal no longer than v[i], with no
 * byte that v[i] lacks, can be in it: sh[] spares most compares. */
static bool
redundant(const struct strv *v, const struct lit_shape *sh, size_t i)
{
    for (size_t j = 0; j < v->n; j++) {
        if (j == i || sh[j].len > sh[i].len || (sh[j].bytes & ~sh[i].bytes) != 0)
            continue;
        if (sh[j].len == sh[i].len ? j < i && strcmp(v->v[i], v->v[j]) == 0
                                   : strstr(v->v[i], v->v[j]) != NULL)
            return true;
    }
    return false;
}

int
rule_prefilter_lit_prune(const struct strv *v, struct strv *ret)
{
    struct lit_shape *sh;
    int r = 0;

    memset(ret, 0, sizeof(*ret));
    sh = malloc((v->n ? v->n : 1) * sizeof(*sh));
    if (sh == NULL)
        return -ENOMEM;
    for (size_t i = 0; i < v->n; i++)
        sh[i] = lit_shape(v->v[i]);
    for (size_t i = 0; i < v->n; i++) {
        if (redundant(v, sh, i))
            continue;
        r = strv_add(ret, v->v[i], sh[i].len, PF_REQ_MAX);
        if (r < 0) {
            strv_release(ret);
            break;
        }
    }
    free(sh);
    return r;
}
