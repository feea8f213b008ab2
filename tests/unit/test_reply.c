/*
 * test_reply.c - automatic replies: the RFC 3834 suppression table, the
 * rendered message (headers, header injection, subject folding and
 * encoding, Message-ID handling), template errors, findings and
 * questions, and the sender with fake sendmail programs and a fake SMTP
 * server on loopback.
 *
 * The exact-argv check runs this program itself as "sendmail": when
 * TEST_REPLY_FAKE_DIR is set in the environment, main() records argv and
 * stdin there and exits. Other fakes are small shell scripts written into
 * a temporary directory.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "file_read.h"
#include "reply.h"

#ifndef SLOP_SOURCE_DIR
#define SLOP_SOURCE_DIR "."
#endif

#define FAKE_ENV "TEST_REPLY_FAKE_DIR"

/* ---- helpers ---------------------------------------------------------- */

static char tmpdir[64];

static int
rm_entry(const char *path, const struct stat *sb, int type, struct FTW *ftw)
{
    (void)sb;
    (void)type;
    (void)ftw;
    return remove(path);
}

static int
group_setup(void **state)
{
    (void)state;
    strcpy(tmpdir, "/tmp/test_reply.XXXXXX");
    return mkdtemp(tmpdir) ? 0 : -1;
}

static int
group_teardown(void **state)
{
    (void)state;
    nftw(tmpdir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    return 0;
}

static void
write_file(const char *path, const char *text, mode_t mode)
{
    FILE *f = fopen(path, "w");

    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
    assert_int_equal(chmod(path, mode), 0);
}

static char *
read_file(const char *path)
{
    char *buf;
    size_t len;

    return file_read(path, (1 << 20) - 1, FILE_READ_CUT, &buf, &len) == 0 ? buf : NULL;
}

/* The header block of msg (up to the blank line), as a new string. */
static char *
header_block(const char *msg)
{
    const char *end = strstr(msg, "\n\n");

    assert_non_null(end);
    return strndup(msg, (size_t)(end - msg) + 1);
}

/* Unfolded value of the first header called name, or NULL. */
static char *
header_get(const char *msg, const char *name)
{
    char *hdr = header_block(msg);
    size_t nlen = strlen(name);
    char *ret = NULL;

    for (char *line = hdr; *line != '\0';) {
        char *nl = strchr(line, '\n');

        if (strncasecmp(line, name, nlen) == 0 && line[nlen] == ':') {
            size_t cap = strlen(line) + 1, len = 0;
            char *p = line + nlen + 1;

            ret = calloc(1, cap);
            while (*p == ' ')
                p++;
            for (;;) {
                char *e = strchr(p, '\n');

                memcpy(ret + len, p, (size_t)(e - p));
                len += (size_t)(e - p);
                if (e[1] != ' ' && e[1] != '\t')
                    break;
                p = e + 1; /* keep the folding white space */
            }
            ret[len] = '\0';
            break;
        }
        line = nl + 1;
    }
    free(hdr);
    return ret;
}

/* Every header line is a known field or a continuation; count fields. */
static void
assert_headers_clean(const char *msg, size_t *ret_fields)
{
    static const char *const allowed[] = {
        "From",
        "To",
        "Subject",
        "Date",
        "Message-ID",
        "In-Reply-To",
        "References",
        "Auto-Submitted",
        "X-Auto-Response-Suppress",
        "MIME-Version",
        "Content-Type",
        "Content-Transfer-Encoding",
    };
    char *hdr = header_block(msg);
    size_t fields = 0;

    assert_null(strchr(hdr, '\r'));
    for (char *line = hdr; *line != '\0';) {
        char *nl = strchr(line, '\n');
        bool ok = false;

        assert_true(nl - line < 998);
        if (line[0] == ' ' || line[0] == '\t') {
            ok = line != hdr;
        } else {
            for (size_t i = 0; i < sizeof(allowed) / sizeof(*allowed); i++) {
                size_t n = strlen(allowed[i]);

                if (strncmp(line, allowed[i], n) == 0 && line[n] == ':')
                    ok = true;
            }
            fields++;
        }
        if (!ok)
            fail_msg("unexpected header line: %.*s", (int)(nl - line), line);
        line = nl + 1;
    }
    free(hdr);
    if (ret_fields != NULL)
        *ret_fields = fields;
}

/* body with every line break (and the indent after it) turned into one
 * space, so phrases can be found whatever the wrapping. */
static char *
unwrap(const char *body)
{
    char *out = strdup(body);
    size_t n = 0;

    for (const char *p = body; *p != '\0'; p++) {
        if (*p == '\n') {
            out[n++] = ' ';
            while (p[1] == ' ')
                p++;
        } else {
            out[n++] = *p;
        }
    }
    out[n] = '\0';
    return out;
}

static struct classifier_hit test_hits[] = {
    {"TM_EXCESS_PRIVILEGES",
     "needs root or CAP_SYS_ADMIN already held; no trust boundary is crossed",
     "https://docs.example.org/process/threat-model.html#excess-of-initial-privileges", 4.5,
     "requires root privileges"},
    {"NO_TESTING_INFO", "the log does not say how the change was tested", NULL, 1.5, NULL},
    {"REPORT_NO_VERSION", "no kernel version or commit is named",
     "https://docs.example.org/admin-guide/reporting-issues.html", 2.0, "evil\r\nBcc: x"},
    {"__HELPER_RULE", "helper rules are never shown", NULL, 0, NULL},
};

static struct classifier_result test_result = {
    .kind = CLASSIFIER_KIND_REPORT,
    .action = CLASSIFIER_ACTION_REPLY,
    .score = 8.0,
    .required = 5.0,
    .message_id = "orig.123@example.org",
    .subject = "[PATCH] net: fix use-after-free in foo_bar()",
    .disclosure = true,
    .hits = test_hits,
    .n_hits = 4,
};

static char *
render(const struct reply_input *in)
{
    struct reply_template *t = NULL;
    char err[256], *msg = NULL;

    assert_int_equal(reply_template_load(NULL, &t, err, sizeof(err)), 0);
    assert_int_equal(reply_render(t, in, &msg), 0);
    reply_template_free(t);
    assert_non_null(msg);
    return msg;
}

/* ---- our own replies' token --------------------------------------------- */

/* The unfolded header fields of msg into v (names and values point into
 * buf); returns how many. */
static size_t
split_headers(const char *msg, char *buf, size_t size, struct reply_header *v, size_t max)
{
    size_t n = 0;
    char *line, *save = NULL;

    snprintf(buf, size, "%s", msg);
    *strstr(buf, "\n\n") = '\0';
    for (line = strtok_r(buf, "\n", &save); line != NULL && n < max;
         line = strtok_r(NULL, "\n", &save)) {
        char *colon = strchr(line, ':');

        if (line[0] == ' ' || line[0] == '\t' || colon == NULL)
            continue; /* a continuation: the fields checked here are one line */
        *colon = '\0';
        v[n].name = line;
        v[n].value = colon + 1;
        n++;
    }
    return n;
}

/* A reply carries a token of its Message-ID and Date under the key; it
 * checks out with that key only, and not once either field changed. */
static void
test_token(void **state)
{
    struct reply_key key = {{0x11, 0x22, 0x33}}, other = {{0x11, 0x22, 0x34}};
    struct reply_input in = {.to = "dev@example.org",
                             .hostname = "host.example",
                             .now = 1800000000,
                             .result = &test_result,
                             .key = &key};
    struct reply_header h[64];
    char buf[8192], *msg = render(&in), *plain;
    size_t n;

    (void)state;
    assert_non_null(strstr(msg, "\n" REPLY_TOKEN_HEADER ": "));
    n = split_headers(msg, buf, sizeof(buf), h, 64);
    assert_true(reply_token_valid(&key, h, n));
    assert_false(reply_token_valid(&other, h, n));
    assert_false(reply_token_valid(NULL, h, n));
    for (size_t i = 0; i < n; i++) {
        if (strcasecmp(h[i].name, "Date") == 0) {
            const char *date = h[i].value;

            h[i].value = " Thu, 15 Jan 2027 08:00:00 +0000";
            assert_false(reply_token_valid(&key, h, n));
            h[i].value = date;
        }
    }
    /* a second token field makes it none of ours */
    h[n].name = REPLY_TOKEN_HEADER;
    h[n].value = " 00";
    assert_false(reply_token_valid(&key, h, n + 1));
    free(msg);

    in.key = NULL;
    plain = render(&in);
    assert_null(strstr(plain, REPLY_TOKEN_HEADER));
    n = split_headers(plain, buf, sizeof(buf), h, 64);
    assert_false(reply_token_valid(&key, h, n));
    free(plain);
}

/* The key file: made at the first start with mode 0600, the same key read
 * back; a file others can read, or one that holds no key, is refused. */
static void
test_key_file(void **state)
{
    char dir[] = "/tmp/test_reply_key_XXXXXX", path[64], err[512];
    struct reply_key a, b;
    struct stat sb;
    FILE *f;

    (void)state;
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof(path), "%s/reply.key", dir);
    assert_int_equal(reply_key_load(path, false, &a, err, sizeof(err)), -ENOENT);
    assert_non_null(strstr(err, path));
    assert_int_equal(reply_key_load(path, true, &a, err, sizeof(err)), 0);
    assert_int_equal(stat(path, &sb), 0);
    assert_int_equal(sb.st_mode & 0777, 0600);
    assert_int_equal(sb.st_size, 2 * REPLY_KEY_BYTES + 1);
    assert_int_equal(reply_key_load(path, true, &b, err, sizeof(err)), 0);
    assert_memory_equal(a.bytes, b.bytes, REPLY_KEY_BYTES);
    assert_int_equal(chmod(path, 0644), 0);
    assert_int_equal(reply_key_load(path, false, &b, err, sizeof(err)), -EPERM);
    assert_non_null(strstr(err, "chmod 600"));
    assert_int_equal(chmod(path, 0600), 0);
    f = fopen(path, "w");
    assert_non_null(f);
    fputs("not a key\n", f);
    fclose(f);
    assert_int_equal(reply_key_load(path, true, &b, err, sizeof(err)), -EINVAL);
    unlink(path);
    rmdir(dir);
}

