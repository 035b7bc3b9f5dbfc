/* SPDX-License-Identifier: MIT */
/* The kernel backend's internals, shared by its files. */
#ifndef UCMD_KERNEL_INT_H
#define UCMD_KERNEL_INT_H

#include "ucmd/ucmd.h"

struct ucmd_engine;
struct ucmd_backend;

/* dev.c: the table every kernel engine and ring goes through */
extern const struct ucmd_backend kernel_backend;

/* ring.c: rings and registration, through liburing */
int kernel_queue_init(struct ucmd_engine *e, unsigned entries, struct ucmd_ring *ring,
		      struct io_uring_params *p);
void kernel_queue_exit(struct ucmd_ring *ring);
int kernel_enter(struct ucmd_ring *ring, unsigned to_submit, unsigned min_complete,
		 unsigned flags);
int kernel_register_files(struct ucmd_ring *ring, const int *files, unsigned nr);
int kernel_unregister_files(struct ucmd_ring *ring);
int kernel_register_buffers(struct ucmd_ring *ring, const struct iovec *iov, unsigned nr);
int kernel_unregister_buffers(struct ucmd_ring *ring);
int kernel_register_personality(struct ucmd_ring *ring);
int kernel_unregister_personality(struct ucmd_ring *ring, int id);
int kernel_register_ring_fd(struct ucmd_ring *ring);
int kernel_unregister_ring_fd(struct ucmd_ring *ring);
int kernel_register_files_update(struct ucmd_ring *ring, unsigned off, const int *files,
				 unsigned nr);
int kernel_register_files_sparse(struct ucmd_ring *ring, unsigned nr);
int kernel_register_buffers_sparse(struct ucmd_ring *ring, unsigned nr);
int kernel_register_eventfd(struct ucmd_ring *ring, int fd);
int kernel_unregister_eventfd(struct ucmd_ring *ring);
struct io_uring_probe *kernel_get_probe_ring(struct ucmd_ring *ring);
int kernel_enter_timeout(struct ucmd_ring *ring, unsigned to_submit, unsigned min_complete,
			 unsigned flags, const struct __kernel_timespec *ts, const sigset_t *sigmask);

#endif /* UCMD_KERNEL_INT_H */
