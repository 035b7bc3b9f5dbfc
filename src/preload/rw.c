/* SPDX-License-Identifier: MIT */
/*
 * The read/write family, lseek, fsync, fallocate and the BLK* ioctls on
 * ucmd's device fds (preload.h). Design note:
 *
 * What real clients do (strace of Debian 12's fio 3.33, dd and mkfs.ext4
 * on a loop device): fio opens the device and asks BLKGETSIZE64, then per
 * job BLKFLSBUF and posix_fadvise(RANDOM); psync is pread64/pwrite64, sync
 * is lseek(SEEK_SET) + read/write, io_uring goes through its own ring
 * (uring.c); with fsync=/end_fsync= it calls fsync/fdatasync. dd uses
 * lseek(SEEK_CUR) to seek=, then read/write, fsync for conv=fsync.
 * mkfs.ext4: BLKGETSIZE64, BLKSSZGET, BLKPBSZGET, BLKGETZONESZ,
 * BLKDISCARDZEROES, BLKROGET, BLKDISCARD, fallocate(FALLOC_FL_ZERO_RANGE),
 * pread64/pwrite64, fsync; floppy and CD-ROM ioctls it expects to fail.
 * posix_fadvise is not interposed: the placeholder (a directory) gives
 * the answer a block or char device gives (0, or EINVAL for bad advice).
 *
 * Where the bytes go: IORING_OP_READ/WRITE(V) and FSYNC on a small ring of
 * the daemon's, one per thread, naming the program's own fd number (the
 * daemon holds the device there, UCMDD_OPEN_FIXED). Not NVMe passthrough:
 * the engine's block node (src/nvme/host/block.c) has no ioctl method, as
 * Linux's block device takes Read/Write through the block layer; its
 * read_iter/write_iter/fsync are exactly the block device, count the disk
 * statistics fio reports, and need no second fd. A ring per thread keeps
 * threads apart without a lock (a thread waits only for its own CQE); a
 * forked child, which must not use its parent's connection, makes its own
 * (the parent's ring is left alone, its memory leaks in the child).
 *
 * Block device semantics, as Linux's blkdev_read_iter/write_iter:
 * - offsets are bytes; a read at or past the end gives 0, one across it is
 *   short; a write at or past the end is ENOSPC, across it short.
 * - O_DIRECT: position and every segment's length are multiples of the
 *   logical block size, every segment's address of 4 (NVMe's dword DMA
 *   alignment, Linux >= 6.0), else EINVAL.
 * - without O_DIRECT any offset and length work: the LBAs at unaligned
 *   edges are read, patched and written back (blkdev.c's pl_blk_rw, which
 *   ucmd-supervise runs too for a static program). There is no page cache:
 *   writes reach the device before the call returns, reads always come
 *   from it. Two threads writing different bytes of one LBA at once can
 *   lose one update (the read-modify-write is not atomic), which Linux's
 *   page cache would not.
 * - either way the bytes go through a bounce buffer shared with the daemon
 *   (ucmd_buf_alloc), copied here with the fault-safe copy_{to,from}_user
 *   (a bad address is EFAULT; uaccess's SIGSEGV/SIGBUS handler goes in on
 *   the first copy, and a program that replaces it afterwards gets its
 *   own fault instead of EFAULT): a local copy costs less than the daemon's
 *   process_vm copy of the program's pages (fio psync 4 KiB randread,
 *   O_DIRECT, one job, here: about 100 K/s, against 60 K/s when the
 *   daemon was handed the program's memory as it is).
 * - I/O larger than the controller's MDTS (or 128 KiB) is split.
 * - the file offset of read/write/readv/writev (and preadv2 with -1) is
 *   the placeholder's, kept by the kernel and shared by dups and forks:
 *   read with lseek(SEEK_CUR), advanced with lseek(SEEK_SET). Two threads
 *   doing read() on one fd at once may read the same bytes (the kernel
 *   serializes f_pos; this does not), as in other user-space emulations.
 * - lseek is checked against the device size (EINVAL past it, as
 *   fixed_size_llseek), SEEK_END is the device's end, SEEK_DATA/HOLE see
 *   one extent.
 *
 * Controller (nvmeX) and generic (ngXnY) char devices have no read, write,
 * llseek or fsync in Linux's nvme_dev_fops / nvme_ns_chr_fops: read and
 * write are EINVAL (EBADF if not opened for it), lseek ESPIPE, fsync
 * EINVAL, fallocate ENODEV.
 *
 * Discard (BLKDISCARD, fallocate PUNCH_HOLE|KEEP_SIZE|NO_HIDE_STALE) is
 * NVMe Dataset Management through the namespace's generic node, opened by
 * the daemon at a private number (the block node takes no passthrough);
 * EOPNOTSUPP when ONCS has no DSM, as Linux. BLKZEROOUT and
 * FALLOC_FL_ZERO_RANGE write zeroes (Linux's fallback too). sendfile,
 * splice, copy_file_range and mmap are nodata.c's, libaio's calls aio.c's.
 * x86-64 only (64-bit off_t, so foo64 and foo are one function).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <endian.h>
#include <sys/ioctl.h>
#include <sys/uio.h>
#include <unistd.h>

#include <linux/blkzoned.h>
#include <linux/falloc.h>
#include <linux/fs.h>

#include "client/client.h"
#include "preload.h"
#include "preload/blkdev.h"
#include "uaccess/uaccess.h"

_Static_assert(sizeof(off_t) == 8, "rw.c: 64-bit off_t only");

#define RW_CHUNK_MAX	(128u * 1024)	/* bytes per command at most */
#define RW_MAX_COUNT	0x7ffff000L	/* MAX_RW_COUNT: Linux caps one call at this */
#define RW_RWF_OK	(RWF_HIPRI | RWF_DSYNC | RWF_SYNC | RWF_NOWAIT | RWF_APPEND | RWF_NOAPPEND)

