/*
 * poc_program.c - the calls a report's C reproducer makes.
 *
 * The first "int main(" or "void main(" in the report's body is taken as
 * the program. It starts at the first #include line at most
 * POC_LOOKBACK bytes before main() (so helpers defined between the
 * includes and main() are its own), or else at main()'s line, and ends
 * where main()'s braces close, at most POC_PROGRAM_MAX_BYTES on. The scan
 * skips comments, string and character literals and preprocessor lines
 * (a #define's name is the program's own; an #include of a header
 * beyond the C library's in-process ones counts as an outside call). A
 * main() that calls nothing is no program. A name followed by '(' at
 * brace depth 0 is a definition or a prototype; inside braces it is a
 * call. A function defined after main() is not seen and so counts as an
 * outside call, as do names past the cap of a set: an unsure program
 * reads as one that reaches the project, which keeps a rule quiet.
 *
 * Threading: no shared state; the tables are constant.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ascii.h"
#include "poc_program.h"

#define POC_PROGRAM_MAX_BYTES 32768
#define POC_LOOKBACK 8192
#define POC_MAX_NAMES 64
#define POC_NAME_MAX 40
#define POC_SPAWN_ARGS 160 /* bytes of a spawn call's arguments read for the shell */
#define POC_EVIDENCE_NAMES 6

struct poc_names {
    char name[POC_MAX_NAMES][POC_NAME_MAX];
    size_t n;
};

struct poc_scan {
    const char *p, *end;
    int depth;
    bool line_start;
    struct poc_names defined, library, outside;
    size_t outside_extra; /* outside calls past the cap of the set */
};

/* Words followed by '(' that are no call: statements, operators, types
 * (a cast, a function pointer), attributes. Sorted for bsearch(). */
static const char *const poc_keywords[] = {
    "_Alignof", "_Generic", "__asm__",  "__attribute__", "__typeof__", "alignof", "asm",
    "case",     "char",     "const",    "defined",       "do",         "double",  "else",
    "enum",     "float",    "for",      "goto",          "if",         "int",     "long",
    "return",   "short",    "signed",   "sizeof",        "static",     "struct",  "switch",
    "typeof",   "union",    "unsigned", "void",          "volatile",   "while",
};

/* C library functions that stay inside the process: strings, memory,
 * formatting to the standard streams, allocation, conversion, time,
 * exit. Sorted for bsearch(). File and socket calls are not here: they
 * may be how the program reaches the project (a kernel's interfaces are
 * files and system calls). */
static const char *const poc_library[] = {
    "_exit",    "abort",   "abs",     "assert",   "atoi",     "atol",    "atoll",     "bzero",
    "calloc",   "exit",    "fflush",  "fgets",    "fprintf",  "fputc",   "fputs",     "free",
    "getchar",  "gets",    "isalnum", "isalpha",  "isdigit",  "isprint", "isspace",   "isxdigit",
    "labs",     "malloc",  "memchr",  "memcmp",   "memcpy",   "memmove", "memset",    "perror",
    "printf",   "putchar", "puts",    "rand",     "realloc",  "scanf",   "sleep",     "snprintf",
    "sprintf",  "srand",   "sscanf",  "strcat",   "strchr",   "strcmp",  "strcpy",    "strdup",
    "strerror", "strlen",  "strncat", "strncmp",  "strncpy",  "strndup", "strrchr",   "strstr",
    "strtok",   "strtol",  "strtoll", "strtoul",  "strtoull", "time",    "tolower",   "toupper",
    "usleep",   "va_arg",  "va_end",  "va_start", "vfprintf", "vprintf", "vsnprintf", "vsprintf",
    "wcscpy",   "wcslen",
};

/* Headers of the C library and of POSIX that declare nothing beyond the
 * process: any other header (a project's, or <sys/socket.h>, <fcntl.h>
 * and the kernel's uapi, which declare how to reach the kernel) counts as
 * an outside call. Sorted for bsearch(). */
static const char *const poc_headers[] = {
    "assert.h",      "ctype.h",   "errno.h",   "float.h",  "inttypes.h", "iso646.h",
    "limits.h",      "locale.h",  "math.h",    "setjmp.h", "signal.h",   "stdalign.h",
    "stdarg.h",      "stdbool.h", "stddef.h",  "stdint.h", "stdio.h",    "stdlib.h",
    "stdnoreturn.h", "string.h",  "strings.h", "time.h",   "unistd.h",   "wchar.h",
};

