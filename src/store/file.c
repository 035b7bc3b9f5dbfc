/* SPDX-License-Identifier: MIT */
/*
 * Sparse-file store, the default. A new file is sized with ftruncate so unused
 * space costs nothing; deallocation punches holes. Only a file the store
 * created, or a resize (Format NVM), ever changes the file's length. Durability: FUA writes use
 * pwritev2(RWF_DSYNC) (or pwritev + fdatasync where the kernel lacks it) and
 * flush is fdatasync, so an acknowledged write survives the process dying and,
 * on a well-behaved file system, the machine losing power.
 *
 * The store may be smaller than the file (opened with an explicit size); bytes
 * of the file past the store's end are never read or written by I/O.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store/common.h"
#include "store/store.h"

/* iovec entries handed to one preadv/pwritev call */
#define BATCH_IOV	64

struct file_store {
	struct store st;
	int fd;
	bool rdonly;
	bool no_rwf_dsync;	/* kernel refused RWF_DSYNC once: use fdatasync */
};

static struct file_store *to_file(struct store *st)
{
	return (struct file_store *)st;
}

static int file_readv(struct store *st, const struct iovec *iov, int iovcnt, uint64_t off)
{
	struct file_store *fs = to_file(st);
	struct store_iov_cursor cur;
	uint64_t len, done = 0;
	int ret = store_check_io(st->size, iov, iovcnt, off, &len);

	if (ret)
		return ret;
	store_cursor_init(&cur, iov, iovcnt);
	while (done < len) {
		struct iovec batch[BATCH_IOV];
		uint64_t bytes;
		int n = store_cursor_fill(&cur, batch, BATCH_IOV, SSIZE_MAX, &bytes);
		ssize_t r = preadv(fs->fd, batch, n, (off_t)(off + done));

		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (r == 0) {
			/* the file ended early (truncated under us): missing bytes read as zeros */
			return store_cursor_zero(&cur, len - done);
		}
		store_cursor_advance(&cur, (uint64_t)r);
		done += (uint64_t)r;
	}
	return 0;
}

/* One pwritev, durable before return when fua is set. Returns bytes or -errno. */
static ssize_t write_once(struct file_store *fs, const struct iovec *iov, int n, uint64_t off,
			  bool fua)
{
	ssize_t r;

	if (fua && !fs->no_rwf_dsync) {
		r = pwritev2(fs->fd, iov, n, (off_t)off, RWF_DSYNC);
		if (r >= 0)
			return r;
		if (errno != EOPNOTSUPP && errno != ENOSYS)
			return -errno;
		/* pre-4.7 kernel: remember and fall through to write + fdatasync */
		fs->no_rwf_dsync = true;
	}
	r = pwritev(fs->fd, iov, n, (off_t)off);
	if (r < 0)
		return -errno;
	if (fua && fdatasync(fs->fd) < 0)
		return -errno;
	return r;
}

static int file_write_iov(struct file_store *fs, const struct iovec *iov, int iovcnt,
			  uint64_t off, uint64_t len, bool fua)
{
	struct store_iov_cursor cur;
	uint64_t done = 0;

	store_cursor_init(&cur, iov, iovcnt);
	while (done < len) {
		struct iovec batch[BATCH_IOV];
		uint64_t bytes;
		int n = store_cursor_fill(&cur, batch, BATCH_IOV, SSIZE_MAX, &bytes);
		ssize_t r = write_once(fs, batch, n, off + done, fua);

		if (r == -EINTR)
			continue;
		if (r < 0)
			return (int)r;
		if (r == 0)
			return -EIO;	/* no progress and no error: do not spin */
		store_cursor_advance(&cur, (uint64_t)r);
		done += (uint64_t)r;
	}
	return 0;
}

static int file_writev(struct store *st, const struct iovec *iov, int iovcnt, uint64_t off,
		       bool fua)
{
	struct file_store *fs = to_file(st);
	uint64_t len;
	int ret = store_check_io(st->size, iov, iovcnt, off, &len);

	if (ret)
		return ret;
	if (fs->rdonly)
		return -EROFS;
	return file_write_iov(fs, iov, iovcnt, off, len, fua);
}

