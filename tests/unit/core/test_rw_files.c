/* SPDX-License-Identifier: MIT */
/*
 * The READ/WRITE family on the null device, buffer checks, registered
 * buffers and files, open() errors and personalities.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "testdev.h"

struct fx {
	struct ucmd_engine *e;
	struct ucmd_ring ring;
	int fd, ro_fd, wo_fd;
	char buf[8192];
};

static int fx_setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	f->e = ucmd_engine_new();
	assert_non_null(f->e);
	f->fd = ucmd_open(f->e, "null", O_RDWR);
	f->ro_fd = ucmd_open(f->e, "null", O_RDONLY);
	f->wo_fd = ucmd_open(f->e, "null", O_WRONLY);
	assert_true(f->fd >= 0 && f->ro_fd >= 0 && f->wo_fd >= 0);
	td_ring_init(f->e, &f->ring, 16, 0);
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
	td_reap(&f->ring, &c, 1);
	return c.res;
}

static void test_null_read_write(void **state)
{
	struct fx *f = *state;
	struct iovec iov[3] = { { f->buf, 100 }, { f->buf + 100, 200 }, { f->buf + 300, 1 } };

	ucmd_prep_read(td_sqe(&f->ring), f->fd, f->buf, 4096, 0);
	assert_int_equal(one(f), 0);
	ucmd_prep_write(td_sqe(&f->ring), f->fd, f->buf, 4096, 12345);
	assert_int_equal(one(f), 4096);
	ucmd_prep_write(td_sqe(&f->ring), f->fd, f->buf, 0, 0);
	assert_int_equal(one(f), 0);
	ucmd_prep_readv(td_sqe(&f->ring), f->fd, iov, 3, 0);
	assert_int_equal(one(f), 0);
	ucmd_prep_writev(td_sqe(&f->ring), f->fd, iov, 3, 0);
	assert_int_equal(one(f), 301);
	/* an unknown fd */
	ucmd_prep_read(td_sqe(&f->ring), 4000, f->buf, 16, 0);
	assert_int_equal(one(f), -EBADF);
	ucmd_prep_read(td_sqe(&f->ring), -1, f->buf, 16, 0);
	assert_int_equal(one(f), -EBADF);
}

static void test_iovec_limits(void **state)
{
	struct fx *f = *state;
	struct iovec *iov = calloc(1025, sizeof(*iov));

	for (unsigned i = 0; i < 1025; i++) {
		iov[i].iov_base = f->buf + i;
		iov[i].iov_len = 2;
	}
	ucmd_prep_writev(td_sqe(&f->ring), f->fd, iov, 1024, 0);
	assert_int_equal(one(f), 2048);
	ucmd_prep_writev(td_sqe(&f->ring), f->fd, iov, 1025, 0);
	assert_int_equal(one(f), -EINVAL);
	ucmd_prep_readv(td_sqe(&f->ring), f->fd, iov, 1025, 0);
	assert_int_equal(one(f), -EINVAL);
	/* one bad segment among good ones */
	iov[500].iov_base = NULL;
	ucmd_prep_writev(td_sqe(&f->ring), f->fd, iov, 1000, 0);
	assert_int_equal(one(f), -EFAULT);
	/* the array itself */
	ucmd_prep_readv(td_sqe(&f->ring), f->fd, NULL, 2, 0);
	assert_int_equal(one(f), -EFAULT);
	free(iov);
}

static void test_bad_pointers(void **state)
{
	struct fx *f = *state;

	ucmd_prep_read(td_sqe(&f->ring), f->fd, NULL, 16, 0);
	assert_int_equal(one(f), -EFAULT);
	ucmd_prep_write(td_sqe(&f->ring), f->fd, NULL, 1, 0);
	assert_int_equal(one(f), -EFAULT);
	/* wrapping around the end of the address space */
	ucmd_prep_write(td_sqe(&f->ring), f->fd, (void *)(uintptr_t)(UINT64_MAX - 15), 32, 0);
	assert_int_equal(one(f), -EFAULT);
	ucmd_prep_read(td_sqe(&f->ring), f->fd, (void *)(uintptr_t)(UINT64_MAX - 4095), 8192, 0);
	assert_int_equal(one(f), -EFAULT);
	/* kernel half */
	ucmd_prep_read(td_sqe(&f->ring), f->fd, (void *)(uintptr_t)0xffff800000000000ull, 16, 0);
	assert_int_equal(one(f), -EFAULT);
}

