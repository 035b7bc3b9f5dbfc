/* SPDX-License-Identifier: MIT */
/*
 * A client ring: an engine ring whose memory is a memfd shared with the
 * client (Linux's ring layout, ring/ring.c, and a control page after the
 * SQEs), served by the daemon's workers in the model of the kernel's
 * SQPOLL thread. The engine takes the client's SQEs from that memory and posts
 * its CQEs there, for the client's task: its fds are the client's numbers
 * (the task's file table), its addresses the client's memory (the task's
 * mm, reached when each request is issued).
 *
 * The shared memory is never trusted, and the engine is made to know it
 * (io_ring_set_bounds): it keeps its own SQ head, CQ tail and dropped
 * count and only ever stores them there; it reads the client's SQ tail,
 * submit limit and CQ head once per use and bounds them; an SQ index
 * outside the SQE array counts in sq dropped and is skipped; each SQE is
 * copied once, and only the copy is judged and executed. At most
 * SRV_MAX_OVERFLOW (and twice the SQ entries) requests are alive, and none
 * is taken while CQEs overflow, so the overflow list never holds more:
 * no CQE is ever dropped (IORING_FEAT_NODROP) and a client that stops
 * reaping stops only itself (ctl->sq_blocked tells it so).
 *
 * Wake-ups without a system call per command while both sides are busy:
 * the daemon's ring workers (ring_pool.c) serve every ring, polling a
 * SQPOLL ring (within its uid's budget, quota.c) for idle_ms after its
 * last work (napping while its client leaves CQEs unreaped), any other
 * for SRV_BUSY_POLL_US after a pass that did work (srv_ring_idle: cut
 * short on a crowded machine, ring_pool.c); the last worker to go to sleep sets IORING_SQ_NEED_WAKEUP, looks once more,
 * and sleeps in poll() on the sq eventfds (the clients' doorbells) and the
 * eventfds the engine writes whenever a ring's owner has completions to
 * run (io_ring_set_owner_wake). The client sleeping for CQEs sets
 * ctl->cq_fwaiting and sleeps on the control page's futex, which the
 * worker wakes after posting only then (cq_wake: one FUTEX_WAKE); a client
 * that predates the futex sets ctl->cq_waiting and sleeps on the cq
 * eventfd, written through efd.c, which never waits on a client's eventfd.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/core.h"
#include "security/hooks.h"
#include "server/bounce_area.h"
#include "server/efd.h"
#include "server/ring.h"
#include "server/ring_pool.h"

/* Polling after the last work before sleeping, when the client set no sq_thread_idle. */
#define SRV_IDLE_MS_DEFAULT	1u
/* A client's sq_thread_idle above this is clamped: a poller polls for its client only so long. */
#define SRV_IDLE_MS_MAX		100u
/* A ring that may not poll while idle still polls this long after a pass that did work. */
#define SRV_BUSY_POLL_US	50u
/*
 * A client that runs reaps what was posted within about a cache-line
 * transfer: CQEs left unreaped this long after the last work mean it is
 * off the CPU, perhaps waiting for ours.
 */
#define SRV_REAP_WAIT_US	SRV_BUSY_POLL_US
/*
 * The engine ring's flags taken from the client's; the rest concern the
 * client's threads (SQPOLL is this file's thread; a task-run or single
 * issuer mode has no meaning for a ring only that thread submits to).
 */
#define ENGINE_FLAGS                                                                     \
	(IORING_SETUP_IOPOLL | IORING_SETUP_SQE128 | IORING_SETUP_CQE32 |                \
	 IORING_SETUP_CQSIZE | IORING_SETUP_CLAMP | IORING_SETUP_SUBMIT_ALL |            \
	 IORING_SETUP_NO_SQARRAY)

uint64_t srv_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static void efd_drain(int fd)
{
	uint64_t v;

	if (read(fd, &v, sizeof(v)) < 0)
		return;
}