/* ---- suppression ------------------------------------------------------ */

static void
test_suppress_table(void **state)
{
    static const struct reply_header none[] = {{NULL, NULL}};
    static const struct {
        const char *sender;
        struct reply_header hdr[3];
        const char *want; /* NULL: a reply is allowed */
    } cases[] = {
        {"dev@example.org", {{"Subject", "hi"}}, NULL},
        {"<dev@example.org>", {{"Auto-Submitted", "no"}}, NULL},
        {"dev@example.org", {{"Auto-Submitted", "No (manual)"}}, NULL},
        {"dev@example.org", {{"Precedence", "first-class"}}, NULL},
        {"dev@example.org", {{"X-Auto-Response-Suppress", "None"}}, NULL},
        {"dev@example.org", {{"Listing", "x"}, {"X-List", "y"}}, NULL},
        {"requester@example.org", {{NULL, NULL}}, NULL},
        {"owner@example.org", {{NULL, NULL}}, NULL},
        {"", {{NULL, NULL}}, "null sender"},
        {"<>", {{NULL, NULL}}, "null sender"},
        {" <> ", {{NULL, NULL}}, "null sender"},
        {NULL, {{NULL, NULL}}, "null sender"},
        {"dev@example.org", {{"Auto-Submitted", "auto-replied"}}, "auto-submitted"},
        {"dev@example.org", {{"auto-submitted", "auto-generated"}}, "auto-submitted"},
        {"dev@example.org", {{"Auto-Submitted", ""}}, "auto-submitted"},
        {"dev@example.org", {{"List-Id", "<linux-kernel.vger.kernel.org>"}}, "list header"},
        {"dev@example.org", {{"list-post", "<mailto:l@example.org>"}}, "list header"},
        {"dev@example.org", {{"List-Unsubscribe", "<mailto:x@example.org>"}}, "list header"},
        {"dev@example.org", {{"X-Mailing-List", "linux-kernel@vger.kernel.org"}}, "list header"},
        {"dev@example.org", {{"Precedence", "bulk"}}, "precedence"},
        {"dev@example.org", {{"Precedence", " List"}}, "precedence"},
        {"dev@example.org", {{"Precedence", "junk"}}, "precedence"},
        {"dev@example.org", {{"X-Auto-Response-Suppress", "All"}}, "auto-response-suppress"},
        {"dev@example.org",
         {{"X-Auto-Response-Suppress", "OOF, AutoReply"}},
         "auto-response-suppress"},
        {"MAILER-DAEMON@example.org", {{NULL, NULL}}, "system sender"},
        {"postmaster@example.org", {{NULL, NULL}}, "system sender"},
        {"owner-linux-kernel@vger.kernel.org", {{NULL, NULL}}, "system sender"},
        {"linux-kernel-request@vger.kernel.org", {{NULL, NULL}}, "system sender"},
        {"netdev-owner@vger.kernel.org", {{NULL, NULL}}, "system sender"},
        {"list-bounces+dev=example.org@lists.example.org", {{NULL, NULL}}, "system sender"},
        {"noreply@github.com", {{NULL, NULL}}, "system sender"},
        {"No-Reply@example.org", {{NULL, NULL}}, "system sender"},
        {"notifications-noreply@example.org", {{NULL, NULL}}, "system sender"},
        {"security@kernel.org", {{NULL, NULL}}, "own address"},
        {"<Slop@Host.Example>", {{NULL, NULL}}, "own address"},
        {"dev@example.org\r\nBcc: x@example.org", {{NULL, NULL}}, "bad sender"},
        {"dev\n@example.org", {{NULL, NULL}}, "bad sender"},
        {"no-at-sign", {{NULL, NULL}}, "bad sender"},
        {"@example.org", {{NULL, NULL}}, "bad sender"},
        {"dev@", {{NULL, NULL}}, "bad sender"},
        {"-oQ/tmp@example.org", {{NULL, NULL}}, "bad sender"},
        {"a b@example.org", {{NULL, NULL}}, "bad sender"},
        {"<dev@example.org", {{NULL, NULL}}, "bad sender"},
        {"dev@example.org, other@example.org", {{NULL, NULL}}, "bad sender"},
    };
    static const char *const own[] = {"security@kernel.org", "slop-milter <slop@host.example>",
                                      "@kernel.org"};
    char longaddr[300];
    size_t n;

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const char *got;

        for (n = 0; n < 3 && cases[i].hdr[n].name != NULL; n++)
            ;
        got = reply_suppress_reason(cases[i].sender, cases[i].hdr, n, own, 3);
        if ((got == NULL) != (cases[i].want == NULL) ||
            (got != NULL && strcmp(got, cases[i].want) != 0))
            fail_msg("case %zu (%s): got '%s' want '%s'", i,
                     cases[i].sender ? cases[i].sender : "NULL", got ? got : "(reply)",
                     cases[i].want ? cases[i].want : "(reply)");
    }

    /* Longer than 254 bytes. */
    memset(longaddr, 'a', sizeof(longaddr));
    strcpy(longaddr + 250, "@b.org");
    assert_string_equal(reply_suppress_reason(longaddr, none, 0, NULL, 0), "bad sender");
    longaddr[sizeof(longaddr) - 1] = '\0';
    memmove(longaddr, longaddr + 60, strlen(longaddr + 60) + 1); /* 240 bytes */
    assert_null(reply_suppress_reason(longaddr, NULL, 0, NULL, 0));
    /* An "@domain" entry in own_addrs protects no one by itself. */
    assert_null(reply_suppress_reason("dev@kernel.org", NULL, 0, own, 3));
}

