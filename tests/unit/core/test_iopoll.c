/* SPDX-License-Identifier: MIT */
/* IORING_SETUP_IOPOLL rings: which requests they take, and reaping by polling. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "core/file.h"
#include "testdev.h"

struct fx {
	struct ucmd_engine *e;
	struct ucmd_ring ring;
	int null_fd, td_fd, nopoll_fd;
};

static int fx_setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	f->e = ucmd_engine_new();
	assert_non_null(f->e);
	td_register(f->e);
	f->null_fd = ucmd_open(f->e, "null", O_RDWR);
	f->td_fd = ucmd_open(f->e, "tdev", O_RDWR);
	f->nopoll_fd = ucmd_open(f->e, "tdev_nopoll", O_RDWR);
	assert_true(f->null_fd >= 0 && f->td_fd >= 0 && f->nopoll_fd >= 0);
	td_ring_init(f->e, &f->ring, 32, IORING_SETUP_IOPOLL);
	*state = f;
	return 0;
}

static int fx_teardown(void **state)
{
	struct fx *f = *state;

	ucmd_queue_exit(&f->ring);
	ucmd_engine_free(f->e);
	free(f);
	return 0;
}

static int32_t one(struct fx *f)
{
	struct td_cqe c;

	assert_int_equal(ucmd_submit(&f->ring), 1);
	assert_int_equal(td_reap_bounded(&f->ring, &c, 1), 1);
	return c.res;
}

static void test_allowed(void **state)
{
	struct fx *f = *state;
	char buf[512];
	struct io_uring_sqe *sqe;

	ucmd_prep_nop(td_sqe(&f->ring));
	assert_int_equal(one(f), 0);
	ucmd_prep_uring_cmd(td_sqe(&f->ring), 0, f->null_fd);
	assert_int_equal(one(f), 0);
	ucmd_prep_read(td_sqe(&f->ring), f->null_fd, buf, sizeof(buf), 0);
	assert_int_equal(one(f), 0);
	ucmd_prep_write(td_sqe(&f->ring), f->null_fd, buf, sizeof(buf), 0);
	assert_int_equal(one(f), (int)sizeof(buf));
	td_prep(&f->ring, f->td_fd, TD_OP_OK, 1, 42);
	assert_int_equal(one(f), 42);
	/* the provider was told it runs on a polled ring */
	struct td_log log[4];
	assert_int_equal(td_log_get(log, 4), 1);
	assert_true(log[0].issue_flags & IO_URING_F_IOPOLL);
	sqe = td_sqe(&f->ring);
	ucmd_prep_nop(sqe);
	sqe->user_data = ~0ull;
	assert_int_equal(one(f), 0);
}

static void test_provider_without_iopoll(void **state)
{
	struct fx *f = *state;

	td_prep(&f->ring, f->nopoll_fd, TD_OP_OK, 1, 0);
	assert_int_equal(one(f), -EOPNOTSUPP);
	/* refused before it reached the provider */
	assert_int_equal(td_nr_issued(), 0);
}

static void test_opcode_without_iopoll(void **state)
{
	struct fx *f = *state;
	struct ucmd_ring plain;

	/* FSYNC is implemented but, as in Linux, not on an IOPOLL ring */
	ucmd_prep_rw(IORING_OP_FSYNC, td_sqe(&f->ring), f->null_fd, NULL, 0, 0);
	assert_int_equal(one(f), -EINVAL);
	ucmd_prep_rw(IORING_OP_POLL_ADD, td_sqe(&f->ring), f->null_fd, NULL, 0, 0);
	assert_int_equal(one(f), -EINVAL);
	/* on an ordinary ring POLL_ADD (not implemented) is only unsupported */
	td_ring_init(f->e, &plain, 4, 0);
	ucmd_prep_rw(IORING_OP_POLL_ADD, td_sqe(&plain), f->null_fd, NULL, 0, 0);
	assert_int_equal(ucmd_submit(&plain), 1);
	struct td_cqe c;
	td_reap(&plain, &c, 1);
	assert_int_equal(c.res, -EOPNOTSUPP);
	ucmd_queue_exit(&plain);
}

static void test_found_by_polling(void **state)
{
	struct fx *f = *state;
	struct td_cqe c[8];

	for (unsigned i = 0; i < 8; i++)
		td_prep(&f->ring, f->td_fd, TD_OP_POLLED, 100 + i, (int64_t)i);
	/* submit without GETEVENTS: nothing polls, so nothing completes */
	f->ring.sq.sqe_head = f->ring.sq.sqe_tail;
	__atomic_store_n(f->ring.sq.ktail, f->ring.sq.sqe_tail, __ATOMIC_RELEASE);
	assert_int_equal(ucmd_enter(&f->ring, 8, 0, 0), 8);
	assert_int_equal(td_nr_issued(), 8);
	assert_int_equal(td_nr_polls(), 0);
	assert_int_equal(ucmd_cq_ready(&f->ring), 0);

	/* waiting polls */
	td_reap(&f->ring, c, 8);
	assert_true(td_nr_polls() >= 1);
	for (unsigned i = 0; i < 8; i++) {
		const struct td_cqe *x = td_find(c, 8, 100 + i);
		assert_non_null(x);
		assert_int_equal(x->res, (int)i);
	}
}

/*
 * ucmd_submit on an IOPOLL ring enters with GETEVENTS, as liburing's
 * io_uring_submit does there: the enter polls once, so what completed by
 * then is in the CQ when the submit returns.
 */
static void test_submit_polls_once(void **state)
{
	struct fx *f = *state;
	struct td_cqe c[4];

	for (unsigned i = 0; i < 4; i++)
		td_prep(&f->ring, f->td_fd, TD_OP_POLLED, 200 + i, (int64_t)i);
	assert_int_equal(ucmd_submit(&f->ring), 4);
	assert_true(td_nr_polls() >= 1);
	assert_int_equal(ucmd_cq_ready(&f->ring), 4);
	td_reap(&f->ring, c, 4);
	for (unsigned i = 0; i < 4; i++) {
		const struct td_cqe *x = td_find(c, 4, 200 + i);
		assert_non_null(x);
		assert_int_equal(x->res, (int)i);
	}
}

/* Requests that went to the worker still complete on a polled ring. */
static void test_async_on_iopoll(void **state)
{
	struct fx *f = *state;
	struct td_cqe c[3];
	struct io_uring_sqe *sqe;

	sqe = td_sqe(&f->ring);
	ucmd_prep_nop(sqe);
	sqe->flags = IOSQE_ASYNC;
	sqe->user_data = 1;
	td_prep(&f->ring, f->td_fd, TD_OP_EAGAIN, 2, 7);	/* -EAGAIN, then the worker */
	td_prep(&f->ring, f->td_fd, TD_OP_POLLED, 3, 9)->flags = IOSQE_ASYNC;
	assert_int_equal(ucmd_submit(&f->ring), 3);
	assert_int_equal(td_reap_bounded(&f->ring, c, 3), 3);
	assert_int_equal(td_find(c, 3, 1)->res, 0);
	assert_int_equal(td_find(c, 3, 2)->res, 7);
	assert_int_equal(td_find(c, 3, 3)->res, 9);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, fx_setup, fx_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_allowed),
		T(test_provider_without_iopoll),
		T(test_opcode_without_iopoll),
		T(test_found_by_polling),
		T(test_submit_polls_once),
		T(test_async_on_iopoll),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
