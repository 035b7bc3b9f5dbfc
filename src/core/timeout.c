/* SPDX-License-Identifier: MIT */
/*
 * IORING_OP_TIMEOUT and IORING_OP_LINK_TIMEOUT (the kernel's
 * io_uring/timeout.c). An armed timeout sits on its ring's timer list; one
 * thread per ring that has used a timeout sleeps until the earliest
 * deadline and fires it by handing it to the owner as task work. Whoever
 * takes a timeout off the list (the timer, a count reached, a cancel, the
 * completion of a linked request) is the one that completes it, so it is
 * completed exactly once. The CQ counters (cq_timeouts, cq_last_tm_flush)
 * are the owner's, under uring_lock, as are both timeouts' issue (their
 * prep drops IOSQE_ASYNC: a worker would only arm the same timer).
 *
 * Linux's rules kept: a TIMEOUT with count N completes with 0 once N CQEs
 * that are not timeout CQEs were posted after it was armed, else -ETIME
 * when its time passes; a LINK_TIMEOUT bounds the request before it in a
 * chain: it completes with -ECANCELED when that request finishes first,
 * else it cancels it and completes with -ETIME (or with the cancel's error,
 * -EALREADY or -ENOENT, when it could not be cancelled).
 */
#include <errno.h>
#include <stdlib.h>
#include <time.h>

#include "core/core.h"
#include "uaccess/uaccess.h"

struct io_timer {
	pthread_mutex_t lock;		/* the list and each entry's queued/fired */
	pthread_cond_t cond;		/* CLOCK_MONOTONIC */
	pthread_t thread;
	struct ucmd_ctx *ctx;
	struct ucmd_kiocb *head;
	bool stop;
};

#define NSEC_PER_SEC 1000000000ull
#define TIMEOUT_FLAGS (IORING_TIMEOUT_ABS | IORING_TIMEOUT_CLOCK_MASK | IORING_TIMEOUT_ETIME_SUCCESS)

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
}

static uint64_t ts_ns(const struct __kernel_timespec *ts)
{
	/* a deadline centuries away is as good as never */
	if ((uint64_t)ts->tv_sec >= UINT64_MAX / NSEC_PER_SEC - 1)
		return UINT64_MAX / 2;
	return (uint64_t)ts->tv_sec * NSEC_PER_SEC + (uint64_t)ts->tv_nsec;
}

/*
 * The deadline on CLOCK_MONOTONIC. An absolute time on another clock
 * (IORING_TIMEOUT_BOOTTIME / _REALTIME) is turned into a monotonic one
 * when armed: a later step of that clock is not followed.
 */
static uint64_t timeout_deadline(const struct io_timeout *t)
{
	uint64_t now = clock_ns(CLOCK_MONOTONIC), want = ts_ns(&t->ts);
	clockid_t id = CLOCK_MONOTONIC;

	if (!(t->flags & IORING_TIMEOUT_ABS))
		return now + want;
	if (t->flags & IORING_TIMEOUT_BOOTTIME)
		id = CLOCK_BOOTTIME;
	else if (t->flags & IORING_TIMEOUT_REALTIME)
		id = CLOCK_REALTIME;
	if (id == CLOCK_MONOTONIC)
		return want;
	uint64_t cnow = clock_ns(id);
	return want <= cnow ? now : now + (want - cnow);
}

static struct ucmd_kiocb *tw_to_req(struct ucmd_tw_node *node)
{
	return (struct ucmd_kiocb *)((char *)node - offsetof(struct ucmd_kiocb, tw));
}

/* ---- the timer list (under t->lock) ---------------------------------------- */

static void timer_link(struct io_timer *t, struct ucmd_kiocb *req)
{
	struct io_timeout *to = &req->timeout;

	to->tnext = t->head;
	to->tpprev = &t->head;
	if (t->head)
		t->head->timeout.tpprev = &to->tnext;
	t->head = req;
	to->queued = true;
	to->fired = false;
}

static void timer_unlink(struct ucmd_kiocb *req)
{
	struct io_timeout *to = &req->timeout;

	*to->tpprev = to->tnext;
	if (to->tnext)
		to->tnext->timeout.tpprev = to->tpprev;
	to->tnext = NULL;
	to->tpprev = NULL;
	to->queued = false;
}

