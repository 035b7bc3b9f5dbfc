/* SPDX-License-Identifier: MIT */
/*
 * The null uring_cmd benchmark's peers. ucmd and the kernel's io_uring live
 * in separate files because ucmd's vendored <linux/io_uring.h> twin shares
 * the kernel header's include guard; this header includes neither.
 */
#ifndef BENCH_NULL_BENCH_H
#define BENCH_NULL_BENCH_H

#include <stdint.h>

/* What a peer submits; the kernel falls back when /dev/null lacks uring_cmd. */
enum bench_op {
	BENCH_URING_CMD,	/* expect res == 0 */
	BENCH_URING_CMD_FAIL,	/* kernel only: expect res == -EOPNOTSUPP */
	BENCH_NOP,		/* kernel only: IORING_OP_NOP */
};

struct ucmd_peer;
struct kernel_peer;
struct ucmd_engine;

/*
 * *_peer_run: run batches of `batch` requests of op for at least `seconds`
 * (warm-up is the caller's business) and return the ops completed, with the
 * time they took in *elapsed; -EINVAL for an op the peer cannot do. On a bad
 * CQE it prints what went wrong and exits: a wrong answer is no number.
 */

struct ucmd_peer *ucmd_peer_new(unsigned entries);
/* The same on engine e (which must outlive the peer). */
struct ucmd_peer *ucmd_peer_new_engine(struct ucmd_engine *e, unsigned entries);
int64_t ucmd_peer_run(struct ucmd_peer *p, unsigned batch, enum bench_op op, double seconds,
		      double *elapsed);
void ucmd_peer_free(struct ucmd_peer *p);

struct kernel_peer *kernel_peer_new(unsigned entries);
/* Submit one request of op and return its CQE res (or a setup errno). */
int kernel_peer_probe(struct kernel_peer *p, enum bench_op op);
/*
 * The kernel's like-for-like of a null uring_cmd, given what probing
 * BENCH_URING_CMD returned: the uring_cmd itself where /dev/null has it
 * (Linux 6.0+), else the failing uring_cmd, else a nop.
 */
enum bench_op kernel_null_op(int probe);
/* "uring_cmd", "uring_cmd(-EOPNOTSUPP)" or "nop" */
const char *bench_op_name(enum bench_op op);
int64_t kernel_peer_run(struct kernel_peer *p, unsigned batch, enum bench_op op, double seconds,
			double *elapsed);
void kernel_peer_free(struct kernel_peer *p);

/* Exactly n batches (for instruction counts under callgrind); returns ops. */
int64_t ucmd_peer_run_n(struct ucmd_peer *p, unsigned batch, enum bench_op op, uint64_t n);
int64_t kernel_peer_run_n(struct kernel_peer *p, unsigned batch, enum bench_op op, uint64_t n);

/* Monotonic seconds. */
double bench_now(void);

/* How many batches between clock reads: about 256 ops, so the clock is noise. */
static inline unsigned bench_check_every(unsigned batch)
{
	return batch >= 256 ? 1 : 256 / batch;
}

#endif
