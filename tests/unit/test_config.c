/* test_config.c - the key table, the parser's messages and the matchers. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "config.h"

static const struct config_paths test_paths = {
    .runtime_dir = "/rt",
    .state_dir = "/st",
    .rules_dir = "/rules",
    .hostname = "mx.example.org",
};

static struct config *
parse_ok(const char *text)
{
    struct config_error err = {""};
    struct config *cfg = NULL;
    int r = config_parse("t.conf", text, strlen(text), &test_paths, &cfg, &err);

    if (r != 0)
        fail_msg("parse of '%s' failed: %s", text, err.text);
    return cfg;
}

/* The effective `Key value` line of key, from config_write_effective(). */
static char *
effective_line(const struct config *cfg, const char *key)
{
    char *dump = NULL, *line = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&dump, &size);
    size_t kl = strlen(key);

    assert_non_null(f);
    config_write_effective(cfg, f);
    fclose(f);
    for (char *p = dump; p && *p;) {
        size_t len = strcspn(p, "\n");

        if (strncmp(p, key, kl) == 0 && p[kl] == ' ') {
            line = strndup(p, len);
            break;
        }
        p += len + (p[len] == '\n');
    }
    free(dump);
    assert_non_null(line);
    return line;
}

static void
test_defaults(void **state)
{
    struct config *cfg;

    (void)state;
    cfg = parse_ok("");
    assert_string_equal(cfg->socket, "local:/rt/slop-milter.sock");
    assert_string_equal(cfg->rules_dir, "/rules");
    assert_string_equal(cfg->state_dir, "/st");
    assert_string_equal(cfg->reply_from, "slop-milter <postmaster@mx.example.org>");
    assert_int_equal(cfg->socket_mode, 0660);
    assert_true(cfg->syslog);
    assert_int_equal(cfg->mode, CONFIG_MODE_ENFORCE);
    assert_true(cfg->reply_enable);
    assert_int_equal(cfg->reply_interval, 7 * 86400);
    assert_int_equal(cfg->reply_hourly_cap, 50);
    assert_int_equal(cfg->on_internal_error, CONFIG_FAIL_ACCEPT);
    assert_int_equal(cfg->on_timeout, CONFIG_FAIL_ACCEPT);
    assert_int_equal(cfg->on_oversize, CONFIG_FAIL_SCAN);
    assert_int_equal(cfg->max_message_size, 10u << 20);
    assert_int_equal(cfg->scan_timeout, 5000);
    /* The limits default to the classifier's own defaults. */
    assert_int_equal(cfg->max_mime_depth, 32);
    assert_int_equal(cfg->max_mime_parts, 256);
    assert_int_equal(cfg->max_part_size, 4u << 20);
    assert_int_equal(cfg->max_headers, 1000);
    assert_int_equal(cfg->max_header_size, 64u << 10);
    assert_int_equal(cfg->max_lines, 100000);
    assert_int_equal(cfg->max_line_length, 4096);
    assert_int_equal(cfg->max_patch_files, 500);
    assert_int_equal(cfg->max_patch_hunks, 5000);
    assert_int_equal(cfg->regex_match_limit, 100000);
    assert_int_equal(cfg->regex_depth_limit, 5000);
    assert_true(cfg->tag_threshold > 0);
    assert_string_equal(cfg->subject_tag, "[SLOP]");
    assert_string_equal(cfg->sendmail_path, "/usr/sbin/sendmail");
    assert_string_equal(cfg->smtp_server, "127.0.0.1:25");
    assert_true(config_list_empty(&cfg->recipients));
    assert_int_equal(cfg->duplicate_window, 30 * 86400);
    assert_true(cfg->trust_maintainers);
    assert_true(cfg->record_state);
    assert_string_equal(cfg->project, "kernel");
    assert_string_equal(cfg->doc_base, "https://docs.kernel.org/");
    assert_int_equal(cfg->report_recipients.n, 1);
    assert_string_equal(cfg->report_recipients.items[0], "security@*");
    config_free(cfg);
}

/* Another profile has no document base unless one is set. */
static void
test_project_doc_base(void **state)
{
    struct config *cfg;

    (void)state;
    cfg = parse_ok("Project generic\n");
    assert_string_equal(cfg->doc_base, "");
    config_free(cfg);
    cfg = parse_ok("Project example-org\nDocBase https://docs.example.org/\n");
    assert_string_equal(cfg->project, "example-org");
    assert_string_equal(cfg->doc_base, "https://docs.example.org/");
    config_free(cfg);
    cfg = parse_ok("ReportRecipients \"\"\n");
    assert_int_equal(cfg->report_recipients.n, 0);
    config_free(cfg);
}

/* Run from the build tree (as this test is), the default is its
 * var/state/, as root too (make run as root must not make
 * /var/lib/slop-milter root's); never build/state/, the state library's
 * CMake folder. An installed binary's default is install-paths.sh's. */
