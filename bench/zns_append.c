/* SPDX-License-Identifier: MIT */
/*
 * bench_zns: Zone Append against plain writes on the same zoned RAM
 * namespace (4 KiB blocks, 16 zones of 16 MiB), 4 KiB at queue depth 32,
 * through the public API with the controller on its own thread; and the
 * time of one full Zone Management Receive report of 10,000 zones. Not a
 * test: figures for docs/performance.md.
 *
 *   bench_zns [SECONDS per run, default 2] [RUNS, best of, default 3]
 *
 * Appends go 32 at a time into one zone until its capacity is spoken for,
 * then into the next; writes go to the write pointer, each the next block
 * (in submission order, which the single queue keeps). When every zone is
 * used the queue drains and Reset Zone (select all) starts over; the resets
 * are outside the timed I/O.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <ucmd/ctrl.h>
#include <ucmd/nvme.h>
#include <ucmd/ucmd.h>

#include "posargs.h"

#define BS	4096u
#define ZSZE	4096u		/* blocks: 16 MiB */
#define NR_Z	16u
#define QD	32u

struct rig {
	struct ucmd_ctrl *c;
	struct ucmd_engine *e;
	struct ucmd_nvme_host *host;
	struct ucmd_ring ring;
	int ng;
	void *buf;
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int rig_up(struct rig *r, uint64_t nsze, uint64_t zsze, uint8_t lbaf)
{
	struct ucmd_ctrl_params cp = { .mode = UCMD_CTRL_THREAD };
	struct ucmd_ns_params np = { .nsze = nsze, .lbaf = lbaf, .store = UCMD_NS_STORE_RAM,
				     .attach = true, .zoned = { .zone_size = zsze } };
	struct io_uring_params p = { .flags = IORING_SETUP_SQE128 | IORING_SETUP_CQE32 };

	if (ucmd_ctrl_create(&cp, &r->c) || ucmd_ctrl_ns_create(r->c, &np) != 1 ||
	    ucmd_engine_create(&r->e) || ucmd_nvme_attach(r->e, r->c, NULL, &r->host) ||
	    ucmd_queue_init_engine(r->e, 2 * QD, &r->ring, &p))
		return -1;
	r->ng = ucmd_open(r->e, "ng0n1", O_RDWR);
	r->buf = ucmd_buf_alloc(r->e, 1u << 20);
	if (r->ng < 0 || !r->buf)
		return -1;
	memset(r->buf, 0xa5, 1u << 20);
	return 0;
}

static void rig_down(struct rig *r)
{
	ucmd_buf_free(r->e, r->buf);
	ucmd_queue_exit(&r->ring);
	ucmd_close(r->e, r->ng);
	ucmd_nvme_detach(r->host);
	ucmd_engine_free(r->e);
	ucmd_ctrl_destroy(r->c);
}

static void queue(struct rig *r, uint8_t opcode, uint64_t slba)
{
	struct nvme_uring_cmd c = { .opcode = opcode, .nsid = 1, .data_len = BS,
				    .addr = (uint64_t)(uintptr_t)r->buf,
				    .cdw10 = (uint32_t)slba, .cdw11 = (uint32_t)(slba >> 32) };

	ucmd_prep_nvme_cmd(ucmd_get_sqe(&r->ring), r->ng, NVME_URING_CMD_IO, &c);
}

static int reap(struct rig *r, unsigned n)
{
	int bad = 0;

	for (unsigned i = 0; i < n; i++) {
		struct io_uring_cqe *cqe;

		if (ucmd_wait_cqe(&r->ring, &cqe))
			return -1;
		bad |= cqe->res != 0;
		ucmd_cqe_seen(&r->ring, cqe);
	}
	return bad ? -1 : 0;
}

static int reset_all(struct rig *r)
{
	struct nvme_uring_cmd c = { .opcode = 0x79, .nsid = 1, .cdw13 = 4 | 1u << 8 };

	ucmd_prep_nvme_cmd(ucmd_get_sqe(&r->ring), r->ng, NVME_URING_CMD_IO, &c);
	ucmd_submit(&r->ring);
	return reap(r, 1);
}

/* IOPS of 4 KiB appends (append) or writes at the write pointer, QD 32 */
static double run(struct rig *r, bool append, double secs)
{
	uint64_t ios = 0, next = 0;	/* the next block in the namespace's order */
	double busy = 0, t0;
	unsigned inflight = 0;

	if (reset_all(r))
		return -1;
	t0 = now();
	while (busy + (now() - t0) < secs) {
		while (inflight < QD && next < (uint64_t)NR_Z * ZSZE) {
			uint64_t zone = next / ZSZE;

			queue(r, append ? 0x7d : 0x01, append ? zone * ZSZE : next);
			next++;
			inflight++;
		}
		ucmd_submit(&r->ring);
		if (reap(r, 1))
			return -1;
		inflight--;
		ios++;
		if (next == (uint64_t)NR_Z * ZSZE && !inflight) {
			busy += now() - t0;
			if (reset_all(r))
				return -1;
			next = 0;
			t0 = now();
		}
	}
	if (reap(r, inflight))
		return -1;
	busy += now() - t0;
	return (double)(ios + inflight) / busy;
}

/* Milliseconds for one full report of every zone of a 10,000-zone namespace */
static double report_ms(void)
{
	struct rig r = { 0 };
	uint32_t len = 64 + 10000 * 64;
	struct nvme_uring_cmd c = { .opcode = 0x7a, .nsid = 1, .data_len = len,
				    .cdw12 = len / 4 - 1 };
	double best = 1e9;
	void *rep;

	if (rig_up(&r, 10000 * 16, 16, 0))
		return -1;
	rep = ucmd_buf_alloc(r.e, len);
	if (!rep)
		return -1;
	c.addr = (uint64_t)(uintptr_t)rep;
	for (int i = 0; i < 200; i++) {
		double t = now();

		ucmd_prep_nvme_cmd(ucmd_get_sqe(&r.ring), r.ng, NVME_URING_CMD_IO, &c);
		ucmd_submit(&r.ring);
		if (reap(&r, 1) || *(uint64_t *)rep != 10000)
			return -1;
		t = now() - t;
		best = t < best ? t : best;
	}
	ucmd_buf_free(r.e, rep);
	rig_down(&r);
	return best * 1e3;
}

int main(int argc, char **argv)
{
	double secs = 2, wbest = 0, abest = 0;
	int runs = 3, a = bench_posargs(argc, argv, "[SECONDS] [RUNS]", &secs, &runs, NULL, NULL);
	struct rig r = { 0 };

	if (a)
		return a == 1 ? 0 : 2;
	if (rig_up(&r, (uint64_t)NR_Z * ZSZE, ZSZE, 4)) {
		fprintf(stderr, "bench_zns: setup failed: %s\n", ucmd_last_error());
		return 1;
	}
	for (int i = 0; i < runs; i++) {
		double w = run(&r, false, secs), a = run(&r, true, secs);

		if (w < 0 || a < 0) {
			fprintf(stderr, "bench_zns: a command failed\n");
			return 1;
		}
		wbest = w > wbest ? w : wbest;
		abest = a > abest ? a : abest;
	}
	rig_down(&r);
	printf("4K QD%u on a zoned RAM namespace, controller thread, best of %d x %.1f s\n", QD,
	       runs, secs);
	printf("  write at the write pointer: %10.0f IOPS\n", wbest);
	printf("  zone append:                %10.0f IOPS  (%.2fx writes)\n", abest,
	       abest / wbest);
	printf("  full report of 10,000 zones: %.3f ms (best of 200, submission to completion)\n",
	       report_ms());
	return 0;
}
