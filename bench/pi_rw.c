/* SPDX-License-Identifier: MIT */
/*
 * bench_pi: 4 KiB random writes and reads at queue depth 32 on one RAM
 * namespace of 4096 + 8 byte blocks (separate metadata), formatted without
 * protection and then with PI type 1 (16b guard): the host sends tuples it
 * holds (PRACT 0) and the controller checks guard, application and
 * reference tag on every block (PRCHK all), both ways. The same again on
 * 4096 + 16 with the 64b guard (LBA format 10). Through the public API with
 * the controller on its own thread. Not a test: figures for
 * docs/performance.md.
 *
 *   bench_pi [SECONDS per run, default 2] [RUNS, best of, default 3]
 *
 * The host's tuples are the controller's own: the namespace is first
 * filled with PRACT (the controller generates them) and its metadata read
 * back, so the timed loop spends nothing on the host's side of the CRC.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <isa-l/crc.h>
#include <ucmd/ctrl.h>
#include <ucmd/nvme.h>
#include <ucmd/ucmd.h>

#include "posargs.h"

#define BS	4096u
#define NSZE	16384u		/* 64 MiB */
#define QD	32u
#define PRCHK	(7u << 26)	/* guard, application and reference tag */
#define PRACT	(8u << 26)
#define LBAT	0x5a5au

