/* SPDX-License-Identifier: MIT */
/*
 * The liburing-parity calls and opcodes on both backends with the same
 * expectations: the kernel backend (this machine's io_uring on /dev/null
 * and a temporary file) is the reference the native engine must match.
 * Exits 77 (skipped) only when the kernel refuses io_uring altogether.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/eventfd.h>
#include <unistd.h>
#include <cmocka.h>

#include "ucmd/ucmd.h"
#include "ucmd/kernel.h"

static struct __kernel_timespec ts_short = { .tv_sec = 0, .tv_nsec = 10 * 1000 * 1000 };
static struct __kernel_timespec ts_long = { .tv_sec = 60, .tv_nsec = 0 };

static struct io_uring_sqe *sqe_ud(struct ucmd_ring *r, uint64_t ud)
{
	struct io_uring_sqe *sqe = ucmd_get_sqe(r);

	assert_non_null(sqe);
	memset(sqe, 0, sizeof(*sqe));
	sqe->user_data = ud;
	return sqe;
}

/* Submit what is queued, reap n CQEs; the res of user_data ud. */
static int reap_res(struct ucmd_ring *r, unsigned n, uint64_t want, int *others)
{
	int res = -9999;

	assert_true(ucmd_submit(r) >= 0);
	for (unsigned i = 0; i < n; i++) {
		struct io_uring_cqe *cqe;

		assert_int_equal(ucmd_wait_cqe(r, &cqe), 0);
		if (cqe->user_data == want)
			res = cqe->res;
		else if (others)
			*others++ = cqe->res;
		ucmd_cqe_seen(r, cqe);
	}
	return res;
}

