/* SPDX-License-Identifier: MIT */
/* The randread loop of bench_daemon's ucmd peers (bench_daemon.h). */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_daemon.h"
#include "null_bench.h"

struct rr {
	struct ucmd_engine *e;
	struct ucmd_ring ring;
	int fd;
	unsigned qd, batch;
	enum rr_buf buf;
	uint64_t blocks;	/* 4 KiB blocks in the range read */
	uint32_t nlb;		/* LBAs per 4 KiB */
	uint8_t *mem;		/* qd * 4 KiB, one allocation: a daemon client has few regions */
	void **bufs;
	unsigned *freel, nfree;
	uint64_t rng;
};

static void die(const char *what, int res)
{
	fprintf(stderr, "bench_daemon: randread: %s: %d (%s)\n", what, res,
		res < 0 ? strerror(-res) : "NVMe status");
	exit(1);
}

static uint64_t xrnd(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545f4914f6cdd1dull;
}

static void *buf_get(struct rr *r, size_t len)
{
	void *p;

	if (r->buf != RR_MALLOC)
		return ucmd_buf_alloc(r->e, len);
	return posix_memalign(&p, 4096, len) ? NULL : p;
}

static void buf_put(struct rr *r, void *p)
{
	if (r->buf != RR_MALLOC)
		ucmd_buf_free(r->e, p);
	else
		free(p);
}

/* Identify Namespace through the controller device: the LBA size. */
static int lba_size(struct rr *r, uint32_t *lba)
{
	uint8_t *id = buf_get(r, 4096);
	int cfd = ucmd_open(r->e, "nvme0", O_RDONLY), ret;
	struct io_uring_cqe *cqe;

	if (!id || cfd < 0)
		return cfd < 0 ? cfd : -ENOMEM;
	struct nvme_uring_cmd c = { .opcode = 0x06, .nsid = 1,
				    .addr = (uint64_t)(uintptr_t)id, .data_len = 4096 };
	ucmd_prep_nvme_cmd(ucmd_get_sqe(&r->ring), cfd, NVME_URING_CMD_ADMIN, &c);
	ret = ucmd_submit_and_wait(&r->ring, 1);
	if (ret >= 0)
		ret = ucmd_wait_cqe(&r->ring, &cqe);
	if (ret >= 0) {
		ret = cqe->res;
		ucmd_cqe_seen(&r->ring, cqe);
	}
	if (ret == 0) {
		unsigned idx = (id[26] & 0xf) | (((id[26] >> 5) & 3u) << 4);
		*lba = 1u << id[128 + 4 * idx + 2];
	}
	ucmd_close(r->e, cfd);
	buf_put(r, id);
	return ret;
}

struct rr *rr_new(struct ucmd_engine *e, const char *ng, uint64_t size, unsigned qd,
		  unsigned batch, enum rr_buf buf)
{
	struct rr *r = calloc(1, sizeof(*r));
	struct io_uring_params p = { .flags = IORING_SETUP_SQE128 | IORING_SETUP_CQE32 };
	uint32_t lba = 0;
	int ret;

	if (!r)
		return NULL;
	r->e = e;
	r->qd = qd;
	r->batch = batch;
	r->buf = buf;
	r->rng = 0x5eed;
	r->blocks = size / 4096;
	ret = ucmd_queue_init_engine(e, qd, &r->ring, &p);
	if (ret)
		die("ring", ret);
	r->fd = ucmd_open(e, ng, O_RDONLY);
	if (r->fd < 0)
		die(ng, r->fd);
	ret = lba_size(r, &lba);
	if (ret || !lba || lba > 4096)
		die("Identify Namespace", ret ? ret : -EINVAL);
	r->nlb = 4096 / lba;
	r->bufs = calloc(qd, sizeof(*r->bufs));
	r->freel = calloc(qd, sizeof(*r->freel));
	if (!r->bufs || !r->freel)
		die("buffers", -ENOMEM);
	r->mem = buf_get(r, (size_t)qd * 4096);
	if (!r->mem)
		die("buffers", -ENOMEM);
	memset(r->mem, 0, (size_t)qd * 4096);
	for (unsigned i = 0; i < qd; i++) {
		r->bufs[i] = r->mem + (size_t)i * 4096;
		r->freel[r->nfree++] = i;
	}
	if (buf == RR_ALLOC_FIXED) {
		struct iovec *iov = calloc(qd, sizeof(*iov));
		if (!iov)
			die("buffers", -ENOMEM);
		for (unsigned i = 0; i < qd; i++)
			iov[i] = (struct iovec){ r->bufs[i], 4096 };
		ret = ucmd_register_buffers(&r->ring, iov, qd);
		free(iov);
		if (ret)
			die("register buffers", ret);
	}
	return r;
}

/* Fill up to qd in flight, submit the batch; reap at least batch (or all, when stopping). */
int64_t rr_run(struct rr *r, double seconds, uint64_t ops, double *elapsed)
{
	double start = bench_now(), now = start;
	uint64_t done = 0, issued = 0;
	unsigned tick = 0;
	bool stop = false;

	for (;;) {
		unsigned n = 0;
		while (!stop && r->nfree && n < r->batch) {
			struct io_uring_sqe *sqe = ucmd_get_sqe(&r->ring);
			unsigned i = r->freel[--r->nfree];
			uint64_t slba = (xrnd(&r->rng) % r->blocks) * r->nlb;
			struct nvme_uring_cmd c = {
				.opcode = 0x02, .nsid = 1, .addr = (uint64_t)(uintptr_t)r->bufs[i],
				.data_len = 4096, .cdw10 = (uint32_t)slba,
				.cdw11 = (uint32_t)(slba >> 32), .cdw12 = r->nlb - 1,
			};
			ucmd_prep_nvme_cmd(sqe, r->fd, NVME_URING_CMD_IO, &c);
			if (r->buf == RR_ALLOC_FIXED) {
				sqe->uring_cmd_flags = IORING_URING_CMD_FIXED;
				sqe->buf_index = (uint16_t)i;
			}
			sqe->user_data = i;
			n++;
			issued++;
			if (ops && issued >= ops)
				stop = true;
		}
		unsigned inflight = r->qd - r->nfree;
		if (!inflight)
			break;
		unsigned want = stop ? inflight : (inflight < r->batch ? inflight : r->batch);
		int ret = ucmd_submit_and_wait(&r->ring, want);
		if (ret < 0)
			die("submit", ret);
		struct io_uring_cqe *cqe;
		unsigned head, got = 0;
		ucmd_for_each_cqe(&r->ring, head, cqe) {
			if (cqe->res)
				die("read", cqe->res);
			r->freel[r->nfree++] = (unsigned)cqe->user_data;
			got++;
		}
		ucmd_cq_advance(&r->ring, got);
		done += got;
		if (!ops && !stop && ++tick % 16 == 0) {
			now = bench_now();
			if (now - start >= seconds)
				stop = true;
		}
	}
	*elapsed = bench_now() - start;
	return (int64_t)done;
}

void rr_free(struct rr *r)
{
	if (!r)
		return;
	if (r->buf == RR_ALLOC_FIXED)
		ucmd_unregister_buffers(&r->ring);
	buf_put(r, r->mem);
	ucmd_close(r->e, r->fd);
	ucmd_queue_exit(&r->ring);
	free(r->bufs);
	free(r->freel);
	free(r);
}
