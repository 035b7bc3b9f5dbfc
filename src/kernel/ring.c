/* SPDX-License-Identifier: MIT */
/*
 * Kernel rings: liburing sets up a real io_uring and maps it; struct
 * ucmd_ring then points into the kernel's ring memory exactly as
 * struct io_uring does (the two have the same fields in the same order), so
 * ucmd's inline SQ/CQ helpers and its submit/wait logic run unchanged and
 * only the system-call edges land here.
 */
#include <liburing.h>	/* first: its <linux/io_uring.h> is the one used */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/backend.h"
#include "kernel/kernel_int.h"

#define SQ_FIELDS(X) X(khead) X(ktail) X(kring_mask) X(kring_entries) X(kflags) \
	X(kdropped) X(array) X(sqes) X(sqe_head) X(sqe_tail) X(ring_sz) X(ring_ptr) \
	X(ring_mask) X(ring_entries)
#define CQ_FIELDS(X) X(khead) X(ktail) X(kring_mask) X(kring_entries) X(kflags) \
	X(koverflow) X(cqes) X(ring_sz) X(ring_ptr) X(ring_mask) X(ring_entries)

static void from_liburing(struct ucmd_ring *r, const struct io_uring *k)
{
#define SQ(f) r->sq.f = k->sq.f;
#define CQ(f) r->cq.f = k->cq.f;
	SQ_FIELDS(SQ)
	CQ_FIELDS(CQ)
#undef SQ
#undef CQ
	r->flags = k->flags;
	r->ring_fd = k->ring_fd;
	r->features = k->features;
	r->enter_ring_fd = k->enter_ring_fd;
}

/* liburing's calls want a struct io_uring: a view of the same ring. */
static void to_liburing(struct io_uring *k, const struct ucmd_ring *r)
{
	memset(k, 0, sizeof(*k));
#define SQ(f) k->sq.f = r->sq.f;
#define CQ(f) k->cq.f = r->cq.f;
	SQ_FIELDS(SQ)
	CQ_FIELDS(CQ)
#undef SQ
#undef CQ
	k->flags = r->flags;
	k->ring_fd = r->ring_fd;
	k->enter_ring_fd = r->ring_fd;
	k->features = r->features;
}

int kernel_queue_init(struct ucmd_engine *e, unsigned entries, struct ucmd_ring *ring,
		      struct io_uring_params *p)
{
	struct io_uring k;
	int ret;

	memset(ring, 0, sizeof(*ring));
	ring->ring_fd = -1;
	ret = io_uring_queue_init_params(entries, &k, p);
	if (ret < 0)
		return ret;
	from_liburing(ring, &k);
	/* ucmd publishes only the SQ tail: the index array must be the identity */
	for (unsigned i = 0; !(p->flags & IORING_SETUP_NO_SQARRAY) && i < ring->sq.ring_entries; i++)
		ring->sq.array[i] = i;
	ring->engine = e;
	ring->ops = &kernel_backend;
	ring->backend = NULL;	/* the kernel holds the ring's state */
	return 0;
}

void kernel_queue_exit(struct ucmd_ring *ring)
{
	struct io_uring k;

	to_liburing(&k, ring);
	io_uring_queue_exit(&k);
	memset(ring, 0, sizeof(*ring));
	ring->ring_fd = -1;
}

int kernel_enter(struct ucmd_ring *ring, unsigned to_submit, unsigned min_complete,
		 unsigned flags)
{
	int fd = ring->ring_fd;

	if (ring->int_flags & UCMD_INT_FLAG_REG_RING) {
		fd = ring->enter_ring_fd;
		flags |= IORING_ENTER_REGISTERED_RING;
	}
	/* The raw system call: its return is what ucmd_enter() promises. */
	long ret = syscall(__NR_io_uring_enter, fd, to_submit, min_complete, flags, NULL, 0);

	return ret < 0 ? -errno : (int)ret;
}

int kernel_register_files(struct ucmd_ring *ring, const int *files, unsigned nr)
{
	struct io_uring k;

	to_liburing(&k, ring);
	return io_uring_register_files(&k, files, nr);
}

int kernel_unregister_files(struct ucmd_ring *ring)
{
	struct io_uring k;

	to_liburing(&k, ring);
	return io_uring_unregister_files(&k);
}

int kernel_register_buffers(struct ucmd_ring *ring, const struct iovec *iov, unsigned nr)
{
	struct io_uring k;

	to_liburing(&k, ring);
	return io_uring_register_buffers(&k, iov, nr);
}

int kernel_unregister_buffers(struct ucmd_ring *ring)
{
	struct io_uring k;

	to_liburing(&k, ring);
	return io_uring_unregister_buffers(&k);
}

