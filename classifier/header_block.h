/*
 * header_block.h - split a message's top header block into its fields,
 * as GMime's parser would, when the block is plain.
 *
 * GMime makes every field a GObject with copies of its name and value,
 * and on list mail the fields are most of its parse time: mime_view.c
 * reads them here instead and hands GMime only the Content-* fields and
 * the body, which is all that decides the MIME tree. So this must give
 * exactly the fields GMime gives; it takes only a block where that is
 * plain to see, and leaves any other to GMime whole:
 * - every line ends in LF (a CR before it is part of the line);
 * - a field starts with a name of printable ASCII other than ':', at
 *   most 998 bytes (RFC 5322's line), then ':' at once (GMime also
 *   takes blanks before the ':' and 8-bit names, and skips lines that
 *   are no field: those blocks are not taken);
 * - every other line is a continuation, which starts with a space or a
 *   tab and is not the first line;
 * - no NUL byte (GMime's values are C strings, cut at one);
 * - a blank line (LF or CR LF) ends the block.
 * Pure functions on the caller's bytes; nothing is allocated or kept.
 */
#ifndef SLOP_HEADER_BLOCK_H
#define SLOP_HEADER_BLOCK_H

#include <stdbool.h>
#include <stddef.h>

/* One field, as offsets into the block: its name is msg[start..start +
 * nlen), its raw value what follows the ':' up to end, the byte after the
 * LF of its last line. That value is GMime's raw value: the blank after
 * the ':', every line break and folding, and the last line's end. */
struct header_field {
    size_t start, nlen, end;
};

/*
 * Split the header block at msg[0..len) into f[0..max). On success
 * returns 0, with the number of fields in *ret_n and the offset of the
 * blank line that ends the block in *ret_blank. Returns -EINVAL when the
 * block is not plain (see above) and -E2BIG when it has more than max
 * fields; *ret_n and *ret_blank are then left alone, and f's contents
 * undefined.
 */
int header_block_split(const char *msg, size_t len, struct header_field *f, size_t max,
                       size_t *ret_n, size_t *ret_blank);

/* GMime's test for the fields that a message leaves to its MIME part:
 * the name starts with "Content-", in any case. */
bool header_block_is_content(const char *name, size_t nlen);

#endif
