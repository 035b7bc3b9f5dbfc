/* SPDX-License-Identifier: MIT */
/*
 * The program's own descriptors on ucmd's rings (uring_own.c): SQEs that
 * name a file, pipe, socket... of the program's (none of ucmd's devices)
 * run on a kernel io_uring of the preload's, their CQEs posted into the
 * program's ring in the order the kernel completes them.
 */
#ifndef UCMD_PRELOAD_URING_OWN_H
#define UCMD_PRELOAD_URING_OWN_H

#include <stdbool.h>
#include <sys/uio.h>

#include <linux/io_uring.h>

#include "client/client.h"

struct pl_own;

/* The program's registered buffers, kept to register them on the kernel ring too. */
struct pl_own_bufs {
	struct iovec *iov;
	unsigned nr;
};

/*
 * The opcodes the daemon's ring serves on a device descriptor: reads,
 * writes, flushes and passthrough. The same list says which SQEs are the
 * program's own by their fd (uring_own.c) and which fail on a removed
 * device (uring.c).
 */
static inline bool pl_uring_dev_op(uint8_t op)
{
	switch (op) {
	case IORING_OP_READV:
	case IORING_OP_WRITEV:
	case IORING_OP_READ_FIXED:
	case IORING_OP_WRITE_FIXED:
	case IORING_OP_READ:
	case IORING_OP_WRITE:
	case IORING_OP_FSYNC:
	case IORING_OP_URING_CMD:
		return true;
	default:
		return false;
	}
}

/* What the daemon's ring should not be given: sqe runs on the kernel's. Cheap, lock-free. */
bool pl_own_sqe(const struct pl_own *o, const struct io_uring_sqe *sqe);

/*
 * Submit to_submit SQEs of the program's SQ (a ring with an SQ of its
 * own): the program's own ones to the kernel ring (made at the first),
 * the others to the daemon's, a chain mixing both failed (its first SQE
 * -EINVAL, the rest -ECANCELED). How many were submitted, or -errno.
 */
int pl_own_submit(struct pl_own **op, struct ucmd_ring *ring, const struct pl_own_bufs *b,
		  unsigned to_submit, unsigned flags);

/* Not the program's own: the usual path serves the call */
#define PL_OWN_PASS 1

/*
 * IORING_REGISTER_FILES naming own descriptors: the daemon's table gets
 * -1 (an empty slot) at their places, the kernel ring's holds them (and
 * -1 at the devices'). PL_OWN_PASS when the table names none.
 */
long pl_own_register_files(struct pl_own **op, struct ucmd_ring *ring,
			   const struct pl_own_bufs *b, const void *arg, unsigned nr);
/* IORING_UNREGISTER_FILES: the kernel ring's table too */
void pl_own_unregister_files(struct pl_own *o);
/*
 * IORING_REGISTER_PERSONALITY gave id on the daemon's ring: the calling
 * thread's credentials registered on the kernel ring too (made now if
 * need be), for own SQEs naming id. 0 or -errno (the caller then
 * unregisters id on the daemon's ring).
 */
int pl_own_register_personality(struct pl_own **op, struct ucmd_ring *ring,
				const struct pl_own_bufs *b, int id);
/* IORING_UNREGISTER_PERSONALITY of id: the kernel ring's too */
void pl_own_unregister_personality(struct pl_own *o, int id);
/* The program registered (nr) or unregistered (0) buffers: the kernel ring's too. */
void pl_own_buffers(struct pl_own *o, const struct pl_own_bufs *b);

#endif
