/* test_report_parse.c - prose vs code and trace split, and report facts. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <cmocka.h>

#include "classifier.h"
#include "message.h"
#include "report_parse.h"
#include "text_lines.h"
#include "testutil.h"

static struct classifier_limits limits;

static struct message *
parse(const char *text)
{
    struct message *m = calloc(1, sizeof(*m));

    assert_non_null(m);
    assert_int_equal(report_parse(m, text, strlen(text), &limits), 0);
    assert_non_null(m->regions[REGION_REPORT].text);
    assert_non_null(m->regions[REGION_CODE].text);
    return m;
}

/* Each case: a text, strings that must be in a list, strings that must not. */
enum list { VERSIONS, FUNCTIONS, PATHS, CONFIGS, URLS };

static const struct strv *
list_of(const struct message *m, enum list l)
{
    switch (l) {
    case VERSIONS:
        return &m->versions;
    case FUNCTIONS:
        return &m->functions;
    case PATHS:
        return &m->paths;
    case CONFIGS:
        return &m->configs;
    case URLS:
        return &m->urls;
    }
    return NULL;
}

static const struct fact_case {
    const char *text;
    enum list list;
    const char *present[4];
    const char *absent[4];
} fact_cases[] = {
    {"Seen on Ubuntu with uname -r 6.8.0-45-generic and on v6.9-rc2.\n",
     VERSIONS,
     {"6.8.0-45-generic", "v6.9-rc2"},
     {"6.8"}},
    {"Linux version 6.1.0-18-amd64 (debian-kernel@lists.debian.org)\n",
     VERSIONS,
     {"6.1.0-18-amd64"},
     {NULL}},
    {"Affected: 1.x and 2.x, Xen from 4.5 onwards, and bookworm's 1.2.3-4+deb12u1.\n",
     VERSIONS,
     {"1.x", "2.x", "4.5", "1.2.3-4+deb12u1"},
     {NULL}},
    {"Found against main as of 2026-11-06, and on staging as of 2026-10-30; the same\n"
     "code is in the 4.2 and 5.0 stable branches and the 3.1 series.\n",
     VERSIONS,
     {"main as of 2026-11-06", "staging as of 2026-10-30", "5.0", "3.1"},
     {NULL}},
    {"Still there in 5.15.0 and in the 4.19.y branch, and next-20260501.\n",
     VERSIONS,
     {"5.15.0", "4.19.y", "next-20260501"},
     {NULL}},
    {"Tested on kernel 6.8 and Linux 6.10, also on linux-6.6.\n",
     VERSIONS,
     {"6.8", "6.10", "6.6"},
     {NULL}},
    {"It broke after commit 1a2b3c4d5e6f (\"mm: foo\").\n",
     VERSIONS,
     {"commit 1a2b3c4d5e6f"},
     {NULL}},
    /* A plain two-component version after "tested on", "on" or "running". */
    {"Tested on 6.8, reproduced on 6.9-rc3 and on 6.10 too; running 6.6 here.\n",
     VERSIONS,
     {"6.8", "6.9-rc3", "6.10", "6.6"},
     {NULL}},
    /* A colon ends the version when a blank follows it, not in a time. */
    {"Tested on 6.8: it crashes. Kernel 6.9:\n", VERSIONS, {"6.8", "6.9"}, {NULL}},
    /* "on" followed by a unit is a measurement, not a kernel. */
    {"It runs on 3.5 GHz cores and on 4.2 inch panels.\n", VERSIONS, {NULL}, {"3.5", "4.2"}},
    /* Regression: the CVSS version was taken for a kernel version. */
    {"CVSS:3.1/AV:L/AC:L/PR:L/UI:N/S:U/C:H/I:H/A:H (CVSS v3.1, CVSS version 3.0, CVSS:3.1 score "
     "7.8)\n",
     VERSIONS,
     {NULL},
     {"v3.1", "3.1", "3.0"}},
    {"CVSS v3.1 base score 7.8; found on Linux 6.8.\n", VERSIONS, {"6.8"}, {"v3.1"}},
    /* Not versions: an IP address, a time, decimals in prose, other programs. */
    {"The server at 10.0.0.1 rebooted at 12:30 after 0.5 seconds, load 3.5 of 4.\n",
     VERSIONS,
     {NULL},
     {"10.0.0.1", "12:30", "0.5", "3.5"}},
    {"Built with gcc 12.2.0 under qemu 7.2.0; see section 2.4 of the manual.\n",
     VERSIONS,
     {NULL},
     {"12.2.0", "7.2.0", "2.4"}},
    {"commit 1234 is too short, and 192.168.1.20 is an address.\n",
     VERSIONS,
     {NULL},
     {"commit 1234", "192.168.1.20", "168.1.20"}},
    /* Other products' versions, in the forms their reports use. */
    {"Affects curl 8.5.0 to and including 8.6.0, and libcurl 8.4.0 and earlier.\n",
     VERSIONS,
     {"8.5.0", "8.6.0", "8.4.0"},
     {NULL}},
    {"User-Agent: curl/8.7.0-DEV, built against OpenSSL 3.0.2 and OpenSSL 1.1.1w.\n",
     VERSIONS,
     {"8.7.0-DEV", "3.0.2", "1.1.1w"},
     {"curl/8.7.0-DEV"}},
    {"Still in git v2.41.0; version 7.88 is affected, so is 8.1 and earlier.\n",
     VERSIONS,
     {"v2.41.0", "7.88", "8.1"},
     {NULL}},
    {"Built from v6.9-rc2-123-gabcdef012345 and from curl-8_5_0-12-g1234567 (tag curl-8_5_0).\n",
     VERSIONS,
     {"v6.9-rc2-123-gabcdef012345", "curl-8_5_0-12-g1234567", "curl-8_5_0"},
     {NULL}},
    {"Reproduced on current master at 3f2a9c1, on git master (abc1234) and HEAD at "
     "9e8d7c6b5a4f.\n",
     VERSIONS,
     {"commit 3f2a9c1", "commit abc1234", "commit 9e8d7c6b5a4f"},
     {NULL}},
    {"Fails at commit 1a2b3c4 too.\n", VERSIONS, {"commit 1a2b3c4"}, {NULL}},
    /* Other ecosystems: ranges, package@version, Maven coordinates, a
     * release named in a path, a jar, npm's caret. */
    {"Affected versions: < 2.3, fixed in >= 2.3.1 (was ^1.4.2).\n",
     VERSIONS,
     {"2.3", "2.3.1", "1.4.2"},
     {NULL}},
    {"Installed lodash@4.17.20 and @scope/pkg@1.2.3 with npm.\n",
     VERSIONS,
     {"4.17.20", "1.2.3"},
     {NULL}},
    {"It pulls in org.apache.tomcat:tomcat-catalina:9.0.41 and jackson-databind-2.9.10.jar.\n",
     VERSIONS,
     {"9.0.41", "2.9.10"},
     {NULL}},
    {"Seen with OpenSSL 3.0, on Tomcat 9.0.x and on Node.js 20.x (not 1.5 times).\n",
     VERSIONS,
     {"3.0", "9.0.x", "20.x"},
     {"1.5"}},
    {"/usr/local/bundle/gems/rack-2.2.3/lib/rack/request.rb:123:in `call'\n",
     VERSIONS,
     {"2.2.3"},
     {NULL}},
    /* "commit" or "Commit" as a word, first in the line or not. */
    {"Commit 1a2b3c4d5e6f broke it.\n", VERSIONS, {"commit 1a2b3c4d5e6f"}, {NULL}},
    {"A recommit 1a2b3c4d5e6f, a summit 0a1b2c3d4e5f, ommit 9a8b7c6d5e4f.\n",
     VERSIONS,
     {NULL},
     {"commit 1a2b3c4d5e6f", "commit 0a1b2c3d4e5f", "commit 9a8b7c6d5e4f"}},
    {"See https://github.com/curl/curl/blob/curl-8_3_0/lib/socks.c#L573 and "
     "https://git.kernel.org/pub/scm/linux/kernel/git/torvalds/linux.git/tree/fs/namei.c?h=v6.9 "
     "and https://example.org/proj/-/commit/9e8d7c6b5a4f.\n",
     VERSIONS,
     {"curl-8_3_0", "v6.9", "commit 9e8d7c6b5a4f"},
     {NULL}},
    {"Calls foo_bar() then __do_sys_open() and not bar (), nor 3d().\n",
     FUNCTIONS,
     {"foo_bar", "__do_sys_open"},
     {"bar", "3d"}},
    {"See drivers/usb/core/hub.c:1723 and include/linux/usb.h, fs/Kconfig, net/Makefile.\n",
     PATHS,
     {"drivers/usb/core/hub.c", "include/linux/usb.h", "fs/Kconfig", "net/Makefile"},
     {"/usr/bin/foo.c"}},
    /* Each kind of name a path may end in, one to a line: a line is
     * read for paths only when it may hold one (may_hold_path()). */
    {"arch/arm64/boot/dts/qcom/sm8550.dtsi\nDocumentation/devicetree/bindings/usb/x.yaml\n"
     "arch/x86/kernel/vmlinux.lds\nrust/kernel/sync.rs\n",
     PATHS,
     {"arch/arm64/boot/dts/qcom/sm8550.dtsi", "Documentation/devicetree/bindings/usb/x.yaml",
      "arch/x86/kernel/vmlinux.lds", "rust/kernel/sync.rs"},
     {NULL}},
    {"tools/testing/selftests/run.sh\nscripts/checkpatch.py\narch/x86/entry/entry_64.S\n"
     "Documentation/process/index.rst\n",
     PATHS,
     {"tools/testing/selftests/run.sh", "scripts/checkpatch.py", "arch/x86/entry/entry_64.S",
      "Documentation/process/index.rst"},
     {NULL}},
    {"drivers/usb/Kbuild\nnet/Makefile\nfs/Kconfig.binfmt\ninclude/linux/usb.h\n",
     PATHS,
     {"drivers/usb/Kbuild", "net/Makefile", "fs/Kconfig.binfmt", "include/linux/usb.h"},
     {NULL}},
    {"[  12.345678] kworker/0:1 +0x1a/0x30 in drivers/usb/core/hub.c\n",
     PATHS,
     {"drivers/usb/core/hub.c"},
     {"kworker/0:1", "0x1a/0x30"}},
    {"diff touches a/mm/slub.c; /etc/passwd.c and and/or are not paths.\n",
     PATHS,
     {"mm/slub.c"},
     {"/etc/passwd.c", "and/or"}},
    {"Needs CONFIG_USB_HUB=y and !CONFIG_MMU; # CONFIG_FOO is not set\n",
     CONFIGS,
     {"CONFIG_USB_HUB", "CONFIG_MMU", "CONFIG_FOO"},
     {NULL}},
    {"Docs: https://docs.kernel.org/process/threat-model.html. Also "
     "<http://example.com/a/b/c.c?x=1>\n",
     URLS,
     {"https://docs.kernel.org/process/threat-model.html", "http://example.com/a/b/c.c?x=1"},
     {NULL}},
    {"see:hhttp://a.example/x HTTPS://b.example/y; ftp://c.example/ https:/d.example http://\n",
     URLS,
     {"http://a.example/x", "HTTPS://b.example/y", "http://"},
     {"ftp://c.example/", "https:/d.example"}},
    /* Nothing is taken from inside a URL. */
    {"https://lore.kernel.org/r/v6.9-foo/drivers/net/x.c/open()/CONFIG_X\n",
     PATHS,
     {NULL},
     {"drivers/net/x.c"}},
    {"https://lore.kernel.org/r/v6.9-foo/drivers/net/x.c/open()/CONFIG_X\n",
     VERSIONS,
     {NULL},
     {"v6.9"}},
    {"https://lore.kernel.org/r/v6.9-foo/drivers/net/x.c/open()/CONFIG_X\n",
     CONFIGS,
     {NULL},
     {"CONFIG_X"}},
};

