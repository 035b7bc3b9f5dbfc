/* SPDX-License-Identifier: MIT */
/* A full CQ overflows into a list; nothing is lost and order is kept. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>

#include "ringutil.h"

static void test_overflow_nothing_lost(void **state)
{
	struct ucmd_ring ring;
	struct cqe_copy c[64];
	uint64_t ud = 0;

	(void)state;
	/* SQ 2, CQ 4 */
	ring_setup(ucmd_engine_default(), &ring, 2, IORING_SETUP_CQE32);
	for (int round = 0; round < 20; round++) {
		for (int i = 0; i < 2; i++) {
			struct io_uring_sqe *sqe = ucmd_get_sqe(&ring);
			ucmd_prep_nop(sqe);
			sqe->user_data = ud++;
		}
		assert_int_equal(ucmd_submit(&ring), 2);
	}
	/* 40 completions, 4 in the ring, 36 overflowed */
	assert_int_equal(ucmd_cq_ready(&ring), 4);
	assert_true(*ring.sq.kflags & IORING_SQ_CQ_OVERFLOW);
	assert_int_equal(*ring.cq.koverflow, 0);	/* none dropped */
	reap(&ring, c, 40);
	for (unsigned i = 0; i < 40; i++) {
		assert_int_equal(c[i].user_data, i);
		assert_int_equal(c[i].res, 0);
	}
	assert_false(*ring.sq.kflags & IORING_SQ_CQ_OVERFLOW);
	assert_int_equal(ucmd_cq_ready(&ring), 0);
	ucmd_queue_exit(&ring);
}

/* A bogus CQ head from the application cannot make the engine overwrite. */
static void test_bogus_cq_head(void **state)
{
	struct ucmd_ring ring;
	struct cqe_copy c[8];

	(void)state;
	ring_setup(ucmd_engine_default(), &ring, 2, 0);
	__atomic_store_n(ring.cq.khead, 12345u, __ATOMIC_RELEASE);
	for (int i = 0; i < 2; i++) {
		struct io_uring_sqe *sqe = ucmd_get_sqe(&ring);
		ucmd_prep_nop(sqe);
		sqe->user_data = 77;
	}
	assert_int_equal(ucmd_submit(&ring), 2);
	/* with head "ahead" of the tail the CQ looks full: completions are kept */
	assert_true(*ring.sq.kflags & IORING_SQ_CQ_OVERFLOW);
	__atomic_store_n(ring.cq.khead, *ring.cq.ktail, __ATOMIC_RELEASE);
	reap(&ring, c, 2);
	assert_int_equal(c[0].user_data, 77);
	assert_int_equal(c[1].user_data, 77);
	ucmd_queue_exit(&ring);
}

/*
 * A submission while CQEs wait in the overflow list enters with
 * GETEVENTS, as liburing's io_uring_submit does: the enter moves them
 * into the room the application made, so they are there when the submit
 * returns, before the new request's CQE and in order.
 */
static void test_submit_flushes_overflow(void **state)
{
	struct ucmd_ring ring;
	struct cqe_copy c[8];
	uint64_t ud = 0;

	(void)state;
	/* SQ 2, CQ 4: three batches of two, two CQEs overflow */
	ring_setup(ucmd_engine_default(), &ring, 2, 0);
	for (int round = 0; round < 3; round++) {
		for (int i = 0; i < 2; i++) {
			struct io_uring_sqe *sqe = ucmd_get_sqe(&ring);
			ucmd_prep_nop(sqe);
			sqe->user_data = ud++;
		}
		assert_int_equal(ucmd_submit(&ring), 2);
	}
	assert_int_equal(ucmd_cq_ready(&ring), 4);
	assert_true(*ring.sq.kflags & IORING_SQ_CQ_OVERFLOW);
	/* room made without an enter */
	ucmd_cq_advance(&ring, 4);
	struct io_uring_sqe *sqe = ucmd_get_sqe(&ring);
	ucmd_prep_nop(sqe);
	sqe->user_data = ud++;
	assert_int_equal(ucmd_submit(&ring), 1);
	assert_int_equal(ucmd_cq_ready(&ring), 3);
	assert_false(*ring.sq.kflags & IORING_SQ_CQ_OVERFLOW);
	reap(&ring, c, 3);
	for (unsigned i = 0; i < 3; i++)
		assert_int_equal(c[i].user_data, 4 + i);
	ucmd_queue_exit(&ring);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_overflow_nothing_lost),
		cmocka_unit_test(test_bogus_cq_head),
		cmocka_unit_test(test_submit_flushes_overflow),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
