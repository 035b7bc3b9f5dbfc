/* SPDX-License-Identifier: MIT */
/*
 * The submission's fast path for the common uring_cmd (submit.c,
 * io_submit_uring_cmd): a clean SQE on a fixed file goes from its snapshot
 * to its CQE in one piece. Every SQE it does not take must come out as the
 * general path makes it: each case runs on a fixed file and on the same
 * device's plain fd, and both must give the same CQEs. Then what the fast
 * path itself must get right: the order of CQEs when a provider completes
 * another request during its issue, chains and drains open around it, a
 * denying security module, an IOPOLL ring, requests that keep something
 * to release.
 */
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>
#include <cmocka.h>

#include "core/core.h"
#include "core/cred.h"
#include "core/uring_cmd.h"
#include "ringutil.h"
#include "security/hooks.h"

/* ---- test providers ------------------------------------------------------ */

static unsigned inline_calls;

/* Completes inline: res is the first command byte, -EIO for 0xff. */
static int inline_uring_cmd(struct io_uring_cmd *cmd, unsigned issue_flags)
{
	const uint8_t *c = io_uring_sqe_cmd(cmd->sqe);

	(void)issue_flags;
	inline_calls++;
	return c[0] == 0xff ? -EIO : c[0];
}

/* Completes from inside its issue with res = first byte, res2 = bytes 8..15. */
static int echo_uring_cmd(struct io_uring_cmd *cmd, unsigned issue_flags)
{
	const uint8_t *c = io_uring_sqe_cmd(cmd->sqe);
	uint64_t res2;

	(void)issue_flags;
	memcpy(&res2, c + 8, 8);
	io_uring_cmd_done(cmd, c[0], res2);
	return -EIOCBQUEUED;
}

/*
 * First byte 1: kept (-EIOCBQUEUED) until the test or a later command
 * completes it. First byte 2: completes the kept one with 11, then itself
 * inline with 22. First byte 3: completes the kept one with 11 and is
 * kept in its place. Any other: inline with that byte.
 */
static struct io_uring_cmd *held;

static int hold_uring_cmd(struct io_uring_cmd *cmd, unsigned issue_flags)
{
	const uint8_t *c = io_uring_sqe_cmd(cmd->sqe);

	(void)issue_flags;
	if (c[0] == 1) {
		held = cmd;
		return -EIOCBQUEUED;
	}
	if (c[0] == 2 || c[0] == 3) {
		io_uring_cmd_done(held, 11, 0);
		held = NULL;
		if (c[0] == 3) {
			held = cmd;
			return -EIOCBQUEUED;
		}
		return 22;
	}
	return c[0];
}

/* -EAGAIN under NONBLOCK, then the first byte from the worker's retry. */
static int again_uring_cmd(struct io_uring_cmd *cmd, unsigned issue_flags)
{
	const uint8_t *c = io_uring_sqe_cmd(cmd->sqe);

	if (issue_flags & IO_URING_F_NONBLOCK)
		return -EAGAIN;
	return c[0];
}

/* Attaches a snapshot (freed with the request) and completes inline with 5. */
static int snap_uring_cmd(struct io_uring_cmd *cmd, unsigned issue_flags)
{
	(void)issue_flags;
	io_uring_cmd_set_snap(cmd, malloc(64));
	return io_uring_cmd_snap(cmd) ? 5 : -ENOMEM;
}

/* Records the credentials its request acts as; completes inline with 0. */
static const struct ucmd_cred *seen_creds;

static int creds_uring_cmd(struct io_uring_cmd *cmd, unsigned issue_flags)
{
	(void)issue_flags;
	seen_creds = cmd_to_req(cmd)->creds;
	return 0;
}

/* Records the thread its request is issued on; completes inline with 0. */
static pthread_t issued_on;

static int tid_uring_cmd(struct io_uring_cmd *cmd, unsigned issue_flags)
{
	(void)cmd;
	(void)issue_flags;
	issued_on = pthread_self();
	return 0;
}

static const struct ucmd_file_ops inline_fops = { .name = "inline", .uring_cmd = inline_uring_cmd };
static const struct ucmd_file_ops echo_fops = { .name = "echo", .uring_cmd = echo_uring_cmd };
static const struct ucmd_file_ops hold_fops = { .name = "hold", .uring_cmd = hold_uring_cmd };
static const struct ucmd_file_ops again_fops = { .name = "again", .uring_cmd = again_uring_cmd };
static const struct ucmd_file_ops snap_fops = { .name = "snap", .uring_cmd = snap_uring_cmd };
static const struct ucmd_file_ops plain_fops = { .name = "plain" };
static const struct ucmd_file_ops creds_fops = { .name = "creds", .uring_cmd = creds_uring_cmd };
static const struct ucmd_file_ops tid_fops = { .name = "tid", .uring_cmd = tid_uring_cmd };

/* A module that denies cmd_op 0xd0. */
static int deny_cmd(void *priv, const struct io_uring_cmd *cmd)
{
	(void)priv;
	return cmd->cmd_op == 0xd0 ? -EACCES : 0;
}

static const struct ucmd_security_ops deny_mod = { .name = "deny", .uring_cmd = deny_cmd };

