/* SPDX-License-Identifier: MIT */
/*
 * The timed waits (liburing's returns: 0 or the submitted count with a CQE,
 * -ETIME when nothing came), wait_cqes for several, peek_batch_cqe and
 * cq_has_overflow. Nothing about how long a wait took is asserted.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <fcntl.h>
#include <cmocka.h>

#include "parity.h"
#include "testdev.h"

static struct __kernel_timespec ts_short = { .tv_sec = 0, .tv_nsec = 5 * 1000 * 1000 };
static struct __kernel_timespec ts_long = { .tv_sec = 60, .tv_nsec = 0 };

static unsigned ring_flags[] = { 0, IORING_SETUP_SQPOLL,
				 IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN };

static void test_wait_cqe_timeout(void **state)
{
	(void)state;
	for (unsigned i = 0; i < 3; i++) {
		struct ucmd_engine *e = ucmd_engine_new();
		struct ucmd_ring r;
		struct io_uring_cqe *cqe = (struct io_uring_cqe *)1;

		ring_setup(e, &r, 8, ring_flags[i]);
		assert_int_equal(ucmd_wait_cqe_timeout(&r, &cqe, &ts_short), -ETIME);
		assert_null(cqe);
		p_nop(&r, 1, 0);
		assert_int_equal(ucmd_submit(&r), 1);
		assert_int_equal(ucmd_wait_cqe_timeout(&r, &cqe, &ts_long), 0);
		assert_non_null(cqe);
		assert_int_equal(cqe->user_data, 1);
		ucmd_cqe_seen(&r, cqe);
		/* bad timespec */
		struct __kernel_timespec bad = { .tv_sec = 0, .tv_nsec = 2000000000 };
		if (!(ring_flags[i] & IORING_SETUP_SQPOLL))
			assert_int_equal(ucmd_wait_cqe_timeout(&r, &cqe, &bad), -EINVAL);
		ucmd_queue_exit(&r);
		ucmd_engine_free(e);
	}
}

static void test_submit_and_wait_timeout(void **state)
{
	(void)state;
	for (unsigned i = 0; i < 3; i++) {
		struct ucmd_engine *e = ucmd_engine_new();
		struct ucmd_ring r;
		struct io_uring_cqe *cqe = NULL;

		ring_setup(e, &r, 8, ring_flags[i]);
		p_nop(&r, 1, 0);
		p_nop(&r, 2, 0);
		assert_int_equal(ucmd_submit_and_wait_timeout(&r, &cqe, 2, &ts_long, NULL), 2);
		assert_non_null(cqe);
		assert_int_equal(ucmd_cq_ready(&r), 2);
		ucmd_cq_advance(&r, 2);
		/* nothing to submit, nothing comes */
		assert_int_equal(ucmd_submit_and_wait_timeout(&r, &cqe, 1, &ts_short, NULL), -ETIME);
		ucmd_queue_exit(&r);
		ucmd_engine_free(e);
	}
}

/* A completion from another thread ends a timed wait for it. */
static void test_remote_completion(void **state)
{
	struct ucmd_engine *e = ucmd_engine_new();
	struct ucmd_ring r;
	struct io_uring_cqe *cqe;
	sigset_t mask;
	int fd;

	(void)state;
	td_register(e);
	fd = ucmd_open(e, "tdev", O_RDWR);
	ring_setup(e, &r, 8, 0);
	td_prep(&r, fd, TD_OP_QUEUE, 1, 3);
	td_prep(&r, fd, TD_OP_QUEUE, 2, 4);
	assert_int_equal(ucmd_submit(&r), 2);
	td_complete_queued();
	sigemptyset(&mask);
	assert_int_equal(ucmd_wait_cqes(&r, &cqe, 2, &ts_long, &mask), 0);
	assert_non_null(cqe);
	assert_int_equal(ucmd_cq_ready(&r), 2);
	ucmd_cq_advance(&r, 2);
	ucmd_queue_exit(&r);
	ucmd_close(e, fd);
	ucmd_engine_free(e);
}

static void test_peek_batch_and_overflow(void **state)
{
	struct ucmd_engine *e = ucmd_engine_new();
	struct ucmd_ring r;
	struct io_uring_params p;
	struct io_uring_cqe *cqes[8];

	(void)state;
	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_CQSIZE;
	p.cq_entries = 4;
	assert_int_equal(ucmd_queue_init_engine(e, 4, &r, &p), 0);
	assert_int_equal(ucmd_peek_batch_cqe(&r, cqes, 8), 0);
	for (int i = 0; i < 3; i++)
		p_nop(&r, 10 + i, 0);
	assert_int_equal(ucmd_submit(&r), 3);
	assert_int_equal(ucmd_peek_batch_cqe(&r, cqes, 2), 2);
	assert_int_equal(cqes[0]->user_data, 10);
	assert_int_equal(cqes[1]->user_data, 11);
	assert_int_equal(ucmd_peek_batch_cqe(&r, cqes, 8), 3);
	assert_int_equal(cqes[2]->user_data, 12);
	assert_false(ucmd_cq_has_overflow(&r));
	/* 3 more than the CQ holds: they wait in the overflow list */
	for (int i = 0; i < 4; i++)
		p_nop(&r, 20 + i, 0);
	assert_int_equal(ucmd_submit(&r), 4);
	assert_true(ucmd_cq_has_overflow(&r));
	ucmd_cq_advance(&r, 4);
	assert_int_equal(ucmd_peek_batch_cqe(&r, cqes, 8), 3);
	assert_false(ucmd_cq_has_overflow(&r));
	ucmd_cq_advance(&r, 3);
	ucmd_queue_exit(&r);
	ucmd_engine_free(e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_wait_cqe_timeout),
		cmocka_unit_test(test_submit_and_wait_timeout),
		cmocka_unit_test(test_remote_completion),
		cmocka_unit_test(test_peek_batch_and_overflow),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
