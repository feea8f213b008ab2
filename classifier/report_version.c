/*
 * report_version.c - the kernel versions a report names, conservatively,
 * with "next-YYYYMMDD" and "commit <id>". Other products' versions are
 * report_product.c's.
 *
 * Threading: reads only the shared tables (report_parser.h).
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <strings.h>

#include "report_parser.h"

static const struct report_need *const need = &report_bytes_need;

/* What ends a token a number is glued to ("12:30,"), a NUL included. */
static bool
is_token_end(char c)
{
    switch (c) {
    case ' ':
    case '\t':
    case ',':
    case ';':
    case '(':
    case ')':
    case '[':
    case ']':
    case '\0':
        return true;
    default:
        return false;
    }
}

/* Words after which a two-component number is a kernel's version. */
static const char *const context[] = {
    "linux",  "kernel",  "version", "mainline",   "stable",  "upstream",
    "linux-", "kernels", "tested",  "reproduced", "running", "booted",
};
/* Words that may follow "on 6.8" when it names a kernel. */
static const char *const on_followers[] = {"and", "or", "with", "but", "too", "as", "kernel"};
/* Programs whose versions reports name beside the kernel's. */
static const char *const other_programs[] = {
    "gcc",  "clang", "llvm", "python", "python3", "qemu", "glibc",  "binutils", "bash",   "openssl",
    "curl", "rustc", "rust", "go",     "systemd", "perl", "ubuntu", "debian",   "fedora", "rhel",
    "gdb",  "libc",  "node", "java",   "smb",     "nfs",  "tls",    "ssl",      "http",
};

int
report_version_commit(struct message *m, const char *h, size_t k)
{
    char tmp[48];

    memcpy(tmp, "commit ", 7);
    for (size_t j = 0; j < k; j++)
        tmp[7 + j] = (char)(h[j] >= 'A' && h[j] <= 'F' ? h[j] - 'A' + 'a' : h[j]);
    return add_fact(&m->versions, tmp, 7 + k, REPORT_MAX_VERSIONS);
}

/* "next-" with eight digits after it: linux-next's tags. */
static int
next_versions(struct message *m, const char *s, size_t n, uint64_t has)
{
    const char *p;
    int r;

    for (p = s;
         holds(has, need->next) && (p = ascii_find_at(p, n - (size_t)(p - s), "next-", 2)) != NULL;
         p += 5) {
        size_t d = 0;

        if (p > s && is_alnum(p[-1]))
            continue;
        while (p + 5 + d < s + n && is_digit(p[5 + d]))
            d++;
        if (d == 8 && (p + 5 + d == s + n || !is_alnum(p[5 + d]))) {
            r = add_fact(&m->versions, p, 13, REPORT_MAX_VERSIONS);
            if (r < 0)
                return r;
        }
    }
    return 0;
}

/* "commit <12 to 40 hex>", stored as "commit <id>". */
static int
commit_versions(struct message *m, const char *s, size_t n, uint64_t has)
{
    const char *p;
    int r;

    /* "mmit ", then the "co" or "Co" before it: a needle of "ommit "
     * would be a spelling error in the binary to lintian. */
    for (p = s; p < s + n && holds(has, need->commit) &&
                (p = ascii_find_at(p, n - (size_t)(p - s), "mmit ", 0)) != NULL;
         p += 5) {
        const char *h = p + 5;
        size_t k;

        if (p - s < 2 || p[-1] != 'o' || (p[-2] != 'c' && p[-2] != 'C') ||
            (p - 2 > s && is_alnum(p[-3])))
            continue;
        while (h < s + n && *h == ' ')
            h++;
        k = hex_run(h, (size_t)(s + n - h));
        if (k < 12 || k > 40 || (h + k < s + n && is_alnum(h[k])))
            continue;
        r = report_version_commit(m, h, k);
        if (r < 0)
            return r;
    }
    return 0;
}

/* One dotted number read by scan_numbers(). */
struct knum {
    size_t start; /* of the version, its 'v' included */
    size_t comps;
    unsigned long major, minor;
    bool vprefix, ysuffix, rc, distro;
    bool wide; /* a component of four digits or more */
};

/* Move *ip to the next number that is not glued to a word before it,
 * with k its start; false at the end of s[0..n). */
