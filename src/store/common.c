/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <string.h>

#include "store/common.h"
#include "uaccess/uaccess.h"

const unsigned char store_zeros[UCMD_STORE_ZEROS_LEN] __attribute__((aligned(4096)));

int store_check_range(uint64_t size, uint64_t off, uint64_t len)
{
	/* Written so that off + len can never wrap. */
	if (off > size || len > size - off)
		return -ERANGE;
	return 0;
}

int store_iov_total(const struct iovec *iov, int iovcnt, uint64_t *len)
{
	uint64_t total = 0;

	if (iovcnt < 0)
		return -EINVAL;
	if (iovcnt > 0 && !iov)
		return -EFAULT;
	for (int i = 0; i < iovcnt; i++) {
		if (iov[i].iov_len && !iov[i].iov_base)
			return -EFAULT;
		if (iov[i].iov_len > UINT64_MAX - total)
			return -EINVAL;
		total += iov[i].iov_len;
	}
	*len = total;
	return 0;
}

int store_check_io(uint64_t size, const struct iovec *iov, int iovcnt, uint64_t off,
		   uint64_t *len)
{
	int ret = store_iov_total(iov, iovcnt, len);

	if (ret)
		return ret;
	return store_check_range(size, off, *len);
}

void store_cursor_init(struct store_iov_cursor *c, const struct iovec *iov, int iovcnt)
{
	c->iov = iov;
	c->cnt = iovcnt;
	c->skip = 0;
}

void store_cursor_advance(struct store_iov_cursor *c, uint64_t n)
{
	while (c->cnt > 0) {
		size_t left = c->iov->iov_len - c->skip;

		if (n < left) {
			c->skip += n;
			return;
		}
		n -= left;
		c->iov++;
		c->cnt--;
		c->skip = 0;
	}
}

int store_cursor_fill(const struct store_iov_cursor *c, struct iovec *out, int max,
		      uint64_t limit, uint64_t *bytes)
{
	uint64_t total = 0;
	size_t skip = c->skip;
	int n = 0;

	for (int i = 0; i < c->cnt && n < max && total < limit; i++, skip = 0) {
		size_t len = c->iov[i].iov_len - skip;

		if (!len)
			continue;
		if (len > limit - total)
			len = limit - total;
		out[n].iov_base = (char *)c->iov[i].iov_base + skip;
		out[n].iov_len = len;
		total += len;
		n++;
	}
	*bytes = total;
	return n;
}

/*
 * Walk n bytes of the cursor, handing each contiguous piece to fn. The
 * segments are the caller's buffers (for the controller, host memory the
 * application owns): fn copies through the user memory accessor, and the
 * first piece it cannot reach ends the walk with -EFAULT.
 */
static int cursor_walk(struct store_iov_cursor *c, uint64_t n,
		       int (*fn)(void *seg, size_t len, void *arg), void *arg)
{
	while (n && c->cnt > 0) {
		size_t len = c->iov->iov_len - c->skip;

		if (len > n)
			len = n;
		if (len && fn((char *)c->iov->iov_base + c->skip, len, arg))
			return -EFAULT;
		/* advance(0) steps over an exhausted entry, so this always progresses */
		store_cursor_advance(c, len);
		n -= len;
	}
	return 0;
}

static int seg_to_iov(void *seg, size_t len, void *arg)
{
	const unsigned char **src = arg;
	int ret = copy_to_user(seg, *src, len);

	*src += len;
	return ret;
}

static int seg_from_iov(void *seg, size_t len, void *arg)
{
	unsigned char **dst = arg;
	int ret = copy_from_user(*dst, seg, len);

	*dst += len;
	return ret;
}

static int seg_zero(void *seg, size_t len, void *arg)
{
	(void)arg;
	return clear_user(seg, len);
}

int store_cursor_to_iov(struct store_iov_cursor *c, const void *src, size_t n)
{
	const unsigned char *p = src;

	return cursor_walk(c, n, seg_to_iov, &p);
}

int store_cursor_from_iov(struct store_iov_cursor *c, void *dst, size_t n)
{
	unsigned char *p = dst;

	return cursor_walk(c, n, seg_from_iov, &p);
}

int store_cursor_zero(struct store_iov_cursor *c, uint64_t n)
{
	return cursor_walk(c, n, seg_zero, NULL);
}

int store_zero_iov(struct iovec *out, int max, uint64_t len, uint64_t *bytes)
{
	uint64_t total = 0;
	int n = 0;

	while (n < max && total < len) {
		size_t seg = UCMD_STORE_ZEROS_LEN;

		if (seg > len - total)
			seg = len - total;
		out[n].iov_base = (void *)store_zeros;
		out[n].iov_len = seg;
		total += seg;
		n++;
	}
	*bytes = total;
	return n;
}
