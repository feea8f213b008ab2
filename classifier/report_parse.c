/*
 * report_parse.c - split a report's prose from its code and traces, and
 * pull out the facts a maintainer looks for first.
 *
 * report_parse() reads the author's own text (quotes already removed) line
 * by line. Kernel and sanitizer traces, other runtimes' backtraces
 * (Python, Java, Ruby, JavaScript, Go, Rust, gdb), fenced and indented code
 * blocks, indented commands under a lead-in ("Reproduce:"), shell prompt
 * lines and .config lines go to REGION_CODE; the rest is
 * REGION_REPORT. Versions, function names, source paths, CONFIG_ symbols
 * and URLs are collected from both, never from inside a URL. Each line is
 * read once for the classes of bytes it holds, and every question that
 * needs a byte the line lacks is skipped.
 *
 * Limits: max_lines lines, each cut at max_line_bytes; every list is capped
 * (REPORT_MAX_*), and a full list silently stops growing. Ownership: the
 * regions and lists belong to the message. Threading: the only shared
 * state is the tables (byte classes, the trace markers' filter, what
 * each question needs), built once under pthread_once() and read-only
 * after.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ascii.h"
#include "message.h"
#include "message_note.h"
#include "report_parse.h"
#include "report_trace.h"
#include "text_lines.h"

#define REPORT_MAX_VERSIONS 64
#define REPORT_MAX_FUNCTIONS 256
#define REPORT_MAX_PATHS 256
#define REPORT_MAX_CONFIGS 128
#define REPORT_MAX_URLS 128
#define REPORT_MAX_IDENT 128

struct span {
    const char *p;
    size_t n;
};

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

static const char byte_class_punct[] = " \t/():[].-_=#+<>{};@$~`,";

_Static_assert(BC_PUNCT + sizeof(byte_class_punct) - 1 < BC_OTHER, "the classes fit 64 bits");

static uint64_t byte_class[256];
/* Letters, digits, '_', '.', '/', '-' and '+' (is_path_char()): a
 * table, as every byte around a line's every '/' is asked. */
static bool path_chars[256];

static void
byte_class_init(void)
{
    for (unsigned c = 0; c < 256; c++) {
        const char *q = c != 0 ? strchr(byte_class_punct, (int)c) : NULL;

        if (c >= 'a' && c <= 'z')
            byte_class[c] = BC(c - 'a');
        else if (c >= 'A' && c <= 'Z')
            byte_class[c] = BC(c - 'A') | BC(BC_UPPER);
        else if (c >= '0' && c <= '9')
            byte_class[c] = BC(BC_DIGIT);
        else if (q != NULL)
            byte_class[c] = BC(BC_PUNCT + (unsigned)(q - byte_class_punct));
        else
            byte_class[c] = BC(BC_OTHER);
    }
}

/* The classes of the bytes of s[0..n). Four chains of ORs, four bytes a
 * turn: the CPU overlaps the table loads, and the loop's own test is
 * paid once for four bytes. */
static uint64_t
bytes_in(const char *s, size_t n)
{
    const unsigned char *u = (const unsigned char *)s;
    uint64_t a = 0, b = 0, c = 0, d = 0;
    size_t i = 0;

    for (; i + 4 <= n; i += 4) {
        a |= byte_class[u[i]];
        b |= byte_class[u[i + 1]];
        c |= byte_class[u[i + 2]];
        d |= byte_class[u[i + 3]];
    }
    for (; i < n; i++)
        a |= byte_class[u[i]];
    return a | b | c | d;
}

/* The classes a line must hold to hold the string s. */
static uint64_t
bytes_of(const char *s)
{
    return bytes_in(s, strlen(s));
}

/* Whether classes has holds every class of need. */
static bool
holds(uint64_t has, uint64_t need)
{
    return (has & need) == need;
}

/* The classes each question needs, from bytes_of() at start-up. */
static struct {
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
} need;

static bool
is_digit(char c)
{
    return ascii_is_digit((unsigned char)c);
}

static bool
is_hex(char c)
{
    return ascii_is_hex((unsigned char)c);
}

static bool
is_alnum(char c)
{
    return ascii_is_alnum((unsigned char)c);
}

static bool
is_ident(char c)
{
    return ascii_is_word((unsigned char)c);
}

static bool
starts(const char *s, size_t n, const char *prefix)
{
    size_t k = strlen(prefix);

    return n >= k && memcmp(s, prefix, k) == 0;
}

/* A needle with its length, so the per-line search needs no strlen(). */
struct needle {
    const char *s;
    size_t n;
};

#define NEEDLE(lit)                                                                                \
    {                                                                                              \
        lit, sizeof(lit) - 1                                                                       \
    }

/* Needles one pair_filter serves at most. */
#define PAIR_FILTER_MAX 32

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
struct pair_filter {
    uint64_t bits[65536 / 64];
    size_t step;
    const struct needle *v[PAIR_FILTER_MAX]; /* sorted by first byte */
    uint8_t first[256], count[256];          /* v[first[c] .. + count[c]) */
};

static unsigned
pair_index(unsigned char a, unsigned char b)
{
    return (unsigned)a << 8 | b;
}

static bool
pair_filter_has(const struct pair_filter *f, unsigned char a, unsigned char b)
{
    unsigned k = pair_index(a, b);

    return (f->bits[k >> 6] & ((uint64_t)1 << (k & 63))) != 0;
}

/* needles[0..n), 0 < n <= PAIR_FILTER_MAX, each at least two bytes, must
 * outlive f. */
static void
pair_filter_init(struct pair_filter *f, const struct needle *needles, size_t n)
{
    size_t m = 0, shortest = SIZE_MAX;

    memset(f, 0, sizeof(*f));
    for (size_t k = 0; k < n; k++)
        shortest = needles[k].n < shortest ? needles[k].n : shortest;
    f->step = shortest - 1;
    for (size_t k = 0; k < n; k++) {
        for (size_t o = 0; o < f->step; o++) {
            unsigned b =
                pair_index((unsigned char)needles[k].s[o], (unsigned char)needles[k].s[o + 1]);

            f->bits[b >> 6] |= (uint64_t)1 << (b & 63);
        }
    }
    for (unsigned c = 0; c < 256; c++) {
        f->first[c] = (uint8_t)m;
        for (size_t k = 0; k < n; k++) {
            if ((unsigned char)needles[k].s[0] == c) {
                f->v[m++] = &needles[k];
                f->count[c]++;
            }
        }
    }
}

/* Whether a needle of f starts at s[i], s being len bytes long. */
static bool
needle_at(const char *s, size_t len, size_t i, const struct pair_filter *f)
{
    unsigned char c = (unsigned char)s[i];

    for (size_t k = f->first[c]; k < (size_t)f->first[c] + f->count[c]; k++) {
        const struct needle *e = f->v[k];

        /* The last byte before the rest rules out most near misses. */
        if (e->n <= len - i && e->s[e->n - 1] == s[i + e->n - 1] && memcmp(s + i, e->s, e->n) == 0)
            return true;
    }
    return false;
}

/* Whether any needle of f occurs in s[0..len): one pass over s instead
 * of one search per needle, since this runs on every line of a message. */
static bool
find_any(const char *s, size_t len, const struct pair_filter *f)
{
    for (size_t j = 0; j + 1 < len; j += f->step) {
        if (!pair_filter_has(f, (unsigned char)s[j], (unsigned char)s[j + 1]))
            continue;
        for (size_t i = j + 1 > f->step ? j + 1 - f->step : 0; i <= j; i++)
            if (needle_at(s, len, i, f))
                return true;
    }
    return false;
}

static struct span
trim_left(struct span s)
{
    while (s.n > 0 && (*s.p == ' ' || *s.p == '\t')) {
        s.p++;
        s.n--;
    }
    return s;
}

