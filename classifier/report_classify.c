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
    return !is_blank(s) && (starts(s.p, s.len, "    ") || starts(s.p, s.len, "\t"));
}

static bool
is_fence(struct span s)
{
    size_t i = 0;

    while (i < s.len && i < 3 && s.p[i] == ' ')
        i++;
    return starts(s.p + i, s.len - i, "```") || starts(s.p + i, s.len - i, "~~~");
}

/* "$ cmd" or "# cmd", s trimmed and more than its prompt and space: a
 * root prompt, not a Markdown heading, when the command starts with a
 * lower-case letter, '.' or '/'; "# CONFIG_X is not set". */
static bool
is_prompt_line(struct span s)
{
    char c = s.p[2];

    if ((c >= 'a' && c <= 'z') || c == '.' || c == '/')
        return true;
    if (s.p[0] == '#' && starts(s.p, s.len, "# CONFIG_"))
        return ascii_find(s.p, s.len, " is not set") != NULL;
    return s.p[0] == '$';
}

/* "CONFIG_FOO=y", s trimmed and starting "CONFIG_". */
static bool
is_config_line(struct span s)
{
    size_t i = 7;

    while (i < s.len && is_ident(s.p[i]))
        i++;
    return i < s.len && s.p[i] == '=';
}

/* "user@host:path$ cmd" or "user@host:path# cmd", s trimmed. */
static bool
is_user_prompt(struct span s)
{
    const char *p = memchr(s.p, '@', s.len), *colon;

    if (p == NULL || p == s.p)
        return false;
    colon = memchr(p, ':', s.len - (size_t)(p - s.p));
    for (const char *q = s.p; q < p; q++)
        if (!is_ident(*q) && *q != '-' && *q != '.')
            return false;
    if (colon == NULL)
        return false;
    for (const char *q = colon + 1; q < s.p + s.len; q++) {
        if (*q == ' ')
            return q > colon + 1 && (q[-1] == '$' || q[-1] == '#');
    }
    return false;
}

/*
 * "$ cmd", "# cmd" (a root prompt, not a Markdown heading: the command
 * starts with a lower-case letter, '.' or '/'), "user@host:~$ cmd", and
 * .config lines.
 */
static bool
is_command_line(struct span s, uint64_t has)
{
    /* Each shape needs a '$', '#', '@' or "CONFIG_"'s '_'. */
    if ((has & need->prompt) == 0)
        return false;
    s = trim_left(s);
    if ((starts(s.p, s.len, "$ ") || starts(s.p, s.len, "# ")) && s.len > 2)
        return is_prompt_line(s);
    if (starts(s.p, s.len, "CONFIG_"))
        return is_config_line(s);
    return is_user_prompt(s);
}

