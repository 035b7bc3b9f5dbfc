/* SPDX-License-Identifier: MIT */
/*
 * What is behind an engine and its rings: one table of operations, as SPDK's
 * struct spdk_nvme_transport_ops is behind its controllers. Every public
 * entry of include/ucmd/ucmd.h that is not an inline helper reads the
 * engine's or the ring's ops once and calls through it (src/core/api.c);
 * core holds no other knowledge of which backend it runs.
 *
 *   native   ucmd's own engine: devices, rings, the security chain
 *            (src/backend/native.c over src/core)
 *   kernel   real devices and real io_urings, through liburing (src/kernel)
 *   daemon   a connection to ucmdd: control messages and shared rings
 *            (src/client, src/daemon/proto.h)
 *
 * A backend fills every member: a call it cannot make returns its errno
 * (the kernel's disk_stat answers -ENOTBLK for what is no disk), so the
 * dispatcher never tests for a hole. The ring memory every backend hands
 * out has Linux's layout, which is what lets ucmd.h's inline SQ/CQ helpers
 * and ucmd_submit/ucmd_wait_cqe's ring logic run unchanged over all of them;
 * only ->enter crosses into the backend on the fast path.
 *
 * Adding a backend: fill a struct ucmd_backend, create engines with
 * backend_engine_alloc(&ops, state) and set ring->ops/ring->backend in
 * ->queue_init. Nothing in core changes.
 */
#ifndef UCMD_CORE_BACKEND_H
#define UCMD_CORE_BACKEND_H

#include "ucmd/ucmd.h"

struct ucmd_backend {
	const char *name;

	/* ---- engine: the devices it holds (ucmd_engine_free, ucmd_open, ...) ---- */
	/* Release the backend's state, then the engine (ucmd_engine_release). */
	void (*engine_free)(struct ucmd_engine *e);
	int (*open)(struct ucmd_engine *e, const char *name, int flags);
	int (*close)(struct ucmd_engine *e, int fd);
	int (*device_names)(struct ucmd_engine *e, const char **names, unsigned max);
	int (*disk_stat)(struct ucmd_engine *e, const char *name, struct ucmd_disk_stat *out);
	/* The synchronous path: ioctl(2) on an open device. */
	int (*ioctl)(struct ucmd_engine *e, int fd, unsigned long cmd, void *arg);
	/* ucmd_nvme_regs_read, bounds checked: 0 or -errno. NULL: -EOPNOTSUPP. */
	int (*regs_read)(struct ucmd_engine *e, int fd, uint32_t off, void *buf, size_t len);
	/*
	 * ucmd_buf_alloc/ucmd_buf_free: len bytes (len > 0) of zeroed,
	 * page-aligned memory the backend does I/O on without a copy; NULL
	 * with errno set. buf_free ignores a pointer it did not hand out.
	 */
	void *(*buf_alloc)(struct ucmd_engine *e, size_t len);
	void (*buf_free)(struct ucmd_engine *e, void *p);

	/* ---- rings (ucmd_queue_init*, ucmd_queue_exit, ucmd_enter) ---- */
	/* Sets ring->ops and ring->backend on success. */
	int (*queue_init)(struct ucmd_engine *e, unsigned entries, struct ucmd_ring *ring,
			  struct io_uring_params *p);
	void (*queue_exit)(struct ucmd_ring *ring);
	/* io_uring_enter(2): SQEs published up to the SQ tail, then wait. */
	int (*enter)(struct ucmd_ring *ring, unsigned to_submit, unsigned min_complete,
		     unsigned flags);
	/*
	 * ucmd_submit_and_wait whole: the application's SQ flush and the
	 * enter in one call. NULL: app_submit_and_wait, which flushes, then
	 * calls ->enter.
	 */
	int (*submit_and_wait)(struct ucmd_ring *ring, unsigned wait_nr);

