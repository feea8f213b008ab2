/*
 * reply_clock.c - milliseconds of CLOCK_MONOTONIC for the transports'
 * deadlines (see reply_clock.h). Safe on any thread.
 */
#include <time.h>

#include "reply_clock.h"

int64_t
reply_clock_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}