static void
test_default_state_dir(void **state)
{
    struct config_paths paths = test_paths;
    struct config_error err = {""};
    struct config *cfg = NULL;
    char *saved = getenv("STATE_DIRECTORY") ? strdup(getenv("STATE_DIRECTORY")) : NULL;
    size_t len;

    (void)state;
    paths.state_dir = NULL;
    unsetenv("STATE_DIRECTORY");
    assert_int_equal(config_parse("t.conf", "", 0, &paths, &cfg, &err), 0);
    len = strlen(cfg->state_dir);
    assert_true(len > 10 && strcmp(cfg->state_dir + len - 10, "/var/state") == 0);
    cfg = config_free(cfg);

    setenv("STATE_DIRECTORY", "/srv/slop:/other", 1);
    assert_int_equal(config_parse("t.conf", "", 0, &paths, &cfg, &err), 0);
    assert_string_equal(cfg->state_dir, "/srv/slop");
    config_free(cfg);
    if (saved != NULL)
        setenv("STATE_DIRECTORY", saved, 1);
    else
        unsetenv("STATE_DIRECTORY");
    free(saved);
}

/* Every value type, written in a file and read back as effective value. */
static const struct {
    const char *text;
    const char *key;
    const char *expect; /* the effective line */
} good_cases[] = {
    {"Socket inet:8891@127.0.0.1", "Socket", "Socket inet:8891@127.0.0.1"},
    {"Socket inet6:8891@[::1]", "Socket", "Socket inet6:8891@[::1]"},
    {"Socket unix:/var/run/m.sock", "Socket", "Socket unix:/var/run/m.sock"},
    {"Socket inet:10025", "Socket", "Socket inet:10025"},
    {"SocketMode 0666", "SocketMode", "SocketMode 0666"},
    {"MetricsSocket inet:9393@127.0.0.1", "MetricsSocket", "MetricsSocket inet:9393@127.0.0.1"},
    {"MetricsSocket inet6:9393@[::1]", "MetricsSocket", "MetricsSocket inet6:9393@[::1]"},
    {"MetricsSocket \"\"", "MetricsSocket", "MetricsSocket \"\""},
    {"UMask 022", "UMask", "UMask 0022"},
    {"UserID slop-milter:mail", "UserID", "UserID slop-milter:mail"},
    {"PidFile /run/slop-milter/pid", "PidFile", "PidFile /run/slop-milter/pid"},
    {"Syslog no", "Syslog", "Syslog no"},
    {"syslog OFF", "Syslog", "Syslog no"},
    {"SkipAuthenticated yes", "SkipAuthenticated", "SkipAuthenticated yes"},
    {"SyslogFacility local3", "SyslogFacility", "SyslogFacility local3"},
    {"TagThreshold 7.5", "TagThreshold", "TagThreshold 7.5"},
    {"ReplyThreshold 0", "ReplyThreshold", "ReplyThreshold 0"},
    {"ReplyHourlyCap 0", "ReplyHourlyCap", "ReplyHourlyCap 0"},
    {"ScanTimeout 250", "ScanTimeout", "ScanTimeout 250"},
    {"MaxMessageSize 2M", "MaxMessageSize", "MaxMessageSize 2097152"},
    {"MaxMessageSize 512k", "MaxMessageSize", "MaxMessageSize 524288"},
    {"MaxMessageSize 1G", "MaxMessageSize", "MaxMessageSize 1073741824"},
    {"MaxMessageSize 65536", "MaxMessageSize", "MaxMessageSize 65536"},
    {"ReplyInterval 3h", "ReplyInterval", "ReplyInterval 10800s"},
    {"ReplyInterval 90m", "ReplyInterval", "ReplyInterval 5400s"},
    {"ReplyInterval 120", "ReplyInterval", "ReplyInterval 120s"},
    {"ReplyInterval 2d", "ReplyInterval", "ReplyInterval 172800s"},
    {"Mode monitor", "Mode", "Mode monitor"},
    {"Mode ENFORCE", "Mode", "Mode enforce"},
    {"OnTimeout tempfail", "OnTimeout", "OnTimeout tempfail"},
    {"OnInternalError quarantine", "OnInternalError", "OnInternalError quarantine"},
    {"OnOversize reject", "OnOversize", "OnOversize reject"},
    {"ReplyTransport smtp", "ReplyTransport", "ReplyTransport smtp"},
    {"SMTPServer [::1]:2525", "SMTPServer", "SMTPServer [::1]:2525"},
    {"SMTPServer localhost:25", "SMTPServer", "SMTPServer localhost:25"},
    {"Recipients Security@Example.org, @lists.example.org", "Recipients",
     "Recipients security@example.org,@lists.example.org"},
    {"AllowSenders @kernel.org", "AllowSenders", "AllowSenders @kernel.org"},
    {"PeerList 192.0.2.0/24, 2001:db8::/32 mx.example.org,.example.net", "PeerList",
     "PeerList 192.0.2.0/24,2001:db8::/32,mx.example.org,.example.net"},
    {"InternalHosts 127.0.0.1", "InternalHosts", "InternalHosts 127.0.0.1/32"},
    {"SubjectTag \"\"", "SubjectTag", "SubjectTag \"\""},
    {"SubjectTag [AI?]", "SubjectTag", "SubjectTag [AI?]"},
    {"RejectText Go away, 100% sure", "RejectText", "RejectText Go away, 100% sure"},
    {"DocBase https://example.org/doc/", "DocBase", "DocBase https://example.org/doc/"},
    {"Project generic", "Project", "Project generic"},
    {"ReportRecipients Security@*, *@security.example.org", "ReportRecipients",
     "ReportRecipients security@*,*@security.example.org"},
    {"  ReplyEnable   no   ", "ReplyEnable", "ReplyEnable no"},
    {"# comment\n\n\tReplyTemplate /etc/slop-milter/reply.tmpl\r\n", "ReplyTemplate",
     "ReplyTemplate /etc/slop-milter/reply.tmpl"},
    {"DuplicateWindow 7d", "DuplicateWindow", "DuplicateWindow 604800s"},
    {"DuplicateWindow 36h", "DuplicateWindow", "DuplicateWindow 129600s"},
    {"DuplicateWindow 86400", "DuplicateWindow", "DuplicateWindow 86400s"},
    {"DuplicateWindow 366d", "DuplicateWindow", "DuplicateWindow 31622400s"},
    {"TrustMaintainers no", "TrustMaintainers", "TrustMaintainers no"},
    {"trustmaintainers YES", "TrustMaintainers", "TrustMaintainers yes"},
    {"RecordState off", "RecordState", "RecordState no"},
    {"RecordState 1", "RecordState", "RecordState yes"},
    {"MaxMimeDepth 4", "MaxMimeDepth", "MaxMimeDepth 4"},
    {"MaxMimeParts 1", "MaxMimeParts", "MaxMimeParts 1"},
    {"MaxPartSize 1K", "MaxPartSize", "MaxPartSize 1024"},
    {"MaxHeaders 50", "MaxHeaders", "MaxHeaders 50"},
    {"MaxHeaderSize 16M", "MaxHeaderSize", "MaxHeaderSize 16777216"},
    {"MaxLines 100", "MaxLines", "MaxLines 100"},
    {"MaxLineLength 998", "MaxLineLength", "MaxLineLength 998"},
    {"MaxPatchFiles 100000", "MaxPatchFiles", "MaxPatchFiles 100000"},
    {"MaxPatchHunks 20", "MaxPatchHunks", "MaxPatchHunks 20"},
    {"RegexMatchLimit 1000", "RegexMatchLimit", "RegexMatchLimit 1000"},
    {"RegexDepthLimit 100000", "RegexDepthLimit", "RegexDepthLimit 100000"},
};