static void
test_facts(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(fact_cases) / sizeof(fact_cases[0]); i++) {
        const struct fact_case *c = &fact_cases[i];
        struct message *m = parse(c->text);
        const struct strv *sv = list_of(m, c->list);

        print_message("case %zu: %s", i, c->text);
        for (size_t k = 0; k < 4 && c->present[k]; k++) {
            if (!strv_contains(sv, c->present[k]))
                print_message("missing '%s'\n", c->present[k]);
            assert_true(strv_contains(sv, c->present[k]));
        }
        for (size_t k = 0; k < 4 && c->absent[k]; k++) {
            if (strv_contains(sv, c->absent[k]))
                print_message("unexpected '%s'\n", c->absent[k]);
            assert_false(strv_contains(sv, c->absent[k]));
        }
        message_free(m);
    }
}

/* Lines in which no version of anything is named: none may be found. */
static const char *const no_version_cases[] = {
    "The server at 10.0.0.1 rebooted at 12:30:45 after 0.5 seconds, load 3.5 of 4.\n",
    "Logged on 2026-12-04 and 04.12.2026, build 2026.12.04, uptime 1234.567890.\n",
    "The queue was as of 2026-12-04 empty; our main office as of 2026-11-01 moved.\n",
    "A ratio of 1.5 stays, 0.3 seriesless, 2.5 throughput and 1.5 stableness.\n",
    "Sums like 1.5+2.5, a factor 2.5 upwards and Table 1.x of the paper.\n",
    "See section 3.2.1 of RFC 9110, section 7.2, figure 1.2.3 and table 4.1.\n",
    "Read of size 8 at offset 1.2 KiB, +0x1a/0x50, address ffff888012345678.\n",
    "Built with gcc 12.2.0, clang 17.0.6 and Python 3.11.4 under qemu 7.2.0.\n",
    "Negotiates TLS 1.2 and SMB 3.1.1; the CVSS:3.1 score is 7.5 (CVSS v3.1).\n",
    "A word like deadbeef or the id 1234567 with no commit word before it.\n",
    "paths such as lib/1.2.3/foo and a/b/1.2.3 are not products.\n",
    "The server answers \"HTTP/1.1 200 OK\" over TLS/1.3, not HTTP/2.\n",
    "Links to https://github.com/o/p/blob/master/lib/x.c and https://e.org/t/tree/main/x.\n",
    "Built with gcc-12.2.0 in /opt/python-3.11.4/bin; Python:3.11.4 printed utf-8.\n",
    "Mail me at user@10.0.0.1, the x-1 build, 3 < 4 and a ratio of 1.5.\n",
    "Its Score 7.5, Figure 3.2 and Table 1.x; About 3.5 GHz on Python 3.11.\n",
};

