/*
 * test_rule_eval.c - evaluating rule sets against hand-built messages.
 *
 * Each case loads a small rule set from a temporary directory, evaluates
 * it against a struct message built field by field (no MIME parsing), and
 * compares the hits: names in order, evidence, documentation links and
 * the score.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "message.h"
#include "rule_set.h"

static const struct classifier_limits limits = {
    .match_limit = 100000,
    .depth_limit = 10000,
};

/* Message building ------------------------------------------------------ */

static void
region_set(struct region *r, const char *text)
{
    free(r->text);
    r->text = strdup(text);
    assert_non_null(r->text);
    r->len = strlen(text);
}

/* Append one diff line to a region with a line map. */
static void
diff_line(struct message *m, enum region_id id, const char *file, uint32_t line, const char *text)
{
    struct region *r = &m->regions[id];
    size_t n = strlen(text);

    r->text = realloc(r->text, r->len + n + 2);
    r->lines = realloc(r->lines, (r->n_lines + 1) * sizeof(*r->lines));
    assert_non_null(r->text);
    assert_non_null(r->lines);
    r->lines[r->n_lines++] = (struct region_line){.offset = r->len, .file = file, .line = line};
    memcpy(r->text + r->len, text, n);
    r->len += n;
    r->text[r->len++] = '\n';
    r->text[r->len] = '\0';
}

static void
hunk_add(struct message *m, size_t removed_first, size_t removed_count, size_t added_first,
         size_t added_count)
{
    m->hunks = realloc(m->hunks, (m->n_hunks + 1) * sizeof(*m->hunks));
    assert_non_null(m->hunks);
    m->hunks[m->n_hunks++] = (struct patch_hunk){
        .removed_first = removed_first,
        .removed_count = removed_count,
        .added_first = added_first,
        .added_count = added_count,
    };
}

static struct message *
msg_new(enum classifier_kind kind)
{
    struct message *m = calloc(1, sizeof(*m));

    assert_non_null(m);
    m->kind = kind;
    for (size_t i = 0; i < REGION__COUNT; i++)
        region_set(&m->regions[i], "");
    return m;
}

static void
msg_free(struct message *m)
{
    for (size_t i = 0; i < REGION__COUNT; i++)
        region_release(&m->regions[i]);
    free(m->hunks);
    free(m);
}

/* A report: prose in body and report, some measures. */
static struct message *
msg_report(void)
{
    struct message *m = msg_new(CLASSIFIER_KIND_REPORT);
    const char *body = "Hello,\n"
                       "foo_bar() crashes with a NULL pointer in foo, again foo and foo.\n"
                       "The kernel version is 6.8 on x86.\n";

    region_set(&m->regions[REGION_SUBJECT], "crash in foo_bar");
    region_set(&m->regions[REGION_BODY], body);
    region_set(&m->regions[REGION_REPORT], body);
    m->measures[MEASURE_PROSE_WORDS] = 150;
    m->measures[MEASURE_QUOTED_RATIO] = 0.25;
    return m;
}

/* A report whose report and code regions are its body's lines sorted in
 * two, as message.c makes them: the prefilter answers all three regions
 * from one pass over the body. */
static struct message *
msg_report_split(void)
{
    struct message *m = msg_new(CLASSIFIER_KIND_REPORT);

    region_set(&m->regions[REGION_BODY], "giraffe seen on the zebra crossing.\n"
                                         "BUG: okapi at 0x0\n"
                                         "It stops there.\n");
    region_set(&m->regions[REGION_REPORT], "giraffe seen on the zebra crossing.\n"
                                           "It stops there.\n");
    region_set(&m->regions[REGION_CODE], "BUG: okapi at 0x0\n");
    m->report_of_body = true;
    return m;
}

/*
 * A patch with two hunks in drivers/foo.c:
 *   hunk 0: -mutex_unlock(&x->lock);      +mutex_destroy(&x->lock);
 *           -return 0;                    +return ret;
 *   hunk 1: -mutex_unlock(&y->lock);      +kfree(y);
 *                                         +mutex_destroy(&z->lock);
 */
