#!/usr/bin/env python3
"""Hostile HTTP clients for the MetricsSocket test (metrics.sh).

Usage: slow-http.py slowloris PORT COUNT EVERY SECONDS READY_FILE
       slow-http.py silent PORT COUNT SECONDS READY_FILE

slowloris: COUNT connections to 127.0.0.1:PORT, each sending the request
line of GET /metrics and then one header line every EVERY seconds, never
the blank line that ends the header; a connection the server closes is
opened again at once, as an attacker would.
silent: COUNT connections that send nothing and are never reopened (not
waited for: the kernel completes them).

READY_FILE gets "ready" once every connection is open. The clients run
for SECONDS at most, or until SIGTERM or SIGINT, then close; the last
line on stdout is "closed-by-server N", N the connections the server
ended. Every wait is bounded; nothing here asserts timings.
"""
import errno
import select
import signal
import socket
import sys
import time

stop = False


def on_signal(signum, frame):
    global stop
    stop = True


def connect(port, wait):
    """A connection; with wait, None unless it was set up within 5 s.
    Without, the handshake is left to the kernel (a full backlog must not
    hold the others back)."""
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    if not wait:
        s.setblocking(False)
        s.connect_ex(("127.0.0.1", port))
        return s
    s.settimeout(5.0)
    try:
        s.connect(("127.0.0.1", port))
    except OSError:
        s.close()
        return None
    s.setblocking(False)
    return s


def server_closed(s):
    try:
        return s.recv(1) == b""
    except BlockingIOError:
        return False
    except OSError as e:
        # Still connecting (a full backlog): not closed by the server.
        return e.errno != errno.ENOTCONN


def main():
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    mode, port, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    if mode == "slowloris":
        every, seconds, ready = float(sys.argv[4]), float(sys.argv[5]), sys.argv[6]
    else:
        every, seconds, ready = None, float(sys.argv[4]), sys.argv[5]
    end = time.monotonic() + seconds
    conns = []
    closed = 0

    def opened():
        s = connect(port, every is not None)
        if s is not None and every is not None:
            try:
                s.send(b"GET /metrics HTTP/1.1\r\n")
            except OSError:
                pass
        return s

    for _ in range(count):
        conns.append(opened())
    # Silent ones: wait (bounded) for every handshake, so that a retried
    # SYN does not arrive among the scrapes that follow.
    settle = time.monotonic() + 10.0
    pending = [s for s in conns if s is not None and every is None]
    while pending and time.monotonic() < settle:
        p = select.poll()
        for s in pending:
            p.register(s, select.POLLOUT)
        done = {fd for fd, _ in p.poll(100)}
        pending = [s for s in pending if s.fileno() not in done]
    with open(ready, "w") as f:
        f.write("ready\n")
    next_line = time.monotonic() + (every or 1.0)
    while not stop and time.monotonic() < end:
        time.sleep(0.1)
        for i, s in enumerate(conns):
            if s is not None and server_closed(s):
                s.close()
                closed += 1
                conns[i] = opened() if every is not None else None
        if every is not None and time.monotonic() >= next_line:
            next_line += every
            for s in conns:
                if s is not None:
                    try:
                        s.send(b"X-Slow: 1\r\n")
                    except OSError:
                        pass
    for s in conns:
        if s is not None:
            s.close()
    print("closed-by-server %d" % closed)


if __name__ == "__main__":
    main()