static void io_timeout_fire_tw(struct ucmd_tw_node *node);

static void *timer_thread(void *arg)
{
	struct io_timer *t = arg;
	struct ucmd_ctx *ctx = t->ctx;

	pthread_mutex_lock(&t->lock);
	while (!t->stop) {
		struct ucmd_kiocb *first = NULL;

		for (struct ucmd_kiocb *r = t->head; r; r = r->timeout.tnext)
			if (!first || r->timeout.deadline_ns < first->timeout.deadline_ns)
				first = r;
		if (!first) {
			pthread_cond_wait(&t->cond, &t->lock);
			continue;
		}
		uint64_t now = clock_ns(CLOCK_MONOTONIC);
		if (now < first->timeout.deadline_ns) {
			struct timespec abs = {
				.tv_sec = (time_t)(first->timeout.deadline_ns / NSEC_PER_SEC),
				.tv_nsec = (long)(first->timeout.deadline_ns % NSEC_PER_SEC),
			};
			pthread_cond_timedwait(&t->cond, &t->lock, &abs);
			continue;
		}
		timer_unlink(first);
		first->timeout.fired = true;
		io_req_task_work_add(first, io_timeout_fire_tw);
		/*
		 * Linux wakes the waiter for a timeout at once, not when enough
		 * task work has piled up (DEFER_TASKRUN's lazy wake). The ring
		 * outlives this thread (io_timer_destroy joins it first).
		 */
		if (ctx->flags & IORING_SETUP_DEFER_TASKRUN)
			io_wake_waiters(ctx);
	}
	pthread_mutex_unlock(&t->lock);
	return NULL;
}

/* The ring's timer, started by the first timeout's prep (under uring_lock). */
static struct io_timer *io_timer_get(struct ucmd_ctx *ctx)
{
	struct io_timer *t = atomic_load_explicit(&ctx->timer, memory_order_acquire);
	pthread_condattr_t ca;

	if (t)
		return t;
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->ctx = ctx;
	pthread_mutex_init(&t->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&t->cond, &ca);
	pthread_condattr_destroy(&ca);
	if (pthread_create(&t->thread, NULL, timer_thread, t)) {
		pthread_cond_destroy(&t->cond);
		pthread_mutex_destroy(&t->lock);
		free(t);
		return NULL;
	}
	atomic_store_explicit(&ctx->timer, t, memory_order_release);
	return t;
}

static struct io_timer *io_timer(struct ucmd_ctx *ctx)
{
	return atomic_load_explicit(&ctx->timer, memory_order_acquire);
}

static void timer_arm(struct ucmd_ctx *ctx, struct ucmd_kiocb *req)
{
	struct io_timer *t = io_timer(ctx);

	req->timeout.deadline_ns = timeout_deadline(&req->timeout);
	pthread_mutex_lock(&t->lock);
	timer_link(t, req);
	pthread_cond_signal(&t->cond);
	pthread_mutex_unlock(&t->lock);
}

/* Take req off the timer if it is still there; true: the caller completes it. */
static bool timer_try_cancel(struct ucmd_ctx *ctx, struct ucmd_kiocb *req)
{
	struct io_timer *t = io_timer(ctx);
	bool mine;

	pthread_mutex_lock(&t->lock);
	mine = req->timeout.queued;
	if (mine)
		timer_unlink(req);
	pthread_mutex_unlock(&t->lock);
	return mine;
}

/* ---- prep and issue ---------------------------------------------------------- */

