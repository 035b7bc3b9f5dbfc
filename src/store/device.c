/* SPDX-License-Identifier: MIT */
/*
 * Real block device (or a regular file standing in for one) driven through
 * the kernel's io_uring with O_DIRECT, so that the emulated controller's
 * I/O reaches the medium without a second page cache. Each store owns one
 * small ring and waits for every submission: the controller already
 * serialises per namespace, and a mutex makes calls from different threads
 * safe.
 *
 * O_DIRECT wants offsets, lengths and buffers aligned. Aligned requests go
 * straight from the caller's iovecs; anything else goes through an aligned
 * bounce buffer, reading the partial first/last block before writing it back
 * (read-modify-write).
 *
 * The store never creates, truncates or extends what it is given: a block
 * device or a regular file has the capacity it has, and a size beyond it is
 * -ENOSPC. A regular file whose length is not a whole number of direct-I/O
 * blocks past the store's end is driven buffered, so that a read-modify-write
 * of the last block never extends it.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/fs.h>
#include <liburing.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store/common.h"
#include "store/device_internal.h"
#include "store/store.h"

#define RING_DEPTH	4
#define BATCH_IOV	64
#define BOUNCE_LEN	(256u * 1024u)
/* Alignment to assume for a file whose file system does not report one. */
#define FILE_DIO_ALIGN	4096u

struct dev_store {
	struct store st;
	pthread_mutex_t lock;	/* one caller at a time on the ring and bounce buffer */
	struct io_uring ring;
	bool ring_ready;
	int fd;
	bool is_blk;
	bool rdonly;		/* opened O_RDONLY: every change is -EROFS */
	bool direct;		/* O_DIRECT in effect */
	uint32_t blk;		/* offset/length granularity (1 when buffered) */
	uint32_t mem_align;	/* buffer address alignment (1 when buffered) */
	unsigned char *bounce;	/* BOUNCE_LEN bytes, page aligned */
};

static struct dev_store *to_dev(struct store *st)
{
	return (struct dev_store *)st;
}

static uint64_t round_down(uint64_t v, uint64_t a)
{
	return v - v % a;
}

static uint64_t round_up(uint64_t v, uint64_t a)
{
	return round_down(v + a - 1, a);
}

static uint64_t min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

/* Submit the prepared SQE and return its cqe->res. */
static int ring_run(struct dev_store *ds)
{
	struct io_uring_cqe *cqe;
	int ret, res;

	/* An interrupted io_uring_enter leaves the SQE queued: submit until it is gone. */
	while (io_uring_sq_ready(&ds->ring)) {
		ret = io_uring_submit(&ds->ring);
		if (ret < 0 && ret != -EINTR && ret != -EAGAIN)
			return ret;
	}
	do {
		ret = io_uring_wait_cqe(&ds->ring, &cqe);
	} while (ret == -EINTR);
	if (ret < 0)
		return ret;
	res = cqe->res;
	io_uring_cqe_seen(&ds->ring, cqe);
	return res;
}

static int ring_rw(struct dev_store *ds, bool write, const struct iovec *iov, int n, uint64_t off,
		   bool fua)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&ds->ring);

	if (!sqe)
		return -EBUSY;	/* cannot happen: every call drains the ring */
	if (write)
		io_uring_prep_writev2(sqe, ds->fd, iov, (unsigned)n, off, fua ? RWF_DSYNC : 0);
	else
		io_uring_prep_readv(sqe, ds->fd, iov, (unsigned)n, off);
	return ring_run(ds);
}

/*
 * The file system refused an aligned O_DIRECT request (EINVAL: e.g. our
 * alignment guess was wrong, or the file system only pretends to support
 * O_DIRECT). Continue with buffered I/O rather than failing every command.
 */
static bool drop_direct(struct dev_store *ds)
{
	int fl;

	if (!ds->direct)
		return false;
	fl = fcntl(ds->fd, F_GETFL);
	if (fl < 0 || fcntl(ds->fd, F_SETFL, fl & ~O_DIRECT) < 0)
		return false;
	ds->direct = false;
	ds->blk = 1;
	ds->mem_align = 1;
	return true;
}

