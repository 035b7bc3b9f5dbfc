/* SPDX-License-Identifier: MIT */
#include <linux/futex.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "lib/futex.h"

void futex_wait(_Atomic uint32_t *addr, uint32_t val, int timeout_ms)
{
	struct timespec ts = { timeout_ms / 1000, (long)(timeout_ms % 1000) * 1000000L };

	syscall(SYS_futex, (uint32_t *)addr, FUTEX_WAIT_PRIVATE, val,
		timeout_ms >= 0 ? &ts : NULL, NULL, 0);
}

void futex_wake(_Atomic uint32_t *addr, int nr)
{
	syscall(SYS_futex, (uint32_t *)addr, FUTEX_WAKE_PRIVATE, nr, NULL, NULL, 0);
}
