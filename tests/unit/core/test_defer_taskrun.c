/* SPDX-License-Identifier: MIT */
/*
 * IORING_SETUP_DEFER_TASKRUN: completions from another thread wake the one
 * waiter only when the task work it waits for is all there (Linux's
 * io_req_local_work_add with cq_wait_nr), and only the submitter may wait.
 */
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>

#include "core/core.h"
#include "testdev.h"

#define NR 4

static const unsigned defer_flags = IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN;

struct completer {
	struct ucmd_ctx *ctx;
	uint32_t wake0, wake_partial;
	unsigned done_first, done_last;
	bool saw_waiter;
};

static uint32_t wake_count(struct ucmd_ctx *ctx)
{
	return atomic_load(&ctx->wake);
}

/* Runs while the submitter sleeps in ucmd_wait_cqe_nr(NR). */
static void *completer_fn(void *arg)
{
	struct completer *c = arg;

	/* bounded: the submitter enters the wait right after starting us */
	for (int i = 0; i < 1000000 && !atomic_load(&c->ctx->nr_waiters); i++)
		sched_yield();
	c->saw_waiter = atomic_load(&c->ctx->nr_waiters) == 1;
	c->wake0 = wake_count(c->ctx);
	c->done_first = td_complete_some(NR - 1);
	/* NR - 1 items are fewer than the waiter needs: nobody was woken */
	c->wake_partial = wake_count(c->ctx);
	c->done_last = td_complete_some(1);
	return NULL;
}

/* A DEFER_TASKRUN ring on a new engine, with NR commands held by the device. */
static struct ucmd_engine *start_queued(struct ucmd_ring *ring)
{
	struct ucmd_engine *e = ucmd_engine_new();
	int fd;

	td_register(e);
	td_ring_init(e, ring, 8, defer_flags);
	fd = ucmd_open(e, "tdev_nopoll", O_RDWR);
	assert_true(fd >= 0);
	for (unsigned i = 0; i < NR; i++)
		td_prep(ring, fd, TD_OP_QUEUE, i, 100 + i);
	assert_int_equal(ucmd_submit(ring), NR);
	assert_int_equal(td_nr_queued(), NR);
	return e;
}

static void test_one_wakeup_per_batch(void **state)
{
	struct ucmd_ring ring;
	struct ucmd_engine *e = start_queued(&ring);
	struct io_uring_cqe *cqe;
	struct completer c = { 0 };
	pthread_t t;

	(void)state;
	c.ctx = ring_to_ctx(&ring);
	assert_int_equal(pthread_create(&t, NULL, completer_fn, &c), 0);
	assert_int_equal(ucmd_wait_cqe_nr(&ring, &cqe, NR), 0);
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_true(c.saw_waiter);
	assert_int_equal(c.done_first, NR - 1);
	assert_int_equal(c.done_last, 1);
	assert_int_equal(c.wake_partial, c.wake0);
	/* exactly one wake-up: the item that completed the batch */
	assert_int_equal(wake_count(ring_to_ctx(&ring)) - c.wake0, 1);
	for (unsigned i = 0; i < NR; i++) {
		assert_int_equal(ucmd_peek_cqe(&ring, &cqe), 0);
		assert_int_equal(cqe->user_data, i);
		assert_int_equal(cqe->res, 100 + (int)i);
		ucmd_cqe_seen(&ring, cqe);
	}
	ucmd_queue_exit(&ring);
	ucmd_engine_free(e);
}

struct other_waiter {
	struct ucmd_ring *ring;
	int ret;
};

static void *other_wait_fn(void *arg)
{
	struct other_waiter *w = arg;
	struct io_uring_cqe *cqe;

	w->ret = ucmd_wait_cqe(w->ring, &cqe);
	return NULL;
}

/* Task work runs only in the submitter: another thread may not wait. */
static void test_other_thread_may_not_wait(void **state)
{
	struct ucmd_ring ring;
	struct ucmd_engine *e = start_queued(&ring);
	struct other_waiter w;
	struct td_cqe out[NR];
	pthread_t t;

	(void)state;
	w = (struct other_waiter){ .ring = &ring, .ret = 1 };
	assert_int_equal(pthread_create(&t, NULL, other_wait_fn, &w), 0);
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_int_equal(w.ret, -EEXIST);
	/* the submitter still gets every completion */
	td_complete_queued();
	td_reap(&ring, out, NR);
	for (unsigned i = 0; i < NR; i++)
		assert_int_equal(out[i].res, 100 + (int)i);
	ucmd_queue_exit(&ring);
	ucmd_engine_free(e);
}

/* Linux's setup rules for the flag. */
/*
 * IORING_SETUP_TASKRUN_FLAG: completions waiting for the submitter's
 * enter (task work another thread added) show as IORING_SQ_TASKRUN in the
 * SQ flags, as Linux's do; running them clears it. Without the flag, never.
 */
static void taskrun_round(unsigned flags, bool want)
{
	struct ucmd_engine *e = ucmd_engine_new();
	struct io_uring_cqe *cqe;
	struct ucmd_ring ring;
	int fd;

	td_register(e);
	td_ring_init(e, &ring, 8, flags);
	fd = ucmd_open(e, "tdev_nopoll", O_RDWR);
	assert_true(fd >= 0);
	td_prep(&ring, fd, TD_OP_QUEUE, 7, 107);
	assert_int_equal(ucmd_submit(&ring), 1);
	assert_false(__atomic_load_n(ring.sq.kflags, __ATOMIC_ACQUIRE) & IORING_SQ_TASKRUN);
	/* this thread is not the ring's while it does not enter: the work waits */
	assert_int_equal(td_complete_some(1), 1);
	assert_int_equal(!!(__atomic_load_n(ring.sq.kflags, __ATOMIC_ACQUIRE) & IORING_SQ_TASKRUN),
			 want);
	assert_int_equal(ucmd_wait_cqe(&ring, &cqe), 0);
	assert_int_equal(cqe->user_data, 7);
	assert_int_equal(cqe->res, 107);
	ucmd_cqe_seen(&ring, cqe);
	assert_false(__atomic_load_n(ring.sq.kflags, __ATOMIC_ACQUIRE) & IORING_SQ_TASKRUN);
	ucmd_queue_exit(&ring);
	ucmd_engine_free(e);
}

static void test_taskrun_flag(void **state)
{
	(void)state;
	taskrun_round(defer_flags | IORING_SETUP_TASKRUN_FLAG, true);
	taskrun_round(defer_flags, false);
}

static void test_setup_rules(void **state)
{
	struct ucmd_engine *e = ucmd_engine_new();
	struct ucmd_ring ring;
	struct io_uring_params p;

	(void)state;
	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_DEFER_TASKRUN;
	assert_int_equal(ucmd_queue_init_engine(e, 8, &ring, &p), -EINVAL);
	memset(&p, 0, sizeof(p));
	p.flags = defer_flags | IORING_SETUP_SQPOLL;
	assert_int_equal(ucmd_queue_init_engine(e, 8, &ring, &p), -EINVAL);
	ucmd_engine_free(e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_wakeup_per_batch),
		cmocka_unit_test(test_other_thread_may_not_wait),
		cmocka_unit_test(test_setup_rules),
		cmocka_unit_test(test_taskrun_flag),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