/* ---- rendering -------------------------------------------------------- */

static void
test_render_headers(void **state)
{
    struct reply_input in = {
        .from = "slop-milter <slop@host.example>",
        .to = "<dev@example.org>",
        .doc_base = "https://docs.example.org",
        .hostname = "host.example",
        .now = 1700000000,
        .result = &test_result,
    };
    char *msg, *v;
    size_t fields;

    (void)state;
    msg = render(&in);
    assert_headers_clean(msg, &fields);
    assert_int_equal(fields, 12);

    v = header_get(msg, "From");
    assert_string_equal(v, "slop-milter <slop@host.example>");
    free(v);
    v = header_get(msg, "To");
    assert_string_equal(v, "<dev@example.org>");
    free(v);
    v = header_get(msg, "Subject");
    assert_string_equal(v, "Automatic reply: details missing from your message");
    free(v);
    v = header_get(msg, "In-Reply-To");
    assert_string_equal(v, "<orig.123@example.org>");
    free(v);
    v = header_get(msg, "References");
    assert_string_equal(v, "<orig.123@example.org>");
    free(v);
    v = header_get(msg, "Auto-Submitted");
    assert_string_equal(v, "auto-replied");
    free(v);
    v = header_get(msg, "X-Auto-Response-Suppress");
    assert_string_equal(v, "All");
    free(v);
    v = header_get(msg, "MIME-Version");
    assert_string_equal(v, "1.0");
    free(v);
    v = header_get(msg, "Content-Type");
    assert_string_equal(v, "text/plain; charset=utf-8");
    free(v);
    v = header_get(msg, "Content-Transfer-Encoding");
    assert_string_equal(v, "8bit");
    free(v);

    /* RFC 5322 date in the C locale: "Tue, 14 Nov 2023 22:13:20 +0000". */
    v = header_get(msg, "Date");
    {
        struct tm tm;
        char want[64];
        time_t now = 1700000000;

        localtime_r(&now, &tm);
        assert_int_equal(strlen(v), strlen("Tue, 14 Nov 2023 22:13:20 +0000"));
        assert_true(strncmp(v + 3, ", ", 2) == 0);
        snprintf(want, sizeof(want), "%04d", tm.tm_year + 1900);
        assert_non_null(strstr(v, want));
    }
    free(v);

    v = header_get(msg, "Message-ID");
    assert_true(v[0] == '<' && v[strlen(v) - 1] == '>');
    assert_non_null(strstr(v, "@host.example>"));
    free(v);

    /* Default From: without a configured one. */
    in.from = NULL;
    free(msg);
    msg = render(&in);
    v = header_get(msg, "From");
    assert_string_equal(v, "slop-milter <postmaster@host.example>");
    free(v);
    free(msg);
}

static void
test_render_injection(void **state)
{
    static const struct {
        const char *subject;
        const char *msgid;
        const char *from;
    } cases[] = {
        {"hello\r\nBcc: victim@example.org", "<a@b>", NULL},
        {"hello\nBcc: victim@example.org\n\nbody", "<a@b>", NULL},
        {"hello\rX-Evil: 1", "<a@b>\r\nBcc: victim@example.org", NULL},
        {"hello", "a@b\nBcc: victim@example.org", "me <m@x>\r\nBcc: victim@example.org"},
        {"\r\n\r\n", "\r\n", "\n"},
    };
    struct reply_template *t = NULL;
    char *msg = NULL;

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct reply_input in = {
            .to = "dev@example.org",
            .subject = cases[i].subject,
            .message_id = cases[i].msgid,
            .from = cases[i].from,
            .hostname = "h.example",
            .result = &test_result,
        };
        size_t fields;
        char *hdr;

        msg = render(&in);
        assert_headers_clean(msg, &fields);
        hdr = header_block(msg);
        if (strstr(hdr, "Bcc") != NULL && strstr(hdr, "\nBcc") != NULL)
            fail_msg("case %zu: injected header", i);
        assert_null(strstr(hdr, "\nX-Evil"));
        free(hdr);
        free(msg);
    }

    /* A recipient with CR/LF is refused outright. */
    assert_int_equal(reply_template_load(NULL, &t, NULL, 0), 0);
    {
        static const char *const bad_to[] = {
            "dev@example.org\r\nBcc: v@example.org",
            "dev@example.org\n",
            "",
            "<>",
            NULL,
            "a, b@example.org",
            "dev@example.org>",
        };
        for (size_t i = 0; i < sizeof(bad_to) / sizeof(*bad_to); i++) {
            struct reply_input in = {.to = bad_to[i], .result = &test_result};

            msg = NULL;
            assert_int_equal(reply_render(t, &in, &msg), -EINVAL);
            assert_null(msg);
        }
    }
    reply_template_free(t);
}

/*
 * The original subject never reaches a header; the body shows it as
 * quoted data: cleaned, cut to 80 bytes ("..." marks the cut), with its
 * links removed and its double quotes made single.
 */
