/* SPDX-License-Identifier: MIT */
/* Submission basics: ordering, wrap-around, common SQE checks, dropped SQEs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>

#include "ringutil.h"
#include "core/backend.h"

/* 4-entry SQE128/CQE32 ring, 250 rounds of 3: the indexes wrap many times. */
static void test_wraparound_sqe128(void **state)
{
	struct ucmd_ring ring;
	struct cqe_copy c[3];
	uint64_t next = 0, expect = 0;

	(void)state;
	ring_setup(ucmd_engine_default(), &ring, 4, IORING_SETUP_SQE128 | IORING_SETUP_CQE32);
	for (int round = 0; round < 250; round++) {
		for (int i = 0; i < 3; i++) {
			struct io_uring_sqe *sqe = ucmd_get_sqe(&ring);
			assert_non_null(sqe);
			/* dirty the whole 128 bytes first: prep must not depend on them */
			memset(sqe, 0xff, 128);
			ucmd_prep_nop(sqe);
			ucmd_sqe_set_data64(sqe, 0x8000000000000000ull | next++);
		}
		assert_int_equal(ucmd_submit_and_wait(&ring, 3), 3);
		reap(&ring, c, 3);
		for (int i = 0; i < 3; i++) {
			assert_int_equal(c[i].res, 0);
			assert_true(c[i].user_data == (0x8000000000000000ull | expect++));
			assert_true(c[i].big[0] == 0 && c[i].big[1] == 0);
		}
	}
	ucmd_queue_exit(&ring);
}

static void test_sq_full(void **state)
{
	struct ucmd_ring ring;

	(void)state;
	ring_setup(ucmd_engine_default(), &ring, 2, 0);
	assert_non_null(ucmd_get_sqe(&ring));
	assert_non_null(ucmd_get_sqe(&ring));
	assert_null(ucmd_get_sqe(&ring));
	ucmd_queue_exit(&ring);
}

static int32_t one(struct ucmd_ring *ring, void (*tweak)(struct io_uring_sqe *))
{
	struct cqe_copy c;
	struct io_uring_sqe *sqe = ucmd_get_sqe(ring);

	ucmd_prep_nop(sqe);
	sqe->user_data = 42;
	tweak(sqe);
	int32_t res = submit_one(ring, &c);
	assert_int_equal(c.user_data, 42);
	return res;
}

static void bad_opcode(struct io_uring_sqe *s) { s->opcode = 200; }
static void unimpl_opcode(struct io_uring_sqe *s) { s->opcode = IORING_OP_SENDMSG; }
static void bad_flags(struct io_uring_sqe *s) { s->flags = 0x80; }
static void nop_ioprio(struct io_uring_sqe *s) { s->ioprio = 1; }
static void buffer_select(struct io_uring_sqe *s) { s->flags = IOSQE_BUFFER_SELECT; }
static void bad_personality(struct io_uring_sqe *s) { s->personality = 7; }

/*
 * nop_flags (Linux 6.x): INJECT_RESULT posts sqe->len as res; ucmd's own
 * UCMD_NOP_CQE_FLAGS posts sqe->addr3 as the CQE's flags; Linux's other
 * flags change nothing; any other bit is -EINVAL.
 */
static void nop_inject(struct io_uring_sqe *s) { s->rw_flags = UCMD_NOP_INJECT_RESULT; s->len = (unsigned)-9; }
static void nop_inject_pos(struct io_uring_sqe *s) { s->rw_flags = UCMD_NOP_INJECT_RESULT; s->len = 4096; }
/* CQE32 (bit 5) is left out: this ring's CQEs are 16 bytes (test_nop_inject) */
static void nop_linux_flags(struct io_uring_sqe *s) { s->rw_flags = 0x1e; s->len = 5; }
static void nop_bad_flag(struct io_uring_sqe *s) { s->rw_flags = 1u << 6; }
static void nop_cqe_flags(struct io_uring_sqe *s)
{
	s->rw_flags = UCMD_NOP_INJECT_RESULT | UCMD_NOP_CQE_FLAGS;
	s->len = 7;
	s->addr3 = 0x3;
}

