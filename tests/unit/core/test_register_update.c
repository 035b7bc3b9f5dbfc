/* SPDX-License-Identifier: MIT */
/*
 * Sparse file and buffer tables, ucmd_register_files_update (Linux's
 * returns: how many slots were processed, errors only when none was) and
 * ucmd_register_ring_fd's liburing returns.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <fcntl.h>
#include <cmocka.h>

#include "parity.h"

static int32_t fixed_write(struct ucmd_ring *r, int idx)
{
	static char buf[16];
	struct cqe_copy c;
	struct io_uring_sqe *sqe = ucmd_get_sqe(r);

	ucmd_prep_write(sqe, idx, buf, sizeof(buf), 0);
	sqe->flags = IOSQE_FIXED_FILE;
	return submit_one(r, &c);
}

static void test_files(void **state)
{
	struct ucmd_engine *e = ucmd_engine_new();
	struct ucmd_ring r;
	int null = ucmd_open(e, "null", O_RDWR);
	int fds[3];

	(void)state;
	ring_setup(e, &r, 8, 0);
	fds[0] = null;
	assert_int_equal(ucmd_register_files_update(&r, 0, fds, 1), -ENXIO);
	assert_int_equal(ucmd_register_files_sparse(&r, 0), -EINVAL);
	assert_int_equal(ucmd_register_files_sparse(&r, 4), 0);
	assert_int_equal(ucmd_register_files_sparse(&r, 4), -EBUSY);
	assert_int_equal(fixed_write(&r, 1), -EBADF);	/* empty slot */
	assert_int_equal(ucmd_register_files_update(&r, 1, fds, 1), 1);
	assert_int_equal(fixed_write(&r, 1), 16);
	/* skip slot 0, put null in 2, empty slot 1 */
	fds[0] = IORING_REGISTER_FILES_SKIP;
	fds[1] = -1;
	fds[2] = null;
	assert_int_equal(ucmd_register_files_update(&r, 0, fds, 3), 3);
	assert_int_equal(fixed_write(&r, 1), -EBADF);
	assert_int_equal(fixed_write(&r, 2), 16);
	assert_int_equal(ucmd_register_files_update(&r, 3, fds, 2), -EINVAL);	/* past the end */
	fds[0] = 4000;
	assert_int_equal(ucmd_register_files_update(&r, 0, fds, 1), -EBADF);
	/* a bad fd after a good one: the good one counts */
	fds[0] = null;
	fds[1] = 4000;
	assert_int_equal(ucmd_register_files_update(&r, 0, fds, 2), 1);
	assert_int_equal(fixed_write(&r, 0), 16);
	assert_int_equal(ucmd_unregister_files(&r), 0);
	ucmd_queue_exit(&r);
	ucmd_close(e, null);
	ucmd_engine_free(e);
}

static void test_buffers_sparse(void **state)
{
	struct ucmd_engine *e = ucmd_engine_new();
	struct ucmd_ring r;
	struct cqe_copy c;
	char buf[16];
	int null = ucmd_open(e, "null", O_RDWR);

	(void)state;
	ring_setup(e, &r, 8, 0);
	assert_int_equal(ucmd_register_buffers_sparse(&r, 0), -EINVAL);
	assert_int_equal(ucmd_register_buffers_sparse(&r, 2), 0);
	assert_int_equal(ucmd_register_buffers_sparse(&r, 2), -EBUSY);
	ucmd_prep_write_fixed(ucmd_get_sqe(&r), null, buf, sizeof(buf), 0, 1);
	assert_int_equal(submit_one(&r, &c), -EFAULT);
	ucmd_prep_write_fixed(ucmd_get_sqe(&r), null, NULL, 0, 0, 0);
	assert_int_equal(submit_one(&r, &c), -EFAULT);
	assert_int_equal(ucmd_unregister_buffers(&r), 0);
	ucmd_queue_exit(&r);
	ucmd_close(e, null);
	ucmd_engine_free(e);
}

static void test_ring_fd(void **state)
{
	struct ucmd_engine *e = ucmd_engine_new();
	struct ucmd_ring r;
	struct cqe_copy c;

	(void)state;
	ring_setup(e, &r, 8, 0);
	assert_int_equal(ucmd_unregister_ring_fd(&r), -EINVAL);
	assert_int_equal(ucmd_register_ring_fd(&r), 1);
	assert_int_equal(ucmd_register_ring_fd(&r), -EEXIST);
	p_nop(&r, 1, 0);
	assert_int_equal(submit_one(&r, &c), 0);
	assert_int_equal(ucmd_unregister_ring_fd(&r), 1);
	ucmd_queue_exit(&r);
	ucmd_engine_free(e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_files),
		cmocka_unit_test(test_buffers_sparse),
		cmocka_unit_test(test_ring_fd),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