static struct message *
msg_patch(void)
{
    struct message *m = msg_new(CLASSIFIER_KIND_PATCH);
    static const char file[] = "drivers/foo.c";

    region_set(&m->regions[REGION_CHANGELOG], "Fix the teardown order in foo.\n");
    diff_line(m, REGION_REMOVED, file, 40, "\tmutex_unlock(&x->lock);");
    diff_line(m, REGION_REMOVED, file, 41, "\treturn 0;");
    diff_line(m, REGION_ADDED, file, 40, "\tmutex_destroy(&x->lock);");
    diff_line(m, REGION_ADDED, file, 41, "\treturn ret;");
    hunk_add(m, 0, 2, 0, 2);
    diff_line(m, REGION_REMOVED, file, 90, "\tmutex_unlock(&y->lock);");
    diff_line(m, REGION_ADDED, file, 90, "\tkfree(y);");
    diff_line(m, REGION_ADDED, file, 91, "\tmutex_destroy(&z->lock);");
    hunk_add(m, 2, 1, 2, 2);
    m->measures[MEASURE_CHANGELOG_WORDS] = 6;
    m->measures[MEASURE_COMMENT_RATIO] = 0.5;
    m->measures[MEASURE_HUNKS] = 2;
    return m;
}

/* The unlock and destroy of the same lock sit in different hunks. */
static struct message *
msg_patch_split(void)
{
    struct message *m = msg_new(CLASSIFIER_KIND_PATCH);
    static const char file[] = "drivers/bar.c";

    diff_line(m, REGION_REMOVED, file, 10, "\tmutex_unlock(&x->lock);");
    diff_line(m, REGION_ADDED, file, 10, "\tspin_lock(&x->slock);");
    hunk_add(m, 0, 1, 0, 1);
    diff_line(m, REGION_REMOVED, file, 80, "\tx->count--;");
    diff_line(m, REGION_ADDED, file, 80, "\tmutex_destroy(&x->lock);");
    hunk_add(m, 1, 1, 1, 1);
    return m;
}

/* A 300-byte line of two-byte characters after one ASCII byte, so a cut
 * at 160 bytes would fall inside a character; and a match across lines. */
static struct message *
msg_long(void)
{
    struct message *m = msg_new(CLASSIFIER_KIND_OTHER);
    char body[512];
    size_t n = 0;

    body[n++] = 'x';
    for (int i = 0; i < 150; i++) {
        body[n++] = (char)0xc3;
        body[n++] = (char)0xa9; /* é */
    }
    memcpy(body + n, "\nfirst\r\nsecond\tthird\n", 22);
    region_set(&m->regions[REGION_BODY], body);
    return m;
}

/* "aaaa...ab": the classic exponential backtracking subject. */
static struct message *
msg_catastrophic(void)
{
    struct message *m = msg_new(CLASSIFIER_KIND_OTHER);
    char *s = malloc(5002);

    assert_non_null(s);
    memset(s, 'a', 5000);
    s[5000] = 'b';
    s[5001] = '\0';
    region_set(&m->regions[REGION_BODY], s);
    free(s);
    return m;
}

/* Rule loading and results ---------------------------------------------- */

static void
print_diag(void *ctx, const struct classifier_diag *d)
{
    (void)ctx;
    print_message("  %s:%u: %s\n", d->file, d->line, d->reason);
}

static struct rule_set *
load(const char *text)
{
    char dir[] = "/tmp/test_rule_eval.XXXXXX", path[64];
    struct rule_set *set = NULL;
    FILE *f;

    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof(path), "%s/t.rules", dir);
    f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
    assert_int_equal(rule_set_load(dir, &limits, print_diag, NULL, NULL, &set), 0);
    assert_int_equal(unlink(path), 0);
    assert_int_equal(rmdir(dir), 0);
    return set;
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

static void
print_result(const struct classifier_result *res)
{
    for (size_t i = 0; i < res->n_hits; i++)
        print_message("  hit %s score=%g doc=%s evidence=[%s]\n", res->hits[i].rule,
                      res->hits[i].score, res->hits[i].doc ? res->hits[i].doc : "-",
                      res->hits[i].evidence ? res->hits[i].evidence : "(none)");
}

/* Cases ------------------------------------------------------------------ */

#define HEAD(name) "rule " name "\n    describe d\n    score 1\n"

struct expect {
    const char *rule;
    const char *evidence; /* exact; NULL: the hit has no evidence */
    size_t cut;           /* not 0: evidence is valid UTF-8 of this length instead */
};

struct eval_case {
    const char *label;
    const char *rules;
    struct message *(*build)(void);
    struct expect hits[8]; /* in rule order; ends at rule == NULL */
    double score;          /* res.score: the sum of the listed hits */
};

/* One rule-file line per source line; clang-format would reflow them. */
// clang-format off
#define HIT(rule, evidence) {rule, evidence, 0}
#define CUT(rule, len) {rule, NULL, len}
#define NO_HITS {{NULL, NULL, 0}}