static bool
is_blank(struct span s)
{
    return trim_left(s).n == 0;
}

static bool
is_indented(struct span s)
{
    return !is_blank(s) && (starts(s.p, s.n, "    ") || starts(s.p, s.n, "\t"));
}

static size_t
hex_run(const char *s, size_t n)
{
    size_t i = 0;

    while (i < n && is_hex(s[i]))
        i++;
    return i;
}

/* "RAX: 0000000000000000 RBX: ..." or "RSP: 0018:ffffc900..." */
static bool
is_register_line(struct span s)
{
    size_t i = 0, h;

    s = trim_left(s);
    while (i < s.n && i < 5 && is_alnum(s.p[i]))
        i++;
    if (i < 2 || i > 4 || i >= s.n || s.p[i] != ':')
        return false;
    i++;
    while (i < s.n && s.p[i] == ' ')
        i++;
    h = hex_run(s.p + i, s.n - i);
    return h >= 8 || (h == 4 && i + h < s.n && s.p[i + h] == ':');
}

/* " ? func_name+0x1a/0x30 [module]" or an old "[<ffffffff8100>]" frame. */
static bool
is_frame_line(struct span s)
{
    size_t i = 0;

    s = trim_left(s);
    if (starts(s.p, s.n, "[<"))
        return true;
    if (starts(s.p, s.n, "? "))
        i = 2;
    if (i >= s.n || !is_ident(s.p[i]))
        return false;
    while (i < s.n && (is_ident(s.p[i]) || s.p[i] == '.'))
        i++;
    if (!starts(s.p + i, s.n - i, "+0x"))
        return false;
    i += 3 + hex_run(s.p + i + 3, s.n - i - 3);
    return starts(s.p + i, s.n - i, "/0x");
}

/* "[   12.345678] ..." with an optional "<4>" log level in front. */
static bool
is_timestamp_line(struct span s)
{
    size_t i = 0, d;

    s = trim_left(s);
    if (starts(s.p, s.n, "<") && s.n > 3 && is_digit(s.p[1]) && s.p[2] == '>')
        i = 3;
    if (i >= s.n || s.p[i] != '[')
        return false;
    i++;
    while (i < s.n && s.p[i] == ' ')
        i++;
    for (d = 0; i < s.n && is_digit(s.p[i]); i++)
        d++;
    if (d == 0 || i >= s.n || s.p[i] != '.')
        return false;
    for (i++, d = 0; i < s.n && is_digit(s.p[i]); i++)
        d++;
    return d > 0 && i < s.n && s.p[i] == ']';
}

bool
report_sanitizer_line(const char *p, size_t len)
{
    struct span s = trim_left((struct span){p, len});
    size_t i;

    if (starts(s.p, s.n, "==") && s.n > 3 && is_digit(s.p[2])) {
        for (i = 2; i < s.n && is_digit(s.p[i]); i++)
            ;
        return starts(s.p + i, s.n - i, "==");
    }
    if (starts(s.p, s.n, "#") && s.n > 2 && is_digit(s.p[1])) {
        for (i = 1; i < s.n && is_digit(s.p[i]); i++)
            ;
        return starts(s.p + i, s.n - i, " 0x");
    }
    return false;
}

/* Digits from s.p[i] on; i when there are none. */
static size_t
digits_end(struct span s, size_t i)
{
    while (i < s.n && is_digit(s.p[i]))
        i++;
    return i;
}

/* The source files whose frames backtrace_frame_at() takes. */
static bool
is_frame_ext(const char *e, size_t n)
{
    static const char *const exts[] = {"rb", "py",  "js", "mjs", "cjs",   "ts", "java", "kt",
                                       "go", "rs",  "c",  "cc",  "cpp",   "h",  "php",  "scala",
                                       "cs", "exs", "ex", "pl",  "swift", "lua"};

    for (size_t k = 0; k < sizeof(exts) / sizeof(exts[0]); k++)
        if (strlen(exts[k]) == n && memcmp(e, exts[k], n) == 0)
            return true;
    return false;
}

/*
 * Whether the line s, which starts a frame (after "at ", "from ", "#N"),
 * names a source file with a line number where a frame does: at the end
 * of the line ("Foo.java:42)", "main.rs:4:5", "x.c:12"), before ":in "
 * (Ruby), ", line N" (Python), " +0x" (Go) or "(N)" (PHP). A file and line
 * in prose ("see lib/x.c:75 for the loop") has words after it.
 */
static bool
backtrace_frame_at(struct span s)
{
    for (const char *d = memchr(s.p, '.', s.n); d != NULL;
         d = memchr(d + 1, '.', (size_t)(s.p + s.n - d - 1))) {
        size_t i = (size_t)(d - s.p) + 1, e = i, j;

        while (e < s.n && e - i < 6 && s.p[e] >= 'a' && s.p[e] <= 'z')
            e++;
        if (e == i || e >= s.n || !is_frame_ext(s.p + i, e - i))
            continue;
        if (s.p[e] == '"' && starts(s.p + e, s.n - e, "\", line ") && digits_end(s, e + 8) > e + 8)
            return true;
        if (s.p[e] == '(' && (j = digits_end(s, e + 1)) > e + 1 && j < s.n && s.p[j] == ')')
            return true;
        if (s.p[e] != ':' || (j = digits_end(s, e + 1)) == e + 1)
            continue;
        if (starts(s.p + j, s.n - j, ":in ") || starts(s.p + j, s.n - j, " +0x"))
            return true;
        if (j + 1 < s.n && s.p[j] == ':' && is_digit(s.p[j + 1]))
            j = digits_end(s, j + 1);
        while (j < s.n && (s.p[j] == ')' || s.p[j] == ' ' || s.p[j] == '\t'))
            j++;
        if (j == s.n)
            return true;
    }
    return false;
}

bool
report_backtrace_line(const char *p, size_t len)
{
    struct span s = trim_left((struct span){p, len});
    size_t i;

    if (s.n < 4)
        return false;
    switch (s.p[0]) {
    case 'T':
        return starts(s.p, s.n, "Traceback (most recent call last):");
    case 'E':
        return starts(s.p, s.n, "Exception in thread \"");
    case 'C':
        return starts(s.p, s.n, "Caused by: ");
    case 'g':
        /* Go: "goroutine 1 [running]:" */
        if (!starts(s.p, s.n, "goroutine "))
            return false;
        i = digits_end(s, 10);
        return i > 10 && starts(s.p + i, s.n - i, " [");
    case 't':
        /* Rust: "thread 'main' panicked at src/main.rs:4:5:" */
        return starts(s.p, s.n, "thread '") && ascii_find(s.p, s.n, "' panicked at ") != NULL;
    case 'a':
        return starts(s.p, s.n, "at ") && backtrace_frame_at(s);
    case 'f':
        return starts(s.p, s.n, "from ") && backtrace_frame_at(s);
    case 'F':
        return starts(s.p, s.n, "File \"") && backtrace_frame_at(s);
    case '#':
        /* gdb's "#0  0x00007f... in f () from x.so", "#1  f (a=1) at x.c:12";
         * PHP's "#0 /srv/x.php(12): f()". */
        i = digits_end(s, 1);
        if (i == 1 || i >= s.n || (s.p[i] != ' ' && s.p[i] != '\t'))
            return false;
        while (i < s.n && (s.p[i] == ' ' || s.p[i] == '\t'))
            i++;
        return (starts(s.p + i, s.n - i, "0x") && hex_run(s.p + i + 2, s.n - i - 2) >= 4) ||
               backtrace_frame_at(s);
    case '/':
    case '.':
        /* Ruby's first line: "/srv/app/x.rb:12:in `f': undefined method" */
        return backtrace_frame_at(s);
    default:
        return false;
    }
}