static void sq_flag(struct srv_ring *r, unsigned flag, bool on)
{
	if (on)
		__atomic_fetch_or(r->ctx->rings.sq_flags, flag, __ATOMIC_SEQ_CST);
	else
		__atomic_fetch_and(r->ctx->rings.sq_flags, ~flag, __ATOMIC_SEQ_CST);
}

/*
 * Wake the client's threads that sleep for CQEs: on the cq eventfd
 * (cq_waiting) and on the control page's futex (cq_fwaiting). The caller
 * stored what they wait for (seq_cst) before: pairs with the client's
 * count store, then its look. A FUTEX_WAKE never waits on the client, so
 * it needs none of efd.c's guard.
 */
static void cq_wake(struct srv_ring *r)
{
	if (__atomic_load_n(&r->ctl->cq_waiting, __ATOMIC_SEQ_CST))
		(void)srv_efd_signal(r->cq_efd);
	if (__atomic_load_n(&r->ctl->cq_fwaiting, __ATOMIC_SEQ_CST)) {
		/* after the client's read of it: its FUTEX_WAIT then returns at once */
		__atomic_fetch_add(&r->ctl->cq_futex, 1, __ATOMIC_SEQ_CST);
		(void)srv_futex_wake(&r->ctl->cq_futex);
	}
}

/* CQEs were posted up to tail: wake the client if it sleeps, signal its eventfd. */
static void cq_posted(struct srv_ring *r, unsigned tail)
{
	/*
	 * The tail again, seq_cst (a plain store on x86), then the client's
	 * flag: pairs with the client's flag store, then its look at the tail.
	 */
	if (!r->bounce)
		__atomic_store_n(r->ctx->rings.cq_tail, tail, __ATOMIC_SEQ_CST);
	/* else the commit's compare-and-swap was that store (bounce_area.c) */
	cq_wake(r);
	if (r->user_efd >= 0 &&
	    !(__atomic_load_n(r->ctx->rings.cq_flags, __ATOMIC_RELAXED) &
	      IORING_CQ_EVENTFD_DISABLED))
		(void)srv_efd_signal(r->user_efd);
}

/*
 * One round as the ring's owner: completions in (task work, polled ones,
 * overflow), then the SQEs the engine may take. Returns how much it did
 * (SQ entries consumed, CQEs posted, task work run). Under r->lock.
 */
