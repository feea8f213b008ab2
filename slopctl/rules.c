/*
 * rules.c - "slopctl lint" checks every rule and scores file of a rule
 * directory, printing file:line: reason for each problem; "slopctl
 * rules" lists the rules with the score each has in effect under a
 * profile. Both read the same options (rules_options_parse()).
 * Single-threaded; each returns an exit code.
 */
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sysexits.h>

#include "classifier.h"
#include "cli.h"
#include "output.h"
#include "rules.h"

struct rules_options {
    const char *rules, *scores, *profile, *doc_base;
};

/* --rules, --scores and, with profile, --project and --doc-base; no
 * argument after them. -1 to go on, else the exit code. */
static int
rules_options_parse(int argc, char **argv, const char *cmd, bool profile, struct rules_options *o)
{
    static const struct option longopts[] = {
        {"rules", required_argument, NULL, 'r'},   {"scores", required_argument, NULL, 's'},
        {"project", required_argument, NULL, 'P'}, {"doc-base", required_argument, NULL, 'd'},
        {"help", no_argument, NULL, 'h'},          {NULL, 0, NULL, 0},
    };
    static const struct option lint_longopts[] = {
        {"rules", required_argument, NULL, 'r'},
        {"scores", required_argument, NULL, 's'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int opt;

    while ((opt = getopt_long(argc, argv, "r:h", profile ? longopts : lint_longopts, NULL)) != -1) {
        if (opt == 'r')
            o->rules = optarg;
        else if (opt == 's')
            o->scores = optarg;
        else if (opt == 'P')
            o->profile = optarg;
        else if (opt == 'd')
            o->doc_base = optarg;
        else
            return cli_help_or_bad_option(opt, cmd);
    }
    if (optind < argc)
        return cli_usage_error("%s takes no arguments, got '%s'", cmd, argv[optind]);
    o->rules = cli_rules_dir(o->rules);
    return -1;
}

int
rules_lint_cmd(int argc, char **argv)
{
    struct output_diag_sink sink = {.f = stdout};
    struct rules_options o = {0};
    char buf[128];
    int n;

    n = rules_options_parse(argc, argv, "lint", false, &o);
    if (n >= 0)
        return n;
    n = classifier_lint_scored(o.rules, o.scores, output_diag, &sink);
    if (n < 0) {
        fprintf(stderr, "slopctl: cannot read rules from '%s': %s\n", o.rules,
                strerror_r(-n, buf, sizeof(buf)));
        return EX_CONFIG;
    }
    if (n > 0)
        printf("%d problem%s\n", n, n == 1 ? "" : "s");
    else
        printf("%s: OK\n", o.rules);
    if (fflush(stdout) != 0)
        return EX_IOERR;
    return n > 0 ? 1 : 0;
}

/* A rule's link as its hits show it: "@/" under the document base, or
 * "-" when the profile has none. */
static void
print_doc(const char *doc, const char *base)
{
    if (doc == NULL || (strncmp(doc, "@/", 2) == 0 && *base == '\0'))
        fputs("-", stdout);
    else if (strncmp(doc, "@/", 2) == 0)
        printf("%s%s%s", base, base[strlen(base) - 1] == '/' ? "" : "/", doc + 2);
    else
        fputs(doc, stdout);
}

int
rules_list_cmd(int argc, char **argv)
{
    struct output_diag_sink sink = {.f = stderr};
    struct classifier_options opts;
    struct rules_options o = {0};
    struct classifier *c = NULL;
    int r;

    r = rules_options_parse(argc, argv, "rules", true, &o);
    if (r >= 0)
        return r;
    classifier_options_default(&opts);
    if (o.scores != NULL)
        opts.scores_file = o.scores;
    if (o.profile != NULL)
        opts.profile = o.profile;
    if (o.doc_base != NULL)
        opts.doc_base = o.doc_base;
    r = classifier_new(o.rules, &opts, output_diag, &sink, &c);
    if (r < 0) {
        if (sink.count == 0)
            fprintf(stderr, "slopctl: cannot load rules from '%s': %s\n", o.rules, strerror(-r));
        return EX_CONFIG;
    }
    printf("# name\tscore\tclass\tprofiles\tdescription\tdoc\n");
    for (size_t i = 0; i < classifier_rule_count(c); i++) {
        struct classifier_rule_info ri;

        if (classifier_rule_info(c, i, &ri) < 0 || ri.helper)
            continue;
        printf("%s\t%.2f\t%s\t%s%s\t%s\t", ri.name, ri.score, ri.style ? "style" : "substance",
               ri.profiles != NULL ? ri.profiles : "all", ri.off ? " (off)" : "",
               ri.description != NULL ? ri.description : "");
        print_doc(ri.doc, classifier_doc_base(c));
        putchar('\n');
    }
    classifier_free(c);
    return fflush(stdout) == 0 && !ferror(stdout) ? 0 : EX_IOERR;
}