/* Transfer len bytes at off from/to the cursor, looping over short transfers. */
static int xfer(struct dev_store *ds, bool write, struct store_iov_cursor *cur, uint64_t off,
		uint64_t len, bool fua)
{
	uint64_t done = 0;

	while (done < len) {
		struct iovec batch[BATCH_IOV];
		uint64_t bytes;
		int n = store_cursor_fill(cur, batch, BATCH_IOV, min_u64(len - done, INT_MAX),
					  &bytes);
		int r = ring_rw(ds, write, batch, n, off + done, fua);

		if (r == -EINTR || r == -EAGAIN)
			continue;
		if (r == -EINVAL && drop_direct(ds))
			continue;
		if (r < 0)
			return r;
		if (r == 0) {
			if (write)
				return -EIO;	/* no progress and no error: do not spin */
			/* end of a regular file: the rest reads as zeros */
			return store_cursor_zero(cur, len - done);
		}
		store_cursor_advance(cur, (uint64_t)r);
		done += (uint64_t)r;
	}
	return 0;
}

/* Aligned transfer to/from the bounce buffer. */
static int bounce_io(struct dev_store *ds, bool write, size_t at, uint64_t len, uint64_t off,
		     bool fua)
{
	struct iovec iov = { .iov_base = ds->bounce + at, .iov_len = len };
	struct store_iov_cursor cur;

	store_cursor_init(&cur, &iov, 1);
	return xfer(ds, write, &cur, off, len, fua);
}

/* Whether the caller's request can go to the device without a bounce buffer. */
static bool is_aligned(const struct dev_store *ds, const struct iovec *iov, int iovcnt,
		       uint64_t off, uint64_t len)
{
	if (off % ds->blk || len % ds->blk)
		return false;
	for (int i = 0; i < iovcnt; i++) {
		if (iov[i].iov_len % ds->blk || (uintptr_t)iov[i].iov_base % ds->mem_align)
			return false;
	}
	return true;
}

/* The aligned window [*a0, *a1) of the bounce buffer that covers pos onwards. */
static void window(const struct dev_store *ds, uint64_t pos, uint64_t end, uint64_t *a0,
		   uint64_t *a1)
{
	*a0 = round_down(pos, ds->blk);
	*a1 = min_u64(round_up(end, ds->blk), *a0 + round_down(BOUNCE_LEN, ds->blk));
}

static int bounce_read(struct dev_store *ds, struct store_iov_cursor *cur, uint64_t off,
		       uint64_t len)
{
	for (uint64_t pos = off, end = off + len; pos < end;) {
		uint64_t a0, a1, stop;
		int ret;

		window(ds, pos, end, &a0, &a1);
		ret = bounce_io(ds, false, 0, a1 - a0, a0, false);
		if (ret)
			return ret;
		stop = min_u64(end, a1);
		ret = store_cursor_to_iov(cur, ds->bounce + (pos - a0), stop - pos);
		if (ret)
			return ret;
		pos = stop;
	}
	return 0;
}

/* Fill the partial first and last block of a window from the device. */
static int read_partial_blocks(struct dev_store *ds, uint64_t a0, uint64_t a1, uint64_t pos,
			       uint64_t stop)
{
	uint64_t last = a1 - ds->blk;
	int ret;

	if (pos > a0) {
		ret = bounce_io(ds, false, 0, ds->blk, a0, false);
		if (ret)
			return ret;
	}
	if (stop < a1 && !(last == a0 && pos > a0))
		return bounce_io(ds, false, last - a0, ds->blk, last, false);
	return 0;
}

static int bounce_write(struct dev_store *ds, struct store_iov_cursor *cur, uint64_t off,
			uint64_t len, bool fua)
{
	for (uint64_t pos = off, end = off + len; pos < end;) {
		uint64_t a0, a1, stop;
		int ret;

		window(ds, pos, end, &a0, &a1);
		stop = min_u64(end, a1);
		ret = read_partial_blocks(ds, a0, a1, pos, stop);
		if (ret)
			return ret;
		ret = store_cursor_from_iov(cur, ds->bounce + (pos - a0), stop - pos);
		if (ret)
			return ret;
		ret = bounce_io(ds, true, 0, a1 - a0, a0, fua);
		if (ret)
			return ret;
		pos = stop;
	}
	return 0;
}

static int dev_io(struct dev_store *ds, bool write, const struct iovec *iov, int iovcnt,
		  uint64_t off, uint64_t len, bool fua)
{
	struct store_iov_cursor cur;

	store_cursor_init(&cur, iov, iovcnt);
	if (is_aligned(ds, iov, iovcnt, off, len))
		return xfer(ds, write, &cur, off, len, fua);
	return write ? bounce_write(ds, &cur, off, len, fua) : bounce_read(ds, &cur, off, len);
}

static int dev_readv(struct store *st, const struct iovec *iov, int iovcnt, uint64_t off)
{
	struct dev_store *ds = to_dev(st);
	uint64_t len;
	int ret;

	pthread_mutex_lock(&ds->lock);
	ret = store_check_io(st->size, iov, iovcnt, off, &len);
	if (!ret && len)
		ret = dev_io(ds, false, iov, iovcnt, off, len, false);
	pthread_mutex_unlock(&ds->lock);
	return ret;
}

