/* SPDX-License-Identifier: MIT */
/*
 * The main job: write a pattern over a region of the namespace with queued
 * passthrough commands, verify it with NVMe Compare, read it back and check
 * every byte, then identify the controller and show the SMART log.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <nvme/types.h>

#include "cli.h"

#define RUN_CHUNK (128u * 1024)
#define RUN_QD 16

struct job {
	struct cli *cli;
	uint64_t bytes;
	uint8_t *bufs[RUN_QD];
	bool tty;
	double t0;
	uint64_t seed;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Every 8 bytes name their own byte offset, so misplaced data shows. */
static void fill(uint8_t *buf, uint64_t off, uint64_t seed)
{
	for (uint32_t i = 0; i < RUN_CHUNK; i += 8) {
		uint64_t v = (off + i) ^ seed;
		memcpy(buf + i, &v, 8);
	}
}

static bool check(const uint8_t *buf, uint64_t off, uint64_t seed)
{
	for (uint32_t i = 0; i < RUN_CHUNK; i += 8) {
		uint64_t v;
		memcpy(&v, buf + i, 8);
		if (v != ((off + i) ^ seed))
			return false;
	}
	return true;
}

static void progress(struct job *j, const char *phase, uint64_t done, bool final)
{
	double dt = now_s() - j->t0;
	double mib = (double)done / (1 << 20);

	if (!j->tty && !final)
		return;
	printf("%s%-8s %7.1f / %.1f MiB  %8.1f MiB/s%s", j->tty ? "\r" : "", phase, mib,
	       (double)j->bytes / (1 << 20), dt > 0 ? mib / dt : 0.0, final ? "\n" : "");
	fflush(stdout);
}

/* One phase over the region, RUN_QD commands in flight. */
static int phase(struct job *j, const char *name, uint8_t opcode)
{
	struct session *s = &j->cli->s;
	uint64_t nchunks = j->bytes / RUN_CHUNK, next = 0, done = 0;
	unsigned inflight = 0;
	uint32_t nlb = RUN_CHUNK / s->lba_size;

	j->t0 = now_s();
	while (done < nchunks) {
		while (inflight < RUN_QD && next < nchunks) {
			unsigned slot = (unsigned)(next % RUN_QD);
			uint64_t off = next * RUN_CHUNK, slba = off / s->lba_size;
			struct nvme_uring_cmd c = { 0 };
			if (opcode != nvme_cmd_read)
				fill(j->bufs[slot], off, j->seed);
			c.opcode = opcode;
			c.nsid = s->nsid;
			c.addr = (uint64_t)(uintptr_t)j->bufs[slot];
			c.data_len = RUN_CHUNK;
			c.cdw10 = (uint32_t)slba;
			c.cdw11 = (uint32_t)(slba >> 32);
			c.cdw12 = nlb - 1;
			struct io_uring_sqe *sqe = ucmd_get_sqe(&s->ring);
			ucmd_prep_nvme_cmd(sqe, s->ns_fd, NVME_URING_CMD_IO, &c);
			sqe->user_data = next;
			next++;
			inflight++;
		}
		int ret = ucmd_submit_and_wait(&s->ring, 1);
		if (ret < 0) {
			print_status_error(name, ret);
			return ret;
		}
		struct io_uring_cqe *cqe;
		unsigned head, n = 0;
		ucmd_for_each_cqe(&s->ring, head, cqe) {
			uint64_t idx = cqe->user_data;
			if (cqe->res) {
				fprintf(stderr, "\n%s at byte %" PRIu64 ": ", name, idx * RUN_CHUNK);
				print_status_error(name, cqe->res);
				return -EIO;
			}
			if (opcode == nvme_cmd_read &&
			    !check(j->bufs[idx % RUN_QD], idx * RUN_CHUNK, j->seed)) {
				fprintf(stderr, "\nread: data mismatch at byte %" PRIu64 "\n",
					idx * RUN_CHUNK);
				return -EIO;
			}
			n++;
		}
		ucmd_cq_advance(&s->ring, n);
		inflight -= n;
		done += n;
		if (n)
			progress(j, name, done * RUN_CHUNK, false);
	}
	progress(j, name, done * RUN_CHUNK, true);
	return 0;
}

int cmd_run(struct cli *cli, int argc, char **argv)
{
	struct job j = { .cli = cli, .bytes = 64u << 20, .tty = isatty(STDOUT_FILENO) };
	int ret = 1;

	(void)argc;
	(void)argv;
	if (cli->a.size)
		j.bytes = cli->a.size;
	if (j.bytes % RUN_CHUNK) {
		fprintf(stderr, "run: --size must be a multiple of 128 KiB\n");
		return 2;
	}
	struct session *s = &cli->s;
	if (!s->lba_size || RUN_CHUNK % s->lba_size || s->meta_size) {
		fprintf(stderr, "run: namespace %u needs an active format without metadata\n",
			s->nsid);
		return 1;
	}
	if (j.bytes > s->nsze * s->lba_size) {
		fprintf(stderr, "run: --size is larger than the namespace\n");
		return 1;
	}
	j.seed = (uint64_t)time(NULL) * 0x9e3779b97f4a7c15ull;
	for (int i = 0; i < RUN_QD; i++) {
		j.bufs[i] = aligned_alloc(4096, RUN_CHUNK);
		if (!j.bufs[i])
			goto out;
	}
	printf("ucmd run: %s, namespace %u (%" PRIu64 " x %u bytes), %" PRIu64
	       " MiB in %u KiB commands, queue depth %u\n",
	       s->dir, s->nsid, s->nsze, s->lba_size, j.bytes >> 20, RUN_CHUNK / 1024, RUN_QD);
	if (phase(&j, "write", nvme_cmd_write) || phase(&j, "verify", nvme_cmd_compare) ||
	    phase(&j, "read", nvme_cmd_read))
		goto out;
	struct nvme_uring_cmd fl = { .opcode = nvme_cmd_flush, .nsid = s->nsid };
	int res = session_passthru(s, false, &fl, NULL);
	if (res) {
		print_status_error("flush", res);
		goto out;
	}
	printf("flush    ok\n\n");
	if (cmd_id_ctrl(cli, 0, NULL) || cmd_smart_log(cli, 0, NULL))
		goto out;
	printf("\nrun: all %" PRIu64 " MiB written, verified and read back\n", j.bytes >> 20);
	ret = 0;
out:
	for (int i = 0; i < RUN_QD; i++)
		free(j.bufs[i]);
	return ret;
}
