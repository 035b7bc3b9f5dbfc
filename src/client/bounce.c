/* SPDX-License-Identifier: MIT */
/*
 * A ring's read bounce area, the client's side (src/daemon/proto.h,
 * UCMDD_RING_BOUNCE). The daemon completes a read into our plain memory in
 * this shared area instead of writing it through our /proc/PID/mem (a
 * system call per buffer), and shows the read's CQE only once we copied
 * the data out: which we do whenever the ring is entered (dc_enter, and
 * each look at the CQ while waiting), in this process, without a system
 * call. The daemon takes back what we leave unclaimed for about a
 * millisecond, so a program that never enters still gets its data.
 *
 * The copy is guarded (uaccess): a buffer the program unmapped after it
 * submitted the read faults into nothing, the program's own loss, as with
 * Linux's pinned pages; a buffer that was bad when submitted never comes
 * here (the daemon bounces it the old way, which ends in -EFAULT).
 */
#include <errno.h>
#include <linux/nvme_ioctl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "client/client.h"
#include "uaccess/uaccess.h"

struct dc_bounce {
	const struct dc_shared *shared;	/* the engine's: what the daemon maps needs nothing here */
	void *mem;
	size_t size;
	struct ucmdd_bounce_ctl *ctl;
	const struct ucmdd_bounce_rec *recs;
	const unsigned char *data;
	uint64_t data_len;
	uint32_t mask;
	pthread_mutex_t lock;		/* one copier at a time: done moves in order */
	/*
	 * Under lock: records below copied are copied, by us or by the daemon
	 * (ctl->taken says up to where it did); ours from pend_from to pend_to
	 * are too, but the daemon may still be copying some before them.
	 */
	unsigned copied, pend_from, pend_to;
	unsigned gen;			/* dc_forks when attached */
	/*
	 * Writes (dc_bounce_wsubmit, under the ring's submit lock): records
	 * at wrecs[pos & wmask], data allocated in SQ order from a ring of
	 * wdata_len bytes (whead allocated, wtail freed, both counting up);
	 * wlive[] the live allocations in order, freed as ctl->wdone passes.
	 */
	struct ucmdd_bounce_wrec *wrecs;
	unsigned char *wdata;
	uint64_t wdata_len;
	uint32_t wmask;			/* nr_wrecs - 1; writes off when wrecs is NULL */
	struct wlive {
		uint32_t pos;
		uint64_t end;		/* whead after it */
	} *wlive;
	unsigned wl_head, wl_tail;
	uint64_t whead, wtail;
};

/*
 * Children made by fork since start. A child shares the area's mapping but
 * not the memory its records name (its parent's): it must not copy, or
 * the parent would see CQEs of reads whose data went into the child. The
 * daemon then writes the parent's data itself, a millisecond later.
 */
static unsigned dc_forks;
static pthread_once_t dc_fork_once = PTHREAD_ONCE_INIT;

static void dc_forked(void)
{
	__atomic_fetch_add(&dc_forks, 1, __ATOMIC_RELAXED);
}

static void dc_fork_hook(void)
{
	(void)pthread_atfork(NULL, NULL, dc_forked);
}

static bool rep_ok(const struct ucmdd_bounce_rep *rep, uint64_t fsize)
{
	uint64_t n = rep->nr_recs;

	return n && !(n & (n - 1)) && rep->size <= fsize && rep->size <= SIZE_MAX &&
	       rep->size >= sizeof(struct ucmdd_bounce_ctl) && !(rep->recs_off & 7) &&
	       rep->recs_off >= sizeof(struct ucmdd_bounce_ctl) &&
	       rep->recs_off <= rep->size && n <= (rep->size - rep->recs_off) / sizeof(struct ucmdd_bounce_rec) &&
	       rep->data_off <= rep->size && rep->data_len <= rep->size - rep->data_off &&
	       rep->data_len <= UINT32_MAX;
}

