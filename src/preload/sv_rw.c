/* SPDX-License-Identifier: MIT */
/*
 * The read/write family, fsync and lseek on a static program's block
 * namespace nvmeXnY (sv.h): IORING_OP_READ/WRITE/FSYNC on a small ring of
 * ours on the daemon, naming the program's fd number and its buffers (the
 * daemon acts in the program's memory). As Linux's blkdev_read_iter and
 * blkdev_write_iter: a read at or past the end of the device gives 0, one
 * across it is short; a write at or past it is ENOSPC, across it short;
 * offsets and lengths must be multiples of the logical block size (the
 * daemon's block node takes O_DIRECT's rules; the preload's read-modify-
 * write of partial blocks is not done here: EINVAL). Vectored calls go one
 * segment at a time (the iovec array read from the program's memory);
 * lseek is blkdev.c's, on the size read at open (sv_geo.c). The char
 * devices (nvmeX, ngXnY) have no read, write, llseek or fsync in Linux's
 * fops: EINVAL, ESPIPE for lseek.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <linux/fs.h>
#include <linux/io_uring.h>

#include "preload/blkdev.h"
#include "preload/sv.h"

#define SV_MAX_COUNT	0x7ffff000ull	/* MAX_RW_COUNT: Linux caps one call at this */
#define SV_UIO_MAXIOV	1024u
#define SV_RWF_OK	(RWF_HIPRI | RWF_DSYNC | RWF_SYNC | RWF_NOWAIT | RWF_APPEND | RWF_NOAPPEND)

static int io_ring(struct sv *s)
{
	struct io_uring_params p = { 0 };
	int ret;

	if (s->io_live)
		return 0;
	ret = ucmd_queue_init_engine(s->e, 4, &s->io, &p);
	if (!ret)
		s->io_live = true;
	return ret;
}

/* One command on our ring, waited for: the CQE's res. */
static int64_t op(struct sv *s, int opcode, int fd, uint64_t addr, uint32_t len, uint64_t off,
		  unsigned flags)
{
	struct io_uring_sqe *sqe;
	struct io_uring_cqe *cqe;
	int ret = io_ring(s);

	if (ret)
		return ret;
	sqe = ucmd_get_sqe(&s->io);
	if (!sqe)
		return -EBUSY;
	ucmd_prep_rw(opcode, sqe, fd, (const void *)(uintptr_t)addr, len, off);
	if (opcode == IORING_OP_FSYNC)
		sqe->fsync_flags = flags;
	else
		sqe->rw_flags = (int)flags;
	ret = ucmd_submit(&s->io);
	if (ret != 1)
		return ret < 0 ? ret : -EIO;
	ret = ucmd_wait_cqe(&s->io, &cqe);
	if (ret)
		return ret;
	ret = cqe->res;
	ucmd_cqe_seen(&s->io, cqe);
	return ret;
}

/* len bytes at the program's buf, device offset off (inside it): bytes moved or -errno. */
static int64_t seg(struct sv *s, const struct sv_fd *f, int fd, bool write, uint64_t buf,
		   uint64_t len, uint64_t off, unsigned rwf)
{
	uint64_t done = 0;

	while (done < len) {
		uint64_t n = len - done < f->geo.chunk ? len - done : f->geo.chunk;
		int64_t r = op(s, write ? IORING_OP_WRITE : IORING_OP_READ, fd, buf + done,
			       (uint32_t)n, off + done, rwf);

		if (r < 0)
			return done ? (int64_t)done : r;
		done += (uint64_t)r;
		if ((uint64_t)r < n)
			break;
	}
	return (int64_t)done;
}

/*
 * total bytes (cut to the device) at off over the program's segments
 * iov[cnt], each a whole number of blocks at an address the daemon's block
 * node takes: one segment at a time, in the program's memory.
 */
static int64_t direct(struct sv *s, const struct sv_fd *f, int fd, bool write,
		      const struct iovec *iov, int cnt, uint64_t off, size_t total, unsigned rwf)
{
	uint64_t done = 0;

	for (int i = 0; i < cnt && done < total; i++) {
		uint64_t len = iov[i].iov_len < total - done ? iov[i].iov_len : total - done;
		int64_t r = seg(s, f, fd, write, (uint64_t)(uintptr_t)iov[i].iov_base, len,
				off + done, rwf);

		if (r < 0)
			return done ? (int64_t)done : r;
		done += (uint64_t)r;
		if ((uint64_t)r < len)
			break;
	}
	return (int64_t)done;
}

/*
 * The whole of a read/write-family call on f, as the preload's dev_rw
 * (rw.c): segments iov[cnt] (ours), at off. Whole blocks at dword-aligned
 * addresses go straight between the program's memory and the device;
 * anything else is EINVAL with O_DIRECT, as Linux's direct I/O, and
 * otherwise goes through our bounce buffer (sv_own.c), as Linux's buffered
 * block device serves it.
 */