static void
test_no_versions(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(no_version_cases) / sizeof(no_version_cases[0]); i++) {
        struct message *m = parse(no_version_cases[i]);

        print_message("case %zu: %s", i, no_version_cases[i]);
        for (size_t k = 0; k < m->versions.n; k++)
            print_message("unexpected '%s'\n", m->versions.v[k]);
        assert_int_equal(m->versions.n, 0);
        message_free(m);
    }
}

/* Each case: lines that must land in CODE, lines that must stay in REPORT. */
static const struct split_case {
    const char *name;
    const char *text;
    const char *code[4];
    const char *report[4];
} split_cases[] = {
    {"kasan trace",
     "The box crashes when mounting.\n"
     "==================================================================\n"
     "BUG: KASAN: slab-out-of-bounds in hfs_bnode_read+0x9c/0x1c0\n"
     "Read of size 8 at addr ffff888012345678 by task mount/321\n"
     "\n"
     "Call Trace:\n"
     " <TASK>\n"
     " dump_stack_lvl+0x7d/0xa0\n"
     " ? hfs_bnode_read+0x9c/0x1c0\n"
     " </TASK>\n"
     "\n"
     "I think the length check is missing.\n",
     {"BUG: KASAN: slab-out-of-bounds", " dump_stack_lvl+0x7d/0xa0", "Read of size 8", "======"},
     {"The box crashes when mounting.", "I think the length check is missing."}},
    {"oops with registers and timestamps",
     "Got this oops:\n"
     "[  123.456789] general protection fault, probably for non-canonical address\n"
     "[  123.456800] RIP: 0010:ext4_find_entry+0x1a/0x330\n"
     "RAX: 0000000000000000 RBX: ffff888100000000 RCX: 0000000000000001\n"
     "RSP: 0018:ffffc90000abbcd8 EFLAGS: 00010246\n"
     "Code: 48 89 e5 41 57 41 56 <48> 8b 07\n"
     "Please have a look.\n",
     {"general protection fault", "RAX: 0000000000000000", "RSP: 0018:", "Code: 48 89"},
     {"Got this oops:", "Please have a look."}},
    {"fenced code",
     "Reproducer below:\n"
     "```c\n"
     "int main(void) { return ioctl(fd, 0x1234, 0); }\n"
     "```\n"
     "Run it as a normal user.\n",
     {"```c", "int main(void)"},
     {"Reproducer below:", "Run it as a normal user."}},
    {"indented code block and prompts",
     "Steps:\n"
     "    fd = open(\"/dev/foo\", O_RDWR);\n"
     "    ioctl(fd, FOO_RESET, 0);\n"
     "$ ./repro\n"
     "# echo 1 > /proc/sys/vm/drop_caches\n"
     "# Results\n"
     "    This indented line is a quotation of prose\n"
     "    that spans two lines without any code.\n",
     {"ioctl(fd, FOO_RESET", "$ ./repro", "# echo 1 >"},
     {"Steps:", "# Results", "This indented line is a quotation of prose"}},
    {"asan",
     "==4242==ERROR: AddressSanitizer: heap-buffer-overflow on address 0x602000000011\n"
     "    #0 0x4f5a3c in parse_header /src/tool/parse.c:42:7\n"
     "    #1 0x4f6b10 in main /src/tool/main.c:10:3\n"
     "\n"
     "The tool reads past the buffer.\n",
     {"==4242==ERROR", "#0 0x4f5a3c"},
     {"The tool reads past the buffer."}},
    {"kernel log as syslog wrote it",
     "It hung during a balance:\n"
     "Jan  7 03:12:09 nas kernel: INFO: task btrfs:812 blocked for more than 120 seconds.\n"
     "Jan  7 03:12:09 nas kernel: Call Trace:\n"
     "Jan  7 03:12:09 nas kernel:  schedule+0x4e/0xb0\n"
     "Jan  7 03:12:09 nas kernel:  wait_for_commit+0x58/0x90 [btrfs]\n"
     "Nothing was written after that.\n",
     {"kernel: Call Trace:", "kernel:  schedule+0x4e/0xb0", "wait_for_commit+0x58/0x90"},
     {"It hung during a balance:", "Nothing was written after that."}},
    {"kernel log from journalctl -o short-iso",
     "From the journal:\n"
     "2026-11-30T08:01:02.345678+01:00 box kernel: BUG: kernel NULL pointer dereference\n"
     "2026-11-30T08:01:02.345700+01:00 box kernel:  ext4_readdir+0x1c/0x2a0\n"
     "The disk is fine.\n",
     {"kernel: BUG: kernel NULL", "kernel:  ext4_readdir+0x1c/0x2a0"},
     {"From the journal:", "The disk is fine."}},
    {"syslog lines of other programs",
     "The login itself works:\n"
     "Jan  7 03:12:09 nas sshd[901]:  Accepted publickey for root\n"
     "Jan  7 03:12:10 nas kernel:\n"
     "Then at 03:12 the kernel: it stops.\n",
     {NULL},
     {"sshd[901]:  Accepted publickey", "Then at 03:12 the kernel: it stops."}},
    {"one indented command under a lead-in",
     "Reproduce:\n"
     "\n"
     "    python3 poc.py --host 127.0.0.1\n"
     "\n"
     "The server then stops answering.\n",
     {"python3 poc.py --host"},
     {"Reproduce:", "The server then stops answering."}},
    {"an indented quotation under a lead-in stays prose",
     "The manual says:\n"
     "\n"
     "    the value is checked before use.\n"
     "\n"
     "It is not.\n",
     {NULL},
     {"the value is checked before use.", "It is not."}},
    {"backtraces of other runtimes",
     "Traceback (most recent call last):\n"
     "  File \"/srv/app/views.py\", line 42, in upload\n"
     "    data = parse(body)\n"
     "ValueError: bad header\n"
     "/srv/bundle/gems/rack-2.2.3/lib/rack/multipart.rb:88:in `parse': stack level too deep\n"
     "\tfrom /srv/bundle/gems/rack-2.2.3/lib/rack/request.rb:12:in `POST'\n"
     "Exception in thread \"main\" java.lang.StackOverflowError\n"
     "\tat org.example.Parser.parse(Parser.java:120)\n"
     "#0  0x00007ffff7f42b32 in Curl_failf () from ./lib/.libs/libcurl.so.4\n"
     "Then see lib/x.c:75 for the loop.\n",
     {"File \"/srv/app/views.py\", line 42", "rack/multipart.rb:88:in", "Parser.java:120",
      "#0  0x00007ffff7f42b32"},
     {"Then see lib/x.c:75 for the loop."}},
    {"hypervisor console",
     "With the debug build the hypervisor notices within a minute:\n"
     "\n"
     "(XEN) Assertion 'page_get_owner(pg) == d' failed at common/grant_table.c:1734\n"
     "(XEN) ----[ Xen-4.19-unstable  x86_64  debug=y  Not tainted ]----\n"
     "(XEN) CPU:    3\n"
     "\n"
     "On a release build the guest sees its page change (XEN) after reuse.\n",
     {"failed at common/grant_table.c:1734", "Xen-4.19-unstable", "(XEN) CPU:"},
     {"With the debug build", "(XEN) after reuse."}},
    {"config lines",
     "My config:\nCONFIG_KASAN=y\n# CONFIG_SLUB_DEBUG is not set\nthat is all\n",
     {"CONFIG_KASAN=y", "# CONFIG_SLUB_DEBUG is not set"},
     {"My config:", "that is all"}},
};

