/* SPDX-License-Identifier: MIT */
/*
 * bench_fdp: 4 KiB random writes at queue depth 32 on a RAM namespace of
 * 256 MiB, through the public API with the controller on its own thread:
 * on a controller without FDP, and on one with FDP where each write carries
 * a placement identifier (DTYPE 2, 8 handles in turn), so that the media
 * model places it and garbage-collects. Both namespaces are written full
 * first (untimed), so that the store's memory is in place and garbage
 * collection runs from the first timed write. Not a test: the figures of
 * docs/performance.md ("Flexible Data Placement"), with the WAF log 22h
 * gives for the FDP runs.
 *
 * Each run also counts the process's CPU time per write: on a machine that
 * others load, the cycles a write costs vary far less than the IOPS the
 * scheduler lets through. With "inline" the controller runs in the
 * submitting thread (UCMD_CTRL_INLINE), so that no thread spins waiting and
 * the CPU time is the commands' alone: the figure for the model's cost.
 *
 *   bench_fdp [SECONDS per run, default 2] [RUNS, best of, default 3] [inline]
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
#define NSZE	65536u		/* blocks: 256 MiB */
#define QD	32u

struct rig {
	struct ucmd_ctrl *c;
	struct ucmd_engine *e;
	struct ucmd_nvme_host *host;
	struct ucmd_ring ring;
	int ng, nvme;
	void *buf;
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int rig_up(struct rig *r, bool fdp, enum ucmd_ctrl_mode mode)
{
	struct ucmd_ctrl_params cp = { .mode = mode };
	struct ucmd_ns_params np = { .nsze = NSZE, .lbaf = 4, .store = UCMD_NS_STORE_RAM,
				     .attach = true };
	struct io_uring_params p = { .flags = IORING_SETUP_SQE128 | IORING_SETUP_CQE32 };

	cp.fdp.enable = fdp;
	if (ucmd_ctrl_create(&cp, &r->c) || ucmd_ctrl_ns_create(r->c, &np) != 1 ||
	    ucmd_engine_create(&r->e) || ucmd_nvme_attach(r->e, r->c, NULL, &r->host) ||
	    ucmd_queue_init_engine(r->e, 2 * QD, &r->ring, &p))
		return -1;
	r->ng = ucmd_open(r->e, "ng0n1", O_RDWR);
	r->nvme = ucmd_open(r->e, "nvme0", O_RDWR);
	r->buf = ucmd_buf_alloc(r->e, QD * BS);
	if (r->ng < 0 || r->nvme < 0 || !r->buf)
		return -1;
	memset(r->buf, 0xa5, QD * BS);
	return 0;
}

static void rig_down(struct rig *r)
{
	ucmd_buf_free(r->e, r->buf);
	ucmd_queue_exit(&r->ring);
	ucmd_close(r->e, r->ng);
	ucmd_close(r->e, r->nvme);
	ucmd_nvme_detach(r->host);
	ucmd_engine_free(r->e);
	ucmd_ctrl_destroy(r->c);
}

static uint64_t rnd(uint64_t *s)
{
	*s = *s * 6364136223846793005ull + 1442695040888963407ull;
	return *s >> 33;
}

static void queue(struct rig *r, bool fdp, uint64_t slba, unsigned slot)
{
	struct nvme_uring_cmd c = { .opcode = 0x01, .nsid = 1, .data_len = BS,
				    .addr = (uint64_t)(uintptr_t)r->buf + (uint64_t)slot * BS,
				    .cdw10 = (uint32_t)slba, .cdw11 = (uint32_t)(slba >> 32) };

	if (fdp) {
		c.cdw12 = 2u << 20;			/* DTYPE: data placement */
		c.cdw13 = (uint32_t)(slba % 8) << 16;	/* DSPEC: handle 0..7 */
	}
	struct io_uring_sqe *sqe = ucmd_get_sqe(&r->ring);

	ucmd_prep_nvme_cmd(sqe, r->ng, NVME_URING_CMD_IO, &c);
	ucmd_sqe_set_data64(sqe, slot);
}

/* IOPS of 4 KiB random writes at QD 32; *cpu_per: CPU seconds per write */
static __attribute__((always_inline)) inline double run(struct rig *r, bool fdp, double secs, uint64_t *seed, double *cpu_per)
{
	uint64_t ios = 0;
	double t0 = now(), c0 = cpu_now();

	for (unsigned i = 0; i < QD; i++)
		queue(r, fdp, rnd(seed) % NSZE, i);
	ucmd_submit(&r->ring);
	while (now() - t0 < secs) {
		struct io_uring_cqe *cqe;

		if (ucmd_wait_cqe(&r->ring, &cqe) || cqe->res)
			return -1;
		unsigned slot = (unsigned)cqe->user_data;

		ucmd_cqe_seen(&r->ring, cqe);
		ios++;
		queue(r, fdp, rnd(seed) % NSZE, slot);
		ucmd_submit(&r->ring);
	}
	for (unsigned i = 0; i < QD; i++) {
		struct io_uring_cqe *cqe;

		if (ucmd_wait_cqe(&r->ring, &cqe))
			return -1;
		ucmd_cqe_seen(&r->ring, cqe);
	}
	*cpu_per = (cpu_now() - c0) / (double)(ios + QD);
	return (double)ios / (now() - t0);
}

/*
 * One function a side, never inlined: a profiler can take either side's
 * timed writes alone (valgrind --toggle-collect=run_fdp, perf's symbols).
 */
static __attribute__((noinline)) double run_plain(struct rig *r, double secs, uint64_t *seed,
						  double *cpu_per)
{
	return run(r, false, secs, seed, cpu_per);
}

static __attribute__((noinline)) double run_fdp(struct rig *r, double secs, uint64_t *seed,
						double *cpu_per)
{
	return run(r, true, secs, seed, cpu_per);
}

/* Every block written once, in order (untimed): the store has its memory, the namespace is full */
static int fill(struct rig *r, bool fdp)
{
	unsigned inflight = 0;

	for (uint64_t lba = 0; lba < NSZE || inflight; ) {
		struct io_uring_cqe *cqe;

		while (inflight < QD && lba < NSZE) {
			queue(r, fdp, lba, (unsigned)(lba % QD));
			lba++;
			inflight++;
		}
		ucmd_submit(&r->ring);
		if (ucmd_wait_cqe(&r->ring, &cqe) || cqe->res)
			return -1;
		ucmd_cqe_seen(&r->ring, cqe);
		inflight--;
	}
	return 0;
}

/* Log 22h's MBMW / HBMW */
static double waf(struct rig *r)
{
	static uint8_t s[64] __attribute__((aligned(4096)));
	struct nvme_uring_cmd c = { .opcode = 0x02, .data_len = sizeof(s),
				    .addr = (uint64_t)(uintptr_t)s,
				    .cdw10 = 0x22 | (sizeof(s) / 4 - 1) << 16, .cdw11 = 1u << 16 };
	struct io_uring_cqe *cqe;
	uint64_t h, m;

	ucmd_prep_nvme_cmd(ucmd_get_sqe(&r->ring), r->nvme, NVME_URING_CMD_ADMIN, &c);
	ucmd_submit(&r->ring);
	if (ucmd_wait_cqe(&r->ring, &cqe) || cqe->res)
		return -1;
	ucmd_cqe_seen(&r->ring, cqe);
	memcpy(&h, s, 8);
	memcpy(&m, s + 16, 8);
	return h ? (double)m / (double)h : 0;
}

int main(int argc, char **argv)
{
	double secs = 2, best[2] = { 0, 0 }, cpu[2] = { 1e9, 1e9 }, w;
	bool inl;
	int runs = 3, a = bench_posargs(argc, argv, "[SECONDS] [RUNS] [inline]", &secs, &runs,
					"inline", &inl);
	struct rig r[2] = { 0 };
	uint64_t seed[2] = { 42, 42 };

	if (a)
		return a == 1 ? 0 : 2;

	for (int fdp = 0; fdp < 2; fdp++)
		if (rig_up(&r[fdp], fdp, inl ? UCMD_CTRL_INLINE : UCMD_CTRL_THREAD) ||
		    fill(&r[fdp], fdp)) {
			fprintf(stderr, "bench_fdp: setup failed: %s\n", ucmd_last_error());
			return 1;
		}
	/* in turn, so that what else the machine does weighs on both alike */
	for (int i = 0; i < runs; i++)
		for (int fdp = 0; fdp < 2; fdp++) {
			double c, v = fdp ? run_fdp(&r[fdp], secs, &seed[fdp], &c)
					 : run_plain(&r[fdp], secs, &seed[fdp], &c);

			if (v < 0) {
				fprintf(stderr, "bench_fdp: a write failed\n");
				return 1;
			}
			best[fdp] = v > best[fdp] ? v : best[fdp];
			cpu[fdp] = c < cpu[fdp] ? c : cpu[fdp];
		}
	w = waf(&r[1]);
	for (int fdp = 0; fdp < 2; fdp++)
		rig_down(&r[fdp]);
	printf("4K random write QD%u, 256 MiB RAM namespace, controller %s, best of %d x %.1f s\n",
	       QD, inl ? "inline" : "thread", runs, secs);
	printf("  without FDP:              %8.0f IOPS, %6.2f us CPU a write\n", best[0], cpu[0] * 1e6);
	printf("  FDP, 8 placement handles: %8.0f IOPS, %6.2f us CPU a write  (%.2fx IOPS, "
	       "%.2fx by CPU; WAF %.2f from log 22h)\n",
	       best[1], cpu[1] * 1e6, best[1] / best[0], cpu[0] / cpu[1], w);
	return 0;
}
