/* SPDX-License-Identifier: MIT */
/*
 * futex(2) on a 32-bit word, process-private: the sleep and wake-up under
 * the mutex (mutex.h), the tag allocator's waiters and the engine's CQ wait.
 */
#ifndef UCMD_LIB_FUTEX_H
#define UCMD_LIB_FUTEX_H

#include <stdint.h>

/* Sleep while *addr == val, at most timeout_ms (< 0: no limit). */
void futex_wait(_Atomic uint32_t *addr, uint32_t val, int timeout_ms);
/* Wake up to nr sleepers on addr. */
void futex_wake(_Atomic uint32_t *addr, int nr);

#endif /* UCMD_LIB_FUTEX_H */
