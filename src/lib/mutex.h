/* SPDX-License-Identifier: MIT */
/*
 * The ring's uring_lock. It is taken on every io_uring_enter(), so its
 * uncontended cost is the floor of a small batch: glibc's pthread mutex pair
 * is about 50 instructions (type dispatch, owner and user counts, elision
 * checks), a tenth of a batch-1 null uring_cmd. This is the classic
 * three-state futex mutex (0 free, 1 held, 2 held with waiters): one
 * compare-and-swap to take it and one exchange to drop it when nobody waits.
 * Acquire and release orderings make it visible to ThreadSanitizer as a lock.
 * Like a default pthread mutex, it is not recursive and does not check that
 * the unlocking thread is the owner.
 */
#ifndef UCMD_CORE_MUTEX_H
#define UCMD_CORE_MUTEX_H

#include <stdatomic.h>
#include <stdint.h>

struct mutex {
	_Atomic uint32_t v;
};

#define MUTEX_INIT { 0 }

void mutex_lock_slow(struct mutex *m);
void mutex_wake(struct mutex *m);

static inline void mutex_lock(struct mutex *m)
{
	uint32_t free = 0;

	if (__builtin_expect(!atomic_compare_exchange_strong_explicit(&m->v, &free, 1,
								      memory_order_acquire,
								      memory_order_relaxed), 0))
		mutex_lock_slow(m);
}

static inline void mutex_unlock(struct mutex *m)
{
	if (__builtin_expect(atomic_exchange_explicit(&m->v, 0, memory_order_release) == 2, 0))
		mutex_wake(m);
}

#endif /* UCMD_CORE_MUTEX_H */
