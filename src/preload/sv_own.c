/* SPDX-License-Identifier: MIT */
/*
 * What a static program's block namespace needs a buffer of ours for
 * (sv.h): reads and writes that are not whole blocks (Linux's buffered
 * block device serves them by read-modify-write), BLKZEROOUT's zeroes and
 * BLKDISCARD's Dataset Management range. The program's connection acts in
 * the program's memory, where no such buffer is; so these go through a
 * connection of ours, made on first need, with a bounce buffer shared with
 * the daemon and the namespace opened under a number of ours (an eventfd,
 * never one the program can hold). The bytes move between the bounce
 * buffer and the program with process_vm_readv/writev; the block
 * arithmetic is blkdev.c's, the preload's own (rw.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <linux/fs.h>
#include <linux/io_uring.h>
#include <linux/nvme_ioctl.h>

#include <ucmd/daemon.h>

#include "preload/blkdev.h"
#include "preload/sv.h"

#define SV_OWN_BUF (128u * 1024)	/* sv_geo.c's SV_CHUNK_MAX: a chunk at most */

/* Our connection, its ring and bounce buffer: 0 or -errno. */
static int own(struct sv *s)
{
	struct io_uring_params p = { 0 };
	struct ucmd_engine *e;
	int ret;

	if (s->own)
		return 0;
	ret = ucmd_engine_connect(s->sock, &e);
	if (ret)
		return ret;
	ret = ucmd_queue_init_engine(e, 4, &s->own_ring, &p);
	if (ret) {
		ucmd_engine_free(e);
		return ret;
	}
	s->own_buf = ucmd_buf_alloc(e, SV_OWN_BUF);
	if (!s->own_buf) {
		ucmd_queue_exit(&s->own_ring);
		ucmd_engine_free(e);
		return -ENOMEM;
	}
	s->own = e;
	return 0;
}

/* Device name opened on our connection under a number of ours: the number or -errno. */
static int own_open(struct sv *s, const char *name, int flags)
{
	int fd = eventfd(0, EFD_CLOEXEC), ret;

	if (fd < 0)
		return -errno;
	ret = dc_open_fixed(s->own, name, flags, fd);
	if (ret < 0) {
		close(fd);
		return ret;
	}
	return fd;
}

static void own_close(struct sv *s, int fd)
{
	ucmd_close(s->own, fd);
	close(fd);
}

/* f's number on our connection, opened read-write if the program may write (a merge reads). */
static int own_fd(struct sv *s, struct sv_fd *f)
{
	int ret = own(s);

	if (ret)
		return ret;
	if (f->own_fd < 0) {
		ret = own_open(s, f->name,
			       (f->oflags & O_ACCMODE) == O_RDONLY ? O_RDONLY : O_RDWR);
		if (ret < 0)
			return ret;
		f->own_fd = ret;
	}
	return 0;
}

int sv_own_dev_fd(struct sv *s, struct sv_fd *f)
{
	int ret = own_fd(s, f);

	return ret ? (ret == -ENOTCONN ? -EIO : ret) : f->own_fd;
}

void sv_own_close(struct sv *s, struct sv_fd *f)
{
	if (f->own_fd >= 0 && s->own)
		own_close(s, f->own_fd);
	f->own_fd = -1;
}

struct own_io {
	struct sv *s;
	int fd;			/* ours */
	pid_t pid;
	const struct iovec *iov;	/* the program's segments */
	int cnt;
};

static long own_dev(void *ctx, bool write, void *buf, uint32_t len, uint64_t off, unsigned rwf)
{
	struct own_io *io = ctx;
	struct io_uring_sqe *sqe = ucmd_get_sqe(&io->s->own_ring);
	struct io_uring_cqe *cqe;
	long res;
	int ret;

	if (!sqe)
		return -EIO;	/* one command in flight at a time: never full */
	ucmd_prep_rw(write ? IORING_OP_WRITE : IORING_OP_READ, sqe, io->fd, buf, len, off);
	sqe->rw_flags = (int)rwf;
	ret = ucmd_submit(&io->s->own_ring);
	if (ret != 1)
		return -EIO;
	do
		ret = ucmd_wait_cqe(&io->s->own_ring, &cqe);
	while (ret == -EINTR);
	if (ret)
		return -EIO;	/* the daemon gone: what a device that went away gives */
	res = cqe->res;
	ucmd_cqe_seen(&io->s->own_ring, cqe);
	return res == -ENOTCONN ? -EIO : res;
}

