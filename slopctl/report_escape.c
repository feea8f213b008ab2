/*
 * report_escape.c - HTML escaping of mail text for the report. The output
 * is always valid UTF-8 and never holds a markup character of its own.
 */
#include <string.h>

#include "report_escape.h"
#include "utf8.h"

static const char replacement[] = "\xEF\xBF\xBD"; /* U+FFFD */

/* U+202A..U+202E (embeddings, overrides) and U+2066..U+2069 (isolates),
 * and U+200E/U+200F, the marks: E2 80 AA..AE, E2 81 A6..A9, E2 80 8E..8F. */
static bool
is_bidi_control(const unsigned char *p, size_t n)
{
    if (n != 3 || p[0] != 0xE2)
        return false;
    if (p[1] == 0x80)
        return (p[2] >= 0xAA && p[2] <= 0xAE) || p[2] == 0x8E || p[2] == 0x8F;
    return p[1] == 0x81 && p[2] >= 0xA6 && p[2] <= 0xA9;
}

void
report_escape(FILE *f, const char *s, size_t cap, bool keep_newlines)
{
    const unsigned char *p = (const unsigned char *)s, *end, *run;
    size_t len, n;

    if (s == NULL)
        return;
    len = strnlen(s, cap + 1);
    len = utf8_cut(s, len, cap);
    end = p + len;
    run = p;
    while (p < end) {
        unsigned char c = *p;
        const char *rep = NULL;

        n = 1;
        if (c >= 0x80) {
            /* A character the cut at end would split is invalid here. */
            n = utf8_seq_len(p, (size_t)(end - p));
            if (n == 0) {
                rep = replacement;
                n = 1;
            } else if ((c == 0xC2 && p[1] < 0xA0) || is_bidi_control(p, n)) {
                rep = replacement; /* the whole character: one U+FFFD */
            }
        } else if (c == '&') {
            rep = "&amp;";
        } else if (c == '<') {
            rep = "&lt;";
        } else if (c == '>') {
            rep = "&gt;";
        } else if (c == '"') {
            rep = "&quot;";
        } else if (c == '\'') {
            rep = "&#39;";
        } else if (c == '\t' || c == '\r' || (c == '\n' && !keep_newlines)) {
            rep = " ";
        } else if ((c < 0x20 && c != '\n') || c == 0x7F) {
            rep = replacement;
        }
        if (rep == NULL) {
            p += n;
            continue;
        }
        fwrite(run, 1, (size_t)(p - run), f);
        fputs(rep, f);
        p += n;
        run = p;
    }
    fwrite(run, 1, (size_t)(p - run), f);
    if (strnlen(s, cap + 1) > cap)
        fputs("\xE2\x80\xA6", f);
}