int kernel_register_personality(struct ucmd_ring *ring)
{
	struct io_uring k;

	to_liburing(&k, ring);
	return io_uring_register_personality(&k);
}

int kernel_unregister_personality(struct ucmd_ring *ring, int id)
{
	struct io_uring k;

	to_liburing(&k, ring);
	return io_uring_unregister_personality(&k, id);
}

/* ---- liburing 2.3's other registration calls ------------------------------- */

static long sys_register(int fd, unsigned op, void *arg, unsigned nr)
{
	long ret = syscall(__NR_io_uring_register, fd, op, arg, nr);

	return ret < 0 ? -errno : ret;
}

/*
 * The registered ring index lives in ring->enter_ring_fd, as liburing keeps
 * it in struct io_uring; the system calls are made directly so that no
 * liburing-private flag has to be mirrored.
 */
int kernel_register_ring_fd(struct ucmd_ring *ring)
{
	struct io_uring_rsrc_update up = { .offset = -1U, .data = (__u64)ring->ring_fd };
	long ret;

	if (ring->int_flags & UCMD_INT_FLAG_REG_RING)
		return -EEXIST;
	ret = sys_register(ring->ring_fd, IORING_REGISTER_RING_FDS, &up, 1);
	if (ret == 1) {
		ring->enter_ring_fd = (int)up.offset;
		ring->int_flags |= UCMD_INT_FLAG_REG_RING;
	}
	return (int)ret;
}

int kernel_unregister_ring_fd(struct ucmd_ring *ring)
{
	struct io_uring_rsrc_update up = { .offset = (__u32)ring->enter_ring_fd };
	long ret;

	if (!(ring->int_flags & UCMD_INT_FLAG_REG_RING))
		return -EINVAL;
	ret = sys_register(ring->ring_fd, IORING_UNREGISTER_RING_FDS, &up, 1);
	if (ret == 1) {
		ring->enter_ring_fd = ring->ring_fd;
		ring->int_flags &= ~UCMD_INT_FLAG_REG_RING;
	}
	return (int)ret;
}

int kernel_register_files_update(struct ucmd_ring *ring, unsigned off, const int *files,
				 unsigned nr)
{
	struct io_uring k;

	to_liburing(&k, ring);
	return io_uring_register_files_update(&k, off, (int *)files, nr);
}

int kernel_register_files_sparse(struct ucmd_ring *ring, unsigned nr)
{
	struct io_uring k;

	to_liburing(&k, ring);
	return io_uring_register_files_sparse(&k, nr);
}

int kernel_register_buffers_sparse(struct ucmd_ring *ring, unsigned nr)
{
	struct io_uring k;

	to_liburing(&k, ring);
	return io_uring_register_buffers_sparse(&k, nr);
}

int kernel_register_eventfd(struct ucmd_ring *ring, int fd)
{
	struct io_uring k;

	to_liburing(&k, ring);
	return io_uring_register_eventfd(&k, fd);
}

int kernel_unregister_eventfd(struct ucmd_ring *ring)
{
	struct io_uring k;

	to_liburing(&k, ring);
	return io_uring_unregister_eventfd(&k);
}

struct io_uring_probe *kernel_get_probe_ring(struct ucmd_ring *ring)
{
	struct io_uring k;
	struct io_uring_probe *lp, *p;

	to_liburing(&k, ring);
	lp = io_uring_get_probe_ring(&k);
	if (!lp)
		return NULL;
	/* ucmd_free_probe() frees ucmd's allocation, not liburing's */
	p = io_probe_alloc();
	if (p) {
		/* ops_len is a byte: it always fits the 256 slots */
		memcpy(p, lp, sizeof(*p) + lp->ops_len * sizeof(p->ops[0]));
	} else {
		errno = ENOMEM;
	}
	io_uring_free_probe(lp);
	return p;
}

int kernel_enter_timeout(struct ucmd_ring *ring, unsigned to_submit, unsigned min_complete,
			 unsigned flags, const struct __kernel_timespec *ts, const sigset_t *sigmask)
{
	struct io_uring_getevents_arg arg = {
		.sigmask = (__u64)(uintptr_t)sigmask,
		.sigmask_sz = _NSIG / 8,
		.ts = (__u64)(uintptr_t)ts,
	};
	int fd = ring->ring_fd;
	long ret;

	if (ring->int_flags & UCMD_INT_FLAG_REG_RING) {
		fd = ring->enter_ring_fd;
		flags |= IORING_ENTER_REGISTERED_RING;
	}
	ret = syscall(__NR_io_uring_enter, fd, to_submit, min_complete,
		      flags | IORING_ENTER_EXT_ARG, &arg, sizeof(arg));
	return ret < 0 ? -errno : (int)ret;
}
