/* SPDX-License-Identifier: MIT */
/*
 * A client ring: a memfd with Linux's ring layout (the same code lays out
 * the engine's own rings, ring/ring.c) and a control page after the SQEs,
 * shared with the client; behind it the daemon's own ring on the engine,
 * and a proxy thread between the two in the model of the kernel's SQPOLL
 * thread.
 *
 * The proxy never trusts the shared memory: it keeps its own SQ head, CQ
 * tail and dropped count and only ever stores them there; it reads the
 * client's SQ tail and CQ head once per pass and bounds them; each SQE
 * index is checked (a bad one counts in sq dropped, as in Linux); each SQE
 * is copied out once, and only the copy is translated (xlate.c), judged
 * and executed. Its fds are the client's own numbers: the engine ring
 * belongs to the client's task and resolves them in its file table. No pointer lives in shared memory.
 *
 * Wake-ups without a system call per command while both sides are busy: a
 * SQPOLL ring's proxy (within its uid's budget, quota.c) polls for idle_ms
 * after its last work, any other for SRV_BUSY_POLL_US after a pass that
 * did work (proxy_thread); then it sets
 * IORING_SQ_NEED_WAKEUP, looks once more, and sleeps in poll() on the sq
 * eventfd (the client's doorbell) and an eventfd the engine ring writes
 * whenever its owner has completions to run (io_ring_set_owner_wake). The
 * client sleeping for CQEs sets ctl->cq_waiting; the proxy writes the cq
 * eventfd after posting only then.
 *
 * A full CQ: CQEs wait in the ring's overflow list (IORING_SQ_CQ_OVERFLOW
 * set) and the proxy takes no SQE until it is empty. Since every CQE comes
 * from a pending slot or a failed SQE of a pass that found the list empty,
 * the list never holds more than there are slots (at most SRV_MAX_OVERFLOW):
 * no CQE is ever dropped (IORING_FEAT_NODROP), and a client that stops
 * reaping stops only itself.
 */
#include <errno.h>
#include <sys/uio.h>
#include <sched.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "core/core.h"
#include "lib/cpu.h"
#include "security/hooks.h"
#include "server/efd.h"
#include "server/ring.h"

/* Polling after the last work before sleeping, when the client set no sq_thread_idle. */
#define SRV_IDLE_MS_DEFAULT	1u
/* A client's sq_thread_idle above this is clamped: a proxy polls for its client only so long. */
#define SRV_IDLE_MS_MAX		100u
/* A ring that may not poll while idle still polls this long after a pass that did work. */
#define SRV_BUSY_POLL_US	50u
/* idle polls that only pause before each further one yields the CPU */
#define PROXY_SPIN_PAUSES	256u
/* Engine ring flags taken from the client's; the rest concern the client's threads. */
#define ENGINE_FLAGS (IORING_SETUP_IOPOLL | IORING_SETUP_SQE128 | IORING_SETUP_CQE32)
#define CQE_BATCH 64u
#define NO_SLOT UINT32_MAX

static uint64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* Our own eventfds only (owner_efd): the client's go through efd.c, which never waits on it. */
static void efd_signal(int fd)
{
	uint64_t one = 1;

	/* a full counter (EAGAIN) already says "wake up" */
	if (fd >= 0 && write(fd, &one, sizeof(one)) < 0)
		return;
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
		__atomic_fetch_or(r->mem.sq_flags, flag, __ATOMIC_SEQ_CST);
	else
		__atomic_fetch_and(r->mem.sq_flags, ~flag, __ATOMIC_SEQ_CST);
}

/* ---- pending slots ---- */

static unsigned slot_alloc(struct srv_ring *r)
{
	unsigned i = r->free_head;

	r->free_head = r->x.slots[i].next_free;
	r->x.slots[i].busy = true;
	r->x.slots[i].internal = false;
	r->nr_pending++;
	return i;
}

static void slot_free(struct srv_ring *r, unsigned i)
{
	r->x.slots[i].busy = false;
	r->nr_pending--;
	if (i == r->nr_slots)
		return;		/* the exit cancel's, never on the free list */
	r->x.slots[i].next_free = r->free_head;
	r->free_head = i;
}

/* ---- the client's CQ ---- */

