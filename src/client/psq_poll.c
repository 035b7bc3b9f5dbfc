/* SPDX-License-Identifier: MIT */
/*
 * A SQPOLL ring's program SQ (UCMDD_QI_SUBMIT_COPY with SQPOLL): the
 * program fills it and enters only when its flags word says
 * IORING_SQ_NEED_WAKEUP, as on Linux, so a poller of the client's (the
 * preload's thread, src/preload/uring_sqpoll.c) copies it into the ring's
 * SQ as Linux's SQ thread takes it, and the daemon's proxy polls that one
 * as ever. Here: what the poller looks at, how it sleeps and is woken
 * (a futex word in the memfd, so that a forked child holding the ring
 * wakes its maker's poller), the flags word the program reads.
 */
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "client/client.h"

static struct dring *to_dr(const struct ucmd_ring *ring)
{
	return ring->backend;
}

bool dc_psq_polled(const struct ucmd_ring *ring)
{
	return to_dr(ring)->psq_flags != NULL;
}

bool dc_psq_gone(const struct ucmd_ring *ring)
{
	const struct dring *dr = to_dr(ring);

	return atomic_load(&dr->dc->dead) ||
	       __atomic_load_n(&dr->ctl->state, __ATOMIC_ACQUIRE) == UCMDD_RING_DEAD;
}

unsigned dc_psq_pending(const struct ucmd_ring *ring)
{
	const struct dring *dr = to_dr(ring);
	unsigned n;

	if (!dr->psq_tail)
		return 0;
	/* seq_cst: after the poller's NEED_WAKEUP, as the program's tail before its look */
	n = __atomic_load_n(dr->psq_tail, __ATOMIC_SEQ_CST) -
	    __atomic_load_n(dr->psq_khead, __ATOMIC_RELAXED);
	return n > ring->sq.ring_entries ? ring->sq.ring_entries : n;
}

bool dc_psq_full(const struct ucmd_ring *ring)
{
	const struct dring *dr = to_dr(ring);

	return dr->psq_tail && __atomic_load_n(dr->psq_tail, __ATOMIC_ACQUIRE) -
					   __atomic_load_n(dr->psq_head, __ATOMIC_ACQUIRE) >=
				       ring->sq.ring_entries;
}

void dc_psq_poll_flags(const struct ucmd_ring *ring)
{
	const struct dring *dr = to_dr(ring);
	unsigned ov = __atomic_load_n(ring->sq.kflags, __ATOMIC_ACQUIRE) & IORING_SQ_CQ_OVERFLOW;

	if (!dr->psq_flags)
		return;
	if ((__atomic_load_n(dr->psq_flags, __ATOMIC_RELAXED) & IORING_SQ_CQ_OVERFLOW) == ov)
		return;
	if (ov)
		__atomic_fetch_or(dr->psq_flags, IORING_SQ_CQ_OVERFLOW, __ATOMIC_RELEASE);
	else
		__atomic_fetch_and(dr->psq_flags, ~IORING_SQ_CQ_OVERFLOW, __ATOMIC_RELEASE);
}

int dc_psq_poll_sleep(const struct ucmd_ring *ring, unsigned max_ms)
{
	const struct dring *dr = to_dr(ring);
	struct timespec ts = { .tv_sec = max_ms / 1000, .tv_nsec = (long)(max_ms % 1000) * 1000000 };
	uint32_t seq;

	if (!dr->psq_flags)
		return -EINVAL;
	seq = __atomic_load_n(dr->psq_wake, __ATOMIC_SEQ_CST);
	/* the program reads its flags after its tail: it sees this, or the look below its SQEs */
	__atomic_fetch_or(dr->psq_flags, IORING_SQ_NEED_WAKEUP, __ATOMIC_SEQ_CST);
	if (!dc_psq_pending(ring) && !dc_psq_gone(ring))
		/* shared: a forked child's wake-up is on the same page of the memfd */
		syscall(SYS_futex, dr->psq_wake, FUTEX_WAIT, seq, &ts, NULL, 0);
	__atomic_fetch_and(dr->psq_flags, ~IORING_SQ_NEED_WAKEUP, __ATOMIC_SEQ_CST);
	return 0;
}

void dc_psq_poll_wake(const struct ucmd_ring *ring)
{
	const struct dring *dr = to_dr(ring);

	if (!dr->psq_wake)
		return;
	__atomic_fetch_add(dr->psq_wake, 1, __ATOMIC_SEQ_CST);
	syscall(SYS_futex, dr->psq_wake, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}