	/* ---- io_uring_register(2) (ucmd_register_*, ucmd_unregister_*) ---- */
	int (*register_files)(struct ucmd_ring *ring, const int *files, unsigned nr);
	int (*unregister_files)(struct ucmd_ring *ring);
	int (*register_buffers)(struct ucmd_ring *ring, const struct iovec *iov, unsigned nr);
	int (*unregister_buffers)(struct ucmd_ring *ring);
	int (*register_personality)(struct ucmd_ring *ring);
	int (*unregister_personality)(struct ucmd_ring *ring, int id);
	/* register.c / wait.c: liburing 2.3's other calls */
	int (*register_ring_fd)(struct ucmd_ring *ring);
	int (*unregister_ring_fd)(struct ucmd_ring *ring);
	int (*register_files_update)(struct ucmd_ring *ring, unsigned off, const int *files,
				     unsigned nr);
	int (*register_files_sparse)(struct ucmd_ring *ring, unsigned nr);
	int (*register_buffers_sparse)(struct ucmd_ring *ring, unsigned nr);
	int (*register_eventfd)(struct ucmd_ring *ring, int fd);
	int (*unregister_eventfd)(struct ucmd_ring *ring);
	/* a probe from io_probe_alloc(), or NULL with errno set */
	struct io_uring_probe *(*get_probe_ring)(struct ucmd_ring *ring);
	/* io_uring_enter(2) with IORING_ENTER_EXT_ARG: ts relative, -ETIME when it passes */
	int (*enter_timeout)(struct ucmd_ring *ring, unsigned to_submit, unsigned min_complete,
			     unsigned flags, const struct __kernel_timespec *ts,
			     const sigset_t *sigmask);
};

/*
 * Page-aligned zeroed memory from the heap, for backends whose devices
 * reach the process's memory directly (native, kernel): their buf_alloc
 * and buf_free.
 */
void *backend_buf_alloc_pages(struct ucmd_engine *e, size_t len);
void backend_buf_free_pages(struct ucmd_engine *e, void *p);

/*
 * Point ring's SQ and CQ at ring memory with Linux's layout, as
 * io_uring_setup(2) describes it in p (liburing's
 * io_uring_setup_ring_pointers): b is its mapping, size bytes, the SQEs at
 * sqes_off. The SQ and CQ sizes are p's, which the backend made or checked
 * the layout for, never re-read from memory another party writes. The SQ
 * index array becomes the identity, as liburing keeps it.
 */
void backend_ring_map(struct ucmd_ring *ring, const struct io_uring_params *p, char *b,
		      size_t size, size_t sqes_off);

/* A zeroed probe with room for 256 opcodes, freed by ucmd_free_probe(). */
struct io_uring_probe *io_probe_alloc(void);

/*
 * A new engine run by ops, with priv as the backend's state (NULL when the
 * backend keeps none); NULL if out of memory. The native fields (devices,
 * files, security chain) start empty and other backends leave them so.
 */
struct ucmd_engine *backend_engine_alloc(const struct ucmd_backend *ops, void *priv);
/* Free what backend_engine_alloc made: the last step of ->engine_free. */
void backend_engine_release(struct ucmd_engine *e);
/* The backend's state given to backend_engine_alloc, and its ops. */
void *backend_engine_priv(const struct ucmd_engine *e);
const struct ucmd_backend *backend_engine_ops(const struct ucmd_engine *e);

/*
 * IORING_OP_NOP's nop_flags (Linux 6.x; the system header may predate
 * them): INJECT_RESULT posts sqe->len as the CQE's res; CQE32 sqe->off and
 * sqe->addr as a big CQE's extra words. UCMD_NOP_CQE_FLAGS is ucmd's own
 * (Linux answers -EINVAL to it): the CQE's flags from the low 32 bits of
 * sqe->addr3 (off is CQE32's). The preload posts a forwarded request's
 * completion with INJECT_RESULT and CQE_FLAGS (src/preload/uring_own.c).
 */
#define UCMD_NOP_INJECT_RESULT (1u << 0)
#define UCMD_NOP_CQE32 (1u << 5)
#define UCMD_NOP_CQE_FLAGS (1u << 31)

#endif /* UCMD_CORE_BACKEND_H */