static int dev_writev(struct store *st, const struct iovec *iov, int iovcnt, uint64_t off,
		      bool fua)
{
	struct dev_store *ds = to_dev(st);
	uint64_t len;
	int ret;

	pthread_mutex_lock(&ds->lock);
	ret = store_check_io(st->size, iov, iovcnt, off, &len);
	if (!ret && ds->rdonly)
		ret = -EROFS;
	if (!ret && len)
		ret = dev_io(ds, true, iov, iovcnt, off, len, fua);
	pthread_mutex_unlock(&ds->lock);
	return ret;
}

static int dev_flush(struct store *st)
{
	struct dev_store *ds = to_dev(st);
	struct io_uring_sqe *sqe;
	int ret;

	if (ds->rdonly)
		return 0;
	pthread_mutex_lock(&ds->lock);
	do {
		sqe = io_uring_get_sqe(&ds->ring);
		if (!sqe) {
			ret = -EBUSY;
			break;
		}
		io_uring_prep_fsync(sqe, ds->fd, IORING_FSYNC_DATASYNC);
		ret = ring_run(ds);
	} while (ret == -EINTR || ret == -EAGAIN);
	pthread_mutex_unlock(&ds->lock);
	return ret;
}

/* Write real zeros over [off, off + len); any alignment. Caller holds the lock. */
static int write_zero_bytes(struct dev_store *ds, uint64_t off, uint64_t len)
{
	while (len) {
		struct iovec batch[16];
		uint64_t bytes;
		int n = store_zero_iov(batch, 16, len, &bytes);
		int ret = dev_io(ds, true, batch, n, off, bytes, false);

		if (ret)
			return ret;
		off += bytes;
		len -= bytes;
	}
	return 0;
}

static int retry_eintr(int ret)
{
	return ret < 0 && errno == EINTR;
}

static int do_fallocate(int fd, int mode, uint64_t off, uint64_t len)
{
	int ret;

	while (retry_eintr(ret = fallocate(fd, mode, (off_t)off, (off_t)len)))
		;
	return ret < 0 ? -errno : 0;
}

static int blk_ioctl_range(int fd, unsigned long req, uint64_t off, uint64_t len)
{
	uint64_t range[2] = { off, len };
	int ret;

	while (retry_eintr(ret = ioctl(fd, req, range)))
		;
	return ret < 0 ? -errno : 0;
}

static bool unsupported(int err)
{
	return err == -EOPNOTSUPP || err == -ENOTTY || err == -ENOSYS || err == -EINVAL;
}

/*
 * Deallocate the block-aligned middle of a range. For a block device this is
 * fallocate(PUNCH_HOLE), which the block layer implements as "write zeroes
 * with unmap, no fallback": it frees space where the device can and always
 * reads back zeros. Plain BLKDISCARD is not used because a discarded range
 * is not guaranteed to read as zeros, which Deallocate must.
 */
static int dealloc_aligned(struct dev_store *ds, uint64_t off, uint64_t len)
{
	int ret = do_fallocate(ds->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, off, len);

	if (unsupported(ret) && ds->is_blk)
		ret = blk_ioctl_range(ds->fd, BLKZEROOUT, off, len);
	return ret;
}

static int zero_aligned(struct dev_store *ds, uint64_t off, uint64_t len)
{
	int ret;

	if (ds->is_blk)
		return blk_ioctl_range(ds->fd, BLKZEROOUT, off, len);
	ret = do_fallocate(ds->fd, FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE, off, len);
	if (unsupported(ret))
		ret = do_fallocate(ds->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, off, len);
	return ret;
}

/*
 * The device only takes whole logical blocks: zero partial head and tail
 * blocks by writing, hand the aligned middle to `fast`, and write zeros if
 * `fast` is not supported here.
 */
static int zero_range_locked(struct dev_store *ds, uint64_t off, uint64_t len,
			     int (*fast)(struct dev_store *, uint64_t, uint64_t))
{
	/* 512 even when buffered: block devices reject sub-sector ioctls */
	uint64_t g = ds->blk > 512 ? ds->blk : 512;
	uint64_t m0 = round_up(off, g), m1 = round_down(off + len, g);
	int ret;

	if (m0 >= m1)
		return write_zero_bytes(ds, off, len);
	ret = write_zero_bytes(ds, off, m0 - off) ?: write_zero_bytes(ds, m1, off + len - m1);
	if (ret)
		return ret;
	ret = fast(ds, m0, m1 - m0);
	if (unsupported(ret))
		ret = write_zero_bytes(ds, m0, m1 - m0);
	return ret;
}