static void run(struct ucmd_engine *e, const char *null_name, const char *file)
{
	struct ucmd_ring r;
	struct io_uring_params p;
	struct io_uring_cqe *cqe;
	struct io_uring_probe *probe;
	int other[4], null, efd, fds[2];
	uint64_t v;
	char buf[32];

	null = ucmd_open(e, null_name, O_RDWR);
	assert_true(null >= 0);
	memset(&p, 0, sizeof(p));
	assert_int_equal(ucmd_queue_init_engine(e, 8, &r, &p), 0);

	/* TIMEOUT: by time, by count */
	ucmd_prep_timeout(sqe_ud(&r, 1), &ts_short, 0, 0);
	assert_int_equal(reap_res(&r, 1, 1, NULL), -ETIME);
	ucmd_prep_timeout(sqe_ud(&r, 1), &ts_long, 1, 0);
	ucmd_prep_nop(sqe_ud(&r, 2));
	assert_int_equal(reap_res(&r, 2, 1, other), 0);
	/* LINK_TIMEOUT: the request first, then the timeout first */
	ucmd_prep_nop(sqe_ud(&r, 1));
	r.sq.sqes[(r.sq.sqe_tail - 1) & r.sq.ring_mask].flags = IOSQE_IO_LINK;
	ucmd_prep_link_timeout(sqe_ud(&r, 2), &ts_long, 0);
	assert_int_equal(reap_res(&r, 2, 2, other), -ECANCELED);
	assert_int_equal(other[0], 0);
	ucmd_prep_timeout(sqe_ud(&r, 1), &ts_long, 0, 0);
	r.sq.sqes[(r.sq.sqe_tail - 1) & r.sq.ring_mask].flags = IOSQE_IO_LINK;
	ucmd_prep_link_timeout(sqe_ud(&r, 2), &ts_short, 0);
	assert_int_equal(reap_res(&r, 2, 2, other), -ETIME);
	assert_int_equal(other[0], -ECANCELED);
	/* ASYNC_CANCEL */
	ucmd_prep_cancel64(sqe_ud(&r, 3), 777, 0);
	assert_int_equal(reap_res(&r, 1, 3, NULL), -ENOENT);
	ucmd_prep_timeout(sqe_ud(&r, 777), &ts_long, 0, 0);
	ucmd_prep_cancel64(sqe_ud(&r, 3), 777, 0);
	assert_int_equal(reap_res(&r, 2, 3, other), 0);
	assert_int_equal(other[0], -ECANCELED);
	/* FSYNC: a character device has no fsync */
	ucmd_prep_fsync(sqe_ud(&r, 4), null, 0);
	assert_int_equal(reap_res(&r, 1, 4, NULL), -EINVAL);
	if (file) {
		int fd = ucmd_open(e, file, O_RDWR);

		assert_true(fd >= 0);
		ucmd_prep_fsync(sqe_ud(&r, 4), fd, IORING_FSYNC_DATASYNC);
		assert_int_equal(reap_res(&r, 1, 4, NULL), 0);
		ucmd_close(e, fd);
	}
	/* probe */
	probe = ucmd_get_probe_ring(&r);
	assert_non_null(probe);
	assert_true(ucmd_opcode_supported(probe, IORING_OP_TIMEOUT));
	assert_true(ucmd_opcode_supported(probe, IORING_OP_ASYNC_CANCEL));
	assert_true(ucmd_opcode_supported(probe, IORING_OP_URING_CMD));
	assert_false(ucmd_opcode_supported(probe, 255));
	ucmd_free_probe(probe);
	/* eventfd */
	efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	assert_int_equal(ucmd_register_eventfd(&r, efd), 0);
	assert_int_equal(ucmd_register_eventfd(&r, efd), -EBUSY);
	ucmd_prep_nop(sqe_ud(&r, 5));
	assert_int_equal(reap_res(&r, 1, 5, NULL), 0);
	assert_int_equal(read(efd, &v, sizeof(v)), sizeof(v));
	assert_true(v >= 1);
	assert_int_equal(ucmd_unregister_eventfd(&r), 0);
	assert_int_equal(ucmd_unregister_eventfd(&r), -ENXIO);
	close(efd);
	/* timed waits */
	assert_int_equal(ucmd_wait_cqe_timeout(&r, &cqe, &ts_short), -ETIME);
	ucmd_prep_nop(sqe_ud(&r, 6));
	assert_int_equal(ucmd_submit_and_wait_timeout(&r, &cqe, 1, &ts_long, NULL), 1);
	assert_non_null(cqe);
	assert_int_equal(cqe->user_data, 6);
	ucmd_cqe_seen(&r, cqe);
	/* ring fd, sparse tables, files update */
	assert_int_equal(ucmd_unregister_ring_fd(&r), -EINVAL);
	assert_int_equal(ucmd_register_ring_fd(&r), 1);
	assert_int_equal(ucmd_register_ring_fd(&r), -EEXIST);
	ucmd_prep_nop(sqe_ud(&r, 7));
	assert_int_equal(reap_res(&r, 1, 7, NULL), 0);
	assert_int_equal(ucmd_unregister_ring_fd(&r), 1);
	assert_int_equal(ucmd_register_files_sparse(&r, 2), 0);
	fds[0] = IORING_REGISTER_FILES_SKIP;
	fds[1] = null;
	assert_int_equal(ucmd_register_files_update(&r, 0, fds, 2), 2);
	ucmd_prep_write(sqe_ud(&r, 8), 1, buf, sizeof(buf), 0);
	r.sq.sqes[(r.sq.sqe_tail - 1) & r.sq.ring_mask].flags = IOSQE_FIXED_FILE;
	assert_int_equal(reap_res(&r, 1, 8, NULL), (int)sizeof(buf));
	ucmd_prep_write(sqe_ud(&r, 9), 0, buf, sizeof(buf), 0);
	r.sq.sqes[(r.sq.sqe_tail - 1) & r.sq.ring_mask].flags = IOSQE_FIXED_FILE;
	assert_int_equal(reap_res(&r, 1, 9, NULL), -EBADF);
	assert_int_equal(ucmd_register_buffers_sparse(&r, 2), 0);
	ucmd_prep_write_fixed(sqe_ud(&r, 10), null, buf, sizeof(buf), 0, 0);
	assert_int_equal(reap_res(&r, 1, 10, NULL), -EFAULT);
	ucmd_queue_exit(&r);
	ucmd_close(e, null);
}

static void test_native(void **state)
{
	struct ucmd_engine *e = ucmd_engine_new();

	(void)state;
	run(e, "null", NULL);
	ucmd_engine_free(e);
}

static void test_kernel(void **state)
{
	struct ucmd_engine *e = ucmd_engine_new_kernel();
	char path[] = "/tmp/ucmd-parity-XXXXXX";
	int fd = mkstemp(path);

	(void)state;
	assert_non_null(e);
	assert_true(fd >= 0);
	run(e, "/dev/null", path);
	close(fd);
	unlink(path);
	ucmd_engine_free(e);
}

int main(void)
{
	struct io_uring_params p;
	struct ucmd_ring r;
	struct ucmd_engine *k = ucmd_engine_new_kernel();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_native),
		cmocka_unit_test(test_kernel),
	};

	memset(&p, 0, sizeof(p));
	if (!k || ucmd_queue_init_engine(k, 2, &r, &p) < 0) {
		fprintf(stderr, "the kernel refuses io_uring here: skipped\n");
		return 77;
	}
	ucmd_queue_exit(&r);
	ucmd_engine_free(k);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
