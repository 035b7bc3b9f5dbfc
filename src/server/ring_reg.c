/* SPDX-License-Identifier: MIT */
/*
 * io_uring_register(2) on a client ring (UCMDD_REGISTER): the client's
 * arguments read from its memory and registered on the daemon's engine
 * ring, which belongs to the client's task, so that the engine resolves
 * them as in-process:
 *
 *   files      the client's fd numbers, in the client's own file table
 *   buffers    the client's ranges, reached through its mm at each issue
 *              (a range inside a shared region: the daemon's mapping of
 *              it, zero copy; any other: bounced by the driver then)
 *   personality, eventfd, probe: as Linux answers them
 *   ring fds   -EINVAL: a daemon ring has no fd to register; the client's
 *              backend answers ucmd_register_ring_fd() itself
 *
 * Runs on the client's control thread, acting as the client, under the
 * ring's lock, so its thread sees the tables change only between passes.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "server/ring.h"

/*
 * The client's numbers as they are: the engine ring's task resolves them in
 * the client's own table, and the engine answers as in-process.
 */
static int files_register(struct srv_ring *r, uint64_t arg, unsigned nr, bool sparse)
{
	int *cfds;
	int ret;

	if (sparse)
		return ucmd_register_files_sparse(&r->er, nr);
	if (!nr || nr > UCMD_MAX_FIXED_FILES)
		return -EINVAL;
	if (!arg)
		return -EFAULT;
	cfds = malloc(nr * sizeof(int));
	if (!cfds)
		return -ENOMEM;
	ret = srv_copy_from(r->c, cfds, arg, nr * sizeof(int));
	if (!ret)
		ret = ucmd_register_files(&r->er, cfds, nr);
	free(cfds);
	return ret;
}

static int files_update(struct srv_ring *r, uint64_t arg, unsigned nr)
{
	struct io_uring_files_update up;
	int *cfds;
	int ret;

	if (srv_copy_from(r->c, &up, arg, sizeof(up)))
		return -EFAULT;
	if (up.resv)
		return -EINVAL;
	if (!nr || nr > UCMD_MAX_FIXED_FILES)
		return -EINVAL;
	cfds = malloc(nr * sizeof(int));
	if (!cfds)
		return -ENOMEM;
	ret = srv_copy_from(r->c, cfds, up.fds, nr * sizeof(int));
	/* Linux updates up to a bad fd and says how many, or its error if none */
	if (!ret)
		ret = ucmd_register_files_update(&r->er, up.offset, cfds, nr);
	free(cfds);
	return ret;
}

/* struct io_uring_rsrc_register: a table (data) or nr empty slots (SPARSE). */
static int rsrc_register(struct srv_ring *r, uint64_t arg, unsigned size,
			 struct io_uring_rsrc_register *rr)
{
	if (size != sizeof(*rr))
		return -EINVAL;
	if (srv_copy_from(r->c, rr, arg, sizeof(*rr)))
		return -EFAULT;
	/* ucmd has no resource tags */
	if (rr->resv2 || rr->tags || (rr->flags & ~IORING_RSRC_REGISTER_SPARSE))
		return -EINVAL;
	if ((rr->flags & IORING_RSRC_REGISTER_SPARSE) && rr->data)
		return -EINVAL;
	return 0;
}

/*
 * The client's ranges as they are: the engine checks them through the
 * ring's task (the client's memory, as Linux pins a buffer's pages) and
 * reaches them through it whenever a request is issued, so that a
 * registered buffer holds what the client's memory holds at that moment.
 */
static int bufs_register(struct srv_ring *r, uint64_t arg, unsigned nr, bool sparse)
{
	struct iovec *civ;
	int ret;

	if (sparse)
		return ucmd_register_buffers_sparse(&r->er, nr);
	if (!nr || nr > UCMD_MAX_FIXED_BUFS)
		return -EINVAL;
	if (!arg)
		return -EFAULT;
	civ = malloc(nr * sizeof(*civ));
	if (!civ)
		return -ENOMEM;
	ret = srv_copy_from(r->c, civ, arg, nr * sizeof(*civ));
	if (!ret)
		ret = ucmd_register_buffers(&r->er, civ, nr);
	free(civ);
	return ret;
}

/* Linux's eventfd_ctx_fdget(): an fd that is not an eventfd is -EINVAL. */
static bool is_eventfd(int fd)
{
	char path[64], link[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, link, sizeof(link) - 1);
	if (n < 0)
		return false;
	link[n] = 0;
	return !strcmp(link, "anon_inode:[eventfd]");
}