static bool
has_line(const char *region, const char *needle)
{
    return strstr(region, needle) != NULL;
}

static void
test_split(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(split_cases) / sizeof(split_cases[0]); i++) {
        const struct split_case *c = &split_cases[i];
        struct message *m = parse(c->text);
        const char *code = m->regions[REGION_CODE].text;
        const char *report = m->regions[REGION_REPORT].text;

        print_message("case %s\n--report--\n%s--code--\n%s", c->name, report, code);
        for (size_t k = 0; k < 4 && c->code[k]; k++) {
            assert_true(has_line(code, c->code[k]));
            assert_false(has_line(report, c->code[k]));
        }
        for (size_t k = 0; k < 4 && c->report[k]; k++) {
            assert_true(has_line(report, c->report[k]));
            assert_false(has_line(code, c->report[k]));
        }
        assert_int_equal(strlen(code), m->regions[REGION_CODE].len);
        assert_int_equal(strlen(report), m->regions[REGION_REPORT].len);
        message_free(m);
    }
}

static void
test_facts_from_code_too(void **state)
{
    struct message *m;

    (void)state;
    /* The trace names the function and path; prose names the version. */
    m = parse("Kernel 6.9 crashes:\n"
              "BUG: KASAN: use-after-free in hub_event+0x10/0x20\n"
              " hub_event+0x10/0x20 drivers/usb/core/hub.c:5800\n"
              " process_one_work()\n");
    assert_true(strv_contains(&m->versions, "6.9"));
    assert_true(strv_contains(&m->paths, "drivers/usb/core/hub.c"));
    assert_true(strv_contains(&m->functions, "process_one_work"));
    message_free(m);
}

