/*
 * report_product.c - the versions of any product a report names, in the
 * forms projects write them, and the release or commit a source
 * browser's URL pins.
 *
 * Threading: reads only the shared tables (report_parser.h).
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "report_parser.h"

static const struct report_need *const need = &report_bytes_need;

#define REPORT_VERSION_TOKEN_MAX 80 /* bytes of one version token */

/*
 * Versions of any product, in the forms projects write them. These go
 * beyond the kernel's numbering above, so they rest on shape alone where
 * the shape is unmistakable, and on a word before them otherwise:
 *   - "name/1.2.3-DEV" (a User-Agent-like product/version), two or more
 *     components;
 *   - "v2.41", "v8.5.0-rc1": a 'v' and two or more components;
 *   - three components, optionally with a letter (1.1.1w) and -suffixes
 *     (8.7.0-DEV), unless the word before numbers a document (section
 *     3.2.1, figure, table, RFC) or names a tool that built or ran the
 *     test (gcc 12.2.0, qemu 7.2.0, Python 3.11.4) or a protocol;
 *   - two components after "version" or "release", or before a range
 *     word ("8.5 and earlier", "through", "to and including");
 *   - git describe strings (v6.9-rc2-123-gabcdef012345,
 *     curl-8_5_0-12-g1234567) and tags written name-N_N_N (curl-8_5_0);
 *   - two components after a comparison ("< 2.3", ">= 1.4"), and npm's
 *     "^1.4.2";
 *   - a package at a version ("lodash@4.17.20", "@scope/pkg@1.2.3"),
 *     Maven's "group:artifact:9.0.41", and a release named "name-1.2.3"
 *     as a token or a path component ("gems/rack-2.2.3/lib",
 *     "jackson-databind-2.9.10.jar"), unless the name is a tool's;
 *   - a commit id (7 to 40 hex digits, a digit among them) after
 *     "commit", "HEAD", "master", "main", "revision", "tree" or "at"
 *     after one of them ("current master at abc1234", "git master
 *     (abc1234)"), stored as "commit <id>";
 *   - a branch on a day: "main as of 2026-11-06", "master (branch) as
 *     of", "staging as of", stored as "<branch> as of <date>";
 *   - two components before a word that names a release line ("the 5.0
 *     stable branch", "the 4.2 series") or opens a range ("4.5 onwards");
 *   - a release line by its shape: "1.x", "9.0.x";
 *   - a Debian or Ubuntu revision after the three components
 *     ("1.2.3-4+deb12u1", "2.0.1-1ubuntu0.2~22.04").
 * Never four components (10.0.0.1), components of four digits or more
 * (dates as 04.12.2026), times (12:30) or anything shortly after "CVSS".
 *
 * What ends a version token: markup and quotes, and is_token_end()'s.
 */
static const bool version_delims[256] = {
    ['{'] = true,
    ['}'] = true,
    ['"'] = true,
    ['\''] = true,
    ['<'] = true,
    ['>'] = true,
    ['`'] = true,
    ['|'] = true,
    ['*'] = true,
    ['='] = true,
    ['\n'] = true,
    ['\r'] = true,
    /* is_token_end()'s */
    [' '] = true,
    ['\t'] = true,
    [','] = true,
    [';'] = true,
    ['('] = true,
    [')'] = true,
    ['['] = true,
    [']'] = true,
    ['\0'] = true,
};

/* A table, not a switch: every byte of a token with a digit in it is
 * asked, about 450,000 times over the corpus's 33 reports. */
static bool
is_version_delim(char c)
{
    return version_delims[(unsigned char)c];
}

/* Where the suffixes of a version from t[i] on end: "-DEV", "-rc1", a
 * Debian revision "-4+deb12u1", "~rc2". */
static size_t
suffix_end(const char *t, size_t n, size_t i)
{
    while (i + 1 < n && (t[i] == '-' || t[i] == '+' || t[i] == '~') && is_alnum(t[i + 1])) {
        i++;
        while (i < n && is_alnum(t[i]))
            i++;
    }
    return i;
}

/* Components of a version filling t[0..n) ("8.7.0-DEV", "1.1.1w", a
 * release line "20.x" or "9.0.x"): 2 or 3 of at most three digits each,
 * the last one may be an 'x'; 0 when t is not one. */
