/* SPDX-License-Identifier: MIT */
/*
 * Completion side: posting CQEs (never dropping one: a full CQ overflows
 * into a list that is flushed when room appears), task work (how a
 * completion found on another thread reaches the ring's owner), and waiting.
 */
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/core.h"
#include "lib/clock.h"

__thread struct ucmd_ctx *current_ctx __attribute__((tls_model("initial-exec")));
__thread const struct ucmd_kiocb *io_issuing_req __attribute__((tls_model("initial-exec")));

static unsigned cq_head_acquire(const struct ucmd_ctx *ctx)
{
	return __atomic_load_n(ctx->rings.cq_head, __ATOMIC_ACQUIRE);
}

/*
 * The application's head is read once per run of free slots, not once per
 * CQE: ctx->cq_room counts the slots known free since the last read.
 */
static bool cq_has_room(struct ucmd_ctx *ctx)
{
	if (ctx->cq_room)
		return true;
	/* a head the application moved past the tail reads as "full" */
	unsigned used = ctx->cached_cq_tail - cq_head_acquire(ctx);
	ctx->cq_room = used < ctx->rings.cq_entries ? ctx->rings.cq_entries - used : 0;
	return ctx->cq_room != 0;
}

bool io_cqring_room(struct ucmd_ctx *ctx)
{
	return cq_has_room(ctx);
}

static void write_cqe(struct ucmd_ctx *ctx, uint64_t user_data, int32_t res, uint32_t flags,
		      const uint64_t *extra)
{
	struct io_uring_cqe *cqe = io_rings_cqe(&ctx->rings, ctx->cached_cq_tail++);

	ctx->cq_room--;

	cqe->user_data = user_data;
	cqe->res = res;
	cqe->flags = flags;
	if (ctx->rings.cqe_shift) {
		cqe->big_cqe[0] = extra[0];
		cqe->big_cqe[1] = extra[1];
	}
	ctx->cq_dirty = true;
}

static void set_sq_flag(struct ucmd_ctx *ctx, uint32_t flag, bool on)
{
	if (on)
		__atomic_fetch_or(ctx->rings.sq_flags, flag, __ATOMIC_RELEASE);
	else
		__atomic_fetch_and(ctx->rings.sq_flags, ~flag, __ATOMIC_RELEASE);
}

/* The CQ is full or already overflowing: keep the CQE in order in the list. */
static void __attribute__((noinline)) io_fill_cqe_overflow(struct ucmd_ctx *ctx, uint64_t user_data,
							   int32_t res, uint32_t flags,
							   const uint64_t *extra)
{
	struct ucmd_ocqe *o = malloc(sizeof(*o));
	if (!o) {
		/* Out of memory is the one case Linux also loses a CQE: count it. */
		__atomic_fetch_add(ctx->rings.cq_overflow, 1, __ATOMIC_RELEASE);
		return;
	}
	o->next = NULL;
	o->cqe.user_data = user_data;
	o->cqe.res = res;
	o->cqe.flags = flags;
	o->extra[0] = extra[0];
	o->extra[1] = extra[1];
	if (ctx->ocq_tail)
		ctx->ocq_tail->next = o;
	else
		ctx->ocq_head = o;
	ctx->ocq_tail = o;
	set_sq_flag(ctx, IORING_SQ_CQ_OVERFLOW, true);
}

/* Post one CQE; inline, as it runs once per request. */
static inline __attribute__((always_inline)) void io_fill_cqe(struct ucmd_ctx *ctx,
							      uint64_t user_data, int32_t res,
							      uint32_t flags,
							      const uint64_t *extra)
{
	if (__builtin_expect(!ctx->ocq_head && cq_has_room(ctx), 1))
		write_cqe(ctx, user_data, res, flags, extra);
	else
		io_fill_cqe_overflow(ctx, user_data, res, flags, extra);
}

/*
 * A CQE made elsewhere, posted as it is (ucmdd: a dead forked child's
 * relayed requests, into the ring they were taken from). Under uring_lock;
 * the caller commits.
 */
void io_post_cqe(struct ucmd_ctx *ctx, const struct io_uring_cqe *cqe, const uint64_t *extra)
{
	static const uint64_t none[2];

	io_fill_cqe(ctx, cqe->user_data, cqe->res, cqe->flags, extra ? extra : none);
}

