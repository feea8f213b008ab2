/*
 * fuzz_rules.c - libFuzzer target: rule file text -> rule loader.
 *
 * Each input is written as the only *.rules file of a private directory
 * and loaded; every outcome but a crash, a leak or a hang is fine.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "classifier.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char fuzz_dir[64];
static char fuzz_file[96];

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    strcpy(fuzz_dir, "/tmp/slop-fuzz-rules-XXXXXX");
    if (mkdtemp(fuzz_dir) == NULL)
        abort();
    snprintf(fuzz_file, sizeof(fuzz_file), "%s/fuzz.rules", fuzz_dir);
    return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct classifier *c = NULL;
    FILE *f = fopen(fuzz_file, "wb");

    if (f == NULL)
        abort();
    fwrite(data, 1, size, f);
    fclose(f);
    if (classifier_new(fuzz_dir, NULL, NULL, NULL, &c) == 0) {
        struct classifier_result *res = NULL;
        static const char msg[] = "Subject: [PATCH] x: y\n\nfix\n\nSigned-off-by: A <a@b>\n---\n"
                                  "diff --git a/x.c b/x.c\n--- a/x.c\n+++ b/x.c\n@@ -1,2 +1,2 @@\n"
                                  "-\tmutex_unlock(&l);\n+\tmutex_destroy(&l);\n /* c */\n";
        if (classifier_scan(c, msg, sizeof(msg) - 1, NULL, &res) == 0)
            classifier_result_free(res);
        classifier_free(c);
    }
    return 0;
}