/* ---- fixture ------------------------------------------------------------- */

static struct ucmd_engine *eng;

static int setup(void **state)
{
	(void)state;
	eng = ucmd_engine_new();
	assert_non_null(eng);
	assert_int_equal(engine_add_device(eng, "inline", &inline_fops, NULL), 0);
	assert_int_equal(engine_add_device(eng, "echo", &echo_fops, NULL), 0);
	assert_int_equal(engine_add_device(eng, "hold", &hold_fops, NULL), 0);
	assert_int_equal(engine_add_device(eng, "again", &again_fops, NULL), 0);
	assert_int_equal(engine_add_device(eng, "snap", &snap_fops, NULL), 0);
	assert_int_equal(engine_add_device(eng, "plain", &plain_fops, NULL), 0);
	assert_int_equal(engine_add_device(eng, "creds", &creds_fops, NULL), 0);
	assert_int_equal(engine_add_device(eng, "tid", &tid_fops, NULL), 0);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	ucmd_engine_free(eng);
	return 0;
}

/* A clean uring_cmd on fd (a fixed slot with fixed), first command byte b. */
static struct io_uring_sqe *cmd_sqe(struct ucmd_ring *ring, int fd, bool fixed, uint64_t ud,
				    uint8_t b)
{
	struct io_uring_sqe *sqe = ucmd_get_sqe(ring);

	assert_non_null(sqe);
	ucmd_prep_uring_cmd(sqe, 0x42, fd);
	if (ring->flags & IORING_SETUP_SQE128)
		memset(sqe->cmd, 0, 80);
	sqe->cmd[0] = b;
	sqe->flags = fixed ? IOSQE_FIXED_FILE : 0;
	sqe->user_data = ud;
	return sqe;
}

/* ---- every SQE the fast path leaves to the general path ------------------ */

enum variant {
	V_CLEAN, V_PAD1, V_CMD_FLAGS, V_CMD_FIXED_NOBUF, V_BUF_INDEX, V_IOPRIO,
	V_PERSONALITY, V_BAD_PERSONALITY, V_SKIP_OK, V_SKIP_FAIL, V_ASYNC, V_DRAIN,
	V_UNKNOWN_FLAG, V_BUFFER_SELECT, V_FAIL, V_NR
};

/* One SQE of variant v; returns how many CQEs it must give (0 or 1). */
static unsigned variant_sqe(struct ucmd_ring *ring, int fd, bool fixed, enum variant v,
			    int personality)
{
	struct io_uring_sqe *sqe = cmd_sqe(ring, fd, fixed, 1000 + v, (uint8_t)(30 + v));

	switch (v) {
	case V_CLEAN: break;
	case V_PAD1: sqe->__pad1 = 1; break;
	case V_CMD_FLAGS: sqe->uring_cmd_flags = 2; break;
	case V_CMD_FIXED_NOBUF: sqe->uring_cmd_flags = IORING_URING_CMD_FIXED; break;
	case V_BUF_INDEX: sqe->buf_index = 3; break;
	case V_IOPRIO: sqe->ioprio = 3; break;
	case V_PERSONALITY: sqe->personality = (uint16_t)personality; break;
	case V_BAD_PERSONALITY: sqe->personality = (uint16_t)(personality + 7); break;
	case V_SKIP_OK: sqe->flags |= IOSQE_CQE_SKIP_SUCCESS; return 0;
	case V_SKIP_FAIL: sqe->flags |= IOSQE_CQE_SKIP_SUCCESS; sqe->cmd[0] = 0xff; break;
	case V_ASYNC: sqe->flags |= IOSQE_ASYNC; break;
	case V_DRAIN: sqe->flags |= IOSQE_IO_DRAIN; break;
	case V_UNKNOWN_FLAG: sqe->flags |= 0x80; break;
	case V_BUFFER_SELECT: sqe->flags |= IOSQE_BUFFER_SELECT; break;
	case V_FAIL: sqe->cmd[0] = 0xff; break;
	case V_NR: break;
	}
	return 1;
}

/* Every variant, one at a time, then all in one batch: the CQEs of fd. */
static unsigned run_variants(struct ucmd_ring *ring, int fd, bool fixed, int personality,
			     struct cqe_copy *out)
{
	unsigned n = 0, want = 0;

	for (int v = 0; v < V_NR; v++) {
		unsigned k = variant_sqe(ring, fd, fixed, (enum variant)v, personality);

		assert_int_equal(ucmd_submit(ring), 1);
		reap(ring, out + n, k);
		n += k;
	}
	for (int v = 0; v < V_NR; v++)
		want += variant_sqe(ring, fd, fixed, (enum variant)v, personality);
	assert_int_equal(ucmd_submit(ring), V_NR);
	reap(ring, out + n, want);
	n += want;
	assert_int_equal(ucmd_cq_ready(ring), 0);
	return n;
}

