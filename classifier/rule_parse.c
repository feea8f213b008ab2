/*
 * rule_parse.c - one rule file's text to struct rule (docs/rules.md).
 *
 * Works line by line on the caller's mutable copy of the file, cutting
 * words in place. Every problem is recorded with its line and parsing goes
 * on, so one lint run shows them all. A rule with problems is still
 * appended: its name keeps later references from adding spurious errors,
 * and the load fails anyway.
 *
 * Comments: a line whose first non-blank character is '#', and anything
 * from a word starting with '#' after a complete condition, rule line or
 * kind list. A '#' inside describe or doc text (URL anchors) is text.
 *
 * Profiles: a `profile NAME...` line in column 1 before the file's first
 * rule marks every rule of the file; a rule's own `profile` attribute
 * replaces it. A rule marked for profiles of which none is the set's
 * profile is parsed and checked like any other, and set off.
 *
 * Patterns are only cut out and unescaped here; rule_set.c compiles them
 * and resolves combination names. No global state.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rule.h"
#include "rule_prefix.h"

struct parser {
    struct rule_set *set;
    struct rule_diag *d;
    size_t file;
    unsigned line;
    struct rule *cur; /* rule being filled, or NULL; the last of set->rules */
    bool skipping;    /* ignore attribute lines until the next rule line */
    /* Attribute lines seen for cur, valid or not, so a bad line does not
     * also report the attribute as missing. */
    bool seen_describe, seen_score, seen_doc, seen_kind, seen_class, seen_cond, seen_profile;
    bool file_profile;                     /* a file-level profile line was seen */
    bool file_off;                         /* and it does not name the set's profile */
    char file_profiles[RULE_PROFILES_MAX]; /* its names, space-separated */
};

static const struct {
    const char *name;
    enum rule_cond_type type;
} cond_names[] = {
    {"match", RULE_COND_MATCH},     {"nomatch", RULE_COND_NOMATCH},
    {"count", RULE_COND_COUNT},     {"measure", RULE_COND_MEASURE},
    {"pair", RULE_COND_PAIR},       {"all_of", RULE_COND_ALL_OF},
    {"any_of", RULE_COND_ANY_OF},   {"at_least", RULE_COND_AT_LEAST},
    {"none_of", RULE_COND_NONE_OF},
};

static const struct {
    const char *name;
    enum rule_op op;
} op_names[] = {
    {"<", RULE_OP_LT},  {"<=", RULE_OP_LE}, {">", RULE_OP_GT},
    {">=", RULE_OP_GE}, {"==", RULE_OP_EQ}, {"!=", RULE_OP_NE},
};

static const struct {
    const char *name;
    enum classifier_kind kind;
} kind_names[] = {
    {"patch", CLASSIFIER_KIND_PATCH},
    {"report", CLASSIFIER_KIND_REPORT},
    {"reply", CLASSIFIER_KIND_REPLY},
    {"other", CLASSIFIER_KIND_OTHER},
};

void
rule_parse_diag(struct rule_diag *d, size_t file, unsigned line, const char *fmt, ...)
{
    struct rule_diag_entry *e;
    va_list ap;

    d->problems++;
    if (d->n >= RULE_DIAG_KEEP)
        return;
    if (d->n == d->cap) {
        size_t cap = d->cap ? d->cap * 2 : 16;

        if (cap > RULE_DIAG_KEEP)
            cap = RULE_DIAG_KEEP;
        e = realloc(d->v, cap * sizeof(*e));
        if (e == NULL) {
            d->nomem = true;
            return;
        }
        d->v = e;
        d->cap = cap;
    }
    e = &d->v[d->n];
    e->file = file;
    e->line = line;
    e->seq = (unsigned)d->n;
    va_start(ap, fmt);
    vsnprintf(e->reason, sizeof(e->reason), fmt, ap);
    va_end(ap);
    d->n++;
}

static void
cond_release(struct rule_cond *c)
{
    for (size_t i = 0; i < 2; i++) {
        free(c->pat[i].source);
        pcre2_code_free(c->pat[i].code);
        rule_prefix_free(c->pat[i].prefix);
    }
    for (size_t i = 0; i < c->n_names; i++)
        free(c->names[i]);
    free(c->names);
    free(c->refs);
    memset(c, 0, sizeof(*c));
}

