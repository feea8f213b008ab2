/*
 * mime_decode.h - a MIME part's content with its transfer encoding
 * undone, read straight from the message where GMime left it in place
 * (see mime_decode.c). For the MIME view only: it speaks GMime types.
 */
#ifndef SLOP_MIME_DECODE_H
#define SLOP_MIME_DECODE_H

#include <stdbool.h>
#include <stddef.h>

#include <gmime/gmime.h>

/* Once, after g_mime_init() and before any other call here (the MIME
 * view's pthread_once does it). */
void mime_decode_init(void);

/* True if GMime copies content in encoding enc unchanged. */
bool mime_decode_is_identity(GMimeContentEncoding enc);

/* The content of part in place (borrowed from the message) when no
 * transfer encoding needs undoing; false otherwise. */
bool mime_decode_in_place(GMimePart *part, const char **ret, size_t *ret_len);

/* The transfer encoding of part undone into a new GByteArray (the caller
 * unrefs it). */
GByteArray *mime_decode_part(GMimePart *part);

/* raw[0..n) in the base64 or quoted-printable encoding enc decoded by
 * GMime's decoder into *ret (malloc'd, *ret_len bytes). Returns 1, or
 * -ENOMEM. */
int mime_decode_raw(GMimeContentEncoding enc, const char *raw, size_t n, char **ret,
                    size_t *ret_len);

/* mime_decode_raw() of a base64 or quoted-printable part's content: 1
 * when decoded, 0 for a part this does not take (which goes through
 * mime_decode_part()), or -ENOMEM. */
int mime_decode_direct(GMimePart *part, char **ret, size_t *ret_len);

/* Decoded size of a binary part, counted without keeping the bytes. */
size_t mime_decode_size(GMimePart *part);

#endif
