/* SPDX-License-Identifier: MIT */
/*
 * IORING_OP_FSYNC on the NVMe devices: on the block device nvmeXnY it is
 * blkdev_fsync(), one NVMe Flush to the controller (counted by it), 0; on
 * the generic character device ngXnY and the controller device there is no
 * ->fsync, -EINVAL, and nothing reaches the controller (Linux's vfs_fsync).
 */
#include <errno.h>
#include <string.h>

#include <nvme/types.h>

#include "host_fixture.h"

static int fsync_one(struct fx *f, int fd, unsigned flags)
{
	struct io_uring_cqe *cqe;
	int res;

	ucmd_prep_fsync(ucmd_get_sqe(&f->ring), fd, flags);
	assert_int_equal(ucmd_submit(&f->ring), 1);
	assert_int_equal(ucmd_wait_cqe(&f->ring, &cqe), 0);
	res = cqe->res;
	ucmd_cqe_seen(&f->ring, cqe);
	return res;
}

static uint64_t commands(struct fx *f)
{
	struct ucmd_ctrl_stats st;

	ucmd_ctrl_get_stats(f->ctrl, &st);
	return st.commands;
}

static void test_fsync(void **state)
{
	struct fx f;
	struct fx_opts o = { .ring_flags = 0, .ring_flags_set = true };
	uint64_t before;

	(void)state;
	assert_int_equal(fx_setup(&f, &o), 0);
	before = commands(&f);
	assert_int_equal(fsync_one(&f, f.bdev, 0), 0);
	assert_int_equal(commands(&f), before + 1);
	assert_int_equal(fsync_one(&f, f.bdev, IORING_FSYNC_DATASYNC), 0);
	assert_int_equal(commands(&f), before + 2);
	assert_int_equal(fsync_one(&f, f.ng, 0), -EINVAL);
	assert_int_equal(fsync_one(&f, f.dev, 0), -EINVAL);
	assert_int_equal(commands(&f), before + 2);
	fx_teardown(&f);
}

/*
 * An FSYNC a worker is running (its Flush held by the controller) cannot be
 * cancelled: -EALREADY, and it still completes with 0.
 */
/*
 * One FSYNC, then a cancel once the worker has rung the flush's doorbell.
 * The doorbell count cannot tell the flush's SQ doorbell from a CQ head
 * doorbell the host writes just after an earlier completion (attach's
 * last admin command): then the cancel finds the FSYNC still queued and
 * takes it, which is right too (0, and -ECANCELED for the FSYNC). Returns
 * whether the cancel met the FSYNC running.
 */
static bool cancel_fsync_once(struct fx *f)
{
	struct ucmd_ctrl_stats st;
	struct io_uring_sqe *sqe;
	struct io_uring_cqe *cqe;
	uint64_t doorbells;
	int res[2] = { 1, 1 };

	ucmd_ctrl_get_stats(f->ctrl, &st);
	doorbells = st.doorbells;
	sqe = ucmd_get_sqe(&f->ring);
	ucmd_prep_fsync(sqe, f->bdev, 0);
	sqe->user_data = 1;
	assert_int_equal(ucmd_submit(&f->ring), 1);
	do {
		ucmd_ctrl_get_stats(f->ctrl, &st);
	} while (st.doorbells == doorbells);
	sqe = ucmd_get_sqe(&f->ring);
	ucmd_prep_cancel64(sqe, 1, 0);
	sqe->user_data = 2;
	assert_int_equal(ucmd_submit(&f->ring), 1);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(ucmd_wait_cqe(&f->ring, &cqe), 0);
		res[cqe->user_data - 1] = cqe->res;
		ucmd_cqe_seen(&f->ring, cqe);
	}
	if (res[1] == 0) {
		/* taken from the queue before a worker ran it */
		assert_int_equal(res[0], -ECANCELED);
		return false;
	}
	/* running: the cancel cannot stop it, and the fsync completes */
	assert_int_equal(res[1], -EALREADY);
	assert_int_equal(res[0], 0);
	return true;
}

static void test_cancel_running(void **state)
{
	struct fx f;
	struct fx_opts o = { .mode = UCMD_CTRL_THREAD, .ring_flags = 0, .ring_flags_set = true };
	bool seen_running = false;

	(void)state;
	assert_int_equal(fx_setup(&f, &o), 0);
	ctrl_inject_delay(f.ctrl, false, nvme_cmd_flush, 300);
	/* a late doorbell is a one-off of set-up: the next tries meet it running */
	for (int i = 0; i < 20 && !seen_running; i++)
		seen_running = cancel_fsync_once(&f);
	assert_true(seen_running);
	ctrl_inject_delay(f.ctrl, false, nvme_cmd_flush, 0);
	fx_teardown(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fsync),
		cmocka_unit_test(test_cancel_running),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