bool io_flush_overflow(struct ucmd_ctx *ctx)
{
	while (ctx->ocq_head && cq_has_room(ctx)) {
		struct ucmd_ocqe *o = ctx->ocq_head;
		write_cqe(ctx, o->cqe.user_data, o->cqe.res, o->cqe.flags, o->extra);
		ctx->ocq_head = o->next;
		free(o);
	}
	if (!ctx->ocq_head) {
		ctx->ocq_tail = NULL;
		if (__atomic_load_n(ctx->rings.sq_flags, __ATOMIC_RELAXED) & IORING_SQ_CQ_OVERFLOW)
			set_sq_flag(ctx, IORING_SQ_CQ_OVERFLOW, false);
		return true;
	}
	return false;
}

void io_wake_waiters(struct ucmd_ctx *ctx)
{
	/* seq_cst: pairs with io_wait_on_src's count-then-look (Dekker) */
	atomic_fetch_add_explicit(&ctx->wake, 1, memory_order_seq_cst);
	if (atomic_load_explicit(&ctx->nr_waiters, memory_order_acquire))
		futex_wake(&ctx->wake, INT_MAX);
	/* a waiter asleep on its wait source (io_wait_on_src) is woken through its eventfd */
	if (atomic_load_explicit(&ctx->nr_fd_waiters, memory_order_seq_cst)) {
		uint64_t one = 1;

		/* a full counter (-EAGAIN) is already a wake-up; the owner's eventfd still gets its own */
		(void)!write(ctx->wait_efd, &one, sizeof(one));
	}
	if (__builtin_expect(ctx->owner_efd >= 0, 0)) {
		uint64_t one = 1;

		/* a full counter (-EAGAIN) is already a wake-up */
		if (write(ctx->owner_efd, &one, sizeof(one)) < 0)
			return;
	}
}

void io_ring_update_simple(struct ucmd_ctx *ctx)
{
	/*
	 * SINGLE_ISSUER and DEFER_TASKRUN change who may enter and how task
	 * work runs, which native_enter checks before it submits, not the
	 * submission or the commit: such rings are simple too
	 */
	ctx->simple = !(ctx->flags & (IORING_SETUP_SQPOLL | IORING_SETUP_IOPOLL)) &&
		      !ctx->max_reqs && !ctx->sq_limit && !ctx->sq_blocked && ctx->evfd < 0 &&
		      !ctx->off_timeout_used && !ctx->cq_publish;
}

void io_ring_set_bounds(struct ucmd_ring *ring, const struct io_ring_bounds *b)
{
	struct ucmd_ctx *ctx = ring_to_ctx(ring);

	ctx->max_reqs = b->max_reqs;
	ctx->sq_limit = b->sq_limit;
	ctx->sq_blocked = b->sq_blocked;
	ctx->sq_blocked_val = false;
	if (ctx->sq_blocked)
		__atomic_store_n(ctx->sq_blocked, 0, __ATOMIC_RELEASE);
	io_ring_update_simple(ctx);
}

void io_ring_set_owner_wake(struct ucmd_ring *ring, int efd)
{
	ring_to_ctx(ring)->owner_efd = efd;
}

void io_ring_set_task(struct ucmd_ring *ring, const struct ucmd_task *task)
{
	struct ucmd_ctx *ctx = ring_to_ctx(ring);

	ctx->task = task;
	if (task->cred) {
		ctx->creds = *task->cred;
		ctx->creds.retired_next = NULL;
		ctx->sub_creds = &ctx->creds;
	}
}

void io_ring_set_cq_publish(struct ucmd_ring *ring,
			    void (*fn)(void *data, unsigned *ktail, unsigned tail), void *data)
{
	struct ucmd_ctx *ctx = ring_to_ctx(ring);

	mutex_lock(&ctx->uring_lock);
	ctx->cq_publish = fn;
	ctx->cq_publish_data = data;
	/* the simple commit stores the tail itself: a publisher needs the full one */
	io_ring_update_simple(ctx);
	mutex_unlock(&ctx->uring_lock);
}