static unsigned
version_shape(const char *t, size_t n)
{
    unsigned comps = 0;
    size_t i = 0;

    for (;;) {
        size_t d = 0;

        while (i < n && is_digit(t[i]) && d < 4) {
            i++;
            d++;
        }
        if (d == 0 || d > 3)
            return 0;
        comps++;
        if (i + 1 < n && t[i] == '.' && is_digit(t[i + 1]))
            i++;
        else
            break;
    }
    if (comps < 3 && i + 2 == n && t[i] == '.' && (t[i + 1] == 'x' || t[i + 1] == 'X'))
        return comps + 1;
    if (comps < 2 || comps > 3)
        return 0;
    if (i < n && t[i] >= 'a' && t[i] <= 'z' && (i + 1 == n || t[i + 1] == '-'))
        i++;
    return suffix_end(t, n, i) == n ? comps : 0;
}

/* t[0..n) is a git describe string: "...-<N>-g<7 to 40 hex>". */
static bool
is_describe(const char *t, size_t n)
{
    const char *g = NULL;
    size_t k, d = 0;

    for (size_t i = 1; i + 1 < n; i++)
        if (t[i] == '-' && t[i + 1] == 'g')
            g = t + i;
    if (g == NULL)
        return false;
    k = hex_run(g + 2, (size_t)(t + n - g - 2));
    if (k < 7 || k > 40 || g + 2 + k != t + n)
        return false;
    while (g - d > t && is_digit(g[-1 - (ptrdiff_t)d]))
        d++;
    return d > 0 && g - d - 1 > t && g[-1 - (ptrdiff_t)d] == '-';
}

/* t[0..n) is a tag written "name-8_5_0". */
static bool
is_underscore_tag(const char *t, size_t n)
{
    size_t i = 0, parts = 0;

    if (n == 0 || !(ascii_class[(unsigned char)t[0]] & ASCII_ALPHA))
        return false;
    while (i < n && is_alnum(t[i]))
        i++;
    if (i + 1 >= n || t[i] != '-')
        return false;
    for (i++; i < n; i++) {
        size_t d = 0;

        while (i + d < n && is_digit(t[i + d]))
            d++;
        if (d == 0 || d > 4)
            return false;
        parts++;
        i += d;
        if (i < n && t[i] != '_')
            return false;
    }
    return parts >= 3;
}

/* The hex id t[0..n) follows a word that introduces a commit. */
static bool
after_commit_word(const char *s, size_t b)
{
    static const char *const words[] = {"commit", "head",     "master", "main",
                                        "tree",   "revision", "rev",    "sha1"};
    char prev[16];
    size_t e = b;

    while (e > 0 && (s[e - 1] == '(' || s[e - 1] == '#'))
        e--;
    report_word_before(s, e, prev, sizeof(prev));
    if (strcmp(prev, "at") == 0 || strcmp(prev, "is") == 0) {
        while (e > 0 && s[e - 1] == ' ')
            e--;
        while (e > 0 && is_alnum(s[e - 1]))
            e--;
        report_word_before(s, e, prev, sizeof(prev));
        if (strcmp(prev, "is") == 0) {
            while (e > 0 && s[e - 1] == ' ')
                e--;
            while (e > 0 && is_alnum(s[e - 1]))
                e--;
            report_word_before(s, e, prev, sizeof(prev));
        }
    }
    return report_word_in(prev, words, sizeof(words) / sizeof(words[0]));
}

/* A two-component version ends a range ("8.5 and earlier", "through")
 * or names a release line ("5.0 stable", "4.2 branch", "3.1 series"). */
static bool
before_range_word(const char *s, size_t n, size_t e)
{
    static const char *const ranges[] = {
        "and earlier", "and later", "or earlier", "or later", "and older", "and newer", "and above",
        "and below",   "through",   "to and inc", "up to",    "stable",    "branch",    "series",
        "lts",         "onwards",   "onward",     "or newer", "or above",  "and up",
    };

    while (e < n && s[e] == ' ')
        e++;
    for (size_t i = 0; i < sizeof(ranges) / sizeof(ranges[0]); i++) {
        size_t w = strlen(ranges[i]);

        /* A phrase as written, a word whole ("3.1 series", not "0.3
         * seriesless"; "branch" also as "branches"). */
        if (n - e >= w && strncasecmp(s + e, ranges[i], w) == 0 &&
            (strchr(ranges[i], ' ') != NULL || e + w == n || !is_alnum(s[e + w]) ||
             (n - e - w >= 2 && strncasecmp(s + e + w, "es", 2) == 0)))
            return true;
    }
    return false;
}