static void
test_render_subject(void **state)
{
    char long_words[600], long_word[600];
    static const struct {
        const char *subject;
        const char *shown; /* between the quotes of 'with the subject "..."' */
    } cases[] = {
        {"Re: RE: re:[PATCH] fix", "[PATCH] fix"},
        {"  ", "(no subject)"},
        {"Über café: naïve résumé", "Über café: naïve résumé"},
        {"bad \xff\xfe bytes \xc3", "bad ?? bytes ?"},
        {"win now http://spam.example/x?a=1", "win now [link removed]"},
        {"see HTTPS://Spam.Example", "see [link removed]"},
        {"go www.spam.example today", "go [link removed] today"},
        {"mail mailto:x@spam.example", "mail [link removed]"},
        {"visit spam.example/offer now", "visit [link removed] now"},
        {"a \"quoted\" word", "a 'quoted' word"},
        {"x\r\nBcc: victim@example.org", "x Bcc: victim@example.org"},
        /* near misses: a path and a file name are not links */
        {"[PATCH] net/core/dev.c: fix", "[PATCH] net/core/dev.c: fix"},
        {"fix foo.c and bar.h", "fix foo.c and bar.h"},
        {NULL, NULL}, /* long words, filled in below */
        {NULL, NULL}, /* one long word */
    };
    const size_t n = sizeof(cases) / sizeof(cases[0]);

    (void)state;
    long_words[0] = '\0';
    while (strlen(long_words) < 500)
        strcat(long_words, "word ");
    memset(long_word, 'x', sizeof(long_word) - 1);
    long_word[sizeof(long_word) - 1] = '\0';
    for (size_t i = 0; i < n; i++) {
        struct reply_input in = {
            .to = "dev@example.org", .hostname = "h.example", .result = &test_result};
        char *msg, *v, *hdr, *shown, *end;
        const char *subject = cases[i].subject;

        if (i == n - 2)
            subject = long_words;
        else if (i == n - 1)
            subject = long_word;
        in.subject = subject;
        msg = render(&in);
        assert_headers_clean(msg, NULL);
        v = header_get(msg, "Subject");
        assert_string_equal(v, "Automatic reply: details missing from your message");
        free(v);
        hdr = header_block(msg);
        assert_null(strstr(hdr, "spam"));
        assert_null(strstr(hdr, "victim"));
        free(hdr);
        shown = strstr(msg, "with the subject \"");
        assert_non_null(shown);
        shown += strlen("with the subject \"");
        end = strstr(shown, "\".\n");
        assert_non_null(end);
        *end = '\0';
        if (cases[i].shown != NULL) {
            if (strcmp(shown, cases[i].shown) != 0)
                fail_msg("case %zu: shown '%s', expected '%s'", i, shown, cases[i].shown);
        } else {
            /* Cut to 80 bytes at a word (or character) boundary, then "...". */
            size_t len = strlen(shown);

            assert_true(len > 3 && len <= 80 + 3);
            assert_string_equal(shown + len - 3, "...");
            assert_memory_equal(shown, subject, len - 3 - (i == n - 2 ? 1 : 0));
        }
        assert_null(strstr(msg, "spam.example"));
        free(msg);
    }
}

static void
test_render_message_id(void **state)
{
    static const struct {
        const char *msgid;
        const char *want; /* NULL: no In-Reply-To */
    } cases[] = {
        {"<abc@example.org>", "<abc@example.org>"},
        {"abc@example.org", "<abc@example.org>"},
        {"  <abc.def+x@example.org>  ", "<abc.def+x@example.org>"},
        {"no-at-sign", NULL},
        {"<a b@example.org>", NULL},
        {"<abc@example.org>\r\nBcc: x@example.org", NULL},
        {"<<abc@example.org>>", NULL},
        {"<@example.org>", NULL},
        {"", NULL},
        {"<a..b@example.org>", NULL},
        {"<.a@example.org>", NULL},
        {"<a@example.org.>", NULL},
        {"<\"a b\"@example.org>", NULL},
        {"<a@b@example.org>", NULL},
        {"<a@exa(mple).org>", NULL},
        {"<a\x80@example.org>", NULL},
        {"<abc@[127.0.0.1]>", "<abc@[127.0.0.1]>"},
        {"<abc@[1[2]>", NULL},
        {"<x=?utf-8?b?YQ==?=@example.org>", "<x=?utf-8?b?YQ==?=@example.org>"},
    };
    char longid[300];
    struct reply_input in = {.to = "dev@example.org", .hostname = "h.example", .subject = "s"};

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]) + 1; i++) {
        const char *want;
        char *msg, *v, *r;

        if (i < sizeof(cases) / sizeof(cases[0])) {
            in.message_id = cases[i].msgid;
            want = cases[i].want;
        } else {
            memset(longid, 'a', sizeof(longid) - 1);
            longid[sizeof(longid) - 1] = '\0';
            longid[100] = '@';
            in.message_id = longid;
            want = NULL;
        }
        msg = render(&in);
        assert_headers_clean(msg, NULL);
        v = header_get(msg, "In-Reply-To");
        r = header_get(msg, "References");
        if (want == NULL) {
            if (v != NULL)
                fail_msg("case %zu: unexpected In-Reply-To '%s'", i, v);
            assert_null(r);
        } else {
            assert_non_null(v);
            assert_string_equal(v, want);
            assert_string_equal(r, want);
        }
        free(v);
        free(r);
        free(msg);
    }
}

/* Under another project: the other built-in template and questions name
 * neither the kernel nor its documents; the kernel's still do. */
static void
test_render_other_project(void **state)
{
    struct classifier_hit hit = {"REPORT_NO_VERSION", "no affected version given", NULL, 3.5, NULL};
    struct classifier_result res = {.score = 3.5, .hits = &hit, .n_hits = 1};
    struct reply_input in = {
        .to = "dev@example.org", .hostname = "h.example", .doc_base = "", .result = &res};
    struct reply_template *t = NULL;
    char err[256], *msg = NULL, *body;

    (void)state;
    for (int kernel = 0; kernel <= 1; kernel++) {
        assert_int_equal(reply_template_load_for(NULL, kernel, &t, err, sizeof(err)), 0);
        in.other_project = !kernel;
        in.doc_base = kernel ? NULL : "";
        assert_int_equal(reply_render(t, &in, &msg), 0);
        body = strstr(msg, "\n\n") + 2;
        assert_non_null(strstr(body, "No affected version given"));
        assert_int_equal(strstr(body, "kernel") != NULL, kernel);
        assert_int_equal(strstr(body, "https://") != NULL, kernel);
        assert_null(strstr(body, "\n\n\n"));
        free(msg);
        t = reply_template_free(t);
    }
}

/* The sender sees the findings about their mail, not the site's records:
 * no learned finding, no measure's bare reading, no evidence that names
 * other mail (a duplicate's Message-ID); evidence in words stays. */
static void
test_render_outsider_evidence(void **state)
{
    struct classifier_hit hits[] = {
        {"REPORT_NO_VERSION", "no affected version given", NULL, 2.0, "versions=0"},
        {"REPORT_NO_TRACE", "no trace or log", NULL, 1.0, "trace_lines=0, versions=0"},
        {"LEARNED_SLOP_95", "resembles mail this site marked as slop (p>=0.95)", NULL, 1.0,
         "p=0.97, from 300 slop and 250 genuine learned"},
        {"DUPLICATE", "the same report was already sent recently by someone else", NULL, 5.0,
         "duplicate of <other.1@example.net> from 2026-12-01"},
        {"TM_EXCESS_PRIVILEGES", "needs root already", NULL, 4.5, "requires root privileges"},
        {"REPORT_TERSE", "a short report", NULL, 0.5, "words=12 in the body"},
    };
    struct classifier_result res = {.score = 14.0, .hits = hits, .n_hits = 6};
    struct reply_input in = {.to = "dev@example.org", .hostname = "h.example", .result = &res};
    char *msg, *body;

    (void)state;
    body = strstr((msg = render(&in)), "\n\n") + 2;
    assert_non_null(strstr(body, "No affected version given"));
    assert_non_null(strstr(body, "No trace or log"));
    assert_null(strstr(body, "versions=0"));
    assert_null(strstr(body, "trace_lines"));
    assert_null(strstr(body, "LEARNED_SLOP_95"));
    assert_null(strstr(body, "marked as slop"));
    assert_non_null(strstr(body, "already sent recently"));
    assert_null(strstr(body, "other.1@example.net"));
    assert_non_null(strstr(body, "Evidence: \"requires root privileges\""));
    assert_non_null(strstr(body, "Evidence: \"words=12 in the body\""));
    free(msg);
}