static void variants_match(unsigned flags)
{
	struct ucmd_ring ring;
	struct cqe_copy plain[2 * V_NR], fixed[2 * V_NR];
	int fd = ucmd_open(eng, "inline", O_RDWR);
	unsigned np, nf;
	int pers;

	ring_setup(eng, &ring, 32, flags | IORING_SETUP_SUBMIT_ALL);
	assert_int_equal(ucmd_register_files(&ring, &fd, 1), 0);
	pers = ucmd_register_personality(&ring);
	assert_true(pers > 0);
	np = run_variants(&ring, fd, false, pers, plain);
	nf = run_variants(&ring, 0, true, pers, fixed);
	assert_int_equal(np, nf);
	for (unsigned i = 0; i < np; i++) {
		assert_int_equal(fixed[i].user_data, plain[i].user_data);
		assert_int_equal(fixed[i].res, plain[i].res);
		assert_int_equal(fixed[i].flags, 0);
		assert_int_equal(fixed[i].big[0], 0);
		assert_int_equal(fixed[i].big[1], 0);
	}
	/* what the general path says, so that "the same" is not "both wrong" */
	static const int32_t want[V_NR] = {
		[V_CLEAN] = 30, [V_PAD1] = -EINVAL, [V_CMD_FLAGS] = -EINVAL,
		[V_CMD_FIXED_NOBUF] = -EFAULT, [V_BUF_INDEX] = 30 + V_BUF_INDEX,
		[V_IOPRIO] = 30 + V_IOPRIO, [V_PERSONALITY] = 30 + V_PERSONALITY,
		[V_BAD_PERSONALITY] = -EINVAL, [V_SKIP_FAIL] = -EIO, [V_ASYNC] = 30 + V_ASYNC,
		[V_DRAIN] = 30 + V_DRAIN, [V_UNKNOWN_FLAG] = -EINVAL,
		[V_BUFFER_SELECT] = -EOPNOTSUPP, [V_FAIL] = -EIO,
	};
	for (unsigned i = 0; i < np; i++)
		assert_int_equal(fixed[i].res, want[fixed[i].user_data - 1000]);
	ucmd_queue_exit(&ring);
	ucmd_close(eng, fd);
}

static void test_variants_match_plain_fd(void **state)
{
	(void)state;
	variants_match(0);
	variants_match(IORING_SETUP_SQE128 | IORING_SETUP_CQE32);
	/* who may enter is checked first; the submission is the same */
	variants_match(IORING_SETUP_SQE128 | IORING_SETUP_CQE32 | IORING_SETUP_SINGLE_ISSUER |
		       IORING_SETUP_DEFER_TASKRUN);
}

/* Fixed slots the fast path must not take: out of range, empty, a file without uring_cmd. */
static void test_bad_fixed_files(void **state)
{
	struct ucmd_ring ring;
	struct cqe_copy c;
	int fd = ucmd_open(eng, "inline", O_RDWR), pfd = ucmd_open(eng, "plain", O_RDWR);

	(void)state;
	ring_setup(eng, &ring, 4, IORING_SETUP_SQE128 | IORING_SETUP_CQE32);
	assert_int_equal(ucmd_register_files_sparse(&ring, 3), 0);
	assert_int_equal(ucmd_register_files_update(&ring, 0, &fd, 1), 1);
	assert_int_equal(ucmd_register_files_update(&ring, 2, &pfd, 1), 1);
	unsigned before = inline_calls;
	cmd_sqe(&ring, 1, true, 1, 9);		/* empty slot */
	assert_int_equal(submit_one(&ring, &c), -EBADF);
	cmd_sqe(&ring, 3, true, 2, 9);		/* past the table */
	assert_int_equal(submit_one(&ring, &c), -EBADF);
	cmd_sqe(&ring, -1, true, 3, 9);
	assert_int_equal(submit_one(&ring, &c), -EBADF);
	cmd_sqe(&ring, 2, true, 4, 9);		/* no ->uring_cmd */
	assert_int_equal(submit_one(&ring, &c), -EOPNOTSUPP);
	assert_int_equal(inline_calls, before);
	cmd_sqe(&ring, 0, true, 5, 9);
	assert_int_equal(submit_one(&ring, &c), 9);
	assert_int_equal(c.user_data, 5);
	ucmd_queue_exit(&ring);
	ucmd_close(eng, fd);
	ucmd_close(eng, pfd);
}

/* ---- what the fast path must get right itself ---------------------------- */

/*
 * A provider completes an earlier request from inside a later one's issue
 * (a controller reaping its queue at a doorbell), then the later one
 * inline: the earlier CQE is first. Posting the inline result at once
 * while the earlier one waits to be posted would swap them.
 */
static void test_order_with_completion_during_issue(void **state)
{
	struct ucmd_ring ring;
	struct cqe_copy c[3];
	int fd = ucmd_open(eng, "hold", O_RDWR);

	(void)state;
	ring_setup(eng, &ring, 8, IORING_SETUP_SQE128 | IORING_SETUP_CQE32);
	assert_int_equal(ucmd_register_files(&ring, &fd, 1), 0);
	for (int round = 0; round < 3; round++) {
		cmd_sqe(&ring, 0, true, 1, 1);
		assert_int_equal(ucmd_submit(&ring), 1);
		assert_int_equal(ucmd_cq_ready(&ring), 0);
		assert_non_null(held);
		/* alone in its batch, and behind a request that completes at once */
		if (round == 1)
			cmd_sqe(&ring, 0, true, 3, 33);
		cmd_sqe(&ring, 0, true, 2, 2);
		assert_int_equal(ucmd_submit(&ring), round == 1 ? 2 : 1);
		reap(&ring, c, round == 1 ? 3 : 2);
		unsigned k = 0;
		if (round == 1) {
			assert_int_equal(c[k].user_data, 3);
			assert_int_equal(c[k++].res, 33);
		}
		assert_int_equal(c[k].user_data, 1);
		assert_int_equal(c[k++].res, 11);
		assert_int_equal(c[k].user_data, 2);
		assert_int_equal(c[k].res, 22);
	}
	ucmd_queue_exit(&ring);
	ucmd_close(eng, fd);
}