void __io_commit_cqring(struct ucmd_ctx *ctx)
{
	/* TIMEOUTs waiting for a number of CQEs: posted with the ones that reached it */
	if (__builtin_expect(ctx->off_timeout_used, 0))
		io_flush_timeouts(ctx);
	ctx->cq_dirty = false;
	if (__builtin_expect(ctx->cq_publish != NULL, 0))
		ctx->cq_publish(ctx->cq_publish_data, ctx->rings.cq_tail, ctx->cached_cq_tail);
	else
		__atomic_store_n(ctx->rings.cq_tail, ctx->cached_cq_tail, __ATOMIC_RELEASE);
	if (__builtin_expect(ctx->evfd >= 0, 0))
		io_eventfd_signal(ctx);
	/*
	 * Only another thread (an SQPOLL ring's application) can be waiting.
	 * It read ctx->wake under uring_lock before this commit but may not
	 * have counted itself in nr_waiters yet: on such a ring always bump
	 * wake, so that its futex wait returns at once instead of sleeping
	 * out its timeout with a CQE already there.
	 */
	if ((ctx->flags & IORING_SETUP_SQPOLL) ||
	    atomic_load_explicit(&ctx->nr_waiters, memory_order_acquire))
		io_wake_waiters(ctx);
}

unsigned io_cqring_events(struct ucmd_ctx *ctx)
{
	return __atomic_load_n(ctx->rings.cq_tail, __ATOMIC_ACQUIRE) - cq_head_acquire(ctx);
}

void io_req_set_res(struct ucmd_kiocb *req, int32_t res, uint64_t res2)
{
	req->cqe_res = res;
	req->big_cqe[0] = res2;
	/*
	 * Atomic: a provider may end an IOPOLL request on another thread (a
	 * timeout handler, a receiver) while the owner reads the flags for
	 * REQ_F_IOPOLL_DONE
	 */
	if (res < 0)
		__atomic_fetch_or(&req->flags, REQ_F_FAIL, __ATOMIC_RELAXED);
}

/* Everything a finished request holds but its place on the free list. */
static inline __attribute__((always_inline)) void io_free_req_resources(struct ucmd_kiocb *req)
{
	struct ucmd_ctx *ctx = req->ctx;

	/* one test for both: per-op state, a uring_cmd's snapshot */
	if (req->flags & (REQ_F_NEED_CLEANUP | REQ_F_CMD_SNAP)) {
		if (req->flags & REQ_F_NEED_CLEANUP)
			io_issue_defs[req->opcode].cleanup(req);
		io_uring_cmd_snap_release(req);
	}
	/* a fixed file is held by the table, which outlives every request */
	if (req->file && !(req->flags & REQ_F_FIXED_FILE))
		fput(req->file);
	req->file = NULL;
	if (req->flags & REQ_F_INFLIGHT)
		ctx->inflight--;
	if (req->flags & REQ_F_WAIT_SRC)
		ctx->wsrc_nr--;
}

static inline __attribute__((always_inline)) void io_free_req(struct ucmd_kiocb *req)
{
	struct ucmd_ctx *ctx = req->ctx;

	io_free_req_resources(req);
	req->next = ctx->free_reqs;
	ctx->free_reqs = req;
	ctx->nr_reqs--;
}

static inline __attribute__((always_inline)) void io_post_req_cqe(struct ucmd_kiocb *req)
{
	if ((req->flags & REQ_F_CQE_SKIP) && !(req->flags & REQ_F_FAIL))
		return;
	io_fill_cqe(req->ctx, req->user_data, req->cqe_res, req->cqe_flags, req->big_cqe);
}

static void io_queue_next_tw(struct ucmd_tw_node *node)
{
	struct ucmd_kiocb *req = (struct ucmd_kiocb *)((char *)node - offsetof(struct ucmd_kiocb, tw));

	io_req_issue(req);
}

/*
 * The chain behind a failed request is cancelled: each member completes
 * with -ECANCELED, or its own error if it had failed at prep already.
 */
static void io_fail_links(struct ucmd_kiocb *link)
{
	while (link) {
		struct ucmd_kiocb *next = link->link;
		link->link = NULL;
		if (!(link->flags & REQ_F_FAIL))
			io_req_set_res(link, -ECANCELED, 0);
		io_post_req_cqe(link);
		io_free_req(link);
		link = next;
	}
}

static void io_flush_defer(struct ucmd_ctx *ctx);

/*
 * What a flushed request needs beyond a CQE copied from it and a place on
 * the free list: tested as (flags ^ REQ_FLUSH_EXPECT) & REQ_FLUSH_SLOW, so
 * one test also catches a request that is not in flight or whose file is
 * not a fixed one (and needs its reference dropped).
 */
#define REQ_FLUSH_SLOW                                                                   \
	(REQ_F_CQE_SKIP | REQ_F_NEED_CLEANUP | REQ_F_CMD_SNAP | REQ_F_INFLIGHT | REQ_F_FIXED_FILE | \
	 REQ_F_WAIT_SRC)
