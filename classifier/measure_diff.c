/*
 * measure_diff.c - the measures of a patch's added lines: code and
 * comment lines, comments that restate the statement under them, and
 * comment-heavy blocks over one or two statements.
 *
 * It reads the added and comment regions and the hunks the patch parser
 * built; nothing is allocated. Threading: no shared state.
 */
#include <ctype.h>
#include <stdbool.h>
#include <string.h>

#include "ascii.h"
#include "measure_diff.h"
#include "measure_text.h"
#include "message.h"

static const char *const stop_words[] = {
    "the",  "a",     "an",   "to",    "of",   "if",   "is",   "this", "we",  "and", "for",
    "it",   "in",    "on",   "be",    "that", "with", "as",   "by",   "at",  "or",  "are",
    "from", "so",    "then", "now",   "here", "its",  "into", "will", "our", "has", "have",
    "was",  "there", "when", "which", "can",  "do",   "does", "not",  "all", "any", "up",
};

static bool
is_stop_word(const char *w, size_t n)
{
    for (size_t k = 0; k < sizeof(stop_words) / sizeof(stop_words[0]); k++)
        if (stop_words[k][0] == w[0] && strlen(stop_words[k]) == n &&
            memcmp(stop_words[k], w, n) == 0)
            return true;
    return false;
}

#define MAX_TOKENS 48
#define TOKEN_LEN 32

struct tokens {
    char w[MAX_TOKENS][TOKEN_LEN];
    size_t n;
};

static void
tokens_add(struct tokens *tk, const char *p, size_t len)
{
    if (len == 0 || tk->n >= MAX_TOKENS)
        return;
    if (len >= TOKEN_LEN)
        len = TOKEN_LEN - 1;
    for (size_t i = 0; i < len; i++)
        tk->w[tk->n][i] = (char)tolower((unsigned char)p[i]);
    tk->w[tk->n][len] = '\0';
    if (is_stop_word(tk->w[tk->n], len))
        return;
    tk->n++;
}

/* Identifier parts: snake_case and camelCase split, lower-cased. */
static void
tokenize(struct tokens *tk, const char *p, size_t len)
{
    size_t i = 0;

    while (i < len) {
        size_t start;

        while (i < len && !isalnum((unsigned char)p[i]))
            i++;
        start = i;
        while (i < len && isalnum((unsigned char)p[i])) {
            if (i > start && isupper((unsigned char)p[i]) && islower((unsigned char)p[i - 1])) {
                tokens_add(tk, p + start, i - start);
                start = i;
            }
            i++;
        }
        tokens_add(tk, p + start, i - start);
    }
}

/* What operators say in words, so "increment the counter" matches
 * "counter++". */
static void
tokenize_code(struct tokens *tk, const char *p, size_t len)
{
    char code[512];
    size_t n = 0;
    bool in_str = false;

    /* string contents (a log message) are not what the code does */
    for (size_t i = 0; i < len && n < sizeof(code); i++) {
        if (p[i] == '"' && (i == 0 || p[i - 1] != '\\'))
            in_str = !in_str;
        else if (!in_str)
            code[n++] = p[i];
    }
    tokenize(tk, code, n);
    if (memmem(p, len, "++", 2) != NULL)
        tokens_add(tk, "increment", 9);
    if (memmem(p, len, "--", 2) != NULL)
        tokens_add(tk, "decrement", 9);
    if (memmem(p, len, "if (", 4) != NULL || memmem(p, len, "if(", 3) != NULL)
        tokens_add(tk, "check", 5);
    if (memmem(p, len, "NULL", 4) != NULL || memmem(p, len, "(!", 2) != NULL)
        tokens_add(tk, "null", 4);
    for (size_t i = 0; i < len; i++) {
        if (p[i] == '=' && (i == 0 || strchr("=!<>+-*/&|^%", p[i - 1]) == NULL) &&
            (i + 1 == len || p[i + 1] != '=')) {
            tokens_add(tk, "set", 3);
            tokens_add(tk, "assign", 6);
            break;
        }
    }
}

