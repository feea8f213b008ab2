/*
 * test_rule_parse.c - rule file loading and checking (docs/rules.md).
 *
 * Each case writes rule files into a fresh temporary directory, loads it
 * with rule_set_load() and compares the problems reported (count, and the
 * file, line and reason of the first) or the number of rules loaded.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "rule_set.h"

/* Enough of a rule body to be valid, so a case shows one problem only. */
#define OK_BODY "    describe a gap\n    score 1\n    match body /x/\n"

struct diags {
    unsigned n;
    struct classifier_diag v[64];
};

static void
collect(void *ctx, const struct classifier_diag *d)
{
    struct diags *ds = ctx;

    if (ds->n < 64)
        ds->v[ds->n] = *d;
    ds->n++;
}

static char *
tmpdir_new(void)
{
    char *dir = strdup("/tmp/test_rule_parse.XXXXXX");

    assert_non_null(dir);
    assert_non_null(mkdtemp(dir));
    return dir;
}

static void
write_file(const char *dir, const char *name, const char *text, size_t len)
{
    char path[1024];
    FILE *f;

    snprintf(path, sizeof(path), "%s/%s", dir, name);
    f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(text, 1, len, f), len);
    assert_int_equal(fclose(f), 0);
}

static void
write_rules(const char *dir, const char *name, const char *text)
{
    write_file(dir, name, text, strlen(text));
}

/* Remove dir and what the tests put in it (files, one level of dirs). */
static void
tmpdir_free(char *dir)
{
    char cmd[1100];

    snprintf(cmd, sizeof(cmd), "rm -rf -- '%s'", dir);
    assert_int_equal(system(cmd), 0);
    free(dir);
}

static bool
ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);

    return n >= k && strcmp(s + n - k, suffix) == 0;
}

static const struct classifier_limits limits = {
    .match_limit = 100000,
    .depth_limit = 10000,
};

struct bad_case {
    const char *label;
    const char *text;
    unsigned problems;
    unsigned line;      /* of the first problem */
    const char *reason; /* a substring of the first problem's reason */
};