static void
test_render_body(void **state)
{
    struct classifier_hit generic_hit = {"SOMETHING_ELSE", "some finding", NULL, 1.0, NULL};
    struct classifier_result plain = {
        .score = 1.0, .hits = &generic_hit, .n_hits = 1, .disclosure = false};
    struct classifier_result empty = {0};
    char *flat;
    struct reply_input in = {
        .to = "dev@example.org",
        .hostname = "h.example",
        .doc_base = "https://docs.example.org",
        .result = &test_result,
    };
    char *msg, *body;

    (void)state;
    msg = render(&in);
    body = strstr(msg, "\n\n") + 2;
    flat = unwrap(body);
    /* Findings: descriptions as sentences, evidence, doc links; helper
     * rules hidden. */
    assert_non_null(strstr(flat, "- Needs root or CAP_SYS_ADMIN"));
    assert_non_null(strstr(flat, "TM_EXCESS_PRIVILEGES, 4.5 points"));
    assert_non_null(strstr(body, "\n  Evidence: \"requires root privileges\"\n"));
    assert_non_null(strstr(
        body, "\n  See: "
              "https://docs.example.org/process/threat-model.html#excess-of-initial-privileges\n"));
    assert_non_null(strstr(flat, "The log does not say how the change was tested"));
    assert_non_null(strstr(flat, "No kernel version or commit is named"));
    assert_non_null(strstr(body, "Evidence: \"evil Bcc: x\""));
    assert_null(strstr(body, "__HELPER_RULE"));
    assert_null(strstr(flat, "helper rules are never shown"));
    /* Questions from the rule names. */
    assert_non_null(strstr(flat, "- How did you test this change"));
    assert_non_null(strstr(flat, "- Which kernel version is affected"));
    assert_non_null(strstr(flat, "- Which trust boundary does this cross on a correctly configured "
                                 "production system?"));
    assert_null(strstr(flat, "Can you share a reproducer"));
    assert_null(strstr(flat, "What problem did you observe"));
    /* Disclosure note and document links. */
    assert_non_null(strstr(flat, "If AI tools helped find this bug, it must be treated as public "
                                 "(security-bugs.rst)."));
    assert_non_null(strstr(body, "https://docs.example.org/process/threat-model.html\n"));
    assert_non_null(strstr(body, "https://docs.example.org/process/security-bugs.html\n"));
    assert_non_null(strstr(flat, "score 8.0"));
    assert_non_null(strstr(body, "<orig.123@example.org>"));
    assert_non_null(strstr(body, "[PATCH] net: fix use-after-free in foo_bar()"));
    free(flat);
    for (char *p = body; *p; p = strchr(p, '\n') + 1)
        assert_true(strchr(p, '\n') - p < 998);
    assert_null(strstr(body, "\n\n\n"));
    assert_null(strchr(body, '\r'));
    assert_int_equal(body[strlen(body) - 1], '\n');
    free(msg);

    /* No matching keyword: the generic question; no disclosure line. */
    in.result = &plain;
    in.doc_base = NULL;
    msg = render(&in);
    body = strstr(msg, "\n\n") + 2;
    assert_non_null(strstr(body, "What problem did you observe"));
    assert_null(strstr(body, "treated as public"));
    assert_null(strstr(body, "\n\n\n"));
    assert_non_null(strstr(body, "https://docs.kernel.org/process/threat-model.html"));
    free(msg);

    /* Evidence is quoted data: links removed, quotes made single, cut. */
    {
        static char ev[400];
        struct classifier_hit link_hit = {"SOMETHING_ELSE", "some finding", NULL, 1.0, ev};
        struct classifier_result linked = {.score = 1.0, .hits = &link_hit, .n_hits = 1};

        snprintf(ev, sizeof(ev), "click https://evil.example/a?b=\"c\" or \"www.evil.example\" %s",
                 "and then a long tail of words that goes on well past the cap of the "
                 "evidence shown in a reply so that it has to be cut somewhere");
        in.result = &linked;
        msg = render(&in);
        body = strstr(msg, "\n\n") + 2;
        flat = unwrap(body);
        assert_null(strstr(msg, "evil.example"));
        assert_non_null(strstr(flat, "Evidence: \"click [link removed] or [link removed] and"));
        assert_non_null(strstr(flat, "...\""));
        assert_null(strstr(flat, "somewhere"));
        free(flat);
        free(msg);
    }

    in.result = &empty;
    msg = render(&in);
    body = strstr(msg, "\n\n") + 2;
    assert_non_null(strstr(body, "(no specific findings)"));
    assert_non_null(strstr(body, "(none)")); /* no message-id anywhere */
    free(msg);

    in.result = NULL;
    msg = render(&in);
    assert_non_null(strstr(msg, "score 0.0"));
    free(msg);
}

static void
test_questions_table(void **state)
{
    static const struct {
        const char *rules[3];
        const char *want[3]; /* question fragments expected, in this order */
    } cases[] = {
        {{"NO_TESTING_INFO"}, {"How did you test this change"}},
        {{"REPORT_NO_VERSION"}, {"Which kernel version is affected"}},
        {{"REPORT_NO_REPRODUCER"}, {"Can you share a reproducer (source or steps)?"}},
        {{"REPORT_NO_TRACE_NO_REPRO"}, {"Can you share a reproducer"}},
        {{"TM_CRAFTED_FS_IMAGE"}, {"Which trust boundary does this cross"}},
        {{"MUTEX_DESTROY_AS_SECURITY_FIX"},
         {"Which trust boundary", "Which object lifetime or locking rule"}},
        {{"TM_EOL_KERNEL"}, {"Which kernel version", "Which trust boundary"}},
        {{"LOCK_UNLOCK_TO_DESTROY"}, {"Which object lifetime or locking rule"}},
        {{"DEV_PUT_DEVICE_TO_KFREE"}, {"Which object lifetime or locking rule"}},
        {{"CP_MISSING_FIXES_TAG"}, {"Which commit introduced the problem"}},
        {{"CP_MISSING_SIGN_OFF"}, {"Signed-off-by"}},
        {{"LOG_MARKDOWN", "CHATBOT_RESIDUE"}, {"in a few sentences of your own"}},
        {{"UNKNOWN_RULE"}, {"What problem did you observe"}},
        {{"__HELPER_ONLY"}, {"What problem did you observe"}},
        {{NULL}, {"What problem did you observe"}},
    };
    struct reply_template *t = NULL;

    (void)state;
    assert_int_equal(reply_template_load(NULL, &t, NULL, 0), 0);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct classifier_hit hits[3] = {{0}};
        struct classifier_result res = {.hits = hits};
        struct reply_input in = {.to = "d@example.org", .result = &res};
        char *msg = NULL, *flat, *q;
        const char *prev;
        int questions = 0;

        for (size_t k = 0; k < 3 && cases[i].rules[k] != NULL; k++) {
            hits[k].rule = (char *)(uintptr_t)cases[i].rules[k];
            hits[k].description = "d";
            res.n_hits++;
        }
        assert_int_equal(reply_render(t, &in, &msg), 0);
        flat = unwrap(msg);
        q = strstr(flat, "would likely ask you:");
        assert_non_null(q);
        prev = q;
        for (size_t k = 0; k < 3 && cases[i].want[k] != NULL; k++) {
            const char *at = strstr(q, cases[i].want[k]);

            if (at == NULL || at < prev)
                fail_msg("case %zu: missing or misplaced '%s'", i, cases[i].want[k]);
            prev = at;
            questions++;
        }
        /* No other question was asked. */
        {
            int dashes = 0;
            const char *end = strstr(q, "Security reports");

            for (const char *p = q; p < end; p++)
                dashes += p[0] == ' ' && p[1] == '-' && p[2] == ' ';
            if (dashes != questions)
                fail_msg("case %zu: %d questions, want %d", i, dashes, questions);
        }
        free(flat);
        free(msg);
    }
    reply_template_free(t);
}

