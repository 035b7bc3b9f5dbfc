/* SPDX-License-Identifier: MIT */
/*
 * A SQPOLL ring's poller. Under `ucmd exec` the program of a SQPOLL ring
 * fills an SQ of its own (UCMDD_QI_SUBMIT_COPY, docs/daemon.md) and enters
 * only when its flags say IORING_SQ_NEED_WAKEUP, as on Linux. This thread
 * of the preload's takes what it publishes as Linux's SQ thread does, by
 * the path a submitting enter takes (uring.c's), so that an SQE on the
 * program's own descriptors runs on the kernel ring (uring_own.c) and one
 * on a raw copy of a device is adopted first, in SQ order, chains kept
 * whole; the rest goes to the daemon's ring, whose proxy polls it as ever.
 *
 * It polls for the ring's idle time after its last SQE (as ucmdd's proxy
 * does: sq_thread_idle, 1 ms when 0, 100 ms at most), then sets
 * IORING_SQ_NEED_WAKEUP in the program's flags, looks once more, and
 * sleeps on a futex in the ring's memfd until an enter with
 * IORING_ENTER_SQ_WAKEUP (the program's, or a forked child's that shares
 * the ring) wakes it. It runs as the thread that made the ring, its
 * credentials the ring's (Linux's SQ thread's are its creator's); it ends
 * with the ring's daemon.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/clock.h"
#include "lib/cpu.h"
#include "preload/preload.h"
#include "preload/uring_sqpoll.h"

#define SQPOLL_IDLE_MS_MAX 100u
/* the longest sleep between looks at the ring's CQ_OVERFLOW for the program's flags */
#define SQPOLL_SLEEP_MS 100u
/* an SQ the daemon takes nothing from until the program reaps: looked at again after */
#define SQPOLL_BLOCKED_NS 50000L

struct sqpoll {
	struct ucmd_ring *ring;
	uint64_t idle_ns;
	pl_sqpoll_submit_fn submit;
	void *ctx;
};

static void *poller(void *arg)
{
	struct sqpoll *sp = arg;
	uint64_t last = ktime_get_ns();
	unsigned spins = 0;

	while (!dc_psq_gone(sp->ring)) {
		unsigned n = dc_psq_pending(sp->ring);

		dc_psq_poll_flags(sp->ring);
		if (n) {
			long ret = sp->submit(sp->ctx, n);

			if (ret == -ENOTCONN || ret == -EOWNERDEAD)
				break;
			if (ret <= 0) {
				/* out of room until the program reaps: as Linux's SQ thread, wait */
				struct timespec ts = { 0, SQPOLL_BLOCKED_NS };

				nanosleep(&ts, NULL);
			}
			last = ktime_get_ns();
			spins = 0;
			continue;
		}
		if (ktime_get_ns() - last < sp->idle_ns) {
			if (++spins & 63)
				cpu_relax();
			else
				sched_yield();
			continue;
		}
		dc_psq_poll_sleep(sp->ring, SQPOLL_SLEEP_MS);
		last = ktime_get_ns();
		spins = 0;
	}
	pl_trace("SQPOLL ring: its poller ends (the daemon's ring is gone)");
	free(sp);
	return NULL;
}

int pl_sqpoll_start(struct ucmd_ring *ring, unsigned idle_ms, pl_sqpoll_submit_fn submit,
		    void *ctx)
{
	struct sqpoll *sp = calloc(1, sizeof(*sp));
	sigset_t all, old;
	pthread_attr_t at;
	pthread_t t;
	int ret;

	if (!sp)
		return -ENOMEM;
	if (!idle_ms)
		idle_ms = 1;
	if (idle_ms > SQPOLL_IDLE_MS_MAX)
		idle_ms = SQPOLL_IDLE_MS_MAX;
	sp->ring = ring;
	sp->idle_ns = (uint64_t)idle_ms * 1000000ull;
	sp->submit = submit;
	sp->ctx = ctx;
	/* the program's signals are not for this thread */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pthread_attr_init(&at);
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	ret = pthread_create(&t, &at, poller, sp);
	pthread_attr_destroy(&at);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (ret) {
		free(sp);
		return -ret;
	}
	return 0;
}

void pl_sqpoll_enter(struct ucmd_ring *ring, unsigned flags)
{
	if (flags & IORING_ENTER_SQ_WAKEUP)
		dc_psq_poll_wake(ring);
	/* Linux's io_sqpoll_wait_sq: until the poller made room (a ring gone: the wait's answer) */
	while ((flags & IORING_ENTER_SQ_WAIT) && dc_psq_full(ring) && !dc_psq_gone(ring)) {
		struct timespec ts = { 0, SQPOLL_BLOCKED_NS };

		dc_psq_poll_wake(ring);
		nanosleep(&ts, NULL);
	}
}