#define REQ_FLUSH_EXPECT (REQ_F_INFLIGHT | REQ_F_FIXED_FILE)

/*
 * The full path for one request of a flushed list, out of line so that the
 * common one needs few registers: what the fast path assumes does not hold.
 */
static __attribute__((noinline)) void io_flush_req_slow(struct ucmd_kiocb *req)
{
	io_post_req_cqe(req);
	io_free_req_resources(req);
}

/* The CQ has room for n more CQEs and nothing overflowed before them. */
static inline bool cq_has_room_for(struct ucmd_ctx *ctx, unsigned n)
{
	if (__builtin_expect(ctx->ocq_head != NULL, 0))
		return false;
	if (ctx->cq_room >= n)
		return true;
	ctx->cq_room = 0;
	return cq_has_room(ctx) && ctx->cq_room >= n;
}

/*
 * Post the CQEs of a list of requests and free them all (Linux's
 * __io_submit_flush_completions): the room is checked once for the batch,
 * each CQE is one copy of the request's CQE fields, and the list, already
 * linked through ->next, goes onto the free list whole. Room for fewer
 * than all of them: each CQE then goes through io_fill_cqe, which
 * overflows in order.
 */
static inline __attribute__((always_inline)) void io_flush_list(struct ucmd_ctx *ctx,
								struct ucmd_kiocb *req,
								struct ucmd_kiocb **tail,
								unsigned n, bool cqe32)
{
	struct ucmd_kiocb *first = req;
	unsigned start = ctx->cached_cq_tail, cq_tail = start, mask = ctx->rings.cq_mask;
	unsigned inflight = 0;
	struct io_uring_cqe *cqes = ctx->rings.cqes;
	bool room = cq_has_room_for(ctx, n);

	do {
		if (__builtin_expect(((req->flags ^ REQ_FLUSH_EXPECT) & REQ_FLUSH_SLOW) || !room, 0)) {
			ctx->cached_cq_tail = cq_tail;
			io_flush_req_slow(req);
			cq_tail = ctx->cached_cq_tail;
		} else {
			void *cqe = &cqes[(size_t)(cq_tail & mask) << cqe32];

			memcpy(cqe, &req->user_data, cqe32 ? 32 : 16);
			cq_tail++;
			ctx->cq_room--;
			inflight++;
		}
		req = req->next;
	} while (req);
	/*
	 * Against the tail at the start: a slow request stores the tail
	 * before it posts, so when the last one posts nothing (a skipped
	 * success) the short way's CQEs before it are no longer told apart
	 * by the cached tail, and would wait for a later commit.
	 */
	if (cq_tail != start) {
		ctx->cached_cq_tail = cq_tail;
		ctx->cq_dirty = true;
	}
	ctx->inflight -= inflight;
	ctx->nr_reqs -= n;
	*tail = ctx->free_reqs;
	ctx->free_reqs = first;
}

void io_submit_flush_completions(struct ucmd_ctx *ctx)
{
	while (ctx->compl_head) {
		struct ucmd_kiocb *req = ctx->compl_head, **tail = ctx->compl_tail;
		unsigned n = ctx->compl_nr;

		ctx->compl_head = NULL;
		ctx->compl_tail = &ctx->compl_head;
		ctx->compl_nr = 0;
		if (ctx->rings.cqe_shift)
			io_flush_list(ctx, req, tail, n, true);
		else
			io_flush_list(ctx, req, tail, n, false);
		/* drained requests may start now; what they complete comes round again */
		if (__builtin_expect(ctx->defer_head != NULL, 0))
			io_flush_defer(ctx);
	}
}

void io_req_complete_or_defer(struct ucmd_kiocb *req)
{
	struct ucmd_ctx *ctx = req->ctx;

	/* a chain's next member, or a LINK_TIMEOUT to cancel, must go now */
	if (ctx->compl_defer && !req->link && !(req->flags & REQ_F_LTIMEOUT_ACTIVE)) {
		req->next = NULL;
		*ctx->compl_tail = req;
		ctx->compl_tail = &req->next;
		ctx->compl_nr++;
		return;
	}
	io_req_complete(req);
}

