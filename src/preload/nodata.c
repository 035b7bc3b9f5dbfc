/* SPDX-License-Identifier: MIT */
/*
 * The interposers define libc's own names (mmap and mmap64, sendfile and
 * sendfile64 as two symbols): without this, glibc's headers would rename
 * the first of each pair to the second. On 64-bit Linux both are one ABI.
 */
#undef _FILE_OFFSET_BITS
/*
 * The calls that move a device's data without the read/write family: on a
 * device fd each is served here or fails with an errno, because letting
 * it through would reach the placeholder behind the fd (an empty
 * directory, fdmap.c), which fails it with an errno no device gives.
 * A device copied with the program's own instruction (fdmap.c's
 * pl_fd_adopt) is found at such an answer and served as the device.
 *
 *   sendfile, splice   served: the bytes go through a bounce buffer with
 *                      the read/write family (rw.c), as Linux's block
 *                      device splices through its page cache
 *   copy_file_range    EINVAL, as Linux for what is not a regular file
 *   mmap               ENODEV: nvme_dev_fops and nvme_ns_chr_fops have no
 *                      mmap; a block device's page-cache mapping cannot be
 *                      had here (docs/compat.md)
 *   readahead          0 on the block device (nothing is cached), EINVAL
 *                      on the char devices, as Linux
 *
 * and libc's syscall() with one of these, or of the read/write family,
 * fsync, fallocate, ftruncate, lseek or ioctl, on a device fd: sent to the
 * interposer of the same call (pl_syscall_fd).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "preload/preload.h"

#define BOUNCE (64u * 1024)
#define MAX_RW_COUNT 0x7ffff000L

typedef void *(*mmap_fn)(void *, size_t, int, int, int, off_t);
typedef ssize_t (*sendfile_fn)(int, int, off_t *, size_t);
typedef ssize_t (*splice_fn)(int, off_t *, int, off_t *, size_t, unsigned);
typedef ssize_t (*cfr_fn)(int, off_t *, int, off_t *, size_t, unsigned);
typedef ssize_t (*readahead_fn)(int, off_t, size_t);

static void *next(void **slot, const char *sym)
{
	void *p = __atomic_load_n(slot, __ATOMIC_ACQUIRE);

	if (!p) {
		p = pl_next(sym);
		__atomic_store_n(slot, p, __ATOMIC_RELEASE);
	}
	return p;
}

#define NEXT(type, sym) ({ static void *slot_; (type)next(&slot_, sym); })

static long fail(int err)
{
	errno = err;
	return -1;
}

/* ---- mmap -------------------------------------------------------------------- */

static void *dev_mmap(void *(*next)(void *, size_t, int, int, int, off_t), void *addr,
		      size_t len, int prot, int flags, int fd, off_t off)
{
	struct pl_file *f = flags & MAP_ANONYMOUS ? NULL : pl_fd(fd);

	if (!f) {
		void *p = next(addr, len, prot, flags, fd, off);

		/* a placeholder's ENODEV or EACCES: a device copied without libc? */
		if (p != MAP_FAILED || (flags & MAP_ANONYMOUS) || !(f = pl_fd_adopt(fd, errno)))
			return p;
	}
	pl_trace("mmap of %s (fd %d): not served (ENODEV)", f->dev->name, fd);
	errno = ENODEV;
	return MAP_FAILED;
}

PL_EXPORT void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	return dev_mmap(NEXT(mmap_fn, "mmap"), addr, len, prot, flags, fd, off);
}

PL_EXPORT void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	return dev_mmap(NEXT(mmap_fn, "mmap64"), addr, len, prot, flags, fd, off);
}

/* ---- sendfile and splice through a bounce buffer --------------------------- */

static bool is_pipe(int fd)
{
	struct stat st;

	return fstat(fd, &st) == 0 && S_ISFIFO(st.st_mode);
}

/*
 * Move up to len bytes from in to out as read(2)/pread(2) then
 * write(2)/pwrite(2) (a device through rw.c's interposers, anything else
 * through libc): *in_off and *out_off, when given, are the positions used
 * and advanced instead of the files' own. What was read but could not be
 * written is given back to in's position (a pipe's cannot be). Bytes
 * moved, or -1 with errno if none were.
 */