static int eventfd_register(struct srv_ring *r, int fd_in)
{
	int fd;

	if (r->user_efd >= 0)
		return -EBUSY;
	if (fd_in < 0 || fcntl(fd_in, F_GETFD) < 0)
		return -EBADF;
	if (!is_eventfd(fd_in))
		return -EINVAL;
	/* fd_in stays the caller's; the ring keeps its own */
	fd = fcntl(fd_in, F_DUPFD_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	r->user_efd = fd;
	return 0;
}

static int probe(struct srv_ring *r, unsigned nr, void **payload, size_t *payload_len)
{
	struct io_uring_probe *ep, *p;
	size_t len;

	if (nr > 256)
		nr = 256;
	ep = ucmd_get_probe_ring(&r->er);
	if (!ep)
		return -errno;
	len = sizeof(*p) + nr * sizeof(p->ops[0]);
	p = calloc(1, len);
	if (!p) {
		ucmd_free_probe(ep);
		return -ENOMEM;
	}
	p->last_op = ep->last_op;
	p->ops_len = (uint8_t)(nr < ep->ops_len ? nr : ep->ops_len);
	/* the engine runs the client's SQEs: its answer */
	for (unsigned i = 0; i < p->ops_len; i++)
		p->ops[i] = ep->ops[i];
	ucmd_free_probe(ep);
	*payload = p;
	*payload_len = len;
	return 0;
}

static int do_register(struct srv_ring *r, const struct ucmdd_register *req, int fd_in,
		       void **payload, size_t *payload_len)
{
	struct io_uring_rsrc_register rr;
	int ret;

	switch (req->opcode) {
	case IORING_REGISTER_FILES:
		return files_register(r, req->arg, req->nr, false);
	case IORING_REGISTER_FILES2:
		ret = rsrc_register(r, req->arg, req->nr, &rr);
		if (ret)
			return ret;
		return files_register(r, rr.data, rr.nr, rr.flags & IORING_RSRC_REGISTER_SPARSE);
	case IORING_REGISTER_FILES_UPDATE:
		return files_update(r, req->arg, req->nr);
	case IORING_UNREGISTER_FILES:
		return req->arg || req->nr ? -EINVAL : ucmd_unregister_files(&r->er);
	case IORING_REGISTER_BUFFERS:
		return bufs_register(r, req->arg, req->nr, false);
	case IORING_REGISTER_BUFFERS2:
		ret = rsrc_register(r, req->arg, req->nr, &rr);
		if (ret)
			return ret;
		return bufs_register(r, rr.data, rr.nr, rr.flags & IORING_RSRC_REGISTER_SPARSE);
	case IORING_UNREGISTER_BUFFERS:
		return req->arg || req->nr ? -EINVAL : ucmd_unregister_buffers(&r->er);
	case IORING_REGISTER_PERSONALITY:
		/* the control thread acts as the client: its credentials are registered */
		return req->arg || req->nr ? -EINVAL : ucmd_register_personality(&r->er);
	case IORING_UNREGISTER_PERSONALITY:
		return req->arg ? -EINVAL : ucmd_unregister_personality(&r->er, (int)req->nr);
	case IORING_REGISTER_EVENTFD:
	case IORING_REGISTER_EVENTFD_ASYNC:
		return req->nr != 1 ? -EINVAL : eventfd_register(r, fd_in);
	case IORING_UNREGISTER_EVENTFD:
		if (r->user_efd < 0)
			return -ENXIO;
		close(r->user_efd);
		r->user_efd = -1;
		return 0;
	case IORING_REGISTER_PROBE:
		return !req->nr ? -EINVAL : probe(r, req->nr, payload, payload_len);
	case IORING_REGISTER_RING_FDS:
	case IORING_UNREGISTER_RING_FDS:
	default:
		return -EINVAL;
	}
}

int srv_ring_register_on(struct srv_ring *r, const struct ucmdd_register *req, int fd_in,
			 void **payload, size_t *payload_len)
{
	int ret;

	*payload = NULL;
	*payload_len = 0;
	pthread_mutex_lock(&r->lock);
	ret = do_register(r, req, fd_in, payload, payload_len);
	srv_ring_unlock(r);
	return ret;
}

int srv_ring_register(struct srv_client *c, const struct ucmdd_register *req, int fd_in,
		      void **payload, size_t *payload_len)
{
	struct srv_ring *r = srv_ring_get(c, req->ring_id);
	int ret;

	*payload = NULL;
	*payload_len = 0;
	if (!r)
		return -EBADF;
	pthread_mutex_lock(&r->lock);
	ret = do_register(r, req, fd_in, payload, payload_len);
	srv_ring_unlock(r);
	return ret;
}
