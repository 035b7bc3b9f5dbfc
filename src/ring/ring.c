/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ring/ring.h"

/* Heads and tails that different sides write sit on their own cache lines. */
#define LINE 64u

struct layout {
	size_t sq_head, sq_tail, sq_mask, sq_entries, sq_flags, sq_dropped, sq_array;
	size_t cq_head, cq_tail, cq_mask, cq_entries, cq_overflow, cq_flags, cq_cqes;
	size_t sqes, total;
};

static size_t align_up(size_t v, size_t a)
{
	return (v + a - 1) & ~(a - 1);
}

static unsigned roundup_pow2(unsigned v)
{
	unsigned r = 1;

	while (r < v)
		r <<= 1;
	return r;
}

static void compute_layout(struct layout *l, unsigned sq, unsigned cq, size_t sqe_sz,
			   size_t cqe_sz)
{
	size_t o = 0;

	l->sq_head = o;			o += LINE;
	l->sq_tail = o;			o += LINE;
	l->sq_mask = o;
	l->sq_entries = o + 4;
	l->sq_flags = o + 8;
	l->sq_dropped = o + 12;		o += LINE;
	l->cq_head = o;			o += LINE;
	l->cq_tail = o;			o += LINE;
	l->cq_mask = o;
	l->cq_entries = o + 4;
	l->cq_overflow = o + 8;
	l->cq_flags = o + 12;		o += LINE;
	l->cq_cqes = o;			o = align_up(o + (size_t)cq * cqe_sz, LINE);
	/*
	 * The SQ array last, as Linux's rings_size(): the SQ ring's mapping
	 * (sq_off.array + sq_entries * 4 bytes, what a program asks for
	 * IORING_OFF_SQ_RING) then holds the CQ ring too, which is what lets a
	 * program that maps IORING_OFF_CQ_RING apart see the same rings.
	 */
	l->sq_array = o;		o = align_up(o + (size_t)sq * 4, LINE);
	/* page-aligned, as Linux's separate SQE array: IORING_OFF_SQES maps it alone */
	l->sqes = align_up(o, (size_t)sysconf(_SC_PAGESIZE));
	o = l->sqes + (size_t)sq * sqe_sz;
	l->total = align_up(o, (size_t)sysconf(_SC_PAGESIZE));
}

int io_rings_create(struct io_rings *r, unsigned entries, struct io_uring_params *p)
{
	return io_rings_create_ext(r, entries, p, 0);
}

/*
 * A memfd whose [0, head) and [sqes_at, total) hold data and the rest is a
 * hole: both mapped where the offsets say, in one reserved range, so that
 * the hole costs address space only (no page, no MAP_POPULATE of it).
 */
void *io_rings_map_split(int fd, size_t head, size_t sqes_at, size_t total)
{
	void *base = mmap(NULL, total, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
			  -1, 0);
	char *b = base;

	if (base == MAP_FAILED)
		return MAP_FAILED;
	if (mmap(b, head, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED | MAP_POPULATE, fd, 0) ==
		    MAP_FAILED ||
	    mmap(b + sqes_at, total - sqes_at, PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_FIXED | MAP_POPULATE, fd, (off_t)sqes_at) == MAP_FAILED) {
		int err = errno;

		munmap(base, total);
		errno = err;
		return MAP_FAILED;
	}
	return base;
}

int io_rings_create_ext(struct io_rings *r, unsigned entries, struct io_uring_params *p,
			size_t tail)
{
	return io_rings_create_at(r, entries, p, tail, 0);
}

