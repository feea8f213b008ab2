/*
 * mime_html.c - the text of an HTML part, as a reader of the mail sees
 * it: tags dropped, block-level tags turned into line breaks, comments,
 * declarations and the content of script and style left out, character
 * references (named, decimal and hexadecimal) decoded to UTF-8.
 *
 * It is not an HTML parser: it reads the byte stream once, left to
 * right, and never builds a tree. What it must get right is what a rule
 * reads: no markup or hidden text in the output, and the characters a
 * browser would show for the references mail uses. A quoted attribute
 * value may hold '>', a comment may hold tags, and an unterminated
 * construct ends the text, as in a browser. Input is valid UTF-8 (the
 * caller converts first); the output stays valid UTF-8. Sizes: the output
 * is never longer than the input plus one byte per reference (the longest
 * reference's text is shorter than the reference). No state; thread-safe.
 */
#include <stdbool.h>
#include <string.h>
#include <strings.h>

#include "ascii.h"
#include "mime_html.h"
#include "textbuf.h"

#define HTML_NAME_MAX 16u /* bytes of a tag name kept for lookup */
#define HTML_REF_MAX 12u  /* bytes of a reference's name or digits */
/* A named reference to an invisible character (soft hyphen, zero-width
 * ones): left out, so that a word split by one reads as a word. */
#define HTML_DROP 0xffffffffu

static bool
is_alpha(char c)
{
    return ascii_is_alnum((unsigned char)c) && !ascii_is_digit((unsigned char)c);
}

/* Whether '<' followed by c opens markup; "a < b" and "<3" are text. */
static bool
starts_markup(char c)
{
    return is_alpha(c) || c == '/' || c == '!' || c == '?';
}

/* Tags whose start or end breaks the line in a rendered mail. */
static bool
is_block(const char *name)
{
    static const char *const blocks[] = {
        "address", "article",  "aside",  "blockquote", "br",    "dd", "div",  "dl",
        "dt",      "fieldset", "figure", "footer",     "form",  "h1", "h2",   "h3",
        "h4",      "h5",       "h6",     "header",     "hr",    "li", "main", "nav",
        "ol",      "p",        "pre",    "section",    "table", "tr", "ul",   "title",
    };

    for (size_t i = 0; i < sizeof(blocks) / sizeof(blocks[0]); i++)
        if (strcmp(name, blocks[i]) == 0)
            return true;
    return false;
}

/* Offset just past the first occurrence of lit (ASCII case ignored) in
 * s[i..n), or n when there is none. */
static size_t
past(const char *s, size_t n, size_t i, const char *lit)
{
    size_t m = strlen(lit);

    for (; i + m <= n; i++)
        if (strncasecmp(s + i, lit, m) == 0)
            return i + m;
    return n;
}

/* Offset just past the '>' that closes the tag whose name ends at s[i],
 * stepping over quoted attribute values; n when it is not closed. */
static size_t
tag_end(const char *s, size_t n, size_t i)
{
    char quote = 0;

    for (; i < n; i++) {
        if (quote != 0) {
            if (s[i] == quote)
                quote = 0;
        } else if (s[i] == '"' || s[i] == '\'') {
            quote = s[i];
        } else if (s[i] == '>') {
            return i + 1;
        }
    }
    return n;
}

/* Skip the construct that starts with '<' at s[i] and write the line
 * break it stands for; *ret_i is where the text goes on. Returns 0 or
 * -ENOMEM. */
static int
markup(const char *s, size_t n, size_t i, struct textbuf *out, size_t *ret_i)
{
    char name[HTML_NAME_MAX];
    size_t j = i + 1, k = 0;
    bool closing = false;

    if (n - j >= 3 && memcmp(s + j, "!--", 3) == 0) {
        *ret_i = past(s, n, j + 3, "-->");
        return 0;
    }
    if (j < n && (s[j] == '!' || s[j] == '?')) {
        *ret_i = past(s, n, j, ">");
        return 0;
    }
    if (j < n && s[j] == '/') {
        closing = true;
        j++;
    }
    while (j < n && ascii_is_alnum((unsigned char)s[j])) {
        if (k < sizeof(name) - 1)
            name[k++] = (char)(s[j] | 0x20);
        j++;
    }
    name[k] = '\0';
    *ret_i = tag_end(s, n, j);
    if (!closing && (strcmp(name, "script") == 0 || strcmp(name, "style") == 0)) {
        char end[sizeof("</script")];

        /* Raw text: only its own end tag closes it. */
        (void)strcpy(end, "</");
        (void)strcat(end, name);
        j = past(s, n, *ret_i, end);
        *ret_i = j < n ? tag_end(s, n, j) : n;
        return 0;
    }
    return is_block(name) ? textbuf_add(out, "\n", 1) : 0;
}

/* The UTF-8 bytes of code point cp into u; returns their count, 0 for
 * what a document may not hold (NUL, surrogates, past U+10FFFF). */
