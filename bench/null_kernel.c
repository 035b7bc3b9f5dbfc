/* SPDX-License-Identifier: MIT */
/*
 * The kernel peer: io_uring on /dev/null through liburing 2.3, which has no
 * io_uring_prep_uring_cmd, so the SQE is filled by hand.
 */
#include <liburing.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "null_bench.h"

struct kernel_peer {
	struct io_uring ring;
	int fd;
};

double bench_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

struct kernel_peer *kernel_peer_new(unsigned entries)
{
	struct kernel_peer *p = calloc(1, sizeof(*p));
	struct io_uring_params params = { .flags = IORING_SETUP_SQE128 | IORING_SETUP_CQE32 };
	int ret;

	if (!p)
		return NULL;
	p->fd = -1;
	ret = io_uring_queue_init_params(entries, &p->ring, &params);
	if (ret) {
		fprintf(stderr, "io_uring_queue_init_params: %s\n", strerror(-ret));
		free(p);
		return NULL;
	}
	p->fd = open("/dev/null", O_RDWR);
	if (p->fd < 0) {
		fprintf(stderr, "/dev/null: %s\n", strerror(errno));
		goto fail;
	}
	ret = io_uring_register_files(&p->ring, &p->fd, 1);
	if (ret) {
		fprintf(stderr, "io_uring_register_files: %s\n", strerror(-ret));
		goto fail;
	}
	return p;
fail:
	kernel_peer_free(p);
	return NULL;
}

static void prep(struct io_uring_sqe *sqe, enum bench_op op, uint64_t data)
{
	/*
	 * Both halves of the 128-byte SQE: the command area must be zero. The
	 * empty asm hides the pointer's origin from gcc's LTO object-size
	 * tracking, which takes liburing's SQE for a 64-byte object.
	 */
	void *whole = sqe;
	__asm__("" : "+r"(whole));
	memset(whole, 0, 2 * sizeof(*sqe));
	if (op == BENCH_NOP) {
		sqe->opcode = IORING_OP_NOP;
	} else {
		sqe->opcode = IORING_OP_URING_CMD;
		sqe->fd = 0;		/* registered index */
		sqe->flags = IOSQE_FIXED_FILE;
		sqe->cmd_op = 0;
	}
	sqe->user_data = data;
}

static int expected_res(enum bench_op op)
{
	return op == BENCH_URING_CMD_FAIL ? -EOPNOTSUPP : 0;
}

enum bench_op kernel_null_op(int probe)
{
	return probe == 0 ? BENCH_URING_CMD : probe == -EOPNOTSUPP ? BENCH_URING_CMD_FAIL :
	       BENCH_NOP;
}

const char *bench_op_name(enum bench_op op)
{
	switch (op) {
	case BENCH_URING_CMD:
		return "uring_cmd";
	case BENCH_URING_CMD_FAIL:
		return "uring_cmd(-EOPNOTSUPP)";
	case BENCH_NOP:
		return "nop";
	}
	return "?";
}

int kernel_peer_probe(struct kernel_peer *p, enum bench_op op)
{
	struct io_uring_cqe *cqe;
	int ret, res;

	prep(io_uring_get_sqe(&p->ring), op, 0);
	ret = io_uring_submit_and_wait(&p->ring, 1);
	if (ret < 0)
		return ret;
	ret = io_uring_peek_cqe(&p->ring, &cqe);
	if (ret)
		return ret;
	res = cqe->res;
	io_uring_cqe_seen(&p->ring, cqe);
	return res;
}

static void one_batch(struct kernel_peer *p, unsigned batch, enum bench_op op)
{
	struct io_uring_cqe *cqe;
	unsigned head, seen = 0;
	int ret, want = expected_res(op);

	for (unsigned i = 0; i < batch; i++) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(&p->ring);
		if (!sqe) {
			fprintf(stderr, "kernel: SQ full\n");
			exit(1);
		}
		prep(sqe, op, i);
	}
	ret = io_uring_submit_and_wait(&p->ring, batch);
	if (ret != (int)batch) {
		fprintf(stderr, "io_uring_submit_and_wait: %d of %u\n", ret, batch);
		exit(1);
	}
	io_uring_for_each_cqe(&p->ring, head, cqe) {
		if (cqe->res != want) {
			fprintf(stderr, "kernel: CQE res %d (%s), expected %d\n", cqe->res,
				strerror(-cqe->res), want);
			exit(1);
		}
		seen++;
	}
	if (seen != batch) {
		fprintf(stderr, "kernel: %u CQEs for %u SQEs\n", seen, batch);
		exit(1);
	}
	io_uring_cq_advance(&p->ring, seen);
}

int64_t kernel_peer_run(struct kernel_peer *p, unsigned batch, enum bench_op op, double seconds,
			double *elapsed)
{
	unsigned every = bench_check_every(batch);
	double start = bench_now(), now;
	int64_t ops = 0;

	do {
		for (unsigned i = 0; i < every; i++)
			one_batch(p, batch, op);
		ops += (int64_t)every * batch;
		now = bench_now();
	} while (now - start < seconds);
	*elapsed = now - start;
	return ops;
}

void kernel_peer_free(struct kernel_peer *p)
{
	if (!p)
		return;
	io_uring_queue_exit(&p->ring);
	if (p->fd >= 0)
		close(p->fd);
	free(p);
}

int64_t kernel_peer_run_n(struct kernel_peer *p, unsigned batch, enum bench_op op, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		one_batch(p, batch, op);
	return (int64_t)(n * batch);
}
