/*
 * config_write.c - what is written from the key table: the man page's
 * KEYS section, the sample configuration, and a configuration's
 * effective values (--dump-config).
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

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

    fmt_limit(k->min, lo, sizeof(lo));
    fmt_limit(k->max, hi, sizeof(hi));
    switch (k->type) {
    case T_ENUM:
        words_join(k->words, buf, size);
        break;
    case T_WORDS: {
        char w[128];

        words_join(k->words, w, sizeof(w));
        snprintf(buf, size, "one or more of %s", w);
        break;
    }
    case T_UINT:
    case T_NUMBER:
        snprintf(buf, size, "%s, %s to %s", type_name(k), lo, hi);
        break;
    case T_OCTAL:
        snprintf(buf, size, "octal, 0 to 0%o", (unsigned)k->max);
        break;
    case T_SIZE:
        fmt_size(k->min, lo, sizeof(lo));
        fmt_size(k->max, hi, sizeof(hi));
        snprintf(buf, size, "size, %s to %s", lo, hi);
        break;
    case T_DURATION:
        fmt_duration(k->min, lo, sizeof(lo));
        fmt_duration(k->max, hi, sizeof(hi));
        snprintf(buf, size, "duration, %s to %s", lo, hi);
        break;
    default:
        snprintf(buf, size, "%s", type_name(k));
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
            fprintf(f, "#%s %s\n", k->name, sample_value(k));
        } else if (k->def[0] == '\0')
            fprintf(f, "#%s \"\"\n", k->name);
        else
            fprintf(f, "#%s %s\n", k->name, k->def);
    }
}

static void
write_list(FILE *f, const struct config_list *l)
{
    for (size_t i = 0; i < l->n; i++)
        fprintf(f, "%s%s", i ? "," : "", l->items[i]);
}

static void
write_hosts(FILE *f, const struct config_hosts *h)
{
    size_t n = 0;

    for (size_t i = 0; i < h->n_nets; i++) {
        char buf[INET6_ADDRSTRLEN];

        if (inet_ntop(h->nets[i].family, h->nets[i].addr, buf, sizeof(buf)) != NULL)
            fprintf(f, "%s%s/%u", n++ ? "," : "", buf, h->nets[i].prefix);
    }
    for (size_t i = 0; i < h->n_names; i++)
        fprintf(f, "%s%s", n++ ? "," : "", h->names[i]);
}

void
config_write_effective(const struct config *cfg, FILE *f)
{
    for (size_t i = 0; i < config_n_keys; i++) {
        const struct key *k = &config_keys[i];
        const void *field = (const char *)cfg + k->offset;

        fprintf(f, "%s ", k->name);
        switch (k->type) {
        case T_STRING:
        case T_PATH:
        case T_SOCKET:
        case T_HOSTPORT:
        case T_USER: {
            const char *s = *(char *const *)field;

            if (*s == '\0' || s[0] == ' ' || s[strlen(s) - 1] == ' ')
                fprintf(f, "\"%s\"", s);
            else
                fputs(s, f);
            break;
        }
        case T_BOOL:
            fputs(*(const bool *)field ? "yes" : "no", f);
            break;
        case T_UINT:
            fprintf(f, "%u", *(const unsigned *)field);
            break;
        case T_OCTAL:
            fprintf(f, "%04o", *(const unsigned *)field);
            break;
        case T_NUMBER:
            fprintf(f, "%g", *(const double *)field);
            break;
        case T_SIZE:
            fprintf(f, "%llu", (unsigned long long)*(const uint64_t *)field);
            break;
        case T_DURATION:
            fprintf(f, "%lus", (unsigned long)*(const uint32_t *)field);
            break;
        case T_ENUM:
            fputs(enum_word(k->words, k->values, *(const int *)field), f);
            break;
        case T_WORDS:
            for (size_t w = 0, n = 0; k->words[w]; w++)
                if (*(const unsigned *)field & (unsigned)k->values[w])
                    fprintf(f, "%s%s", n++ ? " " : "", k->words[w]);
            break;
        case T_ADDRS:
            write_list(f, field);
            if (((const struct config_list *)field)->n == 0)
                fputs("\"\"", f);
            break;
        case T_HOSTS: {
            const struct config_hosts *h = field;

            write_hosts(f, h);
            if (h->n_nets + h->n_names == 0)
                fputs("\"\"", f);
            break;
        }
        }
        fputc('\n', f);
    }
}
