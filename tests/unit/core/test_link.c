/* SPDX-License-Identifier: MIT */
/*
 * IOSQE_IO_LINK / IO_HARDLINK chains, IOSQE_IO_DRAIN, IOSQE_CQE_SKIP_SUCCESS
 * and user_data, with Linux's semantics.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "testdev.h"

struct fx {
	struct ucmd_engine *e;
	struct ucmd_ring ring;
	int fd;
};

static int fx_setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	f->e = ucmd_engine_new();
	assert_non_null(f->e);
	td_register(f->e);
	f->fd = ucmd_open(f->e, "tdev", O_RDWR);
	assert_true(f->fd >= 0);
	td_ring_init(f->e, &f->ring, 64, 0);
	*state = f;
	return 0;
}

static int fx_teardown(void **state)
{
	struct fx *f = *state;

	/* a failed test may leave commands with the device: let them finish */
	td_complete_queued();
	ucmd_queue_exit(&f->ring);
	ucmd_engine_free(f->e);
	free(f);
	return 0;
}

static void assert_log(const uint64_t *ids, unsigned n)
{
	struct td_log log[64];
	unsigned got = td_log_get(log, 64);

	assert_int_equal(got, n);
	for (unsigned i = 0; i < n; i++)
		assert_int_equal(log[i].id, ids[i]);
}

static void test_chain_runs_in_order(void **state)
{
	struct fx *f = *state;
	struct td_cqe c[4];

	/* A is held by the device: nothing behind it may start before it ends */
	td_prep(&f->ring, f->fd, TD_OP_QUEUE, 1, 11)->flags = IOSQE_IO_LINK;
	td_prep(&f->ring, f->fd, TD_OP_OK, 2, 22)->flags = IOSQE_IO_LINK;
	td_prep(&f->ring, f->fd, TD_OP_QUEUE, 3, 33)->flags = IOSQE_IO_LINK;
	td_prep(&f->ring, f->fd, TD_OP_OK, 4, 44);
	assert_int_equal(ucmd_submit(&f->ring), 4);
	assert_log((uint64_t[]){ 1 }, 1);
	assert_int_equal(td_reap_ready(&f->ring, c, 4), 0);

	td_complete_queued();
	td_reap(&f->ring, c, 2);
	assert_int_equal(c[0].user_data, 1);
	assert_int_equal(c[0].res, 11);
	assert_int_equal(c[1].user_data, 2);
	assert_int_equal(c[1].res, 22);
	assert_log((uint64_t[]){ 1, 2, 3 }, 3);
	assert_int_equal(td_reap_ready(&f->ring, c, 4), 0);

	td_complete_queued();
	td_reap(&f->ring, c, 2);
	assert_int_equal(c[0].user_data, 3);
	assert_int_equal(c[0].res, 33);
	assert_int_equal(c[1].user_data, 4);
	assert_int_equal(c[1].res, 44);
	assert_log((uint64_t[]){ 1, 2, 3, 4 }, 4);
}

/*
 * Inline completions of one submission are posted together at its end, in
 * completion order; a link head completes at once so that its next member
 * starts, from task work, after the submission: A B D C, as in Linux
 * (compl_reqs flushed at the end of io_submit_sqes, the link by task work).
 */
static void test_batched_completion_order(void **state)
{
	struct fx *f = *state;
	struct td_cqe c[4];
	static const uint64_t order[] = { 1, 2, 4, 3 };

	td_prep(&f->ring, f->fd, TD_OP_OK, 1, 11);
	td_prep(&f->ring, f->fd, TD_OP_OK, 2, 22)->flags = IOSQE_IO_LINK;
	td_prep(&f->ring, f->fd, TD_OP_OK, 3, 33);
	td_prep(&f->ring, f->fd, TD_OP_OK, 4, 44);
	assert_int_equal(ucmd_submit(&f->ring), 4);
	td_reap(&f->ring, c, 4);
	for (unsigned i = 0; i < 4; i++) {
		assert_int_equal(c[i].user_data, order[i]);
		assert_int_equal(c[i].res, (int)order[i] * 11);
	}
	assert_log(order, 4);
}

