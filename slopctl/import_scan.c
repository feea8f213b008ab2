/*
 * import_scan.c - a small hand-written scanner for the names a kernel-style
 * source tree defines, for "slopctl import tree".
 *
 * It is no C parser: comments, strings and preprocessor lines are skipped
 * (a #define's name is kept); at brace and paren depth 0 an identifier
 * that follows an identifier or '*' and is followed by '(' is a function
 * being defined or declared. Both branches of an #ifdef are read, so a
 * brace in column 0 resets the depth. Kconfig files give their "config"
 * names. Reads only the text it is handed; thread-safe.
 */
#include <stdbool.h>
#include <string.h>

#include "import_scan.h"

/* Where one pass over a C file stands. */
struct c_scan {
    const char *s;
    size_t n, i;
    int braces, parens;
    char prev; /* 'i' identifier, '*' star, 'o' anything else */
    bool line_start;
    import_scan_fn *add;
    void *ctx;
};

static bool
ident_start(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static bool
ident_char(char c)
{
    return ident_start(c) || (c >= '0' && c <= '9');
}

static bool
is_blank(char c)
{
    return c == ' ' || c == '\t';
}

static void
add_prefixed(struct c_scan *cs, const char *prefix, const char *s, size_t n, char kind)
{
    char buf[IMPORT_SCAN_MAX_NAME + 1];
    size_t pn = strlen(prefix);

    if (pn + n > IMPORT_SCAN_MAX_NAME)
        return;
    memcpy(buf, prefix, pn);
    memcpy(buf + pn, s, n);
    cs->add(cs->ctx, buf, pn + n, kind);
}

static bool
word_is(const char *s, size_t n, const char *w)
{
    return strlen(w) == n && memcmp(s, w, n) == 0;
}

static bool
word_starts(const char *s, size_t n, const char *w)
{
    size_t k = strlen(w);

    return n >= k && memcmp(s, w, k) == 0;
}

static bool
defines_function(const char *m, size_t mn)
{
    return word_starts(m, mn, "BPF_CALL_") || word_starts(m, mn, "SYM_FUNC_START") ||
           word_starts(m, mn, "SYM_CODE_START") || word_starts(m, mn, "SYM_TYPED_FUNC_START") ||
           word_is(m, mn, "ENTRY") || word_is(m, mn, "GLOBAL") ||
           word_is(m, mn, "SYM_INNER_LABEL") || word_is(m, mn, "SYM_DATA_START");
}

/* Macros whose first argument names a symbol the tree defines. */
static void
special_macro(struct c_scan *cs, const char *m, size_t mn, const char *arg, size_t an)
{
    if (an == 0)
        return;
    if (word_starts(m, mn, "EXPORT_SYMBOL") || word_starts(m, mn, "EXPORT_PER_CPU_SYMBOL")) {
        cs->add(cs->ctx, arg, an, 'e');
    } else if (word_starts(m, mn, "SYSCALL_DEFINE")) {
        add_prefixed(cs, "sys_", arg, an, 's');
        add_prefixed(cs, "__do_sys_", arg, an, 's');
        add_prefixed(cs, "__se_sys_", arg, an, 's');
    } else if (word_starts(m, mn, "COMPAT_SYSCALL_DEFINE")) {
        add_prefixed(cs, "compat_sys_", arg, an, 's');
        add_prefixed(cs, "__do_compat_sys_", arg, an, 's');
    } else if (defines_function(m, mn)) {
        cs->add(cs->ctx, arg, an, 'f');
    }
}

static bool
is_special(const char *m, size_t mn)
{
    return word_starts(m, mn, "EXPORT_") || word_starts(m, mn, "SYSCALL_DEFINE") ||
           word_starts(m, mn, "COMPAT_SYSCALL_DEFINE") || word_starts(m, mn, "BPF_CALL_") ||
           word_starts(m, mn, "SYM_") || word_is(m, mn, "ENTRY") || word_is(m, mn, "GLOBAL");
}

/* A comment at cs->i is passed over; false when there is none. */
static bool
skip_comment(struct c_scan *cs)
{
    const char *s = cs->s, *e;
    size_t i = cs->i, n = cs->n;

    if (s[i] != '/' || i + 1 >= n)
        return false;
    if (s[i + 1] == '*') {
        e = memmem(s + i + 2, n - i - 2, "*/", 2);
        cs->i = e ? (size_t)(e - s) + 2 : n;
        return true;
    }
    if (s[i + 1] == '/') {
        e = memchr(s + i, '\n', n - i);
        cs->i = e ? (size_t)(e - s) : n;
        return true;
    }
    return false;
}

/* A preprocessor line at cs->i ('#'): a #define's name is kept, and the
 * directive runs to an unescaped newline. */
static void
scan_directive(struct c_scan *cs)
{
    const char *s = cs->s;
    size_t j = cs->i + 1, n = cs->n, b;

    while (j < n && is_blank(s[j]))
        j++;
    if (n - j > 6 && memcmp(s + j, "define", 6) == 0 && is_blank(s[j + 6])) {
        j += 6;
        while (j < n && is_blank(s[j]))
            j++;
        b = j;
        while (j < n && ident_char(s[j]))
            j++;
        if (j > b && ident_start(s[b]))
            cs->add(cs->ctx, s + b, j - b, 'm');
    }
    while (j < n && !(s[j] == '\n' && s[j - 1] != '\\'))
        j++;
    cs->i = j;
}

static void
skip_quoted(struct c_scan *cs, char quote)
{
    size_t j = cs->i + 1;

    while (j < cs->n && cs->s[j] != quote && cs->s[j] != '\n')
        j += cs->s[j] == '\\' ? 2 : 1;
    cs->i = j + 1;
    cs->prev = 'o';
}

/* The identifier s[b..e) stands at file level before the '(' at s[j]. */
static void
file_level_call(struct c_scan *cs, size_t b, size_t e, size_t j)
{
    const char *s = cs->s;
    size_t a;

    if (!is_special(s + b, e - b)) {
        if (cs->prev == 'i' || cs->prev == '*')
            cs->add(cs->ctx, s + b, e - b, 'f');
        return;
    }
    j++;
    while (j < cs->n && is_blank(s[j]))
        j++;
    a = j;
    while (j < cs->n && ident_char(s[j]))
        j++;
    special_macro(cs, s + b, e - b, s + a, j - a);
}

static void
scan_ident(struct c_scan *cs)
{
    const char *s = cs->s;
    size_t b = cs->i, j;

    while (cs->i < cs->n && ident_char(s[cs->i]))
        cs->i++;
    if (cs->braces == 0 && cs->parens == 0) {
        j = cs->i;
        while (j < cs->n && (is_blank(s[j]) || s[j] == '\n'))
            j++;
        if (j < cs->n && s[j] == '(')
            file_level_call(cs, b, cs->i, j);
    }
    cs->prev = 'i';
}

static void
scan_punct(struct c_scan *cs, char c)
{
    size_t i = cs->i;

    if (c == '{')
        cs->braces++;
    else if (c == '}' && cs->braces > 0)
        cs->braces--;
    /* Kernel style puts a function's braces in column 0; resynchronise
     * there, so #ifdef branches that each open a brace cannot leave
     * the rest of the file looking nested. */
    if ((c == '{' || c == '}') && (i == 0 || cs->s[i - 1] == '\n')) {
        cs->braces = c == '{' ? 1 : 0;
        cs->parens = 0;
    } else if (c == '(')
        cs->parens++;
    else if (c == ')' && cs->parens > 0)
        cs->parens--;
    /* A ';' at file level ends any declaration a stray paren broke. */
    if (c == ';' && cs->braces == 0)
        cs->parens = 0;
    cs->prev = c == '*' ? '*' : 'o';
    cs->i++;
}

void
import_scan_c(const char *s, size_t n, import_scan_fn *add, void *ctx)
{
    struct c_scan cs = {.s = s, .n = n, .line_start = true, .add = add, .ctx = ctx};

    while (cs.i < n) {
        char c = s[cs.i];

        if (c == '\n') {
            cs.line_start = true;
            cs.i++;
        } else if (is_blank(c) || c == '\r' || c == '\f' || c == '\v') {
            cs.i++;
        } else if (skip_comment(&cs)) {
            continue;
        } else if (c == '#' && cs.line_start) {
            scan_directive(&cs);
        } else {
            cs.line_start = false;
            if (c == '"' || c == '\'')
                skip_quoted(&cs, c);
            else if (ident_start(c))
                scan_ident(&cs);
            else
                scan_punct(&cs, c);
        }
    }
}

/* The length of "config " or "menuconfig " (with its blank) at l, or 0. */
static size_t
config_keyword(const char *l, size_t len)
{
    if (len > 7 && memcmp(l, "config", 6) == 0 && is_blank(l[6]))
        return 7;
    if (len > 11 && memcmp(l, "menuconfig", 10) == 0 && is_blank(l[10]))
        return 11;
    return 0;
}

static void
kconfig_line(const char *l, size_t len, import_scan_fn *add, void *ctx)
{
    char buf[IMPORT_SCAN_MAX_NAME + 1];
    size_t k = 0, kw, b;

    while (k < len && is_blank(l[k]))
        k++;
    kw = config_keyword(l + k, len - k);
    if (kw == 0)
        return;
    k += kw;
    while (k < len && is_blank(l[k]))
        k++;
    b = k;
    while (k < len && ident_char(l[k]))
        k++;
    if (k == b || k - b + 7 > IMPORT_SCAN_MAX_NAME)
        return;
    memcpy(buf, "CONFIG_", 7);
    memcpy(buf + 7, l + b, k - b);
    add(ctx, buf, k - b + 7, 'c');
}

void
import_scan_kconfig(const char *s, size_t n, import_scan_fn *add, void *ctx)
{
    size_t i = 0;

    while (i < n) {
        const char *l = s + i, *e = memchr(l, '\n', n - i);
        size_t len = e ? (size_t)(e - l) : n - i;

        i += len + 1;
        kconfig_line(l, len, add, ctx);
    }
}