static ssize_t bounce(int in, off_t *in_off, int out, off_t *out_off, size_t len)
{
	size_t total = 0;
	char *buf;
	int err = 0;

	if (len > MAX_RW_COUNT)
		len = MAX_RW_COUNT;
	/* a page-aligned buffer satisfies O_DIRECT's address rule on either side */
	if (posix_memalign((void **)&buf, 4096, BOUNCE))
		return fail(ENOMEM);
	while (total < len) {
		size_t want = len - total < BOUNCE ? len - total : BOUNCE;
		ssize_t r, w;

		r = in_off ? pread(in, buf, want, *in_off) : read(in, buf, want);
		if (r <= 0) {
			err = r < 0 ? errno : 0;
			break;
		}
		w = out_off ? pwrite(out, buf, (size_t)r, *out_off) : write(out, buf, (size_t)r);
		if (w < 0) {
			err = errno;
			w = 0;
		}
		if (in_off)
			*in_off += w;
		else if (w < r && !is_pipe(in))
			lseek(in, (off_t)w - r, SEEK_CUR);
		if (out_off)
			*out_off += w;
		total += (size_t)w;
		if (w < r)
			break;
	}
	free(buf);
	if (!total && err)
		return fail(err);
	return (ssize_t)total;
}

static bool readable(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	return fl >= 0 && !(fl & O_PATH) && (fl & O_ACCMODE) != O_WRONLY;
}

static bool writable(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	return fl >= 0 && !(fl & O_PATH) && (fl & O_ACCMODE) != O_RDONLY;
}

/* A device end that Linux cannot splice: the char devices have no splice_read/write. */
static bool char_dev(int fd)
{
	struct pl_file *f = pl_fd(fd);

	return f && f->dev->kind != PL_DEV_NS_BLK;
}

/* do_sendfile's checks, then the copy. */
static ssize_t dev_sendfile(int out, int in, off_t *offset, size_t count)
{
	off_t pos;
	ssize_t ret;

	if (!readable(in) || !writable(out))
		return fail(EBADF);
	if (char_dev(in) || char_dev(out))
		return fail(EINVAL);
	if (offset) {
		if (pl_copy_in(&pos, offset, sizeof(pos)))
			return fail(EFAULT);
		if (pos < 0)
			return fail(EINVAL);
	}
	ret = bounce(in, offset ? &pos : NULL, out, NULL, count);
	if (offset && ret >= 0 && pl_copy_out(offset, &pos, sizeof(pos)))
		return fail(EFAULT);
	return ret;
}

/*
 * Neither end a device, and the call failed: was one a device copied
 * without libc (its placeholder answers EBADF, EINVAL, EISDIR)? Both ends
 * are asked, so that the call is made again on what is now known.
 */
static bool adopted(int a, int b)
{
	int err = errno;
	bool fa = pl_fd_adopt(a, err) != NULL, fb = pl_fd_adopt(b, err) != NULL;

	return fa || fb;
}

/* The call of one of these two ends made by libc: -1 and not an end copied without libc. */
#define NEITHER_END(a, b, call)								\
	do {										\
		if (!pl_fd(a) && !pl_fd(b)) {						\
			__typeof__(call) r_ = (call);					\
											\
			if (r_ >= 0 || !adopted((a), (b)))				\
				return r_;						\
		}									\
	} while (0)

PL_EXPORT ssize_t sendfile(int out, int in, off_t *offset, size_t count)
{
	NEITHER_END(out, in, NEXT(sendfile_fn, "sendfile")(out, in, offset, count));
	return dev_sendfile(out, in, offset, count);
}

PL_EXPORT ssize_t sendfile64(int out, int in, off_t *offset, size_t count)
{
	NEITHER_END(out, in, NEXT(sendfile_fn, "sendfile64")(out, in, offset, count));
	return dev_sendfile(out, in, offset, count);
}

/* do_splice: one end a pipe (no offset there), the device end blocks as a file does. */
PL_EXPORT ssize_t splice(int in, off_t *in_off, int out, off_t *out_off, size_t len,
			 unsigned flags)
{
	off_t ipos, opos;
	ssize_t ret;

	NEITHER_END(in, out, NEXT(splice_fn, "splice")(in, in_off, out, out_off, len, flags));
	if (!readable(in) || !writable(out))
		return fail(EBADF);
	if (char_dev(in) || char_dev(out))
		return fail(EINVAL);
	if (!is_pipe(in) && !is_pipe(out))
		return fail(EINVAL);
	if ((is_pipe(in) && in_off) || (is_pipe(out) && out_off))
		return fail(ESPIPE);
	if ((in_off && pl_copy_in(&ipos, in_off, sizeof(ipos))) ||
	    (out_off && pl_copy_in(&opos, out_off, sizeof(opos))))
		return fail(EFAULT);
	if ((in_off && ipos < 0) || (out_off && opos < 0))
		return fail(EINVAL);
	if (!len)
		return 0;
	ret = bounce(in, in_off ? &ipos : NULL, out, out_off ? &opos : NULL, len);
	if (ret >= 0 && ((in_off && pl_copy_out(in_off, &ipos, sizeof(ipos))) ||
			 (out_off && pl_copy_out(out_off, &opos, sizeof(opos)))))
		return fail(EFAULT);
	return ret;
}