/* What product_version_token() strips off a token's front (">~@#+")
 * and end (".:!?-"): tables, not strchr(), as every token is asked. */
static const bool token_lead[256] = {
    ['>'] = true, ['~'] = true, ['@'] = true, ['#'] = true, ['+'] = true, ['^'] = true};

static const bool token_trail[256] = {
    ['.'] = true, [':'] = true, ['!'] = true, ['?'] = true, ['-'] = true};

static bool
is_token_lead(char c)
{
    return token_lead[(unsigned char)c];
}

static bool
is_token_trail(char c)
{
    return token_trail[(unsigned char)c];
}

/* Archive and package files named for a release: "x-2.9.10.jar". */
static size_t
strip_archive(const char *t, size_t n)
{
    static const struct needle exts[] = {
        NEEDLE(".tar.gz"), NEEDLE(".tar.xz"), NEEDLE(".tar.bz2"), NEEDLE(".tgz"),
        NEEDLE(".zip"),    NEEDLE(".jar"),    NEEDLE(".war"),     NEEDLE(".gem"),
        NEEDLE(".whl"),    NEEDLE(".egg"),    NEEDLE(".nupkg"),   NEEDLE(".dist-info"),
    };

    for (size_t k = 0; k < sizeof(exts) / sizeof(exts[0]); k++)
        if (ends_with(t, n, &exts[k]))
            return n - exts[k].n;
    return n;
}

/*
 * The version of a release named "name-1.2.3", t[0..n) one path
 * component or token: a gem's or a wheel's directory, a jar, a tarball
 * ("rack-2.2.3", "jackson-databind-2.9.10.jar", "openssl-3.0.2.tar.gz").
 * The name starts with a letter and is no tool that built or ran the test
 * (a not_products[] word, "gcc-12.2.0"). Sets *vb and *vn; false when t
 * is not one.
 */
static bool
named_release(const char *t, size_t n, const char *const *skip, size_t nskip, size_t *vb,
              size_t *vn)
{
    char name[16];
    size_t dash = 0, k = 0;

    n = strip_archive(t, n);
    for (size_t i = 1; i + 1 < n; i++)
        if (t[i] == '-' && is_digit(t[i + 1]))
            dash = i;
    if (dash < 2 || !(ascii_class[(unsigned char)t[0]] & ASCII_ALPHA) ||
        version_shape(t + dash + 1, n - dash - 1) == 0)
        return false;
    for (size_t i = 0; i < dash; i++)
        if (!is_ident(t[i]) && t[i] != '-' && t[i] != '.')
            return false;
    for (; k < dash && k + 1 < sizeof(name); k++)
        name[k] = (char)(t[k] >= 'A' && t[k] <= 'Z' ? t[k] - 'A' + 'a' : t[k]);
    name[k] = '\0';
    if (report_word_in(name, skip, nskip))
        return false;
    *vb = dash + 1;
    *vn = n - dash - 1;
    return true;
}

/* A comparison right before position b ("< 2.3", ">= 1.4", "<= 8.5"):
 * a two-component number in a range is a version. */
static bool
after_comparison(const char *s, size_t b)
{
    while (b > 0 && s[b - 1] == ' ')
        b--;
    return b > 0 && (s[b - 1] == '<' || s[b - 1] == '>' || s[b - 1] == '=');
}

/*
 * The word before position b is a product's name as people write one,
 * with a capital ("OpenSSL 3.0", "Tomcat 9.0.x", "Node.js 20.x"): a two-
 * component number after it is its version. Not a word that numbers or
 * rates something ("Figure 3.2", "Score 7.5"); the caller has ruled out
 * the tools' and the document's words.
 */