static void test_open_modes(void **state)
{
	struct fx *f = *state;

	ucmd_prep_write(td_sqe(&f->ring), f->ro_fd, f->buf, 16, 0);
	assert_int_equal(one(f), -EBADF);
	ucmd_prep_read(td_sqe(&f->ring), f->ro_fd, f->buf, 16, 0);
	assert_int_equal(one(f), 0);
	ucmd_prep_read(td_sqe(&f->ring), f->wo_fd, f->buf, 16, 0);
	assert_int_equal(one(f), -EBADF);
	ucmd_prep_write(td_sqe(&f->ring), f->wo_fd, f->buf, 16, 0);
	assert_int_equal(one(f), 16);

	assert_int_equal(ucmd_open(f->e, "nosuchdev", O_RDWR), -ENOENT);
	assert_int_equal(ucmd_open(f->e, "null", O_ACCMODE), -EINVAL);
	assert_int_equal(ucmd_close(f->e, 4000), -EBADF);
	/* a closed fd is gone */
	int fd = ucmd_open(f->e, "null", O_RDWR);
	assert_true(fd >= 0);
	assert_int_equal(ucmd_close(f->e, fd), 0);
	ucmd_prep_read(td_sqe(&f->ring), fd, f->buf, 16, 0);
	assert_int_equal(one(f), -EBADF);
}

static void test_fixed_buffers(void **state)
{
	struct fx *f = *state;
	struct iovec bufs[2] = { { f->buf, 4096 }, { f->buf + 4096, 4096 } };

	assert_int_equal(ucmd_register_buffers(&f->ring, bufs, 2), 0);
	assert_int_equal(ucmd_register_buffers(&f->ring, bufs, 2), -EBUSY);

	ucmd_prep_read_fixed(td_sqe(&f->ring), f->fd, f->buf, 4096, 0, 0);
	assert_int_equal(one(f), 0);
	ucmd_prep_write_fixed(td_sqe(&f->ring), f->fd, f->buf + 4096 + 10, 100, 0, 1);
	assert_int_equal(one(f), 100);
	/* index past the table */
	ucmd_prep_write_fixed(td_sqe(&f->ring), f->fd, f->buf, 16, 0, 2);
	assert_int_equal(one(f), -EFAULT);
	/* ranges outside the chosen buffer */
	ucmd_prep_write_fixed(td_sqe(&f->ring), f->fd, f->buf + 4000, 200, 0, 0);
	assert_int_equal(one(f), -EFAULT);
	ucmd_prep_write_fixed(td_sqe(&f->ring), f->fd, f->buf, 16, 0, 1);
	assert_int_equal(one(f), -EFAULT);
	ucmd_prep_read_fixed(td_sqe(&f->ring), f->fd, (void *)(uintptr_t)UINT64_MAX, 16, 0, 0);
	assert_int_equal(one(f), -EFAULT);
	/* buf_index means nothing to a plain read */
	struct io_uring_sqe *sqe = td_sqe(&f->ring);
	ucmd_prep_read(sqe, f->fd, f->buf, 16, 0);
	sqe->buf_index = 1;
	assert_int_equal(one(f), -EINVAL);
	sqe = td_sqe(&f->ring);
	ucmd_prep_writev(sqe, f->fd, bufs, 1, 0);
	sqe->buf_index = 1;
	assert_int_equal(one(f), -EINVAL);

	assert_int_equal(ucmd_unregister_buffers(&f->ring), 0);
	assert_int_equal(ucmd_unregister_buffers(&f->ring), -ENXIO);
	ucmd_prep_read_fixed(td_sqe(&f->ring), f->fd, f->buf, 16, 0, 0);
	assert_int_equal(one(f), -EFAULT);
	/* bad tables */
	struct iovec bad[1] = { { NULL, 4096 } };
	assert_int_equal(ucmd_register_buffers(&f->ring, bad, 1), -EFAULT);
	assert_int_equal(ucmd_register_buffers(&f->ring, bufs, 0), -EINVAL);
	assert_int_equal(ucmd_register_buffers(&f->ring, bufs, 2), 0);
}

