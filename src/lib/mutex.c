/* SPDX-License-Identifier: MIT */
#include <stdatomic.h>

#include "lib/cpu.h"
#include "lib/futex.h"
#include "lib/mutex.h"

/*
 * the mutex's contended half. A waiter marks the word 2 before it sleeps,
 * so the holder's unlock knows to wake someone; whoever takes the lock from
 * here keeps it marked 2, since others may still be asleep.
 */
void mutex_lock_slow(struct mutex *m)
{
	/*
	 * Spin briefly first: uring_lock is held for one submission or one
	 * task-work run, usually shorter than a futex sleep and wake-up.
	 */
	for (int i = 0; i < 100; i++) {
		uint32_t free = 0;

		if (atomic_load_explicit(&m->v, memory_order_relaxed) == 0 &&
		    atomic_compare_exchange_weak_explicit(&m->v, &free, 1, memory_order_acquire,
							  memory_order_relaxed))
			return;
		cpu_relax();
	}
	while (atomic_exchange_explicit(&m->v, 2, memory_order_acquire) != 0)
		futex_wait(&m->v, 2, -1);
}

void mutex_wake(struct mutex *m)
{
	futex_wake(&m->v, 1);
}