static void
test_good_values(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(good_cases) / sizeof(good_cases[0]); i++) {
        struct config *cfg = parse_ok(good_cases[i].text);
        char *line = effective_line(cfg, good_cases[i].key);

        if (strcmp(line, good_cases[i].expect) != 0)
            fail_msg("case %zu '%s': got '%s', want '%s'", i, good_cases[i].text, line,
                     good_cases[i].expect);
        free(line);
        config_free(cfg);
    }
}

/* Each kind of mistake and its exact message. */
static const struct {
    const char *text;
    const char *message;
} bad_cases[] = {
    {"Bogus 1", "t.conf:1: unknown key 'Bogus'"},
    {"\n# comment\nTagThreshold abc", "t.conf:3: TagThreshold: bad number 'abc'"},
    {"TagThreshold 5000", "t.conf:1: TagThreshold: 5000 is out of range (0 to 1000)"},
    {"TagThreshold -1", "t.conf:1: TagThreshold: -1 is out of range (0 to 1000)"},
    {"TagThreshold nan", "t.conf:1: TagThreshold: bad number 'nan'"},
    {"ReplyHourlyCap -1", "t.conf:1: ReplyHourlyCap: bad number '-1'"},
    {"ReplyHourlyCap 12x", "t.conf:1: ReplyHourlyCap: bad number '12x'"},
    {"ScanTimeout 1", "t.conf:1: ScanTimeout: 1 is out of range (10 to 600000)"},
    {"Syslog maybe", "t.conf:1: Syslog: bad boolean 'maybe' (use yes or no)"},
    {"Socket tcp:25",
     "t.conf:1: Socket: bad socket 'tcp:25' (use local:/path, unix:/path, inet:port@host or "
     "inet6:port@host)"},
    {"Socket inet:99999@localhost",
     "t.conf:1: Socket: bad socket 'inet:99999@localhost' (use local:/path, unix:/path, "
     "inet:port@host or inet6:port@host)"},
    {"Socket local:relative.sock",
     "t.conf:1: Socket: bad socket 'local:relative.sock' (use local:/path, unix:/path, "
     "inet:port@host or inet6:port@host)"},
    {"MetricsSocket unix:/run/m.sock",
     "t.conf:1: MetricsSocket: 'unix:/run/m.sock' is not a TCP socket (use inet:port@host or "
     "inet6:port@host)"},
    {"MetricsSocket inet:0@127.0.0.1",
     "t.conf:1: MetricsSocket: bad socket 'inet:0@127.0.0.1' (use local:/path, unix:/path, "
     "inet:port@host or inet6:port@host)"},
    {"Mode enforcing", "t.conf:1: Mode: bad value 'enforcing' (use enforce or monitor)"},
    {"OnInternalError scan",
     "t.conf:1: OnInternalError: bad value 'scan' (use accept, tempfail, reject or quarantine)"},
    {"OnOversize drop",
     "t.conf:1: OnOversize: bad value 'drop' (use scan, accept, tempfail, reject or quarantine)"},
    {"ReplyTransport lmtp", "t.conf:1: ReplyTransport: bad value 'lmtp' (use sendmail or smtp)"},
    {"Mode enforce\nMode monitor", "t.conf:2: duplicate key 'Mode' (first set at line 1)"},
    {"mode enforce\n\nMODE monitor", "t.conf:3: duplicate key 'Mode' (first set at line 1)"},
    {"Socket", "t.conf:1: missing value for 'Socket'"},
    {"Socket   \t", "t.conf:1: missing value for 'Socket'"},
    {"DocBase \"\"", "t.conf:1: DocBase: empty value"},
    {"\nProject Kernel", "t.conf:2: Project: bad name 'Kernel' (a-z, 0-9, '-' and '_')"},
    {"Project ../etc", "t.conf:1: Project: bad name '../etc' (a-z, 0-9, '-' and '_')"},
    {"ReportRecipients security",
     "t.conf:1: ReportRecipients: bad address 'security' (use user@domain or @domain)"},
    {"MaxMessageSize 10X",
     "t.conf:1: MaxMessageSize: bad size '10X' (use a number with an optional K, M or G suffix)"},
    {"MaxMessageSize 1K", "t.conf:1: MaxMessageSize: 1K is out of range (64K to 1G)"},
    {"MaxMimeDepth 0", "t.conf:1: MaxMimeDepth: 0 is out of range (1 to 1000)"},
    {"MaxMimeDepth deep", "t.conf:1: MaxMimeDepth: bad number 'deep'"},
    {"MaxMimeParts 100001", "t.conf:1: MaxMimeParts: 100001 is out of range (1 to 100000)"},
    {"MaxPartSize 512", "t.conf:1: MaxPartSize: 512 is out of range (1K to 1G)"},
    {"MaxPartSize 2G", "t.conf:1: MaxPartSize: 2G is out of range (1K to 1G)"},
    {"MaxPartSize 4Q",
     "t.conf:1: MaxPartSize: bad size '4Q' (use a number with an optional K, M or G suffix)"},
    {"MaxHeaders 0", "t.conf:1: MaxHeaders: 0 is out of range (1 to 100000)"},
    {"MaxHeaderSize 17M", "t.conf:1: MaxHeaderSize: 17M is out of range (1K to 16M)"},
    {"MaxLines 99", "t.conf:1: MaxLines: 99 is out of range (100 to 10000000)"},
    {"MaxLineLength 79", "t.conf:1: MaxLineLength: 79 is out of range (80 to 1048576)"},
    {"MaxPatchFiles 0", "t.conf:1: MaxPatchFiles: 0 is out of range (1 to 100000)"},
    {"MaxPatchHunks 1000001", "t.conf:1: MaxPatchHunks: 1000001 is out of range (1 to 1000000)"},
    {"RegexMatchLimit 999", "t.conf:1: RegexMatchLimit: 999 is out of range (1000 to 100000000)"},
    {"RegexDepthLimit 99", "t.conf:1: RegexDepthLimit: 99 is out of range (100 to 10000000)"},
    {"RegexDepthLimit -1", "t.conf:1: RegexDepthLimit: bad number '-1'"},
    {"ReplyInterval 2w",
     "t.conf:1: ReplyInterval: bad duration '2w' (use a number with an optional s, m, h or d "
     "suffix)"},
    {"ReplyInterval 10s", "t.conf:1: ReplyInterval: 10s is out of range (1m to 366d)"},
    {"DuplicateWindow 12h", "t.conf:1: DuplicateWindow: 12h is out of range (1d to 366d)"},
    {"DuplicateWindow 367d", "t.conf:1: DuplicateWindow: 367d is out of range (1d to 366d)"},
    {"DuplicateWindow 0", "t.conf:1: DuplicateWindow: 0 is out of range (1d to 366d)"},
    {"DuplicateWindow 1month",
     "t.conf:1: DuplicateWindow: bad duration '1month' (use a number with an optional s, m, h or "
     "d suffix)"},
    {"DuplicateWindow \"\"", "t.conf:1: DuplicateWindow: empty value"},
    {"TrustMaintainers maybe", "t.conf:1: TrustMaintainers: bad boolean 'maybe' (use yes or no)"},
    {"RecordState 2", "t.conf:1: RecordState: bad boolean '2' (use yes or no)"},
    {"RecordState yes\nrecordstate no",
     "t.conf:2: duplicate key 'RecordState' (first set at line 1)"},
    /* The flood threshold lives in rules/80-state.rules, not here. */
    {"SenderDailyLimit 10", "t.conf:1: unknown key 'SenderDailyLimit'"},
    {"SocketMode 0999", "t.conf:1: SocketMode: bad octal number '0999'"},
    {"UMask 1777", "t.conf:1: UMask: 1777 is out of range (0 to 0777)"},
    {"Recipients security", "t.conf:1: Recipients: bad address 'security' (use user@domain or "
                            "@domain)"},
    {"AllowSenders a@b@c", "t.conf:1: AllowSenders: bad address 'a@b@c' (use user@domain or "
                           "@domain)"},
    {"PeerList 10.0.0.0/33", "t.conf:1: PeerList: bad host or network '10.0.0.0/33'"},
    {"InternalHosts bad_host!", "t.conf:1: InternalHosts: bad host or network 'bad_host!'"},
    {"PeerList /nonexistent/peers",
     "t.conf:1: PeerList: cannot open '/nonexistent/peers': No such file or directory"},
    {"RulesDir rules", "t.conf:1: RulesDir: 'rules' is not an absolute path"},
    {"SMTPServer localhost", "t.conf:1: SMTPServer: bad address 'localhost' (use host:port or "
                             "[IPv6]:port)"},
    {"UserID a:b:c", "t.conf:1: UserID: bad user 'a:b:c' (use user or user:group)"},
    {"TagThreshold 10\nRejectThreshold 5",
     "t.conf:2: RejectThreshold (5) is below TagThreshold (10); enabled thresholds must rise "
     "with severity"},
};

