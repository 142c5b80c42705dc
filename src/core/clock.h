/* The monotonic clock in seconds, for measuring durations (never the time of day). */
#ifndef TS_CORE_CLOCK_H
#define TS_CORE_CLOCK_H
#include <time.h>

static inline double clock_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

#endif
