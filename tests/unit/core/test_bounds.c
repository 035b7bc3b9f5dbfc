/* SPDX-License-Identifier: MIT */
/*
 * A ring shared with a program the engine does not trust (io_ring_set_bounds):
 * SQEs taken only up to the submit limit that program writes, at most
 * max_reqs requests alive, none taken while CQEs overflow (so the overflow
 * list stays within max_reqs), and sq_blocked telling the program so.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>

#include "core/core.h"
#include "ringutil.h"

static void queue_nops(struct ucmd_ring *ring, unsigned n, uint64_t *ud)
{
	for (unsigned i = 0; i < n; i++) {
		struct io_uring_sqe *sqe = ucmd_get_sqe(ring);

		assert_non_null(sqe);
		ucmd_prep_nop(sqe);
		sqe->user_data = (*ud)++;
	}
}

static unsigned overflowed(struct ucmd_ring *ring)
{
	unsigned n = 0;

	for (struct ucmd_ocqe *o = ring_to_ctx(ring)->ocq_head; o; o = o->next)
		n++;
	return n;
}

/* Only what is below the limit is taken; a limit the ring cannot mean bounds nothing more. */
static void test_sq_limit(void **state)
{
	struct ucmd_ring ring;
	uint32_t limit = 0;
	struct io_ring_bounds b = { .sq_limit = &limit };
	uint64_t ud = 0;

	(void)state;
	ring_setup(ucmd_engine_default(), &ring, 4, 0);
	io_ring_set_bounds(&ring, &b);
	queue_nops(&ring, 4, &ud);
	limit = 2;
	assert_int_equal(ucmd_submit(&ring), 2);
	assert_int_equal(*ring.sq.khead, 2);
	assert_int_equal(ucmd_cq_ready(&ring), 2);
	limit = 4;
	assert_int_equal(ucmd_enter(&ring, 4, 0, 0), 2);
	assert_int_equal(*ring.sq.khead, 4);
	ucmd_cq_advance(&ring, 4);

	queue_nops(&ring, 1, &ud);
	assert_int_equal(ucmd_submit(&ring), 0);	/* the limit says 4: not yet submitted */
	assert_int_equal(*ring.sq.khead, 4);
	/*
	 * More than a ring ahead of the head, or behind it: the submitter's
	 * garbage bounds nothing but its own SQEs, what it published.
	 */
	limit = 4 + 1000000;
	assert_int_equal(ucmd_enter(&ring, 1, 0, 0), 1);
	queue_nops(&ring, 2, &ud);
	limit = 3;
	assert_int_equal(ucmd_submit(&ring), 2);
	assert_int_equal(*ring.sq.khead, 7);
	assert_int_equal(ucmd_cq_ready(&ring), 3);
	ucmd_queue_exit(&ring);
}

/* Requests alive never exceed max_reqs; the SQEs beyond wait, and the submitter is told. */
static void test_max_reqs(void **state)
{
	struct ucmd_ring ring;
	uint32_t blocked = 7;
	struct io_ring_bounds b = { .max_reqs = 2, .sq_blocked = &blocked };
	struct __kernel_timespec ts = { .tv_nsec = 20 * 1000 * 1000 };
	struct cqe_copy c[4];

	(void)state;
	ring_setup(ucmd_engine_default(), &ring, 4, 0);
	io_ring_set_bounds(&ring, &b);
	assert_int_equal(blocked, 0);
	for (uint64_t i = 0; i < 4; i++) {
		struct io_uring_sqe *sqe = ucmd_get_sqe(&ring);

		ucmd_prep_timeout(sqe, &ts, 0, 0);
		sqe->user_data = i;
	}
	assert_int_equal(ucmd_submit(&ring), 2);
	assert_int_equal(*ring.sq.khead, 2);
	assert_int_equal(ring_to_ctx(&ring)->nr_reqs, 2);
	assert_int_equal(blocked, 1);
	/* still full: nothing more */
	assert_int_equal(ucmd_enter(&ring, 2, 0, 0), 0);
	reap(&ring, c, 2);
	assert_int_equal(c[0].res, -ETIME);
	assert_int_equal(c[1].res, -ETIME);
	assert_int_equal(ucmd_enter(&ring, 2, 0, 0), 2);
	assert_int_equal(blocked, 0);
	reap(&ring, c + 2, 2);
	assert_int_equal(c[2].user_data, 2);
	assert_int_equal(c[3].user_data, 3);
	assert_int_equal(ring_to_ctx(&ring)->nr_reqs, 0);
	ucmd_queue_exit(&ring);
}