int io_rings_create_at(struct io_rings *r, unsigned entries, struct io_uring_params *p,
		       size_t tail, size_t sqes_at)
{
	size_t head = 0;
	unsigned sq, cq;
	size_t sqe_sz = (p->flags & IORING_SETUP_SQE128) ? 128 : 64;
	size_t cqe_sz = (p->flags & IORING_SETUP_CQE32) ? 32 : 16;
	struct layout l;

	memset(r, 0, sizeof(*r));
	r->memfd = -1;
	if (!entries)
		return -EINVAL;
	if (entries > UCMD_MAX_ENTRIES) {
		if (!(p->flags & IORING_SETUP_CLAMP))
			return -EINVAL;
		entries = UCMD_MAX_ENTRIES;
	}
	sq = roundup_pow2(entries);
	if (p->flags & IORING_SETUP_CQSIZE) {
		/* Linux: the CQ must hold at least the SQ, and is a power of two. */
		if (!p->cq_entries)
			return -EINVAL;
		cq = p->cq_entries;
		if (cq > UCMD_MAX_CQ_ENTRIES) {
			if (!(p->flags & IORING_SETUP_CLAMP))
				return -EINVAL;
			cq = UCMD_MAX_CQ_ENTRIES;
		}
		cq = roundup_pow2(cq);
		if (cq < sq)
			return -EINVAL;
	} else {
		cq = 2 * sq;
	}

	compute_layout(&l, sq, cq, sqe_sz, cqe_sz);
	if (sqes_at) {
		/* the rings, the tail after them, then a hole up to the SQEs at sqes_at */
		size_t pg = (size_t)sysconf(_SC_PAGESIZE);
		size_t sqes_len = l.total - l.sqes;

		r->tail_off = l.sqes;
		head = l.sqes + align_up(tail, pg);
		if (head > sqes_at || (sqes_at & (pg - 1)))
			return -EINVAL;
		l.sqes = sqes_at;
		l.total = sqes_at + sqes_len;
	} else {
		r->tail_off = l.total;
		l.total += align_up(tail, (size_t)sysconf(_SC_PAGESIZE));
	}
	/* sealable: a ring another process maps must not be shrunk under it */
	int fd = memfd_create("ucmd-ring", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return -errno;
	if (ftruncate(fd, (off_t)l.total) < 0) {
		int err = -errno;
		close(fd);
		return err;
	}
	void *mem = head ? io_rings_map_split(fd, head, l.sqes, l.total)
			 : mmap(NULL, l.total, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
	if (mem == MAP_FAILED) {
		int err = -errno;
		close(fd);
		return err;
	}
	char *b = mem;
	r->mem = mem;
	r->size = l.total;
	r->memfd = fd;
	r->sq_head = (uint32_t *)(b + l.sq_head);
	r->sq_tail = (uint32_t *)(b + l.sq_tail);
	r->sq_flags = (uint32_t *)(b + l.sq_flags);
	r->sq_dropped = (uint32_t *)(b + l.sq_dropped);
	r->sq_array = (uint32_t *)(b + l.sq_array);
	r->sq_entries = sq;
	r->sq_mask = sq - 1;
	r->sqes = (struct io_uring_sqe *)(b + l.sqes);
	r->sqe_shift = sqe_sz == 128;
	r->cq_head = (uint32_t *)(b + l.cq_head);
	r->cq_tail = (uint32_t *)(b + l.cq_tail);
	r->cq_overflow = (uint32_t *)(b + l.cq_overflow);
	r->cq_flags = (uint32_t *)(b + l.cq_flags);
	r->cqes = (struct io_uring_cqe *)(b + l.cq_cqes);
	r->cq_entries = cq;
	r->cq_mask = cq - 1;
	r->cqe_shift = cqe_sz == 32;
	*(uint32_t *)(b + l.sq_mask) = sq - 1;
	*(uint32_t *)(b + l.sq_entries) = sq;
	*(uint32_t *)(b + l.cq_mask) = cq - 1;
	*(uint32_t *)(b + l.cq_entries) = cq;

	p->sq_entries = sq;
	p->cq_entries = cq;
	memset(&p->sq_off, 0, sizeof(p->sq_off));
	memset(&p->cq_off, 0, sizeof(p->cq_off));
	p->sq_off.head = (uint32_t)l.sq_head;
	p->sq_off.tail = (uint32_t)l.sq_tail;
	p->sq_off.ring_mask = (uint32_t)l.sq_mask;
	p->sq_off.ring_entries = (uint32_t)l.sq_entries;
	p->sq_off.flags = (uint32_t)l.sq_flags;
	p->sq_off.dropped = (uint32_t)l.sq_dropped;
	/*
	 * IORING_SETUP_NO_SQARRAY: SQE i is the one at head & mask. The array
	 * stays, the identity, where only the engine reads it; the
	 * application is told of none (offset 0, as Linux leaves it).
	 */
	if (p->flags & IORING_SETUP_NO_SQARRAY) {
		for (unsigned i = 0; i < sq; i++)
			r->sq_array[i] = i;
		p->sq_off.array = 0;
	} else {
		p->sq_off.array = (uint32_t)l.sq_array;
	}
	/* resv2 carries where the SQEs start: one region, not three mmaps */
	p->sq_off.resv2 = l.sqes;
	p->cq_off.head = (uint32_t)l.cq_head;
	p->cq_off.tail = (uint32_t)l.cq_tail;
	p->cq_off.ring_mask = (uint32_t)l.cq_mask;
	p->cq_off.ring_entries = (uint32_t)l.cq_entries;
	p->cq_off.overflow = (uint32_t)l.cq_overflow;
	p->cq_off.cqes = (uint32_t)l.cq_cqes;
	p->cq_off.flags = (uint32_t)l.cq_flags;
	p->cq_off.resv2 = l.total;
	return 0;
}

void io_rings_destroy(struct io_rings *r)
{
	if (r->mem)
		munmap(r->mem, r->size);
	if (r->memfd >= 0)
		close(r->memfd);
	r->mem = NULL;
	r->memfd = -1;
}
