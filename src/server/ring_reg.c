/* SPDX-License-Identifier: MIT */
/*
 * io_uring_register(2) on a client ring (UCMDD_REGISTER): the client's
 * arguments read from its memory, translated, and registered on the
 * daemon's engine ring at the same indexes, so that an SQE's fixed file or
 * buffer index means the same slot on both.
 *
 *   files      client fd numbers -> engine fds (a client names only its own)
 *   buffers    inside a shared region: the daemon's mapping of it (zero
 *              copy); else a shadow buffer the daemon copies through
 *              (counted in shadow_bytes, at most SRV_MAX_REG_SHADOW)
 *   personality, eventfd, probe: as Linux answers them
 *   ring fds   -EINVAL: a daemon ring has no fd to register; the client's
 *              backend answers ucmd_register_ring_fd() itself
 *
 * Runs on the client's control thread, acting as the client, under the
 * ring's lock, so the proxy sees the tables change only between passes.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "server/ring.h"

#define PAGE 4096u

/*
 * The engine fds for the client's fds at cfds (-1 and, with skip, the SKIP
 * value kept), and their files' kinds. Under c->lock, so that the kind is
 * that of the file the engine registers from the same number.
 */
static int files_xlate(struct srv_client *c, const int *cfds, int *efds, uint8_t *kinds,
		       unsigned nr, bool skip, unsigned *done)
{
	for (*done = 0; *done < nr; (*done)++) {
		int cfd = cfds[*done];

		kinds[*done] = SRV_DEV_OTHER;
		if (cfd == -1 || (skip && cfd == IORING_REGISTER_FILES_SKIP)) {
			efds[*done] = cfd;
			continue;
		}
		if (cfd < 0 || (unsigned)cfd >= SRV_FD_SPACE || c->fds[cfd] < 0)
			return -EBADF;
		efds[*done] = c->fds[cfd];
		kinds[*done] = c->fd_kind[cfd];
	}
	return 0;
}

static int files_register(struct srv_ring *r, uint64_t arg, unsigned nr, bool sparse)
{
	struct srv_client *c = r->c;
	int *cfds = NULL, *efds = NULL;
	uint8_t *kinds;
	unsigned done;
	int ret;

	if (r->x.nr_ftab)
		return -EBUSY;
	if (!nr || nr > UCMD_MAX_FIXED_FILES)
		return -EINVAL;
	if (!sparse && !arg)
		return -EFAULT;
	cfds = malloc(nr * sizeof(int));
	efds = malloc(nr * sizeof(int));
	kinds = malloc(nr);
	ret = cfds && efds && kinds ? 0 : -ENOMEM;
	if (!ret && sparse)
		memset(cfds, 0xff, nr * sizeof(int));	/* -1: an empty slot */
	else if (!ret)
		ret = srv_copy_from(c, cfds, arg, nr * sizeof(int));
	if (!ret) {
		/* under the client's lock: an fd cannot be closed between lookup and reference */
		pthread_mutex_lock(&c->lock);
		ret = files_xlate(c, cfds, efds, kinds, nr, false, &done);
		if (!ret)
			ret = ucmd_register_files(&r->er, efds, nr);
		pthread_mutex_unlock(&c->lock);
	}
	if (!ret) {
		r->x.ftab = efds;
		r->x.fkind = kinds;
		r->x.nr_ftab = nr;
		efds = NULL;
		kinds = NULL;
	}
	free(cfds);
	free(efds);
	free(kinds);
	return ret;
}

static int files_update(struct srv_ring *r, uint64_t arg, unsigned nr)
{
	struct srv_client *c = r->c;
	struct io_uring_files_update up;
	int *cfds = NULL, *efds = NULL;
	uint8_t *kinds = NULL;
	unsigned done = 0;
	int ret, err;

	if (srv_copy_from(c, &up, arg, sizeof(up)))
		return -EFAULT;
	if (up.resv)
		return -EINVAL;
	if (!r->x.nr_ftab)
		return -ENXIO;
	if (!nr || up.offset >= r->x.nr_ftab || nr > r->x.nr_ftab - up.offset)
		return -EINVAL;
	cfds = malloc(nr * sizeof(int));
	efds = malloc(nr * sizeof(int));
	kinds = malloc(nr);
	ret = cfds && efds && kinds ? 0 : -ENOMEM;
	if (!ret)
		ret = srv_copy_from(c, cfds, up.fds, nr * sizeof(int));
	if (!ret) {
		pthread_mutex_lock(&c->lock);
		/* Linux updates up to a bad fd and says how many, or its error if none */
		err = files_xlate(c, cfds, efds, kinds, nr, true, &done);
		ret = done ? ucmd_register_files_update(&r->er, up.offset, efds, done) : err;
		pthread_mutex_unlock(&c->lock);
	}
	for (int i = 0; i < ret; i++) {
		if (efds[i] != IORING_REGISTER_FILES_SKIP) {
			r->x.ftab[up.offset + (unsigned)i] = efds[i];
			r->x.fkind[up.offset + (unsigned)i] = kinds[i];
		}
	}
	free(cfds);
	free(efds);
	free(kinds);
	return ret;
}