/* ---- the next definitions, resolved once -------------------------------- */

static void *next_cached(void **slot, const char *sym)
{
	void *p = __atomic_load_n(slot, __ATOMIC_ACQUIRE);

	if (!p) {
		p = pl_next(sym);
		__atomic_store_n(slot, p, __ATOMIC_RELEASE);
	}
	return p;
}

#define NEXT(type, sym) ({ static void *slot_; (type)next_cached(&slot_, sym); })

typedef ssize_t (*read_fn)(int, void *, size_t);
typedef ssize_t (*write_fn)(int, const void *, size_t);
typedef ssize_t (*pread_fn)(int, void *, size_t, off_t);
typedef ssize_t (*pwrite_fn)(int, const void *, size_t, off_t);
typedef ssize_t (*readv_fn)(int, const struct iovec *, int);
typedef ssize_t (*preadv_fn)(int, const struct iovec *, int, off_t);
typedef ssize_t (*preadv2_fn)(int, const struct iovec *, int, off_t, int);
typedef off_t (*lseek_fn)(int, off_t, int);
typedef int (*fsync_fn)(int);
typedef int (*fallocate_fn)(int, int, off_t, off_t);
typedef int (*pfallocate_fn)(int, off_t, off_t);
typedef int (*ftruncate_fn)(int, off_t);
typedef int (*sfr_fn)(int, off_t, off_t, unsigned int);
typedef ssize_t (*read_chk_fn)(int, void *, size_t, size_t);
typedef ssize_t (*pread_chk_fn)(int, void *, size_t, off_t, size_t);

static off_t next_lseek(int fd, off_t off, int whence)
{
	return NEXT(lseek_fn, "lseek")(fd, off, whence);
}

static long fail(int err)
{
	errno = err;
	return -1;
}

/* ---- geometry ---------------------------------------------------------------- */

/* What rw.c needs of controller X's Identify: max transfer (MDTS) and ONCS. */
struct rw_ctrl {
	uint32_t max_bytes;	/* 0: not asked yet */
	uint16_t oncs;
};

#define RW_MAX_CTRL	64
#define RW_ONCS_DSM	(1u << 2)
static struct rw_ctrl rw_ctrls[RW_MAX_CTRL];
static pthread_mutex_t rw_ctrls_lock = PTHREAD_MUTEX_INITIALIZER;

/*
 * Namespace d's controller's MDTS and ONCS: asked of controller X (d's
 * instance), or, X's function removed while the namespace stays (a
 * multipath head over the controllers left, ctlfiles.c), of the namespace's
 * device, which the daemon's head serves through a path left. The
 * caller's errno is kept: the lookup is no part of its call.
 */
static struct rw_ctrl ctrl_caps(const struct pl_devinfo *d)
{
	unsigned instance = d->instance;
	int saved = errno;
	struct nvme_passthru_cmd64 cmd = { .opcode = 0x06, .cdw10 = 1, .data_len = 4096 };
	struct rw_ctrl v = { .max_bytes = RW_CHUNK_MAX };
	const struct pl_devinfo *c;
	char name[32];
	uint8_t *id;

	if (instance >= RW_MAX_CTRL)
		return v;
	pthread_mutex_lock(&rw_ctrls_lock);
	v = rw_ctrls[instance];
	pthread_mutex_unlock(&rw_ctrls_lock);
	if (v.max_bytes)
		return v;
	v.max_bytes = RW_CHUNK_MAX;
	snprintf(name, sizeof(name), "nvme%u", instance);
	c = pl_ctl_removed(instance) ? d : pl_devinfo(name);
	id = aligned_alloc(4096, 4096);
	if (c && id) {
		cmd.addr = (uint64_t)(uintptr_t)id;
		if (pl_admin(c, &cmd) == 0) {
			v.max_bytes = pl_mdts_bytes(id, v.max_bytes);
			v.oncs = (uint16_t)(id[520] | id[521] << 8);
		}
	}
	free(id);
	pthread_mutex_lock(&rw_ctrls_lock);
	rw_ctrls[instance] = v;
	pthread_mutex_unlock(&rw_ctrls_lock);
	errno = saved;
	return v;
}

static void rw_geo(const struct pl_devinfo *d, struct pl_blk_geo *g)
{
	pl_blk_geo_of(d, ctrl_caps(d).max_bytes, g);
}

/* ---- the thread's ring on the daemon ----------------------------------------- */

struct rw_ctx {
	unsigned gen;		/* rw_gen when made: another one after fork */
	struct ucmd_engine *e;
	struct ucmd_ring ring;
	void *bounce;		/* ucmd_buf_alloc'ed, shared with the daemon */
	size_t bounce_len;
};

static __thread struct rw_ctx *rw_tls;
static unsigned rw_gen;
static pthread_key_t rw_key;
static pthread_once_t rw_once = PTHREAD_ONCE_INIT;

static void rw_ctx_free(void *p)
{
	struct rw_ctx *c = p;

	/* A context from before a fork belongs to the parent's connection. */
	if (c->gen != __atomic_load_n(&rw_gen, __ATOMIC_RELAXED))
		return;
	if (c->bounce)
		ucmd_buf_free(c->e, c->bounce);
	ucmd_queue_exit(&c->ring);
	free(c);
}

