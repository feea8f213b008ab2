/*
 * test_rule_prefilter.c - the literal prefilter and the split of patterns
 * into top-level alternatives.
 *
 * Table-driven cases pin what the analyser extracts (and where it must
 * give up); a randomized check then evaluates a rule set, with prefilter
 * and splits, over generated texts and compares every hit and its
 * evidence with what plain pcre2_match() of the whole pattern gives.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "message.h"
#include "rule.h"
#include "rule_set.h"

static const struct classifier_limits limits = {
    .match_limit = 1000000,
    .depth_limit = 100000,
};

#define MAX_EXPECT 8

/* Whether v holds exactly the strings of want (in any order). */
static void
assert_same_set(const struct strv *v, const char *const *want, const char *what)
{
    size_t n = 0;

    while (n < MAX_EXPECT && want[n] != NULL)
        n++;
    if (v->n != n)
        fail_msg("/%s/: %zu strings, expected %zu", what, v->n, n);
    for (size_t i = 0; i < n; i++) {
        bool found = false;

        for (size_t k = 0; k < v->n && !found; k++)
            found = strcmp(v->v[k], want[i]) == 0;
        if (!found)
            fail_msg("/%s/: \"%s\" missing", what, want[i]);
    }
}

static void
test_literals(void **state)
{
    static const struct {
        const char *pattern;
        uint32_t options;
        const char *want[MAX_EXPECT]; /* empty: no prefilter */
    } cases[] = {
        {"a(?:b|c)d", 0, {"abd", "acd"}},
        {"foo|bar", 0, {"foo", "bar"}},
        {"FOO", 0, {"foo"}},
        {"(?i)Foo", 0, {"foo"}},
        {"\\bCONFIG_[A-Z0-9_]+", 0, {"config_"}},
        {"\\x41bc", 0, {"abc"}},
        {"(?<!ab)cd", 0, {"cd"}},
        {"foo(?=bar)", 0, {"foo"}},
        {"foo\\d+bar", 0, {"foo"}},
        {"[Aa]bc", 0, {"abc"}},
        {"ab?c", 0, {"abc", "ac"}},
        /* Word boundaries and white space at the ends are tests around
         * a literal, not part of it. */
        {"\\bai\\b", 0, {"ai"}},
        {"x\\s+yz", 0, {"yz"}},
        {"(?:foo|ba)\\s", 0, {"foo", "ba"}},
        /* 0x01 stands for \b inside the analyser: never a literal byte. */
        {"\\x01ab", 0, {"ab"}},
        {"[\\x00-\\x02]bc", 0, {"bc"}},
        /* Give up: back references, quoting, x mode, a branch with no
         * literal, too short, nothing required. */
        {"(ab)\\1", 0, {NULL}},
        {"\\Qabc\\E", 0, {NULL}},
        {"abc", PCRE2_EXTENDED, {NULL}},
        {"foo|x", 0, {NULL}},
        {"foo|\\w+", 0, {NULL}},
        {"k", 0, {NULL}},
        {"\\bk\\b", 0, {NULL}},
        {"\\s+k\\s+", 0, {NULL}},
        {"(?:foo)?bar?", 0, {"ba"}},
        {"(?:foo)?b?", 0, {NULL}},
        {".*", 0, {NULL}},
    };
    (void)state;

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct strv v;

        assert_int_equal(rule_prefilter_parse_literals(cases[i].pattern, strlen(cases[i].pattern),
                                                       cases[i].options, &v),
                         0);
        assert_same_set(&v, cases[i].want, cases[i].pattern);
        strv_release(&v);
    }
}