/* Calls that run another program: inside the process only when what they
 * run is a shell, the usual end of an exploit; otherwise the program run
 * may be the project's. Sorted for bsearch(). */
static const char *const poc_spawn[] = {
    "execl", "execle", "execlp", "execv", "execve", "execvp", "system",
};

static int
poc_cmp(const void *key, const void *elem)
{
    return strcmp((const char *)key, *(const char *const *)elem);
}

static bool
poc_in(const char *name, const char *const *table, size_t n)
{
    return bsearch(name, table, n, sizeof(table[0]), poc_cmp) != NULL;
}

static bool
poc_is_ident(unsigned char c)
{
    return (ascii_class[c] & (ASCII_ALPHA | ASCII_DIGIT | ASCII_UNDER)) != 0;
}

static bool
poc_has(const struct poc_names *s, const char *name)
{
    for (size_t i = 0; i < s->n; i++)
        if (strcmp(s->name[i], name) == 0)
            return true;
    return false;
}

/* Adds name unless present; returns false when the set is full. */
static bool
poc_add(struct poc_names *s, const char *name)
{
    if (poc_has(s, name))
        return true;
    if (s->n >= POC_MAX_NAMES)
        return false;
    memcpy(s->name[s->n], name, strlen(name) + 1);
    s->n++;
    return true;
}

/* The offset of the first "main" of a definition, preceded by the word
 * int or void and followed by '(': SIZE_MAX when there is none. */
static size_t
poc_find_main(const char *s, size_t n)
{
    const char *p = s, *end = s + n;

    while ((p = ascii_find(p, (size_t)(end - p), "main")) != NULL) {
        const char *q = p + 4, *b = p;
        size_t at = (size_t)(p - s);

        p += 4;
        if ((at > 0 && poc_is_ident((unsigned char)s[at - 1])) ||
            (q < end && poc_is_ident((unsigned char)*q)))
            continue;
        while (q < end && (*q == ' ' || *q == '\t'))
            q++;
        if (q >= end || *q != '(')
            continue;
        while (b > s && (b[-1] == ' ' || b[-1] == '\t'))
            b--;
        if ((b - s >= 3 && memcmp(b - 3, "int", 3) == 0) ||
            (b - s >= 4 && memcmp(b - 4, "void", 4) == 0))
            return at;
    }
    return SIZE_MAX;
}

/* Where the program starts: the first #include line in the lookback
 * before main, or main's own line. */
static size_t
poc_find_start(const char *s, size_t main_at)
{
    size_t from = main_at > POC_LOOKBACK ? main_at - POC_LOOKBACK : 0;
    const char *inc = ascii_find(s + from, main_at - from, "#include");
    size_t at = inc != NULL ? (size_t)(inc - s) : main_at;

    while (at > 0 && s[at - 1] != '\n')
        at--;
    return at;
}

/* Skips a comment or a literal at sc->p; returns false when none is
 * there. A string literal's text is not read for calls. */
static bool
poc_skip_literal(struct poc_scan *sc)
{
    const char *p = sc->p;

    if (p + 1 < sc->end && p[0] == '/' && p[1] == '/') {
        const char *nl = memchr(p, '\n', (size_t)(sc->end - p));

        sc->p = nl != NULL ? nl : sc->end;
        return true;
    }
    if (p + 1 < sc->end && p[0] == '/' && p[1] == '*') {
        const char *close = ascii_find(p + 2, (size_t)(sc->end - p - 2), "*/");

        sc->p = close != NULL ? close + 2 : sc->end;
        return true;
    }
    if (*p != '"' && *p != '\'')
        return false;
    for (p++; p < sc->end && *p != *sc->p && *p != '\n'; p++)
        if (*p == '\\' && p + 1 < sc->end)
            p++;
    sc->p = p < sc->end ? p + 1 : sc->end;
    return true;
}

/* Reads an identifier at sc->p into name (cut at POC_NAME_MAX - 1). */
static void
poc_read_ident(struct poc_scan *sc, char name[POC_NAME_MAX])
{
    size_t len = 0;

    while (sc->p < sc->end && poc_is_ident((unsigned char)*sc->p)) {
        if (len < POC_NAME_MAX - 1)
            name[len++] = *sc->p;
        sc->p++;
    }
    name[len] = '\0';
}

