/* SPDX-License-Identifier: MIT */
/*
 * A ring's read bounce area (proto.h, UCMDD_RING_BOUNCE). Without it, a read
 * into a client's plain memory completes into a buffer of ours and reaches
 * the client by one pwrite to its /proc/PID/mem per buffer, a system call
 * dearer than the whole read. With it, the device writes into this memfd,
 * which the client maps too; the client's library copies the data out when
 * it next enters the ring (it enters to wait for completions anyway), and
 * only then is the read's CQE shown: the CQ tail we store stops before it.
 *
 * Nothing the client writes here is trusted. Each record is ours (kept in
 * recs[], copied out to the shared array for the client's eyes only); the
 * client's done and claim words decide only when its own CQEs are shown
 * and who copies its own data. A client that lies about them sees its CQEs
 * early or its data garbled, nothing else. A client that does not come
 * back within SRV_BOUNCE_WAIT_NS gets its data written through
 * /proc/PID/mem, as without an area: we take its records by moving claim
 * ourselves (compare-and-swap: never both of us), and a full area or a
 * full record array sends the next reads the old way. The memfd is sealed:
 * the client cannot shrink it under our mapping.
 *
 * The CQ tail's bound: a record's CQE is written after the record (the
 * read's completion copies, then posts), so its index is at least the CQ
 * tail published when the record was made (hold). Showing the CQ only up
 * to the hold of the oldest record not yet copied shows no CQE before its
 * data; a CQE of another request behind that waits too, for as long as the
 * client takes to enter.
 */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "lib/clock.h"
#include "lib/cpu.h"
#include "server/bounce_area.h"
#include "server/server.h"

#define BPAGE 4096u
#define WORDS (SRV_BOUNCE_PAGES / 64u)

struct brec {
	uint64_t addr;
	uint32_t off, len;
	unsigned hold;		/* the CQ tail published when it was made */
};

struct srv_bounce {
	struct srv_client *c;
	int memfd;
	void *mem;
	size_t size;
	struct ucmdd_bounce_ctl *ctl;
	struct ucmdd_bounce_rec *srecs;	/* the client's view of recs[] */
	unsigned char *data;
	/* the client's write records and their data: read, never trusted */
	const struct ucmdd_bounce_wrec *wrecs;
	const unsigned char *wdata;
	unsigned wfloor;		/* the pass's: SQ positions below are dead */

	/*
	 * The data pages belong to the ring's pass (the thread holding the
	 * ring's lock, srv_bounce_enter to _leave): srv_bounce_alloc runs only
	 * there (share_alloc, at issue, finds the area by srv_bounce_current),
	 * and so does done_to (srv_bounce_poll, _sync). An allocation given
	 * back from any other thread (a read that failed or found the records
	 * full, completed on the controller's thread, say) is only marked in
	 * freed, which the pass takes in at its next allocation. So no lock:
	 * a read took four lock pairs, and this was one of them.
	 */
	uint64_t used[WORDS];		/* data pages taken */
	uint8_t run[SRV_BOUNCE_PAGES];	/* pages of the allocation starting at each */
	unsigned hint;			/* where the next search starts */
	uint64_t freed[WORDS];		/* starts given back off the pass (atomic) */
	unsigned freed_any;		/* set after a bit of freed (atomic) */

	/*
	 * The records: made by whichever thread completes a read, without
	 * the lock (srv_bounce_post: a read took a lock pair for it). A
	 * maker reserves its index (resv), writes the record, and makes it
	 * visible by moving tail past it, in index order.
	 */
	pthread_mutex_t lock;
	struct brec recs[SRV_BOUNCE_RECS];
	unsigned resv;			/* indexes reserved (atomic) */
	/* Records made: moved by their makers, in order (atomic). */
	unsigned tail;
	/*
	 * Records whose data reached the client: changed under lock, and only
	 * by the ring's pass (srv_bounce_poll), which reads it without lock;
	 * a maker reads it for the room left (atomic).
	 */
	unsigned done;
	unsigned pub;			/* the CQ tail last published (as tail) */
	/* the pass's alone: the oldest record seen waiting, since wait_since */
	unsigned wait_rec;
	uint64_t wait_since;
};

static __thread struct srv_bounce *cur;

/*
 * The clock of the client's wait: read by every pass while a record waits,
 * idle polls included, where clock_gettime(CLOCK_MONOTONIC) was a tenth of
 * the ring thread's time in a VM (a TSC read per call); the coarse clock
 * is one load, and its tick (1-4 ms) only makes the wait that much longer.
 */
