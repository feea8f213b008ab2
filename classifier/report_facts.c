/*
 * report_facts.c - the facts of one report line a maintainer looks for
 * first: URLs, CONFIG_ symbols, function names, source-tree paths, and
 * (report_version.c, report_product.c) versions. Never from inside a URL:
 * a URL is blanked once taken. Each list is capped (REPORT_MAX_*).
 *
 * Threading: reads only the shared tables (report_parser.h).
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <strings.h>

#include "report_parser.h"

static const struct report_need *const need = &report_bytes_need;

/* White space, the quotes and brackets mail puts around a URL, and a NUL
 * (a byte strchr() would find in any set). */
static bool
is_url_end(char c)
{
    switch (c) {
    case ' ':
    case '\t':
    case '<':
    case '>':
    case '"':
    case '\'':
    case '`':
    case '|':
    case '\0':
        return true;
    default:
        return false;
    }
}

/* Where the URL whose "://" is at s[k] starts: at "https" or "http"
 * before it, not before from; SIZE_MAX when it has neither. */
static size_t
url_start(const char *s, size_t k, size_t from)
{
    if (k >= from + 5 && strncasecmp(s + k - 5, "https", 5) == 0)
        return k - 5;
    if (k >= from + 4 && strncasecmp(s + k - 4, "http", 4) == 0)
        return k - 4;
    return SIZE_MAX;
}

/* Where the URL starting at s[start] ends, without the punctuation of
 * the sentence around it. */
static size_t
url_end(const char *s, size_t n, size_t start)
{
    size_t end = start;

    while (end < n && !is_url_end(s[end]))
        end++;
    while (end > start && strchr(".,;:!?)]}'\"*", s[end - 1]))
        end--;
    return end;
}

/* s[n] must be a NUL. */
static int
extract_urls(struct message *m, char *s, size_t n)
{
    /* from: where the next URL may start, after the last one taken */
    size_t i = 0, from = 0;
    int r;

    /* Every URL taken has "://", found by its ':': most lines have none,
     * and a line of a trace has few ("RIP: 0010:", "kworker/0:1") where
     * it has many an 'h'. */
    while (i < n) {
        const char *c = memchr(s + i, ':', n - i);
        size_t k, start, end;

        if (c == NULL)
            break;
        k = (size_t)(c - s);
        i = k + 1;
        if (n - k < 3 || c[1] != '/' || c[2] != '/' || (start = url_start(s, k, from)) == SIZE_MAX)
            continue;
        end = url_end(s, n, start);
        r = add_fact(&m->urls, s + start, end - start, REPORT_MAX_URLS);
        if (r >= 0)
            r = report_product_url(m, s + start, end - start);
        if (r < 0)
            return r;
        /* Blank the URL so nothing in it is taken for a path or version. */
        memset(s + start, ' ', end - start);
        from = end > start ? end : start + 1;
        if (i < from)
            i = from;
    }
    return 0;
}

static int
extract_configs(struct message *m, const char *s, size_t n)
{
    const char *p = s;
    int r;

    while ((p = ascii_find(p, n - (size_t)(p - s), "CONFIG_")) != NULL) {
        size_t k = 7;

        if (p > s && is_ident(p[-1])) {
            p += 7;
            continue;
        }
        while (p + k < s + n && (is_digit(p[k]) || (p[k] >= 'A' && p[k] <= 'Z') || p[k] == '_'))
            k++;
        while (k > 7 && p[k - 1] == '_')
            k--;
        if (k > 7 && k <= REPORT_MAX_IDENT) {
            r = add_fact(&m->configs, p, k, REPORT_MAX_CONFIGS);
            if (r < 0)
                return r;
        }
        p += k;
    }
    return 0;
}