static void rw_atfork_child(void)
{
	__atomic_add_fetch(&rw_gen, 1, __ATOMIC_RELAXED);
}

static void rw_init(void)
{
	pthread_key_create(&rw_key, rw_ctx_free);
	pthread_atfork(NULL, NULL, rw_atfork_child);
}

/* The thread's context with a bounce buffer of at least need bytes; NULL and *err. */
static struct rw_ctx *rw_ctx_get(size_t need, int *err)
{
	struct rw_ctx *c = rw_tls;
	struct io_uring_params p = { 0 };
	struct ucmd_engine *e;
	int ret;

	if (!c || c->gen != __atomic_load_n(&rw_gen, __ATOMIC_RELAXED)) {
		pthread_once(&rw_once, rw_init);
		e = pl_engine();
		if (!e) {
			*err = EIO;
			return NULL;
		}
		c = calloc(1, sizeof(*c));
		if (!c) {
			*err = ENOMEM;
			return NULL;
		}
		c->gen = __atomic_load_n(&rw_gen, __ATOMIC_RELAXED);
		c->e = e;
		ret = ucmd_queue_init_engine(e, 4, &c->ring, &p);
		if (ret < 0) {
			free(c);
			*err = ret == -ENOMEM ? ENOMEM : EIO;
			return NULL;
		}
		rw_tls = c;
		pthread_setspecific(rw_key, c);
	}
	if (need > c->bounce_len) {
		size_t len = need > RW_CHUNK_MAX ? need : RW_CHUNK_MAX;
		void *b = ucmd_buf_alloc(c->e, len);

		if (!b) {
			*err = errno == ENOMEM ? ENOMEM : EIO;
			return NULL;
		}
		if (c->bounce)
			ucmd_buf_free(c->e, c->bounce);
		c->bounce = b;
		c->bounce_len = len;
	}
	return c;
}

/* One command on the thread's ring, waited for: the CQE's res. */
static long rw_cmd(struct rw_ctx *c, int op, int fd, const void *addr, unsigned len,
		   uint64_t off, unsigned rwf)
{
	struct io_uring_sqe *sqe = ucmd_get_sqe(&c->ring);
	struct io_uring_cqe *cqe;
	long res;
	int ret;

	/* one command in flight at a time: the SQ is never full */
	if (!sqe)
		return -EIO;
	ucmd_prep_rw(op, sqe, fd, addr, len, off);
	if (op == IORING_OP_FSYNC)
		sqe->fsync_flags = rwf;
	else
		sqe->rw_flags = (int)rwf;
	sqe->user_data = 1;
	ret = ucmd_submit(&c->ring);
	if (ret < 0)
		return -EIO;
	do
		ret = ucmd_wait_cqe(&c->ring, &cqe);
	while (ret == -EINTR);
	/* the daemon gone: what a device that went away gives */
	if (ret < 0)
		return -EIO;
	res = cqe->res;
	ucmd_cqe_seen(&c->ring, cqe);
	return res == -ENOTCONN ? -EIO : res;
}

/* ---- the data side of blkdev.c's block I/O ------------------------------------ */

struct rw_io {
	struct rw_ctx *c;
	int fd;
	const struct iovec *iov;	/* our copy of the user's array */
	int cnt;
};

static long rw_io_dev(void *ctx, bool write, void *buf, uint32_t len, uint64_t off, unsigned rwf)
{
	struct rw_io *io = ctx;

	return rw_cmd(io->c, write ? IORING_OP_WRITE : IORING_OP_READ, io->fd, buf, len, off, rwf);
}

/* n bytes between buf and the user's segments, from byte skip of them on: 0 or -EFAULT. */
static int rw_io_copy(void *ctx, size_t skip, void *buf, size_t n, bool to_user)
{
	struct rw_io *io = ctx;
	char *p = buf;

	for (int i = 0; i < io->cnt && n; i++) {
		size_t len = io->iov[i].iov_len, take;

		if (skip >= len) {
			skip -= len;
			continue;
		}
		take = len - skip < n ? len - skip : n;
		if (to_user ? copy_to_user((char *)io->iov[i].iov_base + skip, p, take)
			    : copy_from_user(p, (char *)io->iov[i].iov_base + skip, take))
			return -EFAULT;
		p += take;
		n -= take;
		skip = 0;
	}
	return 0;
}

static bool acc_ok(const struct pl_file *f, bool write)
{
	int acc = f->oflags & O_ACCMODE;

	if (f->oflags & O_PATH)
		return false;
	return write ? acc == O_WRONLY || acc == O_RDWR : acc == O_RDONLY || acc == O_RDWR;
}

/*
 * The whole of a read/write-family call on a device fd. uiov is the user's
 * array (copied here, EFAULT if it cannot be), or one we built. use_pos:
 * the file offset is used and advanced (off ignored). flags: RWF_*.
 */
