/*
 * message_kind.c - the words that make a mail a report, and the shape of
 * a mail that only asks a question.
 *
 * Threading: the only shared state is the report word index, built once
 * under pthread_once() and read-only after.
 */
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <strings.h>

#include "ascii.h"
#include "message_builder.h"
#include "message_kind.h"

/* The next place after i where a word can start: one past the first byte
 * at or after i that is not a letter or digit. The keyword scans below
 * only look at word starts, and skipping the rest of each word is the
 * bulk of their work. */
static size_t
next_word_start(const unsigned char *u, size_t i, size_t n)
{
    while (i < n && ascii_is_alnum(u[i]))
        i++;
    return i + 1;
}

bool
message_kind_reply_subject(const char *subject)
{
    struct span s;

    if (subject == NULL)
        return false;
    s.p = subject;
    s.len = strlen(subject);
    span_trim(&s);
    return starts_ci(s.p, s.len, "re:") || starts_ci(s.p, s.len, "aw:");
}

/*
 * Does the author's own text read like a bug or security report? One
 * strong indicator (a kernel splat, a sanitizer name, a CVE id, a fuzzer,
 * an explicit reproducer, a class of web or library flaw) is enough; weaker words that also turn up
 * in ordinary discussion ("crash", "security", "overflow") need two distinct ones. Matches are
 * case-insensitive and must start at a word boundary. The subject is scanned too: "[bug report]"
 * and "KASAN: ..." live there.
 */
static const char *const report_strong[] = {
    "kasan",
    "ubsan",
    "kcsan",
    "kmsan",
    "call trace",
    "oops:",
    "bug: ",
    "warning: cpu:",
    "kernel panic",
    "general protection fault",
    "use-after-free",
    "use after free",
    "null pointer dereference",
    "null-ptr-deref",
    "out-of-bounds",
    "double free",
    "double-free",
    "cve-",
    "syzbot",
    "syzkaller",
    "steps to reproduce",
    "reproducer",
    "vulnerability",
    "vulnerabilities",
    "exploit",
    "addresssanitizer",
    "privilege escalation",
    "proof of concept",
    "bug report",
    "[bug",
    "kernel bug at",
    "static checker warning",
    /* The classes web and library advisories name. */
    "cross-site",
    "xss",
    "csrf",
    "ssrf",
    "sql injection",
    "command injection",
    "path traversal",
    "directory traversal",
    "request smuggling",
    "prototype pollution",
    "open redirect",
    "remote code execution",
    "information disclosure",
};
static const char *const report_weak[] = {
    "crash",
    "panic",
    "overflow",
    "security",
    "bug",
    "hang",
    "deadlock",
    "leak",
    "race",
    "reproduce",
    "regression",
    "corruption",
    "lockup",
    "backtrace",
    "stack trace",
    "segfault",
    "denial of service",
    /* What web and library reports say where a kernel report names a
     * crash: "an attacker can ...", "the allowlist is bypassed". */
    "attacker",
    "bypass",
};

#define MESSAGE_N_STRONG (sizeof(report_strong) / sizeof(report_strong[0]))
#define MESSAGE_N_WEAK (sizeof(report_weak) / sizeof(report_weak[0]))

/* Words of both lists that say what a mail is about, not what went
 * wrong: "do you run a bounty for security bugs?" names no problem. A
 * question counts only its other words (message_kind_asks_only()). */
static const char *const report_topic[] = {
    "cve-", "vulnerability", "vulnerabilities", "exploit", "bug report", "[bug", "security", "bug",
};

/* Per byte, the words (strong ones in the low bits, weak ones above)
 * whose first, and whose second, byte it is: one AND leaves the few
 * words worth comparing at a position. Built once (report_index_init())
 * and only read after that. */
struct report_index {
    uint64_t by_first[256], by_second[256];
    uint64_t topic; /* the bits of report_topic[]'s words */
};
static struct report_index report_ix;
static pthread_once_t report_ix_once = PTHREAD_ONCE_INIT;