/*
 * A provider frees a request during a later one's issue (it completes a
 * chain's head, which completes at once so that the chain goes on), and
 * the later one lives on: the request it was given is no longer the first
 * of the free ones when it is taken off their list. The ring keeps
 * working with every request where it belongs.
 */
static void test_request_freed_during_issue(void **state)
{
	struct ucmd_ring ring;
	struct cqe_copy c[2];
	int hfd = ucmd_open(eng, "hold", O_RDWR), ifd = ucmd_open(eng, "inline", O_RDWR);
	int fds[2] = { hfd, ifd };

	(void)state;
	ring_setup(eng, &ring, 8, IORING_SETUP_SQE128 | IORING_SETUP_CQE32);
	assert_int_equal(ucmd_register_files(&ring, fds, 2), 0);
	cmd_sqe(&ring, 0, true, 9, 9);
	assert_int_equal(submit_one(&ring, c), 9);
	for (int round = 0; round < 4; round++) {
		cmd_sqe(&ring, 0, true, 1, 1)->flags |= IOSQE_IO_LINK;
		cmd_sqe(&ring, 1, true, 2, 44);
		assert_int_equal(ucmd_submit(&ring), 2);
		assert_int_equal(ucmd_cq_ready(&ring), 0);
		cmd_sqe(&ring, 0, true, 3, 3);
		assert_int_equal(ucmd_submit(&ring), 1);
		reap(&ring, c, 2);
		assert_int_equal(c[0].user_data, 1);
		assert_int_equal(c[0].res, 11);
		assert_int_equal(c[1].user_data, 2);
		assert_int_equal(c[1].res, 44);
		/* a batch that needs every free request, while 3 is still held */
		for (uint64_t i = 0; i < 6; i++)
			cmd_sqe(&ring, 1, true, 10 + i, (uint8_t)(50 + i));
		assert_int_equal(ucmd_submit(&ring), 6);
		for (uint64_t i = 0; i < 6; i++) {
			reap(&ring, c, 1);
			assert_int_equal(c[0].user_data, 10 + i);
			assert_int_equal(c[0].res, 50 + (int)i);
		}
		assert_non_null(held);
		io_uring_cmd_done(held, 12, 0);
		held = NULL;
		reap(&ring, c, 1);
		assert_int_equal(c[0].user_data, 3);
		assert_int_equal(c[0].res, 12);
	}
	ucmd_queue_exit(&ring);
	ucmd_close(eng, hfd);
	ucmd_close(eng, ifd);
}

/*
 * A clean SQE behind an open chain is the chain's last member: a failed
 * head cancels it. One behind a drain waits for the drain.
 */
static void test_chain_and_drain_before(void **state)
{
	struct ucmd_ring ring;
	struct cqe_copy c[3];
	int ifd = ucmd_open(eng, "inline", O_RDWR), hfd = ucmd_open(eng, "hold", O_RDWR);
	int fds[2] = { ifd, hfd };

	(void)state;
	ring_setup(eng, &ring, 8, IORING_SETUP_SQE128 | IORING_SETUP_CQE32);
	assert_int_equal(ucmd_register_files(&ring, fds, 2), 0);
	/* the files' security answers cached: from now on clean SQEs may take the fast path */
	for (int i = 0; i < 2; i++) {
		cmd_sqe(&ring, i, true, 9, 9);
		assert_int_equal(submit_one(&ring, c), 9);
	}

	cmd_sqe(&ring, 0, true, 1, 0xff)->flags |= IOSQE_IO_LINK;
	cmd_sqe(&ring, 0, true, 2, 7);
	assert_int_equal(ucmd_submit(&ring), 2);
	reap(&ring, c, 2);
	assert_int_equal(c[0].res, -EIO);
	assert_int_equal(c[1].user_data, 2);
	assert_int_equal(c[1].res, -ECANCELED);

	/* 1 stays in flight; 2 drains behind it; 3, clean, waits behind 2 */
	cmd_sqe(&ring, 1, true, 1, 1);
	cmd_sqe(&ring, 0, true, 2, 8)->flags |= IOSQE_IO_DRAIN;
	cmd_sqe(&ring, 0, true, 3, 9);
	assert_int_equal(ucmd_submit(&ring), 3);
	assert_int_equal(ucmd_cq_ready(&ring), 0);
	assert_non_null(held);
	io_uring_cmd_done(held, 11, 0);
	held = NULL;
	reap(&ring, c, 3);
	for (unsigned i = 0; i < 3; i++)
		assert_int_equal(c[i].user_data, i + 1);
	assert_int_equal(c[0].res, 11);
	assert_int_equal(c[1].res, 8);
	assert_int_equal(c[2].res, 9);
	ucmd_queue_exit(&ring);
	ucmd_close(eng, ifd);
	ucmd_close(eng, hfd);
}