static void
test_bad_values(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++) {
        struct config_error err = {""};
        struct config *cfg = NULL;
        int r = config_parse("t.conf", bad_cases[i].text, strlen(bad_cases[i].text), &test_paths,
                             &cfg, &err);

        if (r != -EINVAL || strcmp(err.text, bad_cases[i].message) != 0)
            fail_msg("case %zu '%s': r=%d message '%s', want '%s'", i, bad_cases[i].text, r,
                     err.text, bad_cases[i].message);
        assert_null(cfg);
    }
}

static void
test_long_line_and_nul(void **state)
{
    struct config_error err = {""};
    struct config *cfg = NULL;
    char *text = malloc(CONFIG_LINE_MAX + 20);

    (void)state;
    memset(text, 'x', CONFIG_LINE_MAX + 10);
    memcpy(text, "\nSubjectTag ", 12);
    text[CONFIG_LINE_MAX + 10] = '\0';
    assert_int_equal(config_parse("t.conf", text, strlen(text), &test_paths, &cfg, &err), -EINVAL);
    assert_string_equal(err.text, "t.conf:2: line too long (more than 4095 bytes)");
    free(text);

    assert_int_equal(config_parse("t.conf", "Mode \0x", 7, &test_paths, &cfg, &err), -EINVAL);
    assert_string_equal(err.text, "t.conf:1: NUL byte in line");
}

