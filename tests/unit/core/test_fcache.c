/* SPDX-License-Identifier: MIT */
/*
 * A submission's file cache (core/submit.c, io_file_get_cached): SQEs of
 * one batch naming the same fd share one table lookup, yet a number closed
 * or replaced before an SQE is taken is never served to it, as Linux's
 * fget per SQE: the first SQE's issue here has another thread close (or
 * dup2 over) the number and waits for that call to return, as a client's
 * close returning mid-batch would; the SQEs after it must see the table as
 * it is then. The cache keeps no file past its submission.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "core/core.h"
#include "testdev.h"

enum { FC_OK = 1, FC_HOOK };
#define FC_OTHER 1000	/* "fcdev2" answers value + FC_OTHER */

static void (*fc_hook)(void);
static int fc_released;		/* files of either device released (atomic) */

static int fc_cmd(struct io_uring_cmd *cmd, unsigned issue_flags, int64_t plus)
{
	struct td_cmd c;

	(void)issue_flags;
	memcpy(&c, io_uring_sqe_cmd(cmd->sqe), sizeof(c));
	if (cmd->cmd_op == FC_HOOK && fc_hook) {
		void (*h)(void) = fc_hook;

		fc_hook = NULL;
		h();
	}
	return (int)(c.value + plus);
}

static int fc_cmd1(struct io_uring_cmd *cmd, unsigned issue_flags)
{
	return fc_cmd(cmd, issue_flags, 0);
}

static int fc_cmd2(struct io_uring_cmd *cmd, unsigned issue_flags)
{
	return fc_cmd(cmd, issue_flags, FC_OTHER);
}

static void fc_release(struct ucmd_file *f)
{
	(void)f;
	__atomic_fetch_add(&fc_released, 1, __ATOMIC_RELAXED);
}

static const struct ucmd_file_ops fc_ops = { .name = "fcdev", .uring_cmd = fc_cmd1, .release = fc_release };
static const struct ucmd_file_ops fc_ops2 = { .name = "fcdev2", .uring_cmd = fc_cmd2, .release = fc_release };

struct fc {
	struct ucmd_engine *e;
	struct files_struct files;
	struct ucmd_task task;
	struct ucmd_ring ring;
	int fd, fd2;
};
static struct fc *cur;

static void fc_setup(struct fc *t)
{
	memset(t, 0, sizeof(*t));
	t->e = ucmd_engine_new();
	assert_non_null(t->e);
	assert_int_equal(engine_add_device(t->e, "fcdev", &fc_ops, NULL), 0);
	assert_int_equal(engine_add_device(t->e, "fcdev2", &fc_ops2, NULL), 0);
	assert_int_equal(files_init(&t->files, 16, 16), 0);
	t->task = (struct ucmd_task){ .files = &t->files, .mm = &user_mm_self };
	task_override_set(&t->task);
	t->fd = ucmd_open(t->e, "fcdev", O_RDWR);
	t->fd2 = ucmd_open(t->e, "fcdev2", O_RDWR);
	task_override_set(NULL);
	assert_true(t->fd >= 0 && t->fd2 >= 0);
	/* every SQE submitted, a failed one too: each result is looked at */
	td_ring_init(t->e, &t->ring, 16, IORING_SETUP_SUBMIT_ALL);
	io_ring_set_task(&t->ring, &t->task);
	__atomic_store_n(&fc_released, 0, __ATOMIC_RELAXED);
	cur = t;
}

static void fc_teardown(struct fc *t)
{
	ucmd_queue_exit(&t->ring);
	files_exit(&t->files);
	ucmd_engine_free(t->e);
	cur = NULL;
}

/* n SQEs on fd, the first FC_HOOK, all submitted in one call; their results by user_data 1..n. */
static void fc_batch(struct fc *t, int fd, unsigned n, int *res)
{
	struct td_cqe c[16];

	for (unsigned i = 0; i < n; i++)
		td_prep(&t->ring, fd, i ? FC_OK : FC_HOOK, i + 1, (int64_t)i + 1);
	assert_int_equal(ucmd_submit(&t->ring), (int)n);
	td_reap(&t->ring, c, n);
	for (unsigned i = 0; i < n; i++) {
		const struct td_cqe *x = td_find(c, n, i + 1);

		assert_non_null(x);
		res[i] = x->res;
	}
}