static unsigned cq_room(struct srv_ring *r)
{
	if (!r->cq_room) {
		unsigned head = __atomic_load_n(r->mem.cq_head, __ATOMIC_ACQUIRE);
		unsigned used = r->cq_tail - head;

		/* a head ahead of our tail, or more than a ring behind, is garbage: full */
		r->cq_room = used > r->mem.cq_entries ? 0 : r->mem.cq_entries - used;
	}
	return r->cq_room;
}

static void cq_write(struct srv_ring *r, const struct srv_ocqe *o)
{
	struct io_uring_cqe *cqe = io_rings_cqe(&r->mem, r->cq_tail);

	cqe->user_data = o->user_data;
	cqe->res = o->res;
	cqe->flags = o->flags;
	if (r->mem.cqe_shift) {
		cqe->big_cqe[0] = o->big[0];
		cqe->big_cqe[1] = o->big[1];
	}
	r->cq_tail++;
	r->cq_room--;
	r->cq_dirty = true;
}

static void post(struct srv_ring *r, const struct srv_ocqe *o)
{
	if (!r->ocq_nr && cq_room(r)) {
		cq_write(r, o);
		return;
	}
	/* bounded by the slots: see the top of this file */
	r->ocq[(r->ocq_first + r->ocq_nr++) % (r->nr_slots + 1)] = *o;
	if (r->ocq_nr == 1)
		sq_flag(r, IORING_SQ_CQ_OVERFLOW, true);
}

static unsigned flush_overflow(struct srv_ring *r)
{
	unsigned n = 0;

	if (!r->ocq_nr)
		return 0;
	while (r->ocq_nr && cq_room(r)) {
		cq_write(r, &r->ocq[r->ocq_first]);
		r->ocq_first = (r->ocq_first + 1) % (r->nr_slots + 1);
		r->ocq_nr--;
		n++;
	}
	if (!r->ocq_nr)
		sq_flag(r, IORING_SQ_CQ_OVERFLOW, false);
	return n;
}

/* Publish the CQ tail; wake the client if it sleeps, signal its eventfd. */
static void cq_commit(struct srv_ring *r)
{
	if (!r->cq_dirty)
		return;
	r->cq_dirty = false;
	/* seq_cst: pairs with the client's cq_waiting store then CQ re-check */
	__atomic_store_n(r->mem.cq_tail, r->cq_tail, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&r->ctl->cq_waiting, __ATOMIC_SEQ_CST))
		(void)srv_efd_signal(r->cq_efd);
	if (r->user_efd >= 0 &&
	    !(__atomic_load_n(r->mem.cq_flags, __ATOMIC_RELAXED) & IORING_CQ_EVENTFD_DISABLED))
		(void)srv_efd_signal(r->user_efd);
}

/* ---- the engine's completions ---- */

static void complete_one(struct srv_ring *r, const struct io_uring_cqe *cqe)
{
	uint64_t i = cqe->user_data;
	struct srv_slot *s;
	struct srv_ocqe o;

	/* only the proxy's own requests are on the engine ring */
	if (i > r->nr_slots || !r->x.slots[i].busy)
		return;
	s = &r->x.slots[i];
	o.res = cqe->res;
	o.user_data = s->user_data;
	o.flags = cqe->flags;
	o.big[0] = r->mem.cqe_shift ? cqe->big_cqe[0] : 0;
	o.big[1] = r->mem.cqe_shift ? cqe->big_cqe[1] : 0;
	if (!s->internal && !(s->skip_success && o.res >= 0))
		post(r, &o);
	slot_free(r, (unsigned)i);
}

static unsigned reap_engine(struct srv_ring *r)
{
	struct io_uring_cqe *cqes[CQE_BATCH];
	unsigned n, total = 0;

	if (!r->nr_pending)
		return 0;
	/* runs the task work that completions found on device threads queued */
	(void)ucmd_enter(&r->er, 0, 0, IORING_ENTER_GETEVENTS);
	while ((n = ucmd_peek_batch_cqe(&r->er, cqes, CQE_BATCH))) {
		for (unsigned i = 0; i < n; i++)
			complete_one(r, cqes[i]);
		ucmd_cq_advance(&r->er, n);
		total += n;
	}
	return total;
}

/* ---- the client's SQ ---- */

static void fail_sqe(struct srv_ring *r, unsigned i, int err)
{
	struct srv_ocqe o = { .user_data = r->x.slots[i].user_data, .res = err };

	post(r, &o);
	slot_free(r, i);
}

/*
 * SQEs the client published and (without SQPOLL) submitted. A tail or a
 * limit further ahead than the ring is long is the client's bug: at most
 * a ring's worth, and only the client's own requests are affected.
 */
