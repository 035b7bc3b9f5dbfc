/* SPDX-License-Identifier: MIT */
/*
 * IORING_OP_TIMEOUT: -ETIME when the time passes, 0 when the count of other
 * CQEs is reached first, Linux's prep checks, timeout CQEs not counted as
 * events, ETIME_SUCCESS keeping a chain going, cancellation at ring exit;
 * on plain, SQPOLL and DEFER_TASKRUN rings. No assertion about durations:
 * the count tests use a time far longer than the test needs.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "ringutil.h"

static const struct __kernel_timespec short_ts = { .tv_sec = 0, .tv_nsec = 10 * 1000 * 1000 };
static const struct __kernel_timespec long_ts = { .tv_sec = 60, .tv_nsec = 0 };

static unsigned ring_flags[] = { 0, IORING_SETUP_SQPOLL,
				 IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN };

static struct ucmd_engine *engine(void)
{
	struct ucmd_engine *e = ucmd_engine_new();

	assert_non_null(e);
	return e;
}

static void prep_timeout(struct ucmd_ring *r, const struct __kernel_timespec *ts, unsigned count,
			 unsigned flags, uint64_t ud)
{
	struct io_uring_sqe *sqe = ucmd_get_sqe(r);

	ucmd_prep_timeout(sqe, ts, count, flags);
	sqe->user_data = ud;
}

static void prep_nop(struct ucmd_ring *r, uint64_t ud, unsigned sqe_flags)
{
	struct io_uring_sqe *sqe = ucmd_get_sqe(r);

	ucmd_prep_nop(sqe);
	sqe->user_data = ud;
	sqe->flags = (uint8_t)sqe_flags;
}

static const struct cqe_copy *find(const struct cqe_copy *c, unsigned n, uint64_t ud)
{
	for (unsigned i = 0; i < n; i++)
		if (c[i].user_data == ud)
			return &c[i];
	fail_msg("no CQE for %llu", (unsigned long long)ud);
	return NULL;
}

static void test_expires(void **state)
{
	(void)state;
	for (unsigned i = 0; i < 3; i++) {
		struct ucmd_engine *e = engine();
		struct ucmd_ring r;
		struct cqe_copy c;

		ring_setup(e, &r, 8, ring_flags[i]);
		prep_timeout(&r, &short_ts, 0, 0, 7);
		assert_int_equal(submit_one(&r, &c), -ETIME);
		assert_int_equal(c.user_data, 7);
		ucmd_queue_exit(&r);
		ucmd_engine_free(e);
	}
}

static void test_count_reached(void **state)
{
	(void)state;
	for (unsigned i = 0; i < 3; i++) {
		struct ucmd_engine *e = engine();
		struct ucmd_ring r;
		struct cqe_copy c[3];

		ring_setup(e, &r, 8, ring_flags[i]);
		prep_timeout(&r, &long_ts, 2, 0, 1);
		prep_nop(&r, 2, 0);
		prep_nop(&r, 3, 0);
		assert_true(ucmd_submit(&r) >= 0);
		reap(&r, c, 3);
		/* the two NOPs reached the count: 0, not -ETIME */
		assert_int_equal(find(c, 3, 1)->res, 0);
		assert_int_equal(find(c, 3, 2)->res, 0);
		ucmd_queue_exit(&r);
		ucmd_engine_free(e);
	}
}

static void test_timeout_cqes_not_counted(void **state)
{
	struct ucmd_engine *e = engine();
	struct ucmd_ring r;
	struct cqe_copy c[3];

	(void)state;
	ring_setup(e, &r, 8, 0);
	prep_timeout(&r, &long_ts, 1, 0, 1);	/* waits for one CQE */
	prep_timeout(&r, &short_ts, 0, 0, 2);	/* whose own CQE does not count */
	assert_int_equal(ucmd_submit(&r), 2);
	reap(&r, c, 1);
	assert_int_equal(c[0].user_data, 2);
	assert_int_equal(c[0].res, -ETIME);
	assert_int_equal(ucmd_cq_ready(&r), 0);
	prep_nop(&r, 3, 0);
	assert_int_equal(ucmd_submit(&r), 1);
	reap(&r, c, 2);
	assert_int_equal(find(c, 2, 1)->res, 0);
	assert_int_equal(find(c, 2, 3)->res, 0);
	ucmd_queue_exit(&r);
	ucmd_engine_free(e);
}