static void test_failure_cancels_rest(void **state)
{
	struct fx *f = *state;
	struct td_cqe c[4];

	td_prep(&f->ring, f->fd, TD_OP_OK, 1, 5)->flags = IOSQE_IO_LINK;
	td_prep(&f->ring, f->fd, TD_OP_FAIL, 2, 0)->flags = IOSQE_IO_LINK;
	td_prep(&f->ring, f->fd, TD_OP_OK, 3, 0)->flags = IOSQE_IO_LINK;
	td_prep(&f->ring, f->fd, TD_OP_OK, 4, 0);
	assert_int_equal(ucmd_submit(&f->ring), 4);
	td_reap(&f->ring, c, 4);
	for (unsigned i = 0; i < 4; i++)
		assert_int_equal(c[i].user_data, i + 1);
	assert_int_equal(c[0].res, 5);
	assert_int_equal(c[1].res, -EIO);
	assert_int_equal(c[2].res, -ECANCELED);
	assert_int_equal(c[3].res, -ECANCELED);
	assert_log((uint64_t[]){ 1, 2 }, 2);
}

static void test_async_failure_cancels_rest(void **state)
{
	struct fx *f = *state;
	struct td_cqe c[3];

	/* the failure arrives later, from another thread */
	td_prep(&f->ring, f->fd, TD_OP_QUEUE, 1, -EIO)->flags = IOSQE_IO_LINK;
	td_prep(&f->ring, f->fd, TD_OP_OK, 2, 0)->flags = IOSQE_IO_LINK;
	td_prep(&f->ring, f->fd, TD_OP_OK, 3, 0);
	assert_int_equal(ucmd_submit(&f->ring), 3);
	td_complete_queued();
	td_reap(&f->ring, c, 3);
	assert_int_equal(c[0].res, -EIO);
	assert_int_equal(c[1].res, -ECANCELED);
	assert_int_equal(c[2].res, -ECANCELED);
	assert_log((uint64_t[]){ 1 }, 1);
}

/* The last member of a chain fails prep: submission stops right after it. */
static void test_prep_failure_ends_chain(void **state)
{
	struct fx *f = *state;
	struct td_cqe c[3];

	td_prep(&f->ring, f->fd, TD_OP_OK, 1, 0)->flags = IOSQE_IO_LINK;
	td_prep(&f->ring, f->fd, TD_OP_OK, 2, 0)->__pad1 = 1;
	td_prep(&f->ring, f->fd, TD_OP_OK, 3, 7);
	assert_int_equal(ucmd_submit(&f->ring), 2);
	td_reap(&f->ring, c, 2);
	assert_int_equal(c[0].user_data, 1);
	assert_int_equal(c[0].res, -ECANCELED);
	assert_int_equal(c[1].user_data, 2);
	assert_int_equal(c[1].res, -EINVAL);
	assert_int_equal(td_nr_issued(), 0);

	/* the SQE after the failure is still there, and goes next time */
	assert_int_equal(ucmd_submit(&f->ring), 1);
	td_reap(&f->ring, c, 1);
	assert_int_equal(c[0].user_data, 3);
	assert_int_equal(c[0].res, 7);
}

/*
 * A member in the middle fails prep: Linux keeps assembling the chain (so
 * that it is not broken in two) and fails it whole; the SQE that ends the
 * chain was itself fine, so the submission goes on past it.
 */
static void test_prep_failure_mid_chain(void **state)
{
	struct fx *f = *state;
	struct td_cqe c[5];

	td_prep(&f->ring, f->fd, TD_OP_OK, 1, 0)->flags = IOSQE_IO_LINK;
	struct io_uring_sqe *bad = td_prep(&f->ring, f->fd, TD_OP_OK, 2, 0);
	bad->flags = IOSQE_IO_LINK;
	bad->__pad1 = 1;
	td_prep(&f->ring, f->fd, TD_OP_OK, 3, 0)->flags = IOSQE_IO_LINK;
	td_prep(&f->ring, f->fd, TD_OP_OK, 4, 0);
	td_prep(&f->ring, f->fd, TD_OP_OK, 5, 9);
	assert_int_equal(ucmd_submit(&f->ring), 5);
	td_reap(&f->ring, c, 5);
	for (unsigned i = 0; i < 5; i++)
		assert_int_equal(c[i].user_data, i + 1);
	assert_int_equal(c[0].res, -ECANCELED);
	assert_int_equal(c[1].res, -EINVAL);
	assert_int_equal(c[2].res, -ECANCELED);
	assert_int_equal(c[3].res, -ECANCELED);
	assert_int_equal(c[4].res, 9);
	assert_log((uint64_t[]){ 5 }, 1);
}

