/* SPDX-License-Identifier: MIT */
/* IORING_OP_URING_CMD: seed 003's infrastructure, as a provider sees it. */
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>

#include "core/uring_cmd.h"
#include "ringutil.h"

/* ---- test providers ------------------------------------------------------ */

static struct {
	unsigned calls;
	unsigned last_flags;
	uint8_t seen[80];
	const struct io_uring_sqe *sqe_ptr;
} echo;

/* cqe.res = first command byte; res2 = bytes 8..15 of the command */
static int echo_uring_cmd(struct io_uring_cmd *cmd, unsigned issue_flags)
{
	const uint8_t *c = io_uring_sqe_cmd(cmd->sqe);
	uint64_t res2;

	echo.calls++;
	echo.last_flags = issue_flags;
	echo.sqe_ptr = cmd->sqe;
	memcpy(echo.seen, c, (issue_flags & IO_URING_F_SQE128) ? 80 : 16);
	memcpy(&res2, c + 8, 8);
	io_uring_cmd_done(cmd, c[0], res2);
	return -EIOCBQUEUED;
}

static const struct ucmd_file_ops echo_fops = { .name = "echo", .uring_cmd = echo_uring_cmd };
static const struct ucmd_file_ops plain_fops = { .name = "plain" };

/* Completes from another thread, through task work. */
static void *complete_later(void *arg)
{
	struct io_uring_cmd *cmd = arg;

	io_uring_cmd_done(cmd, 7, 0x1122334455667788ull);
	return NULL;
}

static pthread_t later_thread;
static int thread_uring_cmd(struct io_uring_cmd *cmd, unsigned issue_flags)
{
	(void)issue_flags;
	assert_int_equal(pthread_create(&later_thread, NULL, complete_later, cmd), 0);
	return -EIOCBQUEUED;
}

static const struct ucmd_file_ops thread_fops = { .name = "thread",
						  .uring_cmd = thread_uring_cmd };

/*
 * -EAGAIN under NONBLOCK, then a blocking retry from the worker. The retry
 * waits until the test has scribbled over the application's SQE, then
 * checks it sees the very bytes of the first try.
 */
static struct {
	uint8_t first[80];
	atomic_int scribbled;
	atomic_int tries;
	unsigned retry_flags;
} agn;

static int again_uring_cmd(struct io_uring_cmd *cmd, unsigned issue_flags)
{
	const uint8_t *c = io_uring_sqe_cmd(cmd->sqe);

	if (atomic_fetch_add(&agn.tries, 1) == 0) {
		assert_true(issue_flags & IO_URING_F_NONBLOCK);
		memcpy(agn.first, c, 80);
		return -EAGAIN;
	}
	agn.retry_flags = issue_flags;
	while (!atomic_load(&agn.scribbled))
		;
	return memcmp(agn.first, c, 80) == 0 && cmd->cmd_op == 0x5a ? 0 : -EIO;
}

static const struct ucmd_file_ops again_fops = { .name = "again",
						 .uring_cmd = again_uring_cmd };

/* Completes inline: cqe.res is the first command byte, -EIO for 0xff. */
static int inline_uring_cmd(struct io_uring_cmd *cmd, unsigned issue_flags)
{
	const uint8_t *c = io_uring_sqe_cmd(cmd->sqe);

	(void)issue_flags;
	return c[0] == 0xff ? -EIO : c[0];
}

static const struct ucmd_file_ops inline_fops = { .name = "inline",
						  .uring_cmd = inline_uring_cmd };

/* ---- fixture ------------------------------------------------------------- */

static struct ucmd_engine *eng;