static void test_fixed_files(void **state)
{
	struct fx *f = *state;
	int files[3] = { f->fd, -1, f->ro_fd };
	struct io_uring_sqe *sqe;

	assert_int_equal(ucmd_register_files(&f->ring, (int[]){ f->fd, 4000 }, 2), -EBADF);
	assert_int_equal(ucmd_register_files(&f->ring, files, 3), 0);
	assert_int_equal(ucmd_register_files(&f->ring, files, 3), -EBUSY);

	sqe = td_sqe(&f->ring);
	ucmd_prep_write(sqe, 0, f->buf, 64, 0);
	sqe->flags = IOSQE_FIXED_FILE;
	assert_int_equal(one(f), 64);
	sqe = td_sqe(&f->ring);
	ucmd_prep_write(sqe, 1, f->buf, 64, 0);	/* sparse slot */
	sqe->flags = IOSQE_FIXED_FILE;
	assert_int_equal(one(f), -EBADF);
	sqe = td_sqe(&f->ring);
	ucmd_prep_write(sqe, 3, f->buf, 64, 0);	/* past the table */
	sqe->flags = IOSQE_FIXED_FILE;
	assert_int_equal(one(f), -EBADF);
	sqe = td_sqe(&f->ring);
	ucmd_prep_write(sqe, -1, f->buf, 64, 0);
	sqe->flags = IOSQE_FIXED_FILE;
	assert_int_equal(one(f), -EBADF);
	sqe = td_sqe(&f->ring);
	ucmd_prep_write(sqe, 2, f->buf, 64, 0);	/* the read-only one */
	sqe->flags = IOSQE_FIXED_FILE;
	assert_int_equal(one(f), -EBADF);
	sqe = td_sqe(&f->ring);
	ucmd_prep_read(sqe, 2, f->buf, 64, 0);
	sqe->flags = IOSQE_FIXED_FILE;
	assert_int_equal(one(f), 0);

	/* the table holds its own references: closing the fd does not matter */
	int fd = ucmd_open(f->e, "null", O_RDWR);
	assert_int_equal(ucmd_unregister_files(&f->ring), 0);
	assert_int_equal(ucmd_register_files(&f->ring, &fd, 1), 0);
	assert_int_equal(ucmd_close(f->e, fd), 0);
	sqe = td_sqe(&f->ring);
	ucmd_prep_write(sqe, 0, f->buf, 8, 0);
	sqe->flags = IOSQE_FIXED_FILE;
	assert_int_equal(one(f), 8);
	assert_int_equal(ucmd_unregister_files(&f->ring), 0);
	assert_int_equal(ucmd_unregister_files(&f->ring), -ENXIO);
	sqe = td_sqe(&f->ring);
	ucmd_prep_write(sqe, 0, f->buf, 8, 0);
	sqe->flags = IOSQE_FIXED_FILE;
	assert_int_equal(one(f), -EBADF);
}

static void test_personality(void **state)
{
	struct fx *f = *state;
	struct io_uring_sqe *sqe;
	int id = ucmd_register_personality(&f->ring);

	assert_true(id > 0);
	sqe = td_sqe(&f->ring);
	ucmd_prep_nop(sqe);
	sqe->personality = (uint16_t)id;
	assert_int_equal(one(f), 0);
	sqe = td_sqe(&f->ring);
	ucmd_prep_write(sqe, f->fd, f->buf, 32, 0);
	sqe->personality = (uint16_t)id;
	assert_int_equal(one(f), 32);
	/* ids nobody registered */
	sqe = td_sqe(&f->ring);
	ucmd_prep_nop(sqe);
	sqe->personality = (uint16_t)(id + 1);
	assert_int_equal(one(f), -EINVAL);
	sqe = td_sqe(&f->ring);
	ucmd_prep_read(sqe, f->fd, f->buf, 32, 0);
	sqe->personality = 0xffff;
	assert_int_equal(one(f), -EINVAL);
	/* and one that is no longer registered */
	assert_int_equal(ucmd_unregister_personality(&f->ring, id), 0);
	assert_int_equal(ucmd_unregister_personality(&f->ring, id), -EINVAL);
	sqe = td_sqe(&f->ring);
	ucmd_prep_nop(sqe);
	sqe->personality = (uint16_t)id;
	assert_int_equal(one(f), -EINVAL);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, fx_setup, fx_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_null_read_write),
		T(test_iovec_limits),
		T(test_bad_pointers),
		T(test_open_modes),
		T(test_fixed_buffers),
		T(test_fixed_files),
		T(test_personality),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