/* A configuration naming sendmail and state_dir, replies on or off. */
static struct config *
paths_config(const char *sendmail, const char *state_dir, bool replies)
{
    char text[1024];

    snprintf(text, sizeof(text), "SendmailPath %s\nStateDir %s\nReplyEnable %s\n", sendmail,
             state_dir, replies ? "yes" : "no");
    return parse_ok(text);
}

/* What -n checks beyond the file: SendmailPath and StateDir's parent. */
static void
test_check_paths(void **state)
{
    static const struct {
        const char *sendmail; /* relative to the temporary directory */
        bool replies;
        int want;
        const char *text;
    } sm[] = {
        {"sendmail", true, 0, NULL},
        {"missing", true, -ENOENT, "No such file or directory"},
        {"plain", true, -EACCES, "not an executable file"},
        {"dir", true, -EACCES, "not an executable file"},
        {"missing", false, 0, NULL}, /* replies off: never run */
    };
    static const struct {
        const char *state_dir;
        int want;
    } sd[] = {
        {"dir", 0},  /* exists */
        {"new", 0},  /* made at start-up, its parent exists */
        {"new/", 0}, /* the same */
        {"no/such", -ENOENT}, {"plain", -ENOTDIR}, {"plain/x", -ENOENT},
    };
    char dir[] = "/tmp/test_config.XXXXXX", a[256], b[256];
    struct config_error err;
    FILE *f;

    (void)state;
    assert_non_null(mkdtemp(dir));
    snprintf(a, sizeof(a), "%s/sendmail", dir);
    f = fopen(a, "w");
    assert_non_null(f);
    fputs("#!/bin/sh\n", f);
    fclose(f);
    assert_int_equal(chmod(a, 0755), 0);
    snprintf(a, sizeof(a), "%s/plain", dir);
    f = fopen(a, "w");
    assert_non_null(f);
    fclose(f);
    assert_int_equal(chmod(a, 0644), 0);
    snprintf(a, sizeof(a), "%s/dir", dir);
    assert_int_equal(mkdir(a, 0755), 0);

    for (size_t i = 0; i < sizeof(sm) / sizeof(sm[0]); i++) {
        struct config *cfg;

        snprintf(a, sizeof(a), "%s/%s", dir, sm[i].sendmail);
        cfg = paths_config(a, dir, sm[i].replies);
        err.text[0] = '\0';
        assert_int_equal(config_check_sendmail(cfg, &err), sm[i].want);
        if (sm[i].text != NULL) {
            if (strstr(err.text, sm[i].text) == NULL || strstr(err.text, a) == NULL)
                fail_msg("case %zu: '%s'", i, err.text);
        }
        config_free(cfg);
    }
    for (size_t i = 0; i < sizeof(sd) / sizeof(sd[0]); i++) {
        struct config *cfg;

        snprintf(b, sizeof(b), "%s/%s", dir, sd[i].state_dir);
        cfg = paths_config("/bin/sh", b, true);
        err.text[0] = '\0';
        if (config_check_state_parent(cfg, &err) != sd[i].want)
            fail_msg("case %zu (%s): '%s'", i, sd[i].state_dir, err.text);
        if (sd[i].want != 0 && strstr(err.text, "StateDir") == NULL)
            fail_msg("case %zu: '%s'", i, err.text);
        config_free(cfg);
    }
    snprintf(a, sizeof(a), "%s/sendmail", dir);
    unlink(a);
    snprintf(a, sizeof(a), "%s/plain", dir);
    unlink(a);
    snprintf(a, sizeof(a), "%s/dir", dir);
    rmdir(a);
    rmdir(dir);
}