static void
test_template_file_matches_builtin(void **state)
{
    struct reply_template *file = NULL, *builtin = NULL;
    struct reply_input in = {.to = "dev@example.org",
                             .hostname = "h.example",
                             .now = 1700000000,
                             .result = &test_result};
    char err[256], *a = NULL, *b = NULL, *ma, *mb;

    (void)state;
    assert_int_equal(
        reply_template_load(SLOP_SOURCE_DIR "/milter/reply.tmpl", &file, err, sizeof(err)), 0);
    assert_int_equal(reply_template_load(NULL, &builtin, err, sizeof(err)), 0);
    assert_int_equal(reply_render(file, &in, &a), 0);
    assert_int_equal(reply_render(builtin, &in, &b), 0);
    /* Message-IDs are random; everything else must match. */
    ma = strstr(a, "\nMessage-ID:");
    mb = strstr(b, "\nMessage-ID:");
    assert_non_null(ma);
    assert_non_null(mb);
    assert_memory_equal(a, b, (size_t)(ma - a));
    assert_string_equal(strchr(ma + 1, '\n'), strchr(mb + 1, '\n'));
    free(a);
    free(b);
    reply_template_free(file);
    reply_template_free(builtin);
    assert_null(reply_template_free(NULL));
}

static void
test_template_errors(void **state)
{
    static const struct {
        const char *text;
        int want;
        const char *where; /* expected ":line: reason" fragment */
    } cases[] = {
        {"Hello\n\n{subjekt}\n", -EINVAL, ":3: unknown placeholder '{subjekt}'"},
        {"Hello {subject\nworld\n", -EINVAL, ":1: unterminated placeholder"},
        {"a\nb\nc\nbad \xff byte\n", -EINVAL, ":4: invalid UTF-8"},
        {"a\n{}\n", -EINVAL, ":2: unknown placeholder '{}'"},
        {"a\nctl \x01 char\n", -EINVAL, ":2: control character 0x01"},
        {"{Subject}\n", -EINVAL, ":1: unknown placeholder '{Subject}'"},
        {"ok {{literal}} {score}\r\n{findings}\n", 0, NULL},
    };
    char path[128], err[256];
    struct reply_template *t;

    (void)state;
    snprintf(path, sizeof(path), "%s/t.tmpl", tmpdir);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int r;

        write_file(path, cases[i].text, 0644);
        t = NULL;
        err[0] = '\0';
        r = reply_template_load(path, &t, err, sizeof(err));
        if (r != cases[i].want)
            fail_msg("case %zu: got %d want %d (%s)", i, r, cases[i].want, err);
        if (cases[i].where != NULL) {
            assert_null(t);
            if (strncmp(err, path, strlen(path)) != 0 || strstr(err, cases[i].where) == NULL)
                fail_msg("case %zu: error '%s' lacks '%s'", i, err, cases[i].where);
        } else {
            struct reply_input in = {.to = "d@example.org", .result = &test_result};
            char *msg = NULL;

            assert_int_equal(reply_render(t, &in, &msg), 0);
            assert_non_null(strstr(msg, "\n\nok {literal}} 8.0\n- "));
            free(msg);
            reply_template_free(t);
        }
    }

    /* A line over 998 bytes. */
    {
        char *big = malloc(1200);

        memset(big, 'a', 1100);
        strcpy(big + 1100, "\n");
        write_file(path, big, 0644);
        free(big);
        assert_int_equal(reply_template_load(path, &t, err, sizeof(err)), -EINVAL);
        assert_non_null(strstr(err, ":1: line longer than 998 bytes"));
    }
    /* Too large a file. */
    {
        char *big = malloc(REPLY_TEMPLATE_MAX + 100);

        for (size_t i = 0; i < REPLY_TEMPLATE_MAX + 50; i++)
            big[i] = (i % 60 == 59) ? '\n' : 'a';
        big[REPLY_TEMPLATE_MAX + 50] = '\0';
        write_file(path, big, 0644);
        free(big);
        assert_int_equal(reply_template_load(path, &t, err, sizeof(err)), -EFBIG);
        assert_non_null(strstr(err, path));
    }
    snprintf(path, sizeof(path), "%s/missing.tmpl", tmpdir);
    assert_int_equal(reply_template_load(path, &t, err, sizeof(err)), -ENOENT);
    assert_non_null(strstr(err, "missing.tmpl:0:"));
}

/* ---- sender ----------------------------------------------------------- */

struct collect {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int n, ok;
    char rcpt[8][256];
    char id[8][64];
    char reason[8][600];
    time_t claimed[8];
};

static void
collect_fn(void *ctx, const struct reply_status *st)
{
    struct collect *c = ctx;

    pthread_mutex_lock(&c->lock);
    if (c->n < 8) {
        snprintf(c->rcpt[c->n], sizeof(c->rcpt[0]), "%s", st->rcpt);
        snprintf(c->id[c->n], sizeof(c->id[0]), "%s", st->id);
        snprintf(c->reason[c->n], sizeof(c->reason[0]), "%s", st->reason);
        c->claimed[c->n] = st->claimed_at;
    }
    c->n++;
    c->ok += st->ok;
    pthread_cond_broadcast(&c->cond);
    pthread_mutex_unlock(&c->lock);
}

static void
collect_init(struct collect *c)
{
    memset(c, 0, sizeof(*c));
    pthread_mutex_init(&c->lock, NULL);
    pthread_cond_init(&c->cond, NULL);
}

static void
collect_wait(struct collect *c, int n, int seconds)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += seconds;
    pthread_mutex_lock(&c->lock);
    while (c->n < n)
        if (pthread_cond_timedwait(&c->cond, &c->lock, &ts) != 0)
            break;
    pthread_mutex_unlock(&c->lock);
    if (c->n < n)
        fail_msg("only %d of %d status callbacks after %ds", c->n, n, seconds);
}

static const char test_msg[] = "From: a@b\nTo: <dev@example.org>\nSubject: Re: x\n\nline one\n"
                               ".dot line\n.\nlast line\n";

