/*
 * reply_token.c - our own replies know themselves: a signed token in a
 * header of every automatic reply, checked on mail that comes back.
 *
 * A reply's X-Slop-Reply-Token is HMAC-SHA256, with a secret key, over
 * its Message-ID and Date exactly as written; whoever lacks the key can
 * neither make one nor move one onto other mail. The key is 32 random
 * bytes, kept as 64 hex digits in a file of mode 0600 (ReplyKeyFile,
 * default StateDir/reply.key) that the daemon creates at its first start.
 * See reply.h. Pure functions but for the key file; thread-safe.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib.h>

#include "reply.h"

#define TOKEN_FILE_MAX 256 /* bytes read from a key file: 64 digits and a line end */
#define TOKEN_KEY_HEX (2 * (size_t)REPLY_KEY_BYTES)

static int
hex_digit(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

static int
key_read(int fd, const char *path, struct reply_key *ret, char *err, size_t errlen)
{
    char buf[TOKEN_FILE_MAX];
    struct stat sb;
    ssize_t n;
    size_t len;

    if (fstat(fd, &sb) < 0)
        return -errno;
    if (!S_ISREG(sb.st_mode)) {
        snprintf(err, errlen, "'%s' is not a regular file", path);
        return -EINVAL;
    }
    /* As OpenDKIM with its keys: a secret others can read is no secret. */
    if ((sb.st_mode & 077) != 0) {
        snprintf(err, errlen, "'%s' can be read by others (mode %03o), run: chmod 600 '%s'", path,
                 (unsigned)(sb.st_mode & 0777), path);
        return -EPERM;
    }
    n = read(fd, buf, sizeof(buf));
    if (n < 0)
        return -errno;
    len = (size_t)n;
    while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == '\r' || buf[len - 1] == ' '))
        len--;
    if (len != TOKEN_KEY_HEX) {
        snprintf(err, errlen, "'%s' holds no key: expected %d hex digits", path,
                 2 * REPLY_KEY_BYTES);
        return -EINVAL;
    }
    for (size_t i = 0; i < REPLY_KEY_BYTES; i++) {
        int hi = hex_digit(buf[2 * i]), lo = hex_digit(buf[2 * i + 1]);

        if (hi < 0 || lo < 0) {
            snprintf(err, errlen, "'%s' holds no key: expected %d hex digits", path,
                     2 * REPLY_KEY_BYTES);
            return -EINVAL;
        }
        ret->bytes[i] = (unsigned char)(hi << 4 | lo);
    }
    return 0;
}

/* A new key into path, which must not exist yet; 0 or a negative errno. */
static int
key_create(const char *path, struct reply_key *ret)
{
    char hex[TOKEN_KEY_HEX + 2];
    int fd, r = 0;

    if (getrandom(ret->bytes, sizeof(ret->bytes), 0) != (ssize_t)sizeof(ret->bytes))
        return -EIO;
    for (size_t i = 0; i < REPLY_KEY_BYTES; i++)
        snprintf(hex + 2 * i, 3, "%02x", ret->bytes[i]);
    hex[TOKEN_KEY_HEX] = '\n';
    hex[TOKEN_KEY_HEX + 1] = '\0';
    fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0)
        return -errno;
    if (write(fd, hex, TOKEN_KEY_HEX + 1) != (ssize_t)TOKEN_KEY_HEX + 1)
        r = -EIO;
    if (r == 0 && fsync(fd) < 0)
        r = -errno;
    if (close(fd) < 0 && r == 0)
        r = -errno;
    if (r < 0)
        (void)unlink(path); /* a half-written key would stop the next start */
    return r;
}

int
reply_key_load(const char *path, bool create, struct reply_key *ret, char *err, size_t errlen)
{
    struct reply_key key;
    char eb[128];
    int fd, r;

    if (path == NULL || ret == NULL)
        return -EINVAL;
    if (errlen > 0)
        err[0] = '\0';
    fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0 && errno == ENOENT && create) {
        r = key_create(path, &key);
        /* Another process made it first: read theirs. */
        if (r == -EEXIST)
            fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        else if (r < 0) {
            snprintf(err, errlen, "cannot create '%s': %s", path, strerror_r(-r, eb, sizeof(eb)));
            return r;
        } else {
            *ret = key;
            return 0;
        }
    }
    if (fd < 0) {
        r = -errno;
        snprintf(err, errlen, "cannot open '%s': %s", path, strerror_r(-r, eb, sizeof(eb)));
        return r;
    }
    r = key_read(fd, path, &key, err, errlen);
    if (r < 0 && err[0] == '\0')
        snprintf(err, errlen, "cannot read '%s': %s", path, strerror_r(-r, eb, sizeof(eb)));
    close(fd);
    if (r == 0)
        *ret = key;
    return r;
}