static struct bad_case bad_cases[] = {
    {"profile after a rule", "rule A\n" OK_BODY "profile kernel\n", 1, 5,
     "a file's profile line comes once, before its first rule"},
    {"two profile lines", "profile kernel\nprofile generic\nrule A\n" OK_BODY, 1, 2,
     "a file's profile line comes once"},
    {"bad profile name", "profile Kernel\nrule A\n" OK_BODY, 1, 1, "bad profile name 'Kernel'"},
    {"profile without a name", "rule A\n" OK_BODY "    profile\n", 1, 5,
     "profile needs at least one name"},
    {"duplicate profile", "rule A\n" OK_BODY "    profile kernel\n    profile generic\n", 1, 6,
     "duplicate profile in rule 'A'"},
    {"unknown attribute", "rule A\n    describe d\n    score 1\n    frob x\n    match body /x/\n",
     1, 4, "unknown attribute 'frob'"},
    {"bad region", "rule A\n    describe d\n    score 1\n    match bodyy /x/\n", 1, 4,
     "unknown region 'bodyy'"},
    {"bad measure", "rule A\n    describe d\n    score 1\n    measure changelog_wordz > 3\n", 1, 4,
     "unknown measure 'changelog_wordz'"},
    {"bad op", "rule A\n    describe d\n    score 1\n    measure changelog_words => 3\n", 1, 4,
     "unknown operator '=>'"},
    {"op glued to number", "rule A\n    describe d\n    score 1\n    measure changelog_words >3\n",
     1, 4, "unknown operator '>3'"},
    {"bad number", "rule A\n    describe d\n    score 1\n    measure changelog_words > 3x\n", 1, 4,
     "bad number '3x'"},
    {"missing number", "rule A\n    describe d\n    score 1\n    count body /x/ >\n", 1, 4,
     "missing number"},
    {"bad score", "rule A\n    describe d\n    score lots\n    match body /x/\n", 1, 3,
     "bad number 'lots'"},
    {"bad regex", "rule A\n    describe d\n    score 1\n\n    match body /(foo/\n", 1, 5,
     "bad pattern"},
    {"bad regex offset", "rule A\n    describe d\n    score 1\n    match body /a[b/\n", 1, 4,
     "at offset"},
    {"bad flag", "rule A\n    describe d\n    score 1\n    match body /x/iq\n", 1, 4,
     "unknown pattern flag 'q'"},
    {"unterminated regex", "rule A\n    describe d\n    score 1\n    match body /abc\\/ \n", 1, 4,
     "unterminated pattern"},
    {"empty regex", "rule A\n    describe d\n    score 1\n    match body //\n", 1, 4,
     "empty pattern"},
    {"duplicate name", "rule A\n" OK_BODY "rule B\n" OK_BODY "rule A\n" OK_BODY, 1, 9,
     "duplicate rule 'A'"},
    {"forward reference", "rule A\n" OK_BODY "    any_of B\nrule B\n" OK_BODY, 1, 5,
     "rule 'B' used before it is defined"},
    {"self reference", "rule A\n" OK_BODY "    all_of A\n", 1, 5,
     "rule 'A' used before it is defined"},
    {"unknown reference", "rule A\n" OK_BODY "rule B\n" OK_BODY "    none_of A ZZZ\n", 1, 9,
     "unknown rule 'ZZZ'"},
    {"missing score", "rule A\n    describe d\n    match body /x/\n", 1, 1,
     "rule 'A' has no score"},
    {"missing describe", "rule A\n    score 2\n    match body /x/\n", 1, 1,
     "rule 'A' has no describe"},
    {"no condition", "rule A\n    describe d\n    score 2\n    kind patch\n", 1, 1,
     "rule 'A' has no condition"},
    {"attribute before any rule", "# header\n    describe d\n    score 1\nrule A\n" OK_BODY, 1, 2,
     "attribute outside a rule"},
    {"bad name lower case", "rule lower_case\n" OK_BODY, 1, 1, "bad rule name 'lower_case'"},
    {"bad name too long",
     "rule A234567890123456789012345678901234567890123456789012345678901234\n" OK_BODY, 1, 1,
     "bad rule name"},
    {"bad name in list", "rule A\n" OK_BODY "rule B\n" OK_BODY "    any_of A b\n", 1, 9,
     "bad rule name 'b'"},
    {"text after rule name", "rule A B\n" OK_BODY, 1, 1, "unexpected 'B'"},
    {"kind unknown", "rule A\n" OK_BODY "    kind patch mail\n", 1, 5, "unknown kind 'mail'"},
    {"class unknown", "rule A\n" OK_BODY "    class looks\n", 1, 5, "class is 'style' or"},
    {"class twice", "rule A\n" OK_BODY "    class style\n    class style\n", 1, 6,
     "duplicate class"},
    {"class on helper", "rule __A\n    class style\n    match body /x/\n", 1, 2,
     "never scores; remove the class"},
    {"at_least bigger than list",
     "rule __A\n    match body /a/\nrule __B\n    match body /b/\n"
     "rule C\n    describe d\n    score 1\n    at_least 3 __A __B\n",
     1, 8, "at_least 3 names only 2 rules"},
    {"at_least zero",
     "rule __A\n    match body /a/\nrule C\n    describe d\n    score 1\n"
     "    at_least 0 __A\n",
     1, 6, "at_least needs a whole number"},
    {"empty combination", "rule A\n" OK_BODY "    any_of\n", 1, 5, "any_of needs at least one"},
    {"pair needs two patterns", "rule A\n" OK_BODY "    pair /x/\n", 1, 5,
     "pair needs two patterns"},
    {"text after condition", "rule A\n" OK_BODY "    match body /y/ extra\n", 1, 5,
     "unexpected 'extra'"},
    {"helper with score", "rule __H\n    score 1\n    match body /x/\n", 1, 2,
     "helper rule '__H' never scores"},
    {"duplicate describe", "rule A\n" OK_BODY "    describe again\n", 1, 5, "duplicate describe"},
    {"unindented attribute", "rule A\n    describe d\nscore 1\n    score 1\n    match body /x/\n",
     1, 3, "expected 'rule NAME'"},
    {"doc not a url", "rule A\n" OK_BODY "    doc process/foo.html\n", 1, 5, "doc must start"},
    {"several problems, sorted by line",
     "rule A\n    describe d\n    score 1\n    match body /(/\n    frob\n    kind mail\n", 3, 4,
     "bad pattern"},
    {"NUL byte", "rule A\n" OK_BODY "    \0\n", 1, 5, "NUL byte"},
    /* A '\b' that became a backspace on its way into the file. */
    {"control byte", "rule A\n    describe d\n    score 1\n    match body /\bx\b/\n", 1, 4,
     "control byte 0x08"},
};

/* The NUL case needs its length given explicitly. */
static size_t
case_len(const struct bad_case *c)
{
    if (strcmp(c->label, "NUL byte") == 0)
        return strlen(c->text) + 2;
    return strlen(c->text);
}