/*
 * A clean SQE submitted alone (the enter's one-SQE path) while a drain is
 * pending waits for it as one in a batch does: the drained request still
 * deferred behind one in flight, then running with what follows held
 * back (Linux's drain_next).
 */
static void test_alone_behind_drain(void **state)
{
	struct ucmd_ring ring;
	struct cqe_copy c[3];
	int ifd = ucmd_open(eng, "inline", O_RDWR), hfd = ucmd_open(eng, "hold", O_RDWR);
	int fds[2] = { ifd, hfd };

	(void)state;
	ring_setup(eng, &ring, 8, IORING_SETUP_SQE128 | IORING_SETUP_CQE32);
	assert_int_equal(ucmd_register_files(&ring, fds, 2), 0);
	for (int i = 0; i < 2; i++) {
		cmd_sqe(&ring, i, true, 9, 9);
		assert_int_equal(submit_one(&ring, c), 9);
	}

	/* 1 in flight; 2 drains behind it; 3, clean, waits behind 2: one enter each */
	cmd_sqe(&ring, 1, true, 1, 1);
	assert_int_equal(ucmd_submit(&ring), 1);
	assert_non_null(held);
	cmd_sqe(&ring, 0, true, 2, 8)->flags |= IOSQE_IO_DRAIN;
	assert_int_equal(ucmd_submit(&ring), 1);
	cmd_sqe(&ring, 0, true, 3, 9);
	assert_int_equal(ucmd_submit(&ring), 1);
	assert_int_equal(ucmd_cq_ready(&ring), 0);
	io_uring_cmd_done(held, 11, 0);
	held = NULL;
	reap(&ring, c, 3);
	for (unsigned i = 0; i < 3; i++)
		assert_int_equal(c[i].user_data, i + 1);
	assert_int_equal(c[0].res, 11);
	assert_int_equal(c[1].res, 8);
	assert_int_equal(c[2].res, 9);

	/* 2 drains behind 1 and is kept when it starts: 3 waits for 2 to complete */
	cmd_sqe(&ring, 1, true, 1, 1);
	assert_int_equal(ucmd_submit(&ring), 1);
	cmd_sqe(&ring, 1, true, 2, 1)->flags |= IOSQE_IO_DRAIN;
	assert_int_equal(ucmd_submit(&ring), 1);
	assert_int_equal(ucmd_cq_ready(&ring), 0);
	io_uring_cmd_done(held, 11, 0);
	held = NULL;
	/* the wait runs the completion, which starts 2 */
	reap(&ring, c, 1);
	assert_int_equal(c[0].user_data, 1);
	assert_int_equal(c[0].res, 11);
	assert_non_null(held);
	cmd_sqe(&ring, 0, true, 3, 9);
	assert_int_equal(ucmd_submit(&ring), 1);
	assert_int_equal(ucmd_cq_ready(&ring), 0);
	io_uring_cmd_done(held, 12, 0);
	held = NULL;
	reap(&ring, c, 2);
	assert_int_equal(c[0].user_data, 2);
	assert_int_equal(c[0].res, 12);
	assert_int_equal(c[1].user_data, 3);
	assert_int_equal(c[1].res, 9);
	ucmd_queue_exit(&ring);
	ucmd_close(eng, ifd);
	ucmd_close(eng, hfd);
}

/*
 * An SQ index outside the SQE array, alone in its enter, is dropped,
 * counted and consumed: the SQE after it is the next one taken, once.
 */
static void test_dropped_alone(void **state)
{
	struct ucmd_ring ring;
	struct cqe_copy c;
	int fd = ucmd_open(eng, "inline", O_RDWR);
	unsigned slot;

	(void)state;
	ring_setup(eng, &ring, 4, IORING_SETUP_SQE128 | IORING_SETUP_CQE32);
	assert_int_equal(ucmd_register_files(&ring, &fd, 1), 0);
	cmd_sqe(&ring, 0, true, 1, 5);
	assert_int_equal(submit_one(&ring, &c), 5);
	cmd_sqe(&ring, 0, true, 2, 6);
	slot = (ring.sq.sqe_tail - 1) & ring.sq.ring_mask;
	ring.sq.array[slot] = 1000;
	assert_int_equal(ucmd_submit(&ring), 0);
	assert_int_equal(*ring.sq.kdropped, 1);
	assert_int_equal(ucmd_sq_ready(&ring), 0);
	assert_int_equal(ucmd_cq_ready(&ring), 0);
	ring.sq.array[slot] = slot;
	cmd_sqe(&ring, 0, true, 3, 7);
	assert_int_equal(submit_one(&ring, &c), 7);
	assert_int_equal(c.user_data, 3);
	assert_int_equal(ucmd_cq_ready(&ring), 0);
	assert_int_equal(*ring.sq.kdropped, 1);
	ucmd_queue_exit(&ring);
	ucmd_close(eng, fd);
}