static unsigned sq_avail(struct srv_ring *r)
{
	struct io_rings *m = &r->mem;
	/* seq_cst (a plain load on x86): pairs with the client's store, then NEED_WAKEUP load */
	unsigned avail = __atomic_load_n(m->sq_tail, __ATOMIC_SEQ_CST) - r->sq_head;

	if (avail > m->sq_entries)
		avail = m->sq_entries;
	if (!(r->flags & IORING_SETUP_SQPOLL)) {
		unsigned lim = __atomic_load_n(&r->ctl->sq_limit, __ATOMIC_SEQ_CST) - r->sq_head;

		if (lim < avail)
			avail = lim;
	}
	return avail;
}

/*
 * An SQE copy of a size known at compile time: a few vector moves, where
 * memcpy of a variable size becomes rep movs, whose start-up costs more
 * than the copy (perf: the two copies per SQE were a third of a pass).
 */
static inline void sqe_copy(void *dst, const void *src, unsigned sz)
{
	if (sz > 64)
		memcpy(dst, src, 128);
	else
		memcpy(dst, src, 64);
}

/*
 * Take what the client published: snapshot, translate, and hand each link
 * chain to the engine whole, or fail it whole as Linux fails a chain whose
 * member fails its checks (that member its errno, the others -ECANCELED).
 */
static unsigned take_sqes(struct srv_ring *r)
{
	struct io_rings *m = &r->mem;
	unsigned sqe_sz = m->sqe_shift ? 128 : 64;
	unsigned avail = sq_avail(r), head = r->sq_head, n = 0, taken;
	unsigned space = ucmd_sq_space_left(&r->er);
	_Alignas(64) struct io_uring_sqe snap[2];

	if (avail > r->nr_slots - r->nr_pending)
		avail = r->nr_slots - r->nr_pending;
	if (avail > space)
		avail = space;
	if (!avail)
		return 0;
	/*
	 * The client wrote these SQEs on another CPU: every line is a
	 * cross-core miss, and copying them one after the other paid those
	 * misses in series (perf: 80% of a null-command pass at the copy).
	 * Asking for all of them first overlaps the misses.
	 */
	for (unsigned k = 0; k < avail; k++) {
		unsigned idx = __atomic_load_n(&m->sq_array[(head + k) & m->sq_mask], __ATOMIC_RELAXED);

		if (idx < m->sq_entries) {
			const char *p = (const char *)io_rings_sqe(m, idx);

			__builtin_prefetch(p);
			if (sqe_sz > 64)
				__builtin_prefetch(p + 64);
		}
	}
	/*
	 * Their CQEs go to lines the client last read on its CPU: ask for
	 * them for writing now, so that the ownership transfers overlap the
	 * snapshot and the execution rather than stall cq_write one by one
	 * (perf: a quarter of the proxy's time in cq_write's stores).
	 */
	for (unsigned k = 0; k < avail && k < m->cq_entries; k += 4u >> m->cqe_shift)
		prefetchw(io_rings_cqe(m, r->cq_tail + k));
	for (taken = 0; taken < avail; taken++) {
		unsigned idx = __atomic_load_n(&m->sq_array[head & m->sq_mask], __ATOMIC_RELAXED);
		struct io_uring_sqe *esqe = (struct io_uring_sqe *)((char *)r->stage_sqe +
								     (size_t)n * 128);
		unsigned si;

		head++;
		if (idx >= m->sq_entries) {
			r->dropped++;
			__atomic_store_n(m->sq_dropped, r->dropped, __ATOMIC_RELEASE);
			continue;
		}
		/* the snapshot: nothing below reads the shared SQE again */
		sqe_copy(snap, io_rings_sqe(m, idx), sqe_sz);
		si = slot_alloc(r);
		r->x.slots[si].user_data = snap[0].user_data;
		r->stage[n].slot = si;
		r->stage[n].flags = snap[0].flags;
		r->stage[n].err = srv_xlate(&r->x, snap, esqe, &r->x.slots[si]);
		n++;
	}
	r->sq_head = head;
	__atomic_store_n(m->sq_head, head, __ATOMIC_RELEASE);
	if (!n)
		return taken;

	for (unsigned k = 0, end; k < n; k = end + 1) {
		bool failed = false;

		/* a chain: up to the first member without a link flag, or the pass's end */
		for (end = k; end + 1 < n &&
			      (r->stage[end].flags & (IOSQE_IO_LINK | IOSQE_IO_HARDLINK)); end++)
			;
		for (unsigned j = k; j <= end; j++)
			failed |= r->stage[j].err != 0;
		for (unsigned j = k; j <= end; j++) {
			unsigned si = r->stage[j].slot;
			struct io_uring_sqe *e;

			if (failed) {
				if (!r->stage[j].err)
					r->stage[j].err = -ECANCELED;
				continue;
			}
			/* space was counted above */
			e = ucmd_get_sqe(&r->er);
			sqe_copy(e, (char *)r->stage_sqe + (size_t)j * 128, sqe_sz);
			e->user_data = si;
		}
	}
	/* the engine takes each fd's file from the client's table, a reference each */
	(void)ucmd_submit(&r->er);

	for (unsigned k = 0; k < n; k++)
		if (r->stage[k].err)
			fail_sqe(r, r->stage[k].slot, r->stage[k].err);
	return taken;
}

