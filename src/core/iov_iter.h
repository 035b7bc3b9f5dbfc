/* SPDX-License-Identifier: MIT */
/*
 * A minimal iov_iter: the data of one request as a list of segments that the
 * engine has checked and, where it had to, copied (iovec arrays are copied
 * out of user memory at prep so that a later change cannot affect them).
 */
#ifndef UCMD_CORE_IOV_ITER_H
#define UCMD_CORE_IOV_ITER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#define UCMD_READ  0
#define UCMD_WRITE 1
#define UCMD_UIO_MAXIOV 1024
#define UCMD_FAST_IOV 8

struct user_mm;

struct iov_iter {
	/* whose addresses iov holds: NULL for this process (the fault guard) */
	const struct user_mm *mm;
	const struct iovec *iov;
	unsigned nr_segs;
	size_t count;			/* total bytes */
	struct iovec *alloc;		/* heap copy when more than UCMD_FAST_IOV */
	struct iovec fast[UCMD_FAST_IOV];
};

/*
 * Checks that [addr, addr + len) is user memory the caller may hand to the
 * engine: not NULL (unless len is 0), no wrap-around, below the end of the
 * user address space. Returns 0 or -EFAULT.
 */
int access_ok(uint64_t addr, uint64_t len);

/* One flat buffer in mm (NULL: this process). */
int import_ubuf_mm(const struct user_mm *mm, int rw, uint64_t addr, size_t len,
		   struct iov_iter *it);
/*
 * A user iovec array of nr entries at uvec in mm: copied, every segment
 * checked. nr above UCMD_UIO_MAXIOV → -EINVAL; bad pointers → -EFAULT;
 * total above SSIZE_MAX → -EINVAL.
 */
int import_iovec_mm(const struct user_mm *mm, int rw, uint64_t uvec, unsigned nr,
		    struct iov_iter *it);

/* The same in this process's memory. */
static inline int import_ubuf(int rw, uint64_t addr, size_t len, struct iov_iter *it)
{
	return import_ubuf_mm(NULL, rw, addr, len, it);
}

static inline int import_iovec(int rw, uint64_t uvec, unsigned nr, struct iov_iter *it)
{
	return import_iovec_mm(NULL, rw, uvec, nr, it);
}
/*
 * A user iovec array in mm whose every segment lies in [base, base + len),
 * a registered buffer of that mm (vectored fixed buffers, Linux 6.15's
 * io_import_reg_vec): as import_iovec_mm, and -EFAULT for a segment outside.
 */
int import_iovec_within_mm(const struct user_mm *mm, int rw, uint64_t uvec, unsigned nr,
			   uint64_t base, uint64_t len, struct iov_iter *it);
void iov_iter_release(struct iov_iter *it);

/*
 * "Pin" the segments: fault every page in, readable for a WRITE (the device
 * reads them), writeable for a READ, through the user memory accessor.
 * 0 or -EFAULT. Linux pins user pages when it maps them for a device
 * (blk_rq_map_user, bio_iov_iter_get_pages) and fails there with -EFAULT,
 * before the command reaches the device; this is that check.
 */
int fault_in_iov_iter(const struct iov_iter *it, int rw);

/*
 * Copy between a flat buffer and the iterator's segments through the user
 * memory accessor of its mm; returns the bytes copied (short at a fault).
 */
size_t copy_to_iter(const void *src, size_t len, const struct iov_iter *it);
size_t copy_from_iter(void *dst, size_t len, const struct iov_iter *it);

#endif