static int64_t rw(struct sv *s, const struct seccomp_notif *req, struct sv_fd *f, int fd,
		  bool write, const struct iovec *iov, int cnt, uint64_t off, unsigned rwf)
{
	size_t total = 0;

	for (int i = 0; i < cnt; i++) {
		/* rw_verify_area of the whole: a negative total is EINVAL before anything moves */
		if (iov[i].iov_len > (size_t)INT64_MAX - total)
			return -EINVAL;
		total += iov[i].iov_len;
	}
	if (total > SV_MAX_COUNT)
		total = SV_MAX_COUNT;
	if ((int64_t)(off + total) < 0)
		return -EINVAL;
	if (!total)
		return 0;
	if (off >= f->geo.size)
		return write ? -ENOSPC : 0;
	if (total > f->geo.size - off)
		total = (size_t)(f->geo.size - off);
	if (write && (f->oflags & O_DSYNC))
		rwf |= RWF_DSYNC;
	if (!pl_blk_dio_check(&f->geo, off, iov, cnt, total))
		return direct(s, f, fd, write, iov, cnt, off, total, rwf);
	if (f->oflags & O_DIRECT)
		return -EINVAL;
	/* blkdev_write_iter: no buffered NOWAIT writes */
	if (write && (rwf & RWF_NOWAIT))
		return -EOPNOTSUPP;
	return sv_own_rw(s, (pid_t)req->pid, f, iov, cnt, off, total, write,
			 write && (rwf & (RWF_DSYNC | RWF_SYNC)) ? RWF_DSYNC : 0);
}

int64_t sv_blk_call(struct sv *s, const struct seccomp_notif *req, struct sv_fd *f)
{
	const __u64 *g = req->data.args;
	int fd = (int)(uint32_t)g[0], nr = req->data.nr;
	bool write = nr == __NR_write || nr == __NR_pwrite64 || nr == __NR_writev ||
		     nr == __NR_pwritev || nr == __NR_pwritev2;
	uint64_t off = f->desc->pos;
	unsigned rwf = 0;
	bool at_pos = true;
	struct iovec one, *iov;
	int64_t ret;

	if (nr != __NR_lseek && nr != __NR_fsync && nr != __NR_fdatasync) {
		int acc = f->oflags & O_ACCMODE;

		/* vfs_read/vfs_write: the open's mode first, then whether the file has the call */
		if (write ? acc == O_RDONLY : acc == O_WRONLY)
			return -EBADF;
	}
	if (!f->blk)
		return nr == __NR_lseek ? -ESPIPE : -EINVAL;
	switch (nr) {
	case __NR_lseek:
		ret = pl_blk_llseek(f->geo.size, (int64_t)f->desc->pos, (int64_t)g[1], (int)g[2]);
		if (ret >= 0)
			f->desc->pos = (uint64_t)ret;
		return ret;
	case __NR_fsync:
	case __NR_fdatasync:
		/* blkdev_fsync: an NVMe Flush, waited for */
		return op(s, IORING_OP_FSYNC, fd, 0, 0, 0,
			  nr == __NR_fdatasync ? IORING_FSYNC_DATASYNC : 0);
	case __NR_pread64:
	case __NR_pwrite64:
	case __NR_preadv:
	case __NR_pwritev:
		off = g[3];
		at_pos = false;
		break;
	case __NR_preadv2:
	case __NR_pwritev2:
		rwf = (unsigned)g[5];
		if (rwf & ~(unsigned)SV_RWF_OK)
			return -EOPNOTSUPP;
		/* offset -1: the file position, moved (as readv/writev) */
		if ((int64_t)g[3] != -1) {
			off = g[3];
			at_pos = false;
		}
		break;
	default:
		break;
	}
	if ((int64_t)off < 0)
		return -EINVAL;
	switch (nr) {
	case __NR_read:
	case __NR_write:
	case __NR_pread64:
	case __NR_pwrite64:
		one = (struct iovec){ (void *)(uintptr_t)g[1], (size_t)g[2] };
		ret = rw(s, req, f, fd, write, &one, 1, off, 0);
		break;
	default:
		/* the program's array, read once: what the kernel's import_iovec copies */
		if (g[2] > SV_UIO_MAXIOV)
			return -EINVAL;
		iov = malloc(((size_t)g[2] ? (size_t)g[2] : 1) * sizeof(*iov));
		if (!iov)
			return -ENOMEM;
		ret = sv_mem_in((pid_t)req->pid, iov, g[1], (size_t)g[2] * sizeof(*iov));
		if (!ret)
			ret = rw(s, req, f, fd, write, iov, (int)g[2], off, rwf);
		free(iov);
		break;
	}
	if (ret > 0 && at_pos)
		f->desc->pos = off + (uint64_t)ret;
	return ret;
}
