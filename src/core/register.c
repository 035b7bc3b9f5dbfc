/* SPDX-License-Identifier: MIT */
/*
 * io_uring_register(2)'s other operations, as liburing 2.3 calls them:
 * ring fd registration, file table updates and sparse tables, sparse buffer
 * tables, the CQ eventfd and the opcode probe. A ring of another backend
 * (ring_to_ctx(ring) == NULL) hands each call to that backend, as setup.c's
 * registration calls do.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/core.h"
#include "uaccess/uaccess.h"

int native_register_ring_fd(struct ucmd_ring *ring)
{
	if (!ring_to_ctx(ring))
		return -EINVAL;
	/* liburing: registering twice is -EEXIST */
	if (ring->int_flags & UCMD_INT_FLAG_REG_RING)
		return -EEXIST;
	/*
	 * Linux saves the fd lookup of each io_uring_enter(2); ucmd's enter
	 * has none to save, so this only records that it was asked for.
	 */
	ring->int_flags |= UCMD_INT_FLAG_REG_RING;
	return 1;
}

int native_unregister_ring_fd(struct ucmd_ring *ring)
{
	if (!ring_to_ctx(ring) || !(ring->int_flags & UCMD_INT_FLAG_REG_RING))
		return -EINVAL;
	ring->int_flags &= ~UCMD_INT_FLAG_REG_RING;
	return 1;
}

/*
 * Files replaced by an update may still be in use by requests that looked
 * them up (they borrow the table's reference): keep them until nothing is
 * in flight. Under uring_lock.
 */
static void drop_retired_files_if_idle(struct ucmd_ctx *ctx)
{
	if (!ctx->nr_retired_files || ctx->inflight || ctx->defer_head || ctx->link_head ||
	    atomic_load(&ctx->async_inflight))
		return;
	for (unsigned i = 0; i < ctx->nr_retired_files; i++)
		fput(ctx->retired_files[i]);
	free(ctx->retired_files);
	ctx->retired_files = NULL;
	ctx->nr_retired_files = 0;
}

static int retire_file(struct ucmd_ctx *ctx, struct ucmd_file *f)
{
	struct ucmd_file **n = realloc(ctx->retired_files,
				       (ctx->nr_retired_files + 1) * sizeof(*n));

	if (!n)
		return -ENOMEM;
	n[ctx->nr_retired_files++] = f;
	ctx->retired_files = n;
	return 0;
}

int native_register_files_update(struct ucmd_ring *ring, unsigned off, const int *files,
			       unsigned nr_files)
{
	struct ucmd_ctx *ctx = ring_to_ctx(ring);
	unsigned done;
	int err = 0;

	if (!ctx)
		return -EINVAL;
	if (!nr_files)
		return -EINVAL;
	mutex_lock(&ctx->uring_lock);
	if (!ctx->fixed_files) {
		mutex_unlock(&ctx->uring_lock);
		return -ENXIO;
	}
	if (off > ctx->nr_fixed_files || nr_files > ctx->nr_fixed_files - off) {
		mutex_unlock(&ctx->uring_lock);
		return -EINVAL;
	}
	drop_retired_files_if_idle(ctx);
	/* Linux's __io_sqe_files_update: stop at the first error, report what was done */
	for (done = 0; done < nr_files; done++) {
		struct ucmd_file *f = NULL;
		int fd;

		if (copy_from_user(&fd, &files[done], sizeof(fd))) {
			err = -EFAULT;
			break;
		}
		if (fd == IORING_REGISTER_FILES_SKIP)
			continue;
		if (fd != -1) {
			f = io_file_get(ctx, fd);
			if (!f) {
				err = -EBADF;
				break;
			}
		}
		struct ucmd_file *old = ctx->fixed_files[off + done];
		if (old && (err = retire_file(ctx, old))) {
			if (f)
				fput(f);
			break;
		}
		ctx->fixed_files[off + done] = f;
	}
	mutex_unlock(&ctx->uring_lock);
	return done ? (int)done : err;
}

int native_register_files_sparse(struct ucmd_ring *ring, unsigned nr)
{
	struct ucmd_ctx *ctx = ring_to_ctx(ring);
	struct ucmd_file **tab;
	int ret = 0;

	if (!ctx)
		return -EINVAL;
	if (!nr || nr > UCMD_MAX_FIXED_FILES)
		return -EINVAL;
	tab = calloc(nr, sizeof(*tab));
	if (!tab)
		return -ENOMEM;
	mutex_lock(&ctx->uring_lock);
	if (ctx->fixed_files) {
		ret = -EBUSY;
	} else {
		ctx->fixed_files = tab;
		ctx->nr_fixed_files = nr;
	}
	mutex_unlock(&ctx->uring_lock);
	if (ret)
		free(tab);
	return ret;
}