/*
 * Tell a client's submit (ctl->sq_blocked) not to wait for SQEs we cannot
 * take until it reaps: a backed-up CQ, or every slot in flight.
 */
static void sq_blocked_update(struct srv_ring *r, bool take)
{
	uint32_t blocked = take && (r->ocq_nr || r->nr_pending >= r->nr_slots) && sq_avail(r);

	if (blocked != r->sq_blocked) {
		r->sq_blocked = blocked;
		__atomic_store_n(&r->ctl->sq_blocked, blocked, __ATOMIC_RELEASE);
	}
}

/* One round: completions in, overflow out, new SQEs unless the CQ is backed up. */
static unsigned pass(struct srv_ring *r, bool take)
{
	unsigned did = reap_engine(r);

	r->cq_room = 0;		/* read the client's head once per pass */
	did += flush_overflow(r);
	if (take && !r->ocq_nr)
		did += take_sqes(r);
	/* inline completions of what was just submitted */
	did += reap_engine(r);
	cq_commit(r);
	sq_blocked_update(r, take);
	return did;
}

static bool sq_pending(struct srv_ring *r)
{
	return !r->ocq_nr && r->nr_pending < r->nr_slots && sq_avail(r);
}

/* SQPOLL's sleep: say so, look once more, then wait for the doorbell or the engine. */
static void proxy_sleep(struct srv_ring *r)
{
	struct pollfd pfd[2] = {
		{ .fd = r->sq_efd, .events = POLLIN },
		{ .fd = r->owner_efd, .events = POLLIN },
	};

	sq_flag(r, IORING_SQ_NEED_WAKEUP, true);
	/* pairs with the client's tail store then NEED_WAKEUP load (both seq_cst) */
	if (!sq_pending(r) && !atomic_load(&r->stop)) {
		/* a backed-up CQ is looked at again soon: the client need not ring for reaping */
		if (poll(pfd, 2, r->ocq_nr ? (int)r->idle_ms : -1) > 0)
			__atomic_fetch_add(&r->ctl->wakeups, 1, __ATOMIC_RELAXED);
		srv_efd_drain(r->sq_efd);
		efd_drain(r->owner_efd);
	}
	sq_flag(r, IORING_SQ_NEED_WAKEUP, false);
}

static bool proxy_done(struct srv_ring *r)
{
	return atomic_load(&r->stop) || atomic_load(&r->c->dead) ||
	       atomic_load(&r->c->d->stopping);
}

/*
 * The end: no new SQE; what the engine can cancel is cancelled, the rest
 * waited for; CQEs posted while the client can still read them; then the
 * client learns the ring is dead.
 */
static void proxy_exit(struct srv_ring *r)
{
	struct pollfd pfd = { .fd = r->owner_efd, .events = POLLIN };

	pthread_mutex_lock(&r->lock);
	pass(r, false);
	if (r->nr_pending) {
		struct io_uring_sqe *e = ucmd_get_sqe(&r->er);
		struct srv_slot *s = &r->x.slots[r->nr_slots];

		if (e) {
			memset(e, 0, r->mem.sqe_shift ? 128 : 64);
			e->opcode = IORING_OP_ASYNC_CANCEL;
			e->fd = -1;
			e->cancel_flags = IORING_ASYNC_CANCEL_ANY | IORING_ASYNC_CANCEL_ALL;
			e->user_data = r->nr_slots;
			memset(s, 0, sizeof(*s));
			s->busy = true;
			s->internal = true;
			r->nr_pending++;
			(void)ucmd_submit(&r->er);
		}
	}
	while (r->nr_pending) {
		pass(r, false);
		if (r->nr_pending && poll(&pfd, 1, 100) > 0)
			efd_drain(r->owner_efd);
	}
	pass(r, false);
	__atomic_store_n(&r->ctl->state, UCMDD_RING_DEAD, __ATOMIC_SEQ_CST);
	(void)srv_efd_signal(r->cq_efd);
	pthread_mutex_unlock(&r->lock);
}