/* n bytes between buf and the program's segments, from byte skip of them on: 0 or -EFAULT. */
static int own_copy(void *ctx, size_t skip, void *buf, size_t n, bool to_user)
{
	struct own_io *io = ctx;
	char *p = buf;

	for (int i = 0; i < io->cnt && n; i++) {
		size_t len = io->iov[i].iov_len, take;
		uint64_t at = (uint64_t)(uintptr_t)io->iov[i].iov_base;

		if (skip >= len) {
			skip -= len;
			continue;
		}
		take = len - skip < n ? len - skip : n;
		if (to_user ? sv_mem_out(io->pid, at + skip, p, take)
			    : sv_mem_in(io->pid, p, at + skip, take))
			return -EFAULT;
		p += take;
		n -= take;
		skip = 0;
	}
	return 0;
}

int64_t sv_own_rw(struct sv *s, pid_t pid, struct sv_fd *f, const struct iovec *iov, int cnt,
		  uint64_t pos, size_t total, bool write, unsigned rwf)
{
	struct own_io io = { s, -1, pid, iov, cnt };
	struct pl_blk_io bio = { own_dev, own_copy, &io, NULL };
	int ret = own_fd(s, f);

	if (ret)
		return ret;
	if (f->geo.chunk > SV_OWN_BUF)
		return -EINVAL;	/* sv_geo.c never makes one */
	io.fd = f->own_fd;
	bio.bounce = s->own_buf;
	return pl_blk_rw(&f->geo, &bio, pos, total, write, rwf);
}

struct own_fetch {
	pid_t pid;
	uint64_t arg;
};

static int own_fetch_range(void *ctx, uint64_t r[2])
{
	struct own_fetch *w = ctx;

	return sv_mem_in(w->pid, r, w->arg, 2 * sizeof(uint64_t));
}

struct own_dsm {
	struct sv *s;
	int fd;
};

static int own_dsm_cmd(void *ctx, struct nvme_passthru_cmd64 *c)
{
	struct own_dsm *d = ctx;
	int ret = ucmd_ioctl(d->s->own, d->fd, NVME_IOCTL_IO64_CMD, c);

	return ret == -ENOTCONN ? -EIO : ret;
}

/* Deallocate on the namespace's generic node (the block node takes no passthrough). */
static int own_discard(struct sv *s, const struct sv_fd *f, uint64_t start, uint64_t len)
{
	struct own_dsm d = { s, -1 };
	unsigned x, y;
	char ng[32];
	int ret;

	if (sscanf(f->name, "nvme%un%u", &x, &y) != 2)
		return -EINVAL;
	snprintf(ng, sizeof(ng), "ng%un%u", x, y);
	d.fd = own_open(s, ng, O_RDWR);
	if (d.fd < 0)
		return d.fd == -ENOTCONN ? -EIO : d.fd;
	ret = pl_blk_discard(&f->geo, y, start, len, own_dsm_cmd, &d);
	own_close(s, d.fd);
	return ret;
}

int sv_own_range_ioctl(struct sv *s, pid_t pid, struct sv_fd *f, unsigned long cmd, uint64_t arg)
{
	struct own_fetch w = { pid, arg };
	struct own_io io = { s, -1, pid, NULL, 0 };
	struct pl_blk_io bio = { own_dev, own_copy, &io, NULL };
	uint64_t r[2];
	int ret;

	ret = pl_blk_range_ioctl(&f->geo, cmd, (f->oflags & O_ACCMODE) != O_RDONLY, f->dsm,
				 own_fetch_range, &w, r);
	if (ret)
		return ret;
	ret = own_fd(s, f);
	if (ret)
		return ret;
	if (cmd == BLKDISCARD)
		return own_discard(s, f, r[0], r[1]);
	io.fd = f->own_fd;
	bio.bounce = s->own_buf;
	return pl_blk_zeroout(&f->geo, &bio, r[0], r[1]);
}