static void
test_bad_case(void **state)
{
    const struct bad_case *c = *state;
    char *dir = tmpdir_new();
    struct rule_set *set = (struct rule_set *)&set; /* must stay untouched */
    struct rule_set *const sentinel = set;
    struct diags ds = {0};
    unsigned problems = 12345;
    int r;

    write_file(dir, "t.rules", c->text, case_len(c));
    r = rule_set_load(dir, &limits, collect, &ds, &problems, &set);
    for (unsigned i = 0; i < ds.n && i < 64; i++)
        print_message("  %s:%u: %s\n", ds.v[i].file, ds.v[i].line, ds.v[i].reason);
    assert_int_equal(r, -EINVAL);
    assert_ptr_equal(set, sentinel);
    assert_int_equal(problems, c->problems);
    assert_int_equal(ds.n, c->problems);
    assert_true(ends_with(ds.v[0].file, "/t.rules"));
    assert_int_equal(ds.v[0].line, c->line);
    assert_non_null(strstr(ds.v[0].reason, c->reason));
    for (unsigned i = 1; i < ds.n && i < 64; i++)
        assert_true(ds.v[i].line >= ds.v[i - 1].line);
    tmpdir_free(dir);
}

struct good_case {
    const char *label;
    const char *text;
    size_t rules;
};

static struct good_case good_cases[] = {
    {"one rule", "rule A\n" OK_BODY, 1},
    {"comments and blanks", "# a comment\n\nrule A\n    # inside\n" OK_BODY "\n# end\n", 1},
    {"helpers without score or describe",
     "rule __H\n    match body /x/\nrule A\n    describe d\n    score 1\n    all_of __H\n", 2},
    {"every condition",
     "rule __A\n    match subject /a/i\nrule __B\n    nomatch body /b/s\n"
     "rule __C\n    count added /c/x >= 2\nrule __D\n    measure comment_ratio > 0.5\n"
     "rule __E\n    pair /(x)/ /(y)/n\n"
     "rule F\n    describe all of them\n    score -1.5\n    kind patch reply\n"
     "    doc @/process/submitting-patches.html#describe-your-changes\n"
     "    all_of __A __B\n    any_of __C __D\n    at_least 1 __E __A\n    none_of __B\n",
     6},
    {"every region and op",
     "rule __A\n    count headers /a/ < 1\n    count quoted /a/ <= 1\n    count changelog /a/ > 1\n"
     "    count trailers /a/ >= 1\n    count notes /a/ == 1\n    count report /a/ != 1\n"
     "    match code /a/\n    match removed /a/\n    match context /a/\n"
     "    match comments /a/\n    match files /a/\n",
     1},
    {"escaped slash and backslash",
     "rule __A\n    match files /^drivers\\/usb\\//\nrule __B\n    match body /a\\\\/\n", 2},
    {"pattern with blanks",
     "rule A\n    describe d\n    score 0\n    match body /no version given/\n", 1},
    {"trailing comment", "rule A\n" OK_BODY "    nomatch body /y/ # why\n", 1},
    {"crlf line ends", "rule A\r\n    describe d\r\n    score 1\r\n    match body /x/\r\n", 1},
    {"tab indent", "rule A\n\tdescribe d\n\tscore 1\n\tmatch body /x/\n", 1},
    {"no final newline", "rule A\n    describe d\n    score 1\n    match body /x/", 1},
    {"empty file", "", 0},
    {"file profile", "# head\nprofile kernel site-1\n\nrule A\n" OK_BODY, 1},
    {"rule profile", "rule A\n" OK_BODY "    profile generic kernel\n", 1},
};

static void
test_good_case(void **state)
{
    const struct good_case *c = *state;
    char *dir = tmpdir_new();
    struct rule_set *set = NULL;
    struct diags ds = {0};
    unsigned problems = 12345;
    int r;

    write_rules(dir, "t.rules", c->text);
    r = rule_set_load(dir, &limits, collect, &ds, &problems, &set);
    for (unsigned i = 0; i < ds.n && i < 64; i++)
        print_message("  %s:%u: %s\n", ds.v[i].file, ds.v[i].line, ds.v[i].reason);
    assert_int_equal(r, 0);
    assert_int_equal(problems, 0);
    assert_int_equal(ds.n, 0);
    assert_non_null(set);
    assert_int_equal(rule_set_count(set), c->rules);
    assert_null(rule_set_free(set));
    tmpdir_free(dir);
}

/* Files load in name order, whatever order they were written in: a rule
 * may name one from a file that sorts before its own, not after. */