/* An #include's header: one beyond the process is an outside call. */
static void
poc_note_header(struct poc_scan *sc, const char *line_end)
{
    const char *close;
    char name[POC_NAME_MAX];
    size_t len;

    while (sc->p < line_end && *sc->p != '<' && *sc->p != '"')
        sc->p++;
    if (sc->p >= line_end)
        return;
    close = memchr(sc->p + 1, *sc->p == '<' ? '>' : '"', (size_t)(line_end - sc->p - 1));
    if (close == NULL)
        return;
    len = (size_t)(close - sc->p - 1);
    if (len >= POC_NAME_MAX)
        len = POC_NAME_MAX - 1;
    memcpy(name, sc->p + 1, len);
    name[len] = '\0';
    if (!poc_in(name, poc_headers, sizeof(poc_headers) / sizeof(poc_headers[0])) &&
        !poc_add(&sc->outside, name))
        sc->outside_extra++;
}

/* A preprocessor line: a #define's name joins the program's own, an
 * #include's header is read. */
static void
poc_skip_directive(struct poc_scan *sc)
{
    const char *nl = memchr(sc->p, '\n', (size_t)(sc->end - sc->p));
    const char *line_end = nl != NULL ? nl : sc->end;
    char name[POC_NAME_MAX];

    sc->p++;
    while (sc->p < line_end && (*sc->p == ' ' || *sc->p == '\t'))
        sc->p++;
    if ((size_t)(line_end - sc->p) > 7 && memcmp(sc->p, "include", 7) == 0)
        poc_note_header(sc, line_end);
    else if ((size_t)(line_end - sc->p) > 7 && memcmp(sc->p, "define", 6) == 0 &&
             (sc->p[6] == ' ' || sc->p[6] == '\t')) {
        sc->p += 7;
        while (sc->p < line_end && (*sc->p == ' ' || *sc->p == '\t'))
            sc->p++;
        poc_read_ident(sc, name);
        if (name[0] != '\0')
            (void)poc_add(&sc->defined, name);
    }
    sc->p = line_end;
}

/* Whether the call whose '(' is at open runs a bare shell: its first
 * string argument names sh or bash, bare or as the last part of a path,
 * and no "-c" follows before the call's end. With -c the shell runs a
 * command line, which may be the project's tool:
 * execl(path, "sh", "-c", cmd, NULL). */
static bool
poc_spawns_shell(const char *open, const char *end)
{
    size_t n = (size_t)(end - open) < POC_SPAWN_ARGS ? (size_t)(end - open) : POC_SPAWN_ARGS;
    const char *q = memchr(open, '"', n), *close, *base, *stop;
    size_t len;

    if (q == NULL)
        return false;
    n -= (size_t)(q - open);
    close = memchr(q + 1, '"', n - 1);
    if (close == NULL)
        return false;
    base = q + 1;
    for (const char *c = q + 1; c < close; c++)
        if (*c == '/')
            base = c + 1;
    len = (size_t)(close - base);
    if (!((len == 2 && memcmp(base, "sh", 2) == 0) || (len == 4 && memcmp(base, "bash", 4) == 0)))
        return false;
    stop = memchr(q, ';', n);
    if (stop != NULL)
        n = (size_t)(stop - q);
    return ascii_find(q, n, "\"-c\"") == NULL;
}

/* Sorts a name followed by '(' at open into the sets. */
static void
poc_note_name(struct poc_scan *sc, const char *name, const char *open)
{
    bool library;

    if (poc_in(name, poc_keywords, sizeof(poc_keywords) / sizeof(poc_keywords[0])))
        return;
    if (sc->depth == 0) {
        (void)poc_add(&sc->defined, name);
        return;
    }
    if (poc_has(&sc->defined, name))
        return;
    library = poc_in(name, poc_library, sizeof(poc_library) / sizeof(poc_library[0])) ||
              (poc_in(name, poc_spawn, sizeof(poc_spawn) / sizeof(poc_spawn[0])) &&
               poc_spawns_shell(open, sc->end));
    if (library)
        (void)poc_add(&sc->library, name);
    else if (!poc_add(&sc->outside, name))
        sc->outside_extra++;
}

