/* test_gate.c - MaxConnections: the cap derived from a task limit, the
 * tempfail exchange, and accept() counting and turning away sockets. */
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmocka.h>

#include <libmilter/mfapi.h>
#include <libmilter/mfdef.h>

#include "gate.h"
#include "gate_limit.h"
#include "gate_tempfail.h"

static size_t
packet(unsigned char *buf, char cmd, const void *data, uint32_t len)
{
    uint32_t n = htonl(len + 1);

    memcpy(buf, &n, 4);
    buf[4] = (unsigned char)cmd;
    memcpy(buf + 5, data, len);
    return 5 + len;
}

static size_t
optneg(unsigned char *buf, uint32_t version)
{
    uint32_t v[3] = {htonl(version), htonl(0x1ff), htonl(0x1fffff)};

    return packet(buf, SMFIC_OPTNEG, v, sizeof(v));
}

static void
test_auto_cap(void **state)
{
    struct rlimit rl;

    (void)state;
    /* The unit's TasksMax=512, with room for descriptors. */
    getrlimit(RLIMIT_NOFILE, &rl);
    if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < 1024)
        skip();
    assert_int_equal(gate_auto_cap(512), (512 - GATE_RESERVED_TASKS) / GATE_TASKS_PER_CONN);
    assert_int_equal(gate_auto_cap(GATE_RESERVED_TASKS), 1);
    assert_int_equal(gate_auto_cap(0), GATE_DEFAULT_CAP);
}

static void
test_tempfail_exchange(void **state)
{
    unsigned char in[256], out[GATE_REPLY_MAX];
    size_t len, used, out_len;
    uint32_t v;

    (void)state;
    /* Half a packet: wait for the rest. */
    len = optneg(in, 6);
    assert_int_equal(gate_tempfail_step(in, 9, &used, out, &out_len), 1);
    assert_int_equal(used, 0);
    assert_int_equal(out_len, 0);
    /* Options: our version at most, no actions, no protocol flags. */
    assert_int_equal(gate_tempfail_step(in, len, &used, out, &out_len), 1);
    assert_int_equal(used, len);
    assert_int_equal(out_len, 5 + MILTER_OPTLEN);
    assert_int_equal(out[4], SMFIC_OPTNEG);
    memcpy(&v, out + 5, 4);
    assert_int_equal(ntohl(v), 6);
    memcpy(&v, out + 9, 4);
    assert_int_equal(v, 0);
    memcpy(&v, out + 13, 4);
    assert_int_equal(v, 0);
    len = optneg(in, 99);
    assert_int_equal(gate_tempfail_step(in, len, &used, out, &out_len), 1);
    memcpy(&v, out + 5, 4);
    assert_int_equal(ntohl(v), SMFI_PROT_VERSION);
    /* Macros: no answer; CONNECT: tempfail; QUIT: done. */
    len = packet(in, SMFIC_MACRO, "Cj\0mx\0", 6);
    assert_int_equal(gate_tempfail_step(in, len, &used, out, &out_len), 1);
    assert_int_equal(out_len, 0);
    len = packet(in, SMFIC_CONNECT, "h\0U", 3);
    assert_int_equal(gate_tempfail_step(in, len, &used, out, &out_len), 1);
    assert_int_equal(out_len, 5);
    assert_int_equal(out[4], SMFIR_TEMPFAIL);
    len = packet(in, SMFIC_QUIT, "", 0);
    assert_int_equal(gate_tempfail_step(in, len, &used, out, &out_len), 0);
    /* Empty, oversized and short option packets end the connection. */
    memset(in, 0, 5);
    assert_int_equal(gate_tempfail_step(in, 5, &used, out, &out_len), -EPROTO);
    v = htonl(GATE_PACKET_MAX + 1);
    memcpy(in, &v, 4);
    assert_int_equal(gate_tempfail_step(in, 5, &used, out, &out_len), -EPROTO);
    len = packet(in, SMFIC_OPTNEG, "ab", 2);
    assert_int_equal(gate_tempfail_step(in, len, &used, out, &out_len), -EPROTO);
}

/* Read one packet (bounded wait); returns its command or 0. */
static char
read_reply(int fd)
{
    unsigned char buf[64];
    size_t have = 0;

    while (have < 5 || have < 4 + ntohl(*(uint32_t *)(void *)buf)) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        ssize_t n;

        if (poll(&p, 1, 20000) <= 0)
            return 0;
        n = read(fd, buf + have, sizeof(buf) - have);
        if (n <= 0)
            return 0;
        have += (size_t)n;
    }
    return (char)buf[4];
}

static void
test_accept_over_cap(void **state)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    char dir[] = "/tmp/test_gate.XXXXXX";
    int lfd, c[3], a[3];
    unsigned char buf[64];
    size_t len;

    (void)state;
    assert_non_null(mkdtemp(dir));
    snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/s", dir);
    lfd = socket(AF_UNIX, SOCK_STREAM, 0);
    assert_true(lfd >= 0);
    assert_int_equal(bind(lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    assert_int_equal(listen(lfd, 8), 0);
    assert_int_equal(gate_start(2, 5), 0);

    for (int i = 0; i < 3; i++) {
        c[i] = socket(AF_UNIX, SOCK_STREAM, 0);
        assert_int_equal(connect(c[i], (struct sockaddr *)&sa, sizeof(sa)), 0);
        errno = 0;
        a[i] = accept(lfd, NULL, NULL);
    }
    assert_true(a[0] >= 0 && a[1] >= 0);
    assert_int_equal(a[2], -1);
    assert_int_equal(errno, ECONNABORTED);
    assert_int_equal(gate_open_count(), 2);

    /* The third is answered by the gate's thread. */
    len = optneg(buf, 6);
    assert_int_equal(write(c[2], buf, len), (ssize_t)len);
    assert_int_equal(read_reply(c[2]), SMFIC_OPTNEG);
    len = packet(buf, SMFIC_CONNECT, "h\0U", 3);
    assert_int_equal(write(c[2], buf, len), (ssize_t)len);
    assert_int_equal(read_reply(c[2]), SMFIR_TEMPFAIL);

    /* A closed one makes room: its entry is found stale. */
    close(a[0]);
    close(c[0]);
    c[0] = socket(AF_UNIX, SOCK_STREAM, 0);
    assert_int_equal(connect(c[0], (struct sockaddr *)&sa, sizeof(sa)), 0);
    a[0] = accept(lfd, NULL, NULL);
    assert_true(a[0] >= 0);
    assert_int_equal(gate_open_count(), 2);

    for (int i = 0; i < 3; i++)
        close(c[i]);
    close(a[0]);
    close(a[1]);
    assert_int_equal(gate_open_count(), 0);
    close(lfd);
    unlink(sa.sun_path);
    rmdir(dir);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_auto_cap),
        cmocka_unit_test(test_tempfail_exchange),
        cmocka_unit_test(test_accept_over_cap),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
