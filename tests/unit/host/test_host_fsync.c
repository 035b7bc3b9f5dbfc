/* SPDX-License-Identifier: MIT */
/*
 * IORING_OP_FSYNC on the NVMe devices: on the block device nvmeXnY it is
 * blkdev_fsync(), one NVMe Flush to the controller (counted by it), 0; on
 * the generic character device ngXnY and the controller device there is no
 * ->fsync, -EINVAL, and nothing reaches the controller (Linux's vfs_fsync).
 */
#include <errno.h>
#include <string.h>

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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fsync),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
