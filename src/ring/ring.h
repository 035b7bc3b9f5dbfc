/* SPDX-License-Identifier: MIT */
/*
 * Ring memory: the SQ ring, the CQ ring and the SQE array in one shared
 * memory region (a memfd), laid out as Linux lays them out and described to
 * the application only by offsets (struct io_uring_params sq_off/cq_off).
 * Nothing inside it is a pointer, so the same region can be mapped by
 * another process. Every index the application writes (SQ tail, SQ array,
 * CQ head) is bounds-checked by the engine before use.
 */
#ifndef UCMD_RING_RING_H
#define UCMD_RING_RING_H

#include <stddef.h>
#include <stdint.h>

#include "ucmd/uapi/io_uring.h"

#define UCMD_MAX_ENTRIES	32768u
#define UCMD_MAX_CQ_ENTRIES	(2u * UCMD_MAX_ENTRIES)

struct io_rings {
	void *mem;
	size_t size;
	int memfd;
	size_t tail_off;		/* io_rings_create_ext's extra bytes start here */
	/* SQ ring */
	uint32_t *sq_head, *sq_tail, *sq_flags, *sq_dropped, *sq_array;
	unsigned sq_entries, sq_mask;
	struct io_uring_sqe *sqes;
	unsigned sqe_shift;		/* 1 on SQE128 rings */
	/* CQ ring */
	uint32_t *cq_head, *cq_tail, *cq_overflow, *cq_flags;
	unsigned cq_entries, cq_mask;
	struct io_uring_cqe *cqes;
	unsigned cqe_shift;		/* 1 on CQE32 rings */
};

/*
 * Size the rings from entries and p (IORING_SETUP_CQSIZE, CLAMP, SQE128,
 * CQE32), create the region and fill p->sq_entries, cq_entries, sq_off and
 * cq_off. Returns 0 or -EINVAL / -ENOMEM.
 */
int io_rings_create(struct io_rings *r, unsigned entries, struct io_uring_params *p);
/*
 * The same with tail more bytes (page-aligned) after the SQEs, at
 * r->tail_off: ucmdd's control page beside the rings it shares with a
 * client. The memfd allows sealing.
 */
int io_rings_create_ext(struct io_rings *r, unsigned entries, struct io_uring_params *p,
			size_t tail);
/*
 * The same with the SQE array at offset sqes_at of the memfd (page-aligned,
 * beyond the rings and the tail; a hole between): IORING_OFF_SQES, so that
 * a program's own mmap(IORING_OFF_SQES) of the memfd finds the SQEs there
 * (the seccomp supervisor's rings, src/preload/supervise.c). 0: as _ext.
 */
int io_rings_create_at(struct io_rings *r, unsigned entries, struct io_uring_params *p,
		       size_t tail, size_t sqes_at);
/* Map memfd fd's [0, head) and [sqes_at, total) at their offsets in one range of total bytes. */
void *io_rings_map_split(int fd, size_t head, size_t sqes_at, size_t total);
void io_rings_destroy(struct io_rings *r);

static inline struct io_uring_sqe *io_rings_sqe(const struct io_rings *r, unsigned idx)
{
	return &r->sqes[(size_t)idx << r->sqe_shift];
}

static inline struct io_uring_cqe *io_rings_cqe(const struct io_rings *r, unsigned idx)
{
	return &r->cqes[(size_t)(idx & r->cq_mask) << r->cqe_shift];
}

#endif
