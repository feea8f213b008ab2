/*
 * fuzz_scan.c - libFuzzer target: message bytes -> classifier_scan().
 *
 * The shipped rules are loaded once (SLOP_RULES_DIR at build time, or
 * $SLOP_RULES_DIR) so the fuzzer exercises the whole pipeline: MIME
 * parsing, the message model, measures and every rule.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "classifier.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct classifier *fuzz_classifier;

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
    const char *dir = getenv("SLOP_RULES_DIR");
    struct classifier_options opts;

    (void)argc;
    (void)argv;
    classifier_options_default(&opts);
    /* Small caps keep each run fast and make the limits themselves reachable. */
    opts.limits.max_message_bytes = 1u << 20;
    opts.limits.max_mime_parts = 64;
    if (classifier_new(dir ? dir : SLOP_RULES_DIR, &opts, NULL, NULL, &fuzz_classifier) < 0) {
        fprintf(stderr, "fuzz_scan: cannot load rules\n");
        abort();
    }
    return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct classifier_result *res = NULL;

    if (classifier_scan(fuzz_classifier, (const char *)data, size, NULL, &res) == 0)
        classifier_result_free(res);
    return 0;
}