static void
test_literal_sets(void **state)
{
    static const struct {
        const char *pattern;
        const char *want[RULE_PF_SETS][MAX_EXPECT]; /* in order of use */
    } cases[] = {
        {"foo\\s+bar", {{"foo"}, {"bar"}}},
        {"(?:ab|cd)\\s+(?:efg|hij)\\s+klm", {{"klm"}, {"efg", "hij"}, {"ab", "cd"}}},
        {"\\bfoo\\b[^\\n]*\\bfoo\\b", {{"foo"}}},
        {"abc\\d+x", {{"abc"}}},
        /* A top-level '|': one set for the whole. */
        {"foo\\s+bar|baz", {{"foo", "baz"}}},
        {"foo|x\\s+bar", {{"foo", "bar"}}},
        {"(?:foo)?x", {{NULL}}},
        /* \s+ joins its neighbours; the tests leave the literals. */
        {"\\bfoo\\s+of\\s+barbaz\\b", {{"barbaz"}, {"foo"}, {"of"}}},
        /* A repetition requires its least count of the atom in a row. */
        {"a:x{12,40}\\b", {{"xxxxxxxxxxxx"}, {"a:x"}}},
        {"a(?:bc|d){3,}e",
         {{"bcbcbc", "bcbcd", "bcdbc", "bcdd", "dbcbc", "dbcd", "ddbc", "ddd"},
          {"abc", "ad"},
          {"bce", "de"}}},
    };
    (void)state;

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct strv v[RULE_PF_SETS];
        size_t n = 0, want_n = 0;

        assert_int_equal(
            rule_prefilter_parse_sets(cases[i].pattern, strlen(cases[i].pattern), 0, v, &n), 0);
        while (want_n < RULE_PF_SETS && cases[i].want[want_n][0] != NULL)
            want_n++;
        if (n != want_n)
            fail_msg("/%s/: %zu sets, expected %zu", cases[i].pattern, n, want_n);
        for (size_t k = 0; k < n; k++)
            assert_same_set(&v[k], cases[i].want[k], cases[i].pattern);
        for (size_t k = 0; k < RULE_PF_SETS; k++)
            strv_release(&v[k]);
    }
}

/* rule_prefilter_parse_sets() of src, each set's strings joined by
 * ',' and the sets by ';', in the order given, into out. */
static void
sets_text(const char *src, char *out, size_t size)
{
    struct strv v[RULE_PF_SETS];
    size_t n = 0, len = 0;

    assert_int_equal(rule_prefilter_parse_sets(src, strlen(src), 0, v, &n), 0);
    out[0] = '\0';
    for (size_t k = 0; k < n; k++) {
        for (size_t i = 0; i < v[k].n; i++)
            len += (size_t)snprintf(out + len, size - len, "%s,", v[k].v[i]);
        len += (size_t)snprintf(out + len, size - len, ";");
        assert_true(len < size);
    }
    for (size_t k = 0; k < RULE_PF_SETS; k++)
        strv_release(&v[k]);
}

/* The analyser takes a run of plain characters in one go. With each
 * character in a group of its own, the same run goes the long way, one
 * atom at a time: the sets must be the same, in the same order, where a
 * run meets a quantifier and where its literal reaches PF_LIT_MAX (64)
 * bytes, past which a literal is cut into pieces. */
static void
test_plain_runs(void **state)
{
    static const struct {
        const char *head, *run, *tail;
    } cases[] = {
        {"", "Hello World", ""},
        {"", "abc", "+d"},
        {"", "abcd", "?ef"},
        {"", "abcd", "*ef"},
        {"", "abcd", "{2}ef"},
        {"", "abcd", "{,x}ef"},
        {"", "ab,c-d'e<f>", ""},
        {"(?:ab|cd)", "EFgh", ""},
        {"(?:ab|cd)", "efgh", "(?:ij|kl)mn"},
        {"\\b", "foo bar", "\\b"},
        {"x\\s+", "yz of", "\\s+abc"},
        {"[ab]", "cdef", ""},
        {"", "foo", "|barbaz|qux"},
        {"(?:", "foo", ")?barbaz"},
    };
    char run[80], wrapped[80 * 5 + 1], p[512], w[512], want[8192], got[8192];
    (void)state;

    /* Runs of 60 to 68 bytes: first, after a literal of one string, of
     * two and of six. */
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]) + 4 * 9; i++) {
        const char *head, *tail = "";
        size_t n, k = 0;

        if (i < sizeof(cases) / sizeof(cases[0])) {
            head = cases[i].head;
            snprintf(run, sizeof(run), "%s", cases[i].run);
            tail = cases[i].tail;
        } else {
            size_t j = i - sizeof(cases) / sizeof(cases[0]);

            head = j < 9 ? "" : j < 18 ? "\\dab" : j < 27 ? "(?:ab|cd)" : "x\\s+";
            n = 60 + j % 9;
            for (size_t c = 0; c < n; c++)
                run[c] = (char)('a' + c % 26);
            run[n] = '\0';
        }
        for (const char *c = run; *c != '\0'; c++)
            k += (size_t)snprintf(wrapped + k, sizeof(wrapped) - k, "(?:%c)", *c);
        snprintf(p, sizeof(p), "%s%s%s", head, run, tail);
        snprintf(w, sizeof(w), "%s%s%s", head, wrapped, tail);
        sets_text(w, want, sizeof(want));
        sets_text(p, got, sizeof(got));
        if (strcmp(got, want) != 0)
            fail_msg("/%s/: %s, but /%s/: %s", p, got, w, want);
    }
}

