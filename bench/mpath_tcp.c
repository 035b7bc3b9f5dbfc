/* SPDX-License-Identifier: MIT */
/*
 * bench_mpath_tcp SECONDS URL[,URL...]: 4 KiB random reads at QD32 on the
 * block device nvme0n1 of ucmd's NVMe/TCP host for SECONDS; one URL is a
 * plain ucmd_nvme_attach_tcp(), several a multipath subsystem
 * (ucmd_nvme_attach_tcp_multipath(), the iopolicy the URLs give). Prints
 * "IOPS N" and, for multipath, the requests each path carried.
 * bench/mpath_tcp.sh runs it on one path and on two loopback paths of
 * ucmdd's target and reports the ratio (docs/performance.md).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ucmd/nvme.h"
#include "ucmd/ucmd.h"

#define QD	32u
#define BS	4096u

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

int main(int argc, char **argv)
{
	struct ucmd_nvme_host_opts ho = { .queue_depth = 128 };
	struct ucmd_nvme_host *h = NULL;
	struct ucmd_nvme_subsys *s = NULL;
	struct ucmd_ring ring;
	struct ucmd_engine *e;
	const char *urls[8];
	char *list;
	unsigned n = 0;
	uint64_t blocks = 16384, done = 0;	/* the first 64 MiB */
	uint8_t *mem;
	double secs, t0, t1;
	int fd;

	if (argc != 3 || (secs = atof(argv[1])) <= 0) {
		fprintf(stderr, "usage: bench_mpath_tcp SECONDS URL[,URL...]\n");
		return 2;
	}
	list = strdup(argv[2]);
	for (char *save = NULL, *t = strtok_r(list, ",", &save); t && n < 8;
	     t = strtok_r(NULL, ",", &save))
		urls[n++] = t;
	e = ucmd_engine_new();
	if (!e || (n == 1 ? ucmd_nvme_attach_tcp(e, urls[0], &ho, NULL, &h)
			  : ucmd_nvme_attach_tcp_multipath(e, urls, n, &ho, NULL, &s))) {
		fprintf(stderr, "bench_mpath_tcp: attach: %s\n", ucmd_last_error());
		return 1;
	}
	struct io_uring_params prm = { 0 };
	int ret = ucmd_queue_init_engine(e, 2 * QD, &ring, &prm);

	if (ret) {
		fprintf(stderr, "bench_mpath_tcp: ring: %s\n", strerror(-ret));
		return 1;
	}
	fd = ucmd_open(e, "nvme0n1", O_RDONLY);
	mem = aligned_alloc(4096, QD * BS);
	if (fd < 0 || !mem) {
		fprintf(stderr, "bench_mpath_tcp: nvme0n1: %s\n", strerror(fd < 0 ? -fd : ENOMEM));
		return 1;
	}
	t0 = now();
	t1 = t0 + secs;
	for (unsigned i = 0; i < QD; i++) {
		struct io_uring_sqe *sqe = ucmd_get_sqe(&ring);

		ucmd_prep_read(sqe, fd, mem + i * BS, BS, (next() % blocks) * BS);
		sqe->user_data = i;
	}
	ucmd_submit(&ring);
	for (unsigned inflight = QD; inflight;) {
		struct io_uring_cqe *cqe;
		unsigned i;

		if ((ret = ucmd_wait_cqe(&ring, &cqe))) {
			fprintf(stderr, "bench_mpath_tcp: wait: %s\n", strerror(-ret));
			return 1;
		}
		if (cqe->res != (int)BS) {
			fprintf(stderr, "bench_mpath_tcp: read: %d\n", cqe->res);
			return 1;
		}
		i = (unsigned)cqe->user_data;
		ucmd_cqe_seen(&ring, cqe);
		done++;
		inflight--;
		if (now() < t1) {
			struct io_uring_sqe *sqe = ucmd_get_sqe(&ring);

			ucmd_prep_read(sqe, fd, mem + i * BS, BS, (next() % blocks) * BS);
			sqe->user_data = i;
			ucmd_submit(&ring);
			inflight++;
		}
	}
	printf("IOPS %.0f\n", (double)done / (now() - t0));
	for (unsigned p = 0; s && p < n; p++) {
		struct ucmd_nvme_path_info pi;

		if (!ucmd_nvme_subsys_path_info(s, 1, p, &pi))
			printf("path %u: %lu requests\n", p + 1, pi.dispatched);
	}
	ucmd_close(e, fd);
	ucmd_queue_exit(&ring);
	if (s)
		ucmd_nvme_subsys_detach(s);
	else
		ucmd_nvme_detach(h);
	ucmd_engine_free(e);
	free(mem);
	free(list);
	return 0;
}
