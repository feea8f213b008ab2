/*
 * mime_decode.c - a MIME part's content with its transfer encoding
 * undone. The parser, reading the memory stream mime_view_parse() made,
 * leaves each part's content as a memory stream over the message's own
 * bytes: those are read in place, and base64 and quoted-printable go
 * through GMime's decoder in one step, which writes what its streams
 * would. Anything else goes through GMime's streams. A binary part's
 * size is counted without keeping its bytes. Thread-safe once GMime is
 * initialised.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <gmime/gmime.h>

#include "mime_decode.h"

/* 1 for each byte of the base64 alphabet ('=' is not one), and whether
 * base64_decoded_size() may stand in for GMime's decoder. Written once,
 * by mime_decode_init(); read-only after. */
static unsigned char base64_alphabet[256];
static bool base64_counts;

/*
 * The content of part as it stands in the message, still in its transfer
 * encoding (*ret_enc). The parser, reading the GMimeStreamMem that
 * mime_view_parse() made, leaves each part's content as a memory stream
 * (a substream of the message, or a copy): the bytes GMime would read are
 * those between its bounds. False for anything else, which then goes
 * through GMime's streams.
 */
static bool
part_content_raw(GMimePart *part, const char **ret, size_t *ret_len, GMimeContentEncoding *ret_enc)
{
    GMimeDataWrapper *dw = g_mime_part_get_content(part);
    GMimeStream *s;
    GByteArray *arr;
    gint64 end;

    /* Exact types: a subclass could write or read differently. */
    if (dw == NULL || G_OBJECT_TYPE(dw) != GMIME_TYPE_DATA_WRAPPER)
        return false;
    s = dw->stream;
    if (s == NULL || G_OBJECT_TYPE(s) != GMIME_TYPE_STREAM_MEM)
        return false;
    arr = g_mime_stream_mem_get_byte_array((GMimeStreamMem *)s);
    if (arr == NULL)
        return false;
    end = s->bound_end == -1 ? (gint64)arr->len : s->bound_end;
    if (s->bound_start < 0 || s->bound_start > end || end > (gint64)arr->len)
        return false;
    *ret = (const char *)arr->data + s->bound_start;
    *ret_len = (size_t)(end - s->bound_start);
    *ret_enc = g_mime_data_wrapper_get_encoding(dw);
    return true;
}

/* True if GMime copies content in encoding enc unchanged. */
bool
mime_decode_is_identity(GMimeContentEncoding enc)
{
    return enc == GMIME_CONTENT_ENCODING_DEFAULT || enc == GMIME_CONTENT_ENCODING_7BIT ||
           enc == GMIME_CONTENT_ENCODING_8BIT || enc == GMIME_CONTENT_ENCODING_BINARY;
}

/* The content of part in place when no transfer encoding needs undoing. */
bool
mime_decode_in_place(GMimePart *part, const char **ret, size_t *ret_len)
{
    GMimeContentEncoding enc;

    return part_content_raw(part, ret, ret_len, &enc) && mime_decode_is_identity(enc);
}

/*
 * The size GMime's base64 decoder makes of s[0..n), counted without
 * decoding. GMime 3.2 skips bytes outside the alphabet, writes three
 * bytes for every four characters and stops at the first '=', where two
 * or three characters left over give one or two bytes more. Its 4096-byte
 * reads do not matter: the decoder carries its state across them.
 */
static size_t
base64_decoded_size(const char *s, size_t n)
{
    const char *eq = memchr(s, '=', n);
    size_t end = eq ? (size_t)(eq - s) : n, chars = 0, i = 0;

    /* Eight at a time, which the compiler unrolls: fewer loop steps over
     * what is most of the bytes of most mail with attachments. */
    for (; end - i >= 8; i += 8)
        for (size_t k = 0; k < 8; k++)
            chars += base64_alphabet[(unsigned char)s[i + k]];
    for (; i < end; i++)
        chars += base64_alphabet[(unsigned char)s[i]];
    if (eq != NULL && chars % 4 >= 2)
        return chars / 4 * 3 + chars % 4 - 1;
    return chars / 4 * 3;
}

/* Whether GMime decodes base64 as base64_decoded_size() counts: older
 * decoders took '=' as a character and read on. Asked once, of GMime's
 * own decoder, on inputs where the two ways differ. */
