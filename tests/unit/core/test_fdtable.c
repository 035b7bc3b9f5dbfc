/* SPDX-License-Identifier: MIT */
/*
 * File tables (core/fdtable.h): a task's numbers are its own. What a task
 * opens is in its table alone, its rings resolve SQE fds and fixed-file
 * registrations there, another task's same number names nothing; the
 * table's own bounds, and the engine's bound over every table.
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

#include "core/core.h"

/* One FSYNC on fd: the null device has no fsync (-EINVAL), a number naming nothing -EBADF. */
static int fsync_res(struct ucmd_ring *r, int fd, bool fixed)
{
	struct io_uring_sqe *sqe = ucmd_get_sqe(r);
	struct io_uring_cqe *cqe;
	int res;

	assert_non_null(sqe);
	ucmd_prep_fsync(sqe, fd, 0);
	if (fixed)
		sqe->flags |= IOSQE_FIXED_FILE;
	assert_int_equal(ucmd_submit_and_wait(r, 1), 1);
	assert_int_equal(ucmd_wait_cqe(r, &cqe), 0);
	res = cqe->res;
	ucmd_cqe_seen(r, cqe);
	return res;
}

static void test_tasks_own_numbers(void **state)
{
	struct ucmd_engine *e = ucmd_engine_new();
	struct files_struct fa, fb;
	struct ucmd_task a = { .files = &fa, .mm = &user_mm_self };
	struct ucmd_task b = { .files = &fb, .mm = &user_mm_self };
	struct ucmd_ring ra, rb, re;
	int fd, fixed[1];

	(void)state;
	assert_non_null(e);
	assert_int_equal(files_init(&fa, 16, 16), 0);
	assert_int_equal(files_init(&fb, 16, 16), 0);
	task_override_set(&a);
	fd = ucmd_open(e, "null", O_RDWR);
	task_override_set(NULL);
	/* the lowest number of a's empty table; neither b's nor the engine's has it */
	assert_int_equal(fd, 0);
	assert_int_equal(fa.nr_open, 1);
	assert_int_equal(fb.nr_open, 0);
	assert_null(fget(e, 0));

	assert_int_equal(ucmd_queue_init_engine(e, 16, &ra, &(struct io_uring_params){ 0 }), 0);
	assert_int_equal(ucmd_queue_init_engine(e, 16, &rb, &(struct io_uring_params){ 0 }), 0);
	assert_int_equal(ucmd_queue_init_engine(e, 16, &re, &(struct io_uring_params){ 0 }), 0);
	io_ring_set_task(&ra, &a);
	io_ring_set_task(&rb, &b);
	assert_int_equal(fsync_res(&ra, fd, false), -EINVAL);
	assert_int_equal(fsync_res(&rb, fd, false), -EBADF);
	assert_int_equal(fsync_res(&re, fd, false), -EBADF);
	/* fixed files: registered from the ring's task's table */
	fixed[0] = fd;
	assert_int_equal(ucmd_register_files(&rb, fixed, 1), -EBADF);
	assert_int_equal(ucmd_register_files(&ra, fixed, 1), 0);
	/* the registered file stays a's file when its number is closed */
	task_override_set(&a);
	assert_int_equal(ucmd_close(e, fd), 0);
	assert_int_equal(ucmd_close(e, fd), -EBADF);
	task_override_set(NULL);
	assert_int_equal(fsync_res(&ra, fd, false), -EBADF);
	assert_int_equal(fsync_res(&ra, 0, true), -EINVAL);
	assert_int_equal(ucmd_unregister_files(&ra), 0);

	ucmd_queue_exit(&ra);
	ucmd_queue_exit(&rb);
	ucmd_queue_exit(&re);
	files_exit(&fa);
	files_exit(&fb);
	ucmd_engine_free(e);
}

static void test_table_bounds(void **state)
{
	struct ucmd_engine *e = ucmd_engine_new();
	struct files_struct t;
	struct ucmd_file *f[4], *old;

	(void)state;
	assert_int_equal(files_init(&t, 8, 2), 0);
	for (int i = 0; i < 4; i++)
		assert_int_equal(filp_open(e, "null", O_RDWR, &f[i]), 0);
	assert_int_equal(fd_install_lowest(&t, f[0]), 0);
	assert_int_equal(replace_fd(&t, 5, f[1], &old), 5);
	assert_null(old);
	/* max_open files at once: a new number is -EMFILE, a held one is replaced */
	assert_int_equal(fd_install_lowest(&t, f[2]), -EMFILE);
	assert_int_equal(replace_fd(&t, 3, f[2], &old), -EMFILE);
	assert_int_equal(replace_fd(&t, 8, f[2], &old), -EBADF);
	assert_int_equal(replace_fd(&t, -1, f[2], &old), -EBADF);
	assert_int_equal(replace_fd(&t, 5, f[2], &old), 5);
	assert_ptr_equal(old, f[1]);
	fput(old);
	assert_ptr_equal(files_fget(&t, 5), f[2]);
	fput(f[2]);
	assert_null(files_fget(&t, 1));
	assert_null(files_fget(&t, 99));
	assert_int_equal(close_fd(&t, 0), 0);
	assert_int_equal(close_fd(&t, 0), -EBADF);
	assert_int_equal(close_fd(&t, 8), -EBADF);
	assert_int_equal(fd_install_lowest(&t, f[3]), 0);
	/* what it still holds is closed with it */
	files_exit(&t);
	assert_int_equal(atomic_load(&e->nr_files), 0);
	ucmd_engine_free(e);
}

/* The engine bounds the files open in every table together: -ENFILE beyond. */
static void test_engine_bound(void **state)
{
	struct ucmd_engine *e = ucmd_engine_new();
	struct files_struct t;
	struct ucmd_task a = { .files = &t, .mm = &user_mm_self };
	struct ucmd_file *f;

	(void)state;
	assert_int_equal(files_init(&t, UCMD_MAX_FILES, UCMD_MAX_FILES), 0);
	for (int i = 0; i < UCMD_MAX_FILES - 1; i++)
		assert_int_equal(ucmd_open(e, "null", O_RDWR), i);
	task_override_set(&a);
	assert_int_equal(ucmd_open(e, "null", O_RDWR), 0);
	assert_int_equal(ucmd_open(e, "null", O_RDWR), -ENFILE);
	task_override_set(NULL);
	assert_int_equal(filp_open(e, "null", O_RDWR, &f), -ENFILE);
	assert_int_equal(ucmd_close(e, 7), 0);
	assert_int_equal(filp_open(e, "null", O_RDWR, &f), 0);
	fput(f);
	files_exit(&t);
	ucmd_engine_free(e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tasks_own_numbers),
		cmocka_unit_test(test_table_bounds),
		cmocka_unit_test(test_engine_bound),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