static unsigned pass(struct srv_ring *r, bool take)
{
	struct ucmd_ctx *ctx = r->ctx;
	unsigned did, posted, sq_head, recs = 0, shown;

	mutex_lock(&ctx->uring_lock);
	current_ctx = ctx;
	/* the client's mappings are asked for their protection once per pass */
	user_mm_batch_begin();
	/* reads issued in this pass may bounce in this ring's area */
	srv_bounce_enter(r->bounce, ctx->cached_sq_head);
	sq_head = ctx->cached_sq_head;
	did = io_owner_reap(ctx);
	if (take) {
		unsigned n = io_sqring_takeable(ctx);

		if (n) {
			(void)io_submit_sqes(ctx, n);
			/* what completed on another thread meanwhile */
			did += io_owner_reap(ctx);
		}
	}
	/* what the client copied out of the area (or we did for it): its CQEs may show */
	if (r->bounce && srv_bounce_poll(r->bounce, r->exiting))
		ctx->cq_dirty = true;
	io_commit_cqring(ctx);
	did += ctx->cached_sq_head - sq_head;
	__atomic_store_n(&r->sq_taken, ctx->cached_sq_head, __ATOMIC_RELAXED);
	/* also what registration's quiesce posted since the last pass */
	shown = ctx->cached_cq_tail;
	if (r->bounce) {
		unsigned made;
		bool waiting;

		srv_bounce_state(r->bounce, &made, &waiting, &shown);
		/*
		 * IORING_SETUP_TASKRUN_FLAG: Linux sets IORING_SQ_TASKRUN while
		 * completions wait for the task to enter (its task work). Ours
		 * are the reads whose data waits in the area for the client's
		 * enter to copy it out: their CQEs show only then, or after
		 * srv_bounce_wait_ns. A program that peeks the CQ (liburing
		 * enters for it only when the flag says so) gets them at once.
		 */
		if ((r->flags & IORING_SETUP_TASKRUN_FLAG) && waiting != r->taskrun) {
			sq_flag(r, IORING_SQ_TASKRUN, waiting);
			r->taskrun = waiting;
		}
		/* read by a worker choosing how long to sleep, without the ring's lock */
		__atomic_store_n(&r->bounce_waiting, waiting, __ATOMIC_RELAXED);
		/* records for the client to copy: it is woken for them as for CQEs */
		recs = made - r->bounce_told;
		r->bounce_told = made;
		did += recs;
	}
	posted = shown - r->cq_told;
	__atomic_store_n(&r->cq_told, shown, __ATOMIC_RELAXED);
	did += posted;
	srv_bounce_leave();
	r->nr_reqs = ctx->nr_reqs;
	r->passes++;
	/* these four are read by workers choosing how to wait, without the ring's lock */
	__atomic_store_n(&r->nr_iopoll, ctx->nr_iopoll, __ATOMIC_RELAXED);
	__atomic_store_n(&r->overflowing, ctx->ocq_head != NULL, __ATOMIC_RELAXED);
	/* nothing alive, nothing held for the client: only new SQEs can give the next pass work */
	__atomic_store_n(&r->quiet, !did && !ctx->nr_reqs && !ctx->ocq_head && !recs &&
			 !(r->bounce && r->bounce_waiting), __ATOMIC_RELAXED);
	user_mm_batch_end();
	current_ctx = NULL;
	mutex_unlock(&ctx->uring_lock);
	if (posted)
		cq_posted(r, r->cq_told);
	else if (recs)
		cq_wake(r);
	return did;
}

/*
 * CQEs posted but not reaped: the client's head is read as a hint only (it
 * decides nothing but when a worker naps; a client lying about it only
 * makes its own ring's poll nap).
 */
static bool cq_unreaped(const struct srv_ring *r)
{
	return __atomic_load_n(r->ctx->rings.cq_head, __ATOMIC_RELAXED) !=
	       __atomic_load_n(&r->cq_told, __ATOMIC_RELAXED);
}

bool srv_ring_done(const struct srv_ring *r)
{
	return atomic_load(&r->stop) || atomic_load(&r->c->dead) ||
	       atomic_load(&r->c->d->stopping);
}

static bool match_any(struct ucmd_kiocb *req, void *data)
{
	(void)req;
	(void)data;
	return true;
}

/*
 * The end, on the thread that destroys the ring (never a worker: the
 * wait below must not hold up other clients' rings), once no worker serves
 * it: no new SQE; what the engine can cancel is cancelled (ring_exit_begin,
 * for every ring of a client before any waits), the rest waited for; CQEs
 * posted while the client can still read them; then the client learns the
 * ring is dead.
 */
static void ring_exit_begin(struct srv_ring *r)
{
	struct ucmd_ctx *ctx = r->ctx;
	const struct ucmd_task *prev = current_task();

	task_override_set(&r->c->task);
	pthread_mutex_lock(&r->lock);
	pass(r, false);
	if (r->nr_reqs) {
		mutex_lock(&ctx->uring_lock);
		current_ctx = ctx;
		(void)io_try_cancel(ctx, match_any, NULL, true, false);
		current_ctx = NULL;
		mutex_unlock(&ctx->uring_lock);
	}
	pthread_mutex_unlock(&r->lock);
	task_override_set(prev);
}