/* Even an SQE rejected for its opcode or flags keeps its place in the chain. */
static void test_bad_opcode_mid_chain(void **state)
{
	struct fx *f = *state;
	struct td_cqe c[3];

	td_prep(&f->ring, f->fd, TD_OP_OK, 1, 0)->flags = IOSQE_IO_LINK;
	struct io_uring_sqe *bad = td_sqe(&f->ring);
	ucmd_prep_nop(bad);
	bad->opcode = IORING_OP_LAST;
	bad->flags = IOSQE_IO_LINK;
	bad->user_data = 2;
	td_prep(&f->ring, f->fd, TD_OP_OK, 3, 0);
	assert_int_equal(ucmd_submit(&f->ring), 3);
	td_reap(&f->ring, c, 3);
	assert_int_equal(c[0].res, -ECANCELED);
	assert_int_equal(c[1].user_data, 2);
	assert_int_equal(c[1].res, -EINVAL);
	assert_int_equal(c[2].user_data, 3);
	assert_int_equal(c[2].res, -ECANCELED);
	assert_int_equal(td_nr_issued(), 0);
}

static void test_hardlink_continues(void **state)
{
	struct fx *f = *state;
	struct td_cqe c[4];

	td_prep(&f->ring, f->fd, TD_OP_FAIL, 1, 0)->flags = IOSQE_IO_HARDLINK;
	td_prep(&f->ring, f->fd, TD_OP_QUEUE, 2, -EIO)->flags = IOSQE_IO_HARDLINK;
	td_prep(&f->ring, f->fd, TD_OP_FAIL, 3, 0)->flags = IOSQE_IO_LINK;
	td_prep(&f->ring, f->fd, TD_OP_OK, 4, 0);
	assert_int_equal(ucmd_submit(&f->ring), 4);
	td_reap(&f->ring, c, 1);
	assert_int_equal(c[0].res, -EIO);
	td_complete_queued();
	td_reap(&f->ring, c + 1, 3);
	for (unsigned i = 0; i < 4; i++)
		assert_int_equal(c[i].user_data, i + 1);
	assert_int_equal(c[1].res, -EIO);
	assert_int_equal(c[2].res, -EIO);
	assert_int_equal(c[3].res, -ECANCELED);
	assert_log((uint64_t[]){ 1, 2, 3 }, 3);
}

/* A chain that never started (a prep failure) is failed whole, hard links too. */
static void test_hardlink_prep_failure(void **state)
{
	struct fx *f = *state;
	struct td_cqe c[3];

	td_prep(&f->ring, f->fd, TD_OP_OK, 1, 0)->flags = IOSQE_IO_HARDLINK;
	td_prep(&f->ring, 999, TD_OP_OK, 2, 0)->flags = IOSQE_IO_HARDLINK;	/* no such fd */
	td_prep(&f->ring, f->fd, TD_OP_OK, 3, 0);
	assert_int_equal(ucmd_submit(&f->ring), 3);
	td_reap(&f->ring, c, 3);
	assert_int_equal(c[0].res, -ECANCELED);
	assert_int_equal(c[1].res, -EBADF);
	assert_int_equal(c[2].res, -ECANCELED);
	assert_int_equal(td_nr_issued(), 0);
}

static void test_drain_waits(void **state)
{
	struct fx *f = *state;
	struct td_cqe c[4];

	td_prep(&f->ring, f->fd, TD_OP_QUEUE, 1, 1);
	td_prep(&f->ring, f->fd, TD_OP_QUEUE, 2, 2);
	td_prep(&f->ring, f->fd, TD_OP_OK, 3, 3)->flags = IOSQE_IO_DRAIN;
	assert_int_equal(ucmd_submit(&f->ring), 3);
	/* 1 and 2 are in flight: the drained request is not issued */
	assert_log((uint64_t[]){ 1, 2 }, 2);
	assert_int_equal(td_reap_ready(&f->ring, c, 4), 0);
	assert_log((uint64_t[]){ 1, 2 }, 2);

	td_complete_queued();
	td_reap(&f->ring, c, 3);
	assert_int_equal(c[0].user_data, 1);
	assert_int_equal(c[1].user_data, 2);
	assert_int_equal(c[2].user_data, 3);
	assert_int_equal(c[2].res, 3);
	assert_log((uint64_t[]){ 1, 2, 3 }, 3);

	/* with nothing in flight a drained request goes at once */
	td_prep(&f->ring, f->fd, TD_OP_OK, 4, 4)->flags = IOSQE_IO_DRAIN;
	assert_int_equal(ucmd_submit(&f->ring), 1);
	assert_int_equal(td_nr_issued(), 4);
	td_reap(&f->ring, c, 1);
	assert_int_equal(c[0].res, 4);
}

