/* SPDX-License-Identifier: MIT */
/*
 * IORING_OP_LINK_TIMEOUT, Linux's rules: the request it bounds finishing
 * first makes it -ECANCELED; its time passing first cancels that request
 * (-ECANCELED for it, -ETIME for the timeout), or, when it cannot be
 * cancelled (a command the driver holds), the timeout says so (-ENOENT)
 * and the request finishes on its own. What follows it in the chain goes
 * on or is cancelled with the request it bounds.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <fcntl.h>
#include <cmocka.h>

#include "parity.h"
#include "testdev.h"

static unsigned ring_flags[] = { 0, IORING_SETUP_SQPOLL,
				 IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN };

static void test_request_first(void **state)
{
	(void)state;
	for (unsigned i = 0; i < 3; i++) {
		struct ucmd_engine *e = ucmd_engine_new();
		struct ucmd_ring r;
		struct cqe_copy c[3];

		ring_setup(e, &r, 8, ring_flags[i]);
		p_nop(&r, 1, IOSQE_IO_LINK);
		p_link_timeout(&r, &p_long, 2, IOSQE_IO_LINK);
		p_nop(&r, 3, 0);
		assert_true(ucmd_submit(&r) >= 0);
		reap(&r, c, 3);
		assert_int_equal(p_find(c, 3, 1)->res, 0);
		assert_int_equal(p_find(c, 3, 2)->res, -ECANCELED);
		assert_int_equal(p_find(c, 3, 3)->res, 0);	/* the chain went on */
		ucmd_queue_exit(&r);
		ucmd_engine_free(e);
	}
}

static void test_timeout_first_cancels(void **state)
{
	(void)state;
	for (unsigned i = 0; i < 3; i++) {
		struct ucmd_engine *e = ucmd_engine_new();
		struct ucmd_ring r;
		struct cqe_copy c[3];

		ring_setup(e, &r, 8, ring_flags[i]);
		/* a TIMEOUT is something Linux can cancel */
		p_timeout(&r, &p_long, 0, 1, IOSQE_IO_LINK);
		p_link_timeout(&r, &p_short, 2, IOSQE_IO_LINK);
		p_nop(&r, 3, 0);
		assert_true(ucmd_submit(&r) >= 0);
		reap(&r, c, 3);
		assert_int_equal(p_find(c, 3, 1)->res, -ECANCELED);
		assert_int_equal(p_find(c, 3, 2)->res, -ETIME);
		assert_int_equal(p_find(c, 3, 3)->res, -ECANCELED);
		ucmd_queue_exit(&r);
		ucmd_engine_free(e);
	}
}

static void test_driver_holds_it(void **state)
{
	struct ucmd_engine *e = ucmd_engine_new();
	struct ucmd_ring r;
	struct cqe_copy c[2];
	int fd;

	(void)state;
	td_register(e);
	fd = ucmd_open(e, "tdev", O_RDWR);
	assert_true(fd >= 0);
	ring_setup(e, &r, 8, 0);
	td_prep(&r, fd, TD_OP_QUEUE, 1, 42)->flags = IOSQE_IO_LINK;
	p_link_timeout(&r, &p_short, 2, 0);
	assert_int_equal(ucmd_submit(&r), 2);
	reap(&r, c, 1);
	/* io_try_cancel cannot reach a command the driver holds */
	assert_int_equal(c[0].user_data, 2);
	assert_int_equal(c[0].res, -ENOENT);
	td_complete_queued();
	reap(&r, c, 1);
	assert_int_equal(c[0].user_data, 1);
	assert_int_equal(c[0].res, 42);
	ucmd_queue_exit(&r);
	ucmd_close(e, fd);
	ucmd_engine_free(e);
}

static void test_prep_checks(void **state)
{
	struct ucmd_engine *e = ucmd_engine_new();
	struct ucmd_ring r;
	struct cqe_copy c[3];

	(void)state;
	ring_setup(e, &r, 8, 0);
	/* nothing before it to bound */
	p_link_timeout(&r, &p_short, 1, 0);
	assert_int_equal(submit_one(&r, c), -EINVAL);
	/* two in a row */
	p_nop(&r, 2, IOSQE_IO_LINK);
	p_link_timeout(&r, &p_long, 3, IOSQE_IO_LINK);
	p_link_timeout(&r, &p_long, 4, 0);
	assert_true(ucmd_submit(&r) >= 1);
	reap(&r, c, 3);
	assert_int_equal(p_find(c, 3, 4)->res, -EINVAL);
	assert_int_equal(p_find(c, 3, 2)->res, -ECANCELED);
	ucmd_queue_exit(&r);
	ucmd_engine_free(e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_request_first),
		cmocka_unit_test(test_timeout_first_cancels),
		cmocka_unit_test(test_driver_holds_it),
		cmocka_unit_test(test_prep_checks),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