static struct eval_case cases[] = {
    {"match fires with evidence",
     HEAD("M") "    match body /version is \\d+\\.\\d+/\n"
     HEAD("N") "    match body /Version/\n"
     HEAD("I") "    match body /VERSION/i\n",
     msg_report,
     {HIT("M", "version is 6.8"), HIT("I", "version")},
     2},
    {"match on added region has file:line",
     HEAD("A") "    match added /mutex_destroy\\([^)]*\\)/\n",
     msg_patch,
     {HIT("A", "drivers/foo.c:40: mutex_destroy(&x->lock)")},
     1},
    {"empty match shows its line",
     HEAD("A") "    match removed /^(?=\\treturn)/\n",
     msg_patch,
     {HIT("A", "drivers/foo.c:41:  return 0;")},
     1},
    {"nomatch",
     HEAD("A") "    nomatch body /reproducer/i\n"
     HEAD("B") "    nomatch body /crash/\n",
     msg_report,
     {HIT("A", NULL)},
     1},
    {"count with ops",
     HEAD("EQ") "    count body /\\bfoo\\b/ == 3\n"
     HEAD("NE") "    count body /\\bfoo\\b/ != 2\n"
     HEAD("GT") "    count body /\\bfoo\\b/ > 2\n"
     HEAD("GE") "    count body /\\bfoo\\b/ >= 3\n"
     HEAD("LT") "    count body /\\bfoo\\b/ < 4\n"
     HEAD("LE") "    count body /\\bfoo\\b/ <= 3\n"
     HEAD("XEQ") "    count body /\\bfoo\\b/ == 2\n"
     HEAD("XGT") "    count body /\\bfoo\\b/ > 3\n"
     HEAD("XLT") "    count body /\\bfoo\\b/ < 3\n",
     msg_report,
     {HIT("EQ", "3 matches, first: foo"),
      HIT("NE", "3 matches, first: foo"),
      HIT("GT", "3 matches, first: foo"),
      HIT("GE", "3 matches, first: foo"),
      HIT("LT", "3 matches, first: foo"),
      HIT("LE", "3 matches, first: foo")},
     6},
    {"count zero and empty matches",
     HEAD("Z") "    count body /zebra/ == 0\n"
     HEAD("L") "    count body /^/ == 3\n",
     msg_report,
     {HIT("Z", "0 matches"), HIT("L", "3 matches, first: Hello,")},
     2},
    {"count on a diff region",
     HEAD("C") "    count added /mutex_destroy/ >= 2\n",
     msg_patch,
     {HIT("C", "2 matches, first: drivers/foo.c:40: mutex_destroy")},
     1},
    {"measure with each op",
     HEAD("GT") "    measure prose_words > 100\n"
     HEAD("GE") "    measure prose_words >= 150\n"
     HEAD("LT") "    measure prose_words < 151\n"
     HEAD("LE") "    measure prose_words <= 150\n"
     HEAD("EQ") "    measure prose_words == 150\n"
     HEAD("NE") "    measure prose_words != 149\n"
     HEAD("R") "    measure quoted_ratio >= 0.25\n"
     HEAD("XGT") "    measure prose_words > 150\n"
     HEAD("XLT") "    measure prose_words < 150\n"
     HEAD("XEQ") "    measure quoted_ratio == 0.3\n",
     msg_report,
     {HIT("GT", "prose_words=150"),
      HIT("GE", "prose_words=150"),
      HIT("LT", "prose_words=150"),
      HIT("LE", "prose_words=150"),
      HIT("EQ", "prose_words=150"),
      HIT("NE", "prose_words=150"),
      HIT("R", "quoted_ratio=0.25")},
     7},
    {"pair in one hunk with equal captures",
     HEAD("P") "    pair /\\bmutex_unlock\\s*\\(([^;]*)\\)/ /\\bmutex_destroy\\s*\\(([^;]*)\\)/\n",
     msg_patch,
     {HIT("P", "drivers/foo.c:40: -mutex_unlock(&x->lock); \xe2\x86\x92 +mutex_destroy(&x->lock);")},
     1},
    {"pair not across hunks",
     HEAD("P") "    pair /\\bmutex_unlock\\s*\\(([^;]*)\\)/ /\\bmutex_destroy\\s*\\(([^;]*)\\)/\n",
     msg_patch_split,
     NO_HITS,
     0},
    {"pair not when captures differ",
     HEAD("P") "    pair /mutex_unlock\\((&y[^;]*)\\)/ /mutex_destroy\\(([^;]*)\\)/\n"
     HEAD("Q") "    pair /mutex_unlock\\((&y)/ /mutex_destroy\\((&z)/\n",
     msg_patch,
     NO_HITS,
     0},
    {"pair without captures needs only the hunk",
     HEAD("P") "    pair /mutex_unlock\\(&y/ /mutex_destroy\\(&z/\n"
     HEAD("N") "    pair /mutex_unlock\\((&y)/ /mutex_destroy\\((&z)/n\n",
     msg_patch,
     {HIT("P", "drivers/foo.c:91: -mutex_unlock(&y->lock); \xe2\x86\x92 +mutex_destroy(&z->lock);"),
      HIT("N", "drivers/foo.c:91: -mutex_unlock(&y->lock); \xe2\x86\x92 +mutex_destroy(&z->lock);")},
     2},
    {"pair on a message without a diff",
     HEAD("P") "    pair /a/ /b/\n",
     msg_report,
     NO_HITS,
     0},
    {"combinations and helpers",
     "rule __A\n    match body /foo_bar/\n"
     "rule __B\n    match body /NULL/\n"
     "rule __C\n    match body /reproducer/\n"
     HEAD("ALL_AB") "    all_of __A __B\n"
     HEAD("ALL_AC") "    all_of __A __C\n"
     HEAD("ANY_AC") "    any_of __A __C\n"
     HEAD("ANY_C") "    any_of __C\n"
     HEAD("AT2") "    at_least 2 __A __B __C\n"
     HEAD("AT3") "    at_least 3 __A __B __C\n"
     HEAD("NONE_C") "    none_of __C\n"
     HEAD("NONE_A") "    none_of __A __C\n"
     HEAD("NESTED") "    all_of ALL_AB NONE_C\n",
     msg_report,
     {HIT("ALL_AB", "a, b"),
      HIT("ANY_AC", "a"),
      HIT("AT2", "a, b"),
      HIT("NONE_C", NULL),
      HIT("NESTED", "ALL_AB, NONE_C")},
     5},
    {"first evidence wins; all conditions must hold",
     HEAD("A") "    nomatch body /zebra/\n    measure prose_words > 1\n    match body /x86/\n"
     HEAD("B") "    match body /x86/\n    measure prose_words > 1000\n",
     msg_report,
     {HIT("A", "prose_words=150")},
     1},
    {"a gate after a pattern: evidence still from the pattern",
     "rule __A\n    match body /foo_bar/\n"
     HEAD("E") "    match body /x86/\n    any_of __A\n"
     HEAD("F") "    match body /x86/\n    none_of __A\n",
     msg_report,
     {HIT("E", "x86")},
     1},
    {"a failing gate spares the pattern before it",
     /* The gate is looked at first: the pattern, which would hit the
      * match limit, never runs, so no limit is reported either. */
     HEAD("G") "    match body /(a+)+$/\n    measure prose_words > 1000\n"
     HEAD("H") "    count body /(a+)+$/ >= 1\n    all_of G\n"
     HEAD("LIMIT_REACHED") "    measure limit_hit >= 1\n",
     msg_catastrophic,
     NO_HITS,
     0},
    {"kind restriction",
     HEAD("P") "    kind patch\n    match body /foo/\n"
     HEAD("R") "    kind report reply\n    match body /foo/\n"
     "rule __K\n    kind patch\n    match body /foo/\n"
     HEAD("NOT_K") "    none_of __K\n",
     msg_report,
     {HIT("R", "foo"), HIT("NOT_K", NULL)},
     2},
    {"report and code regions from the body's lines",
     HEAD("R") "    match report /\\bgiraffe\\b/\n"
     HEAD("R_NOT") "    match report /okapi/\n"
     HEAD("B") "    match body /zebra crossing/\n"
     HEAD("C") "    match code /\\bokapi\\b/\n"
     HEAD("C_NOT") "    match code /giraffe|stops/\n"
     HEAD("R_LAST") "    match report /there\\.$/\n",
     msg_report_split,
     {HIT("R", "giraffe"), HIT("B", "zebra crossing"), HIT("C", "okapi"),
      HIT("R_LAST", "there.")},
     4},
    {"score sum, zero and negative",
     "rule A\n    describe d\n    score 1.5\n    match body /foo/\n"
     "rule B\n    describe d\n    score 2\n    match body /foo/\n"
     "rule C\n    describe d\n    score -0.5\n    match body /foo/\n"
     "rule D\n    describe d\n    score 0\n    match body /foo/\n",
     msg_report,
     {HIT("A", "foo"), HIT("B", "foo"), HIT("C", "foo"), HIT("D", "foo")},
     3.0},
    {"evidence cut at a character boundary, controls become spaces",
     HEAD("L") "    match body /x.*/\n"
     HEAD("S") "    match body /first.*third/s\n",
     msg_long,
     /* 'x' + 150 two-byte characters = 301 bytes, cut to 1 + 2 * 79 */
     {CUT("L", 159), HIT("S", "first  second third")},
     2},
    {"catastrophic pattern hits the limit",
     HEAD("CAT") "    match body /(a+)+$/\n"
     HEAD("NOCAT") "    nomatch body /(a+)+$/\n"
     HEAD("OK") "    match body /ab$/\n",
     msg_catastrophic,
     /* Cut short, the pattern proves nothing: neither CAT nor NOCAT. */
     {HIT("OK", "ab")},
     1},
};
// clang-format on