/*
 * One batch: a clean command for each 'c' of pat, a NOP for 'n', an SQ
 * index outside the SQE array for 'x'. Every SQE but the dropped ones
 * must be taken in the one enter and give its CQE in order (user_data
 * from 1 in pat's order), the dropped ones counted and consumed.
 */
static void dropped_in_batch(struct ucmd_ring *ring, const char *pat)
{
	unsigned n = (unsigned)strlen(pat), want = 0, dropped = *ring->sq.kdropped;
	uint64_t ud[8];
	struct cqe_copy c[8];

	for (unsigned i = 0; i < n; i++) {
		struct io_uring_sqe *sqe;

		if (pat[i] == 'n') {
			sqe = ucmd_get_sqe(ring);
			ucmd_prep_nop(sqe);
			sqe->user_data = i + 1;
		} else {
			sqe = cmd_sqe(ring, 0, true, i + 1, (uint8_t)(40 + i));
		}
		if (pat[i] == 'x')
			ring->sq.array[(ring->sq.sqe_tail - 1) & ring->sq.ring_mask] = 1000 + i;
		else
			ud[want++] = i + 1;
	}
	assert_int_equal(ucmd_submit(ring), (int)want);
	assert_int_equal(*ring->sq.kdropped, dropped + (n - want));
	assert_int_equal(ucmd_sq_ready(ring), 0);
	assert_int_equal(ucmd_cq_ready(ring), want);
	reap(ring, c, want);
	for (unsigned i = 0; i < want; i++) {
		assert_int_equal(c[i].user_data, ud[i]);
		assert_int_equal(c[i].res, pat[ud[i] - 1] == 'n' ? 0 : (int)(40 + ud[i] - 1));
	}
	/* the slots of the dropped indexes serve again */
	for (unsigned i = 0; i < ring->sq.ring_entries; i++)
		ring->sq.array[i] = i;
}

/*
 * A bad SQ index at the start, in the middle and at the end of a batch,
 * in each submission loop: the common uring_cmd's (a simple ring's batch
 * of commands), the general one behind a NOP on a simple ring, the
 * general one of a ring that is not simple (an eventfd registered).
 */
static void test_dropped_in_every_loop(void **state)
{
	static const char *const pats[] = { "xcc", "cxc", "ccx", "cxxc", "nxc", "ncx", "xnc" };
	struct ucmd_ring ring;
	int fd = ucmd_open(eng, "inline", O_RDWR);
	int efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);

	(void)state;
	assert_true(efd >= 0);
	ring_setup(eng, &ring, 8, IORING_SETUP_SQE128 | IORING_SETUP_CQE32);
	assert_int_equal(ucmd_register_files(&ring, &fd, 1), 0);
	for (int pass = 0; pass < 2; pass++) {
		if (pass == 1)
			assert_int_equal(ucmd_register_eventfd(&ring, efd), 0);
		for (size_t i = 0; i < sizeof(pats) / sizeof(pats[0]); i++)
			dropped_in_batch(&ring, pats[i]);
	}
	ucmd_queue_exit(&ring);
	ucmd_close(eng, fd);
	close(efd);
}

static void *complete_held(void *arg)
{
	(void)arg;
	io_uring_cmd_done(held, 11, 0);
	return NULL;
}

/*
 * Task work another thread queued (a completion) runs in the next enter,
 * even one whose clean SQE, alone, posts its CQE at once: both CQEs are
 * there when the submit returns.
 */
static void test_alone_runs_task_work(void **state)
{
	struct ucmd_ring ring;
	struct cqe_copy c[2];
	int fd = ucmd_open(eng, "hold", O_RDWR);
	pthread_t t;

	(void)state;
	ring_setup(eng, &ring, 8, IORING_SETUP_SQE128 | IORING_SETUP_CQE32);
	assert_int_equal(ucmd_register_files(&ring, &fd, 1), 0);
	for (int round = 0; round < 3; round++) {
		cmd_sqe(&ring, 0, true, 1, 1);
		assert_int_equal(ucmd_submit(&ring), 1);
		assert_non_null(held);
		assert_int_equal(pthread_create(&t, NULL, complete_held, NULL), 0);
		assert_int_equal(pthread_join(t, NULL), 0);
		held = NULL;
		cmd_sqe(&ring, 0, true, 2, 5);
		assert_int_equal(ucmd_submit(&ring), 1);
		assert_int_equal(ucmd_cq_ready(&ring), 2);
		reap(&ring, c, 2);
		assert_int_equal(c[0].user_data + c[1].user_data, 3);
		for (int i = 0; i < 2; i++)
			assert_int_equal(c[i].res, c[i].user_data == 1 ? 11 : 5);
	}
	ucmd_queue_exit(&ring);
	ucmd_close(eng, fd);
}

/*
 * On an SQPOLL ring ucmd_submit_and_wait only publishes and wakes: the
 * poller issues every request, never the caller's thread.
 */
