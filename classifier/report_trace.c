/*
 * report_trace.c - the lines of a trace as a report quotes them: a
 * kernel oops or sanitizer report (registers, frames, time stamps,
 * markers, sections), a hypervisor's console log, or another runtime's
 * backtrace.
 *
 * Threading: the markers' filter is built once (report_trace_init(),
 * under the caller's pthread_once()) and only read after;
 * report_sanitizer_line() and report_backtrace_line() need no table.
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "report_parser.h"
#include "report_trace.h"

static const struct report_need *const need = &report_bytes_need;

/* "RAX: 0000000000000000 RBX: ..." or "RSP: 0018:ffffc900..." */
static bool
is_register_line(struct span s)
{
    size_t i = 0, h;

    s = trim_left(s);
    while (i < s.len && i < 5 && is_alnum(s.p[i]))
        i++;
    if (i < 2 || i > 4 || i >= s.len || s.p[i] != ':')
        return false;
    i++;
    while (i < s.len && s.p[i] == ' ')
        i++;
    h = hex_run(s.p + i, s.len - i);
    return h >= 8 || (h == 4 && i + h < s.len && s.p[i + h] == ':');
}

/* " ? func_name+0x1a/0x30 [module]" or an old "[<ffffffff8100>]" frame. */
static bool
is_frame_line(struct span s)
{
    size_t i = 0;

    s = trim_left(s);
    if (starts(s.p, s.len, "[<"))
        return true;
    if (starts(s.p, s.len, "? "))
        i = 2;
    if (i >= s.len || !is_ident(s.p[i]))
        return false;
    while (i < s.len && (is_ident(s.p[i]) || s.p[i] == '.'))
        i++;
    if (!starts(s.p + i, s.len - i, "+0x"))
        return false;
    i += 3 + hex_run(s.p + i + 3, s.len - i - 3);
    return starts(s.p + i, s.len - i, "/0x");
}

/* "[   12.345678] ..." with an optional "<4>" log level in front. */
static bool
is_timestamp_line(struct span s)
{
    size_t i = 0, d;

    s = trim_left(s);
    if (starts(s.p, s.len, "<") && s.len > 3 && is_digit(s.p[1]) && s.p[2] == '>')
        i = 3;
    if (i >= s.len || s.p[i] != '[')
        return false;
    i++;
    while (i < s.len && s.p[i] == ' ')
        i++;
    for (d = 0; i < s.len && is_digit(s.p[i]); i++)
        d++;
    if (d == 0 || i >= s.len || s.p[i] != '.')
        return false;
    for (i++, d = 0; i < s.len && is_digit(s.p[i]); i++)
        d++;
    return d > 0 && i < s.len && s.p[i] == ']';
}

bool
report_sanitizer_line(const char *p, size_t len)
{
    struct span s = trim_left((struct span){p, len});
    size_t i;

    if (starts(s.p, s.len, "==") && s.len > 3 && is_digit(s.p[2])) {
        for (i = 2; i < s.len && is_digit(s.p[i]); i++)
            ;
        return starts(s.p + i, s.len - i, "==");
    }
    if (starts(s.p, s.len, "#") && s.len > 2 && is_digit(s.p[1])) {
        for (i = 1; i < s.len && is_digit(s.p[i]); i++)
            ;
        return starts(s.p + i, s.len - i, " 0x");
    }
    return false;
}

