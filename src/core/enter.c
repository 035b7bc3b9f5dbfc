/* SPDX-License-Identifier: MIT */
/*
 * The liburing-style calls built on io_uring_enter(2). The application side
 * touches only the shared ring memory (in-process, through the engine's
 * mapping of it: see ring_map_app); everything else goes through the ring's
 * backend (ring->ops->enter: native_enter in submit.c for ucmd's own
 * engine). The SQ/CQ logic here works on any backend's ring memory, which
 * all have Linux's layout.
 */
#include <errno.h>

#include "core/core.h"

/*
 * Publish the SQEs handed out by ucmd_get_sqe(); returns how many wait (on a
 * UCMD_INT_FLAG_SQ_POLLED ring: how many this call published).
 */
unsigned app_flush_sq(struct ucmd_ring *ring)
{
	struct ucmd_sq *sq = &ring->sq;
	unsigned tail = sq->sqe_tail;
	unsigned published = tail - sq->sqe_head;

	if (published) {
		sq->sqe_head = tail;
		/* seq_cst: pairs with the SQPOLL thread's NEED_WAKEUP (Dekker) */
		__atomic_store_n(sq->ktail, tail, __ATOMIC_SEQ_CST);
	}
	if (ring->int_flags & UCMD_INT_FLAG_SQ_POLLED)
		return published;
	return tail - __atomic_load_n(sq->khead, __ATOMIC_ACQUIRE);
}

static bool sq_needs_enter(struct ucmd_ring *ring, unsigned submit, unsigned *flags)
{
	if (!submit)
		return false;
	if (!(ring->flags & IORING_SETUP_SQPOLL))
		return true;
	/* Pairs with the poller's NEED_WAKEUP-then-recheck. */
	if (__atomic_load_n(ring->sq.kflags, __ATOMIC_SEQ_CST) & IORING_SQ_NEED_WAKEUP) {
		*flags |= IORING_ENTER_SQ_WAKEUP;
		return true;
	}
	return false;
}

static bool cq_needs_flush(struct ucmd_ring *ring)
{
	return __atomic_load_n(ring->sq.kflags, __ATOMIC_ACQUIRE) & IORING_SQ_CQ_OVERFLOW;
}

int ucmd_submit_and_wait(struct ucmd_ring *ring, unsigned wait_nr)
{
	if (ring->ops->submit_and_wait)
		return ring->ops->submit_and_wait(ring, wait_nr);
	return app_submit_and_wait(ring, wait_nr);
}

int app_submit_and_wait(struct ucmd_ring *ring, unsigned wait_nr)
{
	unsigned submitted = app_flush_sq(ring);
	unsigned flags = 0;

	if (sq_needs_enter(ring, submitted, &flags) || wait_nr || cq_needs_flush(ring)) {
		if (wait_nr || (ring->flags & IORING_SETUP_IOPOLL) || cq_needs_flush(ring))
			flags |= IORING_ENTER_GETEVENTS;
		return ring->ops->enter(ring, submitted, wait_nr, flags);
	}
	return (int)submitted;
}

int ucmd_submit(struct ucmd_ring *ring)
{
	return ucmd_submit_and_wait(ring, 0);
}

static struct io_uring_cqe *peek(struct ucmd_ring *ring, unsigned *avail)
{
	unsigned head = *ring->cq.khead;
	unsigned tail = __atomic_load_n(ring->cq.ktail, __ATOMIC_ACQUIRE);

	*avail = tail - head;
	if (head == tail)
		return NULL;
	return &ring->cq.cqes[(head & ring->cq.ring_mask) << ucmd_cqe_shift(ring)];
}

int ucmd_wait_cqe_nr(struct ucmd_ring *ring, struct io_uring_cqe **cqe_ptr, unsigned wait_nr)
{
	unsigned avail;
	int ret;

	for (;;) {
		struct io_uring_cqe *cqe = peek(ring, &avail);
		if (cqe && avail >= wait_nr) {
			*cqe_ptr = cqe;
			return 0;
		}
		/*
		 * Enter even for a peek with nothing to show: that is when task
		 * work (completions found on other threads) and overflowed CQEs
		 * are brought into the ring.
		 */
		ret = ring->ops->enter(ring, 0, wait_nr, IORING_ENTER_GETEVENTS);
		if (ret < 0)
			return ret;
		if (!wait_nr) {
			cqe = peek(ring, &avail);
			*cqe_ptr = cqe;
			return cqe ? 0 : -EAGAIN;
		}
	}
}

int ucmd_peek_cqe(struct ucmd_ring *ring, struct io_uring_cqe **cqe_ptr)
{
	return ucmd_wait_cqe_nr(ring, cqe_ptr, 0);
}
