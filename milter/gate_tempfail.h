/*
 * gate_tempfail.h - the milter protocol as far as the gate speaks it to an
 * over-cap connection: option negotiation, then tempfail (gate.h).
 */
#ifndef SLOP_MILTER_GATE_TEMPFAIL_H
#define SLOP_MILTER_GATE_TEMPFAIL_H

#include <stddef.h>

/*
 * The tempfail answer to an over-cap connection, one packet at a time.
 * in/in_len: the bytes read so far; *ret_used: bytes consumed; out
 * (at least GATE_REPLY_MAX bytes) and *ret_out_len: the reply to send.
 * Returns 1 to keep reading, 0 when the connection is finished (QUIT),
 * -EPROTO on a malformed or oversized packet.
 */
#define GATE_REPLY_MAX 32
#define GATE_PACKET_MAX 4096 /* bytes of one MTA packet taken before the tempfail */
int gate_tempfail_step(const unsigned char *in, size_t in_len, size_t *ret_used, unsigned char *out,
                       size_t *ret_out_len);

#endif
