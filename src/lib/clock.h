/* SPDX-License-Identifier: MIT */
/*
 * The one monotonic clock (the kernel's ktime_get_ns()): request deadlines,
 * disk statistics, the controller's timers and power-on time, sqpoll's idle
 * time. Inline: it is read on the I/O path, and clock_gettime() is a vDSO
 * call that the wrapper should not add a call to.
 */
#ifndef UCMD_LIB_CLOCK_H
#define UCMD_LIB_CLOCK_H

#include <stdint.h>
#include <time.h>

#define NSEC_PER_MSEC	1000000ull
#define NSEC_PER_SEC	1000000000ull

static inline uint64_t ktime_get_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
}

#endif /* UCMD_LIB_CLOCK_H */
