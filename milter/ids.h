/*
 * ids.h - UserID: the user and group the daemon runs as, resolved before
 * anything is opened, and the drop to them after the socket and the PID
 * file are made as root.
 */
#ifndef SLOP_MILTER_IDS_H
#define SLOP_MILTER_IDS_H

#include <stdbool.h>
#include <sys/types.h>

struct ids {
    bool set; /* UserID named a user */
    uid_t uid;
    gid_t gid;
    char user[64];
};

/* "user" or "user:group" into *ret; an empty or NULL spec leaves it
 * unset. Returns 0, -ENAMETOOLONG, or -ENOENT after one line on stderr
 * naming the user or group that does not exist. */
int ids_resolve(const char *spec, struct ids *ret);

/* The user and group the daemon runs as: UserID's when started as root,
 * else the caller's (ids_drop() ignores UserID then). */
uid_t ids_run_uid(const struct ids *ids);
gid_t ids_run_gid(const struct ids *ids);

/* Become ids' user for good (no way back to root), when root and it is
 * set; otherwise warn as needed and stay. 0, or -EPERM after logging. */
int ids_drop(const struct ids *ids);

#endif
