/*
 * null_milter.c - the protocol floor every milter figure is compared
 * with: a libmilter filter that negotiates what slop-milter negotiates
 * and then does nothing. It reads each body chunk (so the bytes cross the
 * socket as they do for a real filter) and lets every message through.
 *
 * What slop-milter spends beyond this program, on the same socket and
 * load, is its own work; what this program spends is libmilter's and the
 * kernel's, which any libmilter filter pays. Through Postfix it gives the
 * throughput no milter can beat on the same machine.
 *
 *   null-milter SOCKET
 *     SOCKET  unix:/path or inet:port@host (libmilter syntax). As
 *             slop-milter, it negotiates no-reply stages (SMFIP_NR_*) on a
 *             UNIX socket and answers every command on TCP.
 *
 * A UNIX socket is made writable by every user, for the MTA's. It
 * stops on SIGTERM or SIGINT (libmilter's own signal handling). Not
 * installed; for bench/run only.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libmilter/mfapi.h>

#include "sockopt.h"

#define NR_STAGES (SMFIP_NR_CONN | SMFIP_NR_RCPT | SMFIP_NR_HDR | SMFIP_NR_EOH)

static bool answer_all;
static atomic_ulong body_bytes; /* read so the compiler keeps the body loop */

static sfsistat
null_negotiate(SMFICTX *ctx, unsigned long f0, unsigned long f1, unsigned long f2, unsigned long f3,
               unsigned long *pf0, unsigned long *pf1, unsigned long *pf2, unsigned long *pf3)
{
    (void)ctx;
    (void)f2;
    (void)f3;
    *pf0 = f0 & (SMFIF_ADDHDRS | SMFIF_CHGHDRS | SMFIF_QUARANTINE);
    *pf1 = f1 & (SMFIP_SKIP | SMFIP_NOUNKNOWN | SMFIP_NOHELO);
    if (!answer_all)
        *pf1 |= f1 & (SMFIP_NODATA | NR_STAGES);
    *pf2 = 0;
    *pf3 = 0;
    return SMFIS_CONTINUE;
}

static sfsistat
null_stage(SMFICTX *ctx)
{
    (void)ctx;
    return answer_all ? SMFIS_CONTINUE : SMFIS_NOREPLY;
}

static sfsistat
null_connect(SMFICTX *ctx, char *host, _SOCK_ADDR *sa)
{
    (void)host;
    (void)sa;
    return null_stage(ctx);
}

static sfsistat
null_envfrom(SMFICTX *ctx, char **argv)
{
    (void)ctx;
    (void)argv;
    return SMFIS_CONTINUE;
}

static sfsistat
null_envrcpt(SMFICTX *ctx, char **argv)
{
    (void)argv;
    return null_stage(ctx);
}

static sfsistat
null_header(SMFICTX *ctx, char *name, char *value)
{
    (void)name;
    (void)value;
    return null_stage(ctx);
}

static sfsistat
null_eoh(SMFICTX *ctx)
{
    return null_stage(ctx);
}

static sfsistat
null_body(SMFICTX *ctx, unsigned char *chunk, size_t len)
{
    unsigned long sum = 0;

    (void)ctx;
    for (size_t i = 0; i < len; i++)
        sum += chunk[i];
    atomic_fetch_add_explicit(&body_bytes, sum, memory_order_relaxed);
    return SMFIS_CONTINUE;
}

/* CONTINUE, not ACCEPT, at the end of a message: what slop-milter answers
 * for clean mail (callbacks.c explains why). */
static sfsistat
null_eom(SMFICTX *ctx)
{
    (void)ctx;
    return SMFIS_CONTINUE;
}

static sfsistat
null_abort(SMFICTX *ctx)
{
    (void)ctx;
    return SMFIS_CONTINUE;
}

int
main(int argc, char **argv)
{
    struct smfiDesc desc = {
        .xxfi_name = "null-milter",
        .xxfi_version = SMFI_VERSION,
        .xxfi_flags = SMFIF_ADDHDRS | SMFIF_CHGHDRS | SMFIF_QUARANTINE,
        .xxfi_connect = null_connect,
        .xxfi_envfrom = null_envfrom,
        .xxfi_envrcpt = null_envrcpt,
        .xxfi_header = null_header,
        .xxfi_eoh = null_eoh,
        .xxfi_body = null_body,
        .xxfi_eom = null_eom,
        .xxfi_abort = null_abort,
        .xxfi_negotiate = null_negotiate,
    };
    char *sock, *path = NULL;

    if (argc != 2) {
        fprintf(stderr, "usage: null-milter SOCKET\n");
        return 2;
    }
    sock = argv[1];
    if (strncmp(sock, "unix:", 5) == 0 || strncmp(sock, "local:", 6) == 0)
        path = strchr(sock, ':') + 1;
    /* On TCP slop-milter answers every command; so does its floor. */
    answer_all = path == NULL;
    if (path != NULL)
        (void)unlink(path);
    if (smfi_setconn(sock) != MI_SUCCESS || smfi_register(desc) != MI_SUCCESS ||
        smfi_opensocket(true) != MI_SUCCESS) {
        fprintf(stderr, "null-milter: cannot listen on %s\n", sock);
        return 1;
    }
    /* The MTA runs as another user (postfix); any user may connect. */
    if (path != NULL)
        (void)chmod(path, 0666);
    sockopt_listen_nodelay();
    return smfi_main() == MI_SUCCESS ? 0 : 1;
}
