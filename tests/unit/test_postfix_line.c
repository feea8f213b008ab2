/* test_postfix_line.c - the smtpd_milters line as a chrooted smtpd sees
 * the socket, and whether Postfix's user may connect to it. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "postfix_line.h"

#define Q "/var/spool/postfix"

static void
test_line(void **state)
{
    static const struct {
        const char *spec, *queue_dir;
        int reach;
        const char *first; /* the smtpd_milters line */
    } cases[] = {
        /* Under the queue directory: the path inside the chroot. */
        {"local:" Q "/slop-milter/slop-milter.sock", Q, POSTFIX_LINE_CHROOT,
         "smtpd_milters = unix:/slop-milter/slop-milter.sock"},
        {"unix:" Q "/slop-milter/slop-milter.sock", Q "/", POSTFIX_LINE_CHROOT,
         "smtpd_milters = unix:/slop-milter/slop-milter.sock"},
        {Q "//milter.sock", Q, POSTFIX_LINE_CHROOT, "smtpd_milters = unix:/milter.sock"},
        {"local:/srv/pf-queue/a/b.sock", "/srv/pf-queue", POSTFIX_LINE_CHROOT,
         "smtpd_milters = unix:/a/b.sock"},
        /* Elsewhere: the full path, and a note. */
        {"local:/run/slop-milter/slop-milter.sock", Q, POSTFIX_LINE_OUTSIDE,
         "smtpd_milters = unix:/run/slop-milter/slop-milter.sock"},
        {"local:" Q "x/milter.sock", Q, POSTFIX_LINE_OUTSIDE,
         "smtpd_milters = unix:" Q "x/milter.sock"},
        {"local:" Q, Q, POSTFIX_LINE_OUTSIDE, "smtpd_milters = unix:" Q},
        {"local:" Q "/", Q, POSTFIX_LINE_OUTSIDE, "smtpd_milters = unix:" Q "/"},
        {"local:" Q "/../../../run/m.sock", Q, POSTFIX_LINE_OUTSIDE,
         "smtpd_milters = unix:" Q "/../../../run/m.sock"},
        {"local:relative.sock", Q, POSTFIX_LINE_OUTSIDE, "smtpd_milters = unix:relative.sock"},
        /* TCP: the same line chrooted or not. */
        {"inet:8893@127.0.0.1", Q, POSTFIX_LINE_TCP, "smtpd_milters = inet:127.0.0.1:8893"},
        {"inet:8893", Q, POSTFIX_LINE_TCP, "smtpd_milters = inet:127.0.0.1:8893"},
        {"inet6:8893", Q, POSTFIX_LINE_TCP, "smtpd_milters = inet:[::1]:8893"},
    };
    char buf[1024];
    size_t i;

    (void)state;
    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const char *nl;
        int r = postfix_line_write(cases[i].spec, cases[i].queue_dir, buf, sizeof(buf));

        print_message("case %zu: %s in %s\n%s", i, cases[i].spec, cases[i].queue_dir, buf);
        assert_int_equal(r, cases[i].reach);
        nl = strchr(buf, '\n');
        assert_non_null(nl);
        assert_int_equal((size_t)(nl - buf), strlen(cases[i].first));
        assert_memory_equal(buf, cases[i].first, strlen(cases[i].first));
        /* A unix socket gets a second line saying which smtpd it is for. */
        if (r == POSTFIX_LINE_TCP)
            assert_string_equal(nl, "\n");
        else
            assert_true(nl[1] == '#');
        if (r == POSTFIX_LINE_OUTSIDE)
            assert_non_null(strstr(nl, "chrooted smtpd"));
        if (r == POSTFIX_LINE_CHROOT)
            assert_non_null(strstr(nl, "chroot n in master.cf"));
    }
    assert_int_equal(postfix_line_write("local:" Q "/slop-milter/slop-milter.sock", Q, buf, 20),
                     -ENAMETOOLONG);
}