void io_req_complete(struct ucmd_kiocb *req)
{
	struct ucmd_ctx *ctx = req->ctx;
	struct ucmd_kiocb *link, *ltimeout = NULL;

	/* CQEs go out in completion order: collected ones first */
	if (__builtin_expect(ctx->compl_head != NULL, 0))
		io_submit_flush_completions(ctx);
	/* it finished before its LINK_TIMEOUT: that one is cancelled and leaves the chain */
	if (__builtin_expect(req->flags & REQ_F_LTIMEOUT_ACTIVE, 0))
		ltimeout = io_disarm_ltimeout(req);
	link = req->link;
	req->link = NULL;
	io_post_req_cqe(req);
	if (ltimeout) {
		io_post_req_cqe(ltimeout);
		io_free_req(ltimeout);
	}
	if (link) {
		if ((req->flags & REQ_F_FAIL) && !(req->flags & REQ_F_HARDLINK))
			io_fail_links(link);
		else
			io_req_task_work_add(link, io_queue_next_tw);
	}
	io_free_req(req);
	if (ctx->defer_head)
		io_flush_defer(ctx);
}

/* Start a chain (or single request): counted as in flight, then issued. */
void io_queue_chain(struct ucmd_kiocb *head)
{
	struct ucmd_ctx *ctx = head->ctx;

	/* One walk marks and counts: this runs for every request. */
	for (struct ucmd_kiocb *r = head; r; r = r->link) {
		r->flags |= REQ_F_INFLIGHT;
		ctx->inflight++;
	}
	if (head->flags & REQ_F_FAIL) {
		/*
		 * A chain that failed at submission (a member failed its init)
		 * is cancelled whole, hard link or not, as Linux's
		 * io_queue_sqe_fallback does: going on would issue the member
		 * that never passed prep, whose opcode may have no handler.
		 */
		head->flags &= ~REQ_F_HARDLINK;
		io_req_complete(head);
	}
	else
		io_req_issue(head);
}

/* IOSQE_IO_DRAIN: a drained chain starts only once nothing else is in flight. */
static void io_flush_defer(struct ucmd_ctx *ctx)
{
	/*
	 * A deferred request that completes at once would flush again from
	 * inside io_queue_chain: let the outer loop do it, so that thousands
	 * of deferred requests do not nest thousands of frames deep.
	 */
	if (ctx->flushing_defer)
		return;
	ctx->flushing_defer = true;
	while (ctx->defer_head) {
		struct ucmd_kiocb *req = ctx->defer_head;
		if ((req->flags & REQ_F_IO_DRAIN) && ctx->inflight)
			break;
		ctx->defer_head = req->next;
		if (!ctx->defer_head)
			ctx->defer_tail = NULL;
		req->next = NULL;
		/*
		 * "New SQEs will not be started before this one completes": what
		 * follows a drained chain is drained in turn (Linux's drain_next),
		 * whether it is already deferred or not submitted yet. Only a
		 * drain the application asked for does this, not one it induced.
		 */
		if ((req->sqe[0].flags & IOSQE_IO_DRAIN) || (req->flags & REQ_F_DRAIN_USER)) {
			if (ctx->defer_head)
				ctx->defer_head->flags |= REQ_F_IO_DRAIN;
			else
				ctx->drain_next = true;
		}
		io_queue_chain(req);
	}
	ctx->flushing_defer = false;
}

void io_queue_or_defer(struct ucmd_kiocb *head)
{
	struct ucmd_ctx *ctx = head->ctx;

	if (ctx->drain_next) {
		ctx->drain_next = false;
		head->flags |= REQ_F_IO_DRAIN;
	}
	if (!(head->flags & REQ_F_IO_DRAIN) && !ctx->defer_head) {
		io_queue_chain(head);
		return;
	}
	head->next = NULL;
	if (ctx->defer_tail)
		ctx->defer_tail->next = head;
	else
		ctx->defer_head = head;
	ctx->defer_tail = head;
	io_flush_defer(ctx);
}

/* ---- task work ----------------------------------------------------------- */