static int setup(void **state)
{
	(void)state;
	eng = ucmd_engine_new();
	assert_non_null(eng);
	assert_int_equal(engine_add_device(eng, "echo", &echo_fops, NULL), 0);
	assert_int_equal(engine_add_device(eng, "plain", &plain_fops, NULL), 0);
	assert_int_equal(engine_add_device(eng, "thread", &thread_fops, NULL), 0);
	assert_int_equal(engine_add_device(eng, "again", &again_fops, NULL), 0);
	assert_int_equal(engine_add_device(eng, "inline", &inline_fops, NULL), 0);
	assert_int_equal(engine_add_device(eng, "echo", &echo_fops, NULL), -EEXIST);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	ucmd_engine_free(eng);
	return 0;
}

static struct io_uring_sqe *cmd_sqe(struct ucmd_ring *ring, int fd, uint32_t op)
{
	struct io_uring_sqe *sqe = ucmd_get_sqe(ring);

	ucmd_prep_uring_cmd(sqe, (int)op, fd);
	if (ring->flags & IORING_SETUP_SQE128)
		memset(sqe->cmd, 0, 80);
	sqe->user_data = op;
	return sqe;
}

static void test_result_and_res2(void **state)
{
	struct ucmd_ring ring;
	struct cqe_copy c;
	int fd = ucmd_open(eng, "echo", O_RDWR);

	(void)state;
	ring_setup(eng, &ring, 4, IORING_SETUP_SQE128 | IORING_SETUP_CQE32);
	struct io_uring_sqe *sqe = cmd_sqe(&ring, fd, 1);
	uint8_t *cmd = ucmd_sqe_cmd(sqe);
	for (int i = 0; i < 80; i++)
		cmd[i] = (uint8_t)(i + 3);
	assert_int_equal(submit_one(&ring, &c), 3);
	uint64_t want;
	memcpy(&want, cmd + 8, 8);
	assert_true(c.big[0] == want);
	assert_true(echo.last_flags & IO_URING_F_SQE128);
	assert_true(echo.last_flags & IO_URING_F_CQE32);
	assert_true(echo.last_flags & IO_URING_F_NONBLOCK);
	assert_memory_equal(echo.seen, cmd, 80);
	/* the provider read a private copy, not the shared ring */
	assert_true((const void *)echo.sqe_ptr < ring.sq.ring_ptr ||
		    (const char *)echo.sqe_ptr >= (char *)ring.sq.ring_ptr + ring.sq.ring_sz);
	ucmd_queue_exit(&ring);
	ucmd_close(eng, fd);
}

/* On a 64-byte ring only the 16-byte command exists; res2 has nowhere to go. */
static void test_small_ring(void **state)
{
	struct ucmd_ring ring;
	struct cqe_copy c;
	int fd = ucmd_open(eng, "echo", O_RDWR);

	(void)state;
	ring_setup(eng, &ring, 4, 0);
	struct io_uring_sqe *sqe = cmd_sqe(&ring, fd, 1);
	sqe->cmd[0] = 9;
	assert_int_equal(submit_one(&ring, &c), 9);
	assert_false(echo.last_flags & IO_URING_F_SQE128);
	assert_false(echo.last_flags & IO_URING_F_CQE32);
	ucmd_queue_exit(&ring);
	ucmd_close(eng, fd);
}