static bool
next_number(const char *s, size_t n, size_t *ip, struct knum *k)
{
    size_t i = *ip;

    while (i < n) {
        if (!is_digit(s[i])) {
            /* strcspn() skips to the next digit many bytes at a time; it
             * stops at a NUL too, at s[n] the latest. */
            i += strcspn(s + i, "0123456789");
            if (i < n && s[i] == '\0')
                i++;
            continue;
        }
        memset(k, 0, sizeof(*k));
        k->start = i;
        if (i > 0 && s[i - 1] == 'v' && (i < 2 || !is_alnum(s[i - 2]))) {
            k->vprefix = true;
            k->start = i - 1;
        } else if (i > 0 && (is_alnum(s[i - 1]) || s[i - 1] == '.' || s[i - 1] == '_')) {
            while (i < n && (is_alnum(s[i]) || s[i] == '.'))
                i++;
            continue;
        }
        break;
    }
    *ip = i;
    return i < n;
}

/* The dotted components from s[j] on into k; where they end. */
static size_t
read_components(const char *s, size_t n, size_t j, struct knum *k)
{
    for (;;) {
        unsigned long val = 0;
        size_t d = 0;

        while (j < n && is_digit(s[j]) && d < 9) {
            val = val * 10 + (unsigned long)(s[j] - '0');
            j++;
            d++;
        }
        if (k->comps == 0)
            k->major = val;
        else if (k->comps == 1)
            k->minor = val;
        /* No kernel has a component of four digits: 04.12.2026 is a date. */
        k->wide |= d > 3;
        k->comps++;
        if (j + 1 < n && s[j] == '.' && is_digit(s[j + 1])) {
            j++;
            continue;
        }
        return j;
    }
}

/* The suffix after the components ending at s[j] (".y", "-rcN", a
 * distro's "-45-generic", a '+'), for the number that starts at s[i];
 * where it ends. */
static size_t
read_suffix(const char *s, size_t n, size_t i, size_t j, struct knum *k)
{
    if (j + 1 < n && s[j] == '.' && s[j + 1] == 'y' && (j + 2 == n || !is_alnum(s[j + 2]))) {
        k->ysuffix = true;
        j += 2;
    } else if (j + 3 < n && s[j] == '-' && s[j + 1] == 'r' && s[j + 2] == 'c' &&
               is_digit(s[j + 3])) {
        j += 3;
        while (j < n && is_digit(s[j]))
            j++;
        k->rc = true;
    }
    if (k->comps == 3 && j + 1 < n && s[j] == '-' && is_alnum(s[j + 1])) {
        while (j < n && (is_alnum(s[j]) || strchr("._+-", s[j])))
            j++;
        while (j > i && strchr("._+-", s[j - 1]))
            j--;
        k->distro = true;
    } else if (j < n && s[j] == '+') {
        j++;
    }
    return j;
}

/* The number ending at s[j] is part of a larger token (12:30, 1.2.3abc,
 * a/b); "on 6.8: it" ends one. */
static bool
in_larger_token(const char *s, size_t n, size_t j, const struct knum *k)
{
    return j < n &&
           (is_alnum(s[j]) || s[j] == '_' || s[j] == '/' ||
            (s[j] == ':' && j + 1 < n && s[j + 1] != ' ' && s[j + 1] != '\t')) &&
           !k->distro;
}

/* A two-component number ending at s[j], after the word prev, is a
 * kernel's by the words after it: "6.8 kernel", or "on 6.8" with no word
 * or a joining word after it. */
static bool
named_by_next(const char *s, size_t n, size_t j, const char *prev, unsigned long major)
{
    size_t k = j;
    char next[16];
    bool ok;

    while (k < n && s[k] == ' ')
        k++;
    ok = n - k >= 6 && strncasecmp(s + k, "kernel", 6) == 0;
    if (!ok && strcmp(prev, "on") == 0 && major >= 3) {
        size_t e = k;

        while (e < n && is_alnum(s[e]) && e - k < sizeof(next) - 1)
            e++;
        report_word_before(s, e, next, sizeof(next));
        ok = k == n || !is_alnum(s[k]) ||
             report_word_in(next, on_followers, sizeof(on_followers) / sizeof(on_followers[0]));
    }
    return ok;
}

/* Whether the number k, its digits from s[i], ending at s[j], is a
 * kernel's version. */
