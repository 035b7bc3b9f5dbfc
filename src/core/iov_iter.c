/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "core/iov_iter.h"
#include "uaccess/uaccess.h"
/*
 * Linux's MAX_RW_COUNT: one read or write moves at most this much, so that a
 * byte count always fits the CQE's 32-bit res.
 */
#define UCMD_MAX_RW_COUNT ((size_t)INT_MAX & ~(size_t)4095)

/* 0 or -EFAULT, through the iterator's mm (NULL: the fault guard's direct copy). */
static int iter_copy_from(const struct iov_iter *it, void *dst, uint64_t usrc, size_t n)
{
	if (it->mm)
		return user_mm_copy_from(it->mm, dst, usrc, n);
	return copy_from_user(dst, (const void *)(uintptr_t)usrc, n);
}

static int iter_copy_to(const struct iov_iter *it, uint64_t udst, const void *src, size_t n)
{
	if (it->mm)
		return user_mm_copy_to(it->mm, udst, src, n);
	return copy_to_user((void *)(uintptr_t)udst, src, n);
}

int access_ok(uint64_t addr, uint64_t len)
{
	if (!len)
		return 0;
	if (!addr || addr + len < addr || addr + len > UCMD_TASK_SIZE)
		return -EFAULT;
	return 0;
}

int import_ubuf_mm(const struct user_mm *mm, int rw, uint64_t addr, size_t len,
		   struct iov_iter *it)
{
	(void)rw;
	if (len > SSIZE_MAX)
		return -EINVAL;
	if (len > UCMD_MAX_RW_COUNT)
		len = UCMD_MAX_RW_COUNT;
	if (access_ok(addr, len))
		return -EFAULT;
	it->mm = user_mm_is_self(mm) ? NULL : mm;
	it->alloc = NULL;
	it->fast[0].iov_base = (void *)(uintptr_t)addr;
	it->fast[0].iov_len = len;
	it->iov = it->fast;
	it->nr_segs = 1;
	it->count = len;
	return 0;
}

int import_iovec_mm(const struct user_mm *mm, int rw, uint64_t uvec, unsigned nr,
		    struct iov_iter *it)
{
	struct iovec *dst;
	size_t total = 0;

	(void)rw;
	it->mm = user_mm_is_self(mm) ? NULL : mm;
	it->alloc = NULL;
	if (nr > UCMD_UIO_MAXIOV)
		return -EINVAL;
	if (access_ok(uvec, (uint64_t)nr * sizeof(struct iovec)))
		return -EFAULT;
	if (nr <= UCMD_FAST_IOV) {
		dst = it->fast;
	} else {
		dst = malloc(nr * sizeof(*dst));
		if (!dst)
			return -ENOMEM;
		it->alloc = dst;
	}
	/* One copy, then only the copy is checked and used. */
	if (iter_copy_from(it, dst, uvec, nr * sizeof(*dst))) {
		iov_iter_release(it);
		return -EFAULT;
	}
	for (unsigned i = 0; i < nr; i++) {
		if (dst[i].iov_len > SSIZE_MAX - total) {
			iov_iter_release(it);
			return -EINVAL;
		}
		if (access_ok((uint64_t)(uintptr_t)dst[i].iov_base, dst[i].iov_len)) {
			iov_iter_release(it);
			return -EFAULT;
		}
		/* As Linux: checked whole, then cut to what one call moves. */
		if (dst[i].iov_len > UCMD_MAX_RW_COUNT - total)
			dst[i].iov_len = UCMD_MAX_RW_COUNT - total;
		total += dst[i].iov_len;
	}
	it->iov = dst;
	it->nr_segs = nr;
	it->count = total;
	return 0;
}

int import_iovec_within_mm(const struct user_mm *mm, int rw, uint64_t uvec, unsigned nr,
			   uint64_t base, uint64_t len, struct iov_iter *it)
{
	int ret = import_iovec_mm(mm, rw, uvec, nr, it);

	if (ret)
		return ret;
	for (unsigned i = 0; i < it->nr_segs; i++) {
		uint64_t a = (uint64_t)(uintptr_t)it->iov[i].iov_base, l = it->iov[i].iov_len;

		/* checked as the program gave it: import_iovec may have cut l, never grown it */
		if (l && (a < base || a - base > len || l > len - (a - base))) {
			iov_iter_release(it);
			return -EFAULT;
		}
	}
	return 0;
}

void iov_iter_release(struct iov_iter *it)
{
	free(it->alloc);
	it->alloc = NULL;
}

size_t copy_to_iter(const void *src, size_t len, const struct iov_iter *it)
{
	size_t done = 0;

	for (unsigned i = 0; i < it->nr_segs && done < len; i++) {
		size_t n = it->iov[i].iov_len;
		if (n > len - done)
			n = len - done;
		if (iter_copy_to(it, (uint64_t)(uintptr_t)it->iov[i].iov_base,
				 (const char *)src + done, n))
			break;
		done += n;
	}
	return done;
}

size_t copy_from_iter(void *dst, size_t len, const struct iov_iter *it)
{
	size_t done = 0;

	for (unsigned i = 0; i < it->nr_segs && done < len; i++) {
		size_t n = it->iov[i].iov_len;
		if (n > len - done)
			n = len - done;
		if (iter_copy_from(it, (char *)dst + done, (uint64_t)(uintptr_t)it->iov[i].iov_base,
				   n))
			break;
		done += n;
	}
	return done;
}

int fault_in_iov_iter(const struct iov_iter *it, int rw)
{
	for (unsigned i = 0; i < it->nr_segs; i++) {
		void *base = it->iov[i].iov_base;
		size_t len = it->iov[i].iov_len;

		/* A WRITE reads the user's memory; a READ writes into it. */
		if (it->mm) {
			uint64_t a = (uint64_t)(uintptr_t)base;

			if (rw == UCMD_WRITE ? it->mm->ops->fault_in_readable(it->mm, a, len)
					     : it->mm->ops->fault_in_writeable(it->mm, a, len))
				return -EFAULT;
		} else if (rw == UCMD_WRITE ? fault_in_readable(base, len)
					    : fault_in_writeable(base, len)) {
			return -EFAULT;
		}
	}
	return 0;
}