/* Sequences of sets: each string of one followed by each of the next,
 * and a literal that contains another of its set left out. */
static void
test_products(void **state)
{
    static const struct {
        const char *pattern;
        const char *want;
    } cases[] = {
        {"(?:ab|cd)(?:ef|gh)ij", "abefij,abghij,cdefij,cdghij,;"},
        {"(?:ab|cd)e(?:f|g)", "abef,abeg,cdef,cdeg,;"},
        {"(?:ab|abc)(?:d|cd)", "abd,abcd,abccd,;"},
        {"(?:ab|a)(?:bc|c)x", "abbcx,abcx,acx,;"},
        {"[ab]x[cd]y", "axcy,axdy,bxcy,bxdy,;"},
        /* Redundant strings: "xp0" holds "p0", and '0' and 'p' share a
         * bit of the byte masks. */
        {"xp0|p0|p0q", "p0,;"},
        {"foobar|oba|obaz", "oba,;"},
        {"abc|abc|xyz", "abc,xyz,;"},
        {"0p|p0", "0p,p0,;"},
    };
    char got[8192];
    (void)state;

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        sets_text(cases[i].pattern, got, sizeof(got));
        if (strcmp(got, cases[i].want) != 0)
            fail_msg("/%s/: %s, expected %s", cases[i].pattern, got, cases[i].want);
    }
}

static void
test_alternatives(void **state)
{
    static const struct {
        const char *pattern;
        uint32_t options;
        const char *want[MAX_EXPECT]; /* in order; empty: not split */
    } cases[] = {
        {"a|b(c|d)|e", 0, {"a", "b(c|d)", "e"}},
        {"[|]x|y[]|]", 0, {"[|]x", "y[]|]"}},
        {"[^]|]|z", 0, {"[^]|]", "z"}},
        /* "[." is a literal '[' when a ']' comes before any ".]". */
        {"a[[.]|b.]", 0, {"a[[.]", "b.]"}},
        {"[[:alpha:]|]+|z", 0, {"[[:alpha:]|]+", "z"}},
        {"\\|a|b", 0, {"\\|a", "b"}},
        {"(?i:ab)|c", 0, {"(?i:ab)", "c"}},
        {"(?<n>ab)c|de", 0, {"(?<n>ab)c", "de"}},
        {"(?<!x)a|(?=b)b", 0, {"(?<!x)a", "(?=b)b"}},
        {"a|", 0, {"a", ""}},
        /* Not split: one alternative, back references, subroutines,
         * \K, \G, verbs, conditionals, a top-level option setting, x
         * mode, quoting, comments, unbalanced text. */
        {"abc", 0, {NULL}},
        {"(a)|\\1", 0, {NULL}},
        {"(a)|\\g1", 0, {NULL}},
        {"(?<n>a)|\\k<n>", 0, {NULL}},
        {"(a)|(?1)", 0, {NULL}},
        {"(a)|(?R)", 0, {NULL}},
        {"a\\Kb|c", 0, {NULL}},
        {"\\Ga|b", 0, {NULL}},
        {"a(*COMMIT)b|c", 0, {NULL}},
        {"(?(1)a|b)|c", 0, {NULL}},
        {"(?|a|b)|c", 0, {NULL}},
        {"(?i)a|b", 0, {NULL}},
        {"a|b", PCRE2_EXTENDED, {NULL}},
        {"(?x: a | b )|c", 0, {NULL}},
        {"\\Qa|b\\E|c", 0, {NULL}},
        {"(?#a|b)c|d", 0, {NULL}},
        {"(a|b", 0, {NULL}},
        {"a)|b", 0, {NULL}},
    };
    (void)state;

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct strv v;
        size_t n = 0;

        assert_int_equal(rule_prefilter_split_alternatives(
                             cases[i].pattern, strlen(cases[i].pattern), cases[i].options, &v),
                         0);
        while (n < MAX_EXPECT && cases[i].want[n] != NULL)
            n++;
        if (v.n != n)
            fail_msg("/%s/: %zu alternatives, expected %zu", cases[i].pattern, v.n, n);
        for (size_t k = 0; k < n; k++)
            if (strcmp(v.v[k], cases[i].want[k]) != 0)
                fail_msg("/%s/: alternative %zu is \"%s\", expected \"%s\"", cases[i].pattern, k,
                         v.v[k], cases[i].want[k]);
        strv_release(&v);
    }
}