static void
test_caps_and_empty(void **state)
{
    struct classifier_limits saved = limits;
    struct message *m;
    char *big;
    size_t n = 0;

    (void)state;
    m = parse("");
    assert_string_equal(m->regions[REGION_REPORT].text, "");
    assert_string_equal(m->regions[REGION_CODE].text, "");
    message_free(m);

    /* 1000 distinct functions: the list stops at its cap, no error. */
    big = malloc(1000 * 16);
    assert_non_null(big);
    for (int i = 0; i < 1000; i++)
        n += (size_t)sprintf(big + n, "fn_%d() ", i);
    m = parse(big);
    assert_true(m->functions.n > 0 && m->functions.n <= 256);
    message_free(m);

    /* Line cap. */
    limits.max_lines = 2;
    m = parse("one\ntwo\nthree\n");
    assert_null(strstr(m->regions[REGION_REPORT].text, "three"));
    assert_true(m->truncated);
    message_free(m);
    limits = saved;
    free(big);
}

/* ---- fast paths against plain reference code ---- */

static struct message *
parse_n(const char *text, size_t len)
{
    struct message *m = calloc(1, sizeof(*m));

    assert_non_null(m);
    assert_int_equal(report_parse(m, text, len, &limits), 0);
    return m;
}

static bool
has(const struct strv *sv, const char *s, size_t n)
{
    for (size_t i = 0; i < sv->n; i++)
        if (strlen(sv->v[i]) == n && memcmp(sv->v[i], s, n) == 0)
            return true;
    return false;
}