static bool
is_sanitizer_line(struct span s)
{
    return report_sanitizer_line(s.p, s.n);
}

/* Markers that open a trace anywhere in a line; their pair filter is
 * built once (trace_markers_init()) and only read after that. */
static const struct needle trace_markers[] = {
    NEEDLE("BUG: "),
    NEEDLE("KASAN:"),
    NEEDLE("UBSAN:"),
    NEEDLE("KCSAN:"),
    NEEDLE("KMSAN:"),
    NEEDLE("Oops:"),
    NEEDLE("Oops -"),
    NEEDLE("general protection fault"),
    NEEDLE("Call Trace:"),
    NEEDLE("Call trace:"),
    NEEDLE("WARNING: CPU:"),
    NEEDLE("Kernel panic"),
    NEEDLE("AddressSanitizer"),
    NEEDLE("LeakSanitizer"),
    NEEDLE("UndefinedBehaviorSanitizer"),
    NEEDLE("------------[ cut here ]"),
    NEEDLE("Unable to handle kernel"),
    NEEDLE("Modules linked in:"),
    NEEDLE("---[ end trace"),
    NEEDLE("Hardware name:"),
    NEEDLE("INFO: task "),
    NEEDLE("rcu: INFO:"),
    NEEDLE("WARNING: possible"),
    NEEDLE("unreferenced object 0x"),
};
#define TRACE_MARKERS (sizeof(trace_markers) / sizeof(trace_markers[0]))

static struct pair_filter trace_markers_filter;
/* A line holds a marker only if it holds all the classes of
 * trace_marker_some (a ':' and an upper-case letter), or all the classes
 * of a marker without them: those markers' classes, the ones that
 * another's include left out, are trace_marker_needs. One test for most
 * markers, as prose lines seldom hold a ':'; then one for each of the
 * rest, as prose holds their letter pairs, and find_any() would try
 * the markers at most positions of the line. */
static uint64_t trace_marker_some;
static uint64_t trace_marker_needs[TRACE_MARKERS];
static size_t trace_marker_nneeds;
static pthread_once_t report_tables_once = PTHREAD_ONCE_INIT;

_Static_assert(TRACE_MARKERS <= PAIR_FILTER_MAX, "the markers fit one pair filter");

static void
report_tables_init(void)
{
    byte_class_init();
    for (unsigned c = 0; c < 256; c++)
        path_chars[c] =
            ascii_is_word((unsigned char)c) || c == '.' || c == '/' || c == '-' || c == '+';
    pair_filter_init(&trace_markers_filter, trace_markers, TRACE_MARKERS);
    trace_marker_some = BC(BC_UPPER) | bytes_of(":");
    for (size_t k = 0; k < TRACE_MARKERS; k++) {
        uint64_t c = bytes_in(trace_markers[k].s, trace_markers[k].n);
        bool covered = holds(c, trace_marker_some);

        /* A line holding c holds any subset of it: keep the subsets. */
        for (size_t j = 0; !covered && j < TRACE_MARKERS; j++) {
            uint64_t d = bytes_in(trace_markers[j].s, trace_markers[j].n);

            if (j != k && !holds(d, trace_marker_some) && holds(c, d) && (d != c || j < k))
                covered = true;
        }
        if (!covered)
            trace_marker_needs[trace_marker_nneeds++] = c;
    }
    need.url = bytes_of("http://");
    need.config = bytes_of("CONFIG_");
    need.call = bytes_of("()");
    need.slash = bytes_of("/");
    need.dot_or_k = bytes_of(".k");
    need.named = bytes_of("K");
    need.next = bytes_of("next-0");
    need.commit = bytes_of("commit ");
    need.colon = bytes_of(":");
    need.timestamp = bytes_of("[0.]");
    need.frame_old = bytes_of("[<");
    need.frame = bytes_of("+0x/");
    need.sanitizer = bytes_of("=#");
    need.prompt = bytes_of("$#@_");
    need.code = bytes_of(";{}=");
    need.hash = bytes_of("#");
    need.paren = bytes_of("(");
    need.hex0x = bytes_of("0x");
    need.ffff = bytes_of("f");
    need.digit = bytes_of("0");
    need.cvss = bytes_of("cvss");
    need.dash = bytes_of("-");
    {
        static const char *const words[] = {"commit", "head", "master", "main",
                                            "tree",   "rev",  "sha1"};

        _Static_assert(sizeof(words) / sizeof(words[0]) ==
                           sizeof(need.commit_words) / sizeof(need.commit_words[0]),
                       "a class set for every word");
        for (size_t k = 0; k < sizeof(words) / sizeof(words[0]); k++)
            need.commit_words[k] = bytes_of(words[k]);
    }
}

/* Whether a line holding the classes has may hold a trace marker. */
static bool
may_hold_marker(uint64_t has)
{
    if (holds(has, trace_marker_some))
        return true;
    for (size_t k = 0; k < trace_marker_nneeds; k++)
        if (holds(has, trace_marker_needs[k]))
            return true;
    return false;
}

/* A line that opens (or by itself is) a kernel or sanitizer trace; has
 * holds its classes. */
static bool
is_trace_start(struct span s, uint64_t has)
{
    struct span t = trim_left(s);

    /* By the first byte: this runs on every line of a report. */
    switch (t.n > 0 ? t.p[0] : '\0') {
    case 'R':
        if (starts(t.p, t.n, "RIP: "))
            return true;
        break;
    case 'C':
        if (starts(t.p, t.n, "Code: ") ||
            (starts(t.p, t.n, "CPU: ") && ascii_find(t.p, t.n, "PID:") != NULL))
            return true;
        break;
    case 'p':
        if (starts(t.p, t.n, "pc : "))
            return true;
        break;
    case 'l':
        if (starts(t.p, t.n, "lr : "))
            return true;
        break;
    case '<':
        if (starts(t.p, t.n, "<TASK>") || starts(t.p, t.n, "</TASK>") ||
            starts(t.p, t.n, "<IRQ>") || starts(t.p, t.n, "</IRQ>"))
            return true;
        break;
    default:
        break;
    }
    /* Each trims what it is given: t spares them the white space. Each is
     * asked only when the line holds the bytes it looks for. These look
     * at the line's start, so they go before the search of all of it for
     * a marker (the tests are or-ed, and their order changes nothing
     * else). */
    return (holds(has, need.timestamp) && is_timestamp_line(t)) ||
           (holds(has, need.colon) && is_register_line(t)) ||
           ((holds(has, need.frame_old) || holds(has, need.frame)) && is_frame_line(t)) ||
           ((has & need.sanitizer) != 0 && is_sanitizer_line(t)) ||
           report_backtrace_line(t.p, t.n) ||
           (may_hold_marker(has) && find_any(s.p, s.n, &trace_markers_filter));
}

