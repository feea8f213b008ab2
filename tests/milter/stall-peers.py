#!/usr/bin/env python3
"""Open milter connections that send part of a packet and stall.

Usage: stall-peers.py SOCKET COUNT READY_FILE

SOCKET is a UNIX-domain socket path. Three peers in four send the first
9 bytes of the 17-byte option negotiation and stop; the fourth negotiates,
sends CONNECT and MAIL, then half of a header packet, and stops there.
Half of these deep peers connect first, one at a time, the rest after the
others: libmilter's worker pool can leave a session that arrives in a
burst waiting until a busy worker is free (ReadTimeout), so the first
ones must not share a burst, and the last ones find the cap full.
When every peer is set up, READY_FILE gets one line: "ready N T D", N
the peers connected, T the deep ones the daemon answered with tempfail
(over its MaxConnections), D those that got as far as the header. The peers stay open until SIGTERM or SIGINT, then close.
Every wait is bounded; nothing here asserts timings.
"""
import select
import signal
import socket
import struct
import sys
import time

SMFIC_OPTNEG = b"O"
SMFIR_TEMPFAIL = b"t"
SMFIP_NR_CONN = 0x1000
REPLY_WAIT = 20.0  # seconds for one answer; generous on a loaded machine


def packet(cmd, data=b""):
    return struct.pack("!I", len(data) + 1) + cmd + data


def read_packet(s):
    """One packet (cmd, data), or None when the daemon closes or is silent."""
    buf = b""
    deadline = time.monotonic() + REPLY_WAIT
    while True:
        if len(buf) >= 4:
            n = struct.unpack("!I", buf[:4])[0]
            if len(buf) >= 4 + n:
                return buf[4:5], buf[5:4 + n]
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([s], [], [], left)[0]:
            return None
        chunk = s.recv(4096)
        if not chunk:
            return None
        buf += chunk


def deep_stall(s):
    """Negotiate, CONNECT, MAIL, half a header: "tempfail", "header" or None."""
    s.sendall(packet(SMFIC_OPTNEG, struct.pack("!III", 6, 0x1FF, 0x1FFFFF)))
    reply = read_packet(s)
    if reply is None or reply[0] != SMFIC_OPTNEG or len(reply[1]) < 12:
        return None
    pflags = struct.unpack("!I", reply[1][8:12])[0]
    s.sendall(packet(b"C", b"client.example.test\0" + b"4" + struct.pack("!H", 25)
                     + b"192.0.2.10\0"))
    if not pflags & SMFIP_NR_CONN:
        reply = read_packet(s)
        if reply is None or reply[0] == SMFIR_TEMPFAIL:
            return reply and "tempfail"
    s.sendall(packet(b"M", b"<stall@example.test>\0"))
    reply = read_packet(s)
    if reply is None or reply[0] == SMFIR_TEMPFAIL:
        return reply and "tempfail"
    whole = packet(b"L", b"Subject\0a header that never ends\0")
    s.sendall(whole[:len(whole) // 2])
    return "header"


def main():
    path, count, ready = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    peers, outcomes = [], []
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    signal.signal(signal.SIGINT, lambda *_: stop.append(1))
    optneg = packet(SMFIC_OPTNEG, struct.pack("!III", 6, 0x1FF, 0x1FFFFF))
    deep = count // 4
    first = (deep + 1) // 2
    order = [True] * first + [False] * (count - deep) + [True] * (deep - first)
    for is_deep in order:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            s.connect(path)
            if is_deep:
                outcomes.append(deep_stall(s))
            else:
                s.sendall(optneg[:9])
        except OSError:
            s.close()
            continue
        peers.append(s)
    with open(ready, "w") as f:
        f.write("ready %d %d %d\n" % (len(peers), outcomes.count("tempfail"),
                                      outcomes.count("header")))
    while not stop:
        time.sleep(0.2)
    for s in peers:
        s.close()


if __name__ == "__main__":
    main()