static int
extract_functions(struct message *m, const char *s, size_t n)
{
    const char *p = s + 1, *end = s + n;
    int r;

    /* memchr() to each '(' (from the second byte, with one after it). */
    while (n >= 2 && p < end - 1 && (p = memchr(p, '(', (size_t)(end - 1 - p))) != NULL) {
        size_t i = (size_t)(p - s), b;

        p++;
        if (s[i + 1] != ')' || !is_ident(s[i - 1]))
            continue;
        b = i;
        while (b > 0 && is_ident(s[b - 1]))
            b--;
        if (is_digit(s[b]) || i - b > REPORT_MAX_IDENT)
            continue;
        r = add_fact(&m->functions, s + b, i - b, REPORT_MAX_FUNCTIONS);
        if (r < 0)
            return r;
    }
    return 0;
}

/* A source-tree path: relative, with a '/', naming a kind of file the
 * kernel tree holds. */
static bool
is_tree_path(const char *s, size_t n)
{
    static const struct needle exts[] = {
        NEEDLE(".c"),    NEEDLE(".h"),    NEEDLE(".rs"),  NEEDLE(".S"),
        NEEDLE(".rst"),  NEEDLE(".sh"),   NEEDLE(".py"),  NEEDLE(".dts"),
        NEEDLE(".dtsi"), NEEDLE(".yaml"), NEEDLE(".lds"),
    };
    const char *base;
    size_t bn;
    bool named = false;

    if (n < 3 || s[0] == '/' || memchr(s, '/', n) == NULL || starts(s, n, ".."))
        return false;
    base = s + n;
    while (base > s && base[-1] != '/')
        base--;
    bn = n - (size_t)(base - s);
    if (bn == 0)
        return false;
    if (starts(base, bn, "Kconfig") || (bn == 8 && memcmp(base, "Makefile", 8) == 0) ||
        (bn == 6 && memcmp(base, "Kbuild", 6) == 0))
        named = true;
    for (size_t i = 0; !named && i < sizeof(exts) / sizeof(exts[0]); i++)
        named = bn > exts[i].n && ends_with(s, n, &exts[i]);
    /* "//" last: most runs around a '/' name no kind of file at all. */
    return named && ascii_find(s, n, "//") == NULL;
}

static bool
is_path_char(char c)
{
    return report_bytes_path[(unsigned char)c];
}

static int
extract_paths(struct message *m, const char *s, size_t n)
{
    size_t i = 0;
    int r;

    /* Every path taken has a '/' (is_tree_path()): the runs of path
     * characters are found from their '/', not read one by one. */
    while (i < n) {
        const char *slash = memchr(s + i, '/', n - i);
        size_t b, e;
        const char *t;
        size_t tn;

        if (slash == NULL)
            break;
        /* The run around the '/'; the previous run ended before i. */
        b = (size_t)(slash - s);
        while (b > i && is_path_char(s[b - 1]))
            b--;
        i = (size_t)(slash - s);
        while (i < n && is_path_char(s[i]))
            i++;
        e = i;
        while (e > b && (s[e - 1] == '.' || s[e - 1] == '-'))
            e--;
        t = s + b;
        tn = e - b;
        if (starts(t, tn, "./")) {
            t += 2;
            tn -= 2;
        }
        if ((starts(t, tn, "a/") || starts(t, tn, "b/")) && memchr(t + 2, '/', tn - 2) != NULL) {
            t += 2;
            tn -= 2;
        }
        if (tn > 0 && tn <= 256 && is_tree_path(t, tn)) {
            r = add_fact(&m->paths, t, tn, REPORT_MAX_PATHS);
            if (r < 0)
                return r;
        }
    }
    return 0;
}

/* Whether s[0..n) holds a '.' between two runs of one to three digits:
 * the components of every version either scan takes are that short, so
 * a timestamp's "[ 1234.567890]" holds none. */
