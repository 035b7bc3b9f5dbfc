/* SPDX-License-Identifier: MIT */
/*
 * Request timeouts, as Linux's block/blk-timeout.c: a request started with
 * a timeout gets a deadline, and the tag set's one timer is armed for the
 * earliest deadline in flight (blk_add_timer() re-arms it only when a new
 * deadline is earlier than the armed one). When it fires, the timeout work
 * (blk_mq_timeout_work) hands every expired request to the driver's
 * ->timeout and re-arms the timer for the earliest deadline still ahead, if
 * any. With no request in flight the timer is disarmed and its thread sleeps
 * without a time limit: nothing runs periodically.
 *
 * The timer is a thread (started with the first timed request) sleeping on
 * a futex until timer_expires. Arming is lock-free: timer_expires only ever
 * moves to an earlier deadline, by compare-and-swap, except when the timer
 * fires and takes it (exchange with 0); the work then merges its own next
 * deadline back in the same way, so an arm racing with the work is never
 * lost.
 */
#include <limits.h>
#include <pthread.h>

#include "block/blk.h"
#include "lib/futex.h"

/*
 * Make deadline the armed expiry if it is earlier than cur, the armed one
 * (or nothing is armed). Returns true if it moved the timer.
 */
static bool blk_timer_arm(struct blk_mq_tag_set *set, uint64_t cur, uint64_t deadline)
{
	while (!cur || deadline < cur)
		if (atomic_compare_exchange_weak_explicit(&set->timer_expires, &cur, deadline,
							  memory_order_acq_rel,
							  memory_order_acquire))
			return true;
	return false;
}

static void blk_timer_kick(struct blk_mq_tag_set *set)
{
	atomic_fetch_add_explicit(&set->timer_seq, 1, memory_order_release);
	futex_wake(&set->timer_seq, 1);
}

/* A deadline d: the earliest of next and d (0 is "none"). */
static uint64_t earliest(uint64_t next, uint64_t d)
{
	return !next || d < next ? d : next;
}

/*
 * The timer fired: time out what expired, and re-arm for what is left.
 * Like Linux's, it walks every tag: a timeout is the rare event, the walk
 * is once per expiry, and starting a request stays cheap.
 */
static void blk_mq_timeout_work(struct blk_mq_tag_set *set)
{
	uint64_t next = 0, now;

	atomic_fetch_add_explicit(&set->nr_timer_runs, 1, memory_order_relaxed);
	/* Acquire: pairs with blk_add_timer's read-modify-write, see there. */
	atomic_exchange_explicit(&set->timer_expires, 0, memory_order_acq_rel);
	now = ktime_get_ns();
	for (unsigned i = 0; i < set->nr_hw_queues; i++) {
		struct blk_mq_hw_ctx *h = &set->hctxs[i];

		for (unsigned t = 0; t < h->depth; t++) {
			struct request *rq = h->rqs[t];
			uint64_t dl;

			if (atomic_load_explicit(&rq->state, memory_order_acquire) != MQ_RQ_IN_FLIGHT)
				continue;
			dl = atomic_load_explicit(&rq->deadline_ns, memory_order_relaxed);
			if (!dl)
				continue;
			if (now < dl) {
				next = earliest(next, dl);
				continue;
			}
			if (!blk_mq_complete_request_claim(rq))
				continue;	/* completing right now */
			if (set->ops->timeout(rq) == BLK_EH_RESET_TIMER) {
				dl = now + (uint64_t)rq->timeout_ms * NSEC_PER_MSEC;
				atomic_store_explicit(&rq->deadline_ns, dl, memory_order_relaxed);
				atomic_store_explicit(&rq->state, MQ_RQ_IN_FLIGHT, memory_order_release);
				next = earliest(next, dl);
			}
		}
	}
	/* The thread reads timer_expires again before it sleeps: no kick. */
	if (next)
		blk_timer_arm(set, atomic_load_explicit(&set->timer_expires, memory_order_relaxed),
			      next);
}

static void *blk_timer_thread(void *arg)
{
	struct blk_mq_tag_set *set = arg;

	for (;;) {
		/* Read before timer_expires: an arm after this changes it. */
		uint32_t seq = atomic_load_explicit(&set->timer_seq, memory_order_acquire);
		uint64_t expires, now;

		if (atomic_load_explicit(&set->timer_stop, memory_order_acquire))
			break;
		expires = atomic_load_explicit(&set->timer_expires, memory_order_relaxed);
		if (!expires) {
			futex_wait(&set->timer_seq, seq, -1);	/* disarmed */
			atomic_fetch_add_explicit(&set->nr_timer_wakeups, 1, memory_order_relaxed);
			continue;
		}
		now = ktime_get_ns();
		if (now < expires) {
			/* Rounded up, so that it does not wake just before. */
			uint64_t ms = (expires - now + NSEC_PER_MSEC - 1) / NSEC_PER_MSEC;

			futex_wait(&set->timer_seq, seq, ms > INT_MAX ? INT_MAX : (int)ms);
			atomic_fetch_add_explicit(&set->nr_timer_wakeups, 1, memory_order_relaxed);
			continue;
		}
		blk_mq_timeout_work(set);
	}
	return NULL;
}

static void blk_timer_start(struct blk_mq_tag_set *set)
{
	pthread_mutex_lock(&set->timer_lock);
	if (!atomic_load_explicit(&set->timer_started, memory_order_relaxed) &&
	    pthread_create(&set->timer_thread, NULL, blk_timer_thread, set) == 0)
		atomic_store_explicit(&set->timer_started, true, memory_order_release);
	pthread_mutex_unlock(&set->timer_lock);
}

void blk_add_timer(struct request *rq, uint64_t deadline)
{
	struct blk_mq_tag_set *set = rq->q->set;

	if (!atomic_load_explicit(&set->timer_started, memory_order_acquire))
		blk_timer_start(set);
	/*
	 * rq is marked in flight before this. If we leave the timer armed
	 * for an earlier deadline, the work that runs at that expiry must see
	 * rq in flight, even if it is already taking the timer as we look.
	 * So the look is a read-modify-write (a release), not a load: the
	 * changes of timer_expires are totally ordered, and the work's
	 * exchange (an acquire) that comes after it sees our marking; one
	 * that came before it left a value we read here, and an expiry at or
	 * before our deadline whose work comes after. (A fence would do the
	 * same, but ThreadSanitizer cannot check fences.)
	 */
	uint64_t cur = atomic_fetch_add_explicit(&set->timer_expires, 0, memory_order_acq_rel);

	if (blk_timer_arm(set, cur, deadline))
		blk_timer_kick(set);
}

void blk_timeout_init(struct blk_mq_tag_set *set)
{
	pthread_mutex_init(&set->timer_lock, NULL);
	atomic_init(&set->timer_started, false);
	atomic_init(&set->timer_stop, false);
	atomic_init(&set->timer_expires, 0);
	atomic_init(&set->timer_seq, 0);
	atomic_init(&set->nr_timer_runs, 0);
	atomic_init(&set->nr_timer_wakeups, 0);
}

void blk_timeout_exit(struct blk_mq_tag_set *set)
{
	if (atomic_load(&set->timer_started)) {
		atomic_store_explicit(&set->timer_stop, true, memory_order_release);
		blk_timer_kick(set);
		pthread_join(set->timer_thread, NULL);
		atomic_store(&set->timer_started, false);
	}
	pthread_mutex_destroy(&set->timer_lock);
}
