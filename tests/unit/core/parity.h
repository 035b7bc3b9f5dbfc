/* SPDX-License-Identifier: MIT */
/* Small SQE helpers shared by the liburing-parity tests. */
#ifndef PARITY_H
#define PARITY_H

#include "ringutil.h"

static inline struct io_uring_sqe *p_nop(struct ucmd_ring *r, uint64_t ud, unsigned sqe_flags)
{
	struct io_uring_sqe *sqe = ucmd_get_sqe(r);

	ucmd_prep_nop(sqe);
	sqe->user_data = ud;
	sqe->flags = (uint8_t)sqe_flags;
	return sqe;
}

static inline struct io_uring_sqe *p_timeout(struct ucmd_ring *r,
					     const struct __kernel_timespec *ts, unsigned count,
					     uint64_t ud, unsigned sqe_flags)
{
	struct io_uring_sqe *sqe = ucmd_get_sqe(r);

	ucmd_prep_timeout(sqe, ts, count, 0);
	sqe->user_data = ud;
	sqe->flags = (uint8_t)sqe_flags;
	return sqe;
}

static inline struct io_uring_sqe *p_link_timeout(struct ucmd_ring *r,
						  const struct __kernel_timespec *ts,
						  uint64_t ud, unsigned sqe_flags)
{
	struct io_uring_sqe *sqe = ucmd_get_sqe(r);

	ucmd_prep_link_timeout(sqe, ts, 0);
	sqe->user_data = ud;
	sqe->flags = (uint8_t)sqe_flags;
	return sqe;
}

static inline struct io_uring_sqe *p_cancel(struct ucmd_ring *r, uint64_t target, int flags,
					    uint64_t ud)
{
	struct io_uring_sqe *sqe = ucmd_get_sqe(r);

	ucmd_prep_cancel64(sqe, target, flags);
	sqe->user_data = ud;
	return sqe;
}

/* The CQE for ud among n; fails the test when there is none. */
static inline const struct cqe_copy *p_find(const struct cqe_copy *c, unsigned n, uint64_t ud)
{
	for (unsigned i = 0; i < n; i++)
		if (c[i].user_data == ud)
			return &c[i];
	fail_msg("no CQE for user_data %llu", (unsigned long long)ud);
	return NULL;
}

static const struct __kernel_timespec p_short = { .tv_sec = 0, .tv_nsec = 10 * 1000 * 1000 };
static const struct __kernel_timespec p_long = { .tv_sec = 60, .tv_nsec = 0 };

#endif