void io_req_task_work_add(struct ucmd_kiocb *req, void (*func)(struct ucmd_tw_node *))
{
	struct ucmd_ctx *ctx = req->ctx;
	struct ucmd_tw_node *node = &req->tw;

	node->func = func;
	node->next = NULL;
	if (current_ctx == ctx) {
		*ctx->local_tw_tail = node;
		ctx->local_tw_tail = &node->next;
		return;
	}
	/* ctx may be freed as soon as the owner reaps this: hold it until done. */
	atomic_fetch_add_explicit(&ctx->tw_remote_adders, 1, memory_order_acq_rel);
	/*
	 * Acquire, also when the CAS fails: the head may be a node another
	 * thread pushed, and reading its nr_tw must see that thread's writes
	 * (TSan caught a relaxed load reading a request it had not yet seen
	 * initialised).
	 */
	struct ucmd_tw_node *head = atomic_load_explicit(&ctx->tw_list, memory_order_acquire);
	unsigned nr_tw;
	do {
		node->next = head;
		nr_tw = head ? atomic_load_explicit(&head->nr_tw, memory_order_relaxed) + 1 : 1;
		atomic_store_explicit(&node->nr_tw, nr_tw, memory_order_relaxed);
	} while (!atomic_compare_exchange_weak_explicit(&ctx->tw_list, &head, node,
							 memory_order_seq_cst,
							 memory_order_acquire));
	/*
	 * IORING_SETUP_TASKRUN_FLAG: the application is told that completions
	 * wait for it to enter (Linux's IORING_SQ_TASKRUN), so that a peek of
	 * the CQ knows to enter. Cleared when the list is taken.
	 */
	if (ctx->flags & IORING_SETUP_TASKRUN_FLAG)
		set_sq_flag(ctx, IORING_SQ_TASKRUN, true);
	if (ctx->flags & IORING_SETUP_DEFER_TASKRUN) {
		/*
		 * Linux's io_req_local_work_add: wake the one waiter when the
		 * list reaches what it waits for, once. Pairs with the
		 * seq_cst store of cq_wait_nr before the waiter looks at the list.
		 */
		unsigned nr_wait = atomic_load_explicit(&ctx->cq_wait_nr, memory_order_seq_cst);

		if (nr_tw >= nr_wait && nr_tw - 1 < nr_wait)
			io_wake_waiters(ctx);
	} else if (!head) {
		/* Wake the owner only for the first item: it takes the whole list. */
		io_wake_waiters(ctx);
	}
	atomic_fetch_sub_explicit(&ctx->tw_remote_adders, 1, memory_order_release);
}

unsigned __io_run_task_work(struct ucmd_ctx *ctx)
{
	unsigned ran = 0;
	/*
	 * The requests this run completes are collected and posted together
	 * at its end, as a submission's are (Linux's task work completes
	 * into the same compl_reqs batch): the completions a provider hands
	 * back as task work, a device's whole batch of them, are one flush.
	 */
	bool outer = !ctx->compl_defer;

	ctx->compl_defer = true;
	for (;;) {
		struct ucmd_tw_node *list = ctx->local_tw;
		ctx->local_tw = NULL;
		ctx->local_tw_tail = &ctx->local_tw;
		if (!list && atomic_load_explicit(&ctx->tw_list, memory_order_relaxed)) {
			/* before the take: an item added after it sets the flag again */
			if (ctx->flags & IORING_SETUP_TASKRUN_FLAG)
				set_sq_flag(ctx, IORING_SQ_TASKRUN, false);
			/* The remote list is a stack: reverse it to run in order. */
			struct ucmd_tw_node *n = atomic_exchange_explicit(&ctx->tw_list, NULL,
									  memory_order_acquire);
			while (n) {
				struct ucmd_tw_node *next = n->next;
				n->next = list;
				list = n;
				n = next;
			}
		}
		if (!list)
			break;
		while (list) {
			struct ucmd_tw_node *next = list->next;
			list->func(list);
			ran++;
			list = next;
		}
	}
	if (outer) {
		ctx->compl_defer = false;
		if (ctx->compl_head)
			io_submit_flush_completions(ctx);
	}
	return ran;
}

/* ---- IOPOLL ----------------------------------------------------------------- */

int io_do_iopoll(struct ucmd_ctx *ctx)
{
	struct ucmd_kiocb **pp, *req;
	int found = 0;

	for (req = ctx->iopoll_list; req; req = req->next) {
		if (__atomic_load_n(&req->flags, __ATOMIC_ACQUIRE) & REQ_F_IOPOLL_DONE)
			continue;
		const struct io_issue_def *def = &io_issue_defs[req->opcode];
		if (def->iopoll_fn)
			def->iopoll_fn(req);
	}
	pp = &ctx->iopoll_list;
	while ((req = *pp) != NULL) {
		if (!(__atomic_load_n(&req->flags, __ATOMIC_ACQUIRE) & REQ_F_IOPOLL_DONE)) {
			pp = &req->next;
			continue;
		}
		*pp = req->next;
		req->next = NULL;
		ctx->nr_iopoll--;
		if (ctx->flags & IORING_SETUP_HYBRID_IOPOLL) {
			uint64_t took = ktime_get_ns() - req->iopoll_start;
			uint64_t was = __atomic_load_n(&ctx->hybrid_poll_time, __ATOMIC_RELAXED);

			/* read by waiters without the lock */
			__atomic_store_n(&ctx->hybrid_poll_time, was ? (was + took) / 2 : took,
					 __ATOMIC_RELAXED);
		}
		io_req_complete(req);
		found++;
	}
	return found;
}