static int file_flush(struct store *st)
{
	struct file_store *fs = to_file(st);

	if (fs->rdonly)
		return 0;
	while (fdatasync(fs->fd) < 0) {
		if (errno != EINTR)
			return -errno;
	}
	return 0;
}

/* Last resort for file systems without hole punching: write real zeros. */
static int write_zero_bytes(struct file_store *fs, uint64_t off, uint64_t len)
{
	while (len) {
		struct iovec batch[16];
		uint64_t bytes;
		int n = store_zero_iov(batch, 16, len, &bytes);
		int ret = file_write_iov(fs, batch, n, off, bytes, false);

		if (ret)
			return ret;
		off += bytes;
		len -= bytes;
	}
	return 0;
}

/* fallocate that retries EINTR; returns 0 or -errno. */
static int do_fallocate(int fd, int mode, uint64_t off, uint64_t len)
{
	while (fallocate(fd, mode, (off_t)off, (off_t)len) < 0) {
		if (errno != EINTR)
			return -errno;
	}
	return 0;
}

/* The file system cannot do this mode here: try the next fallback. */
static bool unsupported(int err)
{
	return err == -EOPNOTSUPP || err == -ENOSYS || err == -EINVAL;
}

static int check_modify(struct file_store *fs, uint64_t off, uint64_t len)
{
	int ret = store_check_range(fs->st.size, off, len);

	if (ret)
		return ret;
	return fs->rdonly ? -EROFS : 0;
}

static int file_deallocate(struct store *st, uint64_t off, uint64_t len)
{
	struct file_store *fs = to_file(st);
	int ret = check_modify(fs, off, len);

	if (ret || !len)
		return ret;
	ret = do_fallocate(fs->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, off, len);
	if (unsupported(ret))
		ret = write_zero_bytes(fs, off, len);
	return ret;
}

static int file_write_zeroes(struct store *st, uint64_t off, uint64_t len)
{
	struct file_store *fs = to_file(st);
	int ret = check_modify(fs, off, len);

	if (ret || !len)
		return ret;
	/* ZERO_RANGE keeps blocks allocated (no later ENOSPC); a hole reads the same. */
	ret = do_fallocate(fs->fd, FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE, off, len);
	if (unsupported(ret))
		ret = do_fallocate(fs->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, off, len);
	if (unsupported(ret))
		ret = write_zero_bytes(fs, off, len);
	return ret;
}

static int file_length(int fd, uint64_t *len)
{
	struct stat sb;

	if (fstat(fd, &sb) < 0)
		return -errno;
	*len = (uint64_t)sb.st_size;
	return 0;
}

static int do_ftruncate(int fd, uint64_t size)
{
	if (size > (uint64_t)INT64_MAX)
		return -EFBIG;
	while (ftruncate(fd, (off_t)size) < 0) {
		if (errno != EINTR)
			return -errno;
	}
	return 0;
}

static int file_resize(struct store *st, uint64_t size)
{
	struct file_store *fs = to_file(st);
	uint64_t flen;
	int ret;

	if (fs->rdonly)
		return -EROFS;
	ret = file_length(fs->fd, &flen);
	if (ret)
		return ret;
	/*
	 * Growing must expose zeros: if the file holds bytes past the old end
	 * (the store was opened smaller than the file), cut them off first.
	 */
	if (size > st->size && flen > st->size) {
		ret = do_ftruncate(fs->fd, st->size);
		if (ret)
			return ret;
		flen = st->size;
	}
	if (size != flen) {
		ret = do_ftruncate(fs->fd, size);
		if (ret)
			return ret;
	}
	st->size = size;
	return 0;
}

