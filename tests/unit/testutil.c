/*
 * testutil.c - helpers shared by the unit tests; failures abort the test
 * program, since a test that cannot read its input has nothing to assert.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "classifier.h"
#include "file_read.h"
#include "message.h"
#include "message_build.h"
#include "mime_view.h"
#include "testutil.h"

#define TESTUTIL_FILE_MAX (64u << 20) /* larger than any fixture or source file */

#ifndef SLOP_FIXTURES
#define SLOP_FIXTURES "tests/fixtures"
#endif

char *
testutil_read_file(const char *path, size_t *ret_len)
{
    char *buf;
    size_t len;

    if (file_read(path, TESTUTIL_FILE_MAX, 0, &buf, &len) < 0) {
        fprintf(stderr, "testutil: cannot read '%s'\n", path);
        abort();
    }
    if (ret_len)
        *ret_len = len;
    return buf;
}

char *
testutil_read_fixture(const char *name, size_t *ret_len)
{
    char path[1024];

    snprintf(path, sizeof(path), "%s/%s", SLOP_FIXTURES, name);
    return testutil_read_file(path, ret_len);
}

const struct classifier_limits *
testutil_limits(void)
{
    static struct classifier_options opts;

    classifier_options_default(&opts);
    return &opts.limits;
}

struct message *
testutil_message(const char *raw, size_t len)
{
    struct classifier_options opts;
    struct mime_view *v = NULL;
    struct message *m = NULL;

    classifier_options_default(&opts);
    mime_view_global_init();
    if (mime_view_parse(raw, len, &opts.limits, &v) < 0)
        abort();
    if (message_build(v, &opts.limits, &m) < 0)
        abort();
    mime_view_free(v);
    return m;
}

struct message *
testutil_message_fixture(const char *name)
{
    size_t len;
    char *raw = testutil_read_fixture(name, &len);
    struct message *m = testutil_message(raw, len);

    free(raw);
    return m;
}
