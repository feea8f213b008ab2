/*
 * reply_clock.h - the monotonic clock that the reply transports measure
 * their send deadline on, so a change of the wall clock never stretches
 * or cuts a send short.
 */
#ifndef SLOP_MILTER_REPLY_CLOCK_H
#define SLOP_MILTER_REPLY_CLOCK_H

#include <stdint.h>

/* CLOCK_MONOTONIC in milliseconds. */
int64_t reply_clock_ms(void);

#endif
