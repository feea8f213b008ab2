/*
 * report_word.c - the words around a number of a report that say what
 * the number is: the word before it, and "CVSS" shortly before it.
 * Threading: no shared state.
 */
#include <stdbool.h>
#include <string.h>
#include <strings.h>

#include "report_parser.h"

/* The word just before position i (skipping spaces and ':'), lower case. */
size_t
report_word_before(const char *s, size_t i, char *out, size_t outsz)
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

bool
report_word_in(const char *w, const char *const *list, size_t n)
{
    /* The first byte first: this runs for every number of a report. */
    for (size_t i = 0; i < n; i++)
        if (w[0] == list[i][0] && strcmp(w, list[i]) == 0)
            return true;
    return false;
}

/* "CVSS" within the few bytes before position i (CVSS:3.1, CVSS version 3.1). */
bool
report_word_after_cvss(const char *s, size_t i)
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

bool
report_word_numbering(const char *w)
{
    return report_word_in(w, numbering_words, sizeof(numbering_words) / sizeof(numbering_words[0]));
}
