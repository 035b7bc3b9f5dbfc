/* SPDX-License-Identifier: MIT */
/*
 * The public entries of include/ucmd/ucmd.h that reach an engine or a ring:
 * each checks what every backend would check the same way, reads the
 * engine's or ring's ops once and calls through them (core/backend.h). No
 * entry knows which backend it runs; ucmd_submit and ucmd_wait_cqe*
 * (enter.c) work on the shared ring memory and call ->enter the same way.
 */
#include <errno.h>
#include <string.h>

#include "core/core.h"
#include "ucmd/nvme.h"
#include "ucmd/nvme_wire.h"

void ucmd_engine_free(struct ucmd_engine *e)
{
	if (e)
		e->ops->engine_free(e);
}

int ucmd_open(struct ucmd_engine *e, const char *name, int flags)
{
	if (!e || !name)
		return -EINVAL;
	return e->ops->open(e, name, flags);
}

int ucmd_close(struct ucmd_engine *e, int fd)
{
	if (!e)
		return -EBADF;
	return e->ops->close(e, fd);
}

int ucmd_device_names(struct ucmd_engine *e, const char **names, unsigned max)
{
	if (!e || (!names && max))
		return -EINVAL;
	return e->ops->device_names(e, names, max);
}

int ucmd_disk_stat(struct ucmd_engine *e, const char *name, struct ucmd_disk_stat *out)
{
	if (!e || !name || !out)
		return -EINVAL;
	return e->ops->disk_stat(e, name, out);
}

int ucmd_ioctl(struct ucmd_engine *e, int fd, unsigned long cmd, void *arg)
{
	if (!e)
		return -EINVAL;
	return e->ops->ioctl(e, fd, cmd, arg);
}

int ucmd_nvme_regs_read(struct ucmd_engine *e, int fd, uint32_t off, void *buf, size_t len)
{
	if (!e || !buf || (off | len) & 3 || off > UCMD_NVME_REG_DBS || len > UCMD_NVME_REG_DBS - off)
		return -EINVAL;
	return e->ops->regs_read ? e->ops->regs_read(e, fd, off, buf, len) : -EOPNOTSUPP;
}

void *ucmd_buf_alloc(struct ucmd_engine *e, size_t len)
{
	if (!e || !len) {
		errno = EINVAL;
		return NULL;
	}
	return e->ops->buf_alloc(e, len);
}

void ucmd_buf_free(struct ucmd_engine *e, void *p)
{
	if (e && p)
		e->ops->buf_free(e, p);
}

int ucmd_queue_init_engine(struct ucmd_engine *e, unsigned entries, struct ucmd_ring *ring,
			   struct io_uring_params *p)
{
	if (!e || !ring || !p)
		return -EINVAL;
	return e->ops->queue_init(e, entries, ring, p);
}

int ucmd_queue_init_params(unsigned entries, struct ucmd_ring *ring, struct io_uring_params *p)
{
	struct ucmd_engine *e = ucmd_engine_default();

	return e ? ucmd_queue_init_engine(e, entries, ring, p) : -ENOMEM;
}

int ucmd_queue_init(unsigned entries, struct ucmd_ring *ring, unsigned flags)
{
	struct io_uring_params p;

	memset(&p, 0, sizeof(p));
	p.flags = flags;
	return ucmd_queue_init_params(entries, ring, &p);
}

/*
 * A ring that was never set up, failed setup or was exited has no ops:
 * -EBADF, as Linux answers for a descriptor that is no ring.
 */
void ucmd_queue_exit(struct ucmd_ring *ring)
{
	const struct ucmd_backend *ops = ring->ops;

	if (ops)
		ops->queue_exit(ring);
}

int ucmd_enter(struct ucmd_ring *ring, unsigned to_submit, unsigned min_complete, unsigned flags)
{
	const struct ucmd_backend *ops = ring->ops;

	return ops ? ops->enter(ring, to_submit, min_complete, flags) : -EBADF;
}

int ucmd_register_files(struct ucmd_ring *ring, const int *files, unsigned nr_files)
{
	const struct ucmd_backend *ops = ring->ops;

	return ops ? ops->register_files(ring, files, nr_files) : -EBADF;
}

int ucmd_unregister_files(struct ucmd_ring *ring)
{
	const struct ucmd_backend *ops = ring->ops;

	return ops ? ops->unregister_files(ring) : -EBADF;
}

int ucmd_register_buffers(struct ucmd_ring *ring, const struct iovec *iovecs, unsigned nr_iovecs)
{
	const struct ucmd_backend *ops = ring->ops;

	return ops ? ops->register_buffers(ring, iovecs, nr_iovecs) : -EBADF;
}

int ucmd_unregister_buffers(struct ucmd_ring *ring)
{
	const struct ucmd_backend *ops = ring->ops;

	return ops ? ops->unregister_buffers(ring) : -EBADF;
}

int ucmd_register_personality(struct ucmd_ring *ring)
{
	const struct ucmd_backend *ops = ring->ops;

	return ops ? ops->register_personality(ring) : -EBADF;
}

int ucmd_unregister_personality(struct ucmd_ring *ring, int id)
{
	const struct ucmd_backend *ops = ring->ops;

	return ops ? ops->unregister_personality(ring, id) : -EBADF;
}

/* ---- liburing 2.3's other registration calls (register.c natively) ---- */

int ucmd_register_ring_fd(struct ucmd_ring *ring)
{
	const struct ucmd_backend *ops = ring->ops;

	return ops ? ops->register_ring_fd(ring) : -EBADF;
}

int ucmd_unregister_ring_fd(struct ucmd_ring *ring)
{
	const struct ucmd_backend *ops = ring->ops;

	return ops ? ops->unregister_ring_fd(ring) : -EBADF;
}

int ucmd_register_files_update(struct ucmd_ring *ring, unsigned off, const int *files,
			       unsigned nr_files)
{
	const struct ucmd_backend *ops = ring->ops;

	return ops ? ops->register_files_update(ring, off, files, nr_files) : -EBADF;
}

int ucmd_register_files_sparse(struct ucmd_ring *ring, unsigned nr)
{
	const struct ucmd_backend *ops = ring->ops;

	return ops ? ops->register_files_sparse(ring, nr) : -EBADF;
}

int ucmd_register_buffers_sparse(struct ucmd_ring *ring, unsigned nr)
{
	const struct ucmd_backend *ops = ring->ops;

	return ops ? ops->register_buffers_sparse(ring, nr) : -EBADF;
}

int ucmd_register_eventfd(struct ucmd_ring *ring, int fd)
{
	const struct ucmd_backend *ops = ring->ops;

	return ops ? ops->register_eventfd(ring, fd) : -EBADF;
}

int ucmd_unregister_eventfd(struct ucmd_ring *ring)
{
	const struct ucmd_backend *ops = ring->ops;

	return ops ? ops->unregister_eventfd(ring) : -EBADF;
}

/* liburing returns NULL for a failed probe; errno says why. */
struct io_uring_probe *ucmd_get_probe_ring(struct ucmd_ring *ring)
{
	const struct ucmd_backend *ops = ring->ops;

	if (!ops) {
		errno = EBADF;
		return NULL;
	}
	return ops->get_probe_ring(ring);
}