static ssize_t dev_rw(struct pl_file *f, int fd, const struct iovec *uiov, int cnt, bool user_iov,
		      off_t off, bool use_pos, bool write, int flags)
{
	struct iovec small[8], *iov = small;
	struct pl_blk_geo g;
	struct rw_io io = { .fd = fd };
	struct pl_blk_io bio = { rw_io_dev, rw_io_copy, &io, NULL };
	size_t total = 0;
	unsigned rwf = 0;
	ssize_t ret;
	int err;

	if (!acc_ok(f, write))
		return fail(EBADF);
	/* nvme_dev_fops / nvme_ns_chr_fops: neither read nor write */
	if (f->dev->kind != PL_DEV_NS_BLK)
		return fail(EINVAL);
	if (pl_dev_gone(f->dev))
		return fail(EIO);	/* a bio to a dead disk: bio_io_error */
	if (flags & ~RW_RWF_OK)
		return fail(EOPNOTSUPP);
	if (cnt < 0 || cnt > IOV_MAX)
		return fail(EINVAL);
	if (user_iov && cnt > (int)(sizeof(small) / sizeof(small[0]))) {
		iov = malloc(sizeof(*iov) * (size_t)cnt);
		if (!iov)
			return fail(ENOMEM);
	}
	if (user_iov) {
		if (copy_from_user(iov, uiov, sizeof(*iov) * (size_t)cnt)) {
			ret = fail(EFAULT);
			goto out;
		}
	} else {
		iov = (struct iovec *)uiov;
	}
	for (int i = 0; i < cnt; i++) {
		if (iov[i].iov_len > (size_t)SSIZE_MAX - total) {
			ret = fail(EINVAL);
			goto out;
		}
		total += iov[i].iov_len;
	}
	if (total > (size_t)RW_MAX_COUNT)
		total = RW_MAX_COUNT;
	if (use_pos) {
		off = next_lseek(fd, 0, SEEK_CUR);
		if (off < 0) {
			ret = -1;
			goto out;
		}
	}
	if (off < 0 || (off_t)((uint64_t)off + total) < 0) {
		ret = fail(EINVAL);
		goto out;
	}
	ret = 0;
	if (!total)
		goto out;
	rw_geo(f->dev, &g);
	if ((uint64_t)off >= g.size) {
		ret = write ? fail(ENOSPC) : 0;
		goto out;
	}
	if (total > g.size - (uint64_t)off)
		total = (size_t)(g.size - (uint64_t)off);
	if (f->oflags & O_DIRECT) {
		if (pl_blk_dio_check(&g, (uint64_t)off, iov, cnt, total)) {
			ret = fail(EINVAL);
			goto out;
		}
	} else if (write && (flags & RWF_NOWAIT)) {
		/* blkdev_write_iter: no buffered NOWAIT writes */
		ret = fail(EOPNOTSUPP);
		goto out;
	}
	if (write && ((flags & (RWF_DSYNC | RWF_SYNC)) || (f->oflags & O_DSYNC)))
		rwf = RWF_DSYNC;
	io.iov = iov;
	io.cnt = cnt;
	io.c = rw_ctx_get(g.chunk, &err);
	if (!io.c) {
		ret = fail(err);
		goto out;
	}
	bio.bounce = io.c->bounce;
	ret = pl_blk_rw(&g, &bio, (uint64_t)off, total, write, rwf);
	if (ret < 0) {
		ret = fail((int)-ret);
		goto out;
	}
	if (use_pos && ret > 0)
		next_lseek(fd, off + ret, SEEK_SET);
out:
	if (iov != small && user_iov)
		free(iov);
	return ret;
}

static ssize_t dev_rw1(struct pl_file *f, int fd, const void *buf, size_t n, off_t off,
		       bool use_pos, bool write)
{
	struct iovec one = { .iov_base = (void *)buf, .iov_len = n };

	return dev_rw(f, fd, &one, 1, false, off, use_pos, write, 0);
}

ssize_t pl_dev_rw(struct pl_file *f, int fd, const struct iovec *iov, int cnt, bool user_iov,
		  off_t off, bool use_pos, bool write, int rwf)
{
	ssize_t ret = dev_rw(f, fd, iov, cnt, user_iov, off, use_pos, write, rwf);

	return ret < 0 ? -errno : ret;
}

/* ---- interposers: read/write family ----------------------------------------- */

/*
 * In an interposer, for a number not ours: the kernel's answer, unless it
 * is the error a placeholder gives and the number turns out to be a
 * device copied without libc (pl_fd_adopt, fdmap.c): then f is its file
 * and the interposer goes on to serve the call.
 */
#define UNKNOWN_FD(f, fd, call)							\
	do {									\
		__typeof__(call) r_ = (call);					\
										\
		if (r_ >= 0 || !((f) = pl_fd_adopt((fd), errno)))		\
			return r_;						\
	} while (0)

/*
 * As UNKNOWN_FD, for a write: the kernel's EBADF on a tree attribute
 * opened for writing (attrw.c, read-only underneath) is the store's answer.
 */
#define UNKNOWN_WFD(f, fd, call, iov, cnt)						\
	do {									\
		ssize_t r_ = (call), a_;					\
										\
		if (r_ < 0 && errno == EBADF && pl_attrw((fd), (iov), (cnt), &a_))	\
			return a_;						\
		if (r_ >= 0 || !((f) = pl_fd_adopt((fd), errno)))		\
			return r_;						\
	} while (0)

PL_EXPORT ssize_t rw_read(int fd, void *buf, size_t n) __asm__("read");
PL_EXPORT ssize_t rw_read(int fd, void *buf, size_t n)
{
	struct pl_file *f = pl_fd(fd);

	ssize_t r;

	if (!f) {
		if (pl_res0_read(fd, buf, n, 0, true, &r))
			return r < 0 ? fail((int)-r) : r;
		UNKNOWN_FD(f, fd, NEXT(read_fn, "read")(fd, buf, n));
	}
	return dev_rw1(f, fd, buf, n, 0, true, false);
}