static int zero_range(struct store *st, uint64_t off, uint64_t len,
		      int (*fast)(struct dev_store *, uint64_t, uint64_t))
{
	struct dev_store *ds = to_dev(st);
	int ret;

	pthread_mutex_lock(&ds->lock);
	ret = store_check_range(st->size, off, len);
	if (!ret && ds->rdonly)
		ret = -EROFS;
	if (!ret && len)
		ret = zero_range_locked(ds, off, len, fast);
	pthread_mutex_unlock(&ds->lock);
	return ret;
}

static int dev_deallocate(struct store *st, uint64_t off, uint64_t len)
{
	return zero_range(st, off, len, dealloc_aligned);
}

static int dev_write_zeroes(struct store *st, uint64_t off, uint64_t len)
{
	return zero_range(st, off, len, zero_aligned);
}

static int dev_capacity(struct dev_store *ds, uint64_t *cap)
{
	struct stat sb;

	if (ds->is_blk)
		return ioctl(ds->fd, BLKGETSIZE64, cap) < 0 ? -errno : 0;
	if (fstat(ds->fd, &sb) < 0)
		return -errno;
	*cap = (uint64_t)sb.st_size;
	return 0;
}

/*
 * Whether a store of `size` bytes fits what we were given, without ever
 * changing it: -ENOSPC past the device's or the file's end. A regular file
 * that ends inside the direct-I/O block holding the store's last byte is
 * driven buffered from then on (a read-modify-write of that block would
 * extend the file).
 */
static int fit(struct dev_store *ds, uint64_t size)
{
	uint64_t cap;
	int ret = dev_capacity(ds, &cap);

	if (ret)
		return ret;
	if (size > cap)
		return -ENOSPC;
	if (!ds->is_blk && round_up(size, ds->blk) > cap && !drop_direct(ds))
		return -EINVAL;
	return 0;
}

static int dev_resize(struct store *st, uint64_t size)
{
	struct dev_store *ds = to_dev(st);
	uint64_t old = st->size;
	int ret;

	if (ds->rdonly)
		return -EROFS;
	pthread_mutex_lock(&ds->lock);
	ret = fit(ds, size);
	/* New space must read as zeros: the device (or file) may hold old bytes. */
	if (!ret && size > old)
		ret = zero_range_locked(ds, old, size - old, zero_aligned);
	if (!ret)
		st->size = size;
	pthread_mutex_unlock(&ds->lock);
	return ret;
}

static uint64_t dev_allocated(struct store *st)
{
	struct dev_store *ds = to_dev(st);
	struct stat sb;
	uint64_t bytes;

	/* A block device does not say what it has mapped: report it all in use. */
	if (ds->is_blk || fstat(ds->fd, &sb) < 0)
		return st->size;
	bytes = (uint64_t)sb.st_blocks * 512u;
	return bytes < st->size ? bytes : st->size;
}

static void dev_close(struct store *st)
{
	struct dev_store *ds = to_dev(st);

	if (ds->ring_ready)
		io_uring_queue_exit(&ds->ring);
	if (ds->fd >= 0)
		close(ds->fd);
	free(ds->bounce);
	pthread_mutex_destroy(&ds->lock);
	free(ds);
}

static const struct store_ops dev_ops = {
	.name = "device",
	.readv = dev_readv,
	.writev = dev_writev,
	.flush = dev_flush,
	.deallocate = dev_deallocate,
	.write_zeroes = dev_write_zeroes,
	.resize = dev_resize,
	.allocated = dev_allocated,
	.close = dev_close,
};

/*
 * O_DIRECT is switched on the caller's descriptor (Linux allows it with
 * F_SETFL); a file system that cannot do it (e.g. tmpfs before Linux 6.6)
 * says EINVAL and the store stays buffered.
 */
static int set_direct(struct dev_store *ds, bool buffered)
{
	int fl = fcntl(ds->fd, F_GETFL);

	if (fl < 0)
		return -errno;
	/*
	 * The caller may have opened with O_NONBLOCK so that a FIFO in the
	 * device's place could not block the open; I/O must wait, not EAGAIN.
	 */
	if ((fl & O_NONBLOCK) && fcntl(ds->fd, F_SETFL, fl & ~O_NONBLOCK) < 0)
		return -errno;
	fl &= ~O_NONBLOCK;
	ds->direct = false;
	if (buffered || (fl & O_DIRECT)) {
		ds->direct = fl & O_DIRECT;
		return 0;
	}
	if (fcntl(ds->fd, F_SETFL, fl | O_DIRECT) == 0) {
		ds->direct = true;
		return 0;
	}
	return errno == EINVAL ? 0 : -errno;
}