static bool
is_codeish(struct span s, uint64_t has)
{
    struct span t = trim_left(s);

    if ((has & need->code) != 0)
        return true;
    if ((holds(has, need->hash) && (starts(t.p, t.len, "#include") ||
                                    starts(t.p, t.len, "#define") || starts(t.p, t.len, "#if"))) ||
        is_command_line(s, has))
        return true;
    for (size_t i = 1; holds(has, need->paren) && i < s.len; i++)
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

/* A command's argument w[0..n): an option, a path, an assignment, or a
 * file or host name with a dot inside it. */
static bool
is_argument(const char *w, size_t n)
{
    if (w[0] == '-' || memchr(w, '/', n) != NULL || memchr(w, '=', n) != NULL)
        return true;
    for (const char *d = memchr(w, '.', n); d != NULL && d + 1 < w + n;
         d = memchr(d + 1, '.', (size_t)(w + n - d - 1)))
        if (ascii_is_alnum((unsigned char)d[1]))
            return true;
    return false;
}

/* The words of s from s.p[i] on hold an argument; with none, the command
 * stands alone when it is a path. */
static bool
has_argument(struct span s, size_t i, bool path)
{
    for (;;) {
        size_t e;

        while (i < s.len && (s.p[i] == ' ' || s.p[i] == '\t'))
            i++;
        if (i >= s.len)
            return path;
        e = i;
        while (e < s.len && s.p[e] != ' ' && s.p[e] != '\t')
            e++;
        if (is_argument(s.p + i, e - i))
            return true;
        i = e;
    }
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
    size_t i = 0;

    s = trim_left(s);
    if (starts(s.p, s.len, "$ "))
        s = trim_left((struct span){s.p + 2, s.len - 2});
    if (s.len < 2 || s.p[s.len - 1] == '.' || memchr(s.p, ';', s.len) != NULL ||
        memchr(s.p, '{', s.len) != NULL || memchr(s.p, '}', s.len) != NULL)
        return false;
    if (!((s.p[0] >= 'a' && s.p[0] <= 'z') || s.p[0] == '.' || s.p[0] == '/' || s.p[0] == '~'))
        return false;
    while (i < s.len && is_command_char(s.p[i]))
        i++;
    if (i < s.len && s.p[i] != ' ' && s.p[i] != '\t')
        return false;
    return has_argument(s, i, memchr(s.p, '/', i) != NULL);
}

/* The last non-blank line before l[i] ends in ':' ("To reproduce:",
 * "Run it with:"): the text says that what follows is to be run. */
static bool
after_lead_in(const struct span *l, size_t i)
{
    while (i > 0) {
        struct span p = l[--i];

        while (p.len > 0 && (p.p[p.len - 1] == ' ' || p.p[p.len - 1] == '\t'))
            p.len--;
        if (p.len > 0)
            return p.p[p.len - 1] == ':';
    }
    return false;
}

/* A blank line l[i] inside a trace stays inside when the next non-blank
 * line clearly belongs to the trace. */
static bool
blank_in_trace(const struct span *l, const uint64_t *has, size_t n, size_t i)
{
    size_t j = i + 1;

    while (j < n && is_blank(l[j]))
        j++;
    return j < n &&
           (is_indented(l[j]) || report_trace_section(l[j]) || report_trace_start(l[j], has[j]));
}

/* What line i inside a trace does to it. */
enum trace_step {
    TRACE_GOES_ON,   /* the line is part of the trace */
    TRACE_ENDS_HERE, /* a blank line after it: nothing more to ask */
    TRACE_ENDED,     /* the line is not the trace's: ask the rest */
};

static enum trace_step
trace_step(const struct span *l, const uint64_t *has, size_t n, size_t i)
{
    if (is_blank(l[i]))
        return blank_in_trace(l, has, n, i) ? TRACE_GOES_ON : TRACE_ENDS_HERE;
    return report_trace_cont(l[i], has[i]) ? TRACE_GOES_ON : TRACE_ENDED;
}

/* The indented block from l[i] on (indented lines, with blank lines
 * between them) is code when it has at least two lines and at least half
 * of them look like code, or when its lines are commands under a
 * lead-in. Marks it in cls; returns where it ends. */
static size_t
indented_block(const struct span *l, const uint64_t *has, size_t n, size_t i, unsigned char *cls)
{
    size_t j = i, nonblank = 0, code = 0, commands = 0;

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
    /* Commands under a lead-in are code however few: a single indented
     * "./poc" under "Reproduce:" is the reproducer. */
    if ((nonblank >= 2 && code > 0 && code * 2 >= nonblank) ||
        (commands == nonblank && after_lead_in(l, i)))
        memset(cls + i, LINE_CODE, j - i);
    return j;
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
            in_fence = !is_fence(s);
            continue;
        }
        if (is_fence(s)) {
            cls[i] = LINE_CODE;
            in_fence = true;
            in_trace = false;
            continue;
        }
        if (in_trace) {
            enum trace_step t = trace_step(l, has, n, i);

            if (t == TRACE_GOES_ON) {
                cls[i] = LINE_CODE;
                continue;
            }
            in_trace = false;
            if (t == TRACE_ENDS_HERE)
                continue;
        }
        if (report_trace_start(s, has[i]) ||
            (report_trace_rule(s) && i + 1 < n && report_trace_start(l[i + 1], has[i + 1]))) {
            cls[i] = LINE_CODE;
            in_trace = true;
        } else if (is_command_line(s, has[i])) {
            cls[i] = LINE_CODE;
        } else if (is_indented(s)) {
            i = indented_block(l, has, n, i, cls) - 1;
        }
    }
}
