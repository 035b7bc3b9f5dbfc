/* SPDX-License-Identifier: MIT */
/*
 * Request timeouts (src/block/blk-timeout.c) with a fake driver that either
 * completes a request at once or holds it: the timer is armed for the
 * earliest deadline in flight, a later deadline does not delay an earlier
 * one, the timer re-arms for the next deadline when it fires, and an idle
 * tag set has a disarmed timer whose thread does not wake up. Events are
 * counted; no test asserts a time (the waits below are bounds on a
 * condition, or an interval in which nothing may happen).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <time.h>
#include <cmocka.h>

#include "block/blk.h"

static bool complete_now;			/* the driver completes in ->queue_rq */
static atomic_int nr_timeouts;
static struct request *_Atomic timed_out[8];	/* in the order they timed out */
static atomic_int nr_resets;			/* ->timeout answers RESET_TIMER this often */

static blk_status_t fake_queue_rq(struct blk_mq_hw_ctx *hctx, const struct blk_mq_queue_data *bd)
{
	(void)hctx;
	if (complete_now && blk_mq_complete_request_claim(bd->rq))
		blk_mq_end_request(bd->rq, BLK_STS_OK);
	return BLK_STS_OK;
}

static enum blk_eh_timer_return fake_timeout(struct request *rq)
{
	int n = atomic_fetch_add(&nr_timeouts, 1);

	if (n < 8)
		atomic_store(&timed_out[n], rq);
	if (atomic_load(&nr_resets) > 0) {
		atomic_fetch_sub(&nr_resets, 1);
		return BLK_EH_RESET_TIMER;
	}
	return BLK_EH_DONE;
}

static const struct blk_mq_ops fake_ops = {
	.queue_rq = fake_queue_rq,
	.timeout = fake_timeout,
};

struct fx {
	struct blk_mq_tag_set set;
	struct request_queue q;
};

static struct fx *fx_new(void)
{
	struct fx *f = calloc(1, sizeof(*f));

	complete_now = false;
	atomic_store(&nr_timeouts, 0);
	atomic_store(&nr_resets, 0);
	for (unsigned i = 0; i < 8; i++)
		atomic_store(&timed_out[i], NULL);
	f->set.ops = &fake_ops;
	f->set.nr_hw_queues = 2;
	f->set.queue_depth = 8;
	assert_int_equal(blk_mq_alloc_tag_set(&f->set), 0);
	blk_mq_init_queue(&f->q, &f->set, f);
	return f;
}

static void fx_free(struct fx *f)
{
	blk_mq_free_tag_set(&f->set);
	free(f);
}

static struct request *start(struct fx *f, unsigned hctx, uint32_t timeout_ms)
{
	int err = 0;
	struct request *rq = blk_mq_alloc_request_hctx(&f->q, REQ_OP_DRV_IN,
						       BLK_MQ_REQ_NOWAIT, hctx, &err);

	assert_non_null(rq);
	rq->timeout_ms = timeout_ms;
	blk_execute_rq_nowait(rq, false);
	return rq;
}

static void pause_ms(unsigned ms)
{
	struct timespec ts = { 0, 1000 * 1000 };

	for (unsigned i = 0; i < ms; i++)
		nanosleep(&ts, NULL);
}

/* Wait, with a generous bound, until *v >= want. */
static void wait_for(atomic_ulong *v, unsigned long want)
{
	for (unsigned i = 0; i < 10000 && atomic_load(v) < want; i++)
		pause_ms(1);
	assert_true(atomic_load(v) >= want);
}

static void wait_for_timeouts(int want)
{
	for (unsigned i = 0; i < 10000 && atomic_load(&nr_timeouts) < want; i++)
		pause_ms(1);
	assert_int_equal(atomic_load(&nr_timeouts), want);
}

/* A request the driver never completes is timed out, once, and then it is its. */
static void test_stuck_request_times_out(void **state)
{
	struct fx *f = fx_new();
	struct request *rq;

	(void)state;
	rq = start(f, 0, 20);
	wait_for_timeouts(1);
	assert_ptr_equal(atomic_load(&timed_out[0]), rq);
	/* the timer claimed it: the driver's late completion loses */
	assert_false(blk_mq_complete_request_claim(rq));
	blk_mq_free_request(rq);
	fx_free(f);
}

