/*
 * sockopt.h - socket options libmilter does not set for us.
 *
 * Threading: call once, after smfi_opensocket() and before smfi_main(),
 * while no other thread opens or closes descriptors.
 */
#ifndef SLOP_MILTER_SOCKOPT_H
#define SLOP_MILTER_SOCKOPT_H

/* TCP_NODELAY on every listening TCP socket of the process. */
void sockopt_listen_nodelay(void);

#endif
