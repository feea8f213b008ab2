/* test_conn.c - per-message collection: headers, caps, buffer, raw loading. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "conn.h"

static void
test_addr_strip(void **state)
{
    static const struct {
        const char *in;
        const char *out;
    } cases[] = {
        {"<a@example.org>", "a@example.org"},
        {"a@example.org", "a@example.org"},
        {"<>", ""},
        {"  <b@example.org> SIZE=100", "b@example.org"},
        {"c@example.org SIZE=100", "c@example.org"},
        {NULL, ""},
    };
    char buf[64];

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        assert_string_equal(conn_addr_strip(cases[i].in, buf, sizeof(buf)), cases[i].out);
    /* Cut to the buffer, still terminated. */
    assert_int_equal(strlen(conn_addr_strip("<aaaaaaaaaaaaaaaaaaaa@example.org>", buf, 8)), 7);
}

static void
test_envelope(void **state)
{
    struct msg *m = msg_new(1 << 20);

    (void)state;
    assert_string_equal(m->queue_id, "NOQUEUE");
    msg_set_queue_id(m, "4XyZ1 2\n;");
    assert_string_equal(m->queue_id, "4XyZ12");
    msg_set_queue_id(m, NULL);
    assert_string_equal(m->queue_id, "4XyZ12");
    assert_int_equal(msg_set_sender(m, "<>"), 0);
    assert_string_equal(m->mail_from, "");
    for (int i = 0; i < CONN_MAX_RCPTS + 10; i++)
        assert_int_equal(msg_add_rcpt(m, "<r@example.org>", i % 2 == 0), 0);
    assert_int_equal(m->n_rcpts, CONN_MAX_RCPTS);
    assert_int_equal(m->n_rcpts_seen, CONN_MAX_RCPTS + 10);
    assert_int_equal(m->n_protected, (CONN_MAX_RCPTS + 10) / 2);
    assert_string_equal(m->rcpts[0].addr, "r@example.org");
    msg_free(m);
}

/* Inbound X-Slop-* fields are counted per name, past the header cap too. */
static void
test_slop_headers_counted(void **state)
{
    struct msg *m = msg_new(1 << 20);
    struct verdict_input in;

    (void)state;
    msg_add_header(m, "X-Slop-Status", "Yes, forged");
    msg_add_header(m, "Subject", "first");
    msg_add_header(m, "x-slop-status", "again");
    msg_add_header(m, "Subject", "second");
    for (int i = 0; i < CONN_MAX_HEADERS; i++)
        msg_add_header(m, "Received", "from x");
    msg_add_header(m, "X-Slop-Report", "late");
    msg_add_header(m, "X-Slop-Status", "late");
    assert_int_equal(m->n_headers, CONN_MAX_HEADERS);
    assert_int_equal(m->n_headers_seen, CONN_MAX_HEADERS + 6);
    assert_true(m->headers_truncated);
    msg_verdict_input(m, &in);
    assert_int_equal(in.n_seen, 2);
    assert_string_equal(in.seen[0].name, "X-Slop-Status");
    assert_int_equal(in.seen[0].count, 3);
    assert_string_equal(in.seen[1].name, "X-Slop-Report");
    assert_int_equal(in.seen[1].count, 1);
    /* The first Subject is the one tagged. */
    assert_string_equal(in.subject, "first");
    msg_free(m);
}

/* Past MaxHeaders the first Subject, Message-ID and From are still kept
 * (in the fields and the scanned buffer); other fields and second copies
 * are not. */
static void
test_late_key_fields(void **state)
{
    struct msg *m = msg_new(1 << 20);
    struct verdict_input in;

    (void)state;
    m->max_headers = 10;
    for (int i = 0; i < 1100; i++)
        msg_add_header(m, "X-Filler", "x");
    msg_add_header(m, "Subject", "late subject");
    msg_add_header(m, "Message-ID", "<late@example.org>");
    msg_add_header(m, "From", "Late <late@example.org>");
    msg_add_header(m, "Subject", "second subject");
    msg_add_header(m, "From", "Other <other@example.org>");
    msg_add_header(m, "Message-ID", "<second@example.org>");
    msg_add_header(m, "X-Late", "dropped");
    msg_end_headers(m);
    assert_int_equal(m->n_headers, 13);
    assert_true(m->headers_truncated);
    assert_string_equal(m->headers[10].name, "Subject");
    assert_string_equal(m->headers[11].name, "Message-ID");
    assert_string_equal(m->headers[12].name, "From");
    assert_string_equal(m->subject, "late subject");
    assert_string_equal(m->from, "Late <late@example.org>");
    assert_int_equal(m->n_from, 2);
    assert_non_null(strstr(m->buf, "\r\nSubject: late subject\r\n"));
    assert_non_null(strstr(m->buf, "\r\nMessage-ID: <late@example.org>\r\n"));
    assert_null(strstr(m->buf, "second"));
    assert_null(strstr(m->buf, "X-Late"));
    msg_verdict_input(m, &in);
    assert_string_equal(in.subject, "late subject");
    msg_free(m);
}