static bool
base64_count_matches_gmime(void)
{
    static const char *const probes[] = {
        "QUJD=QUJD", "QQ==QQ==", "Q===", "QUI=x", "QUJDQQ", "QUJDQUI"};

    for (size_t i = 0; i < sizeof(probes) / sizeof(probes[0]); i++) {
        size_t n = strlen(probes[i]), k;
        GMimeEncoding enc;
        char out[64];

        g_mime_encoding_init_decode(&enc, GMIME_CONTENT_ENCODING_BASE64);
        k = g_mime_encoding_step(&enc, probes[i], n, out);
        k += g_mime_encoding_flush(&enc, "", 0, out + k);
        if (k != base64_decoded_size(probes[i], n))
            return false;
    }
    return true;
}

/* Decode the transfer encoding of part into a memory buffer. */
GByteArray *
mime_decode_part(GMimePart *part)
{
    GMimeDataWrapper *dw = g_mime_part_get_content(part);
    GMimeStream *mem;
    GByteArray *arr;

    arr = g_byte_array_new();
    if (dw == NULL)
        return arr;
    mem = g_mime_stream_mem_new_with_byte_array(arr);
    g_mime_stream_mem_set_owner(GMIME_STREAM_MEM(mem), FALSE);
    g_mime_data_wrapper_write_to_stream(dw, mem);
    g_object_unref(mem);
    return arr;
}

/*
 * raw[0..n), content in the base64 or quoted-printable encoding enc,
 * decoded by GMime's decoder straight from the message into *ret
 * (malloc'd, *ret_len bytes) rather than through its streams:
 * g_mime_data_wrapper_write_to_stream() runs the same steps over the same
 * bytes, 4096 at a time, and the decoder carries its state across those
 * reads, so one step over all of them writes the same. Returns 1, or
 * -ENOMEM.
 */
int
mime_decode_raw(GMimeContentEncoding enc, const char *raw, size_t n, char **ret, size_t *ret_len)
{
    GMimeEncoding dec;
    size_t len;
    char *out;

    g_mime_encoding_init_decode(&dec, enc);
    /* Decoding never writes more than it reads, but ask the decoder. */
    out = malloc(g_mime_encoding_outlen(&dec, n) + g_mime_encoding_outlen(&dec, 0) + 1);
    if (out == NULL)
        return -ENOMEM;
    len = g_mime_encoding_step(&dec, raw, n, out);
    len += g_mime_encoding_flush(&dec, "", 0, out + len);
    *ret = out;
    *ret_len = len;
    return 1;
}

/* mime_decode_raw() of a base64 or quoted-printable part's content: 1 when
 * decoded, 0 for a part this does not take (which goes through
 * mime_decode_part()), or -ENOMEM. */
int
mime_decode_direct(GMimePart *part, char **ret, size_t *ret_len)
{
    GMimeContentEncoding enc;
    const char *raw;
    size_t n;

    if (!part_content_raw(part, &raw, &n, &enc) ||
        (enc != GMIME_CONTENT_ENCODING_BASE64 && enc != GMIME_CONTENT_ENCODING_QUOTEDPRINTABLE))
        return 0;
    return mime_decode_raw(enc, raw, n, ret, ret_len);
}

/* Decoded size of a binary part, counted without keeping the bytes. */
size_t
mime_decode_size(GMimePart *part)
{
    GMimeDataWrapper *dw = g_mime_part_get_content(part);
    GMimeStream *null;
    GMimeContentEncoding enc;
    const char *raw;
    char *decoded;
    size_t n;

    if (part_content_raw(part, &raw, &n, &enc)) {
        if (mime_decode_is_identity(enc))
            return n;
        if (enc == GMIME_CONTENT_ENCODING_BASE64 && base64_counts)
            return base64_decoded_size(raw, n);
    }
    /* Quoted-printable: decoding is the only way to count it. */
    if (mime_decode_direct(part, &decoded, &n) == 1) {
        free(decoded);
        return n;
    }
    if (dw == NULL)
        return 0;
    null = g_mime_stream_null_new();
    g_mime_data_wrapper_write_to_stream(dw, null);
    n = GMIME_STREAM_NULL(null)->written;
    g_object_unref(null);
    return n;
}

void
mime_decode_init(void)
{
    static const char alphabet[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

    for (size_t i = 0; alphabet[i] != '\0'; i++)
        base64_alphabet[(unsigned char)alphabet[i]] = 1;
    base64_counts = base64_count_matches_gmime();
}