static void test_sqpoll_issues_on_poller(void **state)
{
	struct ucmd_ring ring;
	struct cqe_copy c;
	int fd = ucmd_open(eng, "tid", O_RDWR);

	(void)state;
	ring_setup(eng, &ring, 8, IORING_SETUP_SQPOLL | IORING_SETUP_SQE128 | IORING_SETUP_CQE32);
	assert_int_equal(ucmd_register_files(&ring, &fd, 1), 0);
	for (uint64_t i = 0; i < 20; i++) {
		issued_on = pthread_self();
		cmd_sqe(&ring, 0, true, i, 0);
		assert_true(ucmd_submit_and_wait(&ring, 1) >= 0);
		reap(&ring, &c, 1);
		assert_int_equal(c.user_data, i);
		assert_int_equal(c.res, 0);
		assert_false(pthread_equal(issued_on, pthread_self()));
	}
	ucmd_queue_exit(&ring);
	ucmd_close(eng, fd);
}

/*
 * Requests act as whoever submits them: credentials changed between two
 * submissions of a clean SQE on a fixed file are the ones the next
 * request carries, alone in its enter or in a batch.
 */
static void test_creds_changed_between_submissions(void **state)
{
	struct ucmd_ring ring;
	struct cqe_copy c[2];
	struct ucmd_cred other;
	int fd = ucmd_open(eng, "creds", O_RDWR);
	uid_t uid;

	(void)state;
	ring_setup(eng, &ring, 4, IORING_SETUP_SQE128 | IORING_SETUP_CQE32);
	assert_int_equal(ucmd_register_files(&ring, &fd, 1), 0);
	cmd_sqe(&ring, 0, true, 1, 0);
	assert_int_equal(submit_one(&ring, c), 0);
	assert_non_null(seen_creds);
	uid = seen_creds->uid;
	current_cred(&other);
	other.uid = other.euid = uid + 1;
	for (unsigned batch = 1; batch <= 2; batch++) {
		cred_override_set(&other);
		cred_changed();
		seen_creds = NULL;
		for (unsigned i = 0; i < batch; i++)
			cmd_sqe(&ring, 0, true, 2, 0);
		assert_int_equal(ucmd_submit(&ring), (int)batch);
		reap(&ring, c, batch);
		assert_non_null(seen_creds);
		assert_int_equal(seen_creds->uid, uid + 1);
		cred_override_set(NULL);
		cred_changed();
		seen_creds = NULL;
		for (unsigned i = 0; i < batch; i++)
			cmd_sqe(&ring, 0, true, 3, 0);
		assert_int_equal(ucmd_submit(&ring), (int)batch);
		reap(&ring, c, batch);
		assert_non_null(seen_creds);
		assert_int_equal(seen_creds->uid, uid);
	}
	ucmd_queue_exit(&ring);
	ucmd_close(eng, fd);
}

/* A module that denies a command is asked on a fixed file too, and the cached "allowed" is dropped with it. */
static void test_security_on_fixed_file(void **state)
{
	struct ucmd_ring ring;
	struct cqe_copy c;
	int fd = ucmd_open(eng, "inline", O_RDWR);

	(void)state;
	ring_setup(eng, &ring, 4, IORING_SETUP_SQE128 | IORING_SETUP_CQE32);
	assert_int_equal(ucmd_register_files(&ring, &fd, 1), 0);
	/* allowed once, so that the file's cached answer says "anyone" */
	cmd_sqe(&ring, 0, true, 1, 6)->cmd_op = 0xd0;
	assert_int_equal(submit_one(&ring, &c), 6);
	assert_int_equal(security_register(eng, &deny_mod, NULL), 0);
	unsigned before = inline_calls;
	cmd_sqe(&ring, 0, true, 2, 6)->cmd_op = 0xd0;
	assert_int_equal(submit_one(&ring, &c), -EACCES);
	assert_int_equal(inline_calls, before);
	cmd_sqe(&ring, 0, true, 3, 6);
	assert_int_equal(submit_one(&ring, &c), 6);
	assert_int_equal(security_unregister(eng, "deny"), 0);
	cmd_sqe(&ring, 0, true, 4, 6)->cmd_op = 0xd0;
	assert_int_equal(submit_one(&ring, &c), 6);
	ucmd_queue_exit(&ring);
	ucmd_close(eng, fd);
}

/*
 * On an IOPOLL ring a provider without uring_cmd_iopoll is refused, fixed
 * file or not; also once the file's security answer is cached (after the
 * first command).
 */
static void test_iopoll_ring(void **state)
{
	struct ucmd_ring ring;
	struct cqe_copy c;
	int fd = ucmd_open(eng, "inline", O_RDWR);

	(void)state;
	ring_setup(eng, &ring, 4, IORING_SETUP_IOPOLL | IORING_SETUP_SQE128 | IORING_SETUP_CQE32);
	assert_int_equal(ucmd_register_files(&ring, &fd, 1), 0);
	unsigned before = inline_calls;
	for (uint64_t i = 0; i < 3; i++) {
		cmd_sqe(&ring, 0, true, i, 6);
		assert_int_equal(submit_one(&ring, &c), -EOPNOTSUPP);
	}
	assert_int_equal(inline_calls, before);
	ucmd_queue_exit(&ring);
	ucmd_close(eng, fd);
}