static uint64_t wait_clock_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}
unsigned long long srv_bounce_wait_ns = SRV_BOUNCE_WAIT_NS;

struct srv_bounce *srv_bounce_current(void)
{
	return cur;
}

void srv_bounce_enter(struct srv_bounce *b, unsigned sq_head)
{
	cur = b;
	if (!b)
		return;
	/*
	 * Records of SQEs taken in earlier passes are never read again: a
	 * request is matched with its record only in the pass that takes its
	 * SQE (srv_bounce_wtake), so the client may reuse them now.
	 */
	if (b->wfloor == sq_head)
		return;
	b->wfloor = sq_head;
	/*
	 * Only when it moved: the client reads this line at every enter, and
	 * a store each idle poll would take it from the client's cache each
	 * time.
	 */
	__atomic_store_n(&b->ctl->wdone, sq_head, __ATOMIC_RELEASE);
}

void srv_bounce_leave(void)
{
	cur = NULL;
}

struct srv_client *srv_bounce_client(const struct srv_bounce *b)
{
	return b->c;
}

int srv_bounce_fd(const struct srv_bounce *b)
{
	return b->memfd;
}

int srv_bounce_create(struct srv_client *c, unsigned cq_tail, struct srv_bounce **out,
		      struct ucmdd_bounce_rep *rep)
{
	const size_t recs_off = BPAGE;
	const size_t data_off = recs_off + ((SRV_BOUNCE_RECS * sizeof(struct ucmdd_bounce_rec) +
					     BPAGE - 1) & ~(size_t)(BPAGE - 1));
	const size_t data_len = (size_t)SRV_BOUNCE_PAGES * BPAGE;
	const size_t wrecs_off = data_off + data_len;
	const size_t wdata_off = wrecs_off + ((SRV_BOUNCE_WRECS * sizeof(struct ucmdd_bounce_wrec) +
					       BPAGE - 1) & ~(size_t)(BPAGE - 1));
	struct srv_bounce *b = calloc(1, sizeof(*b));
	int ret;