static int __io_timeout_prep(struct ucmd_kiocb *req, const struct io_uring_sqe *sqe, bool link)
{
	struct io_timeout *to = &req->timeout;
	unsigned clocks;

	/* Linux: one timespec, no buffer, no file index; flags it knows */
	if (sqe->buf_index || sqe->len != 1 || sqe->file_index)
		return -EINVAL;
	if (link && sqe->off)
		return -EINVAL;
	to->flags = sqe->timeout_flags;
	if (to->flags & ~TIMEOUT_FLAGS)
		return -EINVAL;
	clocks = to->flags & IORING_TIMEOUT_CLOCK_MASK;
	if (clocks & (clocks - 1))
		return -EINVAL;	/* more than one clock */
	/* the task's memory: the submitter's own, or a daemon client's */
	if (user_mm_copy_from(req->ctx->task->mm, &to->ts, sqe->addr, sizeof(to->ts)))
		return -EFAULT;
	if (to->ts.tv_sec < 0 || to->ts.tv_nsec < 0)
		return -EINVAL;
	to->off = (uint32_t)sqe->off;
	to->tnext = NULL;
	to->tpprev = NULL;
	to->queued = false;
	to->fired = false;
	to->head = NULL;
	if (!io_timer_get(req->ctx))
		return -ENOMEM;
	/* armed by the owner: a worker would only do the same thing later */
	req->flags &= ~REQ_F_FORCE_ASYNC;
	return 0;
}

int io_timeout_prep(struct ucmd_kiocb *req, const struct io_uring_sqe *sqe)
{
	return __io_timeout_prep(req, sqe, false);
}

int io_link_timeout_prep(struct ucmd_kiocb *req, const struct io_uring_sqe *sqe)
{
	struct ucmd_ctx *ctx = req->ctx;
	int ret = __io_timeout_prep(req, sqe, true);

	if (ret)
		return ret;
	/* It bounds the request before it in the chain being built. */
	if (!ctx->link_head || ctx->link_last->opcode == IORING_OP_LINK_TIMEOUT)
		return -EINVAL;
	ctx->link_last->flags |= REQ_F_ARM_LTIMEOUT;
	return 0;
}

int io_timeout(struct ucmd_kiocb *req, unsigned issue_flags)
{
	struct ucmd_ctx *ctx = req->ctx;
	struct io_timeout *to = &req->timeout;

	(void)issue_flags;
	if (to->off) {
		unsigned tail = ctx->cached_cq_tail - ctx->cq_timeouts;

		to->target_seq = tail + to->off;
		ctx->cq_last_tm_flush = tail;
		ctx->off_timeout_used = true;
		io_ring_update_simple(ctx);
	}
	timer_arm(ctx, req);
	return -EIOCBQUEUED;
}

/*
 * Never issued on its own: the request it bounds arms it (io_arm_ltimeout)
 * and takes it out of the chain. Reaching here means it bounds nothing.
 */
int io_link_timeout(struct ucmd_kiocb *req, unsigned issue_flags)
{
	(void)issue_flags;
	io_req_set_res(req, -EINVAL, 0);
	return 0;
}

/* ---- firing, counting, cancelling --------------------------------------------- */

static void io_timeout_complete(struct ucmd_kiocb *req, int res)
{
	/* a timeout's own CQE is not an event other timeouts count */
	req->ctx->cq_timeouts++;
	io_req_set_res(req, res, 0);
	/* -ETIME that the application asked to take as success: links go on */
	if (res == -ETIME && (req->timeout.flags & IORING_TIMEOUT_ETIME_SUCCESS))
		req->flags &= ~REQ_F_FAIL;
	io_req_complete(req);
}

static bool match_req(struct ucmd_kiocb *req, void *data)
{
	return req == data;
}

/* Owner: a LINK_TIMEOUT fired. Cut it out of the chain, cancel what it bounds. */
static void io_link_timeout_fired(struct ucmd_kiocb *lt)
{
	struct ucmd_kiocb *prev = lt->timeout.head;
	int ret = -ENOENT;	/* it finished between the timer and now */

	if (prev) {
		prev->link = lt->link;
		lt->timeout.head = NULL;
		ret = io_try_cancel(lt->ctx, match_req, prev, false, false);
	}
	lt->link = NULL;
	io_req_set_res(lt, ret ? ret : -ETIME, 0);
	io_req_complete(lt);
}

static void io_timeout_fire_tw(struct ucmd_tw_node *node)
{
	struct ucmd_kiocb *req = tw_to_req(node);

	if (req->opcode == IORING_OP_LINK_TIMEOUT) {
		io_link_timeout_fired(req);
		return;
	}
	io_timeout_complete(req, -ETIME);
}