static void ring_exit_wait(struct srv_ring *r)
{
	struct pollfd pfd = { .fd = r->owner_efd, .events = POLLIN };
	const struct ucmd_task *prev = current_task();

	task_override_set(&r->c->task);
	pthread_mutex_lock(&r->lock);
	for (;;) {
		pass(r, false);
		if (!r->nr_reqs)
			break;
		if (!r->nr_iopoll && poll(&pfd, 1, 100) > 0)
			efd_drain(r->owner_efd);
	}
	/* data the client has not copied out: through its /proc/PID/mem, then the CQEs */
	if (r->bounce_waiting) {
		r->exiting = true;
		pass(r, false);
	}
	__atomic_store_n(&r->ctl->state, UCMDD_RING_DEAD, __ATOMIC_SEQ_CST);
	/* a client asleep for CQEs wakes to -ENOTCONN, whichever way it sleeps */
	(void)srv_efd_signal(r->cq_efd);
	cq_wake(r);
	pthread_mutex_unlock(&r->lock);
	task_override_set(prev);
	/*
	 * A relay ring's CQEs its client did not copy: into the ring they
	 * belong to. Out of the pool and stopped, nothing else touches r; its
	 * lock is not held while another ring's is taken.
	 */
	if (r->relay)
		srv_relay_leftovers(r);
}

void srv_ring_post(struct srv_ring *r, const struct io_uring_cqe *cqes, const uint64_t (*extra)[2],
		   unsigned nr)
{
	struct ucmd_ctx *ctx = r->ctx;
	const struct ucmd_task *prev = current_task();

	task_override_set(&r->c->task);
	pthread_mutex_lock(&r->lock);
	mutex_lock(&ctx->uring_lock);
	current_ctx = ctx;
	/* a CQ full: held in order with the ring's own overflow, as the engine holds any */
	for (unsigned i = 0; i < nr; i++)
		io_post_cqe(ctx, &cqes[i], extra ? extra[i] : NULL);
	current_ctx = NULL;
	mutex_unlock(&ctx->uring_lock);
	/* committed, and the client woken, as for the ring's own CQEs */
	pass(r, false);
	srv_ring_unlock(r);
	task_override_set(prev);
}

/*
 * Only a SQPOLL ring the policy allowed, within its uid's budget, polls
 * for sq_thread_idle, and also after a wake-up that found nothing. Any
 * other ring polls SRV_BUSY_POLL_US, and only after a pass that did work
 * (the client's next batch usually follows within it: without, every batch
 * would pay a wake-up); woken for nothing, it asks for sleep at once. A
 * client ringing the doorbell of an idle ring buys a wake-up, never a
 * spinning core.
 */
static uint64_t poll_us(const struct srv_ring *r)
{
	return r->spin ? (uint64_t)r->idle_ms * 1000u : SRV_BUSY_POLL_US;
}

unsigned srv_ring_serve(struct srv_ring *r, uint64_t now)
{
	unsigned did;

	/* everything the engine does for this ring sees the client */
	task_override_set(&r->c->task);
	/* before the pass: a poke after this is seen by the next look */
	if (atomic_load_explicit(&r->poked, memory_order_relaxed))
		atomic_store(&r->poked, false);
	did = pass(r, true);
	task_override_set(NULL);
	if (did) {
		__atomic_store_n(&r->last_work, now, __ATOMIC_RELAXED);
		__atomic_store_n(&r->idle_until, now + poll_us(r), __ATOMIC_RELAXED);
	}
	return did;
}

enum srv_idle srv_ring_idle(const struct srv_ring *r, uint64_t now)
{
	/* an IOPOLL ring completes only by being polled */
	if (__atomic_load_n(&r->nr_iopoll, __ATOMIC_RELAXED))
		return SRV_IDLE_IOPOLL;
	if (now >= __atomic_load_n(&r->idle_until, __ATOMIC_RELAXED))
		return SRV_IDLE_SLEEP;
	/*
	 * A client that leaves our CQEs unreaped is off the CPU, often
	 * waiting for one of ours: an SQPOLL client may spin on its CQ
	 * without a system call (fio), and a yield did not hand it the CPU
	 * (fio sharing one with the poller: 1.1K IOPS). So then the poll
	 * naps: the CPU is free for it, and the next SQE is taken at the
	 * nap's end without a doorbell (33K to 41K IOPS).
	 */
	if (r->spin && cq_unreaped(r) &&
	    now - __atomic_load_n(&r->last_work, __ATOMIC_RELAXED) >= SRV_REAP_WAIT_US)
		return SRV_IDLE_NAP;
	/* the SQPOLL budget is the policy's promise; the busy poll is only ours */
	return r->spin ? SRV_IDLE_POLL : SRV_IDLE_BUSY;
}

