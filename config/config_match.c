/*
 * config_match.c - the address and host list matchers the callbacks ask
 * (Recipients, AllowSenders, PeerList, InternalHosts). Read-only on an
 * immutable struct config: thread-safe.
 */
#include <netinet/in.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#include "config_internal.h"

bool
config_list_empty(const struct config_list *list)
{
    return list->n == 0;
}

bool
config_list_match(const struct config_list *list, const char *addr)
{
    const char *at = strrchr(addr, '@');

    for (size_t i = 0; i < list->n; i++) {
        const char *item = list->items[i];

        if (item[0] == '@') {
            if (at != NULL && strcasecmp(at, item) == 0)
                return true;
        } else if (strcasecmp(addr, item) == 0)
            return true;
    }
    return false;
}

static bool
net_match(const struct config_net *net, int family, const unsigned char *addr)
{
    unsigned full = net->prefix / 8, rest = net->prefix % 8;

    if (net->family != family)
        return false;
    if (memcmp(net->addr, addr, full) != 0)
        return false;
    if (rest == 0)
        return true;
    {
        unsigned char mask = (unsigned char)(0xff << (8 - rest));

        return (net->addr[full] & mask) == (addr[full] & mask);
    }
}

/* The peer's address and family, an IPv4-mapped IPv6 one as IPv4 (in v4):
 * an IPv4 client on a dual-stack socket matches IPv4 entries. NULL for
 * any other family. */
static const unsigned char *
peer_addr(const struct sockaddr *sa, unsigned char v4[4], int *ret_family)
{
    const struct in6_addr *a6;

    if (sa->sa_family == AF_INET) {
        *ret_family = AF_INET;
        return (const unsigned char *)&((const struct sockaddr_in *)(const void *)sa)->sin_addr;
    }
    if (sa->sa_family != AF_INET6)
        return NULL;
    a6 = &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr;
    if (IN6_IS_ADDR_V4MAPPED(a6)) {
        memcpy(v4, a6->s6_addr + 12, 4);
        *ret_family = AF_INET;
        return v4;
    }
    *ret_family = AF_INET6;
    return a6->s6_addr;
}

static bool
nets_match(const struct config_hosts *hosts, const struct sockaddr *sa)
{
    unsigned char v4[4];
    int family = 0;
    const unsigned char *a = peer_addr(sa, v4, &family);

    for (size_t i = 0; a != NULL && i < hosts->n_nets; i++)
        if (net_match(&hosts->nets[i], family, a))
            return true;
    return false;
}

/* An exact name, or a ".domain" entry the name ends with (not the domain
 * itself). */
static bool
names_match(const struct config_hosts *hosts, const char *hostname)
{
    size_t hl = strlen(hostname);

    for (size_t i = 0; i < hosts->n_names; i++) {
        const char *n = hosts->names[i];
        size_t nl = strlen(n);

        if (n[0] == '.') {
            if (hl > nl && strcasecmp(hostname + hl - nl, n) == 0)
                return true;
        } else if (strcasecmp(hostname, n) == 0)
            return true;
    }
    return false;
}

bool
config_hosts_match(const struct config_hosts *hosts, const struct sockaddr *sa,
                   const char *hostname)
{
    if (sa != NULL && hosts->n_nets > 0 && nets_match(hosts, sa))
        return true;
    /* "[1.2.3.4]": the MTA found no name for the address. */
    return hostname != NULL && hostname[0] != '[' && hostname[0] != '\0' &&
           names_match(hosts, hostname);
}
