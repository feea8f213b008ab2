/*
 * gate_tempfail.c - the milter protocol, as far as answering a
 * connection over MaxConnections with tempfail needs it.
 *
 * Packets are a 4-byte length in network order, a command byte and
 * length-1 bytes of data. The MTA first negotiates options ('O'): we
 * offer its protocol version (at most ours), no actions and no protocol
 * flags, so every later command expects an answer. Macros ('D') and
 * aborts ('A') get none; QUIT ends the connection; every other command
 * (CONNECT first, in practice) gets SMFIR_TEMPFAIL, which the MTA turns
 * into a 4xx for the SMTP client: the mail is retried, never lost.
 *
 * Pure function of its input: thread-safe.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include <libmilter/mfapi.h>
#include <libmilter/mfdef.h>

#include "gate_tempfail.h"

#define GATE_HEAD 5 /* length and command byte */

static size_t
put_packet(unsigned char *out, char cmd, const unsigned char *data, uint32_t len)
{
    uint32_t n = htonl(len + 1);

    memcpy(out, &n, 4);
    out[4] = (unsigned char)cmd;
    if (len > 0)
        memcpy(out + GATE_HEAD, data, len);
    return GATE_HEAD + len;
}

int
gate_tempfail_step(const unsigned char *in, size_t in_len, size_t *ret_used, unsigned char *out,
                   size_t *ret_out_len)
{
    uint32_t len, version;
    unsigned char opts[MILTER_OPTLEN];
    char cmd;

    *ret_used = 0;
    *ret_out_len = 0;
    if (in_len < 4)
        return 1;
    memcpy(&len, in, 4);
    len = ntohl(len);
    if (len == 0 || len > GATE_PACKET_MAX)
        return -EPROTO;
    if (in_len < 4 + (size_t)len)
        return 1;
    *ret_used = 4 + (size_t)len;
    cmd = (char)in[4];
    switch (cmd) {
    case SMFIC_OPTNEG:
        if (len < 1 + MILTER_LEN_BYTES)
            return -EPROTO;
        memcpy(&version, in + GATE_HEAD, 4);
        version = ntohl(version);
        if (version > SMFI_PROT_VERSION)
            version = SMFI_PROT_VERSION;
        version = htonl(version);
        memset(opts, 0, sizeof(opts));
        memcpy(opts, &version, 4);
        *ret_out_len = put_packet(out, SMFIC_OPTNEG, opts, sizeof(opts));
        return 1;
    case SMFIC_MACRO:
    case SMFIC_ABORT:
    case SMFIC_QUIT_NC:
        return 1;
    case SMFIC_QUIT:
        return 0;
    default:
        *ret_out_len = put_packet(out, SMFIR_TEMPFAIL, NULL, 0);
        return 1;
    }
}