static void
report_index_init(void)
{
    struct report_index *ix = &report_ix;

    _Static_assert(MESSAGE_N_WEAK <= 32, "weak_seen has a bit per word");
    _Static_assert(MESSAGE_N_STRONG + MESSAGE_N_WEAK <= 64, "a word mask has a bit per word");
    for (size_t k = 0; k < MESSAGE_N_STRONG + MESSAGE_N_WEAK; k++) {
        const char *w = k < MESSAGE_N_STRONG ? report_strong[k] : report_weak[k - MESSAGE_N_STRONG];

        ix->by_first[(unsigned char)w[0]] |= (uint64_t)1 << k;
        ix->by_second[(unsigned char)w[1]] |= (uint64_t)1 << k;
        for (size_t t = 0; t < sizeof(report_topic) / sizeof(report_topic[0]); t++)
            if (strcmp(w, report_topic[t]) == 0)
                ix->topic |= (uint64_t)1 << k;
    }
}

/* A strong word, or `need` different weak ones; the words of the mask
 * skip do not count. */
static bool
looks_like_report(const struct report_index *ix, const char *text, size_t len, int need,
                  uint64_t skip)
{
    uint32_t weak_seen = 0;

    /* Words must start at a word boundary: only those positions count. */
    for (size_t i = 0; i + 1 < len; i = next_word_start((const unsigned char *)text, i, len)) {
        unsigned char c = (unsigned char)text[i], c2;
        uint64_t cand;

        if (c >= 'A' && c <= 'Z')
            c = (unsigned char)(c - 'A' + 'a');
        if (ix->by_first[c] == 0)
            continue;
        /* Every word is at least two bytes long. */
        c2 = (unsigned char)text[i + 1];
        if (c2 >= 'A' && c2 <= 'Z')
            c2 = (unsigned char)(c2 - 'A' + 'a');
        for (cand = ix->by_first[c] & ix->by_second[c2] & ~skip; cand != 0; cand &= cand - 1) {
            size_t k = (size_t)__builtin_ctzll(cand);

            if (k < MESSAGE_N_STRONG) {
                if (starts_ci(text + i, len - i, report_strong[k]))
                    return true;
            } else if (starts_ci(text + i, len - i, report_weak[k - MESSAGE_N_STRONG])) {
                weak_seen |= 1u << (k - MESSAGE_N_STRONG);
                if (__builtin_popcount(weak_seen) >= need)
                    return true;
            }
        }
    }
    return __builtin_popcount(weak_seen) >= need;
}

/* Each text on its own, as looks_like_report() reads it; problem_only
 * skips the topic words (report_topic[]). */
bool
message_kind_reads_like_report(const char *subject, const struct textbuf *own,
                               const struct textbuf *attached, int need, bool problem_only)
{
    uint64_t skip;

    if (need == 0)
        return true;
    pthread_once(&report_ix_once, report_index_init);
    skip = problem_only ? report_ix.topic : 0;
    return (subject != NULL &&
            looks_like_report(&report_ix, subject, strlen(subject), need, skip)) ||
           looks_like_report(&report_ix, textbuf_str(own), own->len, need, skip) ||
           looks_like_report(&report_ix, textbuf_str(attached), attached->len, need, skip);
}

/* Words of a text that asks_only() still takes for a short question. */
#define MESSAGE_QUESTION_MAX_WORDS 150

/*
 * Whether the text only asks: it has a question, and no sentence of four
 * words or more ends in '.', '!' or ':' (a statement, or the lead-in of
 * something shown). Greetings, thanks and a sign-off ("Hello,", "Thanks,
 * Ana") end in none of them and are left out. A long text is not a
 * quick question, whatever its punctuation.
 */
bool
message_kind_asks_only(const char *s, size_t n)
{
    size_t words = 0, total = 0, questions = 0;
    bool in_word = false;

    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        bool at_end = i + 1 == n || s[i + 1] == ' ' || s[i + 1] == '\t' || s[i + 1] == '\n' ||
                      s[i + 1] == '\r';

        if (ascii_is_alnum(c) || c >= 0x80 || c == '\'' || c == '-') {
            if (!in_word && ++total > MESSAGE_QUESTION_MAX_WORDS)
                return false;
            words += !in_word;
            in_word = true;
            continue;
        }
        in_word = false;
        if (c == '?' && at_end) {
            questions += words > 0;
            words = 0;
        } else if ((c == '.' || c == '!' || c == ':') && at_end) {
            if (words >= 4)
                return false;
            words = 0;
        }
    }
    return questions > 0;
}
