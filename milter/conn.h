/*
 * conn.h - per-connection and per-message state of the milter.
 *
 * A struct conn lives from the MTA's connect to close and holds the
 * snapshot (configuration + classifier) it started with. A struct msg
 * lives from MAIL FROM to end-of-message or abort and collects the
 * envelope, the header fields and the message bytes into a capped buffer.
 *
 * Threading: libmilter calls all callbacks of one connection from one
 * thread at a time, so neither object is locked. Nothing here talks to
 * libmilter; callbacks.c and the offline mode (-t) feed the same calls.
 */
#ifndef SLOP_MILTER_CONN_H
#define SLOP_MILTER_CONN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "verdict.h"

#define CONN_MAX_HEADERS 1000               /* default of MaxHeaders */
#define CONN_HEADER_MAX ((size_t)64 * 1024) /* default of MaxHeaderSize */
#define CONN_MAX_RCPTS 256                  /* recipients kept per message */
#define CONN_ADDR_MAX 320                   /* bytes of an address kept */
#define CONN_MAX_SLOP_NAMES 16              /* distinct inbound X-Slop-* names tracked */
#define CONN_QUEUE_ID_MAX 64
#define CONN_HOST_MAX 256 /* bytes of the MTA's host name ({j}) kept */

struct snapshot;

struct msg_header {
    char *name;
    char *value; /* as received, folds included */
};

struct msg_rcpt {
    char *addr;     /* without <> */
    bool protected; /* matches Recipients (or Recipients is empty) */
};

struct msg {
    char queue_id[CONN_QUEUE_ID_MAX]; /* "NOQUEUE" until the MTA tells */
    char *mail_from;                  /* without <>; "" for the null sender */
    struct msg_rcpt *rcpts;
    size_t n_rcpts;
    size_t n_rcpts_seen; /* including those beyond CONN_MAX_RCPTS */
    size_t n_protected;

    struct msg_header *headers;
    size_t n_headers;
    size_t n_headers_seen;
    bool headers_truncated; /* a cap dropped or cut a header field */
    size_t max_headers;     /* MaxHeaders; msg_new() sets CONN_MAX_HEADERS */
    size_t max_header_size; /* MaxHeaderSize; msg_new() sets CONN_HEADER_MAX */
    char slop_names[CONN_MAX_SLOP_NAMES][VERDICT_NAME_MAX];
    struct verdict_seen seen[CONN_MAX_SLOP_NAMES]; /* names point into slop_names */
    size_t n_seen;
    char *subject;                /* first Subject value, NULL when none */
    char *from;                   /* first From value, NULL when none */
    size_t n_from;                /* From fields seen, kept or not */
    bool have_message_id;         /* a Message-ID field was kept */
    bool authenticated;           /* the MTA set {auth_authen} */
    char mta_name[CONN_HOST_MAX]; /* the MTA's {j}, "" when not sent */

    char *buf; /* the message as the classifier sees it: headers, blank line, body */
    size_t len, cap, max;
    bool in_body;
    bool oversize;   /* more bytes arrived than max */
    uint64_t budget; /* MaxMemory in effect; 0: buffer without a budget (-t) */
    size_t reserved; /* bytes of the budget held: MEMBUDGET_CHARGE per buffered byte */
    bool busy;       /* the budget was full: bytes were dropped */
    int error;       /* first internal error (negative errno), 0: none */
    struct timespec started;
    time_t arrived; /* wall clock at MAIL FROM: mail recorded after it is no duplicate of it */
};

struct conn {
    struct snapshot *snap; /* reference held until conn_free() */
    char host[256];
    char addr[64];
    char mta_name[CONN_HOST_MAX]; /* {j} at connect, "" when not sent */
    const char *skip;             /* why this connection is not scanned; NULL: scan it */
    bool can_skip;                /* the MTA understands SMFIS_SKIP */
    unsigned long nr;             /* SMFIP_NR_* stages negotiated as "no reply" */
    unsigned long n_msgs;
    struct msg *msg;
    struct timespec seen; /* CLOCK_MONOTONIC: the MTA's last command (callbacks.c) */
    bool silence_noted;   /* a ReadTimeout end was counted (gate_note) */
};

/* Takes over the caller's reference to snap (which may be NULL). */
struct conn *conn_new(struct snapshot *snap);
struct conn *conn_free(struct conn *c);

/* max is the buffer cap (MaxMessageSize). */
struct msg *msg_new(size_t max);
struct msg *msg_free(struct msg *m);

/* arg is the MTA's MAIL FROM argument, with or without <>. */
int msg_set_sender(struct msg *m, const char *arg);
/* Adds a recipient; beyond CONN_MAX_RCPTS it is only counted. */
int msg_add_rcpt(struct msg *m, const char *arg, bool protected);
void msg_set_queue_id(struct msg *m, const char *id);

/*
 * Record one header field. Fields past m->max_headers are not kept or
 * buffered but X-Slop-* occurrences are still counted, so their removal
 * indices stay right, and the first Subject, Message-ID and From are kept
 * wherever they appear. Returns 0 or -ENOMEM (m->error is set too).
 */
int msg_add_header(struct msg *m, const char *name, const char *value);
int msg_end_headers(struct msg *m);
/* Append body bytes; past max they are dropped and m->oversize set. */
int msg_add_body(struct msg *m, const char *data, size_t len);
/*
 * Reserve budget for a message of about n bytes ahead of its data (the
 * MTA announced its size), capped at max. With m->budget set, the buffer
 * otherwise reserves as it grows; when a reservation does not fit,
 * m->busy is set and the bytes are dropped. msg_free() releases it all.
 * Returns 0 or -ENOBUFS (m->busy set).
 */
int msg_reserve(struct msg *m, size_t n);

/*
 * Feed a whole raw message (a file for -t) through msg_add_header,
 * msg_end_headers and msg_add_body, the way an MTA hands it over: header
 * fields unfolded into name and value, body lines ending in CRLF.
 */
int msg_load_raw(struct msg *m, const char *raw, size_t len);

/* The input verdict_build() needs; borrows from m. */
void msg_verdict_input(const struct msg *m, struct verdict_input *ret);

/* Strip <> and surrounding blanks into buf; returns buf. */
const char *conn_addr_strip(const char *arg, char *buf, size_t size);

#endif
