/*
 * mailbox.h - walk the messages found at a path: a single message file, an
 * mbox (mboxrd), a Maildir, a directory tree, or "-" for standard input.
 *
 * Each message is handed to a callback as a borrowed byte range that lives
 * only for the duration of that call. Problems with one path (missing,
 * unreadable, too large) go to an error callback and the walk goes on.
 * Single-threaded: one walk at a time per context.
 */
#ifndef SLOPCTL_MAILBOX_H
#define SLOPCTL_MAILBOX_H

#include <stdbool.h>
#include <stddef.h>

/* Files larger than this are skipped with an error. */
#define MAILBOX_MAX_FILE_BYTES ((size_t)1 << 30)
/* Directory levels below a PATH that are still walked. */
#define MAILBOX_MAX_DEPTH 16
/* Longest header field name looked for at a message's start. */
#define MAILBOX_MAX_FIELD_NAME 998

struct mailbox_msg {
    const char *file; /* the path the message came from */
    size_t index;     /* 0-based position in an mbox; 0 otherwise */
    bool in_mbox;     /* the file is an mbox */
    const char *data; /* the message; not NUL-terminated */
    size_t len;
};

enum mailbox_flags {
    /* Read the files that symbolic links in a Maildir's cur/ and new/
     * point to, and take linked cur/ and new/ for a Maildir. */
    MAILBOX_FOLLOW_SYMLINKS = 1 << 0,
};

/* Return 0 to go on, or a negative errno to stop the walk with it. */
typedef int mailbox_fn(void *ctx, const struct mailbox_msg *m);

/* reason is a short lower-case phrase, e.g. "No such file or directory". */
typedef void mailbox_error_fn(void *ctx, const char *file, size_t index, const char *reason);

/*
 * Walk every message below path, in a stable order:
 *  - "-": standard input, one message, or an mbox if it starts "From ";
 *  - a file starting with "From ": an mbox, split at "From " lines that
 *    begin the file or follow an empty line; ">From " lines (any number of
 *    '>') lose one '>' (mboxrd); the trailing empty line is dropped;
 *  - any other file: one message;
 *  - a Maildir (a directory with cur/ and new/): the files of cur/ and
 *    new/ together, sorted by name; a symbolic link there is reported
 *    through err and skipped, unless flags has MAILBOX_FOLLOW_SYMLINKS;
 *  - any other directory: every file below it, sorted by name at each
 *    level, at most MAILBOX_MAX_DEPTH levels deep. Dot files and dot
 *    directories are skipped, and so are files named *.md or *.csv (the
 *    notes and indices that sit beside mail in corpus folders). Symbolic
 *    links to directories below path are not followed.
 * A message that does not start with a header field (an empty file, a
 * binary) is reported through err and not handed to fn.
 * Returns 0 when the walk finished (errors, if any, were reported through
 * err), or the negative value fn returned to stop it.
 */
int mailbox_walk(const char *path, unsigned flags, mailbox_fn *fn, mailbox_error_fn *err,
                 void *ctx);

#endif