PL_EXPORT ssize_t rw_write(int fd, const void *buf, size_t n) __asm__("write");
PL_EXPORT ssize_t rw_write(int fd, const void *buf, size_t n)
{
	struct pl_file *f = pl_fd(fd);

	if (!f) {
		struct iovec v = { (void *)buf, n };

		UNKNOWN_WFD(f, fd, NEXT(write_fn, "write")(fd, buf, n), &v, 1);
	}
	return dev_rw1(f, fd, buf, n, 0, true, true);
}

PL_EXPORT ssize_t rw_pread(int fd, void *buf, size_t n, off_t off) __asm__("pread");
PL_EXPORT ssize_t rw_pread(int fd, void *buf, size_t n, off_t off)
{
	struct pl_file *f = pl_fd(fd);

	ssize_t r;

	if (!f) {
		if (pl_res0_read(fd, buf, n, off, false, &r))
			return r < 0 ? fail((int)-r) : r;
		UNKNOWN_FD(f, fd, NEXT(pread_fn, "pread")(fd, buf, n, off));
	}
	return dev_rw1(f, fd, buf, n, off, false, false);
}

PL_EXPORT ssize_t rw_pread64(int fd, void *buf, size_t n, off_t off) __asm__("pread64");
PL_EXPORT ssize_t rw_pread64(int fd, void *buf, size_t n, off_t off)
{
	struct pl_file *f = pl_fd(fd);

	ssize_t r;

	if (!f) {
		if (pl_res0_read(fd, buf, n, off, false, &r))
			return r < 0 ? fail((int)-r) : r;
		UNKNOWN_FD(f, fd, NEXT(pread_fn, "pread64")(fd, buf, n, off));
	}
	return dev_rw1(f, fd, buf, n, off, false, false);
}

PL_EXPORT ssize_t rw_pwrite(int fd, const void *buf, size_t n, off_t off) __asm__("pwrite");
PL_EXPORT ssize_t rw_pwrite(int fd, const void *buf, size_t n, off_t off)
{
	struct pl_file *f = pl_fd(fd);

	if (!f) {
		struct iovec v = { (void *)buf, n };

		UNKNOWN_WFD(f, fd, NEXT(pwrite_fn, "pwrite")(fd, buf, n, off), &v, 1);
	}
	return dev_rw1(f, fd, buf, n, off, false, true);
}

PL_EXPORT ssize_t rw_pwrite64(int fd, const void *buf, size_t n, off_t off) __asm__("pwrite64");
PL_EXPORT ssize_t rw_pwrite64(int fd, const void *buf, size_t n, off_t off)
{
	struct pl_file *f = pl_fd(fd);

	if (!f) {
		struct iovec v = { (void *)buf, n };

		UNKNOWN_WFD(f, fd, NEXT(pwrite_fn, "pwrite64")(fd, buf, n, off), &v, 1);
	}
	return dev_rw1(f, fd, buf, n, off, false, true);
}

PL_EXPORT ssize_t rw_readv(int fd, const struct iovec *iov, int cnt) __asm__("readv");
PL_EXPORT ssize_t rw_readv(int fd, const struct iovec *iov, int cnt)
{
	struct pl_file *f = pl_fd(fd);

	if (!f)
		UNKNOWN_FD(f, fd, NEXT(readv_fn, "readv")(fd, iov, cnt));
	return dev_rw(f, fd, iov, cnt, true, 0, true, false, 0);
}

PL_EXPORT ssize_t rw_writev(int fd, const struct iovec *iov, int cnt) __asm__("writev");
PL_EXPORT ssize_t rw_writev(int fd, const struct iovec *iov, int cnt)
{
	struct pl_file *f = pl_fd(fd);

	if (!f)
		UNKNOWN_WFD(f, fd, NEXT(readv_fn, "writev")(fd, iov, cnt), iov, cnt);
	return dev_rw(f, fd, iov, cnt, true, 0, true, true, 0);
}

#define RW_PV(cname, sym, write)							\
PL_EXPORT ssize_t cname(int fd, const struct iovec *iov, int cnt, off_t off) __asm__(sym);	\
PL_EXPORT ssize_t cname(int fd, const struct iovec *iov, int cnt, off_t off)		\
{											\
	struct pl_file *f = pl_fd(fd);							\
											\
	if (!f && (write))								\
		UNKNOWN_WFD(f, fd, NEXT(preadv_fn, sym)(fd, iov, cnt, off), iov, cnt);	\
	else if (!f)									\
		UNKNOWN_FD(f, fd, NEXT(preadv_fn, sym)(fd, iov, cnt, off));		\
	return dev_rw(f, fd, iov, cnt, true, off, false, write, 0);			\
}

RW_PV(rw_preadv, "preadv", false)
RW_PV(rw_preadv64, "preadv64", false)
RW_PV(rw_pwritev, "pwritev", true)
RW_PV(rw_pwritev64, "pwritev64", true)

/* preadv2/pwritev2: offset -1 is the file offset, as readv/writev. */
#define RW_PV2(cname, sym, write)								\
PL_EXPORT ssize_t cname(int fd, const struct iovec *iov, int cnt, off_t off, int fl) __asm__(sym); \
PL_EXPORT ssize_t cname(int fd, const struct iovec *iov, int cnt, off_t off, int fl)	\
{												\
	struct pl_file *f = pl_fd(fd);								\
												\
	if (!f && (write))									\
		UNKNOWN_WFD(f, fd, NEXT(preadv2_fn, sym)(fd, iov, cnt, off, fl), iov, cnt);	\
	else if (!f)										\
		UNKNOWN_FD(f, fd, NEXT(preadv2_fn, sym)(fd, iov, cnt, off, fl));		\
	return dev_rw(f, fd, iov, cnt, true, off, off == -1, write, fl);			\
}