/*
 * A program that never reaps: once CQEs overflow, no SQE is taken until it
 * does, so the list holds at most max_reqs; nothing is lost, order kept.
 */
static void test_overflow_bounded(void **state)
{
	struct ucmd_ring ring;
	uint32_t blocked = 0;
	struct io_ring_bounds b = { .max_reqs = 4, .sq_blocked = &blocked };
	struct cqe_copy c[64];
	uint64_t ud = 0;
	unsigned posted;

	(void)state;
	/* SQ 2, CQ 4 */
	ring_setup(ucmd_engine_default(), &ring, 2, 0);
	io_ring_set_bounds(&ring, &b);
	for (int round = 0; round < 20; round++) {
		if (ucmd_sq_space_left(&ring) >= 2)
			queue_nops(&ring, 2, &ud);
		(void)ucmd_submit(&ring);
		assert_true(overflowed(&ring) <= 4);
	}
	/* 4 in the CQ, 2 overflowed, 2 waiting in the SQ */
	assert_int_equal(ucmd_cq_ready(&ring), 4);
	assert_int_equal(overflowed(&ring), 2);
	assert_int_equal(ud, 8);
	assert_int_equal(*ring.sq.ktail - *ring.sq.khead, 2);
	assert_true(*ring.sq.kflags & IORING_SQ_CQ_OVERFLOW);
	assert_int_equal(blocked, 1);
	assert_int_equal(*ring.cq.koverflow, 0);
	reap(&ring, c, 6);
	/* room again: what waited goes in */
	assert_int_equal(ucmd_submit(&ring), 2);
	assert_int_equal(blocked, 0);
	reap(&ring, c + 6, 2);
	posted = 8;
	for (unsigned i = 0; i < posted; i++) {
		assert_int_equal(c[i].user_data, i);
		assert_int_equal(c[i].res, 0);
	}
	assert_false(*ring.sq.kflags & IORING_SQ_CQ_OVERFLOW);
	ucmd_queue_exit(&ring);
}

/* A ring without bounds keeps Linux's behaviour: everything taken, the list grows. */
static void test_unbounded_unchanged(void **state)
{
	struct ucmd_ring ring;
	struct cqe_copy c[40];
	uint64_t ud = 0;

	(void)state;
	ring_setup(ucmd_engine_default(), &ring, 2, 0);
	for (int round = 0; round < 20; round++) {
		queue_nops(&ring, 2, &ud);
		assert_int_equal(ucmd_submit(&ring), 2);
	}
	assert_int_equal(overflowed(&ring), 36);
	reap(&ring, c, 40);
	assert_int_equal(c[39].user_data, 39);
	ucmd_queue_exit(&ring);
}

/*
 * A ring laid out to be shared (ucmdd's): the caller's page after the SQEs,
 * the SQEs where asked; no polling thread of the engine's own.
 */
static void test_shared_layout(void **state)
{
	struct ucmd_ring ring;
	struct io_uring_params p = { 0 };
	struct cqe_copy c;

	(void)state;
	p.flags = IORING_SETUP_SQPOLL;
	assert_int_equal(io_queue_init_shared(ucmd_engine_default(), 4, &ring, &p, 4096, 0),
			 -EINVAL);
	p.flags = IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN;
	assert_int_equal(io_queue_init_shared(ucmd_engine_default(), 4, &ring, &p, 4096, 0),
			 -EINVAL);
	memset(&p, 0, sizeof(p));
	assert_int_equal(io_queue_init_shared(ucmd_engine_default(), 4, &ring, &p, 4096,
					      IORING_OFF_SQES), 0);
	struct io_rings *r = &ring_to_ctx(&ring)->rings;

	assert_int_equal(p.sq_off.resv2, IORING_OFF_SQES);
	assert_true(r->tail_off >= (size_t)p.cq_off.cqes);
	assert_true(r->tail_off + 4096 <= IORING_OFF_SQES);
	/* the caller's page is there and its own */
	memset((char *)r->mem + r->tail_off, 0x5a, 4096);
	ucmd_prep_nop(ucmd_get_sqe(&ring));
	assert_int_equal(submit_one(&ring, &c), 0);
	ucmd_queue_exit(&ring);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sq_limit),
		cmocka_unit_test(test_max_reqs),
		cmocka_unit_test(test_overflow_bounded),
		cmocka_unit_test(test_unbounded_unchanged),
		cmocka_unit_test(test_shared_layout),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