static bool
suffix_of(const char *s, size_t sl, const char *suf, size_t fl)
{
    return sl >= fl && memcmp(s + sl - fl, suf, fl) == 0;
}

/* "buf" matches "buffer", "free" matches "kfree", "locks" matches "lock". */
static bool
word_matches(const char *cw, const char *code)
{
    size_t cl = strlen(cw), kl = strlen(code);

    if (cl == kl && memcmp(cw, code, cl) == 0)
        return true;
    if (kl >= 3 && kl < cl && memcmp(cw, code, kl) == 0)
        return true;
    if (cl >= 4 && cl < kl && memcmp(cw, code, cl) == 0)
        return true;
    if (cl >= 4 && suffix_of(code, kl, cw, cl))
        return true;
    return cl > 3 && cw[cl - 1] == 's' && cl - 1 == kl && memcmp(cw, code, kl) == 0;
}

static bool
comment_restates(const char *comment, size_t clen, const char *code, size_t klen)
{
    struct tokens cw = {0}, kw = {0};
    size_t hit = 0;

    tokenize(&cw, comment, clen);
    tokenize_code(&kw, code, klen);
    if (cw.n < 2)
        return false;
    for (size_t i = 0; i < cw.n; i++) {
        for (size_t j = 0; j < kw.n; j++) {
            if (word_matches(cw.w[i], kw.w[j])) {
                hit++;
                break;
            }
        }
    }
    return hit * 10 >= cw.n * 6;
}

/* A whole-line C comment: a "//" line, or a block comment opened and
 * closed on the same line. */
static bool
single_line_comment(const char *p, size_t len, const char **ret_t, size_t *ret_tl)
{
    const char *t = p;
    size_t tl = len;

    ascii_trim(&t, &tl);
    if (tl >= 2 && t[0] == '/' && t[1] == '/') {
        *ret_t = t + 2;
        *ret_tl = tl - 2;
        return true;
    }
    if (tl >= 4 && t[0] == '/' && t[1] == '*' && t[tl - 2] == '*' && t[tl - 1] == '/' &&
        memmem(t + 2, tl - 4, "*/", 2) == NULL) {
        *ret_t = t + 2;
        *ret_tl = tl - 4;
        return true;
    }
    return false;
}

static bool
is_code_line(const char *p, size_t len)
{
    const char *t = p;
    size_t tl = len;

    ascii_trim(&t, &tl);
    if (tl == 0 || t[0] == '*' || measure_text_starts(t, tl, "/*") ||
        measure_text_starts(t, tl, "//"))
        return false;
    /* a lone brace says nothing a comment could repeat */
    return !(tl == 1 && (t[0] == '{' || t[0] == '}'));
}

/*
 * Declarations and definitions ("spinlock_t tx_lock;", "struct foo {",
 * "#define X", "static int f(...)") are what kernel comments label; only
 * statements are compared with the comment above them.
 */
static bool
is_statement(const char *p, size_t len)
{
    static const char *const decl[] = {"#",        "struct ", "static ", "enum ",     "union ",
                                       "typedef ", "extern ", "const ",  "unsigned ", "void ",
                                       "int ",     "u8 ",     "u16 ",    "u32 ",      "u64 ",
                                       "bool ",    "char ",   "long "};
    const char *t = p;
    size_t tl = len;

    ascii_trim(&t, &tl);
    for (size_t k = 0; k < sizeof(decl) / sizeof(decl[0]); k++)
        if (measure_text_starts(t, tl, decl[k]))
            return false;
    /* "type name;" or "type name[N];" */
    if (tl > 0 && t[tl - 1] == ';' && memchr(t, '(', tl) == NULL && memchr(t, '=', tl) == NULL &&
        memchr(t, ' ', tl) != NULL && !measure_text_starts(t, tl, "return") &&
        !measure_text_starts(t, tl, "goto") && !measure_text_starts(t, tl, "break") &&
        !measure_text_starts(t, tl, "continue"))
        return false;
    return true;
}