/* Lines of a KASAN or similar report that only make sense inside one. */
static bool
is_trace_section(struct span s)
{
    /* With their lengths, and each tried only when the first byte
     * matches: this runs on every line inside a trace. */
    static const struct needle prefixes[] = {
        NEEDLE("The buggy address"),
        NEEDLE("Memory state around"),
        NEEDLE("Allocated by task"),
        NEEDLE("Freed by task"),
        NEEDLE("Read of size"),
        NEEDLE("Write of size"),
        NEEDLE("page:"),
        NEEDLE("flags:"),
        NEEDLE("raw: "),
        NEEDLE("page dumped"),
        NEEDLE("Last potentially"),
        NEEDLE("Second to last"),
        NEEDLE("Workqueue:"),
        NEEDLE("Tainted:"),
        NEEDLE("SUMMARY: "),
        NEEDLE("Shadow bytes"),
    };
    struct span t = trim_left(s);

    for (size_t i = 0; t.n > 0 && i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
        if (t.p[0] == prefixes[i].s[0] && t.n >= prefixes[i].n &&
            memcmp(t.p, prefixes[i].s, prefixes[i].n) == 0)
            return true;
    /* Shadow memory rows: "ffff888012345600: fa fb fb fb" (one may lead with '>'). */
    if (starts(t.p, t.n, ">"))
        t.p++, t.n--;
    return hex_run(t.p, t.n) >= 16 && t.n > 16 && t.p[16] == ':';
}

/* "=====...": KASAN and sanitizers frame their reports with these. */
static bool
is_rule_line(struct span s)
{
    size_t i = 0;

    while (i < s.n && s.p[i] == '=')
        i++;
    return i >= 20 && i == s.n;
}

/* Inside a trace, indented lines and lines full of addresses continue
 * it; has holds the line's classes. */
static bool
is_trace_cont(struct span s, uint64_t has)
{
    const char *p;

    /* Kernel traces indent their continuation lines by one space: most
     * lines of a trace, answered before the costlier tests. */
    if (!is_blank(s) && (s.p[0] == ' ' || s.p[0] == '\t'))
        return true;
    if (is_trace_start(s, has) || is_trace_section(s) || is_rule_line(s))
        return true;
    for (p = s.p;
         holds(has, need.hex0x) && (p = ascii_find(p, s.n - (size_t)(p - s.p), "0x")) != NULL;
         p += 2)
        if (hex_run(p + 2, s.n - (size_t)(p + 2 - s.p)) >= 4)
            return true;
    for (p = s.p;
         holds(has, need.ffff) && (p = ascii_find(p, s.n - (size_t)(p - s.p), "ffff")) != NULL;
         p += 4)
        if (hex_run(p, s.n - (size_t)(p - s.p)) >= 12)
            return true;
    return false;
}

static bool
is_fence(struct span s)
{
    size_t i = 0;

    while (i < s.n && i < 3 && s.p[i] == ' ')
        i++;
    return starts(s.p + i, s.n - i, "```") || starts(s.p + i, s.n - i, "~~~");
}

/*
 * "$ cmd", "# cmd" (a root prompt, not a Markdown heading: the command
 * starts with a lower-case letter, '.' or '/'), "user@host:~$ cmd", and
 * .config lines.
 */
static bool
is_command_line(struct span s, uint64_t has)
{
    const char *p;

    /* Each shape needs a '$', '#', '@' or "CONFIG_"'s '_'. */
    if ((has & need.prompt) == 0)
        return false;
    s = trim_left(s);
    if ((starts(s.p, s.n, "$ ") || starts(s.p, s.n, "# ")) && s.n > 2) {
        char c = s.p[2];

        if ((c >= 'a' && c <= 'z') || c == '.' || c == '/')
            return true;
        if (s.p[0] == '#' && starts(s.p, s.n, "# CONFIG_"))
            return ascii_find(s.p, s.n, " is not set") != NULL;
        return s.p[0] == '$';
    }
    if (starts(s.p, s.n, "CONFIG_")) {
        size_t i = 7;

        while (i < s.n && is_ident(s.p[i]))
            i++;
        return i < s.n && s.p[i] == '=';
    }
    /* user@host:path$ or user@host:path# */
    p = memchr(s.p, '@', s.n);
    if (p != NULL && p > s.p) {
        const char *colon = memchr(p, ':', s.n - (size_t)(p - s.p));

        for (const char *q = s.p; q < p; q++)
            if (!is_ident(*q) && *q != '-' && *q != '.')
                return false;
        if (colon != NULL) {
            for (const char *q = colon + 1; q < s.p + s.n; q++) {
                if (*q == ' ')
                    return q > colon + 1 && (q[-1] == '$' || q[-1] == '#');
            }
        }
    }
    return false;
}

static bool
is_codeish(struct span s, uint64_t has)
{
    struct span t = trim_left(s);

    if ((has & need.code) != 0)
        return true;
    if ((holds(has, need.hash) && (starts(t.p, t.n, "#include") || starts(t.p, t.n, "#define") ||
                                   starts(t.p, t.n, "#if"))) ||
        is_command_line(s, has))
        return true;
    for (size_t i = 1; holds(has, need.paren) && i < s.n; i++)
        if (s.p[i] == '(' && is_ident(s.p[i - 1]))
            return true;
    return false;
}

/* Bytes of s from i on that are digits, up to max. */
static size_t
digits_at(struct span s, size_t i, size_t max)
{
    size_t d = 0;

    while (i + d < s.n && d < max && is_digit(s.p[i + d]))
        d++;
    return d;
}

/* The end of "hh:mm:ss" with an optional fraction at s.p[i], or 0. */
static size_t
clock_end(struct span s, size_t i)
{
    for (int k = 0; k < 3; k++) {
        if (digits_at(s, i, 2) != 2)
            return 0;
        i += 2;
        if (k < 2 && (i >= s.n || s.p[i++] != ':'))
            return 0;
    }
    if (i < s.n && s.p[i] == '.' && digits_at(s, i + 1, 9) > 0)
        i += 1 + digits_at(s, i + 1, 9);
    return i;
}

/* The end of the time stamp a syslog or journal line starts with, or 0:
 * "Mar 25 21:40:44" (RFC 3164, journalctl's short and short-precise
 * formats) or "2021-03-25T21:40:44.123456+01:00" (RFC 3339, short-iso). */
static size_t
stamp_end(struct span s)
{
    size_t i;

    if (s.n >= 15 && s.p[0] >= 'A' && s.p[0] <= 'Z' && s.p[1] >= 'a' && s.p[1] <= 'z' &&
        s.p[2] >= 'a' && s.p[2] <= 'z' && s.p[3] == ' ') {
        i = s.p[4] == ' ' ? 5 : 4;
        if (digits_at(s, i, 2) == 0)
            return 0;
        i += digits_at(s, i, 2);
        return i < s.n && s.p[i] == ' ' ? clock_end(s, i + 1) : 0;
    }
    if (s.n < 19 || digits_at(s, 0, 4) != 4 || s.p[4] != '-' || digits_at(s, 5, 2) != 2 ||
        s.p[7] != '-' || digits_at(s, 8, 2) != 2 || s.p[10] != 'T')
        return 0;
    i = clock_end(s, 11);
    if (i == 0 || i >= s.n)
        return i;
    if (s.p[i] == 'Z')
        return i + 1;
    if ((s.p[i] == '+' || s.p[i] == '-') && digits_at(s, i + 1, 2) == 2) {
        i += 3;
        if (i < s.n && s.p[i] == ':')
            i++;
        return digits_at(s, i, 2) == 2 ? i + 2 : 0;
    }
    return i;
}

/*
 * s without the syslog or journal prefix of a kernel line, "Mar 25
 * 21:40:44 host kernel: " (stamp_end(), a host name, the kernel's tag):
 * people paste kernel logs as their logger wrote them, and past the
 * prefix each line reads as dmesg prints it, a trace's frames indented.
 * Lines of other programs, and lines without the prefix, stay whole.
 */
static struct span
strip_syslog(struct span s)
{
    static const char tag[] = " kernel:";
    size_t i = stamp_end(s), host;

    if (i == 0 || i >= s.n || s.p[i] != ' ')
        return s;
    i++;
    for (host = 0; i + host < s.n && s.p[i + host] != ' '; host++)
        if (host == 255)
            return s;
    i += host;
    if (host == 0 || !starts(s.p + i, s.n - i, tag))
        return s;
    i += sizeof(tag) - 1;
    if (i < s.n && s.p[i] == ' ')
        i++;
    return (struct span){s.p + i, s.n - i};
}

/* Also the index of the line's text in report_parse(). */
enum line_class { LINE_REPORT = 0, LINE_CODE = 1 };

/* Bytes of a program's name or path: "python3", "./poc", "/usr/bin/x". */
static bool
is_command_char(char c)
{
    return is_ident(c) || c == '.' || c == '/' || c == '-' || c == '+' || c == '~';
}

/*
 * A command as people indent it under "To reproduce:": a program (a
 * lower-case name or a path) and, unless it is a path itself, an
 * argument that is an option, a path, a file or a URL ("python3 poc.py",
 * "curl -x http://a dict://b", "./poc"); a trailing '.' or a C
 * statement's ';', '{' or '}' is prose or code, not a command.
 */
static bool
is_command_shape(struct span s)
{
    size_t i = 0, e;
    bool path;

    s = trim_left(s);
    if (starts(s.p, s.n, "$ "))
        s = trim_left((struct span){s.p + 2, s.n - 2});
    if (s.n < 2 || s.p[s.n - 1] == '.' || memchr(s.p, ';', s.n) != NULL ||
        memchr(s.p, '{', s.n) != NULL || memchr(s.p, '}', s.n) != NULL)
        return false;
    if (!((s.p[0] >= 'a' && s.p[0] <= 'z') || s.p[0] == '.' || s.p[0] == '/' || s.p[0] == '~'))
        return false;
    while (i < s.n && is_command_char(s.p[i]))
        i++;
    if (i < s.n && s.p[i] != ' ' && s.p[i] != '\t')
        return false;
    path = memchr(s.p, '/', i) != NULL;
    for (;;) {
        while (i < s.n && (s.p[i] == ' ' || s.p[i] == '\t'))
            i++;
        if (i >= s.n)
            return path;
        e = i;
        while (e < s.n && s.p[e] != ' ' && s.p[e] != '\t')
            e++;
        if (s.p[i] == '-' || memchr(s.p + i, '/', e - i) != NULL ||
            memchr(s.p + i, '=', e - i) != NULL)
            return true;
        for (const char *d = memchr(s.p + i, '.', e - i); d != NULL && d + 1 < s.p + e;
             d = memchr(d + 1, '.', (size_t)(s.p + e - d - 1)))
            if (ascii_is_alnum((unsigned char)d[1]))
                return true;
        i = e;
    }
}

/* The last non-blank line before l[i] ends in ':' ("To reproduce:",
 * "Run it with:"): the text says that what follows is to be run. */
static bool
after_lead_in(const struct span *l, size_t i)
{
    while (i > 0) {
        struct span p = l[--i];

        while (p.n > 0 && (p.p[p.n - 1] == ' ' || p.p[p.n - 1] == '\t'))
            p.n--;
        if (p.n > 0)
            return p.p[p.n - 1] == ':';
    }
    return false;
}

/*
 * Classify each line. Traces run while lines continue them; a blank line
 * stays inside only when the next non-blank line clearly belongs to the
 * trace. An indented block is code when it has at least two lines and at
 * least half of them look like code.
 */
static void
classify(const struct span *l, const uint64_t *has, size_t n, unsigned char *cls)
{
    bool in_fence = false, in_trace = false;

    for (size_t i = 0; i < n; i++) {
        struct span s = l[i];

        cls[i] = LINE_REPORT;
        if (in_fence) {
            cls[i] = LINE_CODE;
            if (is_fence(s))
                in_fence = false;
            continue;
        }
        if (is_fence(s)) {
            cls[i] = LINE_CODE;
            in_fence = true;
            in_trace = false;
            continue;
        }
        if (in_trace) {
            if (is_blank(s)) {
                size_t j = i + 1;

                while (j < n && is_blank(l[j]))
                    j++;
                if (j < n &&
                    (is_indented(l[j]) || is_trace_section(l[j]) || is_trace_start(l[j], has[j]))) {
                    cls[i] = LINE_CODE;
                    continue;
                }
                in_trace = false;
                continue;
            }
            if (is_trace_cont(s, has[i])) {
                cls[i] = LINE_CODE;
                continue;
            }
            in_trace = false;
        }
        if (is_trace_start(s, has[i]) ||
            (is_rule_line(s) && i + 1 < n && is_trace_start(l[i + 1], has[i + 1]))) {
            cls[i] = LINE_CODE;
            in_trace = true;
            continue;
        }
        if (is_command_line(s, has[i])) {
            cls[i] = LINE_CODE;
            continue;
        }
        if (is_indented(s)) {
            size_t j = i, nonblank = 0, code = 0, commands = 0;

            /* The block: indented lines, with blank lines between them. */
            while (j < n) {
                if (is_indented(l[j])) {
                    nonblank++;
                    if (is_codeish(l[j], has[j]) || is_trace_start(l[j], has[j]))
                        code++;
                    commands += is_command_shape(l[j]);
                    j++;
                    continue;
                }
                if (is_blank(l[j]) && j + 1 < n && is_indented(l[j + 1])) {
                    j++;
                    continue;
                }
                break;
            }
            /* Commands under a lead-in are code however few: a single
             * indented "./poc" under "Reproduce:" is the reproducer. */
            if ((nonblank >= 2 && code > 0 && code * 2 >= nonblank) ||
                (commands == nonblank && after_lead_in(l, i)))
                memset(cls + i, LINE_CODE, j - i);
            i = j - 1;
        }
    }
}

static int
keep(int r)
{
    /* A full list is a cap, not an error. */
    return r == -E2BIG ? 0 : r;
}

/* Add s[0..len) to a list that takes each string once. */
static int
add_fact(struct strv *sv, const char *s, size_t len, size_t max)
{
    /* A full list takes nothing, found in it or not (keep()): no search. */
    if (sv->n >= max)
        return 0;
    return keep(strv_add_unique_first(sv, s, len, max));
}

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

#define REPORT_VERSION_TOKEN_MAX 80 /* bytes of one version token */

static int url_version(struct message *m, const char *u, size_t n);

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
        if (n - k < 3 || c[1] != '/' || c[2] != '/')
            continue;
        if (k >= from + 5 && strncasecmp(s + k - 5, "https", 5) == 0)
            start = k - 5;
        else if (k >= from + 4 && strncasecmp(s + k - 4, "http", 4) == 0)
            start = k - 4;
        else
            continue;
        end = start;
        while (end < n && !is_url_end(s[end]))
            end++;
        while (end > start && strchr(".,;:!?)]}'\"*", s[end - 1]))
            end--;
        r = add_fact(&m->urls, s + start, end - start, REPORT_MAX_URLS);
        if (r >= 0)
            r = url_version(m, s + start, end - start);
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

/* Whether s[0..n) ends with suffix, tested by its last byte first. */
static bool
ends_with(const char *s, size_t n, const struct needle *suffix)
{
    size_t k = suffix->n;

    return n >= k && s[n - 1] == suffix->s[k - 1] && memcmp(s + n - k, suffix->s, k) == 0;
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
    return path_chars[(unsigned char)c];
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

/* The word just before position i (skipping spaces and ':'), lower case. */
static size_t
word_before(const char *s, size_t i, char *out, size_t outsz)
{
    size_t e = i, b, k = 0;

    while (e > 0 && (s[e - 1] == ' ' || s[e - 1] == ':' || s[e - 1] == '\t'))
        e--;
    b = e;
    while (b > 0 && (is_alnum(s[b - 1]) || s[b - 1] == '-'))
        b--;
    for (size_t j = b; j < e && k + 1 < outsz; j++)
        out[k++] = (char)(s[j] >= 'A' && s[j] <= 'Z' ? s[j] - 'A' + 'a' : s[j]);
    out[k] = '\0';
    return k;
}

static bool
word_in(const char *w, const char *const *list, size_t n)
{
    /* The first byte first: this runs for every number of a report. */
    for (size_t i = 0; i < n; i++)
        if (w[0] == list[i][0] && strcmp(w, list[i]) == 0)
            return true;
    return false;
}

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

/* "CVSS" within the few bytes before position i (CVSS:3.1, CVSS version 3.1). */
static bool
after_cvss(const char *s, size_t i)
{
    size_t b = i > 16 ? i - 16 : 0;

    /* A test of the first byte before the call: this runs for every
     * number of a report. */
    for (size_t k = b; k + 4 <= i; k++)
        if (((unsigned char)s[k] | 0x20u) == 'c' && strncasecmp(s + k, "cvss", 4) == 0)
            return true;
    return false;
}

/* Words that number parts of a document: "section 3.2.1" is no version. */
static const char *const numbering_words[] = {
    "section", "sections", "chapter", "figure", "fig",  "table", "step",  "steps",    "rfc",
    "page",    "pages",    "clause",  "item",   "part", "line",  "lines", "appendix",
};

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
static int
extract_versions(struct message *m, const char *s, size_t n, size_t first_digit, uint64_t has,
                 bool dotted)
{
    static const char *const context[] = {
        "linux",  "kernel",  "version", "mainline",   "stable",  "upstream",
        "linux-", "kernels", "tested",  "reproduced", "running", "booted",
    };
    static const char *const on_followers[] = {"and", "or", "with", "but", "too", "as", "kernel"};
    static const char *const other_programs[] = {
        "gcc",    "clang",   "llvm",   "python", "python3", "qemu", "glibc",   "binutils",
        "bash",   "openssl", "curl",   "rustc",  "rust",    "go",   "systemd", "perl",
        "ubuntu", "debian",  "fedora", "rhel",   "gdb",     "libc", "node",    "java",
        "smb",    "nfs",     "tls",    "ssl",    "http",
    };
    const char *p;
    size_t i = first_digit;
    int r;

    /* "next-" counts with eight digits after it, other versions have
     * digits too: a line without one has only a commit id to give. */
    for (p = s; first_digit < n && holds(has, need.next) &&
                (p = ascii_find_at(p, n - (size_t)(p - s), "next-", 2)) != NULL;
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
    /* "mmit ", then the "co" or "Co" before it: a needle of "ommit "
     * would be a spelling error in the binary to lintian. */
    for (p = s; p < s + n && holds(has, need.commit) &&
                (p = ascii_find_at(p, n - (size_t)(p - s), "mmit ", 0)) != NULL;
         p += 5) {
        const char *h = p + 5;
        size_t k;
        char tmp[48];

        if (p - s < 2 || p[-1] != 'o' || (p[-2] != 'c' && p[-2] != 'C') ||
            (p - 2 > s && is_alnum(p[-3])))
            continue;
        while (h < s + n && *h == ' ')
            h++;
        k = hex_run(h, (size_t)(s + n - h));
        if (k < 12 || k > 40 || (h + k < s + n && is_alnum(h[k])))
            continue;
        memcpy(tmp, "commit ", 7);
        for (size_t j = 0; j < k; j++)
            tmp[7 + j] = (char)(h[j] >= 'A' && h[j] <= 'F' ? h[j] - 'A' + 'a' : h[j]);
        r = add_fact(&m->versions, tmp, 7 + k, REPORT_MAX_VERSIONS);
        if (r < 0)
            return r;
    }

    /* Each number the loop below takes has two or three components of
     * one to three digits (a wider one is no kernel's, shaped is false):
     * a line without such a dotted number (has_dotted_number()), most
     * of a trace, has none to give. */
    if (!dotted)
        i = n;
    while (i < n) {
        size_t start, j, comps = 0, rc = 0;
        unsigned long major = 0, minor = 0;
        bool vprefix = false, ysuffix = false, distro = false, wide = false, shaped, ok;
        char prev[16];

        if (!is_digit(s[i])) {
            /* strcspn() skips to the next digit many bytes at a time; it
             * stops at a NUL too, at s[n] the latest. */
            i += strcspn(s + i, "0123456789");
            if (i < n && s[i] == '\0')
                i++;
            continue;
        }
        start = i;
        if (i > 0 && s[i - 1] == 'v' && (i < 2 || !is_alnum(s[i - 2]))) {
            vprefix = true;
            start = i - 1;
        } else if (i > 0 && (is_alnum(s[i - 1]) || s[i - 1] == '.' || s[i - 1] == '_')) {
            while (i < n && (is_alnum(s[i]) || s[i] == '.'))
                i++;
            continue;
        }
        j = i;
        for (;;) {
            unsigned long val = 0;
            size_t d = 0;

            while (j < n && is_digit(s[j]) && d < 9) {
                val = val * 10 + (unsigned long)(s[j] - '0');
                j++;
                d++;
            }
            if (comps == 0)
                major = val;
            else if (comps == 1)
                minor = val;
            /* No kernel has a component of four digits: 04.12.2026 is a date. */
            wide |= d > 3;
            comps++;
            if (j + 1 < n && s[j] == '.' && is_digit(s[j + 1])) {
                j++;
                continue;
            }
            break;
        }
        if (j < n && is_digit(s[j])) {
            while (j < n && is_digit(s[j]))
                j++;
            i = j;
            continue;
        }
        if (j + 1 < n && s[j] == '.' && s[j + 1] == 'y' && (j + 2 == n || !is_alnum(s[j + 2]))) {
            ysuffix = true;
            j += 2;
        } else if (j + 3 < n && s[j] == '-' && s[j + 1] == 'r' && s[j + 2] == 'c' &&
                   is_digit(s[j + 3])) {
            j += 3;
            while (j < n && is_digit(s[j]))
                j++;
            rc = 1;
        }
        if (comps == 3 && j + 1 < n && s[j] == '-' && is_alnum(s[j + 1])) {
            while (j < n && (is_alnum(s[j]) || strchr("._+-", s[j])))
                j++;
            while (j > i && strchr("._+-", s[j - 1]))
                j--;
            distro = true;
        } else if (j < n && s[j] == '+') {
            j++;
        }
        if (j < n &&
            (is_alnum(s[j]) || s[j] == '_' || s[j] == '/' ||
             (s[j] == ':' && j + 1 < n && s[j + 1] != ' ' && s[j + 1] != '\t')) &&
            !distro) {
            /* Part of a larger token (12:30, 1.2.3abc, a/b); "on 6.8: it" ends one. */
            while (j < n && !is_token_end(s[j]))
                j++;
            i = j;
            continue;
        }
        /* The word before is read only for a number of a kernel
         * version's shape: most numbers of a report are not. */
        shaped = comps >= 2 && comps <= 3 && major >= 2 && major <= 7 && minor <= 99 && !wide;
        if (shaped)
            word_before(s, vprefix ? i - 1 : i, prev, sizeof(prev));
        ok = false;
        if (shaped &&
            !word_in(prev, other_programs, sizeof(other_programs) / sizeof(other_programs[0])) &&
            !word_in(prev, numbering_words, sizeof(numbering_words) / sizeof(numbering_words[0])) &&
            !(holds(has, need.cvss) && after_cvss(s, start))) {
            /* Two reasons, one outcome: the version's own shape, then the
             * words around it. */
            if (vprefix || comps == 3 || ysuffix || rc)
                ok = true; // NOLINT(bugprone-branch-clone)
            else if (word_in(prev, context, sizeof(context) / sizeof(context[0])) ||
                     (start >= 6 && strncasecmp(s + start - 6, "linux-", 6) == 0))
                ok = true;
            else {
                size_t k = j;
                char next[16];

                while (k < n && s[k] == ' ')
                    k++;
                ok = n - k >= 6 && strncasecmp(s + k, "kernel", 6) == 0;
                if (!ok && strcmp(prev, "on") == 0 && major >= 3) {
                    size_t e = k;

                    while (e < n && is_alnum(s[e]) && e - k < sizeof(next) - 1)
                        e++;
                    word_before(s, e, next, sizeof(next));
                    ok =
                        k == n || !is_alnum(s[k]) ||
                        word_in(next, on_followers, sizeof(on_followers) / sizeof(on_followers[0]));
                }
            }
        }
        if (ok) {
            r = add_fact(&m->versions, s + start, j - start, REPORT_MAX_VERSIONS);
            if (r < 0)
                return r;
        }
        i = j > i ? j : i + 1;
    }
    return 0;
}

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
 *     (abc1234)"), stored as "commit <id>".
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
    while (i + 1 < n && t[i] == '-' && is_alnum(t[i + 1])) {
        i++;
        while (i < n && is_alnum(t[i]))
            i++;
    }
    return i == n ? comps : 0;
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
    word_before(s, e, prev, sizeof(prev));
    if (strcmp(prev, "at") == 0 || strcmp(prev, "is") == 0) {
        while (e > 0 && s[e - 1] == ' ')
            e--;
        while (e > 0 && is_alnum(s[e - 1]))
            e--;
        word_before(s, e, prev, sizeof(prev));
        if (strcmp(prev, "is") == 0) {
            while (e > 0 && s[e - 1] == ' ')
                e--;
            while (e > 0 && is_alnum(s[e - 1]))
                e--;
            word_before(s, e, prev, sizeof(prev));
        }
    }
    return word_in(prev, words, sizeof(words) / sizeof(words[0]));
}

static int
add_commit_id(struct message *m, const char *h, size_t k)
{
    char tmp[48];

    memcpy(tmp, "commit ", 7);
    for (size_t j = 0; j < k; j++)
        tmp[7 + j] = (char)(h[j] >= 'A' && h[j] <= 'F' ? h[j] - 'A' + 'a' : h[j]);
    return add_fact(&m->versions, tmp, 7 + k, REPORT_MAX_VERSIONS);
}

/* A two-component version ends a range: "8.5 and earlier", "through". */
static bool
before_range_word(const char *s, size_t n, size_t e)
{
    static const char *const ranges[] = {"and earlier", "and later",  "or earlier", "or later",
                                         "and older",   "and newer",  "and above",  "and below",
                                         "through",     "to and inc", "up to"};

    while (e < n && s[e] == ' ')
        e++;
    for (size_t i = 0; i < sizeof(ranges) / sizeof(ranges[0]); i++)
        if (n - e >= strlen(ranges[i]) && strncasecmp(s + e, ranges[i], strlen(ranges[i])) == 0)
            return true;
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
    if (word_in(name, skip, nskip))
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
           !word_in(prev, rating, sizeof(rating) / sizeof(rating[0]));
}

/* One token s[b..e) of the line s[0..n) that holds a digit. */
static int
product_version_token(struct message *m, const char *s, size_t n, size_t b, size_t e, uint64_t has)
{
    /* Tools that built or ran the test, and protocols, are not the product. */
    static const char *const not_products[] = {
        "gcc",    "clang",   "llvm",   "qemu",    "gdb",    "binutils", "rustc",  "cmake",
        "python", "python3", "perl",   "node",    "java",   "go",       "ubuntu", "debian",
        "fedora", "rhel",    "centos", "tls",     "ssl",    "http",     "smb",    "nfs",
        "cvss",   "ip",      "ipv4",   "address", "offset",
    };
    static const char *const version_words[] = {"version", "versions", "release", "releases",
                                                "ver"};
    const char *t, *slash, *at, *colon;
    char prev[16];
    unsigned comps;
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
    if (hex_run(t, len) == len) {
        if (len < 7 || len > 40 || strcspn(t, "0123456789") >= len || !after_commit_word(s, b))
            return 0;
        return add_commit_id(m, t, len);
    }
    /* Every shape below has a dot between two digits (version_shape()):
     * most tokens with a digit (addresses, offsets, counts) have none. */
    if (memchr(t, '.', len) == NULL || (holds(has, need.cvss) && after_cvss(s, b)))
        return 0;
    /* "lodash@4.17.20", "@scope/pkg@1.2.3": a package at a version. */
    at = memchr(t + 1, '@', len - 1);
    if (at != NULL && (ascii_class[(unsigned char)t[0]] & ASCII_ALPHA) != 0 && is_alnum(at[-1]) &&
        version_shape(at + 1, (size_t)(t + len - at - 1)) > 0)
        return add_fact(&m->versions, at + 1, (size_t)(t + len - at - 1), REPORT_MAX_VERSIONS);
    /* "org.apache.tomcat:tomcat-catalina:9.0.41": Maven's group:artifact:version. */
    colon = memchr(t, ':', len);
    if (colon != NULL && colon > t && (ascii_class[(unsigned char)t[0]] & ASCII_ALPHA) != 0) {
        const char *last = t + len;

        while (last > colon && last[-1] != ':')
            last--;
        /* Two colons: a group and an artifact, not "Python:3.11.4". */
        if (last - 1 > colon && version_shape(last, (size_t)(t + len - last)) > 0)
            return add_fact(&m->versions, last, (size_t)(t + len - last), REPORT_MAX_VERSIONS);
    }
    slash = memchr(t, '/', len);
    /* A release named in a path: ".../gems/rack-2.2.3/lib/rack/x.rb",
     * ".../lib/jackson-databind-2.9.10.jar". */
    if (slash != NULL && memchr(t, '-', len) != NULL) {
        const char *c = t, *end = t + len;

        while (c < end) {
            const char *ce = memchr(c, '/', (size_t)(end - c));
            size_t cn = ce != NULL ? (size_t)(ce - c) : (size_t)(end - c);

            if (named_release(c, cn, not_products, sizeof(not_products) / sizeof(not_products[0]),
                              &vb, &vn))
                return add_fact(&m->versions, c + vb, vn, REPORT_MAX_VERSIONS);
            c += cn + 1;
        }
    }
    if (slash == NULL && memchr(t, '-', len) != NULL &&
        named_release(t, len, not_products, sizeof(not_products) / sizeof(not_products[0]), &vb,
                      &vn))
        return add_fact(&m->versions, t + vb, vn, REPORT_MAX_VERSIONS);
    if (slash != NULL) {
        size_t nl = (size_t)(slash - t);

        /* "curl/8.7.0-DEV": a name with a letter first, no path before it. */
        if (nl < 2 || !(ascii_class[(unsigned char)t[0]] & ASCII_ALPHA) ||
            memchr(slash + 1, '/', len - nl - 1) != NULL)
            return 0;
        for (size_t i = 0; i < nl; i++)
            if (!is_ident(t[i]) && t[i] != '-' && t[i] != '+')
                return 0;
        if (version_shape(slash + 1, len - nl - 1) == 0)
            return 0;
        /* "HTTP/1.1" names a protocol's version, not the product's. */
        word_before(s, b + nl, prev, sizeof(prev));
        if (word_in(prev, not_products, sizeof(not_products) / sizeof(not_products[0])))
            return 0;
        return add_fact(&m->versions, slash + 1, len - nl - 1, REPORT_MAX_VERSIONS);
    }
    if (t[0] == 'v' || t[0] == 'V') {
        if (version_shape(t + 1, len - 1) == 0)
            return 0;
        return add_fact(&m->versions, t, len, REPORT_MAX_VERSIONS);
    }
    comps = version_shape(t, len);
    if (comps == 0)
        return 0;
    word_before(s, b, prev, sizeof(prev));
    if (word_in(prev, not_products, sizeof(not_products) / sizeof(not_products[0])) ||
        word_in(prev, numbering_words, sizeof(numbering_words) / sizeof(numbering_words[0])))
        return 0;
    if (comps == 2 &&
        !word_in(prev, version_words, sizeof(version_words) / sizeof(version_words[0])) &&
        !before_range_word(s, n, e) && !after_comparison(s, b) && !after_product_name(s, b, prev))
        return 0;
    return add_fact(&m->versions, t, len, REPORT_MAX_VERSIONS);
}

/*
 * A link into a source browser at a release or commit pins the code as a
 * version does: ".../blob/curl-8_3_0/lib/socks.c", ".../tree/v6.9/...",
 * ".../commit/<id>", cgit's "?h=v6.9" and "?id=<id>". Branch names
 * (master, main) pin nothing and are not taken.
 */
static int
url_version(struct message *m, const char *u, size_t n)
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
            return add_commit_id(m, p, len);
        if (is_describe(p, len) || is_underscore_tag(p, len) || version_shape(p, len) > 0 ||
            ((p[0] == 'v' || p[0] == 'V') && version_shape(p + 1, len - 1) > 0))
            return add_fact(&m->versions, p, len, REPORT_MAX_VERSIONS);
    }
    return 0;
}