int native_register_buffers_sparse(struct ucmd_ring *ring, unsigned nr)
{
	struct ucmd_ctx *ctx = ring_to_ctx(ring);
	struct iovec *tab;
	int ret = 0;

	if (!ctx)
		return -EINVAL;
	if (!nr || nr > UCMD_MAX_FIXED_BUFS)
		return -EINVAL;
	/* empty slots: io_import_fixed refuses them with -EFAULT */
	tab = calloc(nr, sizeof(*tab));
	if (!tab)
		return -ENOMEM;
	mutex_lock(&ctx->uring_lock);
	if (ctx->bufs) {
		ret = -EBUSY;
	} else {
		ctx->bufs = tab;
		ctx->nr_bufs = nr;
	}
	mutex_unlock(&ctx->uring_lock);
	if (ret)
		free(tab);
	return ret;
}

/* fd is an eventfd(2) descriptor: 0, -EBADF (not open), -EINVAL (something else). */
static int check_eventfd(int fd)
{
	char path[64], target[64];
	ssize_t n;

	if (fd < 0 || fcntl(fd, F_GETFD) < 0)
		return -EBADF;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, target, sizeof(target) - 1);
	if (n < 0)
		return 0;	/* no /proc to ask: the write will tell */
	target[n] = '\0';
	return strcmp(target, "anon_inode:[eventfd]") ? -EINVAL : 0;
}

int native_register_eventfd(struct ucmd_ring *ring, int fd)
{
	struct ucmd_ctx *ctx = ring_to_ctx(ring);
	int ret, dup_fd;

	if (!ctx)
		return -EINVAL;
	ret = check_eventfd(fd);
	if (ret)
		return ret;
	/* our own reference, as Linux takes one on the eventfd context */
	dup_fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (dup_fd < 0)
		return -errno;
	mutex_lock(&ctx->uring_lock);
	if (ctx->evfd >= 0)
		ret = -EBUSY;
	else
		ctx->evfd = dup_fd;
	io_ring_update_simple(ctx);
	mutex_unlock(&ctx->uring_lock);
	if (ret)
		close(dup_fd);
	return ret;
}

int native_unregister_eventfd(struct ucmd_ring *ring)
{
	struct ucmd_ctx *ctx = ring_to_ctx(ring);
	int fd;

	if (!ctx)
		return -EINVAL;
	mutex_lock(&ctx->uring_lock);
	fd = ctx->evfd;
	ctx->evfd = -1;
	io_ring_update_simple(ctx);
	mutex_unlock(&ctx->uring_lock);
	if (fd < 0)
		return -ENXIO;
	close(fd);
	return 0;
}

void io_eventfd_signal(struct ucmd_ctx *ctx)
{
	uint64_t one = 1;

	if (__atomic_load_n(ctx->rings.cq_flags, __ATOMIC_RELAXED) & IORING_CQ_EVENTFD_DISABLED)
		return;
	/* a full counter (-EAGAIN) already says "CQEs are there" */
	if (write(ctx->evfd, &one, sizeof(one)) < 0)
		return;
}

void io_register_exit(struct ucmd_ctx *ctx)
{
	if (ctx->evfd >= 0)
		close(ctx->evfd);
	ctx->evfd = -1;
	for (unsigned i = 0; i < ctx->nr_retired_files; i++)
		fput(ctx->retired_files[i]);
	free(ctx->retired_files);
	ctx->retired_files = NULL;
	ctx->nr_retired_files = 0;
}

/* ---- probe ------------------------------------------------------------------ */

/* liburing's probe size: room for every opcode number a byte can hold */
#define PROBE_OPS 256

static struct io_uring_probe *probe_alloc(void)
{
	return calloc(1, sizeof(struct io_uring_probe) + PROBE_OPS * sizeof(struct io_uring_probe_op));
}

static struct io_uring_probe *native_probe(void)
{
	struct io_uring_probe *p = probe_alloc();

	if (!p)
		return NULL;
	/* Linux's io_probe: every opcode it knows, flagged when it is implemented */
	p->last_op = IORING_OP_LAST - 1;
	p->ops_len = IORING_OP_LAST;
	for (unsigned i = 0; i < IORING_OP_LAST; i++) {
		p->ops[i].op = (uint8_t)i;
		if (io_issue_defs[i].implemented)
			p->ops[i].flags = IO_URING_OP_SUPPORTED;
	}
	return p;
}

struct io_uring_probe *native_get_probe_ring(struct ucmd_ring *ring)
{
	if (!ring_to_ctx(ring)) {
		errno = EINVAL;
		return NULL;
	}
	return native_probe();
}

struct io_uring_probe *ucmd_get_probe(void)
{
	struct ucmd_engine *e = ucmd_engine_default();
	struct ucmd_ring ring;
	struct io_uring_probe *p;
	int ret;

	if (!e) {
		errno = ENOMEM;
		return NULL;
	}
	/* as liburing: a ring just to ask, on the default engine's backend */
	ret = ucmd_queue_init(2, &ring, 0);
	if (ret < 0) {
		errno = -ret;
		return NULL;
	}
	p = ucmd_get_probe_ring(&ring);
	ucmd_queue_exit(&ring);
	return p;
}

void ucmd_free_probe(struct io_uring_probe *probe)
{
	free(probe);
}

/* For a backend: a probe in ucmd's allocation, filled by the caller. */
struct io_uring_probe *io_probe_alloc(void)
{
	return probe_alloc();
}