static bool
utf8_valid(const char *s)
{
    const unsigned char *u = (const unsigned char *)s;

    while (*u != '\0') {
        size_t n = *u < 0x80 ? 1 : (*u & 0xe0) == 0xc0 ? 2 : (*u & 0xf0) == 0xe0 ? 3 : 4;

        for (size_t i = 1; i < n; i++)
            if ((u[i] & 0xc0) != 0x80)
                return false;
        u += n;
    }
    return true;
}

static void
test_case(void **state)
{
    const struct eval_case *c = *state;
    struct classifier_result res = {0};
    struct rule_set *set = load(c->rules);
    struct message *m = c->build();
    struct timespec t0, t1;
    size_t n = 0;

    clock_gettime(CLOCK_MONOTONIC, &t0);
    assert_int_equal(rule_set_eval(set, m, NULL, 100, &res), 0);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    print_result(&res);
    /* Limits bound every match; nothing here should take long. */
    assert_true(t1.tv_sec - t0.tv_sec < 5);

    while (n < 8 && c->hits[n].rule != NULL)
        n++;
    assert_int_equal(res.n_hits, n);
    for (size_t i = 0; i < n; i++) {
        const struct classifier_hit *h = &res.hits[i];

        assert_string_equal(h->rule, c->hits[i].rule);
        assert_string_equal(h->description, "d");
        assert_null(h->doc);
        assert_true(strncmp(h->rule, "__", 2) != 0);
        if (c->hits[i].cut > 0) {
            assert_non_null(h->evidence);
            assert_int_equal(strlen(h->evidence), c->hits[i].cut);
            assert_true(utf8_valid(h->evidence));
        } else if (c->hits[i].evidence == NULL) {
            assert_null(h->evidence);
        } else {
            assert_non_null(h->evidence);
            assert_string_equal(h->evidence, c->hits[i].evidence);
        }
    }
    assert_true(res.score > c->score - 1e-9 && res.score < c->score + 1e-9);
    result_clear(&res);
    msg_free(m);
    rule_set_free(set);
}

