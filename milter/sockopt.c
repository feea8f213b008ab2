/*
 * sockopt.c - TCP_NODELAY for the sockets libmilter listens on.
 *
 * libmilter never sets TCP_NODELAY. At end of message a filter answers
 * with several small packets (header changes, then accept), and the MTA's
 * delayed ACK then holds the last one back by about 40 ms per message
 * (the stall rspamd issue 1790 describes). smfi_opensocket() does not
 * hand out its descriptor, so find the listening TCP sockets among ours;
 * accepted sockets inherit the option on Linux. Shared with
 * bench/null_milter.c, whose figures must not include the stall either.
 */
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include "sockopt.h"

/* Descriptors above this were not opened by smfi_opensocket() this early. */
#define SOCKOPT_MAX_FD 1024

void
sockopt_listen_nodelay(void)
{
    for (int fd = 3; fd < SOCKOPT_MAX_FD; fd++) {
        int listening = 0, domain = 0, one = 1;
        socklen_t len = sizeof(listening);

        if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &len) < 0 || !listening)
            continue;
        len = sizeof(domain);
        if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &len) < 0)
            continue;
        if (domain == AF_INET || domain == AF_INET6)
            (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    }
}
