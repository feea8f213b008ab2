/*
 * file_read.h - the one whole-file reader of the tree, with a size cap
 * (GLib's g_file_get_contents() has none): configuration, templates,
 * rules, key files, messages given on the command line.
 *
 * The caller owns what it returns (free()); nothing is kept. Never logs.
 * Thread-safe.
 */
#ifndef SLOP_FILE_READ_H
#define SLOP_FILE_READ_H

#include <stddef.h>

enum file_read_flags {
    /* A file longer than max gives its first max bytes, not -EFBIG. */
    FILE_READ_CUT = 1,
};

/*
 * Read the file at path whole into a new NUL-terminated buffer: *ret
 * (free() it) and *ret_len, written only on success. A file of more than
 * max bytes (max < SIZE_MAX) fails with -EFBIG (or is cut, see
 * FILE_READ_CUT). Other
 * failures: the negative errno of open() or read() (-EISDIR for a
 * directory), -ENOMEM.
 */
int file_read(const char *path, size_t max, unsigned flags, char **ret, size_t *ret_len);

/* file_read() of an open descriptor, read from where it stands to its end;
 * the caller keeps fd and closes it. */
int file_read_fd(int fd, size_t max, unsigned flags, char **ret, size_t *ret_len);

#endif