void srv_ring_woken(struct srv_ring *r, uint64_t now)
{
	if (r->spin)
		__atomic_store_n(&r->idle_until, now + poll_us(r), __ATOMIC_RELAXED);
}

void srv_ring_need_wakeup(struct srv_ring *r, bool on)
{
	sq_flag(r, IORING_SQ_NEED_WAKEUP, on);
}

bool srv_ring_pending(const struct srv_ring *r)
{
	/*
	 * The head as the last pass left it (sq_taken), not the ring's: the
	 * client can write that one, and a worker that believed it would never
	 * sleep. Behind the engine's, never ahead: a stale look costs a loop.
	 */
	return __atomic_load_n(r->sq_sub, __ATOMIC_RELAXED) !=
	       __atomic_load_n(&r->sq_taken, __ATOMIC_RELAXED);
}

bool srv_ring_quiet(const struct srv_ring *r)
{
	/*
	 * The poke first: a thread that changed the ring under its lock
	 * (registration, the bounce area) pokes it before its unlock, so a
	 * worker that sees quiet from an older pass sees the poke too.
	 */
	if (atomic_load(&r->poked) || !__atomic_load_n(&r->quiet, __ATOMIC_ACQUIRE))
		return false;
	/* seq_cst: after a relook (ring_pool.c serve) this load is the look asked for */
	return __atomic_load_n(r->sq_sub, __ATOMIC_SEQ_CST) ==
	       __atomic_load_n(&r->sq_taken, __ATOMIC_RELAXED);
}

void srv_ring_unlock(struct srv_ring *r)
{
	uint64_t one = 1;

	/* a polling worker looks at it whole again (srv_ring_quiet) */
	atomic_store(&r->poked, true);
	pthread_mutex_unlock(&r->lock);
	/* a full counter (EAGAIN) already says "wake up" */
	if (write(r->owner_efd, &one, sizeof(one)) < 0)
		return;
}

int srv_ring_sleep_ms(const struct srv_ring *r)
{
	/* a backed-up CQ is looked at again soon: the client need not ring for reaping */
	/* without the ring's lock (a sleeping worker looks at every ring): a stale look costs a wake */
	if (__atomic_load_n(&r->overflowing, __ATOMIC_RELAXED))
		return (int)r->idle_ms;
	/* so is one whose client has data to copy out: we copy it after a while */
	if (__atomic_load_n(&r->bounce_waiting, __ATOMIC_RELAXED))
		return (int)(srv_bounce_wait_ns / 1000000u) + 1;
	return -1;
}

/* ---- set-up and teardown ---- */

static void ring_free(struct srv_ring *r)
{
	/* the ring memory goes with the engine ring; the client keeps its own mapping */
	if (r->er_live)
		ucmd_queue_exit(&r->er);
	/* the engine ring's completions and commits are over */
	srv_bounce_free(r->bounce);
	/* the engine ring may write owner_efd until it is gone */
	if (r->owner_efd >= 0)
		close(r->owner_efd);
	if (r->sq_efd >= 0)
		close(r->sq_efd);
	if (r->cq_efd >= 0)
		close(r->cq_efd);
	if (r->user_efd >= 0)
		close(r->user_efd);
	pthread_mutex_destroy(&r->lock);
	if (r->spin)
		srv_quota_uncharge(r->c->d, r->c->cred.uid, SRV_RES_SPIN, 1);
	if (r->charged)
		srv_quota_uncharge(r->c->d, r->c->cred.uid, SRV_RES_RING, 1);
	free(r);
}