/* Another thread's close or dup2, joined: it returned before the next SQE is taken. */
static void *closer(void *arg)
{
	(void)arg;
	assert_int_equal(close_fd(&cur->files, cur->fd), 0);
	return NULL;
}

static void *replacer(void *arg)
{
	struct ucmd_file *f2 = files_fget(&cur->files, cur->fd2), *old = NULL;

	(void)arg;
	assert_non_null(f2);
	/* dup2(fd2, fd): the table takes this reference */
	assert_int_equal(replace_fd(&cur->files, cur->fd, f2, &old), cur->fd);
	assert_non_null(old);
	fput(old);
	return NULL;
}

static void run_in_thread(void *(*fn)(void *))
{
	pthread_t th;

	assert_int_equal(pthread_create(&th, NULL, fn, NULL), 0);
	assert_int_equal(pthread_join(th, NULL), 0);
}

static void hook_close(void)
{
	run_in_thread(closer);
}

static void hook_replace(void)
{
	run_in_thread(replacer);
}

static void test_batch_shares_file(void **state)
{
	struct fc t;
	int res[8];

	(void)state;
	fc_setup(&t);
	fc_batch(&t, t.fd, 8, res);
	for (int i = 0; i < 8; i++)
		assert_int_equal(res[i], i + 1);
	/* the cache kept no reference past its submission: the close releases the file */
	assert_int_equal(__atomic_load_n(&fc_released, __ATOMIC_RELAXED), 0);
	assert_int_equal(close_fd(&t.files, t.fd), 0);
	assert_int_equal(__atomic_load_n(&fc_released, __ATOMIC_RELAXED), 1);
	fc_teardown(&t);
}

static void test_close_mid_batch(void **state)
{
	struct fc t;
	int res[8];

	(void)state;
	fc_setup(&t);
	fc_hook = hook_close;
	fc_batch(&t, t.fd, 8, res);
	/* the first was issued before the close; every later one after it returned */
	assert_int_equal(res[0], 1);
	for (int i = 1; i < 8; i++)
		assert_int_equal(res[i], -EBADF);
	/* and the file is gone once its requests are */
	assert_int_equal(__atomic_load_n(&fc_released, __ATOMIC_RELAXED), 1);
	fc_teardown(&t);
}

static void test_replace_mid_batch(void **state)
{
	struct fc t;
	int res[8];

	(void)state;
	fc_setup(&t);
	fc_hook = hook_replace;
	fc_batch(&t, t.fd, 8, res);
	assert_int_equal(res[0], 1);
	/* the number names fcdev2's file now */
	for (int i = 1; i < 8; i++)
		assert_int_equal(res[i], i + 1 + FC_OTHER);
	assert_int_equal(__atomic_load_n(&fc_released, __ATOMIC_RELAXED), 1);
	fc_teardown(&t);
}

/* A close of another number also makes the next SQE look again, and finds the same file. */
static void *closer2(void *arg)
{
	(void)arg;
	assert_int_equal(close_fd(&cur->files, cur->fd2), 0);
	return NULL;
}

static void hook_close_other(void)
{
	run_in_thread(closer2);
}

static void test_close_other_mid_batch(void **state)
{
	struct fc t;
	int res[8];

	(void)state;
	fc_setup(&t);
	fc_hook = hook_close_other;
	fc_batch(&t, t.fd, 8, res);
	for (int i = 0; i < 8; i++)
		assert_int_equal(res[i], i + 1);
	fc_teardown(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_batch_shares_file),
		cmocka_unit_test(test_close_mid_batch),
		cmocka_unit_test(test_replace_mid_batch),
		cmocka_unit_test(test_close_other_mid_batch),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