static bool
after_product_name(const char *s, size_t b, const char *prev)
{
    static const char *const rating[] = {"score", "base",  "rating", "severity", "level",
                                         "grade", "ratio", "size",   "weight",   "priority",
                                         "risk",  "cvss",  "epss",   "impact",   "about"};
    size_t e = b, w;

    while (e > 0 && s[e - 1] == ' ')
        e--;
    w = e;
    while (w > 0 && s[w - 1] != ' ' && s[w - 1] != '\t' && s[w - 1] != '(')
        w--;
    return e > w && e - w >= 2 && s[w] >= 'A' && s[w] <= 'Z' && is_alnum(s[e - 1]) &&
           !report_word_in(prev, rating, sizeof(rating) / sizeof(rating[0]));
}

/* Tools that built or ran the test, and protocols, are not the product. */
static const char *const not_products[] = {
    "gcc",  "clang", "llvm", "qemu", "gdb",    "binutils", "rustc",  "cmake",   "python", "python3",
    "perl", "node",  "java", "go",   "ubuntu", "debian",   "fedora", "rhel",    "centos", "tls",
    "ssl",  "http",  "smb",  "nfs",  "cvss",   "ip",       "ipv4",   "address", "offset",
};
#define N_NOT_PRODUCTS (sizeof(not_products) / sizeof(not_products[0]))

static bool
is_alpha(char c)
{
    return (ascii_class[(unsigned char)c] & ASCII_ALPHA) != 0;
}

/* A hex token t[0..len) at s[b]: a commit id after a word that introduces
 * one. */
static int
commit_token(struct message *m, const char *s, size_t b, const char *t, size_t len)
{
    if (len < 7 || len > 40 || strcspn(t, "0123456789") >= len || !after_commit_word(s, b))
        return 0;
    return report_version_commit(m, t, len);
}

/* The word before position i into out (report_word_before()); where
 * that word starts. */
static size_t
word_before_at(const char *s, size_t i, char *out, size_t outsz)
{
    report_word_before(s, i, out, outsz);
    while (i > 0 && (s[i - 1] == ' ' || s[i - 1] == ':' || s[i - 1] == '\t'))
        i--;
    while (i > 0 && (is_alnum(s[i - 1]) || s[i - 1] == '-'))
        i--;
    return i;
}

/* t[0..len) is a day written YYYY-MM-DD. */
static bool
is_iso_date(const char *t, size_t len)
{
    static const char shape[] = "dddd-dd-dd";

    if (len != sizeof(shape) - 1)
        return false;
    for (size_t i = 0; i < len; i++)
        if (shape[i] == 'd' ? !is_digit(t[i]) : t[i] != '-')
            return false;
    return t[0] == '1' || t[0] == '2';
}

/* "main as of 2026-11-06", the date t[0..len) at s[b]: the tree a report
 * tested, pinned by the day as a commit id pins it. Stored as "<branch>
 * as of <date>". */
static int
branch_as_of(struct message *m, const char *s, size_t b, const char *t, size_t len)
{
    static const char *const branches[] = {"main",    "master",  "trunk",   "tip",
                                           "head",    "staging", "develop", "development",
                                           "nightly", "default", "unstable"};
    char w[16], fact[48];
    size_t at;
    int k;

    at = word_before_at(s, b, w, sizeof(w));
    if (strcmp(w, "of") != 0)
        return 0;
    at = word_before_at(s, at, w, sizeof(w));
    if (strcmp(w, "as") != 0)
        return 0;
    at = word_before_at(s, at, w, sizeof(w));
    if (strcmp(w, "branch") == 0)
        word_before_at(s, at, w, sizeof(w));
    if (!report_word_in(w, branches, sizeof(branches) / sizeof(branches[0])))
        return 0;
    k = snprintf(fact, sizeof(fact), "%s as of %.*s", w, (int)len, t);
    if (k < 0 || (size_t)k >= sizeof(fact))
        return 0;
    return add_fact(&m->versions, fact, (size_t)k, REPORT_MAX_VERSIONS);
}

/* "lodash@4.17.20", "@scope/pkg@1.2.3": a package at a version; and
 * "org.apache.tomcat:tomcat-catalina:9.0.41", Maven's
 * group:artifact:version. Sets the version's offset *vb and length *vn in
 * t[0..len). */