static void
test_doc_links(void **state)
{
    struct rule_set *set = load(
        HEAD("REL") "    doc @/process/security-bugs.html#contact\n    match body /foo/\n" HEAD(
            "ABS") "    doc https://example.org/x\n    match body /foo/\n");
    struct message *m = msg_report();
    struct classifier_result res = {0};
    static const struct {
        const char *base;
        const char *rel;
    } bases[] = {
        {NULL, "https://docs.kernel.org/process/security-bugs.html#contact"},
        {"https://docs.example.org/kernel/",
         "https://docs.example.org/kernel/process/security-bugs.html#contact"},
        {"https://docs.example.org/kernel",
         "https://docs.example.org/kernel/process/security-bugs.html#contact"},
    };

    (void)state;
    for (size_t i = 0; i < sizeof(bases) / sizeof(bases[0]); i++) {
        assert_int_equal(rule_set_eval(set, m, bases[i].base, 10, &res), 0);
        assert_int_equal(res.n_hits, 2);
        assert_string_equal(res.hits[0].doc, bases[i].rel);
        assert_string_equal(res.hits[1].doc, "https://example.org/x");
        result_clear(&res);
    }
    msg_free(m);
    rule_set_free(set);
}

/* Past max_hits nothing more is listed or scored; hits already in the
 * result count toward the cap. */