void
rule_parse_release(struct rule *r)
{
    if (r == NULL)
        return;
    for (size_t i = 0; i < r->n_conds; i++)
        cond_release(&r->conds[i]);
    free(r->conds);
    free(r->describe);
    free(r->doc);
    free(r->profiles);
    memset(r, 0, sizeof(*r));
}

static bool
is_blank(char c)
{
    return c == ' ' || c == '\t';
}

static char *
skip_blanks(char *p)
{
    while (is_blank(*p))
        p++;
    return p;
}

/* Cut the next blank-separated word out of *p; "" at the end of the line. */
static char *
next_word(char **p)
{
    char *s = skip_blanks(*p), *e = s;

    while (*e != '\0' && !is_blank(*e))
        e++;
    if (*e != '\0')
        *e++ = '\0';
    *p = e;
    return s;
}

static bool
at_end(char *p)
{
    p = skip_blanks(p);
    return *p == '\0' || *p == '#';
}

static bool
name_valid(const char *s)
{
    size_t n;

    for (n = 0; s[n] != '\0'; n++) {
        char c = s[n];
        if (!((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'))
            return false;
    }
    return n > 0 && n <= RULE_NAME_MAX;
}

/* Decimal only ("-1.5", "4", ".5"), parsed by hand so the locale's
 * decimal point cannot change what a rule file means. */
static int
parse_number(const char *s, double *ret)
{
    const char *p = s;
    double sign = 1.0, whole = 0.0, frac = 0.0, scale = 1.0;
    unsigned digits = 0;

    if (*p == '+' || *p == '-')
        sign = *p++ == '-' ? -1.0 : 1.0;
    for (; *p >= '0' && *p <= '9'; p++, digits++)
        whole = whole * 10.0 + (*p - '0');
    if (*p == '.') {
        for (p++; *p >= '0' && *p <= '9'; p++, digits++) {
            frac = frac * 10.0 + (*p - '0');
            scale *= 10.0;
        }
    }
    if (*p != '\0' || digits == 0 || digits > 18)
        return -EINVAL;
    *ret = sign * (whole + frac / scale);
    return 0;
}

#define DIAG(ps, ...) rule_parse_diag((ps)->d, (ps)->file, (ps)->line, __VA_ARGS__)

static int
parse_op(struct parser *ps, char **p, enum rule_op *ret)
{
    const char *w = next_word(p);

    for (size_t i = 0; i < sizeof(op_names) / sizeof(op_names[0]); i++) {
        if (strcmp(w, op_names[i].name) == 0) {
            *ret = op_names[i].op;
            return 0;
        }
    }
    if (*w == '\0')
        DIAG(ps, "missing operator (one of < <= > >= == !=)");
    else
        DIAG(ps, "unknown operator '%.40s' (one of < <= > >= == !=)", w);
    return -EINVAL;
}

static int
parse_number_word(struct parser *ps, char **p, double *ret)
{
    const char *w = next_word(p);

    if (*w == '\0') {
        DIAG(ps, "missing number");
        return -EINVAL;
    }
    if (parse_number(w, ret) < 0) {
        DIAG(ps, "bad number '%.40s'", w);
        return -EINVAL;
    }
    return 0;
}

/* *p points at the opening '/'. Cuts /RE/FLAGS; "\/" stands for "/", every
 * other escape is PCRE2's and is kept as written. */
static int
parse_pattern(struct parser *ps, char **p, struct rule_pattern *pat)
{
    char *s = *p + 1, *e, *o, *f;
    size_t raw;

    for (e = s; *e != '\0' && *e != '/'; e++)
        if (*e == '\\' && e[1] != '\0')
            e++;
    if (*e != '/') {
        DIAG(ps, "unterminated pattern (a '/' inside is written '\\/')");
        return -EINVAL;
    }
    raw = (size_t)(e - s);
    if (raw == 0) {
        DIAG(ps, "empty pattern");
        return -EINVAL;
    }
    if (raw > RULE_PATTERN_MAX) {
        DIAG(ps, "pattern longer than %u bytes", RULE_PATTERN_MAX);
        return -EINVAL;
    }

    pat->options = 0;
    for (f = e + 1; *f != '\0' && !is_blank(*f); f++) {
        switch (*f) {
        case 'i':
            pat->options |= PCRE2_CASELESS;
            break;
        case 's':
            pat->options |= PCRE2_DOTALL;
            break;
        case 'x':
            pat->options |= PCRE2_EXTENDED;
            break;
        case 'n':
            pat->options |= PCRE2_NO_AUTO_CAPTURE;
            break;
        default:
            if ((unsigned char)*f >= 0x21 && (unsigned char)*f < 0x7f)
                DIAG(ps, "unknown pattern flag '%c' (flags are i, s, x, n)", *f);
            else
                DIAG(ps, "unknown pattern flag byte 0x%02x (flags are i, s, x, n)",
                     (unsigned char)*f);
            return -EINVAL;
        }
    }

    pat->source = malloc(raw + 1);
    if (pat->source == NULL)
        return -ENOMEM;
    o = pat->source;
    for (char *q = s; q < e; q++) {
        /* The scan above guarantees a backslash is never the last byte. */
        if (*q == '\\' && q[1] == '/') {
            *o++ = '/';
            q++;
        } else if (*q == '\\') {
            *o++ = *q++;
            *o++ = *q;
        } else {
            *o++ = *q;
        }
    }
    *o = '\0';
    pat->len = (size_t)(o - pat->source);
    *p = f;
    return 0;
}

static int
parse_region_pattern(struct parser *ps, char **p, struct rule_cond *c, const char *key)
{
    const char *w = next_word(p);

    if (*w == '\0') {
        DIAG(ps, "%s needs a region and a /pattern/", key);
        return -EINVAL;
    }
    if (region_parse(w, &c->region) < 0) {
        DIAG(ps, "unknown region '%.40s'", w);
        return -EINVAL;
    }
    *p = skip_blanks(*p);
    if (**p != '/') {
        DIAG(ps, "%s needs a /pattern/ after the region", key);
        return -EINVAL;
    }
    return parse_pattern(ps, p, &c->pat[0]);
}

static int
parse_names(struct parser *ps, char **p, struct rule_cond *c, const char *key)
{
    char *w;
    int r;

    while (!at_end(*p)) {
        w = next_word(p);
        if (!name_valid(w)) {
            DIAG(ps, "bad rule name '%.70s' in %s", w, key);
            return -EINVAL;
        }
        if (c->n_names >= RULE_MAX_REFS) {
            DIAG(ps, "more than %u rules in %s", RULE_MAX_REFS, key);
            return -EINVAL;
        }
        if (c->names == NULL) {
            c->names = calloc(RULE_MAX_REFS, sizeof(*c->names));
            if (c->names == NULL)
                return -ENOMEM;
        }
        c->names[c->n_names] = strdup(w);
        if (c->names[c->n_names] == NULL)
            return -ENOMEM;
        c->n_names++;
    }
    if (c->n_names == 0) {
        DIAG(ps, "%s needs at least one rule name", key);
        return -EINVAL;
    }
    /* Shrink: most lists name a handful of rules. */
    if (c->n_names < RULE_MAX_REFS) {
        char **v = realloc(c->names, c->n_names * sizeof(*v));
        if (v != NULL)
            c->names = v;
    }
    c->refs = calloc(c->n_names, sizeof(*c->refs));
    r = c->refs == NULL ? -ENOMEM : 0;
    return r;
}

/* "measure NAME OP NUMBER" after the keyword. */
static int
parse_measure_cond(struct parser *ps, char **p, struct rule_cond *c)
{
    const char *w = next_word(p);
    int r;

    if (*w == '\0') {
        DIAG(ps, "measure needs a name, an operator and a number");
        return -EINVAL;
    }
    if (measure_parse(w, &c->measure) < 0) {
        DIAG(ps, "unknown measure '%.40s'", w);
        return -EINVAL;
    }
    r = parse_op(ps, p, &c->op);
    if (r == 0)
        r = parse_number_word(ps, p, &c->number);
    return r;
}

/* "pair /removed/ /added/" after the keyword. */
static int
parse_pair_cond(struct parser *ps, char **p, struct rule_cond *c)
{
    int r = 0;

    for (size_t i = 0; i < 2 && r == 0; i++) {
        *p = skip_blanks(*p);
        if (**p != '/') {
            DIAG(ps, "pair needs two patterns: /removed/ /added/");
            r = -EINVAL;
        } else {
            r = parse_pattern(ps, p, &c->pat[i]);
        }
    }
    return r;
}

/* "at_least N NAME..." after the keyword. */
static int
parse_at_least_cond(struct parser *ps, char **p, struct rule_cond *c, const char *key)
{
    double n;
    int r;

    r = parse_number_word(ps, p, &n);
    if (r == 0 && (n < 1 || n > RULE_MAX_REFS || n != (double)(unsigned)n)) {
        DIAG(ps, "at_least needs a whole number from 1 to %u", RULE_MAX_REFS);
        r = -EINVAL;
    }
    if (r == 0) {
        c->at_least = (unsigned)n;
        r = parse_names(ps, p, c, key);
    }
    if (r == 0 && c->at_least > c->n_names) {
        DIAG(ps, "at_least %u names only %zu rules", c->at_least, c->n_names);
        r = -EINVAL;
    }
    return r;
}

/* What follows a condition's keyword, by its type, into *c. */
static int
parse_cond_body(struct parser *ps, char **p, struct rule_cond *c, const char *key)
{
    int r = -EINVAL;

    switch (c->type) {
    case RULE_COND_MATCH:
    case RULE_COND_NOMATCH:
        r = parse_region_pattern(ps, p, c, key);
        break;
    case RULE_COND_COUNT:
        r = parse_region_pattern(ps, p, c, key);
        if (r == 0)
            r = parse_op(ps, p, &c->op);
        if (r == 0)
            r = parse_number_word(ps, p, &c->number);
        break;
    case RULE_COND_MEASURE:
        r = parse_measure_cond(ps, p, c);
        break;
    case RULE_COND_PAIR:
        r = parse_pair_cond(ps, p, c);
        break;
    case RULE_COND_AT_LEAST:
        r = parse_at_least_cond(ps, p, c, key);
        break;
    case RULE_COND_ALL_OF:
    case RULE_COND_ANY_OF:
    case RULE_COND_NONE_OF:
        r = parse_names(ps, p, c, key);
        break;
    }
    return r;
}

static int
parse_condition(struct parser *ps, enum rule_cond_type type, const char *key, char *p)
{
    struct rule *rule = ps->cur;
    struct rule_cond c = {.type = type, .line = ps->line};
    struct rule_cond *v;
    int r;

    ps->seen_cond = true;
    r = parse_cond_body(ps, &p, &c, key);
    if (r == 0 && !at_end(p)) {
        DIAG(ps, "unexpected '%.40s' after %s", skip_blanks(p), key);
        r = -EINVAL;
    }
    if (r == 0 && rule->n_conds >= RULE_MAX_CONDS) {
        DIAG(ps, "more than %u conditions in rule '%s'", RULE_MAX_CONDS, rule->name);
        r = -EINVAL;
    }
    if (r < 0)
        goto out;

    v = realloc(rule->conds, (rule->n_conds + 1) * sizeof(*v));
    if (v == NULL) {
        r = -ENOMEM;
        goto out;
    }
    rule->conds = v;
    rule->conds[rule->n_conds++] = c;
    return 0;
out:
    cond_release(&c);
    /* A reported problem is not a failure of the parse itself. */
    return r == -ENOMEM ? r : 0;
}

static int
parse_describe(struct parser *ps, char *p)
{
    size_t len;

    if (ps->seen_describe) {
        DIAG(ps, "duplicate describe in rule '%s'", ps->cur->name);
        return 0;
    }
    ps->seen_describe = true;
    p = skip_blanks(p);
    len = strlen(p);
    while (len > 0 && is_blank(p[len - 1]))
        len--;
    if (len == 0) {
        DIAG(ps, "describe needs text");
        return 0;
    }
    ps->cur->describe = strndup(p, len);
    return ps->cur->describe == NULL ? -ENOMEM : 0;
}

static int
parse_score(struct parser *ps, char *p)
{
    double n;

    if (ps->seen_score) {
        DIAG(ps, "duplicate score in rule '%s'", ps->cur->name);
        return 0;
    }
    ps->seen_score = true;
    if (ps->cur->helper) {
        DIAG(ps, "helper rule '%s' never scores; remove the score", ps->cur->name);
        return 0;
    }
    if (parse_number_word(ps, &p, &n) < 0)
        return 0;
    if (!at_end(p)) {
        DIAG(ps, "unexpected '%.40s' after score", skip_blanks(p));
        return 0;
    }
    ps->cur->score = n;
    ps->cur->file_score = n;
    ps->cur->has_score = true;
    return 0;
}

static int
parse_doc(struct parser *ps, char *p)
{
    const char *w;

    if (ps->seen_doc) {
        DIAG(ps, "duplicate doc in rule '%s'", ps->cur->name);
        return 0;
    }
    ps->seen_doc = true;
    w = next_word(&p);
    if (*w == '\0') {
        DIAG(ps, "doc needs a URL");
        return 0;
    }
    if (*skip_blanks(p) != '\0') {
        DIAG(ps, "doc takes one URL without blanks");
        return 0;
    }
    if (strncmp(w, "@/", 2) != 0 && strncmp(w, "https://", 8) != 0 &&
        strncmp(w, "http://", 7) != 0) {
        DIAG(ps, "doc must start with '@/', 'https://' or 'http://'");
        return 0;
    }
    ps->cur->doc = strdup(w);
    return ps->cur->doc == NULL ? -ENOMEM : 0;
}

static int
parse_kind(struct parser *ps, char *p)
{
    unsigned kinds = 0;

    if (ps->seen_kind) {
        DIAG(ps, "duplicate kind in rule '%s'", ps->cur->name);
        return 0;
    }
    ps->seen_kind = true;
    while (!at_end(p)) {
        const char *w = next_word(&p);
        size_t i;

        for (i = 0; i < sizeof(kind_names) / sizeof(kind_names[0]); i++)
            if (strcmp(w, kind_names[i].name) == 0)
                break;
        if (i == sizeof(kind_names) / sizeof(kind_names[0])) {
            DIAG(ps, "unknown kind '%.40s' (patch, report, reply, other)", w);
            return 0;
        }
        kinds |= 1u << kind_names[i].kind;
    }
    if (kinds == 0) {
        DIAG(ps, "kind needs at least one of patch, report, reply, other");
        return 0;
    }
    ps->cur->kinds = kinds;
    return 0;
}

/* "class style" or "class substance" (the default). */
static int
parse_class(struct parser *ps, char *p)
{
    const char *w;

    if (ps->seen_class) {
        DIAG(ps, "duplicate class in rule '%s'", ps->cur->name);
        return 0;
    }
    ps->seen_class = true;
    w = next_word(&p);
    if (!at_end(p) || (strcmp(w, "style") != 0 && strcmp(w, "substance") != 0)) {
        DIAG(ps, "class is 'style' or 'substance'");
        return 0;
    }
    if (ps->cur->helper) {
        DIAG(ps, "helper rule '%s' never scores; remove the class", ps->cur->name);
        return 0;
    }
    ps->cur->style = strcmp(w, "style") == 0;
    return 0;
}

/* "kernel", "generic", a site's "example-org": lower case, digits, '-', '_'. */
static bool
profile_name_valid(const char *s)
{
    size_t n = 0;

    for (; s[n] != '\0'; n++)
        if (!((s[n] >= 'a' && s[n] <= 'z') || (s[n] >= '0' && s[n] <= '9') || s[n] == '-' ||
              s[n] == '_'))
            return false;
    return n > 0 && n <= RULE_NAME_MAX;
}

/* Reads the names after "profile" into names (space-separated, for
 * `slopctl rules`); *ret_off: none is the set's profile. Returns false
 * after reporting a problem. */
static bool
parse_profile_names(struct parser *ps, char *p, char (*names)[RULE_PROFILES_MAX], bool *ret_off)
{
    const char *want = ps->set->profile != NULL ? ps->set->profile : CLASSIFIER_PROFILE_DEFAULT;
    bool named = false, off = true;
    size_t used = 0;

    while (!at_end(p)) {
        const char *w = next_word(&p);
        size_t wl = strlen(w);

        if (!profile_name_valid(w)) {
            DIAG(ps, "bad profile name '%.40s' (a-z, 0-9, '-' and '_')", w);
            return false;
        }
        if (used + wl + 2 > sizeof(*names)) {
            DIAG(ps, "profile names longer than %d bytes in all", RULE_PROFILES_MAX - 1);
            return false;
        }
        if (used > 0)
            (*names)[used++] = ' ';
        memcpy(*names + used, w, wl + 1);
        used += wl;
        named = true;
        if (strcmp(w, want) == 0) {
            off = false;
            ps->set->profile_named = true;
        }
    }
    if (!named) {
        DIAG(ps, "profile needs at least one name");
        return false;
    }
    *ret_off = off;
    return true;
}

static int
parse_profile(struct parser *ps, char *p)
{
    char names[RULE_PROFILES_MAX];
    bool off;

    if (ps->seen_profile) {
        DIAG(ps, "duplicate profile in rule '%s'", ps->cur->name);
        return 0;
    }
    ps->seen_profile = true;
    if (!parse_profile_names(ps, p, &names, &off))
        return 0;
    free(ps->cur->profiles);
    ps->cur->profiles = strdup(names);
    if (ps->cur->profiles == NULL)
        return -ENOMEM;
    ps->cur->off = off;
    return 0;
}

/* "profile NAME..." in column 1: the profiles of the whole file. */
static int
parse_file_profile(struct parser *ps, char *p)
{
    if (ps->cur != NULL || ps->skipping || ps->file_profile) {
        DIAG(ps, "a file's profile line comes once, before its first rule");
        return 0;
    }
    ps->file_profile = true;
    if (!parse_profile_names(ps, p, &ps->file_profiles, &ps->file_off)) {
        ps->file_off = false;
        ps->file_profiles[0] = '\0';
    }
    return 0;
}

static void
finish_rule(struct parser *ps)
{
    struct rule *r = ps->cur;

    if (r == NULL)
        return;
    if (!r->helper && !ps->seen_describe)
        rule_parse_diag(ps->d, ps->file, r->line, "rule '%s' has no describe", r->name);
    if (!r->helper && !ps->seen_score)
        rule_parse_diag(ps->d, ps->file, r->line, "rule '%s' has no score", r->name);
    if (!ps->seen_cond)
        rule_parse_diag(ps->d, ps->file, r->line, "rule '%s' has no condition", r->name);
    ps->cur = NULL;
}

/* A line in column 0: "rule NAME". */
static int
parse_rule_line(struct parser *ps, char *p)
{
    struct rule_set *set = ps->set;
    const char *w = next_word(&p), *name;
    struct rule *v;

    if (strcmp(w, "profile") == 0)
        return parse_file_profile(ps, p);
    if (strcmp(w, "rule") != 0) {
        /* Keep the open rule: most likely an attribute lost its indent. */
        DIAG(ps, "expected 'rule NAME' (attributes are indented), got '%.40s'", w);
        return 0;
    }
    finish_rule(ps);
    ps->skipping = true;
    ps->seen_describe = ps->seen_score = ps->seen_doc = ps->seen_kind = ps->seen_class = false;
    ps->seen_cond = ps->seen_profile = false;

    name = next_word(&p);
    if (*name == '\0') {
        DIAG(ps, "rule needs a NAME");
        return 0;
    }
    if (!name_valid(name)) {
        DIAG(ps, "bad rule name '%.70s' (A-Z, 0-9 and _, at most %d bytes)", name, RULE_NAME_MAX);
        return 0;
    }
    if (!at_end(p)) {
        DIAG(ps, "unexpected '%.40s' after rule name", skip_blanks(p));
        return 0;
    }
    if (set->n_rules >= RULE_MAX_RULES) {
        if (!ps->d->rules_capped)
            DIAG(ps, "more than %u rules in the set", RULE_MAX_RULES);
        ps->d->rules_capped = true;
        return 0;
    }
    if (set->n_rules == set->cap_rules) {
        size_t cap = set->cap_rules ? set->cap_rules * 2 : 64;

        v = realloc(set->rules, cap * sizeof(*v));
        if (v == NULL)
            return -ENOMEM;
        set->rules = v;
        set->cap_rules = cap;
    }
    ps->cur = &set->rules[set->n_rules++];
    memset(ps->cur, 0, sizeof(*ps->cur));
    strcpy(ps->cur->name, name);
    ps->cur->file = ps->file;
    ps->cur->line = ps->line;
    ps->cur->helper = strncmp(name, "__", 2) == 0;
    ps->cur->off = ps->file_off;
    if (ps->file_profiles[0] != '\0' && (ps->cur->profiles = strdup(ps->file_profiles)) == NULL)
        return -ENOMEM;
    ps->skipping = false;
    return 0;
}

/* An indented line: "key value". */
static int
parse_attribute(struct parser *ps, char *p)
{
    const char *key;

    if (ps->skipping)
        return 0;
    if (ps->cur == NULL) {
        DIAG(ps, "attribute outside a rule (a rule starts with 'rule NAME' in column 1)");
        ps->skipping = true;
        return 0;
    }
    key = next_word(&p);
    if (strcmp(key, "describe") == 0)
        return parse_describe(ps, p);
    if (strcmp(key, "score") == 0)
        return parse_score(ps, p);
    if (strcmp(key, "doc") == 0)
        return parse_doc(ps, p);
    if (strcmp(key, "kind") == 0)
        return parse_kind(ps, p);
    if (strcmp(key, "class") == 0)
        return parse_class(ps, p);
    if (strcmp(key, "profile") == 0)
        return parse_profile(ps, p);
    for (size_t i = 0; i < sizeof(cond_names) / sizeof(cond_names[0]); i++)
        if (strcmp(key, cond_names[i].name) == 0)
            return parse_condition(ps, cond_names[i].type, key, p);
    DIAG(ps, "unknown attribute '%.40s'", key);
    return 0;
}

/* A control byte other than a tab in line[0..n): a '\b' or '\f' that an
 * escaping layer (a script, a heredoc) turned into the byte itself. In a
 * pattern it matches nothing that mail holds, silently, so it is an
 * error (the line is still read, for the problems after it). */
static void
report_control_byte(struct parser *ps, const char *line, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)line[i];

        if ((c < 0x20 && c != '\t') || c == 0x7f) {
            DIAG(ps, "control byte 0x%02x in line at column %zu (write '\\b' as two characters)", c,
                 i + 1);
            return;
        }
    }
}

int
rule_parse_text(struct rule_set *set, size_t file, char *text, size_t len, struct rule_diag *d)
{
    struct parser ps = {.set = set, .d = d, .file = file};
    size_t pos = 0;
    int r = 0;

    while (pos < len && r == 0) {
        char *line = text + pos, *nl, *p;
        size_t n;

        nl = memchr(line, '\n', len - pos);
        n = nl != NULL ? (size_t)(nl - line) : len - pos;
        pos += n + 1;
        ps.line++;
        if (n > 0 && line[n - 1] == '\r')
            n--;
        if (memchr(line, '\0', n) != NULL) {
            DIAG(&ps, "NUL byte in line");
            continue;
        }
        line[n] = '\0';
        report_control_byte(&ps, line, n);
        p = skip_blanks(line);
        if (*p == '\0' || *p == '#')
            continue;
        if (p == line)
            r = parse_rule_line(&ps, p);
        else
            r = parse_attribute(&ps, p);
    }
    if (r == 0)
        finish_rule(&ps);
    return r;
}

/* For rule_scores.c, which reads the same words and numbers. */
char *
rule_parse_word(char **p)
{
    return next_word(p);
}

int
rule_parse_number(const char *s, double *ret)
{
    return parse_number(s, ret);
}