static void
test_header_value_cap(void **state)
{
    struct msg *m = msg_new(4 << 20);
    char *big = malloc(CONN_HEADER_MAX + 100);

    (void)state;
    memset(big, 'a', CONN_HEADER_MAX + 99);
    big[CONN_HEADER_MAX + 99] = '\0';
    assert_int_equal(msg_add_header(m, "X-Big", big), 0);
    assert_int_equal(strlen(m->headers[0].value), CONN_HEADER_MAX);
    assert_true(m->headers_truncated);
    free(big);
    msg_free(m);
}

/* The buffer never exceeds max; overflow marks the message oversize. */
static void
test_buffer_cap(void **state)
{
    static const size_t chunks[] = {1, 100, 4096, 65536};
    (void)state;
    for (size_t c = 0; c < sizeof(chunks) / sizeof(chunks[0]); c++) {
        struct msg *m = msg_new(100000);
        char *chunk = malloc(chunks[c]);

        memset(chunk, 'b', chunks[c]);
        msg_add_header(m, "Subject", "s");
        msg_end_headers(m);
        for (size_t total = 0; total < 200000; total += chunks[c])
            assert_int_equal(msg_add_body(m, chunk, chunks[c]), 0);
        assert_int_equal(m->len, 100000);
        assert_true(m->oversize);
        assert_true(m->cap <= 100000);
        free(chunk);
        msg_free(m);
    }
    {
        struct msg *m = msg_new(100000);

        msg_add_body(m, "x", 1);
        assert_false(m->oversize);
        msg_free(m);
    }
}

/* A raw file arrives as an MTA would hand it over. */
static void
test_load_raw(void **state)
{
    static const char raw[] = "From: A <a@example.org>\n"
                              "Subject: a folded\n"
                              "  subject line\n"
                              "X-Slop-Status: Yes\n"
                              "Empty:\n"
                              "\n"
                              "body line 1\n"
                              "body line 2\r\n"
                              "last";
    static const char want[] = "From: A <a@example.org>\r\n"
                               "Subject: a folded\r\n"
                               "  subject line\r\n"
                               "X-Slop-Status: Yes\r\n"
                               "Empty: \r\n"
                               "\r\n"
                               "body line 1\r\n"
                               "body line 2\r\n"
                               "last";
    struct msg *m = msg_new(1 << 20);

    (void)state;
    assert_int_equal(msg_load_raw(m, raw, sizeof(raw) - 1), 0);
    assert_int_equal(m->n_headers, 4);
    assert_string_equal(m->headers[1].name, "Subject");
    assert_string_equal(m->headers[1].value, "a folded\n  subject line");
    assert_string_equal(m->subject, "a folded\n  subject line");
    assert_string_equal(m->headers[3].value, "");
    assert_int_equal(m->n_seen, 1);
    assert_int_equal(m->len, sizeof(want) - 1);
    assert_memory_equal(m->buf, want, m->len);
    msg_free(m);
}

static void
test_load_raw_edge_cases(void **state)
{
    static const struct {
        const char *raw;
        size_t n_headers;
        const char *body_start; /* what follows the blank line in the buffer */
    } cases[] = {
        {"", 0, ""},
        {"\n\nbody", 0, "\r\nbody"},
        {"no header here\nmore", 0, "no header here\r\nmore"},
        {"A: 1\nnot a header\n", 1, "not a header\r\n"},
        {"A: 1", 1, ""},
        {"A: 1\n continued", 1, ""},
        {" leading: blank\n", 0, " leading: blank\r\n"},
    };

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct msg *m = msg_new(1 << 20);
        const char *sep;

        assert_int_equal(msg_load_raw(m, cases[i].raw, strlen(cases[i].raw)), 0);
        if (m->n_headers != cases[i].n_headers)
            fail_msg("case %zu: %zu headers", i, m->n_headers);
        assert_true(m->in_body);
        m->buf = realloc(m->buf, m->len + 1);
        m->buf[m->len] = '\0';
        sep = m->n_headers ? strstr(m->buf, "\r\n\r\n") + 4 : m->buf + 2;
        if (strcmp(sep, cases[i].body_start) != 0)
            fail_msg("case %zu: body '%s'", i, sep);
        msg_free(m);
    }
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_addr_strip),
        cmocka_unit_test(test_envelope),
        cmocka_unit_test(test_slop_headers_counted),
        cmocka_unit_test(test_late_key_fields),
        cmocka_unit_test(test_header_value_cap),
        cmocka_unit_test(test_buffer_cap),
        cmocka_unit_test(test_load_raw),
        cmocka_unit_test(test_load_raw_edge_cases),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