static bool
package_version(const char *t, size_t len, size_t *vb, size_t *vn)
{
    const char *at = memchr(t + 1, '@', len - 1), *colon;

    if (at != NULL && is_alpha(t[0]) && is_alnum(at[-1]) &&
        version_shape(at + 1, (size_t)(t + len - at - 1)) > 0) {
        *vb = (size_t)(at + 1 - t);
        *vn = len - *vb;
        return true;
    }
    colon = memchr(t, ':', len);
    if (colon != NULL && colon > t && is_alpha(t[0])) {
        const char *last = t + len;

        while (last > colon && last[-1] != ':')
            last--;
        /* Two colons: a group and an artifact, not "Python:3.11.4". */
        if (last - 1 > colon && version_shape(last, (size_t)(t + len - last)) > 0) {
            *vb = (size_t)(last - t);
            *vn = len - *vb;
            return true;
        }
    }
    return false;
}

/* A release named "name-1.2.3" as the token t[0..len) or, when it has a
 * slash, as one of its path components (".../gems/rack-2.2.3/lib/rack/x.rb",
 * ".../lib/jackson-databind-2.9.10.jar"). Sets *vb and *vn in t. */
static bool
release_version(const char *t, size_t len, const char *slash, size_t *vb, size_t *vn)
{
    const char *c = t, *end = t + len;

    if (memchr(t, '-', len) == NULL)
        return false;
    if (slash == NULL)
        return named_release(t, len, not_products, N_NOT_PRODUCTS, vb, vn);
    while (c < end) {
        const char *ce = memchr(c, '/', (size_t)(end - c));
        size_t cn = ce != NULL ? (size_t)(ce - c) : (size_t)(end - c);

        if (named_release(c, cn, not_products, N_NOT_PRODUCTS, vb, vn)) {
            *vb += (size_t)(c - t);
            return true;
        }
        c += cn + 1;
    }
    return false;
}

/* "curl/8.7.0-DEV", the token t[0..len) at s[b] with its first slash at
 * slash: a name with a letter first, no path before it. */
static int
slash_version(struct message *m, const char *s, size_t b, const char *t, size_t len,
              const char *slash)
{
    size_t nl = (size_t)(slash - t);
    char prev[16];

    if (nl < 2 || !is_alpha(t[0]) || memchr(slash + 1, '/', len - nl - 1) != NULL)
        return 0;
    for (size_t i = 0; i < nl; i++)
        if (!is_ident(t[i]) && t[i] != '-' && t[i] != '+')
            return 0;
    if (version_shape(slash + 1, len - nl - 1) == 0)
        return 0;
    /* "HTTP/1.1" names a protocol's version, not the product's. */
    report_word_before(s, b + nl, prev, sizeof(prev));
    if (report_word_in(prev, not_products, N_NOT_PRODUCTS))
        return 0;
    return add_fact(&m->versions, slash + 1, len - nl - 1, REPORT_MAX_VERSIONS);
}

/* A number of two or three components, the token s[b..e) of the line
 * s[0..n): three stand on their shape, two need a word around them. */
static int
bare_version(struct message *m, const char *s, size_t n, size_t b, size_t e)
{
    static const char *const version_words[] = {"version", "versions", "release", "releases",
                                                "ver"};
    const char *t = s + b;
    size_t len = e - b;
    unsigned comps = version_shape(t, len);
    char prev[16];

    if (comps == 0)
        return 0;
    report_word_before(s, b, prev, sizeof(prev));
    if (report_word_in(prev, not_products, N_NOT_PRODUCTS) || report_word_numbering(prev))
        return 0;
    /* A release line ("1.x", "9.0.x") is a version by its shape. */
    if (comps == 2 && !(len > 2 && t[len - 2] == '.' && (t[len - 1] == 'x' || t[len - 1] == 'X')) &&
        !report_word_in(prev, version_words, sizeof(version_words) / sizeof(version_words[0])) &&
        !before_range_word(s, n, e) && !after_comparison(s, b) && !after_product_name(s, b, prev))
        return 0;
    return add_fact(&m->versions, t, len, REPORT_MAX_VERSIONS);
}