/* The URLs of one line as first written: every byte tried, strchr()
 * for the bytes that end one (which finds a NUL in any set). */
static size_t
ref_urls(char *s, size_t n, char out[][64], size_t max)
{
    size_t i = 0, k = 0;

    if (memchr(s, ':', n) == NULL)
        return 0;
    while (i < n) {
        size_t start, end;

        if (!((n - i >= 7 && strncasecmp(s + i, "http://", 7) == 0) ||
              (n - i >= 8 && strncasecmp(s + i, "https://", 8) == 0))) {
            i++;
            continue;
        }
        start = end = i;
        while (end < n && s[end] != ' ' && s[end] != '\t' && !strchr("<>\"'`|", s[end]))
            end++;
        while (end > start && strchr(".,;:!?)]}'\"*", s[end - 1]))
            end--;
        if (k < max && end - start < 64) {
            memcpy(out[k], s + start, end - start);
            out[k++][end - start] = '\0';
        }
        memset(s + start, ' ', end - start);
        i = end > start ? end : start + 1;
    }
    return k;
}

/* Every byte value right after a URL, and random lines of URL parts,
 * NULs and white space: the URLs must be the reference's. */
static void
test_urls_reference(void **state)
{
    static const char alphabet[] = "hHtTpPsS:/ .<\0a";
    uint32_t seed = 5;

    (void)state;
    for (int c = 0; c < 256; c++) {
        char line[64];
        size_t n = (size_t)snprintf(line, sizeof(line), "see http://a.example/x?yz more");
        struct message *m;
        bool ends = c == ' ' || c == '\t' || strchr("<>\"'`|", c) != NULL;

        if (c == '\n')
            continue;
        line[22] = (char)c;
        m = parse_n(line, n);
        if (m->urls.n != 1 || !has(&m->urls, line + 4, ends ? 18 : 21)) {
            print_error("byte %#x after a URL: %zu URLs\n", (unsigned)c, m->urls.n);
            fail();
        }
        message_free(m);
    }
    for (int round = 0; round < 5000; round++) {
        char line[48], copy[48], want[8][64];
        size_t n = 0, len, k;
        struct message *m;

        seed = seed * 1103515245u + 12345u;
        len = (seed >> 8) % 40;
        for (; n < len; n++) {
            seed = seed * 1103515245u + 12345u;
            line[n] = alphabet[(seed >> 8) % (sizeof(alphabet) - 1)];
        }
        if (round % 3 == 0 && len > 12)
            memcpy(line + (seed >> 12) % (len - 8), "http://", 7);
        if (round % 3 == 1 && len > 12)
            memcpy(line + (seed >> 12) % (len - 9), "HTTPS://", 8);
        memcpy(copy, line, n);
        k = ref_urls(copy, n, want, 8);
        m = parse_n(line, n);
        if (m->urls.n > k) {
            print_error("round %d: %zu URLs, reference %zu\n", round, m->urls.n, k);
            fail();
        }
        for (size_t i = 0; i < k; i++) {
            if (!has(&m->urls, want[i], strlen(want[i]))) {
                print_error("round %d: '%s' missing\n", round, want[i]);
                fail();
            }
        }
        message_free(m);
    }
}

/* A number glued to a token ("12:30") is skipped to the token's end; a
 * version right after counts only when that end is one of the bytes
 * strchr() finds in " \t,;()[]", which a NUL is, or one of the quotes,
 * braces and markup bytes that also end a product version's token. */
