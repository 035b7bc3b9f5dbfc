/* SPDX-License-Identifier: MIT */
/* Ring setup: sizes, flags, and the rules Linux applies to them. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "core/core.h"
#include "ringutil.h"

static int init(unsigned entries, struct io_uring_params *p, struct ucmd_ring *ring)
{
	return ucmd_queue_init_engine(ucmd_engine_default(), entries, ring, p);
}

static void test_sizes(void **state)
{
	struct ucmd_ring ring;
	struct io_uring_params p;

	(void)state;
	memset(&p, 0, sizeof(p));
	assert_int_equal(init(5, &p, &ring), 0);
	/* rounded up to a power of two, CQ twice the SQ */
	assert_int_equal(p.sq_entries, 8);
	assert_int_equal(p.cq_entries, 16);
	assert_int_equal(ring.sq.ring_entries, 8);
	assert_int_equal(ring.cq.ring_entries, 16);
	assert_true(p.features & IORING_FEAT_NODROP);
	ucmd_queue_exit(&ring);

	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_CQSIZE;
	p.cq_entries = 100;
	assert_int_equal(init(8, &p, &ring), 0);
	assert_int_equal(p.cq_entries, 128);
	ucmd_queue_exit(&ring);
}

static void test_bad_params(void **state)
{
	struct ucmd_ring ring;
	struct io_uring_params p;

	(void)state;
	memset(&p, 0, sizeof(p));
	assert_int_equal(init(0, &p, &ring), -EINVAL);
	assert_int_equal(init(65536, &p, &ring), -EINVAL);
	p.flags = IORING_SETUP_CLAMP;
	assert_int_equal(init(65536, &p, &ring), 0);
	assert_int_equal(p.sq_entries, 32768);
	ucmd_queue_exit(&ring);

	memset(&p, 0, sizeof(p));
	p.flags = 1u << 25;	/* unknown flag */
	assert_int_equal(init(8, &p, &ring), -EINVAL);
	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_CQSIZE;
	p.cq_entries = 4;	/* smaller than the SQ */
	assert_int_equal(init(8, &p, &ring), -EINVAL);
	p.cq_entries = 0;
	assert_int_equal(init(8, &p, &ring), -EINVAL);
	memset(&p, 0, sizeof(p));
	p.resv[1] = 1;
	assert_int_equal(init(8, &p, &ring), -EINVAL);
	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_SQ_AFF;	/* without SQPOLL */
	assert_int_equal(init(8, &p, &ring), -EINVAL);
	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_DEFER_TASKRUN;	/* needs SINGLE_ISSUER */
	assert_int_equal(init(8, &p, &ring), -EINVAL);
	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_TASKRUN_FLAG;	/* needs COOP_ or DEFER_TASKRUN */
	assert_int_equal(init(8, &p, &ring), -EINVAL);
	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_SQPOLL | IORING_SETUP_COOP_TASKRUN;	/* no task-run mode */
	assert_int_equal(init(8, &p, &ring), -EINVAL);
}

/* Linux's accepted task-run combinations: TASKRUN_FLAG with either mode. */
static void test_taskrun_flags(void **state)
{
	static const unsigned ok[] = {
		IORING_SETUP_COOP_TASKRUN,
		IORING_SETUP_COOP_TASKRUN | IORING_SETUP_TASKRUN_FLAG,
		IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN |
			IORING_SETUP_TASKRUN_FLAG,
	};
	struct ucmd_ring ring;
	struct io_uring_params p;

	(void)state;
	for (unsigned i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		memset(&p, 0, sizeof(p));
		p.flags = ok[i];
		assert_int_equal(init(8, &p, &ring), 0);
		ucmd_queue_exit(&ring);
	}
}

/* The offsets describe one region: a second mapping sees the same ring. */
static void test_offsets_only(void **state)
{
	struct ucmd_ring ring;

	(void)state;
	ring_setup(ucmd_engine_default(), &ring, 4, IORING_SETUP_SQE128 | IORING_SETUP_CQE32);
	assert_true(ring.ring_fd >= 0);
	assert_int_equal(*ring.sq.kring_entries, 4);
	assert_int_equal(*ring.cq.kring_entries, 8);
	/* 128-byte stride on SQE128 */
	struct io_uring_sqe *a = ucmd_get_sqe(&ring), *b = ucmd_get_sqe(&ring);
	assert_int_equal((char *)b - (char *)a, 128);
	ucmd_queue_exit(&ring);
}