/*
 * What the ring's owner does whenever it holds uring_lock outside of
 * submission: run task work, reap polled completions (and the task work they
 * queue), move overflowed CQEs into room, publish the CQ tail. Returns how
 * much it found.
 */
unsigned io_owner_reap(struct ucmd_ctx *ctx)
{
	unsigned n = io_run_task_work(ctx);

	if (ctx->nr_iopoll)
		n += (unsigned)io_do_iopoll(ctx);
	n += io_run_task_work(ctx);
	if (ctx->ocq_head)
		io_flush_overflow(ctx);
	io_commit_cqring(ctx);
	return n;
}

/* ---- waiting ---------------------------------------------------------------- */

/*
 * Wait until min_events CQEs are there (0) or, with a deadline other than
 * UINT64_MAX (ktime_get_ns() time), until it passes (-ETIME): Linux's
 * io_cqring_wait with and without IORING_ENTER_EXT_ARG's timeout.
 */
static void io_wait_tw_counted(struct ucmd_ctx *ctx, uint32_t seq, unsigned nr_wait,
			       int timeout_ms);

/*
 * IORING_SETUP_HYBRID_IOPOLL: before a waiter first polls, it sleeps half
 * of what a polled request has been taking (capped at 1 ms, so that a slow
 * outlier does not stall it), then polls as IOPOLL does: fewer polls for
 * the same latency, as Linux's io_uring_hybrid_poll (which sleeps before
 * each request's first poll; here before each wait's).
 */
#define HYBRID_SLEEP_MAX_NS 1000000ull

static void io_hybrid_sleep(struct ucmd_ctx *ctx)
{
	uint64_t ns = __atomic_load_n(&ctx->hybrid_poll_time, __ATOMIC_RELAXED) / 2;
	struct timespec ts;

	if (!ns)
		return;
	if (ns > HYBRID_SLEEP_MAX_NS)
		ns = HYBRID_SLEEP_MAX_NS;
	ts.tv_sec = 0;
	ts.tv_nsec = (long)ns;
	nanosleep(&ts, NULL);
}

/*
 * Sleep on the wait source until it has something or the ring is woken
 * (wait_efd, written by io_wake_waiters while we are counted): the waiter,
 * counted in nr_waiters, read seq before; a wake-up since then, or task
 * work already queued, means no sleep.
 */
static void io_wait_on_src(struct ucmd_ctx *ctx, const struct io_wait_src_ops *wsrc, void *arg,
			   uint32_t seq, unsigned nr_wait, int timeout_ms)
{
	bool defer = ctx->flags & IORING_SETUP_DEFER_TASKRUN;

	atomic_fetch_add_explicit(&ctx->nr_fd_waiters, 1, memory_order_seq_cst);
	/* DEFER_TASKRUN: remote task work wakes us once it reaches what we wait for */
	if (defer)
		atomic_store_explicit(&ctx->cq_wait_nr, nr_wait ? nr_wait : 1, memory_order_seq_cst);
	if (atomic_load_explicit(&ctx->wake, memory_order_seq_cst) == seq &&
	    !atomic_load_explicit(&ctx->tw_list, memory_order_seq_cst))
		wsrc->sleep(arg, ctx->wait_efd, timeout_ms);
	if (defer)
		atomic_store_explicit(&ctx->cq_wait_nr, IO_CQ_WAKE_INIT, memory_order_relaxed);
	atomic_fetch_sub_explicit(&ctx->nr_fd_waiters, 1, memory_order_seq_cst);
}