RW_PV2(rw_preadv2, "preadv2", false)
RW_PV2(rw_preadv64v2, "preadv64v2", false)
RW_PV2(rw_pwritev2, "pwritev2", true)
RW_PV2(rw_pwritev64v2, "pwritev64v2", true)

/* _FORTIFY_SOURCE's entry points: the buffer check, then as read/pread. */
static void chk_fail(void)
{
	NEXT(void (*)(void), "__chk_fail")();
	abort();
}

PL_EXPORT ssize_t rw_read_chk(int fd, void *buf, size_t n, size_t buflen) __asm__("__read_chk");
PL_EXPORT ssize_t rw_read_chk(int fd, void *buf, size_t n, size_t buflen)
{
	struct pl_file *f = pl_fd(fd);

	if (!f)
		UNKNOWN_FD(f, fd, NEXT(read_chk_fn, "__read_chk")(fd, buf, n, buflen));
	if (n > buflen)
		chk_fail();
	return dev_rw1(f, fd, buf, n, 0, true, false);
}

#define RW_PCHK(cname, sym)								\
PL_EXPORT ssize_t cname(int fd, void *buf, size_t n, off_t off, size_t buflen) __asm__(sym); \
PL_EXPORT ssize_t cname(int fd, void *buf, size_t n, off_t off, size_t buflen)		\
{											\
	struct pl_file *f = pl_fd(fd);							\
											\
	if (!f)										\
		UNKNOWN_FD(f, fd, NEXT(pread_chk_fn, sym)(fd, buf, n, off, buflen));	\
	if (n > buflen)									\
		chk_fail();								\
	return dev_rw1(f, fd, buf, n, off, false, false);				\
}

RW_PCHK(rw_pread_chk, "__pread_chk")
RW_PCHK(rw_pread64_chk, "__pread64_chk")

/* ---- lseek ---------------------------------------------------------------------- */

static off_t dev_lseek(struct pl_file *f, int fd, off_t off, int whence)
{
	struct pl_blk_geo g;
	off_t cur, pos;

	if (f->dev->kind != PL_DEV_NS_BLK)
		return fail(ESPIPE);	/* no llseek in nvme_dev_fops / nvme_ns_chr_fops */
	rw_geo(f->dev, &g);
	cur = 0;
	if (whence == SEEK_CUR) {
		cur = next_lseek(fd, 0, SEEK_CUR);
		if (cur < 0 || off == 0)
			return cur;
	}
	pos = pl_blk_llseek(g.size, cur, off, whence);
	if (pos < 0)
		return fail((int)-pos);
	return next_lseek(fd, pos, SEEK_SET);
}

PL_EXPORT off_t rw_lseek(int fd, off_t off, int whence) __asm__("lseek");
PL_EXPORT off_t rw_lseek(int fd, off_t off, int whence)
{
	struct pl_file *f = pl_fd(fd);

	if (!f)
		UNKNOWN_FD(f, fd, next_lseek(fd, off, whence));
	return dev_lseek(f, fd, off, whence);
}

PL_EXPORT off_t rw_lseek64(int fd, off_t off, int whence) __asm__("lseek64");
PL_EXPORT off_t rw_lseek64(int fd, off_t off, int whence)
{
	struct pl_file *f = pl_fd(fd);

	if (!f)
		UNKNOWN_FD(f, fd, NEXT(lseek_fn, "lseek64")(fd, off, whence));
	return dev_lseek(f, fd, off, whence);
}

/* ---- fsync, fdatasync ----------------------------------------------------------- */

/* blkdev_fsync: an NVMe Flush (the engine's block fsync), waited for. */
static int dev_fsync(struct pl_file *f, int fd, bool datasync)
{
	struct rw_ctx *c;
	long res;
	int err;

	if (f->oflags & O_PATH)
		return fail(EBADF);
	if (f->dev->kind != PL_DEV_NS_BLK)
		return fail(EINVAL);	/* no fsync in the char devices' fops */
	if (pl_dev_gone(f->dev))
		return fail(EIO);	/* blkdev_fsync's flush to a dead disk */
	c = rw_ctx_get(0, &err);
	if (!c)
		return fail(err);
	res = rw_cmd(c, IORING_OP_FSYNC, fd, NULL, 0, 0, datasync ? IORING_FSYNC_DATASYNC : 0);
	return res < 0 ? fail((int)-res) : 0;
}

int pl_dev_fsync(struct pl_file *f, int fd, bool datasync)
{
	return dev_fsync(f, fd, datasync) < 0 ? -errno : 0;
}

/*
 * fsync on a placeholder (a directory) succeeds doing nothing: a device
 * copied without libc is found after it (a readlink per fsync of any other
 * file, whose own fsync costs far more), and flushed.
 */
#define SYNCED_FD(f, fd, call)							\
	do {									\
		int r_ = (call);						\
										\
		if (r_ < 0 || !((f) = pl_fd_adopt((fd), 0)))			\
			return r_;						\
	} while (0)