/*
 * Idle: with nothing in flight the timer is disarmed and its thread sleeps
 * until a request arms it. A scanner that polls would wake (and run) over
 * and over in the pause below.
 */
static void test_idle_timer_does_not_run(void **state)
{
	struct fx *f = fx_new();
	unsigned long wakeups;

	(void)state;
	/* no request ever: no timer at all */
	pause_ms(20);
	assert_false(atomic_load(&f->set.timer_started));
	assert_int_equal(atomic_load(&f->set.nr_timer_runs), 0);

	/*
	 * One request that completes at once: the timer fires once, for
	 * nothing. Its deadline is far enough (200 ms) that a loaded machine
	 * (TSan, a parallel build) cannot pass it between the start and the
	 * completion, which would make it a real timeout.
	 */
	complete_now = true;
	start(f, 0, 200);
	assert_true(atomic_load(&f->set.timer_started));
	wait_for(&f->set.nr_timer_runs, 1);
	/* then it is disarmed and stays so: no run, no wake-up */
	for (unsigned i = 0; i < 1000 && atomic_load(&f->set.timer_expires); i++)
		pause_ms(1);
	assert_int_equal(atomic_load(&f->set.timer_expires), 0);
	wakeups = atomic_load(&f->set.nr_timer_wakeups);
	pause_ms(100);
	assert_int_equal(atomic_load(&f->set.nr_timer_runs), 1);
	assert_int_equal(atomic_load(&f->set.nr_timer_wakeups), wakeups);
	assert_int_equal(atomic_load(&nr_timeouts), 0);
	fx_free(f);
}

/*
 * A request with a far deadline is started first, one with a near deadline
 * after it (on another hardware queue): the near one still times out first,
 * and the timer is then armed for the far one.
 */
static void test_later_deadline_does_not_delay_earlier(void **state)
{
	struct fx *f = fx_new();
	struct request *slow, *fast;
	uint64_t slow_deadline;

	(void)state;
	slow = start(f, 0, 600000);		/* ten minutes */
	slow_deadline = atomic_load(&slow->deadline_ns);
	assert_int_equal(atomic_load(&f->set.timer_expires), slow_deadline);
	fast = start(f, 1, 20);
	wait_for_timeouts(1);
	assert_ptr_equal(atomic_load(&timed_out[0]), fast);
	/* the timer's work re-arms after the handler returns */
	for (unsigned i = 0; i < 1000 && !atomic_load(&f->set.timer_expires); i++)
		pause_ms(1);
	assert_int_equal(atomic_load(&f->set.timer_expires), slow_deadline);
	/* the slow one is still the driver's to complete */
	assert_true(blk_mq_complete_request_claim(slow));
	blk_mq_end_request(slow, BLK_STS_OK);
	blk_mq_free_request(fast);
	fx_free(f);
}

/* When the timer fires it re-arms for the next deadline: both time out, in order. */
static void test_timer_rearms_for_next(void **state)
{
	struct fx *f = fx_new();
	struct request *a, *b;

	(void)state;
	a = start(f, 0, 20);
	b = start(f, 0, 60);
	wait_for_timeouts(2);
	assert_ptr_equal(atomic_load(&timed_out[0]), a);
	assert_ptr_equal(atomic_load(&timed_out[1]), b);
	assert_int_equal(atomic_load(&f->set.timer_expires), 0);
	blk_mq_free_request(a);
	blk_mq_free_request(b);
	fx_free(f);
}

/* BLK_EH_RESET_TIMER: the request gets a new deadline and the timer comes back for it. */
static void test_reset_timer(void **state)
{
	struct fx *f = fx_new();
	struct request *rq;

	(void)state;
	atomic_store(&nr_resets, 2);
	rq = start(f, 0, 10);
	wait_for_timeouts(3);
	for (unsigned i = 0; i < 3; i++)
		assert_ptr_equal(atomic_load(&timed_out[i]), rq);
	assert_false(blk_mq_complete_request_claim(rq));
	blk_mq_free_request(rq);
	fx_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stuck_request_times_out),
		cmocka_unit_test(test_idle_timer_does_not_run),
		cmocka_unit_test(test_later_deadline_does_not_delay_earlier),
		cmocka_unit_test(test_timer_rearms_for_next),
		cmocka_unit_test(test_reset_timer),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