/* Randomized equivalence ---------------------------------------------- */

/* Patterns as written in a rule file (so '/' is "\/"), with their flags.
 * Several have alternatives without literals, ties between alternatives
 * at one start, and letters PCRE2 folds to non-ASCII characters. */
static const struct {
    const char *pattern;
    const char *flags;
} patterns[] = {
    {"\\bCONFIG_[A-Z0-9_]+|\\.config\\b|\\b(?:root|user)\\b|(?<![\\w-])--?[a-z][\\w-]{2,}=?", "i"},
    {"foo|bar|baz", ""},
    {"fo+|ba[rz]", ""},
    {"ab|abc", ""},
    {"abc|ab", ""},
    {"b|ab", ""},
    {"sk|ks", "i"},
    {"kelvin|\\bk\\b", "i"},
    {"^\\s*Assisted-by:\\s*\\S[^\\n]*|\\b(?:I|we)\\s+used\\s+(?:AI|LLM)\\b", "i"},
    {"x[^\\n]{0,5}y|y[^\\n]{0,5}x", ""},
    {"\\bint\\s+main\\s*\\(|^\\s*#include\\s*[<\"]", ""},
    {"(?i:user)s?|ROOT", ""},
    {"a(?=b)|b(?<=ab)", ""},
    {"[|]x|y[]|]", ""},
    {"(?<n>ab)c|de", ""},
    {"\\b(?<!\\bnot\\s)(?:root|admin)\\b|\\/proc\\/sys\\/", "i"},
    {"\\w+\\.config|--?[a-z]+", ""},
    {"\\bfoo\\b[^\\n]*\\bbar\\b", "i"},
    {"(?:ab|de)\\s*(?:root|user)[^\\n]{0,20}(?:baz|kelvin)", "i"},
    {"\\bai\\b|x\\s+of\\s+y|\\bsk\\b", "i"},
    {"(?:bytes?)\\s+of\\b|\\s+cd\\s+|\\b(?:ab|de)\\s|\\bof\\scd", ""},
    /* Literals sharing their first three bytes fill one bucket, sorted by
     * their first four: shorter and longer ones, and a fourth byte on
     * either side of the text's. */
    {"\\bcon\\b|confirm|contro|conf(?:ig)?_x|\\bco\\b", "i"},
    {"(?:conn|cona|config_x)\\d", "i"},
    {"\\bconb\\b", ""},
    /* A further set of two-byte literals is no table's but a check,
     * looked for a pair of bytes at a time: a letter in either case, a
     * digit or a dot as it is. */
    {"\\bfoo\\s+v?(?:2\\.6|3\\.\\d|4\\.\\d)|zz", "i"},
    {"(?:abc|conn)[^\\n]{0,9}(?:Ab|cD)|qq", ""},
    /* Literals of a set that share ten bytes or more are one entry, that
     * shared beginning, which keeps the test before it but not the one
     * after; those that share their bytes but not the test before them
     * are not. */
    {"\\blet me know if you (?:need|have) (?:more|further)\\b|let me kno(?:w|t)", "i"},
    {"\\bperformance is better|performance was (?:better|worse)\\s", "i"},
    /* Literals that share their first four or eight bytes, and ones of
     * exactly eight: an entry's head holds eight bytes, lowered eight at
     * a time, which must lower 'A'..'Z' and nothing around them ('@',
     * '[', '`', '{') or with its top bit set, as the bytewise lowering
     * does. */
    {"comment (?:that|with)|comments\\b|commentary|\\bcommit\\b", "i"},
    {"namespac|namespaced\\b", ""},
    {"\\[z@\\]|`\\{z|z@@z", "i"},
};