static void test_prep_checks(void **state)
{
	struct ucmd_ring ring;
	struct cqe_copy c;
	int fd = ucmd_open(eng, "echo", O_RDWR);
	int pfd = ucmd_open(eng, "plain", O_RDWR);

	(void)state;
	ring_setup(eng, &ring, 4, IORING_SETUP_SQE128 | IORING_SETUP_CQE32);
	unsigned before = echo.calls;

	cmd_sqe(&ring, pfd, 1);
	assert_int_equal(submit_one(&ring, &c), -EOPNOTSUPP);
	cmd_sqe(&ring, fd, 1)->__pad1 = 1;
	assert_int_equal(submit_one(&ring, &c), -EINVAL);
	cmd_sqe(&ring, fd, 1)->uring_cmd_flags = 2;
	assert_int_equal(submit_one(&ring, &c), -EINVAL);
	struct io_uring_sqe *sqe = cmd_sqe(&ring, fd, 1);
	sqe->uring_cmd_flags = IORING_URING_CMD_FIXED;
	sqe->buf_index = 0;	/* nothing registered */
	assert_int_equal(submit_one(&ring, &c), -EFAULT);
	cmd_sqe(&ring, 999, 1);
	assert_int_equal(submit_one(&ring, &c), -EBADF);
	assert_int_equal(echo.calls, before);	/* none reached the provider */

	/* ioprio is allowed on uring_cmd (seed 008) */
	sqe = cmd_sqe(&ring, fd, 1);
	sqe->ioprio = 3;
	sqe->cmd[0] = 0;
	assert_int_equal(submit_one(&ring, &c), 0);
	assert_int_equal(echo.calls, before + 1);
	/* buf_index without FIXED is ignored, as Linux's io_uring_cmd_prep ignores it */
	sqe = cmd_sqe(&ring, fd, 1);
	sqe->buf_index = 3;
	sqe->cmd[0] = 4;
	assert_int_equal(submit_one(&ring, &c), 4);
	assert_int_equal(echo.calls, before + 2);

	/* a registered buffer makes FIXED valid */
	static char buf[4096];
	struct iovec iov = { buf, sizeof(buf) };
	assert_int_equal(ucmd_register_buffers(&ring, &iov, 1), 0);
	sqe = cmd_sqe(&ring, fd, 1);
	sqe->uring_cmd_flags = IORING_URING_CMD_FIXED;
	sqe->cmd[0] = 5;
	assert_int_equal(submit_one(&ring, &c), 5);
	ucmd_queue_exit(&ring);
	ucmd_close(eng, fd);
	ucmd_close(eng, pfd);
}

static void test_complete_from_other_thread(void **state)
{
	struct ucmd_ring ring;
	struct cqe_copy c;
	int fd = ucmd_open(eng, "thread", O_RDWR);

	(void)state;
	ring_setup(eng, &ring, 4, IORING_SETUP_SQE128 | IORING_SETUP_CQE32);
	for (int i = 0; i < 50; i++) {
		cmd_sqe(&ring, fd, 1);
		assert_int_equal(submit_one(&ring, &c), 7);
		assert_true(c.big[0] == 0x1122334455667788ull);
		pthread_join(later_thread, NULL);
	}
	ucmd_queue_exit(&ring);
	ucmd_close(eng, fd);
}

static void test_eagain_retry_sees_snapshot(void **state)
{
	struct ucmd_ring ring;
	struct cqe_copy c;
	int fd = ucmd_open(eng, "again", O_RDWR);

	(void)state;
	ring_setup(eng, &ring, 4, IORING_SETUP_SQE128 | IORING_SETUP_CQE32);
	struct io_uring_sqe *sqe = cmd_sqe(&ring, fd, 0x5a);
	for (int i = 0; i < 80; i++)
		sqe->cmd[i] = (uint8_t)(0xc0 ^ i);
	assert_int_equal(ucmd_submit(&ring), 1);
	assert_int_equal(atomic_load(&agn.tries) >= 1, 1);
	/* the application reuses its SQE memory while the retry is pending */
	memset(sqe, 0xee, 128);
	atomic_store(&agn.scribbled, 1);
	reap(&ring, &c, 1);
	assert_int_equal(c.res, 0);
	assert_int_equal(atomic_load(&agn.tries), 2);
	assert_false(agn.retry_flags & IO_URING_F_NONBLOCK);
	ucmd_queue_exit(&ring);
	ucmd_close(eng, fd);
}

/*
 * Requests that complete inline are posted together at the end of the
 * submission. A batch meets a CQ with room for only part of it, mixes
 * fixed and plain files, a skipped success and a failure that is not
 * skipped, on requests recycled from ones that carried a res2: every CQE
 * comes out once, in order, with this request's res and no stale extra.
 */