static void
test_max_hits(void **state)
{
    struct rule_set *set = load("rule A\n    describe d\n    score 1\n    match body /foo/\n"
                                "rule B\n    describe d\n    score 2\n    match body /foo/\n"
                                "rule C\n    describe d\n    score 4\n    match body /foo/\n"
                                "rule D\n    describe d\n    score 8\n    match body /foo/\n"
                                "rule E\n    describe d\n    score 16\n    all_of A B C D\n");
    struct message *m = msg_report();
    struct classifier_result res = {0};

    (void)state;
    assert_int_equal(rule_set_eval(set, m, NULL, 2, &res), 0);
    assert_int_equal(res.n_hits, 2);
    assert_string_equal(res.hits[0].rule, "A");
    assert_string_equal(res.hits[1].rule, "B");
    assert_true(res.score == 3.0);
    /* A second evaluation into the same result adds nothing: it is full. */
    assert_int_equal(rule_set_eval(set, m, NULL, 2, &res), 0);
    assert_int_equal(res.n_hits, 2);
    assert_true(res.score == 3.0);
    result_clear(&res);

    assert_int_equal(rule_set_eval(set, m, NULL, 100, &res), 0);
    assert_int_equal(res.n_hits, 5);
    assert_true(res.score == 31.0);
    result_clear(&res);

    assert_int_equal(rule_set_eval(set, m, NULL, 0, &res), 0);
    assert_int_equal(res.n_hits, 0);
    assert_true(res.score == 0.0);
    result_clear(&res);
    msg_free(m);
    rule_set_free(set);
}

static void
test_empty_set(void **state)
{
    char dir[] = "/tmp/test_rule_eval.XXXXXX";
    struct rule_set *set = NULL;
    struct message *m = msg_patch();
    struct classifier_result res = {0};

    (void)state;
    assert_non_null(mkdtemp(dir));
    assert_int_equal(rule_set_load(dir, &limits, NULL, NULL, NULL, &set), 0);
    assert_int_equal(rule_set_eval(set, m, NULL, 10, &res), 0);
    assert_int_equal(res.n_hits, 0);
    assert_int_equal(rmdir(dir), 0);
    msg_free(m);
    rule_set_free(set);
}

struct thread_arg {
    const struct rule_set *set;
    const struct message *m;
    int failures;
};

static void *
thread_main(void *p)
{
    struct thread_arg *a = p;

    for (int i = 0; i < 200; i++) {
        struct classifier_result res = {0};

        if (rule_set_eval(a->set, a->m, NULL, 10, &res) < 0 || res.n_hits != 2 ||
            strcmp(res.hits[0].evidence, "drivers/foo.c:40: mutex_destroy(&x->lock)") != 0)
            a->failures++;
        result_clear(&res);
    }
    return NULL;
}

/* One set, one message, several threads at once: same answers. */
static void
test_threads(void **state)
{
    struct rule_set *set = load(HEAD("A") "    match added /mutex_destroy\\([^)]*\\)/\n" HEAD(
        "P") "    pair /mutex_unlock\\(([^)]*)\\)/ /mutex_destroy\\(([^)]*)\\)/\n");
    struct message *m = msg_patch();
    struct thread_arg args[4];
    pthread_t t[4];

    (void)state;
    for (int i = 0; i < 4; i++) {
        args[i] = (struct thread_arg){.set = set, .m = m};
        assert_int_equal(pthread_create(&t[i], NULL, thread_main, &args[i]), 0);
    }
    for (int i = 0; i < 4; i++) {
        assert_int_equal(pthread_join(t[i], NULL), 0);
        assert_int_equal(args[i].failures, 0);
    }
    msg_free(m);
    rule_set_free(set);
}

int
main(void)
{
    size_t n_cases = sizeof(cases) / sizeof(cases[0]);
    struct CMUnitTest *tests;
    size_t n = 0;
    int r;

    tests = calloc(n_cases + 8, sizeof(*tests));
    if (tests == NULL)
        return 1;
    for (size_t i = 0; i < n_cases; i++)
        tests[n++] = (struct CMUnitTest){cases[i].label, test_case, NULL, NULL, &cases[i]};
    tests[n++] = (struct CMUnitTest)cmocka_unit_test(test_doc_links);
    tests[n++] = (struct CMUnitTest)cmocka_unit_test(test_max_hits);
    tests[n++] = (struct CMUnitTest)cmocka_unit_test(test_empty_set);
    tests[n++] = (struct CMUnitTest)cmocka_unit_test(test_threads);
    r = _cmocka_run_group_tests("rule_eval", tests, n, NULL, NULL);
    free(tests);
    return r;
}