int io_cqring_wait_deadline(struct ucmd_ctx *ctx, unsigned min_events, uint64_t deadline)
{
	/* before the first poll: a request just issued is not worth polling yet */
	if ((ctx->flags & IORING_SETUP_HYBRID_IOPOLL) &&
	    __atomic_load_n(&ctx->nr_iopoll, __ATOMIC_RELAXED) &&
	    io_cqring_events(ctx) < min_events)
		io_hybrid_sleep(ctx);
	for (;;) {
		mutex_lock(&ctx->uring_lock);
		current_ctx = ctx;
		io_owner_reap(ctx);
		unsigned events = io_cqring_events(ctx);
		bool polling = ctx->nr_iopoll != 0;
		/*
		 * Completions a wait source holds are read here, on this thread,
		 * and a waiter that still needs more sleeps on the source
		 * itself (io_wait_on_src): no other thread in between.
		 */
		const struct io_wait_src_ops *wsrc = NULL;
		void *wsrc_arg = NULL;

		if (ctx->wsrc_nr && events < min_events) {
			/* nothing reaped: the waiter sleeps on the source, unless its time is up */
			bool sleeps = deadline == UINT64_MAX || ktime_get_ns() < deadline;

			if (ctx->wsrc_ops->reap(ctx->wsrc_arg, sleeps) > 0) {
				io_owner_reap(ctx);
				events = io_cqring_events(ctx);
			}
			if (ctx->wsrc_nr && events < min_events && ctx->wsrc_ops->sleep_begin(ctx->wsrc_arg)) {
				wsrc = ctx->wsrc_ops;
				wsrc_arg = ctx->wsrc_arg;
			}
		}
		/*
		 * Counted as a waiter before reading the wake sequence, under
		 * uring_lock: another thread that submits (and posts CQEs in its
		 * io_commit_cqring) once we unlock sees us and bumps it, so the
		 * futex wait below cannot sleep through those CQEs (Linux's
		 * prepare_to_wait before the check). A DEFER_TASKRUN ring's
		 * waiter is its only submitter: no other thread posts its CQEs.
		 */
		bool early = !(ctx->flags & IORING_SETUP_DEFER_TASKRUN);
		if (early)
			atomic_fetch_add_explicit(&ctx->nr_waiters, 1, memory_order_seq_cst);
		uint32_t seq = atomic_load_explicit(&ctx->wake, memory_order_acquire);
		current_ctx = NULL;
		mutex_unlock(&ctx->uring_lock);

		int ret = 1, wait_ms = 1000;
		if (events >= min_events) {
			ret = 0;
		} else if (deadline != UINT64_MAX) {
			uint64_t now = ktime_get_ns();

			if (now >= deadline) {
				ret = -ETIME;
			} else {
				uint64_t left_ms = (deadline - now + 999999) / 1000000;
				if (left_ms < 1000)
					wait_ms = (int)left_ms;
			}
		}
		if (wsrc) {
			if (ret > 0)
				io_wait_on_src(ctx, wsrc, wsrc_arg, seq, min_events - events, wait_ms);
			wsrc->sleep_end(wsrc_arg);
		} else if (ret > 0 && polling)
			sched_yield();	/* IOPOLL: completions are found by polling, not by sleeping */
		else if (ret > 0 && early)
			io_wait_tw_counted(ctx, seq, min_events - events, wait_ms);
		else if (ret > 0)
			io_wait_for_tw(ctx, seq, min_events - events, wait_ms);
		if (early)
			atomic_fetch_sub_explicit(&ctx->nr_waiters, 1, memory_order_seq_cst);
		if (ret <= 0)
			return ret;
	}
}

int io_cqring_wait(struct ucmd_ctx *ctx, unsigned min_events)
{
	return io_cqring_wait_deadline(ctx, min_events, UINT64_MAX);
}

/* io_wait_for_tw for a caller already counted in nr_waiters */
static void io_wait_tw_counted(struct ucmd_ctx *ctx, uint32_t seq, unsigned nr_wait,
			       int timeout_ms)
{
	bool defer = ctx->flags & IORING_SETUP_DEFER_TASKRUN;

	if (defer)
		atomic_store_explicit(&ctx->cq_wait_nr, nr_wait ? nr_wait : 1, memory_order_seq_cst);
	/* Work queued before cq_wait_nr was set woke nobody: run it instead. */
	if (!atomic_load_explicit(&ctx->tw_list, memory_order_seq_cst))
		futex_wait(&ctx->wake, seq, timeout_ms);
	if (defer)
		atomic_store_explicit(&ctx->cq_wait_nr, IO_CQ_WAKE_INIT, memory_order_relaxed);
}

void io_wait_for_tw(struct ucmd_ctx *ctx, uint32_t seq, unsigned nr_wait, int timeout_ms)
{
	atomic_fetch_add_explicit(&ctx->nr_waiters, 1, memory_order_acq_rel);
	io_wait_tw_counted(ctx, seq, nr_wait, timeout_ms);
	atomic_fetch_sub_explicit(&ctx->nr_waiters, 1, memory_order_acq_rel);
}