static void
test_version_token_end(void **state)
{
    (void)state;
    for (int c = 0; c < 256; c++) {
        char line[32];
        size_t n = (size_t)snprintf(line, sizeof(line), "at 12:30#6.8.1 here");
        bool want = strchr(" \t,;()[]{}\"'<>`|*=\r", c) != NULL;
        struct message *m;

        if (c == '\n' || (c >= '0' && c <= '9'))
            continue;
        line[8] = (char)c;
        m = parse_n(line, n);
        if (has(&m->versions, "6.8.1", 5) != want) {
            print_error("byte %#x after 12:30: versions %zu\n", (unsigned)c, m->versions.n);
            fail();
        }
        message_free(m);
    }
}

/* A NUL at any place outside the versions leaves them found: the skip
 * to the next digit stops at a NUL and goes on after it. */
static void
test_versions_around_nul(void **state)
{
    static const char text[] = "Tested on Linux 6.8.1 and 5.15.0 too";
    const char *a = strstr(text, "6.8.1"), *b = strstr(text, "5.15.0");

    (void)state;
    for (size_t at = 0; at <= sizeof(text) - 1; at++) {
        char line[64];
        struct message *m;

        memcpy(line, text, at);
        line[at] = '\0';
        memcpy(line + at + 1, text + at, sizeof(text) - 1 - at);
        m = parse_n(line, sizeof(text));
        if ((at <= (size_t)(a - text) || at >= (size_t)(a - text) + 5) &&
            !has(&m->versions, "6.8.1", 5)) {
            print_error("NUL at %zu: 6.8.1 missing\n", at);
            fail();
        }
        if ((at <= (size_t)(b - text) || at >= (size_t)(b - text) + 6) &&
            !has(&m->versions, "5.15.0", 6)) {
            print_error("NUL at %zu: 5.15.0 missing\n", at);
            fail();
        }
        message_free(m);
    }
}

/* "next-" and "commit " are searched from their 'x' and 'm': after
 * lead-ins full of those bytes, at every shift and every cut. */
static void
test_next_and_commit_anywhere(void **state)
{
    static const char lead[] = "mxnoxmonmmommitnextx";
    static const char tail[] = " next-20260501 commit 1a2b3c4d5e6f x";
    const char *a = strstr(tail, "next-"), *b = strstr(tail, "commit ");

    (void)state;
    for (size_t shift = 0; shift < sizeof(lead); shift++) {
        char line[96];
        size_t n = (size_t)snprintf(line, sizeof(line), "%.*s%s", (int)shift, lead, tail);

        for (size_t cut = 0; cut <= n; cut++) {
            struct message *m = parse_n(line, cut);
            bool want_a = cut >= shift + (size_t)(a - tail) + 13;
            bool want_b = cut >= shift + (size_t)(b - tail) + 19;

            if (has(&m->versions, "next-20260501", 13) != want_a ||
                has(&m->versions, "commit 1a2b3c4d5e6f", 19) != want_b) {
                print_error("shift %zu cut %zu: %zu versions\n", shift, cut, m->versions.n);
                fail();
            }
            message_free(m);
        }
    }
}

/* Each trace marker opens a trace at any place in a line; one byte
 * short, it does not. */
static void
test_trace_markers(void **state)
{
    static const char *const markers[] = {
        "BUG: ",
        "KASAN:",
        "UBSAN:",
        "KCSAN:",
        "KMSAN:",
        "Oops:",
        "Oops -",
        "general protection fault",
        "Call Trace:",
        "Call trace:",
        "WARNING: CPU:",
        "Kernel panic",
        "AddressSanitizer",
        "LeakSanitizer",
        "UndefinedBehaviorSanitizer",
        "------------[ cut here ]",
        "Unable to handle kernel",
        "Modules linked in:",
        "---[ end trace",
        "Hardware name:",
        "INFO: task ",
        "rcu: INFO:",
        "WARNING: possible",
        "unreferenced object 0x",
    };

    (void)state;
    for (size_t i = 0; i < sizeof(markers) / sizeof(markers[0]); i++) {
        for (size_t lead = 0; lead < 4; lead++) {
            for (size_t cut = 0; cut < 2; cut++) {
                char line[64];
                size_t n =
                    (size_t)snprintf(line, sizeof(line), "%.*s%s", (int)lead, "ab c", markers[i]) -
                    cut;
                struct message *m = parse_n(line, n);

                if ((m->regions[REGION_CODE].len > 0) != (cut == 0)) {
                    print_error("'%.*s': code '%s'\n", (int)n, line, m->regions[REGION_CODE].text);
                    fail();
                }
                message_free(m);
            }
        }
    }
}

/* The markers are looked for at every fourth byte only (the shortest is
 * five long): each one, whole or cut at every length, at every offset
 * from the line start, with text or the line end after it and with a
 * near miss (its own start) before it. */
