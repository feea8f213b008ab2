/*
 * testutil.h - small helpers shared by the unit tests.
 */
#ifndef SLOP_TESTUTIL_H
#define SLOP_TESTUTIL_H

#include <stddef.h>

struct classifier_limits;
struct message;

/* The library's default limits (classifier_options_default()), for tests
 * that call a parser directly; never a copy of their values. */
const struct classifier_limits *testutil_limits(void);

/* Read a whole file; aborts the test program on failure. Free with free(). */
char *testutil_read_file(const char *path, size_t *ret_len);

/* Read tests/fixtures/<name>. */
char *testutil_read_fixture(const char *name, size_t *ret_len);

/* Parse raw message text (mime_view + message_build) with default limits;
 * aborts on failure. Free with message_free(). */
struct message *testutil_message(const char *raw, size_t len);

/* Same for a fixture file. */
struct message *testutil_message_fixture(const char *name);

#endif