/* One token s[b..e) of the line s[0..n) that holds a digit. */
static int
product_version_token(struct message *m, const char *s, size_t n, size_t b, size_t e, uint64_t has)
{
    const char *t, *slash;
    size_t len, vb, vn;

    while (b < e && is_token_lead(s[b]))
        b++;
    while (e > b && is_token_trail(s[e - 1]))
        e--;
    t = s + b;
    len = e - b;
    if (len < 3 || len > REPORT_VERSION_TOKEN_MAX || (b > 0 && (unsigned char)s[b - 1] >= 0x80))
        return 0;
    /* Both shapes have a '-' (most tokens, addresses and numbers, none). */
    if (memchr(t, '-', len) != NULL && (is_describe(t, len) || is_underscore_tag(t, len)))
        return add_fact(&m->versions, t, len, REPORT_MAX_VERSIONS);
    if (hex_run(t, len) == len)
        return commit_token(m, s, b, t, len);
    if (is_iso_date(t, len))
        return branch_as_of(m, s, b, t, len);
    /* Every shape below has a dot between two digits (version_shape()):
     * most tokens with a digit (addresses, offsets, counts) have none. */
    if (memchr(t, '.', len) == NULL || (holds(has, need->cvss) && report_word_after_cvss(s, b)))
        return 0;
    slash = memchr(t, '/', len);
    if (package_version(t, len, &vb, &vn) || release_version(t, len, slash, &vb, &vn))
        return add_fact(&m->versions, t + vb, vn, REPORT_MAX_VERSIONS);
    if (slash != NULL)
        return slash_version(m, s, b, t, len, slash);
    if (t[0] == 'v' || t[0] == 'V')
        return version_shape(t + 1, len - 1) == 0
                   ? 0
                   : add_fact(&m->versions, t, len, REPORT_MAX_VERSIONS);
    return bare_version(m, s, n, b, e);
}

/*
 * A link into a source browser at a release or commit pins the code as a
 * version does: ".../blob/curl-8_3_0/lib/socks.c", ".../tree/v6.9/...",
 * ".../commit/<id>", cgit's "?h=v6.9" and "?id=<id>". Branch names
 * (master, main) pin nothing and are not taken.
 */
int
report_product_url(struct message *m, const char *u, size_t n)
{
    static const char *const marks[] = {"/blob/", "/tree/", "/commit/", "/tag/",
                                        "?h=",    "&h=",    "?id=",     "&id="};
    /* The byte of each mark memchr() looks for: one rarer in a URL than
     * '/' (ascii_find_at(); memmem()'s set-up costs more on a URL). */
    static const size_t at[] = {1, 1, 1, 1, 0, 0, 0, 0};

    _Static_assert(sizeof(at) / sizeof(at[0]) == sizeof(marks) / sizeof(marks[0]),
                   "a byte for every mark");
    for (size_t k = 0; k < sizeof(marks) / sizeof(marks[0]); k++) {
        const char *p = ascii_find_at(u, n, marks[k], at[k]);
        size_t len = 0;

        if (p == NULL)
            continue;
        p += strlen(marks[k]);
        while (p + len < u + n && strchr("/#?&;", p[len]) == NULL)
            len++;
        if (len < 3 || len > REPORT_VERSION_TOKEN_MAX)
            continue;
        if (hex_run(p, len) == len && len >= 7 && len <= 40 && strcspn(p, "0123456789") < len)
            return report_version_commit(m, p, len);
        if (is_describe(p, len) || is_underscore_tag(p, len) || version_shape(p, len) > 0 ||
            ((p[0] == 'v' || p[0] == 'V') && version_shape(p + 1, len - 1) > 0))
            return add_fact(&m->versions, p, len, REPORT_MAX_VERSIONS);
    }
    return 0;
}

/* s[n] must be a NUL. */
int
report_product_versions(struct message *m, const char *s, size_t n, size_t first_digit,
                        uint64_t has)
{
    size_t i = first_digit;
    int r;

    while (i < n) {
        size_t b, e;

        i += strcspn(s + i, "0123456789");
        if (i >= n)
            break;
        if (s[i] == '\0') {
            i++;
            continue;
        }
        b = i;
        while (b > 0 && !is_version_delim(s[b - 1]))
            b--;
        e = i;
        while (e < n && !is_version_delim(s[e]))
            e++;
        r = product_version_token(m, s, n, b, e, has);
        if (r < 0)
            return r;
        i = e;
    }
    return 0;
}
