/* SPDX-License-Identifier: MIT */
/*
 * Helpers shared by the store back ends (not part of the public interface):
 * argument checks that every store applies the same way, and a cursor over a
 * caller's iovec array so that short transfers, bounce buffers and very long
 * iovec arrays are all handled by one piece of code.
 */
#ifndef UCMD_STORE_COMMON_H
#define UCMD_STORE_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "store/store.h"

/* Size of the shared all-zeroes buffer used to write zeros. */
#define UCMD_STORE_ZEROS_LEN	(64u * 1024u)
/* Page aligned so that O_DIRECT can write straight from it. */
extern const unsigned char store_zeros[UCMD_STORE_ZEROS_LEN];

/* -ERANGE unless [off, off + len) lies inside [0, size) without overflow. */
int store_check_range(uint64_t size, uint64_t off, uint64_t len);

/*
 * Validate an iovec array and return its total length in *len:
 * -EINVAL for a negative count or a total that does not fit in 64 bits,
 * -EFAULT for a NULL array or a NULL base with a non-zero length.
 */
int store_iov_total(const struct iovec *iov, int iovcnt, uint64_t *len);

/* Both checks above, in the order every readv/writev applies them. */
int store_check_io(uint64_t size, const struct iovec *iov, int iovcnt, uint64_t off,
		   uint64_t *len);

/* A position inside an iovec array; never modifies the caller's array. */
struct store_iov_cursor {
	const struct iovec *iov;
	int cnt;
	size_t skip;	/* bytes already consumed from iov[0] */
};

void store_cursor_init(struct store_iov_cursor *c, const struct iovec *iov, int iovcnt);
void store_cursor_advance(struct store_iov_cursor *c, uint64_t n);
/*
 * Describe at most `limit` bytes from the cursor in out[0..max) without
 * advancing; zero-length entries are skipped. Returns the number of entries
 * and their total in *bytes.
 */
int store_cursor_fill(const struct store_iov_cursor *c, struct iovec *out, int max,
		      uint64_t limit, uint64_t *bytes);
/*
 * Copy n bytes between the cursor and a flat buffer, advancing the cursor.
 * The cursor's segments are accessed through the user memory accessor
 * (they may be an application's memory): 0, or -EFAULT at the first
 * segment that cannot be reached.
 */
int store_cursor_to_iov(struct store_iov_cursor *c, const void *src, size_t n);
int store_cursor_from_iov(struct store_iov_cursor *c, void *dst, size_t n);
int store_cursor_zero(struct store_iov_cursor *c, uint64_t n);

/*
 * Fill out[0..max) with entries pointing at store_zeros that cover at
 * most len bytes; returns the count and the covered length in *bytes.
 */
int store_zero_iov(struct iovec *out, int max, uint64_t len, uint64_t *bytes);

#endif /* UCMD_STORE_COMMON_H */