static void
test_file_not_found(void **state)
{
    struct config_error err = {""};
    struct config *cfg = NULL;

    (void)state;
    assert_int_equal(config_load("/nonexistent/slop.conf", &test_paths, &cfg, &err), -ENOENT);
    assert_string_equal(err.text, "/nonexistent/slop.conf: cannot open: No such file or directory");
    assert_null(cfg);
}

static void
test_load_file_and_peer_file(void **state)
{
    char conf[] = "/tmp/test_config_XXXXXX";
    char peers[] = "/tmp/test_peers_XXXXXX";
    struct config_error err = {""};
    struct config *cfg = NULL;
    char text[256];
    FILE *f;
    int fd;

    (void)state;
    fd = mkstemp(peers);
    assert_true(fd >= 0);
    f = fdopen(fd, "w");
    fputs("# trusted relays\n10.1.0.0/16  # office\nrelay.example.org\n", f);
    fclose(f);
    fd = mkstemp(conf);
    assert_true(fd >= 0);
    f = fdopen(fd, "w");
    fprintf(f, "PeerList %s\nMode monitor\n", peers);
    fclose(f);

    assert_int_equal(config_load(conf, &test_paths, &cfg, &err), 0);
    assert_int_equal(cfg->mode, CONFIG_MODE_MONITOR);
    assert_int_equal(cfg->peer_list.n_nets, 1);
    assert_int_equal(cfg->peer_list.n_names, 1);
    cfg = config_free(cfg);

    /* A bad entry in the list file names both files and lines. */
    f = fopen(peers, "w");
    fputs("10.1.0.0/16\nbad/host\n", f);
    fclose(f);
    assert_int_equal(config_load(conf, &test_paths, &cfg, &err), -EINVAL);
    snprintf(text, sizeof(text), "%s:1: PeerList: %s:2: bad host or network 'bad/host'", conf,
             peers);
    assert_string_equal(err.text, text);
    unlink(conf);
    unlink(peers);
}

static void
test_size_duration_parsers(void **state)
{
    static const struct {
        const char *s;
        int r;
        uint64_t v;
    } sizes[] = {
        {"0", 0, 0},
        {"1k", 0, 1024},
        {"3M", 0, 3u << 20},
        {"2G", 0, 2ull << 30},
        {"", -EINVAL, 0},
        {"k", -EINVAL, 0},
        {"1KB", -EINVAL, 0},
        {"-1", -EINVAL, 0},
        {" 1", -EINVAL, 0},
        {"99999999999999999999", -EINVAL, 0},
        {"18446744073709551615G", -EINVAL, 0},
    };
    static const struct {
        const char *s;
        int r;
        uint32_t v;
    } durations[] = {
        {"7d", 0, 604800},    {"1h", 0, 3600},    {"1m", 0, 60},    {"5s", 0, 5},
        {"5", 0, 5},          {"1w", -EINVAL, 0}, {"", -EINVAL, 0}, {"50000d", -EINVAL, 0},
        {"1.5h", -EINVAL, 0},
    };

    (void)state;
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        uint64_t v = 12345;

        assert_int_equal(config_parse_size(sizes[i].s, &v), sizes[i].r);
        if (sizes[i].r == 0)
            assert_int_equal(v, sizes[i].v);
    }
    for (size_t i = 0; i < sizeof(durations) / sizeof(durations[0]); i++) {
        uint32_t v = 12345;

        assert_int_equal(config_parse_duration(durations[i].s, &v), durations[i].r);
        if (durations[i].r == 0)
            assert_int_equal(v, durations[i].v);
    }
}