static void *proxy_thread(void *arg)
{
	struct srv_ring *r = arg;
	/*
	 * Only a SQPOLL ring the policy allowed, within its uid's budget,
	 * polls for sq_thread_idle, and also after a wake-up that found
	 * nothing. Any other ring polls SRV_BUSY_POLL_US, and only after a
	 * pass that did work (the client's next batch usually follows within
	 * it: without, every batch would pay a wake-up); woken for nothing, it
	 * sleeps again at once. A client ringing the doorbell of an idle ring
	 * buys a wake-up, never a spinning core.
	 */
	uint64_t poll_us = r->spin ? (uint64_t)r->idle_ms * 1000u : SRV_BUSY_POLL_US;
	uint64_t idle_until = r->spin ? now_us() + poll_us : 0;
	unsigned idle_spins = 0;

	/* everything the engine does for this ring sees the client */
	task_override_set(&r->c->task);
	while (!proxy_done(r)) {
		unsigned did;

		pthread_mutex_lock(&r->lock);
		did = pass(r, true);
		pthread_mutex_unlock(&r->lock);
		if (did) {
			idle_until = now_us() + poll_us;
			idle_spins = 0;
			continue;
		}
		/* an IOPOLL ring completes only by being polled */
		if (r->nr_pending && (r->flags & IORING_SETUP_IOPOLL))
			continue;
		if (now_us() < idle_until) {
			/*
			 * SQPOLL's idle poll: a short pure spin, then yielding.
			 * On a machine with more runnable threads than CPUs the
			 * client we wait for may need this CPU, and spinning on
			 * would keep it off for a time slice per batch
			 * (bench_daemon beside one busy process: 20x slower).
			 */
			if (++idle_spins < PROXY_SPIN_PAUSES) {
#if defined(__x86_64__) || defined(__i386__)
				__builtin_ia32_pause();
#endif
			} else {
				sched_yield();
			}
			continue;
		}
		proxy_sleep(r);
		idle_until = r->spin ? now_us() + poll_us : 0;
		idle_spins = 0;
	}
	proxy_exit(r);
	return NULL;
}

/* ---- set-up and teardown ---- */