static bool
has_dotted_number(const char *s, size_t n)
{
    for (const char *p = memchr(s, '.', n); p != NULL;
         p = memchr(p + 1, '.', (size_t)(s + n - p - 1))) {
        size_t i = (size_t)(p - s), before = 0, after = 0;

        while (before < 4 && before < i && is_digit(s[i - 1 - before]))
            before++;
        while (after < 4 && i + 1 + after < n && is_digit(s[i + 1 + after]))
            after++;
        if (before >= 1 && before <= 3 && after >= 1 && after <= 3)
            return true;
    }
    return false;
}

/*
 * Whether a line with the classes has, dotted when it holds a dotted
 * number (has_dotted_number()), may give a version to
 * report_version_kernel() or report_product_versions(). Every one they take
 * has a dotted number (the numbers, "v6.9", "curl/8.7.0"; each component
 * is one whole run of digits), or a '-' ("next-20240101", describe strings, "curl-
 * 8_5_0"), or is a hex id after a word that introduces a commit
 * (after_commit_word(), whose "commit" also covers "commit <id>"). Most
 * lines of a trace have none, and both scans stop at every digit.
 */
static bool
may_hold_version(bool dotted, uint64_t has)
{
    if (dotted || holds(has, need->dash))
        return true;
    for (size_t k = 0; k < sizeof(need->commit_words) / sizeof(need->commit_words[0]); k++)
        if (holds(has, need->commit_words[k]))
            return true;
    return false;
}

/*
 * Whether a line with the classes has, s[0..n), may hold a path that
 * is_tree_path() takes: one whose name ends in an extension it knows (a
 * '.' before the extension's first letter) or is Kconfig..., Makefile or
 * Kbuild. Trace lines hold '/' ("kworker/1:2", "+0x1a/0x30") and '.'
 * ("[  12.345678]"), but seldom either.
 */
static bool
may_hold_path(const char *s, size_t n, uint64_t has)
{
    /* The first letters of is_tree_path()'s extensions. */
    static const bool ext_first[256] = {
        ['c'] = true, ['h'] = true, ['r'] = true, ['S'] = true, ['s'] = true,
        ['p'] = true, ['d'] = true, ['y'] = true, ['l'] = true};
    const char *e = s + n;

    if ((has & need->dot_or_k) == 0)
        return false;
    for (const char *p = memchr(s, '.', n); p != NULL && p + 1 < e;
         p = memchr(p + 1, '.', (size_t)(e - p - 1)))
        if (ext_first[(unsigned char)p[1]])
            return true;
    return holds(has, need->named) &&
           (ascii_find(s, n, "Kconfig") != NULL || ascii_find(s, n, "Kbuild") != NULL ||
            ascii_find(s, n, "Makefile") != NULL);
}

/* has holds the line's classes: each list is looked for only in a line
 * that holds the bytes its entries need-> */
int
report_facts_extract(struct message *m, const char *line, size_t n, uint64_t has, char *scratch)
{
    size_t first_digit = n;
    bool dotted;
    int r = 0;

    memcpy(scratch, line, n);
    scratch[n] = '\0';
    /* Where the version scans start; n when the line has no digit. A URL
     * is blanked below, so digits can only go, never appear, and has
     * stays a superset of the line's classes. */
    if (holds(has, need->digit))
        first_digit = strcspn(scratch, "0123456789");
    if (holds(has, need->url))
        r = extract_urls(m, scratch, n);
    if (r >= 0 && holds(has, need->config))
        r = extract_configs(m, scratch, n);
    if (r >= 0 && holds(has, need->call))
        r = extract_functions(m, scratch, n);
    if (r >= 0 && holds(has, need->slash) && may_hold_path(scratch, n, has))
        r = extract_paths(m, scratch, n);
    if (r < 0)
        return r;
    dotted = holds(has, need->digit) && has_dotted_number(scratch, n);
    if (!may_hold_version(dotted, has))
        return r;
    r = report_version_kernel(m, scratch, n, first_digit, has, dotted);
    if (r >= 0 && first_digit < n)
        r = report_product_versions(m, scratch, n, first_digit, has);
    return r;
}
