/* SPDX-License-Identifier: MIT */
/*
 * The kernel peer for 4 KiB random reads: the kernel's io_uring reading a
 * file on tmpfs (/dev/shm), i.e. from the page cache, with the same loop
 * shape as `ucmd bench` (QD, submit batch, reap batch, registered file). A
 * separate file because ucmd's uapi header shares <linux/io_uring.h>'s
 * include guard.
 */
#include <liburing.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compare.h"

struct kread {
	struct io_uring ring;
	int fd;
	char path[64];
	uint64_t size;
	unsigned qd;
	void **bufs;
	uint64_t rng;
};

struct kread *kread_new(uint64_t size, unsigned qd)
{
	struct kread *k = calloc(1, sizeof(*k));
	char *chunk = malloc(1 << 20);
	int ret;

	if (!k || !chunk)
		goto fail;
	k->fd = -1;
	k->size = size;
	k->qd = qd;
	k->rng = 0x9e3779b97f4a7c15ull;
	snprintf(k->path, sizeof(k->path), "/dev/shm/ucmd-compare-%d", (int)getpid());
	k->fd = open(k->path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (k->fd < 0) {
		fprintf(stderr, "%s: %s\n", k->path, strerror(errno));
		goto fail;
	}
	unlink(k->path);	/* gone when we are, whatever happens */
	/* real data in every page: a hole would read as zero-fill, not a copy */
	for (uint64_t off = 0; off < size; off += 1 << 20) {
		memset(chunk, (int)(off >> 20) | 1, 1 << 20);
		if (pwrite(k->fd, chunk, 1 << 20, (off_t)off) != 1 << 20) {
			fprintf(stderr, "%s: write: %s\n", k->path, strerror(errno));
			goto fail;
		}
	}
	k->bufs = calloc(qd, sizeof(*k->bufs));
	if (!k->bufs)
		goto fail;
	for (unsigned i = 0; i < qd; i++)
		if (!(k->bufs[i] = aligned_alloc(4096, 4096)))
			goto fail;
		else
			memset(k->bufs[i], 0, 4096);
	ret = io_uring_queue_init(qd, &k->ring, 0);
	if (ret) {
		fprintf(stderr, "io_uring_queue_init: %s\n", strerror(-ret));
		k->ring.ring_fd = -1;
		goto fail;
	}
	ret = io_uring_register_files(&k->ring, &k->fd, 1);
	if (ret) {
		fprintf(stderr, "io_uring_register_files: %s\n", strerror(-ret));
		goto fail;
	}
	free(chunk);
	return k;
fail:
	free(chunk);
	kread_free(k);
	return NULL;
}

static inline uint64_t rnd(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545f4914f6cdd1dull;
}

int64_t kread_run(struct kread *k, unsigned batch, double seconds, uint64_t ops,
		  double *elapsed)
{
	unsigned nfree = k->qd, inflight = 0;
	unsigned *freel = malloc(k->qd * sizeof(*freel));
	uint64_t blocks = k->size / 4096, issued = 0, done = 0;
	double start = bench_now(), now = start;
	unsigned tick = 0;

	if (!freel)
		return -ENOMEM;
	for (unsigned i = 0; i < k->qd; i++)
		freel[i] = i;
	for (;;) {
		bool more = ops ? issued < ops : now - start < seconds;
		while (more && nfree && (nfree >= batch || !inflight)) {
			unsigned n = nfree < batch ? nfree : batch;
			if (ops && ops - issued < n)
				n = (unsigned)(ops - issued);
			for (unsigned i = 0; i < n; i++) {
				struct io_uring_sqe *sqe = io_uring_get_sqe(&k->ring);
				unsigned b = freel[--nfree];
				io_uring_prep_read(sqe, 0, k->bufs[b], 4096,
						   (rnd(&k->rng) % blocks) * 4096);
				sqe->flags |= IOSQE_FIXED_FILE;
				io_uring_sqe_set_data64(sqe, b);
			}
			int ret = io_uring_submit(&k->ring);
			if (ret != (int)n) {
				fprintf(stderr, "kernel read: submit %d of %u\n", ret, n);
				exit(1);
			}
			inflight += n;
			issued += n;
			more = ops ? issued < ops : true;
		}
		if (!inflight)
			break;
		struct io_uring_cqe *cqe;
		unsigned head, seen = 0, want = inflight < batch ? inflight : batch;
		int ret = io_uring_wait_cqe_nr(&k->ring, &cqe, want);
		if (ret) {
			fprintf(stderr, "kernel read: wait: %s\n", strerror(-ret));
			exit(1);
		}
		io_uring_for_each_cqe(&k->ring, head, cqe) {
			if (cqe->res != 4096) {
				fprintf(stderr, "kernel read: res %d\n", cqe->res);
				exit(1);
			}
			freel[nfree++] = (unsigned)cqe->user_data;
			seen++;
		}
		io_uring_cq_advance(&k->ring, seen);
		inflight -= seen;
		done += seen;
		if (!ops && !(++tick & 15))
			now = bench_now();
	}
	*elapsed = bench_now() - start;
	free(freel);
	return (int64_t)done;
}

void kread_free(struct kread *k)
{
	if (!k)
		return;
	if (k->ring.ring_fd > 0)
		io_uring_queue_exit(&k->ring);
	if (k->fd >= 0)
		close(k->fd);
	if (k->bufs)
		for (unsigned i = 0; i < k->qd; i++)
			free(k->bufs[i]);
	free(k->bufs);
	free(k);
}
