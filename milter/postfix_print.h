/*
 * postfix_print.h - the Postfix lines for this daemon's socket, printed
 * by -n and by -f at start-up.
 */
#ifndef SLOP_MILTER_POSTFIX_PRINT_H
#define SLOP_MILTER_POSTFIX_PRINT_H

#include <stdbool.h>

struct config;
struct ids;

/* The main.cf lines for cfg's socket on stdout, and one warning line on
 * stderr when Postfix's user could not connect to it. made: the socket
 * exists, so its owner and mode are read, not foreseen from ids and
 * SocketMode. */
void postfix_print(const struct config *cfg, const struct ids *ids, bool made);

#endif
