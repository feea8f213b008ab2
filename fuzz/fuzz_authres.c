/*
 * fuzz_authres.c - libFuzzer target: bytes -> the Authentication-Results
 * parser and the reply verification built on it.
 *
 * The input, cut at its first NUL, is parsed as one field body; whatever
 * parsed is read back (every result and property). Then it is given to
 * reply_verify() twice as a trusted field, once alone and once after a
 * field that passes, with an envelope sender and a From: taken from its
 * first two lines, so the domain and alignment code sees hostile text too.
 *
 * Last, the lines from the third on become a message's fields, one
 * Authentication-Results each after a trusted pass, where a line "*N"
 * repeats the field before it N times (N up to 99): a short input reaches
 * past REPLY_VERIFY_FIELDS_MAX. Past the cap the fields must prove nothing
 * (fail closed); anything else aborts.
 * Single-threaded; no allocation kept between inputs.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "authres.h"
#include "reply_verify.h"

#define FUZZ_FIELDS_MAX ((size_t)REPLY_VERIFY_FIELDS_MAX * 2)

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct authres fuzz_ar;

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    return 0;
}

/* Line n (0-based) of text into out, at most size - 1 bytes. */
static void
fuzz_line(const char *text, unsigned n, char *out, size_t size)
{
    const char *p = text;
    size_t len;

    while (n-- > 0 && p != NULL) {
        p = strchr(p, '\n');
        if (p != NULL)
            p++;
    }
    if (p == NULL) {
        out[0] = '\0';
        return;
    }
    len = strcspn(p, "\n");
    if (len >= size)
        len = size - 1;
    memcpy(out, p, len);
    out[len] = '\0';
}

/* A "*N" line: how many more copies of the field before it. */
static unsigned
fuzz_repeat(const char *line)
{
    unsigned n = 0;

    if (line[0] != '*' || line[1] < '0' || line[1] > '9')
        return 0;
    for (const char *p = line + 1; *p >= '0' && *p <= '9' && n < 100; p++)
        n = n * 10 + (unsigned)(*p - '0');
    return n < 100 ? n : 99;
}

/*
 * The lines of s (split in place) from the third on as fields after a
 * trusted pass; the fields past the cap must prove nothing.
 */
static size_t
fuzz_fields(char *s, const struct reply_verify_input *base)
{
    struct reply_header h[FUZZ_FIELDS_MAX];
    struct reply_verify_input in = *base;
    enum reply_verify_refusal why;
    size_t n = 0, n_authres;
    unsigned proved;
    char *line = s;

    h[n++] = (struct reply_header){"Authentication-Results",
                                   "mx.test; dmarc=pass header.from=example.com"};
    for (unsigned i = 0; i < 2 && line != NULL; i++) {
        line = strchr(line, '\n');
        if (line != NULL)
            line++;
    }
    while (line != NULL && n < FUZZ_FIELDS_MAX) {
        char *nl = strchr(line, '\n');
        unsigned rep = fuzz_repeat(line);

        if (nl != NULL)
            *nl = '\0';
        if (rep > 0)
            for (unsigned k = 0; k < rep && n < FUZZ_FIELDS_MAX; k++, n++)
                h[n] = h[n - 1];
        else
            h[n++] = (struct reply_header){"Authentication-Results", line};
        line = nl != NULL ? nl + 1 : NULL;
    }
    n_authres = n;
    in.headers = h;
    in.n_headers = n;
    proved = reply_verify(&in, &why);
    if (n_authres > REPLY_VERIFY_FIELDS_MAX &&
        ((proved & ~(unsigned)(REPLY_REQUIRE_ANY | REPLY_REQUIRE_AUTHENTICATED)) != 0 ||
         why != REPLY_VERIFY_OVER_CAP))
        abort();
    if (why != REPLY_VERIFY_READ && (proved & ~(unsigned)REPLY_REQUIRE_ANY) != 0)
        abort();
    return proved + strlen(reply_verify_refusal_name(why));
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    char env[300], from[300];
    volatile size_t sink = 0;

    if (s == NULL)
        return 0;
    memcpy(s, data, size);
    s[size] = '\0';
    if (authres_parse(s, &fuzz_ar) == 0) {
        for (size_t i = 0; i < fuzz_ar.n_results; i++) {
            const struct authres_result *r = &fuzz_ar.results[i];

            sink += strlen(r->method) + strlen(r->result);
            for (size_t k = 0; k < r->n_props; k++)
                sink += strlen(r->props[k].name) + strlen(r->props[k].value);
            if (authres_prop(r, "header.d") != NULL)
                sink++;
        }
    }
    fuzz_line(s, 0, env, sizeof(env));
    fuzz_line(s, 1, from, sizeof(from));
    {
        struct reply_header h[2] = {
            {"Authentication-Results",
             "mx.test; dmarc=pass header.from=example.com; dkim=pass header.d=example.com"},
            {"Authentication-Results", s},
        };
        struct reply_verify_input in = {
            .env_sender = env[0] ? env : "a@example.com",
            .authserv_id = "mx.test",
            .from = from[0] ? from : "a@example.com",
            .headers = h + 1,
            .n_headers = 1,
        };
        char org[256];

        sink += reply_verify(&in, NULL);
        in.headers = h;
        in.n_headers = 2;
        sink += reply_verify(&in, NULL);
        if (reply_verify_org_domain(env, org, sizeof(org)))
            sink += strlen(org);
        sink += fuzz_fields(s, &in);
    }
    (void)sink;
    free(s);
    return 0;
}