static void
test_list_match(void **state)
{
    struct config *cfg;

    (void)state;
    cfg = parse_ok("Recipients security@example.org, @lists.example.org");
    assert_true(config_list_match(&cfg->recipients, "Security@Example.ORG"));
    assert_true(config_list_match(&cfg->recipients, "anyone@lists.example.org"));
    assert_false(config_list_match(&cfg->recipients, "anyone@sub.lists.example.org"));
    assert_false(config_list_match(&cfg->recipients, "security@example.com"));
    assert_false(config_list_match(&cfg->recipients, ""));
    assert_false(config_list_match(&cfg->recipients, "lists.example.org"));
    config_free(cfg);
}

static void
test_hosts_match(void **state)
{
    struct sockaddr_in v4 = {.sin_family = AF_INET};
    struct sockaddr_in6 v6 = {.sin6_family = AF_INET6};
    struct config *cfg;
    static const struct {
        const char *addr;
        const char *host;
        bool match;
    } cases[] = {
        {"192.0.2.77", NULL, true},
        {"192.0.3.1", NULL, false},
        {"198.51.100.7", NULL, true},
        {"198.51.100.8", NULL, false},
        {"2001:db8:1::5", NULL, true},
        {"2001:db9::5", NULL, false},
        {"::ffff:192.0.2.9", NULL, true},
        {"203.0.113.1", "mx.example.org", true},
        {"203.0.113.1", "MX.Example.Org", true},
        {"203.0.113.1", "a.b.example.net", true},
        {"203.0.113.1", "example.net", false},
        {"203.0.113.1", "mx.example.org.evil", false},
        {"203.0.113.1", "[203.0.113.1]", false},
    };

    (void)state;
    cfg = parse_ok("PeerList 192.0.2.0/24, 198.51.100.7, 2001:db8::/32, mx.example.org, "
                   ".example.net");
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const struct sockaddr *sa;

        if (strchr(cases[i].addr, ':')) {
            assert_int_equal(inet_pton(AF_INET6, cases[i].addr, &v6.sin6_addr), 1);
            sa = (const struct sockaddr *)&v6;
        } else {
            assert_int_equal(inet_pton(AF_INET, cases[i].addr, &v4.sin_addr), 1);
            sa = (const struct sockaddr *)&v4;
        }
        if (config_hosts_match(&cfg->peer_list, sa, cases[i].host) != cases[i].match)
            fail_msg("case %zu %s %s: want %d", i, cases[i].addr,
                     cases[i].host ? cases[i].host : "-", cases[i].match);
    }
    assert_false(config_hosts_match(&cfg->internal_hosts, (const struct sockaddr *)&v4, NULL));
    assert_false(config_hosts_match(&cfg->peer_list, NULL, NULL));
    config_free(cfg);
}

/* The man page and sample are generated from the table: every key appears. */
static void
test_man_and_sample_list_every_key(void **state)
{
    char *man = NULL, *sample = NULL, *dump = NULL;
    size_t ms = 0, ss = 0, ds = 0;
    struct config *cfg;
    FILE *f;

    (void)state;
    f = open_memstream(&man, &ms);
    config_write_man(f);
    fclose(f);
    f = open_memstream(&sample, &ss);
    config_write_sample(f);
    fclose(f);
    cfg = parse_ok("");
    f = open_memstream(&dump, &ds);
    config_write_effective(cfg, f);
    fclose(f);

    for (char *p = dump; *p;) {
        char key[64], pat[80];
        size_t kl = strcspn(p, " ");

        snprintf(key, sizeof(key), "%.*s", (int)kl, p);
        snprintf(pat, sizeof(pat), ".BI \"%s \"", key);
        if (strstr(man, pat) == NULL)
            fail_msg("man page lacks %s", key);
        snprintf(pat, sizeof(pat), "\n#%s", key);
        if (strstr(sample, pat) == NULL)
            fail_msg("sample lacks %s", key);
        p += strcspn(p, "\n");
        if (*p)
            p++;
    }
    config_free(cfg);
    free(man);
    free(sample);
    free(dump);
}

/* The commented sample, uncommented, is a valid configuration. */
static void
test_sample_parses(void **state)
{
    char *sample = NULL, *text;
    size_t ss = 0, o = 0;
    struct config *cfg;
    FILE *f;

    (void)state;
    f = open_memstream(&sample, &ss);
    config_write_sample(f);
    fclose(f);
    text = malloc(ss + 1);
    for (char *p = sample; *p;) {
        size_t len = strcspn(p, "\n");

        /* "#Key value" lines are settings; "# text" lines are prose. */
        if (p[0] == '#' && p[1] != ' ' && p[1] != '\n' && p[1] != '\0' && len > 1) {
            memcpy(text + o, p + 1, len - 1);
            o += len - 1;
            text[o++] = '\n';
        }
        p += len + (p[len] == '\n');
    }
    text[o] = '\0';
    /* Keys with computed defaults appear without a value: drop those lines. */
    {
        char *clean = malloc(o + 1);
        size_t c = 0;

        for (char *p = text; *p;) {
            size_t len = strcspn(p, "\n");

            if (memchr(p, ' ', len) != NULL) {
                memcpy(clean + c, p, len);
                c += len;
                clean[c++] = '\n';
            }
            p += len + (p[len] == '\n');
        }
        cfg = NULL;
        {
            struct config_error err = {""};
            int r = config_parse("sample", clean, c, &test_paths, &cfg, &err);

            if (r != 0)
                fail_msg("sample does not parse: %s", err.text);
        }
        free(clean);
    }
    config_free(cfg);
    free(text);
    free(sample);
}

