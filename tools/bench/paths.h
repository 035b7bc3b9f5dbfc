/* SPDX-License-Identifier: MIT */
/* How one I/O is expressed on each path, and the verify pattern. */
#ifndef UCMD_BENCH_PATHS_H
#define UCMD_BENCH_PATHS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/uio.h>

#include "job.h"

struct io_unit {
	void *buf;
	struct iovec iov;	/* the vectored form: one segment, the same buffer */
	uint64_t off;		/* bytes from the start of the namespace */
	uint32_t len;
	unsigned idx;		/* registered buffer index (--fixedbufs) */
	bool write;
	uint64_t t_sub;		/* when its submit call returned (ns) */
};

/* Fill sqe for u on the registered file slot 0. */
void path_prep(const struct bench_opts *o, const struct bench_target *t,
	       struct io_uring_sqe *sqe, struct io_unit *u);
/* res a CQE must carry for u: 0 for passthru, the length for block. */
int path_expected_res(const struct bench_opts *o, const struct io_unit *u);
/* NVME_IOCTL_IO64_CMD[_VEC] on fd, blocking: 0, NVMe status (> 0) or -errno. */
long path_sync(const struct bench_opts *o, const struct bench_target *t, int fd,
	       struct io_unit *u);

/* The data written at a byte offset depends only on (seed, offset): any
 * read anywhere can be checked, however writes and threads interleave. */
void pattern_fill(void *buf, uint32_t len, uint64_t off, uint64_t seed);
/* Number of 8-byte words that differ (0: good). */
uint64_t pattern_check(const void *buf, uint32_t len, uint64_t off, uint64_t seed);

#endif