/* Direct-I/O alignment of a regular file, as its file system reports it. */
static void file_alignment(struct dev_store *ds)
{
	struct statx sx;

	ds->blk = FILE_DIO_ALIGN;
	ds->mem_align = FILE_DIO_ALIGN;
	if (statx(ds->fd, "", AT_EMPTY_PATH, STATX_DIOALIGN, &sx) < 0 ||
	    !(sx.stx_mask & STATX_DIOALIGN))
		return;	/* kernel too old to say: 4096 satisfies every common setup */
	if (!sx.stx_dio_offset_align) {
		drop_direct(ds);	/* the file system says it cannot do direct I/O */
		return;
	}
	ds->blk = sx.stx_dio_offset_align;
	ds->mem_align = sx.stx_dio_mem_align ? sx.stx_dio_mem_align : ds->blk;
}

static int probe(struct dev_store *ds)
{
	struct stat sb;
	int lbs;

	if (fstat(ds->fd, &sb) < 0)
		return -errno;
	ds->is_blk = S_ISBLK(sb.st_mode);
	if (ds->is_blk) {
		if (ioctl(ds->fd, BLKSSZGET, &lbs) < 0 || lbs <= 0)
			lbs = 512;
		ds->blk = (uint32_t)lbs;
		ds->mem_align = (uint32_t)lbs;
	} else if (S_ISREG(sb.st_mode)) {
		file_alignment(ds);
	} else {
		return -ENOTBLK;
	}
	if (!ds->direct) {
		ds->blk = 1;
		ds->mem_align = 1;
	}
	if (ds->blk > BOUNCE_LEN / 2)
		return -EINVAL;	/* the bounce window must hold two blocks */
	return 0;
}

static int set_size(struct dev_store *ds, uint64_t size)
{
	uint64_t cap;
	int ret = dev_capacity(ds, &cap);

	if (ret)
		return ret;
	if (!size)
		size = cap;
	ret = fit(ds, size);
	if (ret)
		return ret;
	ds->st.size = size;
	return 0;
}

static int alloc_bounce(struct dev_store *ds)
{
	size_t align = ds->mem_align > 4096 ? ds->mem_align : 4096;
	void *p;

	if (posix_memalign(&p, align, BOUNCE_LEN))
		return -ENOMEM;
	ds->bounce = p;
	return 0;
}

static int open_store(int fd, uint64_t size, unsigned flags, struct store **out)
{
	struct dev_store *ds = calloc(1, sizeof(*ds));
	int ret;

	if (!ds)
		return -ENOMEM;
	ds->st.ops = &dev_ops;
	ds->fd = fd;
	ds->rdonly = flags & UCMD_STORE_RDONLY;
	pthread_mutex_init(&ds->lock, NULL);
	ret = set_direct(ds, flags & UCMD_STORE_DEVICE_BUFFERED);
	if (!ret)
		ret = probe(ds);
	if (!ret)
		ret = set_size(ds, size);
	if (!ret)
		ret = alloc_bounce(ds);
	if (!ret)
		ret = io_uring_queue_init(RING_DEPTH, &ds->ring, 0);
	ds->ring_ready = !ret;
	if (ret) {
		ds->fd = -1;	/* the caller keeps its descriptor on failure */
		dev_close(&ds->st);
		return ret;
	}
	*out = &ds->st;
	return 0;
}

int store_device_open_fd(int fd, uint64_t size, unsigned flags, struct store **out)
{
	if (fd < 0 || !out || (flags & ~UCMD_STORE_RDONLY))
		return -EINVAL;
	return open_store(fd, size, flags, out);
}

int store_device_open_flags(const char *path, uint64_t size, unsigned flags,
			    struct store **out)
{
	int fd, ret;

	if (!path || !out || (flags & ~UCMD_STORE_DEVICE_BUFFERED))
		return -EINVAL;
	/* No O_CREAT, no O_TRUNC: the device or file must already be there. */
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ret = open_store(fd, size, flags, out);
	if (ret)
		close(fd);
	return ret;
}

int store_device_open(const char *path, uint64_t size, struct store **out)
{
	return store_device_open_flags(path, size, 0, out);
}

bool store_device_is_direct(struct store *st)
{
	return to_dev(st)->direct;
}

uint32_t store_device_block(struct store *st)
{
	return to_dev(st)->blk;
}