int
reply_key_setup(const char *key_file, const char *state_dir, bool create, struct reply_key *ret,
                char *err, size_t errlen)
{
    char path[PATH_MAX];

    if (key_file[0] != '\0')
        return reply_key_load(key_file, false, ret, err, errlen);
    if (snprintf(path, sizeof(path), "%s/reply.key", state_dir) >= (int)sizeof(path)) {
        snprintf(err, errlen, "StateDir '%s' is too long", state_dir);
        return -ENAMETOOLONG;
    }
    return reply_key_load(path, create, ret, err, errlen);
}

int
reply_token_make(const struct reply_key *key, const char *message_id, const char *date,
                 char out[REPLY_TOKEN_LEN + 1])
{
    GHmac *h;
    guint8 mac[32];
    gsize n = sizeof(mac);

    if (key == NULL || message_id == NULL || date == NULL)
        return -EINVAL;
    h = g_hmac_new(G_CHECKSUM_SHA256, key->bytes, sizeof(key->bytes));
    if (h == NULL)
        return -ENOMEM;
    /* The NUL between them keeps "a" "bc" apart from "ab" "c". */
    g_hmac_update(h, (const guchar *)message_id, (gssize)strlen(message_id) + 1);
    g_hmac_update(h, (const guchar *)date, (gssize)strlen(date));
    g_hmac_get_digest(h, mac, &n);
    g_hmac_unref(h);
    for (size_t i = 0; i < REPLY_TOKEN_LEN / 2; i++)
        snprintf(out + 2 * i, 3, "%02x", mac[i]);
    return 0;
}

/* value without the white space around it, into buf; false when it does
 * not fit. */
static bool
trimmed(const char *value, char *buf, size_t size)
{
    size_t n;

    value += strspn(value, " \t\r\n");
    n = strlen(value);
    while (n > 0 && strchr(" \t\r\n", value[n - 1]) != NULL)
        n--;
    if (n >= size)
        return false;
    memcpy(buf, value, n);
    buf[n] = '\0';
    return true;
}

bool
reply_token_valid(const struct reply_key *key, const struct reply_header *headers, size_t n_headers)
{
    const char *token = NULL, *msgid = NULL, *date = NULL;
    char t[REPLY_TOKEN_LEN + 2] = "", m[REPLY_MSGID_MAX + 3], d[128], want[REPLY_TOKEN_LEN + 1];
    unsigned diff = 0;

    if (key == NULL)
        return false;
    for (size_t i = 0; i < n_headers; i++) {
        const char *name = headers[i].name;

        if (name == NULL || headers[i].value == NULL)
            continue;
        /* One of each: a second token or Message-ID makes it none of ours. */
        if (strcasecmp(name, REPLY_TOKEN_HEADER) == 0) {
            if (token != NULL)
                return false;
            token = headers[i].value;
        } else if (strcasecmp(name, "Message-ID") == 0) {
            if (msgid != NULL)
                return false;
            msgid = headers[i].value;
        } else if (strcasecmp(name, "Date") == 0 && date == NULL) {
            date = headers[i].value;
        }
    }
    if (token == NULL || msgid == NULL || date == NULL || !trimmed(token, t, sizeof(t)) ||
        !trimmed(msgid, m, sizeof(m)) || !trimmed(date, d, sizeof(d)) ||
        strlen(t) != REPLY_TOKEN_LEN || reply_token_make(key, m, d, want) < 0)
        return false;
    for (size_t i = 0; i < REPLY_TOKEN_LEN; i++)
        diff |= (unsigned)(want[i] ^ (char)(t[i] >= 'A' && t[i] <= 'F' ? t[i] - 'A' + 'a' : t[i]));
    return diff == 0;
}