static void batched_flush_overflow(unsigned flags)
{
	struct ucmd_ring ring;
	struct cqe_copy c[16];
	int fd = ucmd_open(eng, "inline", O_RDWR), efd = ucmd_open(eng, "echo", O_RDWR);
	unsigned posted = 0;

	/* SQ 4, CQ 8 */
	ring_setup(eng, &ring, 4, flags);
	assert_int_equal(ucmd_register_files(&ring, &fd, 1), 0);
	/* four requests whose res2 was set: they are the ones recycled below */
	for (uint32_t i = 0; i < 4; i++) {
		struct io_uring_sqe *sqe = cmd_sqe(&ring, efd, 100 + i);
		memset(ucmd_sqe_cmd(sqe), 0x5a, 16);
	}
	assert_int_equal(ucmd_submit(&ring), 4);
	reap(&ring, c, 4);
	if (flags & IORING_SETUP_CQE32)
		assert_int_equal(c[0].big[0], 0x5a5a5a5a5a5a5a5aull);

	/* three batches of four, nothing reaped: the third finds room for none */
	for (uint32_t i = 0; i < 12; i++) {
		bool plain = i == 5, skip = i == 2 || i == 9, fail = i == 9 || i == 10;
		struct io_uring_sqe *sqe = cmd_sqe(&ring, plain ? fd : 0, i);

		memset(ucmd_sqe_cmd(sqe), 0, 16);
		((uint8_t *)ucmd_sqe_cmd(sqe))[0] = fail ? 0xff : (uint8_t)(10 + i);
		sqe->flags = (plain ? 0 : IOSQE_FIXED_FILE) | (skip ? IOSQE_CQE_SKIP_SUCCESS : 0);
		if (i % 4 == 3)
			assert_int_equal(ucmd_submit(&ring), 4);
	}
	assert_int_equal(ucmd_cq_ready(&ring), 8);
	assert_true(*ring.sq.kflags & IORING_SQ_CQ_OVERFLOW);
	assert_int_equal(*ring.cq.koverflow, 0);
	/* 12 less the skipped success (2); 9 failed, so it is posted */
	reap(&ring, c, 11);
	for (uint32_t i = 0; i < 12; i++) {
		bool fail = i == 9 || i == 10;

		if (i == 2)
			continue;
		assert_int_equal(c[posted].user_data, i);
		assert_int_equal(c[posted].res, fail ? -EIO : (int32_t)(10 + i));
		assert_int_equal(c[posted].flags, 0);
		assert_int_equal(c[posted].big[0], 0);
		assert_int_equal(c[posted].big[1], 0);
		posted++;
	}
	assert_false(*ring.sq.kflags & IORING_SQ_CQ_OVERFLOW);
	assert_int_equal(ucmd_cq_ready(&ring), 0);
	ucmd_queue_exit(&ring);
	ucmd_close(eng, fd);
	ucmd_close(eng, efd);
}

static void test_batched_flush_overflow(void **state)
{
	(void)state;
	batched_flush_overflow(0);
	batched_flush_overflow(IORING_SETUP_SQE128 | IORING_SETUP_CQE32);
}

/*
 * A flushed batch whose CQEs all take the flush's short way but whose last
 * request posts none (a skipped success): the CQEs before it must still
 * be published when the submission ends, not wait for some later CQE.
 */
static void test_flush_ends_with_skipped(void **state)
{
	struct ucmd_ring ring;
	struct cqe_copy c[2];
	int fd = ucmd_open(eng, "inline", O_RDWR);

	(void)state;
	ring_setup(eng, &ring, 4, IORING_SETUP_SQE128 | IORING_SETUP_CQE32);
	assert_int_equal(ucmd_register_files(&ring, &fd, 1), 0);
	for (int round = 0; round < 3; round++) {
		/* ioprio: the general path, whose inline results are collected */
		for (uint32_t i = 0; i < 3; i++) {
			struct io_uring_sqe *sqe = cmd_sqe(&ring, 0, i);

			memset(ucmd_sqe_cmd(sqe), 0, 16);
			((uint8_t *)ucmd_sqe_cmd(sqe))[0] = (uint8_t)(60 + i);
			sqe->ioprio = 1;
			sqe->flags = IOSQE_FIXED_FILE | (i == 2 ? IOSQE_CQE_SKIP_SUCCESS : 0);
		}
		assert_int_equal(ucmd_submit(&ring), 3);
		assert_int_equal(ucmd_cq_ready(&ring), 2);
		reap(&ring, c, 2);
		for (uint32_t i = 0; i < 2; i++) {
			assert_int_equal(c[i].user_data, i);
			assert_int_equal(c[i].res, 60 + (int32_t)i);
		}
	}
	ucmd_queue_exit(&ring);
	ucmd_close(eng, fd);
}