static bool
is_kernel_version(const char *s, size_t n, size_t i, size_t j, const struct knum *k, uint64_t has)
{
    char prev[16];

    /* The word before is read only for a number of a kernel version's
     * shape: most numbers of a report are not. */
    if (k->comps < 2 || k->comps > 3 || k->major < 2 || k->major > 7 || k->minor > 99 || k->wide)
        return false;
    report_word_before(s, k->vprefix ? i - 1 : i, prev, sizeof(prev));
    if (report_word_in(prev, other_programs, sizeof(other_programs) / sizeof(other_programs[0])) ||
        report_word_numbering(prev) ||
        (holds(has, need->cvss) && report_word_after_cvss(s, k->start)))
        return false;
    /* Two reasons, one outcome: the version's own shape, then the words
     * around it. */
    if (k->vprefix || k->comps == 3 || k->ysuffix || k->rc)
        return true;
    if (report_word_in(prev, context, sizeof(context) / sizeof(context[0])) ||
        (k->start >= 6 && strncasecmp(s + k->start - 6, "linux-", 6) == 0))
        return true;
    return named_by_next(s, n, j, prev, k->major);
}

/* The kernel versions among the numbers of s[0..n), from i on. */
static int
scan_numbers(struct message *m, const char *s, size_t n, size_t i, uint64_t has)
{
    struct knum k;
    int r;

    while (next_number(s, n, &i, &k)) {
        size_t j = read_components(s, n, i, &k);

        if (j < n && is_digit(s[j])) {
            while (j < n && is_digit(s[j]))
                j++;
            i = j;
            continue;
        }
        j = read_suffix(s, n, i, j, &k);
        if (in_larger_token(s, n, j, &k)) {
            while (j < n && !is_token_end(s[j]))
                j++;
            i = j;
            continue;
        }
        if (is_kernel_version(s, n, i, j, &k, has)) {
            r = add_fact(&m->versions, s + k.start, j - k.start, REPORT_MAX_VERSIONS);
            if (r < 0)
                return r;
        }
        i = j > i ? j : i + 1;
    }
    return 0;
}

/*
 * Kernel versions, conservatively. A dotted number counts when its major
 * is 2..7 (2.6.x up to today's kernels), it has two or three components
 * (four is an IP address) and one of these holds:
 *   - it is written "vN.N..." (v6.9, v6.9-rc2);
 *   - it has three components (5.15.0, 2.6.32), optionally with a distro
 *     suffix (6.8.0-45-generic, 5.14.0-362.el9.x86_64);
 *   - it ends in -rcN (6.9-rc2) or .y (4.19.y);
 *   - two components with context: after "Linux", "kernel", "version",
 *     "mainline", "stable", "upstream", "linux-", "tested", "reproduced",
 *     "running" or "booted", or before "kernel"; or after "on" when no
 *     word follows ("tested on 6.8.", "on 6.8 and 6.9"), since "on 3.5
 *     GHz" is a measurement.
 * Numbers right after the name of another program (gcc 12.2.0, qemu
 * 7.2.0) are skipped, and so is anything shortly after "CVSS" (CVSS:3.1,
 * CVSS v3.1, CVSS version 3.1): the scoring system's version is no kernel.
 * So are times (12:30), decimals ("0.5 seconds", "3.5 GHz"), dates
 * (04.12.2026: no component has four digits) and addresses (10.0.0.1). Also "next-YYYYMMDD" and
 * "commit <12+ hex>", stored as "commit <sha>". s[n] must be a NUL.
 */
int
report_version_kernel(struct message *m, const char *s, size_t n, size_t first_digit, uint64_t has,
                      bool dotted)
{
    int r = 0;

    /* "next-" counts with eight digits after it, other versions have
     * digits too: a line without one has only a commit id to give. */
    if (first_digit < n)
        r = next_versions(m, s, n, has);
    if (r >= 0)
        r = commit_versions(m, s, n, has);
    /* Each number scan_numbers() takes has two or three components of
     * one to three digits (a wider one is no kernel's): a line without
     * such a dotted number (has_dotted_number()), most of a trace, has
     * none to give. */
    if (r >= 0 && dotted)
        r = scan_numbers(m, s, n, first_digit, has);
    return r;
}