static uint64_t file_allocated(struct store *st)
{
	struct file_store *fs = to_file(st);
	struct stat sb;
	uint64_t bytes;

	if (fstat(fs->fd, &sb) < 0)
		return 0;
	bytes = (uint64_t)sb.st_blocks * 512u;	/* st_blocks is always in 512-byte units */
	return bytes < st->size ? bytes : st->size;
}

static void file_close(struct store *st)
{
	struct file_store *fs = to_file(st);

	close(fs->fd);
	free(fs);
}

static const struct store_ops file_ops = {
	.name = "file",
	.readv = file_readv,
	.writev = file_writev,
	.flush = file_flush,
	.deallocate = file_deallocate,
	.write_zeroes = file_write_zeroes,
	.resize = file_resize,
	.allocated = file_allocated,
	.close = file_close,
};

/*
 * size 0 means "the file's size". A new file (UCMD_STORE_CREATE) is sized
 * here, sparse: its creator asked for that size. An existing file is never
 * extended or truncated on open: one shorter than the requested size is
 * refused (-EINVAL), a longer one is left alone and only its first `size`
 * bytes belong to the store.
 */
static int size_file(struct file_store *fs, uint64_t size, bool created)
{
	uint64_t flen = 0;	/* set when ret is 0; TSan's -O2 cannot tell */
	int ret = file_length(fs->fd, &flen);

	if (ret)
		return ret;
	if (!size)
		size = flen;
	if (flen < size) {
		if (!created)
			return -EINVAL;
		ret = do_ftruncate(fs->fd, size);
		if (ret)
			return ret;
	}
	fs->st.size = size;
	return 0;
}

static int check_flags(unsigned flags)
{
	if (flags & ~(UCMD_STORE_CREATE | UCMD_STORE_RDONLY))
		return -EINVAL;
	if ((flags & UCMD_STORE_CREATE) && (flags & UCMD_STORE_RDONLY))
		return -EINVAL;
	return 0;
}

/*
 * Callers open with O_NONBLOCK so that a FIFO in the file's place is refused
 * here instead of blocking the open; the store's I/O must wait, not EAGAIN
 * (io_uring honours O_NONBLOCK on regular files too).
 */
static int clear_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0)
		return -errno;
	if ((fl & O_NONBLOCK) && fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0)
		return -errno;
	return 0;
}

int store_file_open_fd(int fd, uint64_t size, unsigned flags, struct store **out)
{
	struct file_store *fs;
	struct stat sb;
	int ret;

	if (fd < 0 || !out || check_flags(flags))
		return -EINVAL;
	if (fstat(fd, &sb) < 0)
		return -errno;
	if (!S_ISREG(sb.st_mode))
		return -EINVAL;
	ret = clear_nonblock(fd);
	if (ret)
		return ret;
	fs = calloc(1, sizeof(*fs));
	if (!fs)
		return -ENOMEM;
	fs->st.ops = &file_ops;
	fs->rdonly = flags & UCMD_STORE_RDONLY;
	fs->fd = fd;
	ret = size_file(fs, size, flags & UCMD_STORE_CREATE);
	if (ret) {
		free(fs);
		return ret;
	}
	*out = &fs->st;
	return 0;
}

int store_file_open(const char *path, uint64_t size, unsigned flags, struct store **out)
{
	/* A symlink is never followed: the store is the file at this name. */
	int oflags = O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, fd, ret;

	if (!path || !out || check_flags(flags))
		return -EINVAL;
	oflags |= (flags & UCMD_STORE_RDONLY) ? O_RDONLY : O_RDWR;
	/* Create means a new file: an existing one is never taken over or resized. */
	if (flags & UCMD_STORE_CREATE)
		oflags |= O_CREAT | O_EXCL;
	fd = open(path, oflags, 0600);
	if (fd < 0)
		return -errno;
	ret = store_file_open_fd(fd, size, flags, out);
	if (ret) {
		close(fd);
		if (flags & UCMD_STORE_CREATE)
			unlink(path);	/* ours: created just now with O_EXCL */
	}
	return ret;
}