/* generic_file_rw_checks: both ends must be regular files. */
PL_EXPORT ssize_t copy_file_range(int in, off_t *in_off, int out, off_t *out_off, size_t len,
				  unsigned flags)
{
	NEITHER_END(in, out, NEXT(cfr_fn, "copy_file_range")(in, in_off, out, out_off, len, flags));
	if (flags)
		return fail(EINVAL);
	if (!readable(in) || !writable(out))
		return fail(EBADF);
	return fail(EINVAL);
}

PL_EXPORT ssize_t readahead(int fd, off_t off, size_t count)
{
	struct pl_file *f = pl_fd(fd);

	if (!f) {
		ssize_t r = NEXT(readahead_fn, "readahead")(fd, off, count);

		if (r >= 0 || !(f = pl_fd_adopt(fd, errno)))
			return r;
	}
	if (!readable(fd))
		return fail(EBADF);
	if (f->dev->kind != PL_DEV_NS_BLK)
		return fail(EINVAL);
	return 0;	/* nothing is cached on this side: nothing to read ahead */
}

/* ---- syscall(2) with a device fd ------------------------------------------- */

bool pl_syscall_fd(long nr, const long a[6], long *ret)
{
	int fd = (int)a[0];

	switch (nr) {
	case __NR_sendfile:
		if (!pl_fd((int)a[1]) && !pl_fd(fd))
			return false;
		*ret = sendfile(fd, (int)a[1], (off_t *)a[2], (size_t)a[3]);
		return true;
	case __NR_splice:
	case __NR_copy_file_range:
		if (!pl_fd((int)a[2]) && !pl_fd(fd))
			return false;
		*ret = (nr == __NR_splice ? splice : copy_file_range)(fd, (off_t *)a[1], (int)a[2],
								       (off_t *)a[3], (size_t)a[4],
								       (unsigned)a[5]);
		return true;
	case __NR_mmap:
		if ((a[3] & MAP_ANONYMOUS) || !pl_fd((int)a[4]))
			return false;
		*ret = (long)mmap((void *)a[0], (size_t)a[1], (int)a[2], (int)a[3], (int)a[4], a[5]);
		return true;
	default:
		break;
	}
	if (!pl_fd(fd))
		return false;
	switch (nr) {
	case __NR_read:
		*ret = read(fd, (void *)a[1], (size_t)a[2]);
		break;
	case __NR_write:
		*ret = write(fd, (const void *)a[1], (size_t)a[2]);
		break;
	case __NR_pread64:
		*ret = pread(fd, (void *)a[1], (size_t)a[2], a[3]);
		break;
	case __NR_pwrite64:
		*ret = pwrite(fd, (const void *)a[1], (size_t)a[2], a[3]);
		break;
	case __NR_readv:
		*ret = readv(fd, (const struct iovec *)a[1], (int)a[2]);
		break;
	case __NR_writev:
		*ret = writev(fd, (const struct iovec *)a[1], (int)a[2]);
		break;
	case __NR_preadv:
		*ret = preadv(fd, (const struct iovec *)a[1], (int)a[2], a[3]);
		break;
	case __NR_pwritev:
		*ret = pwritev(fd, (const struct iovec *)a[1], (int)a[2], a[3]);
		break;
	case __NR_preadv2:
		*ret = preadv2(fd, (const struct iovec *)a[1], (int)a[2], a[3], (int)a[5]);
		break;
	case __NR_pwritev2:
		*ret = pwritev2(fd, (const struct iovec *)a[1], (int)a[2], a[3], (int)a[5]);
		break;
	case __NR_lseek:
		*ret = lseek(fd, a[1], (int)a[2]);
		break;
	case __NR_fsync:
		*ret = fsync(fd);
		break;
	case __NR_fdatasync:
		*ret = fdatasync(fd);
		break;
	case __NR_fallocate:
		*ret = fallocate(fd, (int)a[1], a[2], a[3]);
		break;
	case __NR_ftruncate:
		*ret = ftruncate(fd, a[1]);
		break;
	case __NR_readahead:
		*ret = readahead(fd, a[1], (size_t)a[2]);
		break;
	case __NR_ioctl:
		*ret = ioctl(fd, (unsigned long)a[1], a[2]);
		break;
	case __NR_sync_file_range:
		*ret = sync_file_range(fd, a[1], a[2], (unsigned)a[3]);
		break;
	default:
		return false;
	}
	return true;
}