static int ring_setup(struct srv_ring *r, const struct ucmdd_queue_init *req,
		      struct io_uring_params *p)
{
	struct io_uring_params ep = *p;
	struct io_ring_bounds b = { 0 };
	struct io_rings *m;
	unsigned entries = req->entries, sq = 1;
	bool copy = req->flags & UCMDD_QI_SUBMIT_COPY;
	size_t tail = sizeof(struct ucmdd_ring_ctl);
	struct stat st;
	int ret;

	ret = io_validate_params(p);
	if (ret)
		return ret;
	if (!entries)
		return -EINVAL;
	if (entries > SRV_MAX_ENTRIES) {
		if (!(p->flags & IORING_SETUP_CLAMP))
			return -EINVAL;
		entries = SRV_MAX_ENTRIES;
	}
	/* a relay ring's client submits what it takes from the shared SQ */
	if ((req->flags & UCMDD_QI_RELAY) && (copy || (p->flags & IORING_SETUP_SQPOLL)))
		return -EINVAL;
	if (copy) {
		/* a SQPOLL ring has no submit to copy in; the supervisor's layout has no room */
		if ((p->flags & IORING_SETUP_SQPOLL) || (req->flags & UCMDD_QI_SQES_AT_OFF))
			return -EINVAL;
		/* the program's SQ after the control page: as long as the ring's, as the engine rounds it */
		while (sq < entries)
			sq <<= 1;
		tail = ucmdd_psq_len(sq, (p->flags & IORING_SETUP_SQE128) ? 128 : 64);
	}
	/* a client asking for a polling thread is judged as in-process */
	if (p->flags & IORING_SETUP_SQPOLL) {
		ret = security_uring_sqpoll(r->c->d->e, &r->c->cred);
		if (ret)
			return ret;
		/* beyond its uid's budget the ring is still SQPOLL, but its thread does not poll */
		r->spin = !srv_quota_charge(r->c->d, r->c->cred.uid, SRV_RES_SPIN, 1);
	}
	ep.flags = p->flags & ENGINE_FLAGS;
	ret = io_queue_init_shared(r->c->d->e, entries, &r->er, &ep, tail,
				   req->flags & UCMDD_QI_SQES_AT_OFF ? IORING_OFF_SQES : 0);
	if (ret)
		return ret;
	r->er_live = true;
	r->ctx = ring_to_ctx(&r->er);
	m = &r->ctx->rings;
	if (m->cq_entries > UCMD_MAX_CQ_ENTRIES || (copy && m->sq_entries != sq))
		return -EINVAL;
	/* the client may map it, never resize it under the daemon's mapping */
	if (fcntl(m->memfd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0)
		return -errno;
	if (fstat(m->memfd, &st) < 0)
		return -errno;
	r->mem_dev = st.st_dev;
	r->mem_ino = st.st_ino;
	r->ctl = (struct ucmdd_ring_ctl *)((char *)m->mem + m->tail_off);
	/* before the client has the ring: it may sleep on the futex (cq_wake) */
	r->ctl->features = UCMDD_CTL_CQ_FUTEX | UCMDD_CTL_SQ_BELL;
	/* what the client is told: its own flags, the layout the engine made */
	ep.flags = p->flags;
	ep.sq_thread_cpu = p->sq_thread_cpu;
	ep.sq_thread_idle = p->sq_thread_idle;
	*p = ep;
	r->flags = p->flags;
	r->idle_ms = p->sq_thread_idle ? p->sq_thread_idle : SRV_IDLE_MS_DEFAULT;
	if (r->idle_ms > SRV_IDLE_MS_MAX)
		r->idle_ms = SRV_IDLE_MS_MAX;

	r->sq_efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	r->cq_efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	r->owner_efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (r->sq_efd < 0 || r->cq_efd < 0 || r->owner_efd < 0)
		return -errno;

	/* requests alive per ring, so also CQEs held for a client whose CQ is full */
	b.max_reqs = 2 * m->sq_entries;
	if (b.max_reqs > SRV_MAX_OVERFLOW)
		b.max_reqs = SRV_MAX_OVERFLOW;
	/*
	 * Without SQPOLL, the client's submit says how far the SQ is
	 * submitted: by sq_limit, or (UCMDD_QI_SUBMIT_COPY) by the tail, which
	 * only its submit moves.
	 */
	if (!(p->flags & IORING_SETUP_SQPOLL) && !copy)
		b.sq_limit = &r->ctl->sq_limit;
	/*
	 * A poll looks at what the engine may take: SQEs published but not
	 * yet submitted (the client's tail store comes before its submit's
	 * limit, by a whole bounce_writes walk) would make it pass over the
	 * ring again and again for nothing, and the pass under way when the
	 * limit moves delays that batch.
	 */
	r->sq_sub = b.sq_limit ? b.sq_limit : r->ctx->rings.sq_tail;
	b.sq_blocked = &r->ctl->sq_blocked;
	io_ring_set_bounds(&r->er, &b);
	io_ring_set_owner_wake(&r->er, r->owner_efd);
	/* the client's ring: its addresses are the client's, its identity frozen at connect */
	io_ring_set_task(&r->er, &r->c->task);
	return 0;
}

static int dup_fds(struct srv_ring *r, int fds[3])
{
	const int src[3] = { r->ctx->rings.memfd, r->sq_efd, r->cq_efd };

	for (int i = 0; i < 3; i++) {
		fds[i] = fcntl(src[i], F_DUPFD_CLOEXEC, 0);
		if (fds[i] < 0) {
			int err = -errno;

			while (i-- > 0)
				close(fds[i]);
			return err;
		}
	}
	return 0;
}

int srv_ring_create(struct srv_client *c, const struct ucmdd_queue_init *req,
		    struct ucmdd_queue_init_rep *rep, int fds[3])
{
	return srv_ring_create_relay(c, req, rep, fds, -1);
}

int srv_ring_create_relay(struct srv_client *c, const struct ucmdd_queue_init *req,
			  struct ucmdd_queue_init_rep *rep, int fds[3], int relay_fd)
{
	struct io_uring_params p = req->p;
	struct srv_ring *r;
	int id = -1, ret;