static void *other_thread_submit(void *arg)
{
	struct ucmd_ring *ring = arg;
	static int ret;

	ret = ucmd_enter(ring, 1, 0, 0);
	return &ret;
}

static void test_single_issuer(void **state)
{
	struct ucmd_ring ring;
	pthread_t t;
	void *res;

	(void)state;
	ring_setup(ucmd_engine_default(), &ring, 4, IORING_SETUP_SINGLE_ISSUER);
	ucmd_prep_nop(ucmd_get_sqe(&ring));
	__atomic_store_n(ring.sq.ktail, ring.sq.sqe_tail, __ATOMIC_RELEASE);
	ring.sq.sqe_head = ring.sq.sqe_tail;
	assert_int_equal(pthread_create(&t, NULL, other_thread_submit, &ring), 0);
	pthread_join(t, &res);
	assert_int_equal(*(int *)res, -EEXIST);
	assert_int_equal(ucmd_enter(&ring, 1, 1, IORING_ENTER_GETEVENTS), 1);
	assert_int_equal(ucmd_cq_ready(&ring), 1);
	ucmd_queue_exit(&ring);
}

/*
 * The submitter's thread id is kept per thread, not asked of the kernel on
 * every enter; a forked child must still be refused, as Linux refuses any
 * task but the ring's submitter, even though it inherits the parent's copy.
 */
static void test_single_issuer_fork(void **state)
{
	struct ucmd_ring ring;
	int status;
	pid_t pid;

	(void)state;
	ring_setup(ucmd_engine_default(), &ring, 4, IORING_SETUP_SINGLE_ISSUER);
	ucmd_prep_nop(ucmd_get_sqe(&ring));
	assert_int_equal(ucmd_submit_and_wait(&ring, 1), 1);	/* the parent's id is known */
	ucmd_cq_advance(&ring, 1);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		ucmd_prep_nop(ucmd_get_sqe(&ring));
		_exit(ucmd_submit(&ring) == -EEXIST ? 0 : 1);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	/* and the parent still is the submitter */
	ucmd_prep_nop(ucmd_get_sqe(&ring));
	assert_int_equal(ucmd_submit_and_wait(&ring, 1), 1);
	ucmd_queue_exit(&ring);
}

/* Mappings of ring memfds ("memfd:ucmd-ring") in this process. */
static int ring_mappings(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	int n = 0;

	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		if (strstr(line, "memfd:ucmd-ring"))
			n++;
	fclose(f);
	return n;
}

/*
 * The application sees the ring through the engine's own mapping: one
 * mapping per ring, so no SQE or CQE is stored through one address and
 * loaded through another, and none is left behind by ucmd_queue_exit.
 */
static void test_one_mapping(void **state)
{
	struct ucmd_ring ring;
	int before = ring_mappings();

	(void)state;
	ring_setup(ucmd_engine_default(), &ring, 4, IORING_SETUP_SQE128 | IORING_SETUP_CQE32);
	assert_int_equal(ring_mappings(), before + 1);
	ucmd_prep_nop(ucmd_get_sqe(&ring));
	assert_int_equal(ucmd_submit_and_wait(&ring, 1), 1);
	assert_int_equal(ucmd_cq_ready(&ring), 1);
	ucmd_queue_exit(&ring);
	assert_int_equal(ring_mappings(), before);
}

/* The opcode table is complete where it claims to be (checked at start-up). */
static void test_optable(void **state)
{
	(void)state;
	assert_int_equal(io_uring_optable_init(), 0);
	assert_string_equal(io_uring_get_opcode(IORING_OP_URING_CMD), "URING_CMD");
	assert_string_equal(io_uring_get_opcode(IORING_OP_SENDMSG), "INVALID");
	assert_string_equal(io_uring_get_opcode(250), "INVALID");
	assert_true(io_issue_defs[IORING_OP_URING_CMD].async_size >= 128);
}

static void test_enter_flags(void **state)
{
	struct ucmd_ring ring;

	(void)state;
	ring_setup(ucmd_engine_default(), &ring, 4, 0);
	assert_int_equal(ucmd_enter(&ring, 0, 0, 1u << 20), -EINVAL);
	ucmd_queue_exit(&ring);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sizes),
		cmocka_unit_test(test_bad_params),
		cmocka_unit_test(test_taskrun_flags),
		cmocka_unit_test(test_offsets_only),
		cmocka_unit_test(test_single_issuer),
		cmocka_unit_test(test_single_issuer_fork),
		cmocka_unit_test(test_one_mapping),
		cmocka_unit_test(test_enter_flags),
		cmocka_unit_test(test_optable),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