static void ring_free(struct srv_ring *r)
{
	if (r->er_live)
		ucmd_queue_exit(&r->er);
	/* the engine ring may write owner_efd until it is gone */
	if (r->owner_efd >= 0)
		close(r->owner_efd);
	if (r->sq_efd >= 0)
		close(r->sq_efd);
	if (r->cq_efd >= 0)
		close(r->cq_efd);
	if (r->user_efd >= 0)
		close(r->user_efd);
	io_rings_destroy(&r->mem);
	free(r->x.slots);
	free(r->ocq);
	free(r->stage);
	free(r->stage_sqe);
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
	struct io_uring_params ep = { 0 };
	unsigned entries = req->entries;
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
	/* a client asking for a polling thread is judged as in-process */
	if (p->flags & IORING_SETUP_SQPOLL) {
		ret = security_uring_sqpoll(r->c->d->e, &r->c->cred);
		if (ret)
			return ret;
		/* beyond its uid's budget the ring is still SQPOLL, but its proxy does not poll */
		r->spin = !srv_quota_charge(r->c->d, r->c->cred.uid, SRV_RES_SPIN, 1);
	}
	ret = io_rings_create_at(&r->mem, entries, p, sizeof(struct ucmdd_ring_ctl),
				 req->flags & UCMDD_QI_SQES_AT_OFF ? IORING_OFF_SQES : 0);
	if (ret)
		return ret;
	if (r->mem.cq_entries > UCMD_MAX_CQ_ENTRIES)
		return -EINVAL;
	/* the client may map it, never resize it under the daemon's mapping */
	if (fcntl(r->mem.memfd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0)
		return -errno;
	r->ctl = (struct ucmdd_ring_ctl *)((char *)r->mem.mem + r->mem.tail_off);
	for (unsigned i = 0; i < r->mem.sq_entries; i++)
		r->mem.sq_array[i] = i;
	p->features = IORING_FEAT_SINGLE_MMAP | IORING_FEAT_NODROP | IORING_FEAT_SUBMIT_STABLE |
		      IORING_FEAT_CUR_PERSONALITY | IORING_FEAT_CQE_SKIP;
	r->flags = p->flags;
	r->idle_ms = p->sq_thread_idle ? p->sq_thread_idle : SRV_IDLE_MS_DEFAULT;
	if (r->idle_ms > SRV_IDLE_MS_MAX)
		r->idle_ms = SRV_IDLE_MS_MAX;

	r->nr_slots = 2 * r->mem.sq_entries;
	if (r->nr_slots > SRV_MAX_OVERFLOW)
		r->nr_slots = SRV_MAX_OVERFLOW;
	r->x.sqe128 = r->mem.sqe_shift;
	r->x.nr_slots = r->nr_slots + 1;
	r->x.slots = calloc(r->nr_slots + 1, sizeof(*r->x.slots));
	r->ocq = calloc(r->nr_slots + 1, sizeof(*r->ocq));
	r->stage = calloc(r->mem.sq_entries, sizeof(*r->stage));
	r->stage_sqe = aligned_alloc(64, (size_t)r->mem.sq_entries * 128);
	if (!r->x.slots || !r->ocq || !r->stage || !r->stage_sqe)
		return -ENOMEM;
	for (unsigned i = 0; i < r->nr_slots; i++)
		r->x.slots[i].next_free = i + 1 < r->nr_slots ? i + 1 : NO_SLOT;
	r->free_head = 0;

	r->sq_efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	r->cq_efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	r->owner_efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (r->sq_efd < 0 || r->cq_efd < 0 || r->owner_efd < 0)
		return -errno;

	/* the engine ring: every slot's CQE fits its CQ; it always submits a whole pass */
	ep.flags = (p->flags & ENGINE_FLAGS) | IORING_SETUP_SUBMIT_ALL | IORING_SETUP_CQSIZE;
	ep.cq_entries = r->nr_slots + 1;
	if (ep.cq_entries < r->mem.sq_entries)
		ep.cq_entries = r->mem.sq_entries;
	ret = ucmd_queue_init_engine(r->c->d->e, r->mem.sq_entries, &r->er, &ep);
	if (ret)
		return ret;
	r->er_live = true;
	io_ring_set_owner_wake(&r->er, r->owner_efd);
	/* the client's ring: its addresses are the client's, its identity frozen at connect */
	io_ring_set_task(&r->er, &r->c->task);
	return 0;
}

static int dup_fds(struct srv_ring *r, int fds[3])
{
	const int src[3] = { r->mem.memfd, r->sq_efd, r->cq_efd };

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
	struct io_uring_params p = req->p;
	struct srv_ring *r;
	int id = -1, ret;

	fds[0] = fds[1] = fds[2] = -1;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->c = c;
	r->mem.memfd = -1;
	r->sq_efd = r->cq_efd = r->owner_efd = r->user_efd = -1;
	atomic_init(&r->stop, false);
	pthread_mutex_init(&r->lock, NULL);
	ret = srv_quota_charge(c->d, c->cred.uid, SRV_RES_RING, 1);
	r->charged = !ret;
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
		ret = -pthread_create(&r->thread, NULL, proxy_thread, r);
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
	rep->mmap_size = r->mem.size;
	rep->ctl_off = r->mem.tail_off;
	rep->sqes_off = p.sq_off.resv2;
	rep->p = p;
	return id;
}

static void ring_stop_free(struct srv_ring *r)
{
	atomic_store(&r->stop, true);
	/* our own eventfd, which the proxy sleeps on too: the client may hold the sq one full */
	efd_signal(r->owner_efd);
	pthread_join(r->thread, NULL);
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

	/* stop them all first: each drains while the others do */
	for (uint32_t i = 0; i < SRV_MAX_RINGS; i++) {
		r[i] = ring_take(c, i);
		if (r[i]) {
			atomic_store(&r[i]->stop, true);
			efd_signal(r[i]->owner_efd);
		}
	}
	for (uint32_t i = 0; i < SRV_MAX_RINGS; i++)
		if (r[i])
			ring_stop_free(r[i]);
}