static size_t
utf8_put(unsigned long cp, char u[4])
{
    if (cp == 0 || (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
        return 0;
    if (cp < 0x80) {
        u[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        u[0] = (char)(0xc0 | (cp >> 6));
        u[1] = (char)(0x80 | (cp & 0x3f));
        return 2;
    }
    if (cp < 0x10000) {
        u[0] = (char)(0xe0 | (cp >> 12));
        u[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
        u[2] = (char)(0x80 | (cp & 0x3f));
        return 3;
    }
    u[0] = (char)(0xf0 | (cp >> 18));
    u[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
    u[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
    u[3] = (char)(0x80 | (cp & 0x3f));
    return 4;
}

/* The code point of "#60;" or "#x3c;" at s[0..n) (after the '&'), and
 * the bytes it takes; 0 when it is not one. */
static size_t
numeric_ref(const char *s, size_t n, unsigned long *ret_cp)
{
    size_t j = 1, digits = 0;
    unsigned long cp = 0;
    bool hex;

    if (n < 3 || s[0] != '#')
        return 0;
    hex = s[1] == 'x' || s[1] == 'X';
    if (hex)
        j++;
    for (; j < n && digits < HTML_REF_MAX; j++, digits++) {
        char c = (char)(s[j] | 0x20);

        if (ascii_is_digit((unsigned char)s[j]))
            cp = cp * (hex ? 16 : 10) + (unsigned long)(s[j] - '0');
        else if (hex && c >= 'a' && c <= 'f')
            cp = cp * 16 + (unsigned long)(c - 'a' + 10);
        else
            break;
    }
    if (digits == 0 || j >= n || s[j] != ';')
        return 0;
    *ret_cp = cp;
    return j + 1;
}

/* The code point of a named reference at s[0..n) (after the '&'): the
 * ones mail writers emit, ';' required. */
static size_t
named_ref(const char *s, size_t n, unsigned long *ret_cp)
{
    static const struct {
        const char *name;
        unsigned long cp;
    } refs[] = {
        {"amp", '&'},        {"lt", '<'},        {"gt", '>'},         {"quot", '"'},
        {"apos", '\''},      {"nbsp", ' '},      {"ensp", ' '},       {"emsp", ' '},
        {"thinsp", ' '},     {"shy", HTML_DROP}, {"copy", 0xa9},      {"reg", 0xae},
        {"trade", 0x2122},   {"hellip", 0x2026}, {"ndash", 0x2013},   {"mdash", 0x2014},
        {"lsquo", 0x2018},   {"rsquo", 0x2019},  {"ldquo", 0x201c},   {"rdquo", 0x201d},
        {"laquo", 0xab},     {"raquo", 0xbb},    {"bull", 0x2022},    {"middot", 0xb7},
        {"deg", 0xb0},       {"euro", 0x20ac},   {"pound", 0xa3},     {"times", 0xd7},
        {"rarr", 0x2192},    {"larr", 0x2190},   {"zwsp", HTML_DROP}, {"zwj", HTML_DROP},
        {"zwnj", HTML_DROP},
    };
    size_t len = 0;

    while (len < n && len <= HTML_REF_MAX && ascii_is_alnum((unsigned char)s[len]))
        len++;
    if (len == 0 || len > HTML_REF_MAX || len >= n || s[len] != ';')
        return 0;
    for (size_t i = 0; i < sizeof(refs) / sizeof(refs[0]); i++) {
        if (strlen(refs[i].name) == len && memcmp(s, refs[i].name, len) == 0) {
            *ret_cp = refs[i].cp;
            return len + 1;
        }
    }
    return 0;
}

/* Decode the reference whose '&' is at s[i]; an unknown or malformed one
 * stays as it is written. *ret_i is where the text goes on. */
static int
reference(const char *s, size_t n, size_t i, struct textbuf *out, size_t *ret_i)
{
    unsigned long cp = 0;
    size_t used = numeric_ref(s + i + 1, n - i - 1, &cp);
    char u[4];
    size_t ul;

    if (used == 0)
        used = named_ref(s + i + 1, n - i - 1, &cp);
    if (used > 0 && cp == HTML_DROP) {
        *ret_i = i + 1 + used;
        return 0;
    }
    /* A reference to nothing a document may hold shows U+FFFD. */
    ul = used > 0 ? utf8_put(cp, u) : 0;
    if (used > 0 && ul == 0) {
        memcpy(u, "\xef\xbf\xbd", 3);
        ul = 3;
    }
    if (used == 0) {
        *ret_i = i + 1;
        return textbuf_add(out, "&", 1);
    }
    *ret_i = i + 1 + used;
    return textbuf_add(out, u, ul);
}

int
mime_html_to_text(const char *s, size_t n, struct textbuf *out)
{
    size_t i = 0;
    int r = 0;

    while (i < n && r == 0) {
        size_t run = i;

        if (s[i] == '<' && i + 1 < n && starts_markup(s[i + 1])) {
            r = markup(s, n, i, out, &i);
            continue;
        }
        if (s[i] == '&') {
            r = reference(s, n, i, out, &i);
            continue;
        }
        /* Text up to the next tag or reference goes in one piece. */
        while (run < n && (run == i || (s[run] != '<' && s[run] != '&')))
            run++;
        r = textbuf_add(out, s + i, run - i);
        i = run;
    }
    return r;
}