/*
 * A run of added C lines: a comment block, then the statements it sits
 * on. A block of three or more comment lines over one or two statements
 * that end the run is prose explaining a small change in place, where
 * kernel style wants the reason in the changelog. Declarations, kernel-doc
 * over a definition and lone braces do not count as statements.
 */
struct comment_run {
    size_t comment; /* comment lines of the block */
    size_t stmts;   /* statements after it */
    bool open;      /* code is being counted after a block */
};

static void
comment_run_end(struct comment_run *cr, struct measure_diff *st)
{
    if (cr->open && cr->comment >= 3 && cr->stmts >= 1 && cr->stmts <= 2)
        st->heavy++;
    *cr = (struct comment_run){0};
}

static void
comment_run_line(struct comment_run *cr, struct measure_diff *st, bool is_comment, const char *p,
                 size_t len)
{
    if (is_comment) {
        if (cr->open)
            comment_run_end(cr, st);
        cr->comment++;
        return;
    }
    if (measure_text_blank(p, len)) {
        comment_run_end(cr, st);
        return;
    }
    if (!is_code_line(p, len))
        return;
    if (!cr->open) {
        if (cr->comment == 0 || !is_statement(p, len)) {
            *cr = (struct comment_run){0};
            return;
        }
        cr->open = true;
    }
    cr->stmts++;
}

/* A one-line comment on the added C statement right after it that says
 * what the statement does ("increment the counter" over "counter++"). */
static bool
restates_next(const struct region *add, size_t i, size_t end, const char *p, size_t len)
{
    const char *ct, *np;
    size_t ctl, nlen;

    if (i + 1 >= end || add->lines[i + 1].line != add->lines[i].line + 1 ||
        !single_line_comment(p, len, &ct, &ctl))
        return false;
    region_line_text(add, i + 1, &np, &nlen);
    return is_code_line(np, nlen) && is_statement(np, nlen) && comment_restates(ct, ctl, np, nlen);
}

/* The added lines of one hunk; *ci walks the comment lines, which come
 * in the same order as the added lines. */
static void
hunk_measure(struct measure_diff *st, const struct message *m, const struct patch_hunk *hk,
             size_t *ci)
{
    const struct region *add = &m->regions[REGION_ADDED];
    const struct region *com = &m->regions[REGION_COMMENTS];
    enum file_lang lang = hk->file < m->n_files ? m->files[hk->file].lang : FILE_LANG_OTHER;
    size_t end = hk->added_first + hk->added_count;
    struct comment_run cr = {0};

    if (end > add->n_lines)
        end = add->n_lines;
    for (size_t i = hk->added_first; i < end; i++) {
        const struct region_line *al = &add->lines[i];
        const char *p;
        size_t len;
        bool is_comment;

        region_line_text(add, i, &p, &len);
        is_comment = com->lines != NULL && *ci < com->n_lines && com->lines[*ci].file == al->file &&
                     com->lines[*ci].line == al->line;
        if (lang == FILE_LANG_C) {
            /* context between two added lines ends a run */
            if (i > hk->added_first && add->lines[i - 1].line + 1 != al->line)
                comment_run_end(&cr, st);
            comment_run_line(&cr, st, is_comment, p, len);
        }
        if (is_comment) {
            (*ci)++;
            st->restating += lang == FILE_LANG_C && restates_next(add, i, end, p, len);
            continue;
        }
        if (lang != FILE_LANG_RST && !measure_text_blank(p, len))
            st->code++;
    }
    comment_run_end(&cr, st);
}

void
measure_diff_compute(struct measure_diff *st, const struct message *m)
{
    const struct region *add = &m->regions[REGION_ADDED];
    const struct region *com = &m->regions[REGION_COMMENTS];
    size_t ci = 0;

    st->comment = com->lines != NULL ? com->n_lines : 0;
    if (add->lines == NULL || add->text == NULL)
        return;
    for (size_t h = 0; h < m->n_hunks; h++)
        hunk_measure(st, m, &m->hunks[h], &ci);
}