/* Requests after a drained one do not start before it completes. */
static void test_drain_holds_later(void **state)
{
	struct fx *f = *state;
	struct td_cqe c[4];

	td_prep(&f->ring, f->fd, TD_OP_QUEUE, 1, 1);
	td_prep(&f->ring, f->fd, TD_OP_QUEUE, 2, 2)->flags = IOSQE_IO_DRAIN;
	td_prep(&f->ring, f->fd, TD_OP_OK, 3, 3);
	assert_int_equal(ucmd_submit(&f->ring), 3);
	assert_log((uint64_t[]){ 1 }, 1);

	td_complete_queued();
	td_reap(&f->ring, c, 1);
	assert_int_equal(c[0].user_data, 1);
	assert_int_equal(td_nr_queued(), 1);
	assert_int_equal(td_reap_ready(&f->ring, c, 4), 0);
	assert_log((uint64_t[]){ 1, 2 }, 2);

	/* a later submission waits too */
	td_prep(&f->ring, f->fd, TD_OP_OK, 4, 4);
	assert_int_equal(ucmd_submit(&f->ring), 1);
	assert_int_equal(td_reap_ready(&f->ring, c, 4), 0);
	assert_log((uint64_t[]){ 1, 2 }, 2);

	td_complete_queued();
	td_reap(&f->ring, c, 3);
	assert_int_equal(c[0].user_data, 2);
	assert_int_equal(c[1].user_data, 3);
	assert_int_equal(c[2].user_data, 4);
	assert_log((uint64_t[]){ 1, 2, 3, 4 }, 4);
}

static void test_cqe_skip_success(void **state)
{
	struct fx *f = *state;
	struct td_cqe c[8];
	struct io_uring_sqe *sqe;

	sqe = td_sqe(&f->ring);
	ucmd_prep_nop(sqe);
	sqe->flags = IOSQE_CQE_SKIP_SUCCESS;
	sqe->user_data = 1;
	td_prep(&f->ring, f->fd, TD_OP_OK, 2, 0)->flags = IOSQE_CQE_SKIP_SUCCESS;
	td_prep(&f->ring, f->fd, TD_OP_FAIL, 3, 0)->flags = IOSQE_CQE_SKIP_SUCCESS;
	/* a chain: the success is skipped, the failure and the cancellation are not */
	td_prep(&f->ring, f->fd, TD_OP_OK, 4, 0)->flags = IOSQE_CQE_SKIP_SUCCESS | IOSQE_IO_LINK;
	td_prep(&f->ring, f->fd, TD_OP_FAIL, 5, 0)->flags = IOSQE_CQE_SKIP_SUCCESS | IOSQE_IO_LINK;
	td_prep(&f->ring, f->fd, TD_OP_OK, 6, 0)->flags = IOSQE_CQE_SKIP_SUCCESS;
	sqe = td_sqe(&f->ring);
	ucmd_prep_nop(sqe);
	sqe->user_data = 7;
	assert_int_equal(ucmd_submit(&f->ring), 7);
	/* four CQEs, in no particular order across independent requests */
	td_reap(&f->ring, c, 4);
	assert_null(td_find(c, 4, 1));
	assert_null(td_find(c, 4, 2));
	assert_null(td_find(c, 4, 4));
	assert_non_null(td_find(c, 4, 3));
	assert_int_equal(td_find(c, 4, 3)->res, -EIO);
	assert_non_null(td_find(c, 4, 5));
	assert_int_equal(td_find(c, 4, 5)->res, -EIO);
	assert_non_null(td_find(c, 4, 6));
	assert_int_equal(td_find(c, 4, 6)->res, -ECANCELED);
	assert_non_null(td_find(c, 4, 7));
	assert_int_equal(td_find(c, 4, 7)->res, 0);
	assert_int_equal(td_reap_ready(&f->ring, c, 8), 0);
	assert_log((uint64_t[]){ 2, 3, 4, 5 }, 4);
}