struct rig {
	struct ucmd_ctrl *c;
	struct ucmd_engine *e;
	struct ucmd_nvme_host *host;
	struct ucmd_ring ring;
	int ng, ctl;
	uint8_t *buf, *md;	/* one data block for every command; every block's metadata */
	unsigned ms;
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int reap(struct rig *r, unsigned n)
{
	int bad = 0;

	for (unsigned i = 0; i < n; i++) {
		struct io_uring_cqe *cqe;

		if (ucmd_wait_cqe(&r->ring, &cqe))
			return -1;
		if (cqe->res)
			fprintf(stderr, "bench_pi: status %#x (%s)\n", (unsigned)cqe->res, ucmd_last_error());
		bad |= cqe->res != 0;
		ucmd_cqe_seen(&r->ring, cqe);
	}
	return bad ? -1 : 0;
}

static int format(struct rig *r, unsigned lbaf, unsigned pi)
{
	struct nvme_uring_cmd c = { .opcode = 0x80, .nsid = 1, .cdw10 = lbaf | pi << 5,
				    .timeout_ms = 60000 };

	ucmd_prep_nvme_cmd(ucmd_get_sqe(&r->ring), r->ctl, NVME_URING_CMD_ADMIN, &c);
	ucmd_submit(&r->ring);
	return reap(r, 1);
}

static void queue(struct rig *r, uint8_t opcode, uint64_t slba, uint32_t cdw12)
{
	struct nvme_uring_cmd c = { .opcode = opcode, .nsid = 1, .data_len = BS,
				    .addr = (uint64_t)(uintptr_t)r->buf,
				    .metadata = (uint64_t)(uintptr_t)(r->md + slba * r->ms),
				    .metadata_len = r->ms,
				    .cdw10 = (uint32_t)slba, .cdw11 = (uint32_t)(slba >> 32),
				    .cdw12 = cdw12, .cdw14 = (uint32_t)slba,
				    .cdw15 = LBAT | 0xffffu << 16 };

	ucmd_prep_nvme_cmd(ucmd_get_sqe(&r->ring), r->ng, NVME_URING_CMD_IO, &c);
}

/* Every block written once with cdw12's PRINFO, and its metadata read back */
static int fill(struct rig *r, uint32_t prinfo)
{
	for (uint64_t b = 0; b < NSZE; b += QD) {
		for (unsigned i = 0; i < QD; i++)
			queue(r, 0x01, b + i, prinfo);
		ucmd_submit(&r->ring);
		if (reap(r, QD))
			return -1;
		for (unsigned i = 0; i < QD; i++)
			queue(r, 0x02, b + i, 0);
		ucmd_submit(&r->ring);
		if (reap(r, QD))
			return -1;
	}
	return 0;
}

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* IOPS of 4 KiB random writes (opcode 1) or reads (2), QD 32 */
static double run(struct rig *r, uint8_t opcode, uint32_t prinfo, double secs)
{
	uint64_t ios = 0, seed = 0x9e3779b97f4a7c15ull;
	unsigned inflight = 0;
	double t0 = now();

	while (now() - t0 < secs) {
		while (inflight < QD) {
			queue(r, opcode, rnd(&seed) % NSZE, prinfo);
			inflight++;
		}
		ucmd_submit(&r->ring);
		if (reap(r, 1))
			return -1;
		inflight--;
		ios++;
	}
	if (reap(r, inflight))
		return -1;
	return (double)(ios + inflight) / (now() - t0);
}

/*
 * One controller per LBA format: Format NVM then only adds protection, so
 * the host's view of the block geometry stays what it read at attach (a
 * uring_cmd Format, as in Linux, does not revalidate it before completing)
 */
static int rig_up(struct rig *r, uint8_t lbaf, unsigned ms)
{
	struct ucmd_ctrl_params cp = { .mode = UCMD_CTRL_THREAD };
	struct ucmd_ns_params np = { .nsze = NSZE, .lbaf = lbaf, .store = UCMD_NS_STORE_RAM,
				     .attach = true };
	struct io_uring_params p = { .flags = IORING_SETUP_SQE128 | IORING_SETUP_CQE32 };

	if (ucmd_ctrl_create(&cp, &r->c) || ucmd_ctrl_ns_create(r->c, &np) != 1 ||
	    ucmd_engine_create(&r->e) || ucmd_nvme_attach(r->e, r->c, NULL, &r->host) ||
	    ucmd_queue_init_engine(r->e, 2 * QD, &r->ring, &p))
		return -1;
	r->ng = ucmd_open(r->e, "ng0n1", O_RDWR);
	r->ctl = ucmd_open(r->e, "nvme0", O_RDWR);
	r->buf = ucmd_buf_alloc(r->e, BS);
	r->md = ucmd_buf_alloc(r->e, (size_t)NSZE * 16);
	if (r->ng < 0 || r->ctl < 0 || !r->buf || !r->md)
		return -1;
	for (unsigned i = 0; i < BS; i++)
		r->buf[i] = (uint8_t)(i * 7 + 3);
	memset(r->md, 0, (size_t)NSZE * 16);
	r->ms = ms;
	return 0;
}

static void rig_down(struct rig *r)
{
	ucmd_buf_free(r->e, r->md);
	ucmd_buf_free(r->e, r->buf);
	ucmd_queue_exit(&r->ring);
	ucmd_close(r->e, r->ng);
	ucmd_close(r->e, r->ctl);
	ucmd_nvme_detach(r->host);
	ucmd_engine_free(r->e);
	ucmd_ctrl_destroy(r->c);
}

struct res { double w, r; };

/* one run of random writes then random reads with prinfo, kept if better */
static int measure(struct rig *r, uint32_t prinfo, double secs, struct res *out)
{
	double w = run(r, 0x01, prinfo, secs), rd = run(r, 0x02, prinfo, secs);

	if (w < 0 || rd < 0)
		return -1;
	out->w = w > out->w ? w : out->w;
	out->r = rd > out->r ? rd : out->r;
	return 0;
}

/*
 * Without protection and with it, alternating run by run (so that a busy
 * machine slows both alike): each switch is a Format NVM and a refill
 */
static int compare(struct rig *r, uint8_t lbaf, double secs, int runs, struct res *none,
		   struct res *pi)
{
	*none = *pi = (struct res){ 0 };
	for (int i = 0; i < runs; i++)
		if (format(r, lbaf, 0) || fill(r, 0) || measure(r, 0, secs, none) ||
		    format(r, lbaf, 1) || fill(r, PRACT) || measure(r, PRCHK, secs, pi))
			return -1;
	return 0;
}

/*
 * The 16b guard's cost on this machine: ISA-L's CRC-16 T10-DIF over 4 KiB
 * blocks, in GB/s and nanoseconds per block (the controller computes one
 * per block checked or generated)
 */
static void crc_cost(void)
{
	static uint8_t blk[BS];
	uint16_t acc = 0;
	unsigned n = 1u << 18;
	double t;

	for (unsigned i = 0; i < BS; i++)
		blk[i] = (uint8_t)(i * 13 + 1);
	t = now();
	for (unsigned i = 0; i < n; i++)
		acc ^= crc16_t10dif(acc, blk, BS);
	t = now() - t;
	printf("  CRC-16 T10-DIF (ISA-L) over 4 KiB: %.2f GB/s, %.0f ns a block (%04x)\n",
	       (double)n * BS / t / 1e9, t / n * 1e9, acc);
}

int main(int argc, char **argv)
{
	double secs = 2;
	int runs = 3, a = bench_posargs(argc, argv, "[SECONDS] [RUNS]", &secs, &runs, NULL, NULL);
	struct res none, pi1, none16, pi64;
	struct rig r = { 0 }, r2 = { 0 };

	if (a)
		return a == 1 ? 0 : 2;
	/* 4096 + 8: no protection, then type 1 with the 16b guard */
	if (rig_up(&r, 5, 8) || rig_up(&r2, 10, 16)) {
		fprintf(stderr, "bench_pi: setup failed: %s\n", ucmd_last_error());
		return 1;
	}
	/* and 4096 + 16 with the 64b guard (LBA format 10) */
	if (compare(&r, 5, secs, runs, &none, &pi1) ||
	    compare(&r2, 10, secs, runs, &none16, &pi64)) {
		fprintf(stderr, "bench_pi: a command failed\n");
		return 1;
	}
	printf("4K random QD%u on a RAM namespace of %u blocks, separate metadata, controller "
	       "thread, best of %d x %.1f s\n", QD, NSZE, runs, secs);
	printf("                                 randwrite IOPS     randread IOPS\n");
	printf("  4096+8, no PI                  %10.0f         %10.0f\n", none.w, none.r);
	printf("  4096+8, PI type 1, 16b guard   %10.0f (%.2fx)  %10.0f (%.2fx)\n", pi1.w,
	       pi1.w / none.w, pi1.r, pi1.r / none.r);
	printf("  4096+16, no PI                 %10.0f         %10.0f\n", none16.w, none16.r);
	printf("  4096+16, PI type 1, 64b guard  %10.0f (%.2fx)  %10.0f (%.2fx)\n", pi64.w,
	       pi64.w / none16.w, pi64.r, pi64.r / none16.r);
	crc_cost();
	rig_down(&r);
	rig_down(&r2);
	return 0;
}