#define N_PATTERNS (sizeof(patterns) / sizeof(patterns[0]))

static const char *const tokens[] = {
    "comment that",
    "COMMENT WITH",
    "Comment tha",
    "comments",
    "commentsx",
    "Commentary",
    "commentar",
    "commit",
    "COMMITS",
    "comm\xc3\xa9nt",
    "COMMENT@",
    "comment[",
    "comment`{",
    "namespac",
    "Namespaced",
    "namespaced",
    "namespa",
    "[Z@]",
    "{z@]",
    "[z`]",
    "`{Z",
    "@{z",
    "Z@@Z",
    "z`@z",
    "let me know if you ",
    "Let Me Know If You Need More",
    "let me know if you needed more",
    "have",
    "further",
    "xlet me know",
    "performance is better",
    "xperformance is better",
    "performance was ",
    "worse",
    "worse\t",
    "CONFIG_FOO",
    ".config",
    "x.config",
    "root",
    "user",
    "USER",
    "Users",
    "--opt=",
    "-x",
    "-ab",
    "foo",
    "bar",
    "baz",
    "fooo",
    "sk",
    "\xc5\xbfk",
    "\xe2\x84\xaa",
    "kelvin",
    "k",
    "K",
    "ab",
    "abc",
    "b",
    "a",
    "Assisted-by: me",
    "assisted-by:",
    "I used AI",
    "we  used llm",
    "x",
    "y",
    "int main(",
    "#include <",
    "|",
    "]",
    "de",
    "not root",
    "admin",
    "/proc/sys/",
    " ",
    " ",
    " ",
    "\n",
    "\n",
    "\t",
    "\xc3\xa9",
    "\xe2\x80\x99",
    "ks",
    "ROOT",
    "ai",
    "said",
    "AI",
    "_ai",
    "of",
    "byte",
    "bytes",
    "cd",
    "\xc2\xa0",
    "\v",
    "\r",
    "s\xe2\x84\xaa",
    "of\vcd",
    "of\fcd",
    "con",
    "conn",
    "cona",
    "conb",
    "confirm",
    "contro",
    "CONFIG_X",
    "conf_x1",
    "co",
    "1",
    "2.6",
    "3.",
    "3.1",
    "4.x",
    "v4.2",
    "foo ",
    "FOO\t",
    "Ab",
    "aB",
    "CD",
    "cD",
    "zz",
    "qq",
};

/* Evidence as rule_eval.c writes it: control characters as spaces, cut
 * at a character boundary at RULE_EVIDENCE_MAX bytes (all text here is
 * valid UTF-8). */
static void
expected_evidence(const char *s, size_t n, char *out)
{
    size_t len = 0, i = 0;

    while (i < n) {
        unsigned char c = (unsigned char)s[i];
        size_t k = c < 0x80 ? 1 : c < 0xe0 ? 2 : c < 0xf0 ? 3 : 4;

        if (len + k > RULE_EVIDENCE_MAX)
            break;
        if (c < 0x20 || c == 0x7f)
            out[len] = ' ';
        else
            memcpy(out + len, s + i, k);
        len += k;
        i += k;
    }
    out[len] = '\0';
}

static void
result_clear(struct classifier_result *res)
{
    for (size_t i = 0; i < res->n_hits; i++) {
        free(res->hits[i].rule);
        free(res->hits[i].description);
        free(res->hits[i].doc);
        free(res->hits[i].evidence);
    }
    free(res->hits);
    free(res->matched);
    memset(res, 0, sizeof(*res));
}

static struct rule_set *
load_patterns(void)
{
    char dir[] = "/tmp/test_rule_prefilter.XXXXXX", path[64];
    struct rule_set *set = NULL;
    FILE *f;

    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof(path), "%s/t.rules", dir);
    f = fopen(path, "w");
    assert_non_null(f);
    /* The match rules have a gate that holds, which puts their patterns
     * in a patch mail's on-demand table (answered by heads first), and in
     * the other kinds' own tables. */
    for (size_t i = 0; i < N_PATTERNS; i++) {
        fprintf(f,
                "rule M%zu\n    describe m\n    score 1\n    match body /%s/%s\n"
                "    measure limit_hit == 0\n\n",
                i, patterns[i].pattern, patterns[i].flags);
        fprintf(f, "rule N%zu\n    describe n\n    score 1\n    nomatch body /%s/%s\n\n", i,
                patterns[i].pattern, patterns[i].flags);
    }
    assert_int_equal(fclose(f), 0);
    assert_int_equal(rule_set_load(dir, &limits, NULL, NULL, NULL, &set), 0);
    assert_int_equal(unlink(path), 0);
    assert_int_equal(rmdir(dir), 0);
    return set;
}

