/* SPDX-License-Identifier: MIT */
/*
 * IORING_OP_ASYNC_CANCEL: a TIMEOUT is cancelled (-ECANCELED, the cancel 0),
 * nothing found is -ENOENT, a command the driver holds is not found either
 * (as in Linux), _ALL counts, bad flags and descriptors are refused.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <fcntl.h>
#include <cmocka.h>

#include "parity.h"
#include "testdev.h"

static void test_cancel_timeout(void **state)
{
	unsigned flags[] = { 0, IORING_SETUP_SQPOLL };

	(void)state;
	for (unsigned i = 0; i < 2; i++) {
		struct ucmd_engine *e = ucmd_engine_new();
		struct ucmd_ring r;
		struct cqe_copy c[2];

		ring_setup(e, &r, 8, flags[i]);
		p_timeout(&r, &p_long, 0, 1, 0);
		p_cancel(&r, 1, 0, 2);
		assert_int_equal(ucmd_submit(&r), 2);
		reap(&r, c, 2);
		assert_int_equal(p_find(c, 2, 1)->res, -ECANCELED);
		assert_int_equal(p_find(c, 2, 2)->res, 0);
		ucmd_queue_exit(&r);
		ucmd_engine_free(e);
	}
}

static void test_not_found(void **state)
{
	struct ucmd_engine *e = ucmd_engine_new();
	struct ucmd_ring r;
	struct cqe_copy c;

	(void)state;
	ring_setup(e, &r, 8, 0);
	p_cancel(&r, 12345, 0, 1);
	assert_int_equal(submit_one(&r, &c), -ENOENT);
	/* _ALL with nothing to cancel: a count of 0 */
	p_cancel(&r, 12345, IORING_ASYNC_CANCEL_ALL, 2);
	assert_int_equal(submit_one(&r, &c), 0);
	ucmd_queue_exit(&r);
	ucmd_engine_free(e);
}

static void test_all_counts(void **state)
{
	struct ucmd_engine *e = ucmd_engine_new();
	struct ucmd_ring r;
	struct cqe_copy c[4];

	(void)state;
	ring_setup(e, &r, 8, 0);
	p_timeout(&r, &p_long, 0, 7, 0);
	p_timeout(&r, &p_long, 0, 7, 0);
	p_timeout(&r, &p_long, 0, 8, 0);
	p_cancel(&r, 7, IORING_ASYNC_CANCEL_ALL, 9);
	assert_int_equal(ucmd_submit(&r), 4);
	reap(&r, c, 3);
	assert_int_equal(p_find(c, 3, 9)->res, 2);
	/* ANY takes the rest */
	p_cancel(&r, 0, IORING_ASYNC_CANCEL_ANY, 10);
	assert_int_equal(ucmd_submit(&r), 1);
	reap(&r, c, 2);
	assert_int_equal(p_find(c, 2, 8)->res, -ECANCELED);
	assert_int_equal(p_find(c, 2, 10)->res, 1);
	ucmd_queue_exit(&r);
	ucmd_engine_free(e);
}

static void test_driver_holds_it(void **state)
{
	struct ucmd_engine *e = ucmd_engine_new();
	struct ucmd_ring r;
	struct cqe_copy c;
	int fd;

	(void)state;
	td_register(e);
	fd = ucmd_open(e, "tdev", O_RDWR);
	ring_setup(e, &r, 8, 0);
	td_prep(&r, fd, TD_OP_QUEUE, 1, 5);
	assert_int_equal(ucmd_submit(&r), 1);
	p_cancel(&r, 1, 0, 2);
	assert_int_equal(submit_one(&r, &c), -ENOENT);
	/* by file: nothing on a list either */
	struct io_uring_sqe *sqe = ucmd_get_sqe(&r);
	ucmd_prep_cancel_fd(sqe, fd, 0);
	sqe->user_data = 3;
	assert_int_equal(submit_one(&r, &c), -ENOENT);
	td_complete_queued();
	reap(&r, &c, 1);
	assert_int_equal(c.user_data, 1);
	assert_int_equal(c.res, 5);
	ucmd_queue_exit(&r);
	ucmd_close(e, fd);
	ucmd_engine_free(e);
}

static void test_bad_input(void **state)
{
	struct ucmd_engine *e = ucmd_engine_new();
	struct ucmd_ring r;
	struct cqe_copy c;
	struct io_uring_sqe *sqe;

	(void)state;
	ring_setup(e, &r, 8, 0);
	p_cancel(&r, 1, 1 << 9, 1);
	assert_int_equal(submit_one(&r, &c), -EINVAL);
	p_cancel(&r, 1, IORING_ASYNC_CANCEL_FD | IORING_ASYNC_CANCEL_ANY, 1);
	assert_int_equal(submit_one(&r, &c), -EINVAL);
	sqe = p_cancel(&r, 1, 0, 1);
	sqe->off = 1;
	assert_int_equal(submit_one(&r, &c), -EINVAL);
	sqe = ucmd_get_sqe(&r);
	ucmd_prep_cancel_fd(sqe, 999, 0);
	assert_int_equal(submit_one(&r, &c), -EBADF);
	sqe = ucmd_get_sqe(&r);
	ucmd_prep_cancel_fd(sqe, 0, IORING_ASYNC_CANCEL_FD_FIXED);
	assert_int_equal(submit_one(&r, &c), -EBADF);	/* no table */
	ucmd_queue_exit(&r);
	ucmd_engine_free(e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cancel_timeout),
		cmocka_unit_test(test_not_found),
		cmocka_unit_test(test_all_counts),
		cmocka_unit_test(test_driver_holds_it),
		cmocka_unit_test(test_bad_input),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
