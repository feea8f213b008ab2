/*
 * replay.c - a stand-in for libFuzzer's driver, so the regression inputs
 * of every target run under gcc in ctest: each argument is a file or a
 * directory of files, fed once to LLVMFuzzerTestOneInput().
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define REPLAY_MAX_BYTES (8u << 20)

static int
replay_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    uint8_t *buf;
    size_t len;

    if (f == NULL) {
        fprintf(stderr, "replay: cannot open '%s'\n", path);
        return -1;
    }
    buf = malloc(REPLAY_MAX_BYTES);
    if (buf == NULL) {
        fclose(f);
        return -1;
    }
    len = fread(buf, 1, REPLAY_MAX_BYTES, f);
    fclose(f);
    LLVMFuzzerTestOneInput(buf, len);
    free(buf);
    return 0;
}

static int
replay_path(const char *path, unsigned *count)
{
    struct dirent **names;
    struct stat st;
    int n, bad = 0;

    if (stat(path, &st) < 0) {
        fprintf(stderr, "replay: cannot stat '%s'\n", path);
        return -1;
    }
    if (!S_ISDIR(st.st_mode)) {
        (*count)++;
        return replay_file(path);
    }
    n = scandir(path, &names, NULL, alphasort);
    if (n < 0)
        return -1;
    for (int i = 0; i < n; i++) {
        char sub[4096];

        if (names[i]->d_name[0] != '.') {
            snprintf(sub, sizeof(sub), "%s/%s", path, names[i]->d_name);
            if (stat(sub, &st) == 0 && S_ISREG(st.st_mode)) {
                (*count)++;
                if (replay_file(sub) < 0)
                    bad = -1;
            }
        }
        free(names[i]);
    }
    free(names);
    return bad;
}

int
main(int argc, char **argv)
{
    unsigned count = 0;
    int bad = 0;

    LLVMFuzzerInitialize(&argc, &argv);
    for (int i = 1; i < argc; i++)
        if (replay_path(argv[i], &count) < 0)
            bad = 1;
    printf("replayed %u inputs\n", count);
    return bad;
}