	fds[0] = fds[1] = fds[2] = -1;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->c = c;
	r->sq_efd = r->cq_efd = r->owner_efd = r->user_efd = -1;
	atomic_init(&r->stop, false);
	atomic_init(&r->poked, false);
	pthread_mutex_init(&r->lock, NULL);
	ret = srv_quota_charge(c->d, c->cred.uid, SRV_RES_RING, 1);
	r->charged = !ret;
	if (!ret && (req->flags & UCMDD_QI_RELAY)) {
		r->relay = true;
		ret = relay_fd < 0 ? -EBADF
				   : srv_relay_target(c->d, relay_fd, &r->relay_dev, &r->relay_ino);
	}
	if (!ret)
		ret = ring_setup(r, req, &p);
	if (!ret)
		ret = dup_fds(r, fds);
	if (ret) {
		ring_free(r);
		return ret;
	}
	/* the slot is taken only once nothing else can fail but the thread */
	pthread_mutex_lock(&c->lock);
	for (unsigned i = 0; i < SRV_MAX_RINGS; i++) {
		if (!c->rings[i]) {
			id = (int)i;
			c->rings[i] = r;
			break;
		}
	}
	pthread_mutex_unlock(&c->lock);
	if (id < 0) {
		ret = -EMFILE;
	} else {
		r->id = (uint32_t)id;
		/* a SQPOLL ring's poll starts at once, as its thread's would */
		r->idle_until = r->spin ? srv_now_us() + poll_us(r) : 0;
		ret = srv_pool_add(c->d, r);
		if (ret) {
			pthread_mutex_lock(&c->lock);
			c->rings[id] = NULL;
			pthread_mutex_unlock(&c->lock);
		}
	}
	if (ret) {
		for (int i = 0; i < 3; i++)
			close(fds[i]);
		fds[0] = fds[1] = fds[2] = -1;
		ring_free(r);
		return ret;
	}
	memset(rep, 0, sizeof(*rep));
	rep->ring_id = r->id;
	rep->mmap_size = r->ctx->rings.size;
	rep->ctl_off = r->ctx->rings.tail_off;
	rep->sqes_off = p.sq_off.resv2;
	rep->p = p;
	return id;
}

int srv_ring_bounce(struct srv_client *c, uint32_t ring_id, struct ucmdd_bounce_rep *rep, int *fd)
{
	struct srv_ring *r = srv_ring_get(c, ring_id);
	struct srv_bounce *b = NULL;
	unsigned tail;
	int ret;

	if (!r)
		return -EBADF;
	/* a SQPOLL ring's owner need not enter: nobody would copy */
	if (r->flags & IORING_SETUP_SQPOLL)
		return -EOPNOTSUPP;
	pthread_mutex_lock(&r->lock);
	if (r->bounce) {
		srv_ring_unlock(r);
		return -EEXIST;
	}
	mutex_lock(&r->ctx->uring_lock);
	tail = r->ctx->cached_cq_tail;
	mutex_unlock(&r->ctx->uring_lock);
	ret = srv_bounce_create(c, tail, &b, rep);
	if (!ret) {
		*fd = fcntl(srv_bounce_fd(b), F_DUPFD_CLOEXEC, 0);
		if (*fd < 0) {
			ret = -errno;
			srv_bounce_free(b);
		}
	}
	if (!ret) {
		/* between passes (we hold lock): the next one issues into it */
		r->bounce = b;
		r->bounce_told = 0;
		io_ring_set_cq_publish(&r->er, srv_bounce_cq_publish, b);
	}
	srv_ring_unlock(r);
	return ret;
}

/* Out of the workers' hands, then drained and freed here. */
static void ring_stop_free(struct srv_ring *r)
{
	atomic_store(&r->stop, true);
	srv_pool_remove(r->c->d, r);
	ring_exit_begin(r);
	ring_exit_wait(r);
	ring_free(r);
}

struct srv_ring *srv_ring_get(struct srv_client *c, uint32_t id)
{
	struct srv_ring *r = NULL;