/* The whole pattern compiled the way rule_set.c compiles it, without any
 * prefilter or split. JIT too: PCRE2 10.42's JIT and interpreter differ
 * on \S, \D and \W against non-ASCII text under PCRE2_MATCH_INVALID_UTF
 * (PCRE2 issue #224), and this checks the split, not that. */
static pcre2_code *
compile_plain(size_t i)
{
    const char *p = patterns[i].pattern;
    char src[512];
    size_t n = 0;
    uint32_t options = RULE_PCRE2_OPTIONS;
    PCRE2_SIZE off;
    pcre2_code *code;
    int err;

    for (; *p != '\0' && n < sizeof(src) - 1; p++) {
        if (p[0] == '\\' && p[1] == '/')
            p++;
        src[n++] = *p;
    }
    if (strchr(patterns[i].flags, 'i') != NULL)
        options |= PCRE2_CASELESS;
    code = pcre2_compile((PCRE2_SPTR)src, n, options, &err, &off, NULL);
    assert_non_null(code);
    (void)pcre2_jit_compile(code, PCRE2_JIT_COMPLETE);
    return code;
}

/* Evaluate set on a message whose body is text[0..len) and compare every
 * hit and its evidence with plain pcre2_match(). Returns the patterns
 * that matched. */
static unsigned
check_text(const struct rule_set *set, pcre2_code *const *plain, pcre2_match_data *md,
           struct message *m, const char *text, size_t len)
{
    struct classifier_result res = {0};
    char ev[RULE_EVIDENCE_MAX + 1];
    size_t hit = 0;
    unsigned matched = 0;

    for (size_t i = 0; i < REGION__COUNT; i++) {
        m->regions[i].text = i == REGION_BODY ? strndup(text, len) : strdup("");
        assert_non_null(m->regions[i].text);
        m->regions[i].len = i == REGION_BODY ? len : 0;
    }
    assert_int_equal(rule_set_eval(set, m, NULL, 1000, &res), 0);

    for (size_t i = 0; i < N_PATTERNS; i++) {
        int rc = pcre2_match(plain[i], (PCRE2_SPTR)text, len, 0, 0, md, NULL);
        char name[16];

        snprintf(name, sizeof(name), "%c%zu", rc >= 0 ? 'M' : 'N', i);
        if (hit >= res.n_hits || strcmp(res.hits[hit].rule, name) != 0)
            fail_msg("/%s/ on \"%.*s\": expected hit %s, got %s", patterns[i].pattern, (int)len,
                     text, name, hit < res.n_hits ? res.hits[hit].rule : "none");
        if (rc >= 0) {
            PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);

            matched++;
            expected_evidence(text + ov[0], ov[1] - ov[0], ev);
            assert_non_null(res.hits[hit].evidence);
            if (strcmp(res.hits[hit].evidence, ev) != 0)
                fail_msg("/%s/ on \"%.*s\": evidence \"%s\", expected \"%s\"", patterns[i].pattern,
                         (int)len, text, res.hits[hit].evidence, ev);
        }
        hit++;
    }
    assert_int_equal(res.n_hits, hit);
    result_clear(&res);
    for (size_t i = 0; i < REGION__COUNT; i++)
        region_release(&m->regions[i]);
    return matched;
}

/* Every piece of a few texts: a literal at the very start or end, one
 * byte short of it, and the last two bytes (where only a two-byte literal
 * can start) must all be judged as PCRE2 judges them. Returns the
 * patterns that matched. */
