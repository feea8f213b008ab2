/*
 * config_write.c - what is written from the key table: the man page's
 * KEYS section, the sample configuration, and a configuration's
 * effective values (--dump-config).
 */
#include <stdio.h>
#include <string.h>

#include "config_internal.h"

/* roff: a backslash is \e, a leading dot or quote would be a request. */
static void
roff_text(FILE *f, const char *s)
{
    if (*s == '.' || *s == '\'')
        fputs("\\&", f);
    for (; *s; s++) {
        if (*s == '\\')
            fputs("\\e", f);
        else if (*s == '-')
            fputs("\\-", f);
        else
            fputc(*s, f);
    }
}

static void
key_value_doc(const struct key *k, char *buf, size_t size)
{
    char lo[32], hi[32];

    config_keys_fmt_limit(k->min, lo, sizeof(lo));
    config_keys_fmt_limit(k->max, hi, sizeof(hi));
    switch (k->type) {
    case T_ENUM:
        config_keys_words_join(k->words, buf, size);
        break;
    case T_WORDS: {
        char w[128];

        config_keys_words_join(k->words, w, sizeof(w));
        snprintf(buf, size, "one or more of %s", w);
        break;
    }
    case T_UINT:
    case T_NUMBER:
        snprintf(buf, size, "%s, %s to %s", config_types[k->type].name, lo, hi);
        break;
    case T_OCTAL:
        snprintf(buf, size, "octal, 0 to 0%o", (unsigned)k->max);
        break;
    case T_SIZE:
        config_keys_fmt_size(k->min, lo, sizeof(lo));
        config_keys_fmt_size(k->max, hi, sizeof(hi));
        snprintf(buf, size, "size, %s to %s", lo, hi);
        break;
    case T_DURATION:
        config_keys_fmt_duration(k->min, lo, sizeof(lo));
        config_keys_fmt_duration(k->max, hi, sizeof(hi));
        snprintf(buf, size, "duration, %s to %s", lo, hi);
        break;
    default:
        snprintf(buf, size, "%s", config_types[k->type].name);
    }
}

void
config_write_man(FILE *f)
{
    for (size_t i = 0; i < config_n_keys; i++) {
        const struct key *k = &config_keys[i];
        char vd[160];

        key_value_doc(k, vd, sizeof(vd));
        fprintf(f, ".TP\n.BI \"%s \" ", k->name);
        fputc('"', f);
        roff_text(f, vd);
        fputs("\"\n", f);
        roff_text(f, k->doc);
        fputs("\n.br\nDefault: ", f);
        if (k->def == NULL)
            roff_text(f, k->def_doc);
        else if (k->def[0] == '\0')
            fputs("empty", f);
        else {
            fputs("\\fB", f);
            roff_text(f, k->def);
            fputs("\\fR", f);
        }
        fputs(".\n", f);
    }
}

/* Wrap doc text into "# " comment lines of at most 76 columns. */
static void
sample_comment(FILE *f, const char *s)
{
    while (*s) {
        size_t len = strlen(s), cut = len;

        if (len > 74) {
            cut = 74;
            while (cut > 0 && s[cut] != ' ')
                cut--;
            if (cut == 0)
                cut = 74;
        }
        fprintf(f, "# %.*s\n", (int)cut, s);
        s += cut;
        while (*s == ' ')
            s++;
    }
}

void
config_write_sample(FILE *f)
{
    fputs("# slop-milter.conf - sample configuration for slop-milter(8).\n"
          "#\n"
          "# Every key is shown commented out with its built-in default; the daemon runs\n"
          "# with no configuration file at all. One `Key value` per line; keys are\n"
          "# case-insensitive; \"\" quotes an empty value. See slop-milter.conf(5).\n"
          "# Check a changed file with `slop-milter -n -c FILE`, then reload with\n"
          "# `systemctl reload slop-milter` (SIGUSR1).\n",
          f);
    for (size_t i = 0; i < config_n_keys; i++) {
        const struct key *k = &config_keys[i];
        char vd[160];

        key_value_doc(k, vd, sizeof(vd));
        fputs("\n", f);
        sample_comment(f, k->doc);
        fprintf(f, "# (%s)\n", vd);
        if (k->def == NULL) {
            char line[512];

            snprintf(line, sizeof(line), "Default: %s.", k->def_doc);
            sample_comment(f, line);
            fprintf(f, "#%s %s\n", k->name, config_keys_sample_value(k));
        } else if (k->def[0] == '\0')
            fprintf(f, "#%s \"\"\n", k->name);
        else
            fprintf(f, "#%s %s\n", k->name, k->def);
    }
}

void
config_write_effective(const struct config *cfg, FILE *f)
{
    for (size_t i = 0; i < config_n_keys; i++) {
        const struct key *k = &config_keys[i];

        fprintf(f, "%s ", k->name);
        config_types[k->type].write(k, (const char *)cfg + k->offset, f);
        fputc('\n', f);
    }
}
