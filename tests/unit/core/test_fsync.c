/* SPDX-License-Identifier: MIT */
/*
 * IORING_OP_FSYNC on the engine: a character device without ->fsync is
 * -EINVAL (Linux's vfs_fsync), bad flags and fields are -EINVAL, an IOPOLL
 * ring refuses it; a device with ->fsync runs it from a worker (the NVMe
 * block device's Flush: tests/unit/host/test_host_fsync.c).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <fcntl.h>
#include <cmocka.h>

#include "parity.h"

static void test_fsync_checks(void **state)
{
	struct ucmd_engine *e = ucmd_engine_new();
	struct ucmd_ring r, poll;
	struct cqe_copy c;
	struct io_uring_sqe *sqe;
	int null = ucmd_open(e, "null", O_RDWR);

	(void)state;
	ring_setup(e, &r, 8, 0);
	ucmd_prep_fsync(ucmd_get_sqe(&r), null, 0);
	assert_int_equal(submit_one(&r, &c), -EINVAL);
	ucmd_prep_fsync(ucmd_get_sqe(&r), null, IORING_FSYNC_DATASYNC);
	assert_int_equal(submit_one(&r, &c), -EINVAL);
	ucmd_prep_fsync(ucmd_get_sqe(&r), 3000, 0);
	assert_int_equal(submit_one(&r, &c), -EBADF);
	ucmd_prep_fsync(ucmd_get_sqe(&r), null, 1u << 4);
	assert_int_equal(submit_one(&r, &c), -EINVAL);
	sqe = ucmd_get_sqe(&r);
	ucmd_prep_fsync(sqe, null, 0);
	sqe->addr = 1;
	assert_int_equal(submit_one(&r, &c), -EINVAL);
	ring_setup(e, &poll, 8, IORING_SETUP_IOPOLL);
	ucmd_prep_fsync(ucmd_get_sqe(&poll), null, 0);
	assert_int_equal(submit_one(&poll, &c), -EINVAL);
	ucmd_queue_exit(&poll);
	ucmd_queue_exit(&r);
	ucmd_close(e, null);
	ucmd_engine_free(e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fsync_checks),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