static void
test_access(void **state)
{
    enum { PF = 102, PFG = 105, SM = 998, SMG = 997 };
    static const gid_t in_group[] = {PFG, SMG}, alone[] = {PFG};
    static const struct {
        unsigned uid, gid, mode, user;
        const gid_t *groups;
        size_t n;
        enum postfix_line_access want;
    } cases[] = {
        /* The package's setup: group slop-milter 0660, postfix added. */
        {SM, SMG, 0660, PF, in_group, 2, POSTFIX_ACCESS_OK},
        {SM, SMG, 0660, PF, alone, 1, POSTFIX_ACCESS_GROUP},
        /* make run as root: root:root 0660. */
        {0, 0, 0660, PF, alone, 1, POSTFIX_ACCESS_GROUP},
        {SM, SMG, 0600, PF, in_group, 2, POSTFIX_ACCESS_MODE},
        {SM, SMG, 0640, PF, in_group, 2, POSTFIX_ACCESS_MODE},
        {SM, SMG, 0600, PF, alone, 1, POSTFIX_ACCESS_BOTH},
        {SM, SMG, 0666, PF, alone, 1, POSTFIX_ACCESS_OK},
        {SM, SMG, 0662, PF, alone, 1, POSTFIX_ACCESS_OK},
        /* The first class that applies decides, as in the kernel. */
        {SM, SMG, 0606, PF, in_group, 2, POSTFIX_ACCESS_MODE},
        {PF, SMG, 0200, PF, alone, 1, POSTFIX_ACCESS_OK},
        {PF, SMG, 0060, PF, in_group, 2, POSTFIX_ACCESS_MODE},
        /* Write is what connect(2) needs; read alone is not enough. */
        {SM, SMG, 0640, PF, alone, 1, POSTFIX_ACCESS_BOTH},
        {SM, SMG, 0620, PF, in_group, 2, POSTFIX_ACCESS_OK},
        {SM, SMG, 0600, 0, alone, 0, POSTFIX_ACCESS_OK},
    };
    size_t i;

    (void)state;
    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct postfix_line_sock s = {cases[i].uid, cases[i].gid, cases[i].mode};

        print_message("case %zu\n", i);
        assert_int_equal(postfix_line_access(&s, cases[i].user, cases[i].groups, cases[i].n),
                         cases[i].want);
    }
}

static void
test_warning(void **state)
{
    static const struct {
        enum postfix_line_access a;
        unsigned gid, mode;
        const char *group, *fix, *not ;
    } cases[] = {
        {POSTFIX_ACCESS_GROUP, 997, 0660, "slop-milter", "run 'adduser postfix slop-milter'",
         "SocketMode"},
        {POSTFIX_ACCESS_MODE, 997, 0600, "slop-milter", "set SocketMode 0660", "adduser"},
        {POSTFIX_ACCESS_BOTH, 997, 0600, "slop-milter",
         "set SocketMode 0660 and run 'adduser postfix slop-milter'", NULL},
        /* Never into root's group. */
        {POSTFIX_ACCESS_GROUP, 0, 0660, "root", "set UserID", "adduser postfix root"},
    };
    char buf[512];
    size_t i;

    (void)state;
    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct postfix_line_sock s = {998, cases[i].gid, cases[i].mode};
        char head[128];

        assert_int_equal(postfix_line_warning(cases[i].a, "postfix", "/x/m.sock", &s,
                                              cases[i].group, buf, sizeof(buf)),
                         0);
        print_message("case %zu: %s\n", i, buf);
        snprintf(head, sizeof(head), "(group %s, mode %04o)", cases[i].group, cases[i].mode);
        assert_non_null(strstr(buf, "postfix cannot connect to /x/m.sock"));
        assert_non_null(strstr(buf, head));
        assert_non_null(strstr(buf, cases[i].fix));
        if (cases[i].not )
            assert_null(strstr(buf, cases[i].not ));
        assert_null(strchr(buf, '\n'));
    }
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_line),
        cmocka_unit_test(test_access),
        cmocka_unit_test(test_warning),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