static void
test_trace_marker_offsets(void **state)
{
    static const char *const markers[] = {
        "BUG: ",
        "KASAN:",
        "Oops:",
        "Oops -",
        "general protection fault",
        "Call Trace:",
        "------------[ cut here ]",
        "---[ end trace",
        "rcu: INFO:",
        "unreferenced object 0x",
    };
    static const char *const leads[] = {"", "a", "ab", "ab ", "ab c", "ab cd", "ab cd ", "ab cd e"};

    (void)state;
    for (size_t i = 0; i < sizeof(markers) / sizeof(markers[0]); i++) {
        size_t len = strlen(markers[i]);

        for (size_t lead = 0; lead < sizeof(leads) / sizeof(leads[0]) + 1; lead++) {
            for (size_t keep = 1; keep <= len; keep++) {
                for (int tail = 0; tail < 2; tail++) {
                    char line[128];
                    struct message *m;
                    int n;

                    if (lead < sizeof(leads) / sizeof(leads[0]))
                        n = snprintf(line, sizeof(line), "%s%.*s%s", leads[lead], (int)keep,
                                     markers[i], tail ? "|x" : "");
                    else
                        n = snprintf(line, sizeof(line), "%.*s%.*s%s", (int)len - 1, markers[i],
                                     (int)keep, markers[i], tail ? "|x" : "");
                    m = parse_n(line, (size_t)n);
                    if ((m->regions[REGION_CODE].len > 0) != (keep == len)) {
                        print_error("'%s': code '%s'\n", line, m->regions[REGION_CODE].text);
                        fail();
                    }
                    message_free(m);
                }
            }
        }
    }
}

/* Each line lands whole in one of the two texts, in order. */
static void
test_split_sizes(void **state)
{
    static const char text[] = "prose one\n"
                               "BUG: KASAN: use-after-free in foo+0x1/0x2\n"
                               " ? bar+0x3/0x4\n"
                               "\n"
                               "prose two\r\n"
                               "```\n"
                               "x = 1;\n"
                               "```\n"
                               "last, no newline";
    struct message *m = parse_n(text, sizeof(text) - 1);

    (void)state;
    assert_string_equal(m->regions[REGION_REPORT].text,
                        "prose one\n\nprose two\nlast, no newline\n");
    assert_int_equal(m->regions[REGION_REPORT].len, strlen(m->regions[REGION_REPORT].text));
    assert_string_equal(m->regions[REGION_CODE].text, "BUG: KASAN: use-after-free in foo+0x1/0x2\n"
                                                      " ? bar+0x3/0x4\n```\nx = 1;\n```\n");
    assert_int_equal(m->regions[REGION_CODE].len, strlen(m->regions[REGION_CODE].text));
    message_free(m);
}

static int
setup(void **state)
{
    struct classifier_options opts;

    (void)state;
    classifier_options_default(&opts);
    limits = opts.limits;
    return 0;
}

/* Lines given by the caller read as report_parse() reads the text on its
 * own: '\r' dropped, long lines cut whole-character, max_lines noted. */
static void
test_given_lines(void **state)
{
    static const char text[] = "see hub_event() in\r\n\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9 v6.9\n"
                               "\n    code();\r\nlast line v6.8\n";
    struct classifier_limits lim = limits;
    struct text_lines lines;
    struct message *m[2];
    bool cut;

    (void)state;
    lim.max_lines = 4;
    lim.max_line_bytes = 7;
    assert_int_equal(text_lines_split(text, sizeof(text) - 1, 100, &lines, &cut), 0);
    for (int given = 0; given < 2; given++) {
        m[given] = calloc(1, sizeof(*m[given]));
        assert_non_null(m[given]);
        assert_int_equal(
            report_parse_lines(m[given], text, sizeof(text) - 1, given ? &lines : NULL, &lim), 0);
        assert_true(m[given]->truncated);
        assert_string_equal(m[given]->measure_evidence[MEASURE_LIMIT_HIT], "max_lines=4");
    }
    for (unsigned k = REGION_REPORT; k <= REGION_CODE; k++)
        assert_string_equal(m[0]->regions[k].text, m[1]->regions[k].text);
    assert_non_null(
        strstr(m[1]->regions[REGION_REPORT].text, "see hub\n\xc3\xa9\xc3\xa9\xc3\xa9\n"));
    assert_null(strstr(m[1]->regions[REGION_REPORT].text, "last"));
    message_free(m[0]);
    message_free(m[1]);
    free(lines.v);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_facts),
        cmocka_unit_test(test_no_versions),
        cmocka_unit_test(test_split),
        cmocka_unit_test(test_facts_from_code_too),
        cmocka_unit_test(test_urls_reference),
        cmocka_unit_test(test_version_token_end),
        cmocka_unit_test(test_versions_around_nul),
        cmocka_unit_test(test_next_and_commit_anywhere),
        cmocka_unit_test(test_trace_markers),
        cmocka_unit_test(test_trace_marker_offsets),
        cmocka_unit_test(test_split_sizes),
        cmocka_unit_test(test_caps_and_empty),
        cmocka_unit_test(test_given_lines),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