void io_arm_ltimeout(struct ucmd_kiocb *req)
{
	struct ucmd_kiocb *lt = req->link;

	req->flags &= ~REQ_F_ARM_LTIMEOUT;
	if (!lt || lt->opcode != IORING_OP_LINK_TIMEOUT || (lt->flags & REQ_F_FAIL))
		return;
	req->flags |= REQ_F_LTIMEOUT_ACTIVE;
	lt->timeout.head = req;
	timer_arm(req->ctx, lt);
}

struct ucmd_kiocb *io_disarm_ltimeout(struct ucmd_kiocb *req)
{
	struct ucmd_kiocb *lt = req->link;

	req->flags &= ~REQ_F_LTIMEOUT_ACTIVE;
	/* the timer fired and its task work has cut it out already */
	if (!lt || lt->opcode != IORING_OP_LINK_TIMEOUT || lt->timeout.head != req)
		return NULL;
	bool mine = timer_try_cancel(req->ctx, lt);

	req->link = lt->link;
	lt->link = NULL;
	lt->timeout.head = NULL;
	if (!mine)
		return NULL;	/* fired: its task work completes it (-ENOENT) */
	io_req_set_res(lt, -ECANCELED, 0);
	return lt;
}

void io_flush_timeouts(struct ucmd_ctx *ctx)
{
	struct io_timer *t = io_timer(ctx);
	unsigned seq = ctx->cached_cq_tail - ctx->cq_timeouts;
	struct ucmd_kiocb *due = NULL, **tail = &due;

	if (!t)
		return;
	pthread_mutex_lock(&t->lock);
	for (struct ucmd_kiocb *r = t->head, *n; r; r = n) {
		n = r->timeout.tnext;
		if (r->opcode != IORING_OP_TIMEOUT || !r->timeout.off)
			continue;
		/* wrap-safe: both measured from the last check */
		unsigned needed = r->timeout.target_seq - ctx->cq_last_tm_flush;
		unsigned got = seq - ctx->cq_last_tm_flush;
		if (got < needed)
			continue;
		timer_unlink(r);
		r->next = NULL;
		*tail = r;
		tail = &r->next;
	}
	pthread_mutex_unlock(&t->lock);
	ctx->cq_last_tm_flush = seq;
	while (due) {
		struct ucmd_kiocb *r = due;

		due = r->next;
		io_timeout_complete(r, 0);
	}
}

int io_timeout_cancel(struct ucmd_ctx *ctx, bool (*match)(struct ucmd_kiocb *, void *),
		      void *data, bool all)
{
	struct io_timer *t = io_timer(ctx);
	struct ucmd_kiocb *found = NULL, **tail = &found;
	int nr = 0;

	if (!t)
		return 0;
	pthread_mutex_lock(&t->lock);
	for (struct ucmd_kiocb *r = t->head, *n; r; r = n) {
		n = r->timeout.tnext;
		/* only TIMEOUTs: a LINK_TIMEOUT goes with the request it bounds */
		if (r->opcode != IORING_OP_TIMEOUT || !match(r, data))
			continue;
		timer_unlink(r);
		r->next = NULL;
		*tail = r;
		tail = &r->next;
		nr++;
		if (!all)
			break;
	}
	pthread_mutex_unlock(&t->lock);
	while (found) {
		struct ucmd_kiocb *r = found;

		found = r->next;
		io_timeout_complete(r, -ECANCELED);
	}
	return nr;
}

static bool match_any(struct ucmd_kiocb *req, void *data)
{
	(void)req;
	(void)data;
	return true;
}

void io_timeouts_kill(struct ucmd_ctx *ctx)
{
	io_timeout_cancel(ctx, match_any, NULL, true);
}

void io_timer_destroy(struct ucmd_ctx *ctx)
{
	struct io_timer *t = io_timer(ctx);

	if (!t)
		return;
	pthread_mutex_lock(&t->lock);
	t->stop = true;
	pthread_cond_signal(&t->cond);
	pthread_mutex_unlock(&t->lock);
	pthread_join(t->thread, NULL);
	pthread_cond_destroy(&t->cond);
	pthread_mutex_destroy(&t->lock);
	free(t);
	atomic_store_explicit(&ctx->timer, NULL, memory_order_relaxed);
}