/* config_write_effective() as a file: every type's writer is read back by
 * its setter to the same values (the dump is itself a configuration). */
static char *
dump_of(const struct config *cfg)
{
    char *dump = NULL;
    size_t ds = 0;
    FILE *f = open_memstream(&dump, &ds);

    config_write_effective(cfg, f);
    fclose(f);
    return dump;
}

static void
test_dump_parses_back(void **state)
{
    static const char *const texts[] = {
        "",
        "SocketMode 0600\nSyslog no\nSyslogFacility local3\nMaxConnections 7\n"
        "ReadTimeout 2m\nMaxMessageSize 3M\nTagThreshold 2.5\nMode monitor\n"
        "ReplyRequires dmarc-pass spf-pass\nRecipients security@example.org, @example.net\n"
        "PeerList 192.0.2.0/24, 2001:db8::/32, mx.example.org, .example.net\n"
        "SubjectTag \" [slop] \"\nSMTPServer [::1]:25\nUserID mail:mail\n"
        "MetricsSocket inet:9393@127.0.0.1\nProject kernel\n",
    };

    (void)state;
    for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
        struct config *cfg = parse_ok(texts[i]), *again;
        char *dump = dump_of(cfg), *dump2;

        again = parse_ok(dump);
        dump2 = dump_of(again);
        if (strcmp(dump, dump2) != 0)
            fail_msg("text %zu: the dump reads back differently:\n%s\n----\n%s", i, dump, dump2);
        config_free(again);
        config_free(cfg);
        free(dump2);
        free(dump);
    }
}

/* The Redis password file: its first line without CR or LF, cut by
 * nothing but refused with -E2BIG when it does not fit the buffer (one
 * byte of 8 goes to the NUL); a file that cannot be read is an error. */
static void
test_redis_password(void **state)
{
    static const struct {
        const char *text;
        size_t len;
        const char *want;
        int r;
    } cases[] = {
        {"", 0, "", 0},
        {"secret", 6, "secret", 0},
        {"secret\n", 7, "secret", 0},
        {"pass\r\nsecond line", 18, "pass", 0},
        {"six\nlonger second line", 23, "six", 0},
        {"123456\n", 7, "123456", 0}, /* the line and its LF fill the buffer */
        {"1234567", 7, "1234567", -E2BIG},
        {"1234567\n", 8, "1234567", -E2BIG},
        {"12345678901", 11, "1234567", -E2BIG},
        {"ab\0cdefgh", 10, "ab", 0}, /* a NUL ends the line */
    };
    char dir[] = "/tmp/test_config.XXXXXX", path[256], buf[8];
    FILE *f;

    (void)state;
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof(path), "%s/password", dir);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        f = fopen(path, "w");
        assert_non_null(f);
        assert_int_equal(fwrite(cases[i].text, 1, cases[i].len, f), cases[i].len);
        fclose(f);
        memset(buf, 'x', sizeof(buf));
        if (config_redis_password(path, buf, sizeof(buf)) != cases[i].r)
            fail_msg("case %zu: %d", i, config_redis_password(path, buf, sizeof(buf)));
        assert_string_equal(buf, cases[i].want);
    }
    assert_int_equal(config_redis_password(NULL, buf, sizeof(buf)), 0);
    assert_string_equal(buf, "");
    assert_int_equal(config_redis_password("", buf, sizeof(buf)), 0);
    assert_int_equal(config_redis_password(dir, buf, sizeof(buf)), -EIO);
    assert_int_equal(unlink(path), 0);
    assert_int_equal(config_redis_password(path, buf, sizeof(buf)), -ENOENT);
    assert_string_equal(buf, "");
    assert_int_equal(rmdir(dir), 0);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_project_doc_base),
        cmocka_unit_test(test_default_state_dir),
        cmocka_unit_test(test_good_values),
        cmocka_unit_test(test_bad_values),
        cmocka_unit_test(test_long_line_and_nul),
        cmocka_unit_test(test_file_not_found),
        cmocka_unit_test(test_load_file_and_peer_file),
        cmocka_unit_test(test_size_duration_parsers),
        cmocka_unit_test(test_list_match),
        cmocka_unit_test(test_hosts_match),
        cmocka_unit_test(test_man_and_sample_list_every_key),
        cmocka_unit_test(test_dump_parses_back),
        cmocka_unit_test(test_sample_parses),
        cmocka_unit_test(test_check_paths),
        cmocka_unit_test(test_redis_password),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