PL_EXPORT int rw_fsync(int fd) __asm__("fsync");
PL_EXPORT int rw_fsync(int fd)
{
	struct pl_file *f = pl_fd(fd);

	if (!f)
		SYNCED_FD(f, fd, NEXT(fsync_fn, "fsync")(fd));
	return dev_fsync(f, fd, false);
}

PL_EXPORT int rw_fdatasync(int fd) __asm__("fdatasync");
PL_EXPORT int rw_fdatasync(int fd)
{
	struct pl_file *f = pl_fd(fd);

	if (!f)
		SYNCED_FD(f, fd, NEXT(fsync_fn, "fdatasync")(fd));
	return dev_fsync(f, fd, true);
}

/* sync_file_range: nothing is cached here, so only the char devices' ESPIPE differs. */
PL_EXPORT int rw_sync_file_range(int fd, off_t off, off_t n, unsigned int fl)
	__asm__("sync_file_range");
PL_EXPORT int rw_sync_file_range(int fd, off_t off, off_t n, unsigned int fl)
{
	struct pl_file *f = pl_fd(fd);

	if (f && f->dev->kind != PL_DEV_NS_BLK)
		return fail(ESPIPE);
	/* the placeholder checks the arguments as Linux does for a block device */
	return NEXT(sfr_fn, "sync_file_range")(fd, off, n, fl);
}

/* ---- zeroes, discard ---------------------------------------------------------- */

/* Write zeroes over [start, start + len) (LBA-aligned, inside the device): 0 or -errno. */
static int blk_zeroout(struct pl_file *f, int fd, uint64_t start, uint64_t len)
{
	struct pl_blk_geo g;
	struct rw_io io = { .fd = fd };
	struct pl_blk_io bio = { rw_io_dev, rw_io_copy, &io, NULL };
	int err;

	rw_geo(f->dev, &g);
	io.c = rw_ctx_get(g.chunk, &err);
	if (!io.c)
		return -err;
	bio.bounce = io.c->bounce;
	return pl_blk_zeroout(&g, &bio, start, len);
}

struct rw_dsm {
	struct ucmd_engine *e;
	int fd;
};

static int rw_dsm_cmd(void *ctx, struct nvme_passthru_cmd64 *cmd)
{
	struct rw_dsm *d = ctx;

	return ucmd_ioctl(d->e, d->fd, NVME_IOCTL_IO64_CMD, cmd);
}

/*
 * Deallocate [start, start + len) (LBA-aligned, inside the device):
 * blkdev.c's Dataset Management commands on the namespace's generic node
 * ngXnY opened read-write on a private number (pl_private_open), never one
 * the program could hold. 0 or -errno: -EOPNOTSUPP if the controller has
 * no DSM (ONCS), -EIO for an NVMe error.
 */
static int blk_discard(struct pl_file *f, uint64_t start, uint64_t len)
{
	const struct pl_devinfo *d = f->dev;
	struct rw_dsm dsm;
	struct pl_blk_geo g;
	char name[32];
	int ret;

	if (!(ctrl_caps(d).oncs & RW_ONCS_DSM))
		return -EOPNOTSUPP;
	if (!len)
		return 0;
	dsm.e = pl_engine();
	if (!dsm.e)
		return -EIO;
	rw_geo(d, &g);
	snprintf(name, sizeof(name), "ng%un%u", d->instance, d->nsid);
	dsm.fd = pl_private_open(dsm.e, name, O_RDWR);
	if (dsm.fd < 0)
		return dsm.fd == -ENOTCONN ? -EIO : dsm.fd;
	ret = pl_blk_discard(&g, d->nsid, start, len, rw_dsm_cmd, &dsm);
	pl_private_close(dsm.e, dsm.fd);
	return ret == -ENOTCONN ? -EIO : ret;
}

#define RW_FALLOC_BLK (FALLOC_FL_KEEP_SIZE | FALLOC_FL_PUNCH_HOLE | FALLOC_FL_ZERO_RANGE | \
		       FALLOC_FL_NO_HIDE_STALE)

/* vfs_fallocate + blkdev_fallocate; 0 or -errno. */
static int dev_fallocate(struct pl_file *f, int fd, int mode, off_t off, off_t len)
{
	struct pl_blk_geo g;
	uint64_t end;

	if (off < 0 || len <= 0)
		return -EINVAL;
	if (!acc_ok(f, true))
		return -EBADF;
	if (f->dev->kind != PL_DEV_NS_BLK)
		return -ENODEV;
	if (mode & ~RW_FALLOC_BLK)
		return -EOPNOTSUPP;
	rw_geo(f->dev, &g);
	if ((uint64_t)off >= g.size)
		return -EINVAL;
	if (__builtin_add_overflow((uint64_t)off, (uint64_t)len, &end))
		return -EFBIG;
	if (end > g.size) {
		if (!(mode & FALLOC_FL_KEEP_SIZE))
			return -EINVAL;
		len = (off_t)(g.size - (uint64_t)off);
	}
	if (((uint64_t)off | (uint64_t)len) & (g.lbs - 1))
		return -EINVAL;
	switch (mode) {
	case FALLOC_FL_ZERO_RANGE:
	case FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE:
		return blk_zeroout(f, fd, (uint64_t)off, (uint64_t)len);
	case FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE | FALLOC_FL_NO_HIDE_STALE:
		return blk_discard(f, (uint64_t)off, (uint64_t)len);
	default:
		/*
		 * PUNCH_HOLE | KEEP_SIZE: zeroes without fallback, which Linux
		 * does only with Write Zeroes' deallocate: not offered here.
		 */
		return -EOPNOTSUPP;
	}
}

