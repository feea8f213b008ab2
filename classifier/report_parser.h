/*
 * report_parser.h - what the readers of one report text share (private to
 * report_parse.c and the report_*.c files it calls): spans of the text,
 * the classes of bytes a line holds, the needles its questions look for,
 * and the lists the facts go to.
 *
 * Invariants: a span never reaches past the report text; the tables of
 * report_bytes.c and report_trace.c are built once (report_parse.c, under
 * pthread_once()) before any line is read, and only read after.
 * Ownership: what a reader adds to the message belongs to the message.
 * Threading: the tables are shared and read-only; nothing else is.
 */
#ifndef SLOP_REPORT_PARSER_H
#define SLOP_REPORT_PARSER_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "ascii.h"
#include "message.h"
#include "needle.h"
#include "span.h"
#include "strv.h"

#define REPORT_MAX_VERSIONS 64

#define REPORT_MAX_FUNCTIONS 256

#define REPORT_MAX_PATHS 256

#define REPORT_MAX_CONFIGS 128

#define REPORT_MAX_URLS 128

#define REPORT_MAX_IDENT 128

/*
 * The classes of bytes a line holds, one bit each, found in one pass
 * over the line: a question about the line is asked only when the line
 * holds every class of byte its answer needs (bytes_of() of the text it
 * looks for). Letters are one class per letter whatever their case, with
 * one more bit for "an upper-case letter"; digits are one class; so is
 * each byte of byte_class_punct; any other byte is BC_OTHER. A line's
 * classes stay a superset of its bytes' when bytes are blanked or cut
 * off, so they may be reused for part of a line.
 */
enum {
    BC_UPPER = 26, /* bits 0..25: the letters 'a'..'z', either case */
    BC_DIGIT,
    BC_PUNCT, /* the first of byte_class_punct's bits */
    BC_OTHER = 63,
};

#define BC(k) ((uint64_t)1 << (k))

/* report_bytes.c: the class of each byte, and the bytes of a path
 * (letters, digits, '_', '.', '/', '-' and '+'). */
extern uint64_t report_bytes_class[256];
extern bool report_bytes_path[256];

/* The classes each question needs, from bytes_of() at start-up
 * (report_bytes_init()). */
struct report_need {
    uint64_t url;       /* "http://" in either case */
    uint64_t config;    /* "CONFIG_" */
    uint64_t call;      /* "()" */
    uint64_t slash;     /* a tree path's '/' ... */
    uint64_t dot_or_k;  /* ... and its extension's '.' or the 'k' of Kconfig, Makefile, Kbuild */
    uint64_t named;     /* the 'k' and a capital of Kconfig, Makefile, Kbuild */
    uint64_t next;      /* "next-" and digits */
    uint64_t commit;    /* "commit " in either case */
    uint64_t colon;     /* a register line's "RAX:" */
    uint64_t timestamp; /* "[1.2]" */
    uint64_t frame_old; /* "[<" */
    uint64_t frame;     /* "+0x" and "/0x" */
    uint64_t sanitizer; /* "==" or "#" (either will do) */
    uint64_t prompt;    /* '$', '#', '@' or '_' (any will do) */
    uint64_t code;      /* ';', '{', '}' or '=' (any will do) */
    uint64_t hash;      /* "#include" */
    uint64_t paren;     /* "f(" */
    uint64_t hex0x;     /* "0x" */
    uint64_t ffff;      /* "ffff" */
    uint64_t digit;
    uint64_t cvss; /* "CVSS" in either case */
    uint64_t dash; /* "-" */
    /* The words after which a hex id is a commit (after_commit_word()). */
    uint64_t commit_words[7];
};

extern struct report_need report_bytes_need;

/* report_bytes.c: build the tables above; once, before any line is read. */
void report_bytes_init(void);

/* The classes of the bytes of s[0..n). Four chains of ORs, four bytes a
 * turn: the CPU overlaps the table loads, and the loop's own test is
 * paid once for four bytes. */
static inline uint64_t
bytes_in(const char *s, size_t n)
{
    const unsigned char *u = (const unsigned char *)s;
    uint64_t a = 0, b = 0, c = 0, d = 0;
    size_t i = 0;

    for (; i + 4 <= n; i += 4) {
        a |= report_bytes_class[u[i]];
        b |= report_bytes_class[u[i + 1]];
        c |= report_bytes_class[u[i + 2]];
        d |= report_bytes_class[u[i + 3]];
    }
    for (; i < n; i++)
        a |= report_bytes_class[u[i]];
    return a | b | c | d;
}

/* The classes a line must hold to hold the string s. */
static inline uint64_t
bytes_of(const char *s)
{
    return bytes_in(s, strlen(s));
}

/* Whether classes has holds every class of want. */
static inline bool
holds(uint64_t has, uint64_t want)
{
    return (has & want) == want;
}

static inline bool
is_digit(char c)
{
    return ascii_is_digit((unsigned char)c);
}

static inline bool
is_hex(char c)
{
    return ascii_is_hex((unsigned char)c);
}

static inline bool
is_alnum(char c)
{
    return ascii_is_alnum((unsigned char)c);
}

static inline bool
is_ident(char c)
{
    return ascii_is_word((unsigned char)c);
}

static inline bool
starts(const char *s, size_t n, const char *prefix)
{
    size_t k = strlen(prefix);

    return n >= k && memcmp(s, prefix, k) == 0;
}

