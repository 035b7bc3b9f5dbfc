/* SPDX-License-Identifier: MIT */
/*
 * IORING_SETUP_SQPOLL: a thread that consumes the SQ without the
 * application entering. After sq_thread_idle ms with nothing to do it sets
 * IORING_SQ_NEED_WAKEUP and sleeps; the application then wakes it with
 * IORING_ENTER_SQ_WAKEUP. The thread is the ring's owner: it runs the task
 * work and posts the completions.
 */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <time.h>

#include "core/core.h"
#include "lib/clock.h"

struct ucmd_sqpoll {
	pthread_t thread;
	unsigned idle_ms;
	atomic_bool stop;
};

static uint64_t now_ms(void)
{
	return ktime_get_ns() / NSEC_PER_MSEC;
}

static unsigned sq_pending(const struct ucmd_ctx *ctx)
{
	/* the thread's own head: it alone submits on a SQPOLL ring */
	return __atomic_load_n(ctx->rings.sq_tail, __ATOMIC_SEQ_CST) - ctx->cached_sq_head;
}

/* One pass over the ring; returns whether there was anything to do. */
static bool sqpoll_pass(struct ucmd_ctx *ctx)
{
	bool busy = false;

	mutex_lock(&ctx->uring_lock);
	current_ctx = ctx;
	unsigned n = sq_pending(ctx);
	if (n && io_submit_sqes(ctx, n) > 0)
		busy = true;
	if (io_owner_reap(ctx))
		busy = true;
	if (ctx->nr_iopoll)
		busy = true;
	current_ctx = NULL;
	mutex_unlock(&ctx->uring_lock);
	return busy;
}

static void *sqpoll_thread(void *arg)
{
	struct ucmd_ctx *ctx = arg;
	struct ucmd_sqpoll *sqd = ctx->sqd;
	uint64_t last_busy = now_ms();

	while (!atomic_load_explicit(&sqd->stop, memory_order_acquire)) {
		if (sqpoll_pass(ctx)) {
			last_busy = now_ms();
			continue;
		}
		if (now_ms() - last_busy < sqd->idle_ms) {
			sched_yield();
			continue;
		}
		/*
		 * Going to sleep: announce NEED_WAKEUP, then look once more, so
		 * that a tail written after our last look is seen by one side.
		 */
		uint32_t seq = atomic_load_explicit(&ctx->wake, memory_order_acquire);
		__atomic_fetch_or(ctx->rings.sq_flags, IORING_SQ_NEED_WAKEUP, __ATOMIC_SEQ_CST);
		atomic_fetch_add_explicit(&ctx->nr_waiters, 1, memory_order_seq_cst);
		if (!sq_pending(ctx) && !atomic_load(&ctx->tw_list) &&
		    !atomic_load_explicit(&sqd->stop, memory_order_acquire))
			futex_wait(&ctx->wake, seq, 1000);
		atomic_fetch_sub_explicit(&ctx->nr_waiters, 1, memory_order_seq_cst);
		__atomic_fetch_and(ctx->rings.sq_flags, ~IORING_SQ_NEED_WAKEUP, __ATOMIC_SEQ_CST);
		last_busy = now_ms();
	}
	return NULL;
}

int io_sq_thread_create(struct ucmd_ctx *ctx, const struct io_uring_params *p)
{
	struct ucmd_sqpoll *sqd = calloc(1, sizeof(*sqd));

	if (!sqd)
		return -ENOMEM;
	sqd->idle_ms = p->sq_thread_idle ? p->sq_thread_idle : 1000;
	atomic_init(&sqd->stop, false);
	ctx->sqd = sqd;
	int ret = pthread_create(&sqd->thread, NULL, sqpoll_thread, ctx);
	if (ret) {
		ctx->sqd = NULL;
		free(sqd);
		return -ret;
	}
	if (p->flags & IORING_SETUP_SQ_AFF) {
		cpu_set_t set;
		CPU_ZERO(&set);
		CPU_SET(p->sq_thread_cpu, &set);
		pthread_setaffinity_np(sqd->thread, sizeof(set), &set);
	}
	return 0;
}

void io_sq_thread_stop(struct ucmd_ctx *ctx)
{
	struct ucmd_sqpoll *sqd = ctx->sqd;

	if (!sqd)
		return;
	atomic_store_explicit(&sqd->stop, true, memory_order_release);
	io_wake_waiters(ctx);
	futex_wake(&ctx->wake, 1 << 30);
	pthread_join(sqd->thread, NULL);
	free(sqd);
	ctx->sqd = NULL;
}