static void
test_files_sorted(void **state)
{
    char *dir = tmpdir_new();
    struct rule_set *set = NULL;
    struct diags ds = {0};
    unsigned problems;

    (void)state;
    write_rules(dir, "30-c.rules", "rule C\n" OK_BODY "    any_of A B\n");
    write_rules(dir, "10-a.rules", "rule A\n" OK_BODY);
    write_rules(dir, "20-b.rules", "rule B\n" OK_BODY "    all_of A\n");
    assert_int_equal(rule_set_load(dir, &limits, collect, &ds, &problems, &set), 0);
    assert_int_equal(rule_set_count(set), 3);
    set = rule_set_free(set);
    tmpdir_free(dir);

    dir = tmpdir_new();
    write_rules(dir, "10-a.rules", "rule A\n" OK_BODY "    any_of B\n");
    write_rules(dir, "20-b.rules", "rule B\n" OK_BODY);
    assert_int_equal(rule_set_load(dir, &limits, collect, &ds, &problems, &set), -EINVAL);
    assert_int_equal(problems, 1);
    assert_true(ends_with(ds.v[0].file, "/10-a.rules"));
    assert_int_equal(ds.v[0].line, 5);
    assert_non_null(strstr(ds.v[0].reason, "used before it is defined"));
    tmpdir_free(dir);
}

/* Problems from several files and passes come out sorted by file, then
 * line; a duplicate across files names the first definition. */
static void
test_diag_order(void **state)
{
    char *dir = tmpdir_new();
    struct rule_set *set = NULL;
    struct diags ds = {0};
    unsigned problems;

    (void)state;
    write_rules(dir, "20-b.rules", "rule B\n" OK_BODY "    any_of NOPE\nrule A\n" OK_BODY);
    write_rules(dir, "10-a.rules", "rule A\n" OK_BODY "    match body /(/\nrule X\n    frob\n");
    assert_int_equal(rule_set_load(dir, &limits, collect, &ds, &problems, &set), -EINVAL);
    assert_int_equal(problems, ds.n);
    for (unsigned i = 0; i < ds.n; i++)
        print_message("  %s:%u: %s\n", ds.v[i].file, ds.v[i].line, ds.v[i].reason);
    /* 10-a: bad pattern (5), X: frob (7), X has no describe/score/condition (6). */
    assert_int_equal(ds.n, 7);
    assert_true(ends_with(ds.v[0].file, "/10-a.rules"));
    assert_int_equal(ds.v[0].line, 5);
    assert_non_null(strstr(ds.v[0].reason, "bad pattern"));
    assert_int_equal(ds.v[1].line, 6);
    assert_int_equal(ds.v[4].line, 7);
    assert_non_null(strstr(ds.v[4].reason, "unknown attribute 'frob'"));
    assert_true(ends_with(ds.v[5].file, "/20-b.rules"));
    assert_int_equal(ds.v[5].line, 5);
    assert_non_null(strstr(ds.v[5].reason, "unknown rule 'NOPE'"));
    assert_int_equal(ds.v[6].line, 6);
    assert_non_null(strstr(ds.v[6].reason, "duplicate rule 'A' (first defined at 10-a.rules:1)"));
    tmpdir_free(dir);
}

static void
test_other_files_ignored(void **state)
{
    char *dir = tmpdir_new(), path[1100];
    struct rule_set *set = NULL;
    unsigned problems;

    (void)state;
    write_rules(dir, "10-a.rules", "rule A\n" OK_BODY);
    write_rules(dir, "README", "not rules at all\n");
    write_rules(dir, "10-a.rules.bak", "rule A\n");
    write_rules(dir, "10-a.rules~", "garbage\n");
    write_rules(dir, ".hidden.rules", "garbage\n");
    write_rules(dir, "rules", "garbage\n");
    snprintf(path, sizeof(path), "%s/sub.rules", dir);
    assert_int_equal(mkdir(path, 0700), 0);
    assert_int_equal(rule_set_load(dir, &limits, NULL, NULL, &problems, &set), 0);
    assert_int_equal(problems, 0);
    assert_int_equal(rule_set_count(set), 1);
    rule_set_free(set);
    tmpdir_free(dir);
}

static void
test_empty_and_missing_dir(void **state)
{
    char *dir = tmpdir_new(), path[1100];
    struct rule_set *set = NULL;
    unsigned problems = 7;

    (void)state;
    assert_int_equal(rule_set_load(dir, NULL, NULL, NULL, &problems, &set), 0);
    assert_int_equal(problems, 0);
    assert_int_equal(rule_set_count(set), 0);
    set = rule_set_free(set);

    snprintf(path, sizeof(path), "%s/missing", dir);
    assert_int_equal(rule_set_load(path, &limits, NULL, NULL, NULL, &set), -ENOENT);
    assert_null(set);
    assert_int_equal(rule_set_count(NULL), 0);
    assert_null(rule_set_free(NULL));
    tmpdir_free(dir);
}