/* Whether s[0..n) ends with suffix, tested by its last byte first. */
static inline bool
ends_with(const char *s, size_t n, const struct needle *suffix)
{
    size_t k = suffix->n;

    return n >= k && s[n - 1] == suffix->s[k - 1] && memcmp(s + n - k, suffix->s, k) == 0;
}

/* Needles one pair_filter serves at most. */
#define REPORT_PAIRS_MAX 32

/* A filter on pairs of bytes of a set of needles: one bit per pair, so
 * a position costs one look-up and no hashing; and the needles grouped
 * by first byte, so a position that passes (a run of dashes passes at
 * every byte) is compared with few of them.
 *
 * Only every step-th position of a text is looked up, step being one
 * less than the shortest needle: any match then covers one of them, at
 * most step - 1 bytes past its start, with the byte after it still
 * inside the match. So the bits hold the pairs at offsets 0 .. step - 1
 * of every needle, and a hit tries the step starts it could belong to. */
struct report_pairs {
    uint64_t bits[65536 / 64];
    size_t step;
    const struct needle *v[REPORT_PAIRS_MAX]; /* sorted by first byte */
    uint8_t first[256], count[256];           /* v[first[c] .. + count[c]) */
};

/* report_pairs.c: build f for needles[0..n), 0 < n <= REPORT_PAIRS_MAX,
 * each at least two bytes; they must outlive f. */
void report_pairs_init(struct report_pairs *f, const struct needle *needles, size_t n);
/* report_pairs.c: whether any needle of f occurs in s[0..len): one pass
 * over s instead of one search per needle. */
bool report_pairs_find(const char *s, size_t len, const struct report_pairs *f);

static inline struct span
trim_left(struct span s)
{
    while (s.len > 0 && (*s.p == ' ' || *s.p == '\t')) {
        s.p++;
        s.len--;
    }
    return s;
}

static inline bool
is_blank(struct span s)
{
    return trim_left(s).len == 0;
}

static inline size_t
hex_run(const char *s, size_t n)
{
    size_t i = 0;

    while (i < n && is_hex(s[i]))
        i++;
    return i;
}

static inline int
keep(int r)
{
    /* A full list is a cap, not an error. */
    return r == -E2BIG ? 0 : r;
}

/* Add s[0..len) to a list that takes each string once. */
static inline int
add_fact(struct strv *sv, const char *s, size_t len, size_t max)
{
    /* A full list takes nothing, found in it or not (keep()): no search. */
    if (sv->n >= max)
        return 0;
    return keep(strv_add_unique_first(sv, s, len, max));
}

/* Also the index of the line's text in report_parse(). */
enum line_class { LINE_REPORT = 0, LINE_CODE = 1 };

/* report_trace.c: build the trace markers' filter; once, after
 * report_bytes_init(). */
void report_trace_init(void);
/* report_trace.c: a line that opens (or by itself is) a kernel or
 * sanitizer trace; has holds its classes. */
bool report_trace_start(struct span s, uint64_t has);
/* report_trace.c: a line of a KASAN or similar report that only makes
 * sense inside one. */
bool report_trace_section(struct span s);
/* report_trace.c: "=====...", the rule sanitizers frame reports with. */
bool report_trace_rule(struct span s);
/* report_trace.c: inside a trace, a line that continues it. */
bool report_trace_cont(struct span s, uint64_t has);

/* report_syslog.c: s without the syslog or journal prefix of a kernel
 * line ("Mar 25 21:40:44 host kernel: "); other lines stay whole. */
struct span report_syslog_strip(struct span s);

/* report_classify.c: the class of each line l[0..n) (has: their byte
 * classes) into cls: LINE_CODE for traces, code and commands, else
 * LINE_REPORT. */
void report_classify(const struct span *l, const uint64_t *has, size_t n, unsigned char *cls);

/* report_facts.c: the facts of one line[0..n) with the classes has into
 * m; scratch holds n + 1 bytes. 0 or -ENOMEM. */
int report_facts_extract(struct message *m, const char *line, size_t n, uint64_t has,
                         char *scratch);

/* report_word.c: the word just before position i of s (skipping spaces
 * and ':'), lower case, into out[0..outsz); its length. */
size_t report_word_before(const char *s, size_t i, char *out, size_t outsz);
/* report_word.c: w is one of list[0..n). */
bool report_word_in(const char *w, const char *const *list, size_t n);
/* report_word.c: w numbers part of a document ("section", "figure"). */
bool report_word_numbering(const char *w);
/* report_word.c: "CVSS" within the few bytes before position i. */
bool report_word_after_cvss(const char *s, size_t i);

/* report_version.c: kernel versions, "next-YYYYMMDD" and "commit <id>"
 * of the line s[0..n) (s[n] a NUL) into m->versions; first_digit: where
 * its first digit is; dotted: it holds a dotted number. 0 or -ENOMEM. */
int report_version_kernel(struct message *m, const char *s, size_t n, size_t first_digit,
                          uint64_t has, bool dotted);

/* report_version.c: "commit <id>" for the hex id h[0..k), 7 to 40
 * digits, into m->versions. 0 or -ENOMEM. */
int report_version_commit(struct message *m, const char *h, size_t k);

/* report_product.c: versions of any product in the line s[0..n) (s[n] a
 * NUL) into m->versions. 0 or -ENOMEM. */
int report_product_versions(struct message *m, const char *s, size_t n, size_t first_digit,
                            uint64_t has);
/* report_product.c: the release or commit a source browser's URL
 * u[0..n) pins, into m->versions. 0 or -ENOMEM. */
int report_product_url(struct message *m, const char *u, size_t n);

#endif
