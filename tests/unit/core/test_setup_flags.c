/* SPDX-License-Identifier: MIT */
/*
 * Setup flags of the current io_uring ABI that liburing 2.9+ sends:
 * IORING_SETUP_NO_SQARRAY (SQE i is the one at head & mask, no index array
 * is told of) and IORING_SETUP_HYBRID_IOPOLL (IOPOLL only; the waiter
 * sleeps half a polled request's usual time before it polls).
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "core/core.h"
#include "lib/clock.h"
#include "testdev.h"

static int init(struct ucmd_engine *e, struct ucmd_ring *ring, unsigned entries, unsigned flags,
		struct io_uring_params *p)
{
	memset(p, 0, sizeof(*p));
	p->flags = flags;
	return ucmd_queue_init_engine(e, entries, ring, p);
}

static void test_hybrid_needs_iopoll(void **state)
{
	struct ucmd_engine *e = ucmd_engine_new();
	struct io_uring_params p;
	struct ucmd_ring ring;

	(void)state;
	assert_int_equal(init(e, &ring, 8, IORING_SETUP_HYBRID_IOPOLL, &p), -EINVAL);
	ucmd_engine_free(e);
}

/* Submit n polled commands without waiting; then let delay_ns pass; then reap them. */
static uint64_t polled_round(struct ucmd_ring *ring, int fd, unsigned n, uint64_t delay_ns)
{
	struct td_cqe c[8];
	uint64_t t0;

	for (unsigned i = 0; i < n; i++)
		td_prep(ring, fd, TD_OP_POLLED, 100 + i, (int64_t)i);
	ring->sq.sqe_head = ring->sq.sqe_tail;
	__atomic_store_n(ring->sq.ktail, ring->sq.sqe_tail, __ATOMIC_RELEASE);
	assert_int_equal(ucmd_enter(ring, n, 0, 0), (int)n);
	if (delay_ns)
		nanosleep(&(struct timespec){ 0, (long)delay_ns }, NULL);
	t0 = ktime_get_ns();
	td_reap(ring, c, n);	/* waits (io_uring_enter GETEVENTS), which polls */
	for (unsigned i = 0; i < n; i++)
		assert_int_equal(td_find(c, n, 100 + i)->res, (int)i);
	return ktime_get_ns() - t0;
}

static void test_hybrid_iopoll(void **state)
{
	struct ucmd_engine *e = ucmd_engine_new();
	struct io_uring_params p;
	struct ucmd_ring ring, plain;
	uint64_t waited;
	int fd;

	(void)state;
	td_register(e);
	fd = ucmd_open(e, "tdev", O_RDWR);
	assert_true(fd >= 0);
	assert_int_equal(init(e, &ring, 8, IORING_SETUP_IOPOLL | IORING_SETUP_HYBRID_IOPOLL, &p),
			 0);
	assert_true(ring.flags & IORING_SETUP_HYBRID_IOPOLL);
	struct ucmd_ctx *ctx = ring.backend;

	/* the first wait knows nothing yet: it polls at once */
	assert_int_equal(ctx->hybrid_poll_time, 0);
	polled_round(&ring, fd, 8, 3000000);
	/* the requests were timed from issue to completion: 3 ms at least */
	assert_true(ctx->hybrid_poll_time >= 3000000);
	/* so the next waiter sleeps (half of it, at most 1 ms) before it polls */
	unsigned polls = td_nr_polls();

	waited = polled_round(&ring, fd, 8, 0);
	assert_true(waited >= 900000);
	assert_true(td_nr_polls() - polls <= 2);
	ucmd_queue_exit(&ring);

	/* a plain IOPOLL ring keeps no time: it polls at once */
	assert_int_equal(init(e, &plain, 8, IORING_SETUP_IOPOLL, &p), 0);
	polled_round(&plain, fd, 8, 3000000);
	assert_int_equal(((struct ucmd_ctx *)plain.backend)->hybrid_poll_time, 0);
	ucmd_queue_exit(&plain);
	ucmd_close(e, fd);
	ucmd_engine_free(e);
}

static void test_no_sqarray(void **state)
{
	struct ucmd_engine *e = ucmd_engine_new();
	struct io_uring_params p;
	struct ucmd_ring ring;
	struct td_cqe c[4];

	(void)state;
	assert_int_equal(init(e, &ring, 4, IORING_SETUP_NO_SQARRAY, &p), 0);
	/* no array is told of, as Linux */
	assert_int_equal(p.sq_off.array, 0);
	assert_null(ring.sq.array);
	assert_int_equal(*ring.sq.khead, 0);
	/* several times round the ring: each SQE is the one at head & mask */
	for (unsigned round = 0; round < 5; round++) {
		for (unsigned i = 0; i < 4; i++) {
			struct io_uring_sqe *sqe = td_sqe(&ring);

			ucmd_prep_nop(sqe);
			sqe->user_data = round * 4 + i + 1;
		}
		assert_int_equal(ucmd_submit(&ring), 4);
		assert_int_equal(td_reap_bounded(&ring, c, 4), 4);
		for (unsigned i = 0; i < 4; i++) {
			assert_non_null(td_find(c, 4, round * 4 + i + 1));
			assert_int_equal(td_find(c, 4, round * 4 + i + 1)->res, 0);
		}
	}
	assert_int_equal(*ring.sq.kdropped, 0);
	ucmd_queue_exit(&ring);
	ucmd_engine_free(e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hybrid_needs_iopoll),
		cmocka_unit_test(test_hybrid_iopoll),
		cmocka_unit_test(test_no_sqarray),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