static void test_nop_flags(void **state)
{
	struct ucmd_ring ring;
	struct cqe_copy c;
	struct io_uring_sqe *sqe;

	(void)state;
	ring_setup(ucmd_engine_default(), &ring, 4, 0);
	assert_int_equal(one(&ring, nop_inject), -9);
	assert_int_equal(one(&ring, nop_inject_pos), 4096);
	assert_int_equal(one(&ring, nop_linux_flags), 0);
	assert_int_equal(one(&ring, nop_bad_flag), -EINVAL);
	sqe = ucmd_get_sqe(&ring);
	ucmd_prep_nop(sqe);
	sqe->user_data = 43;
	nop_cqe_flags(sqe);
	assert_int_equal(submit_one(&ring, &c), 7);
	assert_int_equal(c.user_data, 43);
	assert_int_equal(c.flags, 0x3);
	ucmd_queue_exit(&ring);
}

static void test_common_checks(void **state)
{
	struct ucmd_ring ring;

	(void)state;
	ring_setup(ucmd_engine_default(), &ring, 4, 0);
	assert_int_equal(one(&ring, bad_opcode), -EINVAL);
	assert_int_equal(one(&ring, unimpl_opcode), -EOPNOTSUPP);
	assert_int_equal(one(&ring, bad_flags), -EINVAL);
	assert_int_equal(one(&ring, nop_ioprio), -EINVAL);
	assert_int_equal(one(&ring, buffer_select), -EOPNOTSUPP);
	assert_int_equal(one(&ring, bad_personality), -EINVAL);
	ucmd_queue_exit(&ring);
}

/* An SQ array index outside the SQE array is dropped and counted. */
static void test_dropped(void **state)
{
	struct ucmd_ring ring;
	struct cqe_copy c;

	(void)state;
	ring_setup(ucmd_engine_default(), &ring, 4, 0);
	struct io_uring_sqe *sqe = ucmd_get_sqe(&ring);
	ucmd_prep_nop(sqe);
	unsigned slot = (ring.sq.sqe_tail - 1) & ring.sq.ring_mask;
	ring.sq.array[slot] = 1000;
	assert_int_equal(ucmd_submit(&ring), 0);
	assert_int_equal(*ring.sq.kdropped, 1);
	assert_int_equal(ucmd_cq_ready(&ring), 0);
	/* the ring goes on working after it */
	ring.sq.array[slot] = slot;
	ucmd_prep_nop(ucmd_get_sqe(&ring));
	assert_int_equal(submit_one(&ring, &c), 0);
	assert_int_equal(*ring.sq.kdropped, 1);
	ucmd_queue_exit(&ring);
}

/*
 * A bad index in the middle of a submission is skipped, not the end of it:
 * the SQEs behind it still go in the same call (a polled ring's owner
 * would otherwise stall on every bad index until the next submission).
 */
static void test_dropped_middle(void **state)
{
	struct ucmd_ring ring;
	struct cqe_copy c[2];

	(void)state;
	ring_setup(ucmd_engine_default(), &ring, 4, 0);
	for (uint64_t i = 1; i <= 3; i++) {
		struct io_uring_sqe *sqe = ucmd_get_sqe(&ring);

		ucmd_prep_nop(sqe);
		sqe->user_data = i;
	}
	ring.sq.array[(ring.sq.sqe_tail - 2) & ring.sq.ring_mask] = 77;
	assert_int_equal(ucmd_submit(&ring), 2);
	assert_int_equal(*ring.sq.kdropped, 1);
	assert_int_equal(*ring.sq.khead, *ring.sq.ktail);
	assert_int_equal(ucmd_cq_ready(&ring), 2);
	reap(&ring, c, 2);
	assert_int_equal(c[0].user_data, 1);
	assert_int_equal(c[1].user_data, 3);
	ucmd_queue_exit(&ring);
}

/* A tail written far past the ring is clamped, never read out of bounds. */
static void test_wild_tail(void **state)
{
	struct ucmd_ring ring;

	(void)state;
	ring_setup(ucmd_engine_default(), &ring, 4, 0);
	for (unsigned i = 0; i < 4; i++)
		ucmd_prep_nop(&ring.sq.sqes[i]);
	__atomic_store_n(ring.sq.ktail, 1000000u, __ATOMIC_RELEASE);
	int n = ucmd_enter(&ring, 1000000u, 0, 0);
	assert_int_equal(n, 4);
	assert_int_equal(ucmd_cq_ready(&ring), 4);
	ucmd_queue_exit(&ring);
}

