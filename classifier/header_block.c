/*
 * header_block.c - split a plain top header block into fields, the way
 * GMime's parser does (see header_block.h for what "plain" holds).
 */
#include <errno.h>
#include <string.h>

#include "header_block.h"

/* Longest name taken: a line's length in RFC 5322. GMime reads a name
 * only whole in its 4 KB buffer and fails on one longer than that. */
#define HEADER_BLOCK_NAME_MAX 998u

int
header_block_split(const char *msg, size_t len, struct header_field *f, size_t max, size_t *ret_n,
                   size_t *ret_blank)
{
    size_t off = 0, n = 0;

    if (msg == NULL)
        return -EINVAL;
    while (off < len) {
        const char *nl = memchr(msg + off, '\n', len - off);
        size_t end, i;

        /* A block that runs to the end of the message: GMime takes it, but
         * where the last line lacks its LF it may also fail; leave it. */
        if (nl == NULL)
            return -EINVAL;
        end = (size_t)(nl - msg) + 1;
        if (msg[off] == '\n' || (msg[off] == '\r' && msg[off + 1] == '\n')) {
            if (memchr(msg, '\0', off) != NULL)
                return -EINVAL;
            *ret_n = n;
            *ret_blank = off;
            return 0;
        }
        if (msg[off] == ' ' || msg[off] == '\t') {
            if (n == 0)
                return -EINVAL;
            f[n - 1].end = end;
            off = end;
            continue;
        }
        for (i = off; (unsigned char)msg[i] > ' ' && (unsigned char)msg[i] < 0x7f && msg[i] != ':';
             i++)
            ;
        if (i == off || msg[i] != ':' || i - off > HEADER_BLOCK_NAME_MAX)
            return -EINVAL;
        if (n == max)
            return -E2BIG;
        f[n].start = off;
        f[n].nlen = i - off;
        f[n].end = end;
        n++;
        off = end;
    }
    return -EINVAL;
}

bool
header_block_is_content(const char *name, size_t nlen)
{
    static const char want[] = "content-";

    if (nlen < 8)
        return false;
    /* ASCII case folding alone, as g_ascii_strncasecmp(), whatever the locale. */
    for (size_t i = 0; i < 8; i++) {
        unsigned char c = (unsigned char)name[i];

        if ((c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c) != (unsigned char)want[i])
            return false;
    }
    return true;
}
