/*
 * rule_scores.c - a scores file's text to the scores of rules already
 * loaded (docs/rules.md, "Scores files").
 *
 * A scores file holds one "score NAME N" per line, '#' comments and blank
 * lines, as SpamAssassin's score lines do; slopctl fit writes them. It only
 * replaces the score in effect: the rule file's own score stays the prior
 * (struct rule.file_score). A scores file may not turn a note (score 0)
 * into a scoring rule nor flip a score's sign, so a rule that names a gap
 * never rewards and AI_TOOLS_DISCLOSED never adds to the score, whatever a
 * fit produced. Every problem is recorded with its line; the load fails.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rule.h"

static int
by_name_cmp(const void *a, const void *b)
{
    return strcmp((*(struct rule *const *)a)->name, (*(struct rule *const *)b)->name);
}

/* by_name: the set's rules sorted by name. */
static struct rule *
find_rule(struct rule *const *by_name, size_t n, const char *name)
{
    size_t lo = 0, hi = n;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(name, by_name[mid]->name);

        if (c == 0)
            return by_name[mid];
        if (c < 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    return NULL;
}

static void
parse_line(struct rule_set *set, struct rule *const *by_name, unsigned *seen, size_t file,
           unsigned line, char *p, struct rule_diag *d)
{
    const char *key = rule_parse_word(&p), *name, *num, *rest;
    struct rule *rule;
    double n;

    if (strcmp(key, "score") != 0) {
        rule_parse_diag(d, file, line, "expected 'score NAME N', got '%.40s'", key);
        return;
    }
    name = rule_parse_word(&p);
    num = rule_parse_word(&p);
    rest = rule_parse_word(&p);
    if (*name == '\0' || *num == '\0' || (*rest != '\0' && *rest != '#')) {
        rule_parse_diag(d, file, line, "expected 'score NAME N'");
        return;
    }
    if (rule_parse_number(num, &n) < 0) {
        rule_parse_diag(d, file, line, "bad number '%.40s'", num);
        return;
    }
    rule = find_rule(by_name, set->n_rules, name);
    if (rule == NULL) {
        rule_parse_diag(d, file, line, "unknown rule '%.70s'", name);
        return;
    }
    if (rule->helper) {
        rule_parse_diag(d, file, line, "helper rule '%s' never scores", rule->name);
        return;
    }
    if (seen[rule - set->rules] != 0) {
        rule_parse_diag(d, file, line, "duplicate score for '%s' (first at line %u)", rule->name,
                        seen[rule - set->rules]);
        return;
    }
    seen[rule - set->rules] = line;
    if (rule->file_score == 0 && n != 0) {
        rule_parse_diag(d, file, line, "rule '%s' is a note (score 0 in its rule file)",
                        rule->name);
        return;
    }
    if ((rule->file_score > 0 && n < 0) || (rule->file_score < 0 && n > 0)) {
        rule_parse_diag(d, file, line, "score for '%s' has the other sign than its rule file's",
                        rule->name);
        return;
    }
    rule->score = n;
}

int
rule_scores_parse(struct rule_set *set, size_t file, char *text, size_t len, struct rule_diag *d)
{
    unsigned *seen = NULL, line = 0;
    struct rule **by_name = NULL;
    size_t pos = 0;
    int r = -ENOMEM;

    by_name = malloc((set->n_rules + 1) * sizeof(struct rule *));
    seen = calloc(set->n_rules + 1, sizeof(*seen));
    if (by_name == NULL || seen == NULL)
        goto out;
    for (size_t i = 0; i < set->n_rules; i++)
        by_name[i] = &set->rules[i];
    qsort(by_name, set->n_rules, sizeof(struct rule *), by_name_cmp);

    while (pos < len) {
        char *s = text + pos, *nl, *p;
        size_t n;

        nl = memchr(s, '\n', len - pos);
        n = nl != NULL ? (size_t)(nl - s) : len - pos;
        pos += n + 1;
        line++;
        if (n > 0 && s[n - 1] == '\r')
            n--;
        if (memchr(s, '\0', n) != NULL) {
            rule_parse_diag(d, file, line, "NUL byte in line");
            continue;
        }
        s[n] = '\0';
        p = s + strspn(s, " \t");
        if (*p == '\0' || *p == '#')
            continue;
        parse_line(set, by_name, seen, file, line, p, d);
    }
    r = 0;
out:
    free(by_name);
    free(seen);
    return r;
}