/* Digits from s.p[i] on; i when there are none. */
static size_t
digits_end(struct span s, size_t i)
{
    while (i < s.len && is_digit(s.p[i]))
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

/* A frame's file name ends at s.p[e], after its extension: whether a
 * line number follows it where a frame puts one. */
static bool
line_after_file(struct span s, size_t e)
{
    size_t j;

    if (s.p[e] == '"' && starts(s.p + e, s.len - e, "\", line ") && digits_end(s, e + 8) > e + 8)
        return true;
    if (s.p[e] == '(' && (j = digits_end(s, e + 1)) > e + 1 && j < s.len && s.p[j] == ')')
        return true;
    if (s.p[e] != ':' || (j = digits_end(s, e + 1)) == e + 1)
        return false;
    if (starts(s.p + j, s.len - j, ":in ") || starts(s.p + j, s.len - j, " +0x"))
        return true;
    if (j + 1 < s.len && s.p[j] == ':' && is_digit(s.p[j + 1]))
        j = digits_end(s, j + 1);
    while (j < s.len && (s.p[j] == ')' || s.p[j] == ' ' || s.p[j] == '\t'))
        j++;
    return j == s.len;
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
    for (const char *d = memchr(s.p, '.', s.len); d != NULL;
         d = memchr(d + 1, '.', (size_t)(s.p + s.len - d - 1))) {
        size_t i = (size_t)(d - s.p) + 1, e = i;

        while (e < s.len && e - i < 6 && s.p[e] >= 'a' && s.p[e] <= 'z')
            e++;
        if (e == i || e >= s.len || !is_frame_ext(s.p + i, e - i))
            continue;
        if (line_after_file(s, e))
            return true;
    }
    return false;
}

bool
report_backtrace_line(const char *p, size_t len)
{
    struct span s = trim_left((struct span){p, len});
    size_t i;

    if (s.len < 4)
        return false;
    switch (s.p[0]) {
    case 'T':
        return starts(s.p, s.len, "Traceback (most recent call last):");
    case 'E':
        return starts(s.p, s.len, "Exception in thread \"");
    case 'C':
        return starts(s.p, s.len, "Caused by: ");
    case 'g':
        /* Go: "goroutine 1 [running]:" */
        if (!starts(s.p, s.len, "goroutine "))
            return false;
        i = digits_end(s, 10);
        return i > 10 && starts(s.p + i, s.len - i, " [");
    case 't':
        /* Rust: "thread 'main' panicked at src/main.rs:4:5:" */
        return starts(s.p, s.len, "thread '") && ascii_find(s.p, s.len, "' panicked at ") != NULL;
    case 'a':
        return starts(s.p, s.len, "at ") && backtrace_frame_at(s);
    case 'f':
        return starts(s.p, s.len, "from ") && backtrace_frame_at(s);
    case 'F':
        return starts(s.p, s.len, "File \"") && backtrace_frame_at(s);
    case '#':
        /* gdb's "#0  0x00007f... in f () from x.so", "#1  f (a=1) at x.c:12";
         * PHP's "#0 /srv/x.php(12): f()". */
        i = digits_end(s, 1);
        if (i == 1 || i >= s.len || (s.p[i] != ' ' && s.p[i] != '\t'))
            return false;
        while (i < s.len && (s.p[i] == ' ' || s.p[i] == '\t'))
            i++;
        return (starts(s.p + i, s.len - i, "0x") && hex_run(s.p + i + 2, s.len - i - 2) >= 4) ||
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
    return report_sanitizer_line(s.p, s.len);
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

static struct report_pairs trace_markers_filter;

/* A line holds a marker only if it holds all the classes of
 * trace_marker_some (a ':' and an upper-case letter), or all the classes
 * of a marker without them: those markers' classes, the ones that
 * another's include left out, are trace_marker_needs. One test for most
 * markers, as prose lines seldom hold a ':'; then one for each of the
 * rest, as prose holds their letter pairs, and report_pairs_find() would try
 * the markers at most positions of the line. */
static uint64_t trace_marker_some;

static uint64_t trace_marker_needs[TRACE_MARKERS];

static size_t trace_marker_nneeds;

_Static_assert(TRACE_MARKERS <= REPORT_PAIRS_MAX, "the markers fit one pair filter");

void
report_trace_init(void)
{
    report_pairs_init(&trace_markers_filter, trace_markers, TRACE_MARKERS);
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
bool
report_trace_start(struct span s, uint64_t has)
{
    struct span t = trim_left(s);

    /* By the first byte: this runs on every line of a report. */
    switch (t.len > 0 ? t.p[0] : '\0') {
    case 'R':
        if (starts(t.p, t.len, "RIP: "))
            return true;
        break;
    case 'C':
        if (starts(t.p, t.len, "Code: ") ||
            (starts(t.p, t.len, "CPU: ") && ascii_find(t.p, t.len, "PID:") != NULL))
            return true;
        break;
    case 'p':
        if (starts(t.p, t.len, "pc : "))
            return true;
        break;
    case 'l':
        if (starts(t.p, t.len, "lr : "))
            return true;
        break;
    case '(':
        /* A Xen hypervisor's console prefixes each line of its log, an
         * assertion's or a crash's, with "(XEN) ". */
        if (starts(t.p, t.len, "(XEN) "))
            return true;
        break;
    case '<':
        if (starts(t.p, t.len, "<TASK>") || starts(t.p, t.len, "</TASK>") ||
            starts(t.p, t.len, "<IRQ>") || starts(t.p, t.len, "</IRQ>"))
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
    return (holds(has, need->timestamp) && is_timestamp_line(t)) ||
           (holds(has, need->colon) && is_register_line(t)) ||
           ((holds(has, need->frame_old) || holds(has, need->frame)) && is_frame_line(t)) ||
           ((has & need->sanitizer) != 0 && is_sanitizer_line(t)) ||
           report_backtrace_line(t.p, t.len) ||
           (may_hold_marker(has) && report_pairs_find(s.p, s.len, &trace_markers_filter));
}

/* Lines of a KASAN or similar report that only make sense inside one. */
bool
report_trace_section(struct span s)
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

    for (size_t i = 0; t.len > 0 && i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
        if (t.p[0] == prefixes[i].s[0] && t.len >= prefixes[i].n &&
            memcmp(t.p, prefixes[i].s, prefixes[i].n) == 0)
            return true;
    /* Shadow memory rows: "ffff888012345600: fa fb fb fb" (one may lead with '>'). */
    if (starts(t.p, t.len, ">"))
        t.p++, t.len--;
    return hex_run(t.p, t.len) >= 16 && t.len > 16 && t.p[16] == ':';
}

/* "=====...": KASAN and sanitizers frame their reports with these. */
bool
report_trace_rule(struct span s)
{
    size_t i = 0;

    while (i < s.len && s.p[i] == '=')
        i++;
    return i >= 20 && i == s.len;
}

/* Inside a trace, indented lines and lines full of addresses continue
 * it; has holds the line's classes. */
bool
report_trace_cont(struct span s, uint64_t has)
{
    const char *p;

    /* Kernel traces indent their continuation lines by one space: most
     * lines of a trace, answered before the costlier tests. */
    if (!is_blank(s) && (s.p[0] == ' ' || s.p[0] == '\t'))
        return true;
    if (report_trace_start(s, has) || report_trace_section(s) || report_trace_rule(s))
        return true;
    for (p = s.p;
         holds(has, need->hex0x) && (p = ascii_find(p, s.len - (size_t)(p - s.p), "0x")) != NULL;
         p += 2)
        if (hex_run(p + 2, s.len - (size_t)(p + 2 - s.p)) >= 4)
            return true;
    for (p = s.p;
         holds(has, need->ffff) && (p = ascii_find(p, s.len - (size_t)(p - s.p), "ffff")) != NULL;
         p += 4)
        if (hex_run(p, s.len - (size_t)(p - s.p)) >= 12)
            return true;
    return false;
}