static int files_unregister(struct srv_ring *r)
{
	int ret;

	if (!r->x.nr_ftab)
		return -ENXIO;
	ret = ucmd_unregister_files(&r->er);
	if (ret)
		return ret;
	free(r->x.ftab);
	free(r->x.fkind);
	r->x.ftab = NULL;
	r->x.fkind = NULL;
	r->x.nr_ftab = 0;
	return 0;
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

static void rbuf_release(struct srv_client *c, struct srv_rbuf *b)
{
	if (b->shadow) {
		free(b->shadow);
		atomic_fetch_sub(&c->shadow_bytes, b->shadow_len);
	}
	memset(b, 0, sizeof(*b));
}

/* One client buffer: its region's mapping, or a shadow filled with its contents. */
static int rbuf_get(struct srv_client *c, struct srv_rbuf *b, const struct iovec *iov)
{
	uint64_t a = (uint64_t)(uintptr_t)iov->iov_base;
	size_t len = iov->iov_len;
	size_t span;

	/* Linux: a buffer is non-empty, at most 1 GiB, and memory */
	if (!a || !len || len > UCMD_MAX_BUF_LEN || a + len < a || a + len > UCMD_TASK_SIZE)
		return -EFAULT;
	b->caddr = a;
	b->len = len;
	b->daddr = srv_region_lookup(c, a, len);
	if (b->daddr)
		return 0;
	span = ((a & (PAGE - 1)) + len + PAGE - 1) & ~(size_t)(PAGE - 1);
	if (atomic_fetch_add(&c->shadow_bytes, span) + span > SRV_MAX_REG_SHADOW) {
		atomic_fetch_sub(&c->shadow_bytes, span);
		return -ENOMEM;
	}
	b->shadow = aligned_alloc(PAGE, span);
	if (!b->shadow) {
		atomic_fetch_sub(&c->shadow_bytes, span);
		return -ENOMEM;
	}
	b->shadow_len = span;
	/* the client's offset in its page: the alignment the driver checks is the same */
	b->daddr = (char *)b->shadow + (a & (PAGE - 1));
	memset(b->shadow, 0, span);
	/* Linux pins the pages here: memory that is not there is -EFAULT now */
	if (srv_copy_from(c, b->daddr, a, len)) {
		rbuf_release(c, b);
		return -EFAULT;
	}
	return 0;
}

static int bufs_register(struct srv_ring *r, uint64_t arg, unsigned nr, bool sparse)
{
	struct srv_client *c = r->c;
	struct iovec *civ = NULL, *div = NULL;
	struct srv_rbuf *tab;
	int ret = 0;

	if (r->x.nr_btab)
		return -EBUSY;
	if (!nr || nr > UCMD_MAX_FIXED_BUFS)
		return -EINVAL;
	tab = calloc(nr, sizeof(*tab));
	if (!tab)
		return -ENOMEM;
	if (sparse) {
		ret = ucmd_register_buffers_sparse(&r->er, nr);
		goto out;
	}
	civ = malloc(nr * sizeof(*civ));
	div = malloc(nr * sizeof(*div));
	if (!civ || !div)
		ret = -ENOMEM;
	else if (!arg || srv_copy_from(c, civ, arg, nr * sizeof(*civ)))
		ret = -EFAULT;
	for (unsigned i = 0; i < nr && !ret; i++) {
		ret = rbuf_get(c, &tab[i], &civ[i]);
		div[i].iov_base = tab[i].daddr;
		div[i].iov_len = tab[i].len;
	}
	if (!ret)
		ret = ucmd_register_buffers(&r->er, div, nr);
out:
	if (ret) {
		for (unsigned i = 0; i < nr; i++)
			rbuf_release(c, &tab[i]);
		free(tab);
	} else {
		r->x.btab = tab;
		r->x.nr_btab = nr;
	}
	free(civ);
	free(div);
	return ret;
}

static int bufs_unregister(struct srv_ring *r)
{
	int ret;

	if (!r->x.nr_btab)
		return -ENXIO;
	/* a request in flight may be reading or filling a shadow */
	srv_ring_quiesce_bufs(r);
	ret = ucmd_unregister_buffers(&r->er);
	if (ret)
		return ret;
	for (unsigned i = 0; i < r->x.nr_btab; i++)
		rbuf_release(r->c, &r->x.btab[i]);
	free(r->x.btab);
	r->x.btab = NULL;
	r->x.nr_btab = 0;
	return 0;
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
	/* what the proxy translates is what the engine runs: the engine's answer */
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
		return req->arg || req->nr ? -EINVAL : files_unregister(r);
	case IORING_REGISTER_BUFFERS:
		return bufs_register(r, req->arg, req->nr, false);
	case IORING_REGISTER_BUFFERS2:
		ret = rsrc_register(r, req->arg, req->nr, &rr);
		if (ret)
			return ret;
		return bufs_register(r, rr.data, rr.nr, rr.flags & IORING_RSRC_REGISTER_SPARSE);
	case IORING_UNREGISTER_BUFFERS:
		return req->arg || req->nr ? -EINVAL : bufs_unregister(r);
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
	pthread_mutex_unlock(&r->lock);
	return ret;
}
