/* SPDX-License-Identifier: MIT */
/*
 * An engine backend other than ucmd's own core: the whole device and ring
 * API of an engine handed to someone else. The kernel backend (src/kernel)
 * is one: its rings are real io_urings on real devices. A backend ring has
 * ring->ctx == NULL, so the core's fast paths only look at the backend
 * where they would otherwise fail with "no context".
 */
#ifndef UCMD_CORE_BACKEND_H
#define UCMD_CORE_BACKEND_H

#include "ucmd/ucmd.h"

struct ucmd_backend {
	const char *name;
	int (*open)(struct ucmd_engine *e, const char *name, int flags);
	int (*close)(struct ucmd_engine *e, int fd);
	/* ucmd_ioctl(): 0, a positive status or -errno; NULL: -ENOTTY. */
	int (*ioctl)(struct ucmd_engine *e, int fd, unsigned long cmd, void *arg);
	int (*device_names)(struct ucmd_engine *e, const char **names, unsigned max);
	int (*disk_stat)(struct ucmd_engine *e, const char *name, struct ucmd_disk_stat *out);
	int (*queue_init)(struct ucmd_engine *e, unsigned entries, struct ucmd_ring *ring,
			  struct io_uring_params *p);
	void (*queue_exit)(struct ucmd_ring *ring);
	int (*enter)(struct ucmd_ring *ring, unsigned to_submit, unsigned min_complete,
		     unsigned flags);
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

/* A zeroed probe with room for 256 opcodes, freed by ucmd_free_probe(). */
struct io_uring_probe *io_probe_alloc(void);

/* The backend of a ring that is not ucmd's own (no ctx), else NULL. */
#define UCMD_RING_BACKEND(ring) \
	((ring)->ctx || !(ring)->engine ? NULL : (ring)->engine->backend)

#endif /* UCMD_CORE_BACKEND_H */