/*
 * The same for completions handed back as task work (echo completes from
 * inside its issue): a run of task work posts them together. A linked
 * pair in a batch (its head completes at once, so that the next member
 * starts) and a CQ with room for part of a batch keep every CQE, in
 * order, each with its own res and res2.
 */
static void test_task_work_flush_overflow(void **state)
{
	struct ucmd_ring ring;
	struct cqe_copy c[12];
	int fd = ucmd_open(eng, "echo", O_RDWR);

	(void)state;
	ring_setup(eng, &ring, 4, IORING_SETUP_SQE128 | IORING_SETUP_CQE32);
	for (uint32_t i = 0; i < 12; i++) {
		struct io_uring_sqe *sqe = cmd_sqe(&ring, fd, i);
		uint8_t *cmd = ucmd_sqe_cmd(sqe);

		cmd[0] = (uint8_t)(20 + i);
		memset(cmd + 8, (int)(0x30 + i), 8);
		if (i == 5)
			sqe->flags = IOSQE_IO_LINK;
		if (i % 4 == 3)
			assert_int_equal(ucmd_submit(&ring), 4);
	}
	assert_int_equal(ucmd_cq_ready(&ring), 8);
	assert_true(*ring.sq.kflags & IORING_SQ_CQ_OVERFLOW);
	reap(&ring, c, 12);
	/* 6 is issued only when 5 completes, behind 7's completion */
	static const uint32_t order[12] = { 0, 1, 2, 3, 4, 5, 7, 6, 8, 9, 10, 11 };
	for (uint32_t k = 0; k < 12; k++) {
		uint32_t i = order[k];
		uint64_t res2;

		memset(&res2, (int)(0x30 + i), 8);
		assert_int_equal(c[k].user_data, i);
		assert_int_equal(c[k].res, 20 + i);
		assert_int_equal(c[k].big[0], res2);
		assert_int_equal(c[k].big[1], 0);
	}
	assert_false(*ring.sq.kflags & IORING_SQ_CQ_OVERFLOW);
	assert_int_equal(*ring.cq.koverflow, 0);
	ucmd_queue_exit(&ring);
	ucmd_close(eng, fd);
}

static void test_open_close(void **state)
{
	(void)state;
	assert_int_equal(ucmd_open(eng, "nosuch", O_RDWR), -ENOENT);
	assert_int_equal(ucmd_open(eng, "echo", 3), -EINVAL);
	assert_int_equal(ucmd_close(eng, 4000), -EBADF);
	int fd = ucmd_open(eng, "echo", O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(engine_remove_device(eng, "echo"), -EBUSY);
	assert_int_equal(ucmd_close(eng, fd), 0);
	assert_int_equal(ucmd_close(eng, fd), -EBADF);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_result_and_res2),
		cmocka_unit_test(test_small_ring),
		cmocka_unit_test(test_prep_checks),
		cmocka_unit_test(test_complete_from_other_thread),
		cmocka_unit_test(test_eagain_retry_sees_snapshot),
		cmocka_unit_test(test_batched_flush_overflow),
		cmocka_unit_test(test_flush_ends_with_skipped),
		cmocka_unit_test(test_task_work_flush_overflow),
		cmocka_unit_test(test_open_close),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
