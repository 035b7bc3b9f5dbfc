/* SPDX-License-Identifier: MIT */
/*
 * Waiting with a timeout and batch peeking: liburing 2.3's io_uring_wait_cqes,
 * io_uring_wait_cqe_timeout, io_uring_submit_and_wait_timeout and
 * io_uring_peek_batch_cqe, with their returns. The timed wait is
 * io_uring_enter(2) with IORING_ENTER_EXT_ARG: submitted requests when
 * there were any, else 0 or -ETIME.
 */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <time.h>

#include "core/core.h"
#include "lib/clock.h"

int native_enter_timeout(struct ucmd_ring *ring, unsigned to_submit, unsigned min_complete,
				unsigned flags, const struct __kernel_timespec *ts,
				const sigset_t *sigmask)
{
	struct ucmd_ctx *ctx = ring_to_ctx(ring);
	uint64_t deadline;
	sigset_t old;
	int submitted = 0, ret = 0;

	if (ts->tv_sec < 0 || ts->tv_nsec < 0 || ts->tv_nsec >= 1000000000)
		return -EINVAL;
	deadline = ktime_get_ns() + (uint64_t)ts->tv_sec * 1000000000ull + (uint64_t)ts->tv_nsec;
	if ((ctx->flags & IORING_SETUP_DEFER_TASKRUN) && (flags & IORING_ENTER_GETEVENTS) &&
	    ctx->submitter_tid != current_tid())
		return -EEXIST;
	if (to_submit || (flags & ~IORING_ENTER_GETEVENTS)) {
		submitted = ucmd_enter(ring, to_submit, 0, flags & ~IORING_ENTER_GETEVENTS);
		if (submitted < 0)
			return submitted;
	}
	if (flags & IORING_ENTER_GETEVENTS) {
		if (sigmask)
			pthread_sigmask(SIG_SETMASK, sigmask, &old);
		ret = io_cqring_wait_deadline(ctx, min_complete, deadline);
		if (sigmask)
			pthread_sigmask(SIG_SETMASK, &old, NULL);
	}
	/* as io_uring_enter(2): what was submitted wins over the wait's result */
	return submitted ? submitted : ret;
}

static int enter_timeout(struct ucmd_ring *ring, unsigned to_submit, unsigned min_complete,
			 unsigned flags, const struct __kernel_timespec *ts, const sigset_t *sigmask)
{
	const struct ucmd_backend *ops = ring->ops;

	return ops ? ops->enter_timeout(ring, to_submit, min_complete, flags, ts, sigmask) : -EBADF;
}

static struct io_uring_cqe *peek(struct ucmd_ring *ring, unsigned *avail)
{
	unsigned head = *ring->cq.khead;
	unsigned tail = __atomic_load_n(ring->cq.ktail, __ATOMIC_ACQUIRE);

	*avail = tail - head;
	return head == tail ? NULL
			    : &ring->cq.cqes[(head & ring->cq.ring_mask) << ucmd_cqe_shift(ring)];
}

/*
 * liburing's _io_uring_get_cqe with a timeout: enter once (submitting and
 * waiting), then look. Returns what liburing returns: the first enter's
 * result (submitted count, 0) unless it failed, -ETIME when nothing came
 * and nothing was submitted.
 */
static int get_cqe_timeout(struct ucmd_ring *ring, struct io_uring_cqe **cqe_ptr,
			   unsigned submit, unsigned wait_nr, struct __kernel_timespec *ts,
			   sigset_t *sigmask)
{
	struct io_uring_cqe *cqe;
	unsigned avail, flags = 0;
	int err = 0;

	cqe = peek(ring, &avail);
	if (cqe && avail >= wait_nr && !submit) {
		*cqe_ptr = cqe;
		return 0;
	}
	if (wait_nr > avail || !cqe)
		flags |= IORING_ENTER_GETEVENTS;
	if (submit && (ring->flags & IORING_SETUP_SQPOLL) &&
	    (__atomic_load_n(ring->sq.kflags, __ATOMIC_SEQ_CST) & IORING_SQ_NEED_WAKEUP))
		flags |= IORING_ENTER_SQ_WAKEUP;
	err = enter_timeout(ring, submit, wait_nr, flags, ts, sigmask);
	cqe = peek(ring, &avail);
	*cqe_ptr = cqe;
	if (err < 0)
		return err;
	if (!cqe && !err && (flags & IORING_ENTER_GETEVENTS))
		return -ETIME;
	return err;
}

int ucmd_wait_cqes(struct ucmd_ring *ring, struct io_uring_cqe **cqe_ptr, unsigned wait_nr,
		   struct __kernel_timespec *ts, sigset_t *sigmask)
{
	if (!ts) {
		sigset_t old;
		int ret;

		if (sigmask)
			pthread_sigmask(SIG_SETMASK, sigmask, &old);
		ret = ucmd_wait_cqe_nr(ring, cqe_ptr, wait_nr);
		if (sigmask)
			pthread_sigmask(SIG_SETMASK, &old, NULL);
		return ret;
	}
	return get_cqe_timeout(ring, cqe_ptr, 0, wait_nr, ts, sigmask);
}

int ucmd_wait_cqe_timeout(struct ucmd_ring *ring, struct io_uring_cqe **cqe_ptr,
			  struct __kernel_timespec *ts)
{
	return ucmd_wait_cqes(ring, cqe_ptr, 1, ts, NULL);
}

int ucmd_submit_and_wait_timeout(struct ucmd_ring *ring, struct io_uring_cqe **cqe_ptr,
				 unsigned wait_nr, struct __kernel_timespec *ts,
				 sigset_t *sigmask)
{
	if (!ts) {
		int ret = ucmd_submit_and_wait(ring, wait_nr);

		if (ret < 0)
			return ret;
		int w = ucmd_wait_cqes(ring, cqe_ptr, wait_nr, NULL, sigmask);
		return w < 0 ? w : ret;
	}
	return get_cqe_timeout(ring, cqe_ptr, app_flush_sq(ring), wait_nr, ts, sigmask);
}

unsigned ucmd_peek_batch_cqe(struct ucmd_ring *ring, struct io_uring_cqe **cqes, unsigned count)
{
	unsigned ready, head, mask = ring->cq.ring_mask, shift = ucmd_cqe_shift(ring);
	bool entered = false;

again:
	ready = ucmd_cq_ready(ring);
	if (ready) {
		head = *ring->cq.khead;
		if (count > ready)
			count = ready;
		for (unsigned i = 0; i < count; i++)
			cqes[i] = &ring->cq.cqes[((head + i) & mask) << shift];
		return count;
	}
	/*
	 * liburing enters when overflowed CQEs wait; ucmd also brings in the
	 * completions other threads handed over (task work) this way.
	 */
	if (!entered) {
		entered = true;
		if (ucmd_enter(ring, 0, 0, IORING_ENTER_GETEVENTS) >= 0)
			goto again;
	}
	return 0;
}
