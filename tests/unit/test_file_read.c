/* test_file_read.c - the capped whole-file reader: files at, under and
 * over the cap, cut or refused; empty files, NULs, directories, missing
 * files, and a pipe longer than one read. Files live in a private
 * directory under TMPDIR. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "file_read.h"

static char dir[256];

static int
setup(void **state)
{
    const char *tmp = getenv("TMPDIR");

    (void)state;
    snprintf(dir, sizeof(dir), "%s/test_file_read.XXXXXX", tmp ? tmp : "/tmp");
    return mkdtemp(dir) ? 0 : -1;
}

static int
teardown(void **state)
{
    char path[300];

    (void)state;
    snprintf(path, sizeof(path), "%s/f", dir);
    unlink(path);
    return rmdir(dir);
}

/* Write n bytes of text into dir/f; its path. */
static const char *
put(const void *text, size_t n)
{
    static char path[300];
    FILE *f;

    snprintf(path, sizeof(path), "%s/f", dir);
    f = fopen(path, "w");
    assert_non_null(f);
    assert_int_equal(fwrite(text, 1, n, f), n);
    assert_int_equal(fclose(f), 0);
    return path;
}

/* Files of 0..12 bytes against caps of 0..12, refused and cut. */
static void
test_caps(void **state)
{
    static const char text[] = "0123456789ab";

    (void)state;
    for (size_t size = 0; size <= 12; size++) {
        const char *path = put(text, size);

        for (size_t max = 0; max <= 12; max++) {
            char *got = (char *)"untouched";
            size_t len = 99;
            int r = file_read(path, max, 0, &got, &len);

            if (size > max) {
                assert_int_equal(r, -EFBIG);
                assert_string_equal(got, "untouched");
                assert_int_equal(len, 99);
            } else {
                assert_int_equal(r, 0);
                assert_int_equal(len, size);
                assert_memory_equal(got, text, size);
                assert_int_equal(got[len], '\0');
                free(got);
            }
            assert_int_equal(file_read(path, max, FILE_READ_CUT, &got, &len), 0);
            assert_int_equal(len, size < max ? size : max);
            assert_memory_equal(got, text, len);
            assert_int_equal(got[len], '\0');
            free(got);
        }
    }
}

/* NUL bytes are text like any other: the length says where it ends. */
static void
test_nul_bytes(void **state)
{
    const char *path = put("a\0b\0", 4);
    char *got;
    size_t len;

    (void)state;
    assert_int_equal(file_read(path, 100, 0, &got, &len), 0);
    assert_int_equal(len, 4);
    assert_memory_equal(got, "a\0b\0", 5);
    free(got);
}

static void
test_errors(void **state)
{
    char path[300], *got = NULL;
    size_t len = 0;

    (void)state;
    snprintf(path, sizeof(path), "%s/missing", dir);
    assert_int_equal(file_read(path, 100, 0, &got, &len), -ENOENT);
    assert_int_equal(file_read(dir, 100, 0, &got, &len), -EISDIR);
    assert_null(got);
}

/* A pipe has no size: read in chunks, across several of them, up to the
 * cap and past it. */
static void
test_pipe(void **state)
{
    static char text[50000];
    const size_t caps[] = {sizeof(text), sizeof(text) - 1, 9000};

    (void)state;
    for (size_t i = 0; i < sizeof(text); i++)
        text[i] = (char)('a' + i % 26);
    for (size_t c = 0; c < sizeof(caps) / sizeof(caps[0]); c++) {
        for (unsigned flags = 0; flags <= FILE_READ_CUT; flags += FILE_READ_CUT) {
            size_t len = 0, want = sizeof(text) < caps[c] ? sizeof(text) : caps[c];
            char *got = NULL;
            int fds[2], status, r;
            pid_t pid;

            assert_int_equal(pipe(fds), 0);
            pid = fork();
            assert_true(pid >= 0);
            if (pid == 0) {
                close(fds[0]);
                _exit(write(fds[1], text, sizeof(text)) == (ssize_t)sizeof(text) ? 0 : 1);
            }
            close(fds[1]);
            r = file_read_fd(fds[0], caps[c], flags, &got, &len);
            close(fds[0]);
            assert_int_equal(waitpid(pid, &status, 0), pid);
            if (want < sizeof(text) && !(flags & FILE_READ_CUT)) {
                assert_int_equal(r, -EFBIG);
                continue;
            }
            assert_int_equal(r, 0);
            assert_int_equal(len, want);
            assert_memory_equal(got, text, want);
            assert_int_equal(got[len], '\0');
            free(got);
        }
    }
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_caps),
        cmocka_unit_test(test_nul_bytes),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_pipe),
    };

    return cmocka_run_group_tests(tests, setup, teardown);
}