/*
 * Results that do not come back inline (task work, the worker's retry)
 * and requests that keep a snapshot, on fixed files, in batches whose
 * other members complete inline: every CQE once, res2 only where the
 * provider gave one, the snapshot freed (ASan).
 */
static void test_other_completions_on_fixed_files(void **state)
{
	struct ucmd_ring ring;
	struct cqe_copy c[8];
	const char *names[4] = { "inline", "echo", "again", "snap" };
	int fds[4];

	(void)state;
	for (int i = 0; i < 4; i++)
		fds[i] = ucmd_open(eng, names[i], O_RDWR);
	ring_setup(eng, &ring, 8, IORING_SETUP_SQE128 | IORING_SETUP_CQE32);
	assert_int_equal(ucmd_register_files(&ring, fds, 4), 0);
	for (int round = 0; round < 20; round++) {
		for (int i = 0; i < 8; i++) {
			struct io_uring_sqe *sqe = cmd_sqe(&ring, i % 4, true, (uint64_t)i,
							   (uint8_t)(40 + i));
			memset(sqe->cmd + 8, 0x60 + i, 8);
		}
		assert_int_equal(ucmd_submit(&ring), 8);
		reap(&ring, c, 8);
		unsigned seen = 0;
		for (int k = 0; k < 8; k++) {
			unsigned i = (unsigned)c[k].user_data;
			uint64_t res2;

			assert_true(i < 8);
			seen |= 1u << i;
			memset(&res2, 0x60 + (int)i, 8);
			assert_int_equal(c[k].res, i % 4 == 3 ? 5 : (int32_t)(40 + i));
			assert_int_equal(c[k].big[0], i % 4 == 1 ? res2 : 0);
			assert_int_equal(c[k].big[1], 0);
		}
		assert_int_equal(seen, 0xff);
	}
	ucmd_queue_exit(&ring);
	for (int i = 0; i < 4; i++)
		ucmd_close(eng, fds[i]);
}

/*
 * The commit's short way is for a ring with no eventfd and no TIMEOUT
 * counting CQEs (ctx->simple). Registering an eventfd between
 * submissions, or a counted TIMEOUT submitted in the very batch of the
 * commands it counts, must take the ring off it at once.
 */
static void test_simple_ring_changes(void **state)
{
	struct ucmd_ring ring;
	struct cqe_copy c[2];
	int fd = ucmd_open(eng, "inline", O_RDWR);
	int efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	uint64_t n;

	(void)state;
	assert_true(efd >= 0);
	ring_setup(eng, &ring, 8, IORING_SETUP_SQE128 | IORING_SETUP_CQE32);
	assert_int_equal(ucmd_register_files(&ring, &fd, 1), 0);
	for (int i = 0; i < 2; i++) {
		cmd_sqe(&ring, 0, true, 1, 5);
		assert_int_equal(submit_one(&ring, c), 5);
	}
	assert_int_equal(ucmd_register_eventfd(&ring, efd), 0);
	cmd_sqe(&ring, 0, true, 2, 6);
	assert_int_equal(submit_one(&ring, c), 6);
	assert_int_equal(read(efd, &n, sizeof(n)), (ssize_t)sizeof(n));
	assert_true(n >= 1);
	assert_int_equal(ucmd_unregister_eventfd(&ring), 0);
	cmd_sqe(&ring, 0, true, 3, 7);
	assert_int_equal(submit_one(&ring, c), 7);
	assert_int_equal(read(efd, &n, sizeof(n)), -1);

	/* a TIMEOUT of 10 s that a single CQE completes, then the command */
	struct __kernel_timespec ts = { .tv_sec = 10 };
	struct io_uring_sqe *sqe = ucmd_get_sqe(&ring);
	ucmd_prep_timeout(sqe, &ts, 1, 0);
	sqe->user_data = 4;
	cmd_sqe(&ring, 0, true, 5, 8);
	assert_int_equal(ucmd_submit(&ring), 2);
	assert_int_equal(ucmd_cq_ready(&ring), 2);
	reap(&ring, c, 2);
	assert_int_equal(c[0].user_data, 5);
	assert_int_equal(c[0].res, 8);
	assert_int_equal(c[1].user_data, 4);
	assert_int_equal(c[1].res, 0);
	ucmd_queue_exit(&ring);
	ucmd_close(eng, fd);
	close(efd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_variants_match_plain_fd),
		cmocka_unit_test(test_bad_fixed_files),
		cmocka_unit_test(test_order_with_completion_during_issue),
		cmocka_unit_test(test_request_freed_during_issue),
		cmocka_unit_test(test_chain_and_drain_before),
		cmocka_unit_test(test_alone_behind_drain),
		cmocka_unit_test(test_creds_changed_between_submissions),
		cmocka_unit_test(test_dropped_alone),
		cmocka_unit_test(test_dropped_in_every_loop),
		cmocka_unit_test(test_alone_runs_task_work),
		cmocka_unit_test(test_sqpoll_issues_on_poller),
		cmocka_unit_test(test_security_on_fixed_file),
		cmocka_unit_test(test_iopoll_ring),
		cmocka_unit_test(test_other_completions_on_fixed_files),
		cmocka_unit_test(test_simple_ring_changes),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