static void
test_sender_sendmail_argv(void **state)
{
    struct collect c;
    struct reply_sender *s = NULL;
    char self[512], dir[128], path[192], *argv_rec, *stdin_rec;
    ssize_t n;
    int leak;
    struct reply_sender_config cfg = {
        .transport = REPLY_TRANSPORT_SENDMAIL, .timeout_s = 10, .status_fn = collect_fn};

    (void)state;
    collect_init(&c);
    cfg.status_ctx = &c;
    n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    assert_true(n > 0);
    self[n] = '\0';
    cfg.sendmail_path = self;
    snprintf(dir, sizeof(dir), "%s/argv", tmpdir);
    assert_int_equal(mkdir(dir, 0700), 0);
    setenv(FAKE_ENV, dir, 1);
    /* A descriptor the daemon holds (a milter socket, say) must not leak. */
    leak = open("/dev/null", O_RDONLY);
    assert_true(leak >= 3);

    assert_int_equal(reply_sender_new(&cfg, &s), 0);
    assert_int_equal(reply_sender_submit_job(s, "<dev@example.org>", test_msg, "4XyZ1", 12345), 0);
    collect_wait(&c, 1, 15);
    s = reply_sender_free(s);
    unsetenv(FAKE_ENV);
    close(leak);

    assert_int_equal(c.ok, 1);
    assert_string_equal(c.reason[0], "sent");
    assert_string_equal(c.rcpt[0], "dev@example.org");
    assert_string_equal(c.id[0], "4XyZ1");
    assert_int_equal(c.claimed[0], 12345);
    snprintf(path, sizeof(path), "%s/argv", dir);
    argv_rec = read_file(path);
    assert_non_null(argv_rec);
    /* One argument per line, with its index: exactly these six. */
    assert_string_equal(argv_rec, "0=sendmail\n1=-i\n2=-f\n3=\n4=--\n5=dev@example.org\n"
                                  "fds=0 1 2 \n");
    snprintf(path, sizeof(path), "%s/stdin", dir);
    stdin_rec = read_file(path);
    assert_non_null(stdin_rec);
    assert_string_equal(stdin_rec, test_msg);
    free(argv_rec);
    free(stdin_rec);
}

static void
test_sender_sendmail_failures(void **state)
{
    static const struct {
        const char *script; /* NULL: a path that does not exist */
        const char *reason;
    } cases[] = {
        {"#!/bin/sh\ncat >/dev/null\necho 'sendmail: fatal: no such user' >&2\nexit 75\n",
         "sendmail exited with status 75: sendmail: fatal: no such user"},
        {"#!/bin/sh\nexec sleep 30\n", "sendmail timed out after 1s, killed"},
        {"#!/bin/sh\nkill -TERM $$\n", "sendmail killed by signal 15"},
        {NULL, "sendmail exited with status 127: exec of sendmail failed"},
    };
    char path[192];

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct reply_sender_config cfg = {
            .transport = REPLY_TRANSPORT_SENDMAIL, .timeout_s = 1, .status_fn = collect_fn};
        struct reply_sender *s = NULL;
        struct collect c;
        struct timespec t0, t1;

        collect_init(&c);
        cfg.status_ctx = &c;
        snprintf(path, sizeof(path), "%s/fake%zu", tmpdir, i);
        if (cases[i].script != NULL)
            write_file(path, cases[i].script, 0755);
        cfg.sendmail_path = path;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        assert_int_equal(reply_sender_new(&cfg, &s), 0);
        assert_int_equal(reply_sender_submit(s, "dev@example.org", test_msg), 0);
        collect_wait(&c, 1, 10);
        reply_sender_free(s);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        assert_int_equal(c.ok, 0);
        if (strcmp(c.reason[0], cases[i].reason) != 0)
            fail_msg("case %zu: reason '%s' want '%s'", i, c.reason[0], cases[i].reason);
        /* Bounded by the 1s timeout, whatever the fake does. */
        assert_true(t1.tv_sec - t0.tv_sec < 5);
    }
}

static void
test_sender_queue_full(void **state)
{
    struct reply_sender_config cfg = {.transport = REPLY_TRANSPORT_SENDMAIL,
                                      .timeout_s = 1,
                                      .queue_max = 2,
                                      .status_fn = collect_fn};
    struct reply_sender *s = NULL;
    struct collect c;
    char path[192];
    int accepted = 0, r = 0;
    struct timespec t0, t1;

    (void)state;
    collect_init(&c);
    cfg.status_ctx = &c;
    snprintf(path, sizeof(path), "%s/slow", tmpdir);
    write_file(path, "#!/bin/sh\nexec sleep 30\n", 0755);
    cfg.sendmail_path = path;
    assert_int_equal(reply_sender_new(&cfg, &s), 0);
    for (int i = 0; i < 10; i++) {
        r = reply_sender_submit(s, "dev@example.org", test_msg);
        if (r == -EAGAIN)
            break;
        assert_int_equal(r, 0);
        accepted++;
    }
    assert_int_equal(r, -EAGAIN);
    /* The queue holds 2; the worker may hold one more. */
    assert_true(accepted >= 2 && accepted <= 3);

    /* Bad submissions. */
    assert_int_equal(reply_sender_submit(s, "not an address", test_msg), -EINVAL);
    assert_int_equal(reply_sender_submit(s, "dev@example.org", ""), -EINVAL);
    assert_int_equal(reply_sender_submit(NULL, "dev@example.org", test_msg), -EINVAL);

    clock_gettime(CLOCK_MONOTONIC, &t0);
    reply_sender_free(s);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    /* Every accepted job got exactly one (failed) status; free was bounded. */
    assert_int_equal(c.n, accepted);
    assert_int_equal(c.ok, 0);
    assert_true(t1.tv_sec - t0.tv_sec <= 4);
    assert_null(reply_sender_free(NULL));
}

/* A one-connection SMTP server on loopback that records the session. */
struct fake_smtp {
    int listen_fd;
    int port;
    const char *rcpt_reply;
    char log[8192];
    size_t log_len;
};

static void
smtp_say(int fd, const char *s)
{
    if (write(fd, s, strlen(s)) < 0)
        return;
}

static void *
fake_smtp_thread(void *arg)
{
    struct fake_smtp *f = arg;
    char buf[4096];
    size_t have = 0;
    bool data = false;
    int fd = accept(f->listen_fd, NULL, NULL);

    if (fd < 0)
        return NULL;
    smtp_say(fd, "220 fake ESMTP\r\n");
    for (;;) {
        ssize_t n = read(fd, buf + have, sizeof(buf) - 1 - have);
        char *nl;

        if (n <= 0)
            break;
        have += (size_t)n;
        while ((nl = memchr(buf, '\n', have)) != NULL) {
            size_t len = (size_t)(nl - buf) + 1;

            if (f->log_len + len < sizeof(f->log)) {
                memcpy(f->log + f->log_len, buf, len);
                f->log_len += len;
            }
            if (data) {
                if (len == 3 && memcmp(buf, ".\r\n", 3) == 0) {
                    data = false;
                    smtp_say(fd, "250 2.0.0 queued as FAKE\r\n");
                }
            } else if (strncmp(buf, "EHLO", 4) == 0) {
                smtp_say(fd, "250-fake\r\n250-PIPELINING\r\n250 8BITMIME\r\n");
            } else if (strncmp(buf, "MAIL", 4) == 0) {
                smtp_say(fd, "250 2.1.0 ok\r\n");
            } else if (strncmp(buf, "RCPT", 4) == 0) {
                smtp_say(fd, f->rcpt_reply);
            } else if (strncmp(buf, "DATA", 4) == 0) {
                smtp_say(fd, "354 go ahead\r\n");
                data = true;
            } else if (strncmp(buf, "QUIT", 4) == 0) {
                smtp_say(fd, "221 bye\r\n");
                close(fd);
                return NULL;
            } else {
                smtp_say(fd, "500 what\r\n");
            }
            memmove(buf, buf + len, have - len);
            have -= len;
        }
    }
    close(fd);
    return NULL;
}

