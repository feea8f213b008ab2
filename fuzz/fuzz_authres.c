/*
 * fuzz_authres.c - libFuzzer target: bytes -> the Authentication-Results
 * parser and the reply verification built on it.
 *
 * The input, cut at its first NUL, is parsed as one field body; whatever
 * parsed is read back (every result and property). Then it is given to
 * reply_verify() twice as a trusted field, once alone and once after a
 * field that passes, with an envelope sender and a From: taken from its
 * first two lines, so the domain and alignment code sees hostile text too.
 * Single-threaded; no allocation kept between inputs.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "authres.h"
#include "reply_verify.h"

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
            {"Authentication-Results", "mx.test; dmarc=pass; dkim=pass header.d=example.com"},
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

        sink += reply_verify(&in);
        in.headers = h;
        in.n_headers = 2;
        sink += reply_verify(&in);
        if (reply_verify_org_domain(env, org, sizeof(org)))
            sink += strlen(org);
    }
    (void)sink;
    free(s);
    return 0;
}