	if (!b)
		return -ENOMEM;
	b->c = c;
	b->pub = cq_tail;
	b->size = wdata_off + SRV_BOUNCE_WDATA;
	b->mem = MAP_FAILED;
	b->memfd = memfd_create("ucmdd-bounce", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (b->memfd < 0 || ftruncate(b->memfd, (off_t)b->size) ||
	    fcntl(b->memfd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0) {
		ret = -errno;
		goto fail;
	}
	b->mem = mmap(NULL, b->size, PROT_READ | PROT_WRITE, MAP_SHARED, b->memfd, 0);
	if (b->mem == MAP_FAILED) {
		ret = -errno;
		goto fail;
	}
	b->ctl = b->mem;
	b->srecs = (struct ucmdd_bounce_rec *)((char *)b->mem + recs_off);
	b->data = (unsigned char *)b->mem + data_off;
	b->wrecs = (const struct ucmdd_bounce_wrec *)((char *)b->mem + wrecs_off);
	b->wdata = (const unsigned char *)b->mem + wdata_off;
	pthread_mutex_init(&b->lock, NULL);
	memset(rep, 0, sizeof(*rep));
	rep->size = b->size;
	rep->recs_off = recs_off;
	rep->data_off = data_off;
	rep->data_len = data_len;
	rep->nr_recs = SRV_BOUNCE_RECS;
	rep->nr_wrecs = SRV_BOUNCE_WRECS;
	rep->wrecs_off = wrecs_off;
	rep->wdata_off = wdata_off;
	rep->wdata_len = SRV_BOUNCE_WDATA;
	*out = b;
	return 0;
fail:
	if (b->memfd >= 0)
		close(b->memfd);
	free(b);
	return ret;
}

void srv_bounce_free(struct srv_bounce *b)
{
	if (!b)
		return;
	munmap(b->mem, b->size);
	close(b->memfd);
	pthread_mutex_destroy(&b->lock);
	free(b);
}

/* The invariant above, checked where the pages are touched (assert: builds without NDEBUG). */
static void assert_on_pass(const struct srv_bounce *b)
{
	assert(cur == b);
	(void)b;
}

static bool page_used(const struct srv_bounce *b, unsigned p)
{
	return b->used[p / 64] >> (p % 64) & 1;
}

static void pages_mark(struct srv_bounce *b, unsigned p, unsigned n, bool on)
{
	for (unsigned i = p; i < p + n; i++) {
		if (on)
			b->used[i / 64] |= 1ull << (i % 64);
		else
			b->used[i / 64] &= ~(1ull << (i % 64));
	}
}

/* An allocation starting at page p goes back. On the pass only. */
static void pages_put(struct srv_bounce *b, unsigned p)
{
	if (p < SRV_BOUNCE_PAGES && b->run[p]) {
		pages_mark(b, p, b->run[p], false);
		b->run[p] = 0;
	}
}

/*
 * What other threads gave back since (srv_bounce_put). The exchange on
 * freed_any reads the last store before it: a bit set before that store
 * is seen by the exchanges below, one set after it by the next call.
 */
static void freed_take(struct srv_bounce *b)
{
	if (!__atomic_load_n(&b->freed_any, __ATOMIC_RELAXED) ||
	    !__atomic_exchange_n(&b->freed_any, 0, __ATOMIC_ACQUIRE))
		return;
	for (unsigned w = 0; w < WORDS; w++) {
		uint64_t bits = __atomic_exchange_n(&b->freed[w], 0, __ATOMIC_ACQUIRE);

		while (bits) {
			pages_put(b, w * 64 + (unsigned)__builtin_ctzll(bits));
			bits &= bits - 1;
		}
	}
}

/* First fit from the hint, wrapping once: n free pages in a row, or -1. */
static int pages_find(struct srv_bounce *b, unsigned n)
{
	for (unsigned k = 0, p = b->hint; k < SRV_BOUNCE_PAGES; k++, p = (p + 1) % SRV_BOUNCE_PAGES) {
		unsigned i;

		if (p + n > SRV_BOUNCE_PAGES)
			continue;
		for (i = 0; i < n && !page_used(b, p + i); i++)
			;
		if (i == n)
			return (int)p;
	}
	return -1;
}

void *srv_bounce_alloc(struct srv_bounce *b, uint64_t uaddr, size_t n)
{
	size_t span = ((uaddr & (BPAGE - 1)) + n + BPAGE - 1) / BPAGE;
	int p;

	if (!n || span > SRV_BOUNCE_SEG_PAGES)
		return NULL;
	assert_on_pass(b);
	freed_take(b);
	p = pages_find(b, (unsigned)span);
	if (p >= 0) {
		pages_mark(b, (unsigned)p, (unsigned)span, true);
		b->run[p] = (uint8_t)span;
		b->hint = ((unsigned)p + (unsigned)span) % SRV_BOUNCE_PAGES;
	}
	if (p < 0)
		return NULL;
	/*
	 * Not zeroed: the caller zeroes what the device will not write
	 * (src/nvme/host/bounce.c), and only [uaddr, uaddr + n) ever reaches
	 * the client; the rest of these pages is this client's own old data.
	 */
	return b->data + (size_t)p * BPAGE + (uaddr & (BPAGE - 1));
}

bool srv_bounce_owns(const struct srv_bounce *b, const void *p)
{
	const unsigned char *q = p;

	return q >= b->data && q < b->data + (size_t)SRV_BOUNCE_PAGES * BPAGE;
}

void srv_bounce_put(struct srv_bounce *b, const void *p)
{
	unsigned pg = (unsigned)((size_t)((const unsigned char *)p - b->data) / BPAGE);

	if (pg >= SRV_BOUNCE_PAGES)
		return;
	if (cur == b) {
		pages_put(b, pg);
		return;
	}
	/* off the pass: the pass takes it in (freed_take); the data is no longer ours to touch */
	__atomic_fetch_or(&b->freed[pg / 64], 1ull << (pg % 64), __ATOMIC_RELEASE);
	__atomic_store_n(&b->freed_any, 1, __ATOMIC_RELEASE);
}

/* The makers before a record's: spins, then gives up its CPU to them (a loaded machine preempts). */
static void tail_wait(struct srv_bounce *b, unsigned idx)
{
	for (unsigned spins = 0; __atomic_load_n(&b->tail, __ATOMIC_ACQUIRE) != idx; spins++) {
		if (spins < 64)
			cpu_relax();
		else
			sched_yield();
	}
}

int srv_bounce_post(struct srv_bounce *b, const void *p, uint64_t uaddr, size_t n)
{
	uint32_t off = (uint32_t)((const unsigned char *)p - b->data);
	unsigned idx = __atomic_load_n(&b->resv, __ATOMIC_RELAXED), slot;

	/*
	 * An index whose slot's record is done: done moves only forwards,
	 * so a stale done refuses at worst one it could have had.
	 */
	do {
		if (idx - __atomic_load_n(&b->done, __ATOMIC_ACQUIRE) >= SRV_BOUNCE_RECS)
			return -ENOSPC;
	} while (!__atomic_compare_exchange_n(&b->resv, &idx, idx + 1, false, __ATOMIC_RELAXED,
					      __ATOMIC_RELAXED));
	slot = idx & (SRV_BOUNCE_RECS - 1);
	/*
	 * hold: a CQ tail published before this record's CQE is written (it
	 * is written after we return), so the CQE is at or past it. One
	 * published earlier than the last only holds the CQ back as far as
	 * that last (srv_bounce_cq_publish never moves back).
	 */
	b->recs[slot] = (struct brec){ .addr = uaddr, .off = off, .len = (uint32_t)n,
				       .hold = __atomic_load_n(&b->pub, __ATOMIC_RELAXED) };
	b->srecs[slot] = (struct ucmdd_bounce_rec){ .addr = uaddr, .off = off, .len = (uint32_t)n };
	/* in index order: the earlier makers first (almost always done already) */
	if (__builtin_expect(__atomic_load_n(&b->tail, __ATOMIC_ACQUIRE) != idx, 0))
		tail_wait(b, idx);
	/*
	 * For the client, the data and the record before the tail that shows
	 * them; stored before ours, so the next maker's (after our tail)
	 * never goes before it.
	 */
	__atomic_store_n(&b->ctl->tail, idx + 1, __ATOMIC_SEQ_CST);
	/* for the pass and the next maker: the record before the tail */
	__atomic_store_n(&b->tail, idx + 1, __ATOMIC_RELEASE);
	return 0;
}

/*
 * Records [b->done, to) reached the client: their pages come back. Under
 * lock, on the pass (poll and sync run nowhere else).
 */
static void done_to(struct srv_bounce *b, unsigned to)
{
	assert_on_pass(b);
	while (b->done != to) {
		const struct brec *r = &b->recs[b->done & (SRV_BOUNCE_RECS - 1)];

		pages_put(b, r->off / BPAGE);
		/* after its record is read: a maker may reuse the slot then */
		__atomic_store_n(&b->done, b->done + 1, __ATOMIC_RELEASE);
	}
}

/*
 * Move the shared CQ tail up to t, never back: the client may have moved it
 * past t. Bounded: a client that keeps changing it only stalls its own CQ.
 */
static void cq_tail_max(unsigned *ktail, unsigned t)
{
	unsigned cur = __atomic_load_n(ktail, __ATOMIC_RELAXED);

	for (int i = 0; i < 16 && (int)(t - cur) > 0; i++)
		if (__atomic_compare_exchange_n(ktail, &cur, t, false, __ATOMIC_SEQ_CST,
						__ATOMIC_RELAXED))
			return;
}

void srv_bounce_cq_publish(void *arg, unsigned *ktail, unsigned tail)
{
	struct srv_bounce *b = arg;
	unsigned t = tail, rtail;

	pthread_mutex_lock(&b->lock);
	/*
	 * Records made after this load have their CQEs at tail or past:
	 * each is made before its CQE is written, and tail counts only CQEs
	 * written before this call.
	 */
	rtail = __atomic_load_n(&b->tail, __ATOMIC_ACQUIRE);
	if (b->done != rtail) {
		unsigned hold = b->recs[b->done & (SRV_BOUNCE_RECS - 1)].hold;

		if ((int)(hold - t) < 0)
			t = hold;
	}
	if ((int)(t - b->pub) < 0)
		t = b->pub;
	__atomic_store_n(&b->pub, t, __ATOMIC_RELAXED);
	/*
	 * For the client: every CQE below tail is written, and only records
	 * below rtail can belong to one (a later record's CQE is written
	 * after this, at tail or beyond).
	 */
	__atomic_store_n(&b->ctl->cq, (uint64_t)rtail << 32 | tail, __ATOMIC_RELEASE);
	cq_tail_max(ktail, t);
	pthread_mutex_unlock(&b->lock);
}

bool srv_bounce_poll(struct srv_bounce *b, bool force)
{
	struct srv_client *c = b->c;
	unsigned d, from, to;
	bool moved = false;

	/*
	 * Run by every pass, idle polls included: nothing waiting, or the
	 * client copied nothing since and its time is not up, is decided
	 * without the lock (done and the wait are the pass's own).
	 */
	to = __atomic_load_n(&b->tail, __ATOMIC_ACQUIRE);
	if (b->done == to)
		return false;
	if (!force && __atomic_load_n(&b->ctl->done, __ATOMIC_ACQUIRE) == b->done) {
		uint64_t now = wait_clock_ns();

		if (b->wait_rec != b->done || !b->wait_since) {
			b->wait_rec = b->done;
			b->wait_since = now;
			return false;
		}
		if (now - b->wait_since < srv_bounce_wait_ns)
			return false;
	}
	pthread_mutex_lock(&b->lock);
	/* what the client says it copied: only ever within what we made */
	d = __atomic_load_n(&b->ctl->done, __ATOMIC_ACQUIRE);
	to = __atomic_load_n(&b->tail, __ATOMIC_ACQUIRE);
	if (d != b->done && d - b->done <= to - b->done) {
		done_to(b, d);
		moved = true;
	}
	from = b->done;
	if (from == to) {
		pthread_mutex_unlock(&b->lock);
		return moved;
	}
	if (!force) {
		uint64_t now = wait_clock_ns();

		if (b->wait_rec != from || !b->wait_since) {
			b->wait_rec = from;
			b->wait_since = now;
		}
		if (now - b->wait_since < srv_bounce_wait_ns) {
			pthread_mutex_unlock(&b->lock);
			return moved;
		}
	}
	/* the client claimed nothing past done: take them, or it did meanwhile */
	if (!__atomic_compare_exchange_n(&b->ctl->claim, &from, to, false, __ATOMIC_SEQ_CST,
					 __ATOMIC_RELAXED)) {
		pthread_mutex_unlock(&b->lock);
		return moved;
	}
	from = b->done;
	pthread_mutex_unlock(&b->lock);
	/* records are never changed once made, and their pages stay ours until done moves */
	for (unsigned i = from; i != to; i++) {
		const struct brec *r = &b->recs[i & (SRV_BOUNCE_RECS - 1)];

		(void)srv_mm_copy_to(c, r->addr, b->data + r->off, r->len);
	}
	/* for a client that moves the CQ tail itself: everything below to is copied */
	__atomic_store_n(&b->ctl->taken, to, __ATOMIC_RELEASE);
	pthread_mutex_lock(&b->lock);
	/* the client may have written done meanwhile (a lie: it claimed nothing) */
	if (to - b->done <= __atomic_load_n(&b->tail, __ATOMIC_ACQUIRE) - b->done)
		done_to(b, to);
	b->wait_since = 0;
	pthread_mutex_unlock(&b->lock);
	return true;
}

/*
 * Before the daemon reads [addr, addr + n) of the client's memory for a
 * request (a Write's data, an iovec array): a read still waiting in the
 * area for that memory must be there first, as Linux's data is in place
 * when a linked or drained request after the read starts. We write what
 * waits ourselves; what the client claimed, it is copying: wait for its
 * done a little (a client stopped mid-copy gets the stale bytes it raced).
 */
void srv_bounce_sync(struct srv_bounce *b, uint64_t addr, size_t n)
{
	unsigned last = 0, end;
	bool hit = false;

	pthread_mutex_lock(&b->lock);
	end = __atomic_load_n(&b->tail, __ATOMIC_ACQUIRE);
	for (unsigned i = b->done; i != end; i++) {
		const struct brec *r = &b->recs[i & (SRV_BOUNCE_RECS - 1)];

		if (addr < r->addr + r->len && r->addr < addr + n) {
			hit = true;
			last = i + 1;
		}
	}
	pthread_mutex_unlock(&b->lock);
	if (!hit)
		return;
	(void)srv_bounce_poll(b, true);
	for (uint64_t end = ktime_get_ns() + srv_bounce_wait_ns;;) {
		bool through;

		pthread_mutex_lock(&b->lock);
		through = (int)(b->done - last) >= 0;
		pthread_mutex_unlock(&b->lock);
		if (through || ktime_get_ns() >= end)
			return;
		(void)srv_bounce_poll(b, true);
	}
}

/*
 * Where the bytes of [uaddr, uaddr + n) are in the write data area, when
 * that range lies within the client's [addr, addr + len) whose copy is at
 * off, itself inside the area; else -1.
 */
static int64_t wrange_at(uint64_t addr, uint64_t len, uint64_t off, uint64_t uaddr, size_t n)
{
	if (off > SRV_BOUNCE_WDATA || len > SRV_BOUNCE_WDATA - off)
		return -1;
	if (uaddr < addr || n > len || uaddr - addr > len - n)
		return -1;
	return (int64_t)(off + (uaddr - addr));
}

/* The range of a record's table (nr of them at off) that holds [uaddr, uaddr + n): or -1. */
static int64_t wtable_at(const struct srv_bounce *b, uint32_t off, uint32_t nr, uint64_t uaddr,
			 size_t n)
{
	const volatile struct ucmdd_bounce_wseg *t;

	if (nr > UCMDD_BOUNCE_WSEG_MAX || (off & 7) || off > SRV_BOUNCE_WDATA ||
	    (size_t)nr * sizeof(*t) > SRV_BOUNCE_WDATA - off)
		return -1;
	t = (const volatile struct ucmdd_bounce_wseg *)(b->wdata + off);
	for (uint32_t i = 0; i < nr; i++) {
		/* each word read once: the client may change the table meanwhile */
		uint64_t a = t[i].addr;
		uint32_t l = t[i].len, o = t[i].off;
		int64_t at = wrange_at(a, l, o, uaddr, n);

		if (at >= 0)
			return at;
	}
	return -1;
}

int srv_bounce_wtake(struct srv_bounce *b, void *dst, uint64_t uaddr, size_t n, unsigned pos,
		     uint64_t user_data)
{
	const volatile struct ucmdd_bounce_wrec *sw = &b->wrecs[pos & (SRV_BOUNCE_WRECS - 1)];
	struct ucmdd_bounce_wrec w;
	int64_t at;

	/* taken in an earlier pass: the client may have reused its record and data */
	if ((int)(pos - b->wfloor) < 0)
		return -ENOENT;
	/* each word read once, then judged: the client may change them meanwhile */
	w.pos = sw->pos;
	w.len = sw->len;
	w.addr = sw->addr;
	w.user_data = sw->user_data;
	w.off = sw->off;
	w.nr = sw->nr;
	if (w.pos != pos || w.user_data != user_data || (w.nr & UCMDD_BOUNCE_WREC_READ))
		return -ENOENT;
	/*
	 * A range within what the client copied: a request may read its
	 * buffer in parts, and an iovec array, its segments and metadata each
	 * are one range of a table.
	 */
	at = w.nr ? wtable_at(b, w.off, w.nr, uaddr, n) : wrange_at(w.addr, w.len, w.off, uaddr, n);
	if (at < 0)
		return -ENOENT;
	/*
	 * Into our own memory before anything uses it, as the copy from
	 * /proc/PID/mem was: a client writing the area meanwhile garbles its
	 * own write only, and nothing changes once it is issued.
	 */
	memcpy(dst, b->wdata + at, n);
	return 0;
}

bool srv_bounce_wchecked(const struct srv_bounce *b, uint64_t uaddr, size_t n, unsigned pos,
			 uint64_t user_data)
{
	const volatile struct ucmdd_bounce_wrec *sw = &b->wrecs[pos & (SRV_BOUNCE_WRECS - 1)];
	uint64_t addr;
	uint32_t len;

	if ((int)(pos - b->wfloor) < 0)
		return false;
	if (sw->pos != pos || sw->user_data != user_data || sw->nr != UCMDD_BOUNCE_WREC_READ)
		return false;
	/* read once: the client may change them meanwhile (and hurts only its own read) */
	addr = sw->addr;
	len = sw->len;
	return uaddr >= addr && n <= len && uaddr - addr <= len - n;
}

void srv_bounce_state(struct srv_bounce *b, unsigned *recs, bool *waiting, unsigned *cq_tail)
{
	/*
	 * Without the lock: a read completing meanwhile on another thread is
	 * seen by the next pass, which its completion brings anyway.
	 */
	*recs = __atomic_load_n(&b->tail, __ATOMIC_ACQUIRE);
	*waiting = __atomic_load_n(&b->done, __ATOMIC_RELAXED) != *recs;
	*cq_tail = __atomic_load_n(&b->pub, __ATOMIC_RELAXED);
}