static void
fake_smtp_start(struct fake_smtp *f, pthread_t *tid)
{
    struct sockaddr_in sin = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t sl = sizeof(sin);

    f->listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    assert_true(f->listen_fd >= 0);
    assert_int_equal(bind(f->listen_fd, (struct sockaddr *)&sin, sizeof(sin)), 0);
    assert_int_equal(listen(f->listen_fd, 4), 0);
    assert_int_equal(getsockname(f->listen_fd, (struct sockaddr *)&sin, &sl), 0);
    f->port = ntohs(sin.sin_port);
    assert_int_equal(pthread_create(tid, NULL, fake_smtp_thread, f), 0);
}

static void
test_sender_smtp(void **state)
{
    static const struct {
        const char *rcpt_reply;
        bool ok;
        const char *reason;
    } cases[] = {
        {"250 2.1.5 ok\r\n", true, "sent"},
        {"550 5.1.1 <dev@example.org>: unknown user\r\n", false,
         "smtp RCPT TO: 550 5.1.1 <dev@example.org>: unknown user"},
    };

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct fake_smtp f = {.rcpt_reply = cases[i].rcpt_reply};
        struct reply_sender_config cfg = {.transport = REPLY_TRANSPORT_SMTP,
                                          .timeout_s = 5,
                                          .status_fn = collect_fn,
                                          .helo_name = "me.example"};
        struct reply_sender *s = NULL;
        struct collect c;
        char server[64];
        pthread_t tid;

        collect_init(&c);
        cfg.status_ctx = &c;
        fake_smtp_start(&f, &tid);
        snprintf(server, sizeof(server), "127.0.0.1:%d", f.port);
        cfg.smtp_server = server;
        assert_int_equal(reply_sender_new(&cfg, &s), 0);
        assert_int_equal(reply_sender_submit(s, "dev@example.org", test_msg), 0);
        collect_wait(&c, 1, 10);
        reply_sender_free(s);
        shutdown(f.listen_fd, SHUT_RDWR);
        pthread_join(tid, NULL);
        close(f.listen_fd);
        f.log[f.log_len] = '\0';

        assert_int_equal(c.ok, cases[i].ok);
        assert_string_equal(c.reason[0], cases[i].reason);
        assert_non_null(strstr(f.log, "EHLO me.example\r\n"));
        assert_non_null(strstr(f.log, "MAIL FROM:<>\r\n"));
        assert_non_null(strstr(f.log, "RCPT TO:<dev@example.org>\r\n"));
        if (cases[i].ok) {
            /* CRLF line ends and dot-stuffing. */
            assert_non_null(strstr(f.log, "DATA\r\nFrom: a@b\r\nTo: <dev@example.org>\r\n"));
            assert_non_null(strstr(f.log, "\r\n..dot line\r\n..\r\nlast line\r\n.\r\nQUIT\r\n"));
        } else {
            assert_null(strstr(f.log, "DATA"));
        }
    }
}

static void
test_sender_config(void **state)
{
    static const struct {
        const char *server;
        bool allow_remote;
        int want;
    } cases[] = {
        {"127.0.0.1:25", false, 0},       {"127.0.0.1", false, 0},
        {"[::1]:2525", false, 0},         {"localhost:25", false, 0},
        {"192.0.2.1:25", false, -EINVAL}, {"192.0.2.1:25", true, 0},
        {"127.0.0.1:0", false, -EINVAL},  {"127.0.0.1:99999", false, -EINVAL},
        {"127.0.0.1:x", false, -EINVAL},  {"::1:25", false, -EINVAL},
        {"[::1", false, -EINVAL},         {":25", false, -EINVAL},
    };

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct reply_sender_config cfg = {.transport = REPLY_TRANSPORT_SMTP,
                                          .smtp_server = cases[i].server,
                                          .smtp_allow_remote = cases[i].allow_remote};
        struct reply_sender *s = NULL;
        int r = reply_sender_new(&cfg, &s);

        if (r != cases[i].want)
            fail_msg("case %zu (%s): got %d want %d", i, cases[i].server, r, cases[i].want);
        reply_sender_free(s);
    }
    {
        struct reply_sender_config cfg = {.transport = REPLY_TRANSPORT_SENDMAIL,
                                          .sendmail_path = "sendmail"};
        struct reply_sender *s = NULL;

        assert_int_equal(reply_sender_new(&cfg, &s), -EINVAL);
        cfg.transport = (enum reply_transport)7;
        assert_int_equal(reply_sender_new(&cfg, &s), -EINVAL);
    }
}

/* Acting as sendmail: record argv and stdin under $TEST_REPLY_FAKE_DIR. */
static int
fake_sendmail(const char *dir, int argc, char **argv)
{
    char path[512], buf[4096];
    FILE *f;
    ssize_t n;

    char fds[256] = "";
    DIR *d = opendir("/proc/self/fd");
    struct dirent *e;

    /* Which descriptors sendmail inherited (the directory's own aside). */
    while (d != NULL && (e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.' || atoi(e->d_name) == dirfd(d))
            continue;
        if (strlen(fds) + strlen(e->d_name) + 2 < sizeof(fds)) {
            strcat(fds, e->d_name);
            strcat(fds, " ");
        }
    }
    if (d != NULL)
        closedir(d);
    snprintf(path, sizeof(path), "%s/argv", dir);
    f = fopen(path, "w");
    if (f == NULL)
        return 75;
    for (int i = 0; i < argc; i++)
        fprintf(f, "%d=%s\n", i, argv[i]);
    fprintf(f, "fds=%s\n", fds);
    fclose(f);
    snprintf(path, sizeof(path), "%s/stdin", dir);
    f = fopen(path, "w");
    if (f == NULL)
        return 75;
    while ((n = read(0, buf, sizeof(buf))) > 0)
        fwrite(buf, 1, (size_t)n, f);
    fclose(f);
    return 0;
}

int
main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_token),
        cmocka_unit_test(test_key_file),
        cmocka_unit_test(test_suppress_table),
        cmocka_unit_test(test_render_headers),
        cmocka_unit_test(test_render_injection),
        cmocka_unit_test(test_render_subject),
        cmocka_unit_test(test_render_message_id),
        cmocka_unit_test(test_render_body),
        cmocka_unit_test(test_render_outsider_evidence),
        cmocka_unit_test(test_render_other_project),
        cmocka_unit_test(test_questions_table),
        cmocka_unit_test(test_template_file_matches_builtin),
        cmocka_unit_test(test_template_errors),
        cmocka_unit_test(test_sender_sendmail_argv),
        cmocka_unit_test(test_sender_sendmail_failures),
        cmocka_unit_test(test_sender_queue_full),
        cmocka_unit_test(test_sender_smtp),
        cmocka_unit_test(test_sender_config),
    };
    const char *fake = getenv(FAKE_ENV);

    if (fake != NULL)
        return fake_sendmail(fake, argc, argv);
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