static void
test_caps(void **state)
{
    char *dir = tmpdir_new(), *big, *pat;
    struct rule_set *set = NULL;
    struct diags ds = {0};
    unsigned problems;
    size_t n = (1u << 20) + 10;

    (void)state;
    /* A file over 1 MiB is refused as a whole (line 0). */
    big = malloc(n);
    assert_non_null(big);
    memset(big, '#', n);
    big[n - 1] = '\n';
    write_file(dir, "10-big.rules", big, n);
    free(big);
    /* A pattern over 4 KiB. */
    pat = malloc(8192);
    assert_non_null(pat);
    memcpy(pat, "rule P\n    describe d\n    score 1\n    match body /", 50);
    memset(pat + 50, 'a', 4097);
    memcpy(pat + 50 + 4097, "/\n", 3);
    write_rules(dir, "20-pat.rules", pat);
    free(pat);
    assert_int_equal(rule_set_load(dir, &limits, collect, &ds, &problems, &set), -EINVAL);
    assert_int_equal(problems, 2);
    assert_true(ends_with(ds.v[0].file, "/10-big.rules"));
    assert_int_equal(ds.v[0].line, 0);
    assert_non_null(strstr(ds.v[0].reason, "larger than"));
    assert_true(ends_with(ds.v[1].file, "/20-pat.rules"));
    assert_int_equal(ds.v[1].line, 4);
    assert_non_null(strstr(ds.v[1].reason, "pattern longer than 4096"));
    tmpdir_free(dir);
}

/* 10000 rules load; the 10001st is one problem, reported once. */
static void
test_rule_cap(void **state)
{
    char *dir = tmpdir_new(), *text, *p;
    struct rule_set *set = NULL;
    struct diags ds = {0};
    unsigned problems;
    size_t cap = 10001 * 64;

    (void)state;
    text = malloc(cap);
    assert_non_null(text);
    p = text;
    for (unsigned i = 0; i < 10000; i++)
        p += sprintf(p, "rule __R%u\n    measure files > %u\n", i, i);
    *p = '\0';
    write_rules(dir, "10-many.rules", text);
    assert_int_equal(rule_set_load(dir, &limits, collect, &ds, &problems, &set), 0);
    assert_int_equal(rule_set_count(set), 10000);
    set = rule_set_free(set);

    write_rules(dir, "20-more.rules",
                "rule __S\n    measure files > 1\nrule __T\n"
                "    measure files > 1\n");
    write_rules(dir, "30-more.rules", "rule __U\n    measure files > 1\n");
    assert_int_equal(rule_set_load(dir, &limits, collect, &ds, &problems, &set), -EINVAL);
    assert_int_equal(problems, 1);
    assert_true(ends_with(ds.v[0].file, "/20-more.rules"));
    assert_int_equal(ds.v[0].line, 1);
    assert_non_null(strstr(ds.v[0].reason, "more than 10000 rules"));
    free(text);
    tmpdir_free(dir);
}

int
main(void)
{
    size_t n_bad = sizeof(bad_cases) / sizeof(bad_cases[0]);
    size_t n_good = sizeof(good_cases) / sizeof(good_cases[0]);
    struct CMUnitTest *tests;
    size_t n = 0;
    int r;

    tests = calloc(n_bad + n_good + 8, sizeof(*tests));
    if (tests == NULL)
        return 1;
    for (size_t i = 0; i < n_bad; i++)
        tests[n++] =
            (struct CMUnitTest){bad_cases[i].label, test_bad_case, NULL, NULL, &bad_cases[i]};
    for (size_t i = 0; i < n_good; i++)
        tests[n++] =
            (struct CMUnitTest){good_cases[i].label, test_good_case, NULL, NULL, &good_cases[i]};
    tests[n++] = (struct CMUnitTest)cmocka_unit_test(test_files_sorted);
    tests[n++] = (struct CMUnitTest)cmocka_unit_test(test_diag_order);
    tests[n++] = (struct CMUnitTest)cmocka_unit_test(test_other_files_ignored);
    tests[n++] = (struct CMUnitTest)cmocka_unit_test(test_empty_and_missing_dir);
    tests[n++] = (struct CMUnitTest)cmocka_unit_test(test_caps);
    tests[n++] = (struct CMUnitTest)cmocka_unit_test(test_rule_cap);
    r = _cmocka_run_group_tests("rule_parse", tests, n, NULL, NULL);
    free(tests);
    return r;
}
