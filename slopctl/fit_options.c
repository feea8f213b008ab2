/*
 * fit_options.c - the options of "slopctl fit", each value checked
 * against its range, with the usage on a bad one. Single-threaded
 * (getopt).
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>

#include "fit_options.h"

static const char fit_usage[] =
    "usage: slopctl fit [--rules DIR] [-o FILE] [--folds K|all] [--fp-limit P]\n"
    "                   [--lambda L] [--scale S] [--max-score N] [--seed N]\n"
    "                   [--threshold tag=N] [--threshold reply=N] [--plot-dir DIR]\n"
    "                   [--slop-weight W] [--state DIR] [--cv-out FILE]\n"
    "                   [--project NAME] LABELS\n"
    "LABELS: one message per line, 'path<TAB>class[<TAB>group[<TAB>source]]' (or\n"
    "commas), class slop or genuine; paths relative to the labels file's directory;\n"
    "messages of one source (default: of one line) are held out together;\n"
    "--folds K or all (one source per fold)\n";

static int fit_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int
fit_usage_error(const char *fmt, ...)
{
    va_list ap;

    fputs("slopctl fit: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    fputs(fit_usage, stderr);
    return EX_USAGE;
}

static int
parse_double(const char *s, double min, double max, double *ret)
{
    char *end;
    double v;

    errno = 0;
    v = strtod(s, &end);
    if (end == s || *end != '\0' || errno != 0 || !isfinite(v) || v < min || v > max)
        return -EINVAL;
    *ret = v;
    return 0;
}

/* --folds K or all. */
static int
folds_option(struct fit *f, const char *arg)
{
    double v;

    if (strcmp(arg, "all") == 0) {
        f->folds = 0;
        return 0;
    }
    if (parse_double(arg, 2, FIT_MAX_FOLDS, &v) < 0 || v != floor(v))
        return fit_usage_error("bad --folds '%s', expected 2 to %u or all", arg, FIT_MAX_FOLDS);
    f->folds = (unsigned)v;
    return 0;
}

/* As scan takes it: the rules a site's profile turns off must be off in
 * the fit too. */
static int
project_option(struct fit *f, const char *arg)
{
    if (*arg == '\0' || strspn(arg, "abcdefghijklmnopqrstuvwxyz0123456789-_") != strlen(arg))
        return fit_usage_error("bad --project '%s', expected a name of a-z, 0-9, '-', '_'", arg);
    f->profile = arg;
    return 0;
}

static int
seed_option(struct fit *f, const char *arg)
{
    double v;

    if (parse_double(arg, 0, 4294967295.0, &v) < 0 || v != floor(v))
        return fit_usage_error("bad --seed '%s'", arg);
    f->seed = (unsigned long)v;
    return 0;
}

static int
threshold_option(struct fit *f, const char *arg)
{
    if (strncmp(arg, "tag=", 4) == 0 && parse_double(arg + 4, 0.01, 1000, &f->tag) == 0)
        return 0;
    if (strncmp(arg, "reply=", 6) == 0 && parse_double(arg + 6, 0, 1000, &f->reply) == 0)
        return 0;
    return fit_usage_error("bad --threshold '%s', expected tag=N or reply=N", arg);
}

/* A number option into *ret within [min, max], or the usage error
 * "bad --NAME 'ARG'" followed by expect. */
static int
number_option(const char *name, const char *arg, double min, double max, const char *expect,
              double *ret)
{
    if (parse_double(arg, min, max, ret) < 0)
        return fit_usage_error("bad --%s '%s'%s", name, arg, expect);
    return 0;
}

/* One option: 0 to go on, -1 after -h, else EX_USAGE. */
static int
fit_option(struct fit *f, int opt, const char *arg, const char **rules)
{
    switch (opt) {
    case 'r':
        *rules = arg;
        return 0;
    case 'o':
        f->out_path = arg;
        return 0;
    case 'k':
        return folds_option(f, arg);
    case 'c':
        f->cv_path = arg;
        return 0;
    case 'P':
        return project_option(f, arg);
    case 'f':
        return number_option("fp-limit", arg, 0, 1, ", expected 0 to 1", &f->fp_limit);
    case 'L':
        return number_option("lambda", arg, 1e-6, 1e6, ", expected 1e-6 to 1e6", &f->lambda);
    case 's':
        return number_option("scale", arg, 1e-3, 100, ", expected 0.001 to 100", &f->scale);
    case 'm':
        return number_option("max-score", arg, 0, 1000, "", &f->max_score);
    case 'S':
        return seed_option(f, arg);
    case 't':
        return threshold_option(f, arg);
    case 'p':
        f->plot_dir = arg;
        return 0;
    case 'T':
        f->state_dir = arg;
        return 0;
    case 'W':
        return number_option("slop-weight", arg, 0, 1e6, ", expected 0 (balanced) to 1e6",
                             &f->slop_weight);
    case 'h':
        fputs(fit_usage, stdout);
        return -1;
    default:
        return fit_usage_error("bad option");
    }
}

int
fit_options_parse(struct fit *f, int argc, char **argv, const char **rules)
{
    static const struct option longopts[] = {
        {"rules", required_argument, NULL, 'r'},
        {"output", required_argument, NULL, 'o'},
        {"folds", required_argument, NULL, 'k'},
        {"fp-limit", required_argument, NULL, 'f'},
        {"lambda", required_argument, NULL, 'L'},
        {"scale", required_argument, NULL, 's'},
        {"max-score", required_argument, NULL, 'm'},
        {"seed", required_argument, NULL, 'S'},
        {"threshold", required_argument, NULL, 't'},
        {"plot-dir", required_argument, NULL, 'p'},
        {"state", required_argument, NULL, 'T'},
        {"slop-weight", required_argument, NULL, 'W'},
        {"cv-out", required_argument, NULL, 'c'},
        {"project", required_argument, NULL, 'P'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int opt, r;

    while ((opt = getopt_long(argc, argv, "r:o:k:t:h", longopts, NULL)) != -1) {
        r = fit_option(f, opt, optarg, rules);
        if (r != 0)
            return r;
    }
    if (optind != argc - 1)
        return fit_usage_error("fit needs one LABELS file");
    f->labels = argv[optind];
    if (f->reply > 0 && f->max_score >= f->reply)
        return fit_usage_error("--max-score %g would let one rule reach reply at %g", f->max_score,
                               f->reply);
    return 0;
}