static void test_absolute_past(void **state)
{
	struct ucmd_engine *e = engine();
	struct ucmd_ring r;
	struct cqe_copy c;
	struct __kernel_timespec ts = { .tv_sec = 1, .tv_nsec = 0 };	/* long ago */

	(void)state;
	ring_setup(e, &r, 8, 0);
	prep_timeout(&r, &ts, 0, IORING_TIMEOUT_ABS, 1);
	assert_int_equal(submit_one(&r, &c), -ETIME);
	prep_timeout(&r, &ts, 0, IORING_TIMEOUT_ABS | IORING_TIMEOUT_REALTIME, 2);
	assert_int_equal(submit_one(&r, &c), -ETIME);
	ucmd_queue_exit(&r);
	ucmd_engine_free(e);
}

static void test_prep_checks(void **state)
{
	struct ucmd_engine *e = engine();
	struct ucmd_ring r;
	struct cqe_copy c;
	struct __kernel_timespec neg = { .tv_sec = -1, .tv_nsec = 0 };
	struct io_uring_sqe *sqe;

	(void)state;
	ring_setup(e, &r, 8, 0);
	prep_timeout(&r, &short_ts, 0, 1u << 7, 1);		/* unknown flag */
	assert_int_equal(submit_one(&r, &c), -EINVAL);
	prep_timeout(&r, &short_ts, 0, IORING_TIMEOUT_BOOTTIME | IORING_TIMEOUT_REALTIME, 1);
	assert_int_equal(submit_one(&r, &c), -EINVAL);	/* two clocks */
	prep_timeout(&r, &neg, 0, 0, 1);
	assert_int_equal(submit_one(&r, &c), -EINVAL);
	sqe = ucmd_get_sqe(&r);
	ucmd_prep_timeout(sqe, &short_ts, 0, 0);
	sqe->len = 2;					/* one timespec only */
	assert_int_equal(submit_one(&r, &c), -EINVAL);
	sqe = ucmd_get_sqe(&r);
	ucmd_prep_timeout(sqe, NULL, 0, 0);
	sqe->addr = 8;					/* not readable */
	assert_int_equal(submit_one(&r, &c), -EFAULT);
	ucmd_queue_exit(&r);
	ucmd_engine_free(e);
}

static void test_etime_success_keeps_link(void **state)
{
	struct ucmd_engine *e = engine();
	struct ucmd_ring r;
	struct cqe_copy c[2];

	(void)state;
	ring_setup(e, &r, 8, 0);
	prep_timeout(&r, &short_ts, 0, IORING_TIMEOUT_ETIME_SUCCESS, 1);
	r.sq.sqes[0].flags = IOSQE_IO_LINK;
	prep_nop(&r, 2, 0);
	assert_int_equal(ucmd_submit(&r), 2);
	reap(&r, c, 2);
	assert_int_equal(find(c, 2, 1)->res, -ETIME);
	assert_int_equal(find(c, 2, 2)->res, 0);	/* not -ECANCELED */
	/* without the flag, -ETIME is a failure and the link is cancelled */
	prep_timeout(&r, &short_ts, 0, 0, 3);
	r.sq.sqes[2].flags = IOSQE_IO_LINK;
	prep_nop(&r, 4, 0);
	assert_int_equal(ucmd_submit(&r), 2);
	reap(&r, c, 2);
	assert_int_equal(find(c, 2, 3)->res, -ETIME);
	assert_int_equal(find(c, 2, 4)->res, -ECANCELED);
	ucmd_queue_exit(&r);
	ucmd_engine_free(e);
}

/* A pending timeout does not keep the ring from closing: it is cancelled. */
static void test_exit_with_pending(void **state)
{
	(void)state;
	for (unsigned i = 0; i < 3; i++) {
		struct ucmd_engine *e = engine();
		struct ucmd_ring r;

		ring_setup(e, &r, 8, ring_flags[i]);
		prep_timeout(&r, &long_ts, 0, 0, 1);
		prep_timeout(&r, &long_ts, 5, 0, 2);
		assert_int_equal(ucmd_submit(&r), 2);
		ucmd_queue_exit(&r);
		ucmd_engine_free(e);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_expires),
		cmocka_unit_test(test_count_reached),
		cmocka_unit_test(test_timeout_cqes_not_counted),
		cmocka_unit_test(test_absolute_past),
		cmocka_unit_test(test_prep_checks),
		cmocka_unit_test(test_etime_success_keeps_link),
		cmocka_unit_test(test_exit_with_pending),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
