/*
 * report_classify.c - which lines of a report are code and traces, and
 * which are its prose: traces and what continues them, fenced blocks,
 * shell prompt and .config lines, and indented blocks that read as code
 * or as commands under a lead-in ("To reproduce:").
 *
 * Threading: reads only the shared tables (report_parser.h).
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "report_parser.h"

static const struct report_need *const need = &report_bytes_need;

static bool
is_indented(struct span s)
{
    return !is_blank(s) && (starts(s.p, s.n, "    ") || starts(s.p, s.n, "\t"));
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
    if ((has & need->prompt) == 0)
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

    if ((has & need->code) != 0)
        return true;
    if ((holds(has, need->hash) && (starts(t.p, t.n, "#include") || starts(t.p, t.n, "#define") ||
                                    starts(t.p, t.n, "#if"))) ||
        is_command_line(s, has))
        return true;
    for (size_t i = 1; holds(has, need->paren) && i < s.n; i++)
        if (s.p[i] == '(' && is_ident(s.p[i - 1]))
            return true;
    return false;
}

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
void
report_classify(const struct span *l, const uint64_t *has, size_t n, unsigned char *cls)
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
                if (j < n && (is_indented(l[j]) || report_trace_section(l[j]) ||
                              report_trace_start(l[j], has[j]))) {
                    cls[i] = LINE_CODE;
                    continue;
                }
                in_trace = false;
                continue;
            }
            if (report_trace_cont(s, has[i])) {
                cls[i] = LINE_CODE;
                continue;
            }
            in_trace = false;
        }
        if (report_trace_start(s, has[i]) ||
            (report_trace_rule(s) && i + 1 < n && report_trace_start(l[i + 1], has[i + 1]))) {
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
                    if (is_codeish(l[j], has[j]) || report_trace_start(l[j], has[j]))
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