static void test_user_data_round_trip(void **state)
{
	struct fx *f = *state;
	static const uint64_t vals[] = { 0, 1, ~0ull, 1ull << 63, 0x0123456789abcdefull,
					 0xfedcba9876543210ull, 0x00000000ffffffffull,
					 0xffffffff00000000ull };
	const unsigned n = sizeof(vals) / sizeof(vals[0]);
	struct td_cqe c[3 * 8];

	for (unsigned i = 0; i < n; i++) {
		struct io_uring_sqe *sqe = td_sqe(&f->ring);
		ucmd_prep_nop(sqe);
		ucmd_sqe_set_data64(sqe, vals[i]);
		/* failures, cancellations and device completions carry it too */
		sqe = td_prep(&f->ring, 999, TD_OP_OK, 0, 0);
		sqe->flags = IOSQE_IO_LINK;
		ucmd_sqe_set_data64(sqe, vals[i]);
		sqe = td_prep(&f->ring, f->fd, TD_OP_OK, 0, 0);
		ucmd_sqe_set_data64(sqe, vals[i]);
	}
	assert_int_equal(ucmd_submit(&f->ring), 3 * n);
	td_reap(&f->ring, c, 3 * n);
	for (unsigned i = 0; i < n; i++) {
		assert_int_equal(c[3 * i].user_data, vals[i]);
		assert_int_equal(c[3 * i].res, 0);
		assert_int_equal(c[3 * i + 1].user_data, vals[i]);
		assert_int_equal(c[3 * i + 1].res, -EBADF);
		assert_int_equal(c[3 * i + 2].user_data, vals[i]);
		assert_int_equal(c[3 * i + 2].res, -ECANCELED);
	}
	/* and the pointer flavour */
	struct io_uring_sqe *sqe = td_sqe(&f->ring);
	ucmd_prep_nop(sqe);
	ucmd_sqe_set_data(sqe, &c[5]);
	assert_int_equal(ucmd_submit(&f->ring), 1);
	struct io_uring_cqe *cqe;
	assert_int_equal(ucmd_wait_cqe(&f->ring, &cqe), 0);
	assert_ptr_equal(ucmd_cqe_get_data(cqe), &c[5]);
	ucmd_cqe_seen(&f->ring, cqe);
}


/* A drain asked for by a later chain member drains the whole chain (Linux). */
static void test_drain_on_chain_member(void **state)
{
	struct fx *f = *state;
	struct td_cqe c[4];

	td_prep(&f->ring, f->fd, TD_OP_QUEUE, 1, 1);
	td_prep(&f->ring, f->fd, TD_OP_OK, 2, 2)->flags = IOSQE_IO_LINK;
	td_prep(&f->ring, f->fd, TD_OP_OK, 3, 3)->flags = IOSQE_IO_DRAIN;
	assert_int_equal(ucmd_submit(&f->ring), 3);
	/* the chain 2->3 waits for 1 */
	assert_log((uint64_t[]){ 1 }, 1);
	td_complete_queued();
	td_reap(&f->ring, c, 3);
	assert_int_equal(c[0].user_data, 1);
	assert_int_equal(c[1].user_data, 2);
	assert_int_equal(c[2].user_data, 3);
	assert_log((uint64_t[]){ 1, 2, 3 }, 3);
}

/*
 * Thousands of requests deferred behind a drain, each completing at once
 * when released: they must not nest one stack frame each.
 */
static void test_many_deferred(void **state)
{
	struct fx *f = *state;
	struct ucmd_ring big;
	enum { N = 30000 };
	static struct td_cqe c[N + 2];

	td_ring_init(f->e, &big, 32768, 0);
	td_prep(&big, f->fd, TD_OP_QUEUE, 1, 1);
	td_prep(&big, f->fd, TD_OP_OK, 2, 2)->flags = IOSQE_IO_DRAIN;
	for (unsigned i = 0; i < N; i++)
		ucmd_prep_nop(td_sqe(&big));
	assert_int_equal(ucmd_submit(&big), N + 2);
	assert_int_equal(td_nr_issued(), 1);
	td_complete_queued();
	td_reap(&big, c, N + 2);
	assert_int_equal(c[0].user_data, 1);
	assert_int_equal(c[1].user_data, 2);
	ucmd_queue_exit(&big);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, fx_setup, fx_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_chain_runs_in_order),
		T(test_batched_completion_order),
		T(test_failure_cancels_rest),
		T(test_async_failure_cancels_rest),
		T(test_prep_failure_ends_chain),
		T(test_prep_failure_mid_chain),
		T(test_bad_opcode_mid_chain),
		T(test_hardlink_continues),
		T(test_hardlink_prep_failure),
		T(test_drain_waits),
		T(test_drain_holds_later),
		T(test_drain_on_chain_member),
		T(test_many_deferred),
		T(test_cqe_skip_success),
		T(test_user_data_round_trip),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