static unsigned
check_cuts(const struct rule_set *set, pcre2_code *const *plain, pcre2_match_data *md)
{
    static const char *const texts[] = {
        "Configured: con conn1 cona2 conb CONFIG_X3 confirm contro co",
        "xconf_x9 AI sk of cd\x01con",
        "said ai,bytes of cd -ab root",
        "Let me know if you have more;xperformance was worse ",
    };
    unsigned matched = 0;

    for (size_t t = 0; t < sizeof(texts) / sizeof(texts[0]); t++) {
        size_t len = strlen(texts[t]);

        for (size_t start = 0; start <= len; start++) {
            for (size_t n = 0; start + n <= len; n++) {
                for (int patch = 0; patch < 2; patch++) {
                    struct message *m = calloc(1, sizeof(*m));

                    assert_non_null(m);
                    m->kind = patch ? CLASSIFIER_KIND_PATCH : CLASSIFIER_KIND_OTHER;
                    matched += check_text(set, plain, md, m, texts[t] + start, n);
                    free(m);
                }
            }
        }
    }
    return matched;
}

/* Every hit of the rules as PCRE2 gives it, on random texts and on every
 * piece of a few, with the scans on the path rule_prefilter_scan_vector() set. */
static void
check_equivalence(void)
{
    struct rule_set *set = load_patterns();
    pcre2_code *plain[N_PATTERNS];
    pcre2_match_data *md = pcre2_match_data_create(16, NULL);
    unsigned seed = 12345, matched = 0, split = 0;
    uint32_t jit_ok = 0;

    assert_non_null(md);
    if (pcre2_config(PCRE2_CONFIG_JIT, &jit_ok) < 0)
        jit_ok = 0;
    for (size_t i = 0; i < N_PATTERNS; i++)
        plain[i] = compile_plain(i);
    /* The check means little unless the set has split patterns. */
    for (size_t r = 0; r < set->n_rules; r++) {
        size_t n;

        const struct rule_pattern *whole = &set->rules[r].conds[0].pat[0];
        const struct rule_pattern *alt = rule_prefilter_alternatives_of(set, whole, &n);
        size_t jit = 0;

        /* A split pattern only ever runs one alternative at a time: its
         * alternatives have JIT code, the whole has none to spare. */
        assert_int_equal(pcre2_pattern_info(whole->code, PCRE2_INFO_JITSIZE, &jit), 0);
        if (alt != NULL) {
            assert_int_equal(jit, 0);
            for (size_t k = 0; k < n && jit_ok; k++) {
                assert_int_equal(pcre2_pattern_info(alt[k].code, PCRE2_INFO_JITSIZE, &jit), 0);
                assert_true(jit > 0);
            }
        } else if (jit_ok) {
            assert_true(jit > 0);
        }
        split += alt != NULL;
    }
    assert_true(split >= N_PATTERNS);

    for (unsigned round = 0; round < 3000; round++) {
        struct message *m = calloc(1, sizeof(*m));
        char text[2048];
        size_t len = 0, n_tokens;

        assert_non_null(m);
        m->kind = round % 2 ? CLASSIFIER_KIND_PATCH : CLASSIFIER_KIND_OTHER;
        n_tokens = 1 + rand_r(&seed) % 40;
        for (size_t t = 0; t < n_tokens; t++) {
            const char *tok = tokens[(size_t)rand_r(&seed) % (sizeof(tokens) / sizeof(tokens[0]))];
            size_t k = strlen(tok);

            memcpy(text + len, tok, k);
            len += k;
        }
        text[len] = '\0';
        matched += check_text(set, plain, md, m, text, len);
        free(m);
    }
    /* The generated texts must exercise matches, not only misses. */
    assert_true(matched > 3000);
    assert_true(check_cuts(set, plain, md) > 1000);

    for (size_t i = 0; i < N_PATTERNS; i++)
        pcre2_code_free(plain[i]);
    pcre2_match_data_free(md);
    rule_set_free(set);
}

/* Both paths of the scan: the portable one, and the machine's vector
 * path where it has one (most texts here are long enough for its blocks
 * of 64 positions). */
static void
test_equivalence(void **state)
{
    (void)state;
    assert_false(rule_prefilter_scan_vector(false));
    check_equivalence();
    if (rule_prefilter_scan_vector(true))
        check_equivalence();
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_literals),     cmocka_unit_test(test_literal_sets),
        cmocka_unit_test(test_plain_runs),   cmocka_unit_test(test_products),
        cmocka_unit_test(test_alternatives), cmocka_unit_test(test_equivalence),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