PL_EXPORT int rw_fallocate(int fd, int mode, off_t off, off_t len) __asm__("fallocate");
PL_EXPORT int rw_fallocate(int fd, int mode, off_t off, off_t len)
{
	struct pl_file *f = pl_fd(fd);
	int ret;

	if (!f)
		UNKNOWN_FD(f, fd, NEXT(fallocate_fn, "fallocate")(fd, mode, off, len));
	ret = dev_fallocate(f, fd, mode, off, len);
	return ret < 0 ? fail(-ret) : 0;
}

PL_EXPORT int rw_fallocate64(int fd, int mode, off_t off, off_t len) __asm__("fallocate64");
PL_EXPORT int rw_fallocate64(int fd, int mode, off_t off, off_t len)
{
	struct pl_file *f = pl_fd(fd);
	int ret;

	if (!f)
		UNKNOWN_FD(f, fd, NEXT(fallocate_fn, "fallocate64")(fd, mode, off, len));
	ret = dev_fallocate(f, fd, mode, off, len);
	return ret < 0 ? fail(-ret) : 0;
}

/*
 * posix_fallocate returns the error. On a device: fallocate(mode 0) is
 * EOPNOTSUPP on a block device and glibc's fallback refuses what is not a
 * regular file with ENODEV; a char device says ENODEV itself.
 */
static int dev_posix_fallocate(struct pl_file *f, off_t off, off_t len)
{
	if (off < 0 || len <= 0)
		return EINVAL;
	if (!acc_ok(f, true))
		return EBADF;
	return ENODEV;
}

PL_EXPORT int rw_posix_fallocate(int fd, off_t off, off_t len) __asm__("posix_fallocate");
PL_EXPORT int rw_posix_fallocate(int fd, off_t off, off_t len)
{
	struct pl_file *f = pl_fd(fd);

	if (!f) {
		int r = NEXT(pfallocate_fn, "posix_fallocate")(fd, off, len);

		/* it returns the error: a placeholder's EBADF (not opened for writing) */
		if (!r || !(f = pl_fd_adopt(fd, r)))
			return r;
	}
	return dev_posix_fallocate(f, off, len);
}

PL_EXPORT int rw_posix_fallocate64(int fd, off_t off, off_t len) __asm__("posix_fallocate64");
PL_EXPORT int rw_posix_fallocate64(int fd, off_t off, off_t len)
{
	struct pl_file *f = pl_fd(fd);

	if (!f) {
		int r = NEXT(pfallocate_fn, "posix_fallocate64")(fd, off, len);

		/* it returns the error: a placeholder's EBADF (not opened for writing) */
		if (!r || !(f = pl_fd_adopt(fd, r)))
			return r;
	}
	return dev_posix_fallocate(f, off, len);
}

/* ftruncate(2) of what is not a regular file is EINVAL. */
PL_EXPORT int rw_ftruncate(int fd, off_t len) __asm__("ftruncate");
PL_EXPORT int rw_ftruncate(int fd, off_t len)
{
	struct pl_file *f = pl_fd(fd);

	if (!f)
		UNKNOWN_FD(f, fd, NEXT(ftruncate_fn, "ftruncate")(fd, len));
	(void)f;	/* a device's answer, whichever */
	return fail(EINVAL);
}

PL_EXPORT int rw_ftruncate64(int fd, off_t len) __asm__("ftruncate64");
PL_EXPORT int rw_ftruncate64(int fd, off_t len)
{
	struct pl_file *f = pl_fd(fd);

	if (!f)
		UNKNOWN_FD(f, fd, NEXT(ftruncate_fn, "ftruncate64")(fd, len));
	(void)f;
	return fail(EINVAL);
}

/* ---- BLK* ioctls ---------------------------------------------------------------- */

static int put_user_val(void *arg, const void *val, size_t n)
{
	return copy_to_user(arg, val, n) ? (int)fail(EFAULT) : 0;
}

static int rw_fetch_range(void *arg, uint64_t r[2])
{
	return copy_from_user(r, arg, 2 * sizeof(uint64_t)) ? -EFAULT : 0;
}

int pl_blk_ioctl(struct pl_file *f, int fd, unsigned long req, void *arg)
{
	struct pl_blk_geo g;
	uint64_t r[2], val[1];
	int ret;

	rw_geo(f->dev, &g);
	ret = pl_blk_query(&g, req, val);
	if (ret >= 0)
		return put_user_val(arg, val, (size_t)ret);
	switch (req) {
	case BLKGETZONESZ:
	case BLKGETNRZONES:
	case BLKREPORTZONE:
	case BLKRESETZONE:
	case BLKOPENZONE:
	case BLKCLOSEZONE:
	case BLKFINISHZONE:
		ret = pl_blkzoned_ioctl(f, req, arg);
		return ret < 0 ? (int)fail(-ret) : 0;
	case BLKFLSBUF:
		/* no buffers: nothing is cached on this side */
		return 0;
	case BLKSECDISCARD:
	case BLKDISCARD:
	case BLKZEROOUT:
		ret = pl_blk_range_ioctl(&g, req, acc_ok(f, true),
					 ctrl_caps(f->dev).oncs & RW_ONCS_DSM,
					 rw_fetch_range, arg, r);
		if (!ret)
			ret = req == BLKDISCARD ? blk_discard(f, r[0], r[1])
						: blk_zeroout(f, fd, r[0], r[1]);
		return ret < 0 ? (int)fail(-ret) : 0;
	default:
		return -2;
	}
}