/* s[n] must be a NUL. */
static int
extract_product_versions(struct message *m, const char *s, size_t n, size_t first_digit,
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
 * extract_versions() or extract_product_versions(). Every one they take
 * has a dotted number (the numbers, "v6.9", "curl/8.7.0"; each component
 * is one whole run of digits), or a '-' ("next-20240101", describe strings, "curl-
 * 8_5_0"), or is a hex id after a word that introduces a commit
 * (after_commit_word(), whose "commit" also covers "commit <id>"). Most
 * lines of a trace have none, and both scans stop at every digit.
 */
static bool
may_hold_version(bool dotted, uint64_t has)
{
    if (dotted || holds(has, need.dash))
        return true;
    for (size_t k = 0; k < sizeof(need.commit_words) / sizeof(need.commit_words[0]); k++)
        if (holds(has, need.commit_words[k]))
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

    if ((has & need.dot_or_k) == 0)
        return false;
    for (const char *p = memchr(s, '.', n); p != NULL && p + 1 < e;
         p = memchr(p + 1, '.', (size_t)(e - p - 1)))
        if (ext_first[(unsigned char)p[1]])
            return true;
    return holds(has, need.named) &&
           (ascii_find(s, n, "Kconfig") != NULL || ascii_find(s, n, "Kbuild") != NULL ||
            ascii_find(s, n, "Makefile") != NULL);
}

/* has holds the line's classes: each list is looked for only in a line
 * that holds the bytes its entries need. */
static int
extract_facts(struct message *m, const char *line, size_t n, uint64_t has, char *scratch)
{
    size_t first_digit = n;
    bool dotted;
    int r = 0;

    memcpy(scratch, line, n);
    scratch[n] = '\0';
    /* Where the version scans start; n when the line has no digit. A URL
     * is blanked below, so digits can only go, never appear, and has
     * stays a superset of the line's classes. */
    if (holds(has, need.digit))
        first_digit = strcspn(scratch, "0123456789");
    if (holds(has, need.url))
        r = extract_urls(m, scratch, n);
    if (r >= 0 && holds(has, need.config))
        r = extract_configs(m, scratch, n);
    if (r >= 0 && holds(has, need.call))
        r = extract_functions(m, scratch, n);
    if (r >= 0 && holds(has, need.slash) && may_hold_path(scratch, n, has))
        r = extract_paths(m, scratch, n);
    if (r < 0)
        return r;
    dotted = holds(has, need.digit) && has_dotted_number(scratch, n);
    if (!may_hold_version(dotted, has))
        return r;
    r = extract_versions(m, scratch, n, first_digit, has, dotted);
    if (r >= 0 && first_digit < n)
        r = extract_product_versions(m, scratch, n, first_digit, has);
    return r;
}

int
report_parse(struct message *m, const char *text, size_t len,
             const struct classifier_limits *limits)
{
    return report_parse_lines(m, text, len, NULL, limits);
}

int
report_parse_lines(struct message *m, const char *text, size_t len, const struct text_lines *ix,
                   const struct classifier_limits *limits)
{
    struct text_lines own = {0};
    struct span *lines = NULL;
    uint64_t *has = NULL;
    unsigned char *cls = NULL;
    char *out[2] = {NULL, NULL}, *scratch = NULL;
    size_t size[2] = {0, 0}, n, i;
    bool cut;
    int r = 0;

    /* Without a text there is nothing an index could point into. */
    if (text == NULL) {
        text = "";
        len = 0;
        ix = NULL;
    }
    if (ix == NULL) {
        /* A line past the cap shows that the cap was hit. */
        r = text_lines_split(text, len, (size_t)limits->max_lines + 1, &own, &cut);
        if (r < 0)
            goto out;
        ix = &own;
    }
    n = ix->n < limits->max_lines ? ix->n : limits->max_lines;
    pthread_once(&report_tables_once, report_tables_init);
    /* Each line, then each as classify() reads it (strip_syslog()). */
    lines = malloc((n ? 2 * n : 1) * sizeof(*lines));
    has = malloc((n ? 2 * n : 1) * sizeof(*has));
    if (lines == NULL || has == NULL) {
        r = -ENOMEM;
        goto out;
    }
    for (i = 0; i < n; i++) {
        struct span s = {text + ix->v[i].off, ix->v[i].len};

        if (s.n > 0 && s.p[s.n - 1] == '\r')
            s.n--;
        if (s.n > limits->max_line_bytes) {
            s.n = limits->max_line_bytes;
            while (s.n > 0 && ((unsigned char)s.p[s.n] & 0xc0) == 0x80)
                s.n--;
        }
        lines[i] = s;
        /* One pass per line, for every question asked of it below. */
        has[i] = bytes_in(s.p, s.n);
        lines[n + i] = strip_syslog(s);
        has[n + i] = lines[n + i].p == s.p ? has[i] : bytes_in(lines[n + i].p, lines[n + i].n);
    }
    if (ix->n > n)
        message_note_limit(m, "max_lines", limits->max_lines);

    cls = calloc(n ? n : 1, 1);
    scratch = malloc(limits->max_line_bytes + 1);
    if (cls == NULL || scratch == NULL) {
        r = -ENOMEM;
        goto out;
    }
    classify(lines + n, has + n, n, cls);

    /* Both texts are sized first, so each is one allocation. */
    for (i = 0; i < n; i++)
        size[cls[i]] += lines[i].n + 1;
    for (int k = 0; k < 2; k++) {
        out[k] = malloc(size[k] + 1);
        if (out[k] == NULL) {
            r = -ENOMEM;
            goto out;
        }
        size[k] = 0;
    }
    for (i = 0; i < n; i++) {
        unsigned char k = cls[i];

        memcpy(out[k] + size[k], lines[i].p, lines[i].n);
        size[k] += lines[i].n;
        out[k][size[k]++] = '\n';
        r = extract_facts(m, lines[i].p, lines[i].n, has[i], scratch);
        if (r < 0)
            goto out;
    }
    for (int k = 0; k < 2; k++) {
        struct region *rg = &m->regions[k == LINE_REPORT ? REGION_REPORT : REGION_CODE];

        out[k][size[k]] = '\0';
        region_release(rg);
        rg->text = out[k];
        rg->len = size[k];
        out[k] = NULL;
    }
out:
    free(own.v);
    free(lines);
    free(has);
    free(cls);
    free(scratch);
    free(out[0]);
    free(out[1]);
    return r;
}