	pthread_mutex_lock(&c->lock);
	if (id < SRV_MAX_RINGS)
		r = c->rings[id];
	pthread_mutex_unlock(&c->lock);
	return r;
}

static struct srv_ring *ring_take(struct srv_client *c, uint32_t id)
{
	struct srv_ring *r = NULL;

	pthread_mutex_lock(&c->lock);
	if (id < SRV_MAX_RINGS) {
		r = c->rings[id];
		c->rings[id] = NULL;
	}
	pthread_mutex_unlock(&c->lock);
	return r;
}

int srv_ring_destroy(struct srv_client *c, uint32_t ring_id)
{
	struct srv_ring *r = ring_take(c, ring_id);

	if (!r)
		return -EBADF;
	ring_stop_free(r);
	return 0;
}

void srv_rings_destroy_all(struct srv_client *c)
{
	struct srv_ring *r[SRV_MAX_RINGS];

	/* stop them all and cancel what each holds first: each drains while the others do */
	for (uint32_t i = 0; i < SRV_MAX_RINGS; i++) {
		r[i] = ring_take(c, i);
		if (r[i]) {
			atomic_store(&r[i]->stop, true);
			srv_pool_remove(c->d, r[i]);
			ring_exit_begin(r[i]);
		}
	}
	for (uint32_t i = 0; i < SRV_MAX_RINGS; i++) {
		if (r[i]) {
			ring_exit_wait(r[i]);
			ring_free(r[i]);
		}
	}
}
