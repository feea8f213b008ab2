/*
 * message_disclosure.c - find a stated AI origin in a mail's text
 * (message_disclosure.h). Threading: no shared state.
 */
#include <stdbool.h>
#include <string.h>
#include <strings.h>

#include "ascii.h"
#include "message_builder.h"
#include "message_disclosure.h"

/* Case-insensitive search of needle in s[0..n); NULL when absent. */
static const char *
find_ci(const char *s, size_t n, const char *needle)
{
    size_t k = strlen(needle);
    const char *last;
    char lo, up;

    if (k == 0 || n < k)
        return NULL;
    lo = (char)(needle[0] >= 'A' && needle[0] <= 'Z' ? needle[0] - 'A' + 'a' : needle[0]);
    up = (char)(lo >= 'a' && lo <= 'z' ? lo - 'a' + 'A' : lo);
    last = s + n - k;
    for (const char *p = s; p <= last; p++) {
        /* A first byte without case ("-----Original"): memchr() finds
         * its candidates. */
        if (lo == up && (p = memchr(p, lo, (size_t)(last - p) + 1)) == NULL)
            return NULL;
        if ((*p == lo || *p == up) && strncasecmp(p, needle, k) == 0)
            return p;
    }
    return NULL;
}

/* Like find_ci(), but the match must not start inside a word. */
static const char *
find_word_ci(const char *s, size_t n, const char *needle)
{
    const char *p = s;

    while ((p = find_ci(p, n - (size_t)(p - s), needle)) != NULL) {
        if (p == s || !ascii_is_alnum((unsigned char)p[-1]))
            return p;
        p++;
    }
    return NULL;
}

static bool
word_at_ci(const char *s, size_t n, const char *w)
{
    size_t k = strlen(w);

    return n >= k && strncasecmp(s, w, k) == 0 && (n == k || !ascii_is_alnum((unsigned char)s[k]));
}

/* s[0..n) names an AI tool: ChatGPT, Claude, ..., or "(a|an) (AI|LLM)". */
static bool
names_ai(const char *s, size_t n)
{
    static const char *const names[] = {"chatgpt", "claude", "copilot", "gemini", "gpt-", "ai",
                                        "llm",     "an ai",  "an llm",  "a llm",  "a ai"};

    while (n > 0 && (*s == ' ' || *s == '[' || *s == '(')) {
        s++;
        n--;
    }
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        if (names[i][strlen(names[i]) - 1] == '-' ? starts_ci(s, n, names[i])
                                                  : word_at_ci(s, n, names[i]))
            return true;
    }
    return false;
}

/* A co-author trailer naming an AI product; "AI" alone could be a name. */
static bool
names_ai_tool(const char *s, size_t n)
{
    static const char *const tools[] = {"chatgpt", "claude", "copilot", "gemini", "gpt-"};

    while (n > 0 && *s == ' ') {
        s++;
        n--;
    }
    for (size_t i = 0; i < sizeof(tools) / sizeof(tools[0]); i++)
        if (starts_ci(s, n, tools[i]))
            return true;
    return false;
}

/*
 * Whether line s (trimmed) discloses an AI origin: an Assisted-by:/
 * Generated-by:/AI-assisted-by: trailer, a Co-authored-by: or
 * Co-developed-by: naming an AI tool, "generated with/by/using <tool>" or
 * "I used (an) AI".
 */
static bool
line_discloses(struct span s)
{
    static const char *const verbs[] = {"with", "by", "using"};
    const char *p;

    span_trim(&s);
    if (starts_ci(s.p, s.len, "assisted-by:") || starts_ci(s.p, s.len, "generated-by:") ||
        starts_ci(s.p, s.len, "ai-assisted-by:"))
        return true;
    if ((starts_ci(s.p, s.len, "co-authored-by:") && names_ai_tool(s.p + 15, s.len - 15)) ||
        (starts_ci(s.p, s.len, "co-developed-by:") && names_ai_tool(s.p + 16, s.len - 16)))
        return true;
    for (p = s.p; (p = find_word_ci(p, s.len - (size_t)(p - s.p), "generated ")) != NULL;) {
        const char *q = p + 10;
        size_t rest = s.len - (size_t)(q - s.p);

        for (size_t v = 0; v < 3; v++) {
            size_t k = strlen(verbs[v]);

            if (word_at_ci(q, rest, verbs[v]) && names_ai(q + k, rest - k))
                return true;
        }
        p = q;
    }
    if ((p = find_word_ci(s.p, s.len, "i used ")) != NULL) {
        const char *q = p + 7;
        size_t rest = s.len - (size_t)(q - s.p);

        if (word_at_ci(q, rest, "ai") || word_at_ci(q, rest, "an ai"))
            return true;
    }
    return false;
}

/*
 * A disclosed AI origin on any line of text[0..len) (line_discloses()).
 * Each way to disclose needs one of "assisted-by:", "generated",
 * "co-authored-by:", "co-developed-by:" or "i used " (any case) in its
 * line, so only lines holding one are read in full: most mail has none,
 * and "generated" alone is common in patches. Each of those words has
 * "ed" at a known offset: one pass finds each "ed" (any case), sixteen
 * bytes a compare (ascii_find_pair_ci()), where a memchr() per 'd' or
 * 'D' stopped every twenty-odd bytes of English.
 */
bool
message_disclosure_find(const char *text, size_t len)
{
    static const struct {
        const char *word;
        size_t d; /* offset of the 'd' of its "ed" */
    } words[] = {
        {"assisted-by:", 7},      {"generated", 8}, {"co-authored-by:", 10},
        {"co-developed-by:", 11}, {"i used ", 5},
    };
    const char *e = text + len;
    size_t i = 0;

    /* A pair at i ends at text[i + 1]: the last starts at len - 2. */
    while (len >= 2 && (i = ascii_find_pair_ci(text, i, len - 1, 'e', 'd')) < len - 1) {
        const char *p = text + i + 1, *start = p, *nl;
        bool found = false;

        i++;
        for (size_t k = 0; k < sizeof(words) / sizeof(words[0]) && !found; k++) {
            const char *w = p - words[k].d;

            found = (size_t)(p - text) >= words[k].d && (*w | 0x20) == words[k].word[0] &&
                    starts_ci(w, (size_t)(e - w), words[k].word);
        }
        if (!found)
            continue;
        while (start > text && start[-1] != '\n')
            start--;
        nl = memchr(p, '\n', (size_t)(e - p));
        if (line_discloses((struct span){start, nl ? (size_t)(nl - start) : (size_t)(e - start)}))
            return true;
        if (nl == NULL)
            break;
        /* The rest of this line was just read. */
        i = (size_t)(nl - text);
    }
    return false;
}