/* The write part of the area: usable, or writes go the old way (false). */
static bool wrep_ok(const struct ucmdd_bounce_rep *rep)
{
	uint64_t n = rep->nr_wrecs;

	return n && !(n & (n - 1)) && n <= 65536 && !(rep->wrecs_off & 7) &&
	       rep->wrecs_off >= sizeof(struct ucmdd_bounce_ctl) && rep->wrecs_off <= rep->size &&
	       n <= (rep->size - rep->wrecs_off) / sizeof(struct ucmdd_bounce_wrec) &&
	       rep->wdata_off <= rep->size && rep->wdata_len <= rep->size - rep->wdata_off &&
	       rep->wdata_len >= 4096 && rep->wdata_len <= UINT32_MAX;
}

struct dc_bounce *dc_bounce_attach(struct dclient *dc, uint32_t ring_id)
{
	struct ucmdd_ring_id id = { .ring_id = ring_id };
	struct ucmdd_bounce_rep rep;
	struct dc_bounce *b;
	struct stat st;
	size_t len = 0;
	int fd = -1, ret;

	memset(&rep, 0, sizeof(rep));
	ret = dc_call(dc, UCMDD_RING_BOUNCE, &id, sizeof(id), NULL, 0, &rep, sizeof(rep), &len,
		      &fd, 1);
	if (ret < 0)
		return NULL;
	b = calloc(1, sizeof(*b));
	if (!b || len != sizeof(rep) || fstat(fd, &st) || !rep_ok(&rep, (uint64_t)st.st_size))
		goto fail;
	b->size = (size_t)rep.size;
	b->mem = mmap(NULL, b->size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
	if (b->mem == MAP_FAILED)
		goto fail;
	close(fd);
	b->shared = &dc->shared;
	b->ctl = b->mem;
	b->recs = (const struct ucmdd_bounce_rec *)((char *)b->mem + rep.recs_off);
	b->data = (const unsigned char *)b->mem + rep.data_off;
	b->data_len = rep.data_len;
	b->mask = rep.nr_recs - 1;
	if (wrep_ok(&rep) && (b->wlive = calloc(rep.nr_wrecs, sizeof(*b->wlive)))) {
		b->wrecs = (struct ucmdd_bounce_wrec *)((char *)b->mem + rep.wrecs_off);
		b->wdata = (unsigned char *)b->mem + rep.wdata_off;
		b->wdata_len = rep.wdata_len;
		b->wmask = rep.nr_wrecs - 1;
	}
	pthread_mutex_init(&b->lock, NULL);
	pthread_once(&dc_fork_once, dc_fork_hook);
	b->gen = __atomic_load_n(&dc_forks, __ATOMIC_RELAXED);
	return b;
fail:
	/* the daemon keeps the area and bounces into it: never claimed, it writes the data itself */
	free(b);
	if (fd >= 0)
		close(fd);
	return NULL;
}

void dc_bounce_detach(struct dc_bounce *b)
{
	if (!b)
		return;
	munmap(b->mem, b->size);
	pthread_mutex_destroy(&b->lock);
	free(b->wlive);
	free(b);
}

/* A range of our memory a write reads. */
struct wrange {
	uint64_t addr;
	uint32_t len;
};

/*
 * An iovec array of nr at uvec (ours: the guarded copy fails on a bad
 * one): the array, then each segment not empty, appended to r[*n] (at
 * most max in all). false: not one the area takes.
 */
static bool wvec(uint64_t uvec, uint64_t nr, struct wrange *r, unsigned *n, unsigned max)
{
	struct iovec iov[UCMDD_BOUNCE_WSEG_MAX];

	if (!nr || nr > UCMDD_BOUNCE_WSEG_MAX || *n + 1 > max ||
	    raw_copy_from_user(iov, (const void *)(uintptr_t)uvec, nr * sizeof(*iov)))
		return false;
	r[(*n)++] = (struct wrange){ uvec, (uint32_t)(nr * sizeof(*iov)) };
	for (uint64_t i = 0; i < nr; i++) {
		if (!iov[i].iov_len)
			continue;
		if (iov[i].iov_len > UINT32_MAX || *n + 1 > max)
			return false;
		r[(*n)++] = (struct wrange){ (uint64_t)(uintptr_t)iov[i].iov_base,
					     (uint32_t)iov[i].iov_len };
	}
	return true;
}

/*
 * The ranges of our plain memory a write reads, in r[] (at most max): an
 * NVMe Write passthrough (one segment or an iovec array, and separate
 * metadata; not a registered buffer), IORING_OP_WRITE or WRITEV. Not one
 * the engine may issue later than we submit it (DRAIN; ASYNC: another
 * thread), nor one linked behind another: that one must read what its
 * predecessor left in the buffer, Linux's order (the daemon reads our
 * memory then). How many; 0: none.
 */
static unsigned wtargets(const struct io_uring_sqe *sqe, size_t sqe_sz, struct wrange *r,
			 unsigned max)
{
	struct nvme_uring_cmd c;
	unsigned n = 0;

	if (sqe->flags & (IOSQE_IO_DRAIN | IOSQE_ASYNC | IOSQE_BUFFER_SELECT))
		return 0;
	switch (sqe->opcode) {
	case IORING_OP_WRITE:
		r[0] = (struct wrange){ sqe->addr, sqe->len };
		return 1;
	case IORING_OP_WRITEV:
		return wvec(sqe->addr, sqe->len, r, &n, max) ? n : 0;
	case IORING_OP_URING_CMD:
		if (sqe_sz < 128 || (sqe->cmd_op != NVME_URING_CMD_IO &&
				     sqe->cmd_op != NVME_URING_CMD_IO_VEC) ||
		    (sqe->uring_cmd_flags & IORING_URING_CMD_FIXED))
			return 0;
		memcpy(&c, sqe->cmd, sizeof(c));
		if (c.opcode != 0x01)	/* Write */
			return 0;
		if (sqe->cmd_op == NVME_URING_CMD_IO)
			r[n++] = (struct wrange){ c.addr, c.data_len };
		else if (!wvec(c.addr, c.data_len, r, &n, max))
			return 0;
		if (c.metadata && c.metadata_len) {
			if (n + 1 > max)
				return 0;
			r[n++] = (struct wrange){ c.metadata, c.metadata_len };
		}
		return n;
	default:
		return 0;
	}
}

/*
 * Every range in memory the daemon maps itself (ucmd_buf_alloc's): it
 * takes the data from there before it would look for ours (mem.c's
 * srv_region_lookup first), so a copy into the area would go unread.
 */
static bool all_shared(const struct dc_bounce *b, const struct wrange *r, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		if (!dc_shared_covers(b->shared, r[i].addr, r[i].len))
			return false;
	return true;
}

/* Allocations whose SQE the daemon has taken in an earlier pass are ours again. */
static void wfree(struct dc_bounce *b)
{
	unsigned wdone = __atomic_load_n(&b->ctl->wdone, __ATOMIC_ACQUIRE);

	while (b->wl_head != b->wl_tail && (int)(b->wlive[b->wl_head & b->wmask].pos - wdone) < 0)
		b->wtail = b->wlive[b->wl_head++ & b->wmask].end;
}

/* n bytes (64-aligned) of the write data ring: their offset, or -1. */
static int64_t walloc(struct dc_bounce *b, uint32_t n, uint64_t *end)
{
	uint64_t sz = ((uint64_t)n + 63) & ~63ull, off = b->whead % b->wdata_len, need = sz;

	if (off + sz > b->wdata_len) {
		need += b->wdata_len - off;	/* the tail of the ring is skipped */
		off = 0;
	}
	if (b->whead + need - b->wtail > b->wdata_len)
		return -1;
	*end = b->whead + need;
	return (int64_t)off;
}

/*
 * The buffer of a read into plain memory that the daemon may bounce in
 * the area: IORING_OP_READ, or an NVMe Read passthrough of one segment
 * (not a registered buffer), under wtargets' conditions.
 */
static bool rtarget(const struct io_uring_sqe *sqe, size_t sqe_sz, uint64_t *addr, uint32_t *len)
{
	struct nvme_uring_cmd c;

	if (sqe->flags & (IOSQE_IO_DRAIN | IOSQE_ASYNC | IOSQE_BUFFER_SELECT))
		return false;
	if (sqe->opcode == IORING_OP_READ) {
		*addr = sqe->addr;
		*len = sqe->len;
		return *len;
	}
	if (sqe->opcode != IORING_OP_URING_CMD || sqe_sz < 128 ||
	    sqe->cmd_op != NVME_URING_CMD_IO || (sqe->uring_cmd_flags & IORING_URING_CMD_FIXED))
		return false;
	memcpy(&c, sqe->cmd, sizeof(c));
	if (c.opcode != 0x02)	/* Read */
		return false;
	*addr = c.addr;
	*len = c.data_len;
	return *len;
}

/*
 * A read's record (UCMDD_BOUNCE_WREC_READ): we found its buffer writeable
 * now, without changing a byte, so the daemon need not ask our mappings
 * (a system call of its) before the read bounces in the area. No data:
 * the slot alone.
 */
static void rsubmit(struct dc_bounce *b, const struct io_uring_sqe *sqe, unsigned pos,
		    uint64_t addr, uint32_t len)
{
	if (pos - __atomic_load_n(&b->ctl->wdone, __ATOMIC_ACQUIRE) > b->wmask ||
	    raw_fault_in_writeable((void *)(uintptr_t)addr, len))
		return;
	b->wrecs[pos & b->wmask] = (struct ucmdd_bounce_wrec){
		.pos = pos, .len = len, .addr = addr, .user_data = sqe->user_data,
		.nr = UCMDD_BOUNCE_WREC_READ
	};
}

void dc_bounce_wsubmit(struct dc_bounce *b, const struct io_uring_sqe *sqe, size_t sqe_sz,
		       unsigned pos, bool linked)
{
	struct wrange r[UCMDD_BOUNCE_WSEG_MAX];
	struct ucmdd_bounce_wrec *w;
	struct ucmdd_bounce_wseg *tbl;
	uint64_t end, total, raddr;
	uint32_t at, rlen;
	unsigned n;
	int64_t off;

	if (!b || !b->wrecs || linked || __atomic_load_n(&dc_forks, __ATOMIC_RELAXED) != b->gen)
		return;
	if (rtarget(sqe, sqe_sz, &raddr, &rlen)) {
		if (!dc_shared_covers(b->shared, raddr, rlen))
			rsubmit(b, sqe, pos, raddr, rlen);
		return;
	}
	n = wtargets(sqe, sqe_sz, r, UCMDD_BOUNCE_WSEG_MAX);
	if (n && all_shared(b, r, n))
		return;
	/* more than one range: a table first, 64 bytes per 4 entries, the copies after it */
	total = n > 1 ? ((uint64_t)n * sizeof(*tbl) + 63) & ~63ull : 0;
	for (unsigned i = 0; i < n; i++)
		total += r[i].len;
	if (!n || (n == 1 && !r[0].len) || total > b->wdata_len / 4)
		return;
	wfree(b);
	/*
	 * Its slot is free: every position the daemon may still match lies in
	 * [wdone, pos), less than a record array from pos. A full ring: the
	 * old way.
	 */
	if (pos - __atomic_load_n(&b->ctl->wdone, __ATOMIC_ACQUIRE) > b->wmask ||
	    b->wl_tail - b->wl_head > b->wmask || (off = walloc(b, (uint32_t)total, &end)) < 0)
		return;
	w = &b->wrecs[pos & b->wmask];
	if (n == 1) {
		/* a buffer we cannot read: no record, the daemon's read of it fails the write */
		if (raw_copy_from_user(b->wdata + off, (const void *)(uintptr_t)r[0].addr, r[0].len))
			return;
		*w = (struct ucmdd_bounce_wrec){ .pos = pos, .len = r[0].len, .addr = r[0].addr,
						 .user_data = sqe->user_data, .off = (uint32_t)off };
	} else {
		tbl = (struct ucmdd_bounce_wseg *)(b->wdata + off);
		at = (uint32_t)off + (uint32_t)(((uint64_t)n * sizeof(*tbl) + 63) & ~63ull);
		for (unsigned i = 0; i < n; i++) {
			if (raw_copy_from_user(b->wdata + at, (const void *)(uintptr_t)r[i].addr,
					       r[i].len))
				return;
			tbl[i] = (struct ucmdd_bounce_wseg){ .addr = r[i].addr, .len = r[i].len,
							     .off = at };
			at += r[i].len;
		}
		*w = (struct ucmdd_bounce_wrec){ .pos = pos, .user_data = sqe->user_data,
						 .off = (uint32_t)off, .nr = n };
	}
	b->whead = end;
	b->wlive[b->wl_tail++ & b->wmask] = (struct wlive){ .pos = pos, .end = end };
}

/*
 * Show the CQEs whose data is in place without waiting for the daemon to
 * see done (a wake-up of another thread per batch): cq says which CQEs are
 * written and which records they may need. Under lock.
 */
/* true when CQEs stay held that the daemon has to show (it must see done first) */
static bool cq_show(struct dc_bounce *b, unsigned *ktail)
{
	uint64_t cq = __atomic_load_n(&b->ctl->cq, __ATOMIC_ACQUIRE);
	unsigned recs = (unsigned)(cq >> 32), t = (unsigned)cq, cur;
	unsigned taken = __atomic_load_n(&b->ctl->taken, __ATOMIC_ACQUIRE);

	if ((int)(taken - b->copied) > 0)
		b->copied = taken;
	if (b->pend_from != b->pend_to && (int)(b->copied - b->pend_from) >= 0) {
		if ((int)(b->pend_to - b->copied) > 0)
			b->copied = b->pend_to;
		b->pend_from = b->pend_to;
	}
	cur = __atomic_load_n(ktail, __ATOMIC_RELAXED);
	if ((int)(b->copied - recs) < 0)
		return (int)(t - cur) > 0;
	/* never back: the daemon moves it too */
	while ((int)(t - cur) > 0)
		if (__atomic_compare_exchange_n(ktail, &cur, t, false, __ATOMIC_SEQ_CST,
						__ATOMIC_RELAXED))
			break;
	return false;
}

bool dc_bounce_reap(struct dc_bounce *b, unsigned *ktail)
{
	unsigned claim, tail;
	bool held;

	if (__atomic_load_n(&dc_forks, __ATOMIC_RELAXED) != b->gen)
		return false;
	tail = __atomic_load_n(&b->ctl->tail, __ATOMIC_ACQUIRE);
	claim = __atomic_load_n(&b->ctl->claim, __ATOMIC_RELAXED);
	/* nothing new, and nothing held back for data we copied: two loads */
	if (tail == claim &&
	    (uint32_t)__atomic_load_n(&b->ctl->cq, __ATOMIC_RELAXED) ==
		    __atomic_load_n(ktail, __ATOMIC_RELAXED))
		return false;
	/* another thread of ours copies: it moves done when it is through */
	if (pthread_mutex_trylock(&b->lock))
		return false;
	claim = __atomic_load_n(&b->ctl->claim, __ATOMIC_ACQUIRE);
	tail = __atomic_load_n(&b->ctl->tail, __ATOMIC_ACQUIRE);
	/* the daemon took them (claim moved), or a tail no record array holds */
	if (claim == tail || tail - claim > b->mask + 1 ||
	    !__atomic_compare_exchange_n(&b->ctl->claim, &claim, tail, false, __ATOMIC_SEQ_CST,
					 __ATOMIC_RELAXED)) {
		held = cq_show(b, ktail);
		pthread_mutex_unlock(&b->lock);
		return held;
	}
	for (unsigned i = claim; i != tail; i++) {
		struct ucmdd_bounce_rec r = b->recs[i & b->mask];

		if (r.off <= b->data_len && r.len <= b->data_len - r.off)
			(void)raw_copy_to_user((void *)(uintptr_t)r.addr, b->data + r.off, r.len);
	}
	/* seq_cst: pairs with the daemon's NEED_WAKEUP-then-look before it sleeps */
	__atomic_store_n(&b->ctl->done, tail, __ATOMIC_SEQ_CST);
	/*
	 * Ours, after our last: one range; after the daemon's (it took some
	 * since): ours from here, the older range forgotten (the daemon then
	 * shows those CQEs itself, a little later).
	 */
	if (b->pend_from != b->pend_to && b->pend_to == claim)
		b->pend_to = tail;
	else
		b->pend_from = claim, b->pend_to = tail;
	held = cq_show(b, ktail);
	pthread_mutex_unlock(&b->lock);
	return held;
}