/*
 * The SQ head and the dropped count are the engine's: what the ring's owner
 * writes there is overwritten, never read back, so a head rewound over
 * SQEs the engine took does not make it take them again, and a dropped
 * count set to anything goes on from the engine's own.
 */
static void test_head_is_ours(void **state)
{
	struct ucmd_ring ring;
	struct cqe_copy c;
	struct io_uring_sqe *sqe;

	(void)state;
	ring_setup(ucmd_engine_default(), &ring, 4, 0);
	sqe = ucmd_get_sqe(&ring);
	ucmd_prep_nop(sqe);
	sqe->user_data = 1;
	assert_int_equal(submit_one(&ring, &c), 0);
	assert_int_equal(c.user_data, 1);
	__atomic_store_n(ring.sq.khead, *ring.sq.khead - 1, __ATOMIC_RELEASE);
	__atomic_store_n(ring.sq.kdropped, 77u, __ATOMIC_RELEASE);
	sqe = ucmd_get_sqe(&ring);
	ucmd_prep_nop(sqe);
	sqe->user_data = 2;
	assert_int_equal(submit_one(&ring, &c), 0);
	assert_int_equal(c.user_data, 2);
	assert_int_equal(ucmd_cq_ready(&ring), 0);
	/* a bad index: the engine's count, one */
	sqe = ucmd_get_sqe(&ring);
	ucmd_prep_nop(sqe);
	ring.sq.array[(ring.sq.sqe_tail - 1) & ring.sq.ring_mask] = 1000;
	assert_int_equal(ucmd_submit(&ring), 0);
	assert_int_equal(*ring.sq.kdropped, 1);
	ucmd_queue_exit(&ring);
}

/*
 * nop_flags (Linux 6.10's IORING_NOP_INJECT_RESULT, 6.18's IORING_NOP_CQE32):
 * the result and a CQE32's extra words come from the SQE; CQE32 on a ring
 * of 16-byte CQEs is EINVAL. The preload relays a forked child's
 * completions into its parent's ring with them.
 */
static void test_nop_inject(void **state)
{
	struct ucmd_ring ring;
	struct cqe_copy c;
	struct io_uring_sqe *sqe;

	(void)state;
	ring_setup(ucmd_engine_default(), &ring, 4, IORING_SETUP_SQE128 | IORING_SETUP_CQE32);
	sqe = ucmd_get_sqe(&ring);
	ucmd_prep_nop(sqe);
	sqe->rw_flags = (1u << 0) | (1u << 5);
	sqe->len = (uint32_t)-EIO;
	sqe->off = 0x1122334455667788ull;
	sqe->addr = 0x99;
	sqe->user_data = 7;
	assert_int_equal(submit_one(&ring, &c), -EIO);
	assert_true(c.user_data == 7 && c.big[0] == 0x1122334455667788ull && c.big[1] == 0x99);
	sqe = ucmd_get_sqe(&ring);
	ucmd_prep_nop(sqe);
	sqe->rw_flags = 1u << 0;
	sqe->len = 4096;
	assert_int_equal(submit_one(&ring, &c), 4096);
	assert_true(c.big[0] == 0 && c.big[1] == 0);
	ucmd_queue_exit(&ring);
	ring_setup(ucmd_engine_default(), &ring, 4, 0);
	sqe = ucmd_get_sqe(&ring);
	ucmd_prep_nop(sqe);
	sqe->rw_flags = 1u << 5;
	assert_int_equal(submit_one(&ring, &c), -EINVAL);
	ucmd_queue_exit(&ring);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_wraparound_sqe128),
		cmocka_unit_test(test_sq_full),
		cmocka_unit_test(test_common_checks),
		cmocka_unit_test(test_nop_flags),
		cmocka_unit_test(test_dropped),
		cmocka_unit_test(test_dropped_middle),
		cmocka_unit_test(test_wild_tail),
		cmocka_unit_test(test_head_is_ours),
		cmocka_unit_test(test_nop_inject),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
