/*
 * fuzz_config.c - libFuzzer target: bytes -> the daemon's config parser.
 *
 * Each input is parsed as a configuration file; a configuration that
 * loads is then dumped and matched against a few fixed addresses and
 * peers, so every list and network it built is read back. The input's
 * first line (up to 64 bytes) is also fed to the size and duration
 * parsers. Inputs naming device or pseudo-file trees are skipped: a
 * PeerList or InternalHosts value that is an absolute path is read as a
 * file, and /dev/stdin or a FIFO would block the fuzzer rather than find
 * a bug. Single-threaded.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "config.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static FILE *fuzz_null;

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fuzz_null = fopen("/dev/null", "w");
    if (fuzz_null == NULL)
        abort();
    return 0;
}

static bool
fuzz_has(const uint8_t *data, size_t size, const char *s)
{
    size_t n = strlen(s);

    for (size_t i = 0; i + n <= size; i++)
        if (data[i] == (uint8_t)s[0] && memcmp(data + i, s, n) == 0)
            return true;
    return false;
}

static void
fuzz_scalars(const uint8_t *data, size_t size)
{
    char word[65];
    size_t n = 0;
    uint64_t bytes;
    uint32_t secs;

    while (n < size && n < sizeof(word) - 1 && data[n] != '\n' && data[n] != '\0') {
        word[n] = (char)data[n];
        n++;
    }
    word[n] = '\0';
    (void)config_parse_size(word, &bytes);
    (void)config_parse_duration(word, &secs);
    (void)config_socket_valid(word);
}

static void
fuzz_match(const struct config *cfg)
{
    static const char *const addrs[] = {"security@example.org", "SECURITY@Example.ORG", "a@b", "",
                                        "@example.org",         "x@sub.example.org"};
    static const char *const hosts[] = {"mail.example.org", "[192.0.2.1]", "", "localhost",
                                        "a.b.example.org."};
    struct sockaddr_in in4 = {.sin_family = AF_INET};
    struct sockaddr_in6 in6 = {.sin6_family = AF_INET6};
    struct sockaddr_in6 mapped = {.sin6_family = AF_INET6};
    const struct sockaddr *peers[4];

    inet_pton(AF_INET, "192.0.2.1", &in4.sin_addr);
    inet_pton(AF_INET6, "2001:db8::1", &in6.sin6_addr);
    inet_pton(AF_INET6, "::ffff:10.1.2.3", &mapped.sin6_addr);
    peers[0] = (const struct sockaddr *)(const void *)&in4;
    peers[1] = (const struct sockaddr *)(const void *)&in6;
    peers[2] = (const struct sockaddr *)(const void *)&mapped;
    peers[3] = NULL;

    for (size_t i = 0; i < sizeof(addrs) / sizeof(addrs[0]); i++) {
        (void)config_list_match(&cfg->recipients, addrs[i]);
        (void)config_list_match(&cfg->allow_senders, addrs[i]);
    }
    (void)config_list_empty(&cfg->recipients);
    for (size_t i = 0; i < 4; i++) {
        for (size_t j = 0; j < sizeof(hosts) / sizeof(hosts[0]); j++) {
            (void)config_hosts_match(&cfg->peer_list, peers[i], hosts[j]);
            (void)config_hosts_match(&cfg->internal_hosts, peers[i], hosts[j]);
        }
        (void)config_hosts_match(&cfg->peer_list, peers[i], NULL);
    }
    (void)config_failure_name(cfg->on_internal_error);
    (void)config_failure_name(cfg->on_oversize);
    (void)config_mode_name(cfg->mode);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const skip[] = {"/dev", "/proc", "/sys", "/run", "/var", "/."};
    static const struct config_paths paths = {
        .runtime_dir = "/tmp/slop-fuzz-run",
        .state_dir = "/tmp/slop-fuzz-state",
        .rules_dir = "/tmp/slop-fuzz-rules",
        .hostname = "fuzz.example.org",
    };
    struct config_error err = {{0}};
    struct config *cfg = NULL;

    for (size_t i = 0; i < sizeof(skip) / sizeof(skip[0]); i++)
        if (fuzz_has(data, size, skip[i]))
            return 0;
    fuzz_scalars(data, size);
    if (config_parse("fuzz.conf", (const char *)data, size, &paths, &cfg, &err) == 0) {
        fuzz_match(cfg);
        config_write_effective(cfg, fuzz_null);
        config_free(cfg);
    } else if (err.text[0] == '\0' || memchr(err.text, '\0', sizeof(err.text)) == NULL) {
        /* Every failure must say why, in a terminated string. */
        abort();
    }
    return 0;
}