/* One token at sc->p. Returns false once main()'s braces have closed. */
static bool
poc_step(struct poc_scan *sc, bool *in_main)
{
    unsigned char c = (unsigned char)*sc->p;
    char name[POC_NAME_MAX];

    if (sc->line_start && c == '#') {
        poc_skip_directive(sc);
        return true;
    }
    if (c == '\n' || ((c == ' ' || c == '\t') && sc->line_start)) {
        sc->line_start = c == '\n' || sc->line_start;
        sc->p++;
        return true;
    }
    sc->line_start = false;
    if (poc_skip_literal(sc))
        return true;
    if ((ascii_class[c] & (ASCII_ALPHA | ASCII_UNDER)) != 0) {
        const char *q;

        poc_read_ident(sc, name);
        for (q = sc->p; q < sc->end && (*q == ' ' || *q == '\t'); q++)
            ;
        if (q < sc->end && *q == '(') {
            *in_main = *in_main || (sc->depth == 0 && strcmp(name, "main") == 0);
            poc_note_name(sc, name, q);
        }
        return true;
    }
    sc->p++;
    if (c == '{')
        sc->depth++;
    else if (c == '}' && sc->depth > 0 && --sc->depth == 0 && *in_main)
        return false;
    return true;
}

/* Evidence: the library calls of a program that makes no other. */
static int
poc_evidence(struct message *m, const struct poc_scan *sc)
{
    char buf[POC_EVIDENCE_NAMES * (POC_NAME_MAX + 4) + 64];
    size_t len = 0;
    int w = snprintf(buf, sizeof(buf), "main() calls only its own functions and the C library");

    if (w < 0)
        return 0;
    len = (size_t)w;
    for (size_t i = 0; i < sc->library.n && i < POC_EVIDENCE_NAMES; i++) {
        w = snprintf(buf + len, sizeof(buf) - len, "%s%s()", i == 0 ? ": " : ", ",
                     sc->library.name[i]);
        if (w < 0 || (size_t)w >= sizeof(buf) - len)
            break;
        len += (size_t)w;
    }
    m->measure_evidence[MEASURE_POC_PROJECT_CALLS] = strndup(buf, len);
    m->measure_evidence[MEASURE_POC_PROGRAMS] = strndup(buf, len);
    if (m->measure_evidence[MEASURE_POC_PROJECT_CALLS] == NULL ||
        m->measure_evidence[MEASURE_POC_PROGRAMS] == NULL)
        return -ENOMEM;
    return 0;
}

int
poc_program_measure(struct message *m)
{
    const struct region *body = &m->regions[REGION_BODY];
    struct poc_scan *sc;
    size_t main_at, start;
    bool in_main = false;
    int r = 0;

    m->measures[MEASURE_POC_PROGRAMS] = 0;
    m->measures[MEASURE_POC_PROJECT_CALLS] = 0;
    free(m->measure_evidence[MEASURE_POC_PROGRAMS]);
    free(m->measure_evidence[MEASURE_POC_PROJECT_CALLS]);
    m->measure_evidence[MEASURE_POC_PROGRAMS] = NULL;
    m->measure_evidence[MEASURE_POC_PROJECT_CALLS] = NULL;
    if (m->kind != CLASSIFIER_KIND_REPORT || body->text == NULL)
        return 0;
    main_at = poc_find_main(body->text, body->len);
    if (main_at == SIZE_MAX)
        return 0;
    /* The sets are some kilobytes: on the heap, not the milter thread's stack. */
    sc = calloc(1, sizeof(*sc));
    if (sc == NULL)
        return -ENOMEM;
    start = poc_find_start(body->text, main_at);
    sc->p = body->text + start;
    sc->end =
        body->text +
        (body->len - start > POC_PROGRAM_MAX_BYTES ? start + POC_PROGRAM_MAX_BYTES : body->len);
    sc->line_start = true;
    while (sc->p < sc->end && poc_step(sc, &in_main))
        ;
    /* A main() that calls nothing (a sketch, its steps in comments) is
     * no program to judge. */
    if (sc->library.n + sc->outside.n + sc->outside_extra == 0)
        goto out;
    m->measures[MEASURE_POC_PROGRAMS] = 1;
    m->measures[MEASURE_POC_PROJECT_CALLS] = (double)(sc->outside.n + sc->outside_extra);
    if (sc->outside.n + sc->outside_extra == 0)
        r = poc_evidence(m, sc);
out:
    free(sc);
    return r;
}
