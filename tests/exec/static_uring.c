/* SPDX-License-Identifier: MIT */
/*
 * A statically linked liburing program (tests/system/exec_static.sh builds
 * it with `cc -static` against Debian's liburing.a): NVMe passthrough
 * (NVME_URING_CMD_IO) on a generic namespace node, as a program a user
 * copies from another machine would do it.
 *
 *   static_uring NG NSID LBA_SIZE SLBA SEED [loops [BLK]]
 *
 * writes 8 KiB of a pattern (from SEED) at SLBA, reads it back and
 * compares, `loops` times (default 1), then prints "ok N ops/s". Then the
 * calls no NVMe char device serves must fail without moving data: readv,
 * writev and mmap on NG (their errnos printed); fstat must call NG a
 * character device (and BLK a block device). With BLK (nvmeXnY): the
 * pattern of SEED + 1 written with pwrite at SLBA + 16 LBAs, read back with
 * lseek + read, compared. Exit 0 on success; 2 when NG cannot be opened
 * (errno on stderr); 3 when io_uring_queue_init fails; 1 for anything else.
 * $STATIC_URING_SLEEP seconds are slept first (a program that computes
 * before it opens the device). With $STATIC_URING_FORK set, a forked child
 * first opens NG and prints "child open: ERRNO" (or "child open: ok").
 */
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <linux/nvme_ioctl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "rawdev.h"

#define LEN 8192u

static int one(struct io_uring *ring, int fd, unsigned nsid, unsigned shift, uint64_t slba,
	       void *buf, int write)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
	struct nvme_uring_cmd *cmd;
	int ret;

	if (!sqe)
		return -EBUSY;
	memset(sqe, 0, 2 * sizeof(*sqe));
	sqe->opcode = IORING_OP_URING_CMD;
	sqe->fd = fd;
	sqe->cmd_op = NVME_URING_CMD_IO;
	cmd = (struct nvme_uring_cmd *)sqe->cmd;
	cmd->opcode = write ? 0x01 : 0x02;
	cmd->nsid = nsid;
	cmd->addr = (uint64_t)(uintptr_t)buf;
	cmd->data_len = LEN;
	cmd->cdw10 = (uint32_t)slba;
	cmd->cdw11 = (uint32_t)(slba >> 32);
	cmd->cdw12 = (LEN >> shift) - 1;
	ret = io_uring_submit(ring);
	if (ret != 1)
		return ret < 0 ? ret : -EIO;
	return rawdev_reap(ring);
}

int main(int argc, char **argv)
{
	struct io_uring ring;
	struct timespec t0, t1;
	unsigned char *w, *r;
	unsigned nsid, lbs, shift = 0, seed;
	unsigned long loops = 1;
	uint64_t slba;
	int fd, ret;

	if (argc < 6) {
		fprintf(stderr, "usage: static_uring NG NSID LBA_SIZE SLBA SEED [loops]\n");
		return 1;
	}
	nsid = (unsigned)strtoul(argv[2], NULL, 0);
	lbs = (unsigned)strtoul(argv[3], NULL, 0);
	slba = strtoull(argv[4], NULL, 0);
	seed = (unsigned)strtoul(argv[5], NULL, 0);
	if (argc > 6)
		loops = strtoul(argv[6], NULL, 0);
	while ((1u << shift) < lbs)
		shift++;
	if (getenv("STATIC_URING_FORK")) {
		pid_t pid = fork();
		int st;

		if (pid == 0) {
			int cfd = open(argv[1], O_RDWR);

			printf("child open: %s\n", cfd >= 0 ? "ok" : strerror(errno));
			fflush(stdout);
			_exit(0);
		}
		if (pid < 0 || waitpid(pid, &st, 0) != pid)
			return 1;
		fflush(stdout);
	}
	if (getenv("STATIC_URING_SLEEP"))
		sleep((unsigned)strtoul(getenv("STATIC_URING_SLEEP"), NULL, 0));
	fd = open(argv[1], O_RDWR);
	if (fd < 0) {
		fprintf(stderr, "open %s: %s\n", argv[1], strerror(errno));
		return 2;
	}
	ret = io_uring_queue_init(8, &ring, IORING_SETUP_SQE128 | IORING_SETUP_CQE32);
	if (ret) {
		fprintf(stderr, "io_uring_queue_init: %s\n", strerror(-ret));
		return 3;
	}
	if (posix_memalign((void **)&w, 4096, LEN) || posix_memalign((void **)&r, 4096, LEN))
		return 1;
	for (unsigned i = 0; i < LEN; i++)
		w[i] = (unsigned char)(seed * 131 + i * 7 + (i >> 9));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (unsigned long l = 0; l < loops; l++) {
		ret = one(&ring, fd, nsid, shift, slba, w, 1);
		if (ret) {
			fprintf(stderr, "write: %d (%s)\n", ret, ret < 0 ? strerror(-ret) : "status");
			return 1;
		}
		memset(r, 0, LEN);
		ret = one(&ring, fd, nsid, shift, slba, r, 0);
		if (ret) {
			fprintf(stderr, "read: %d (%s)\n", ret, ret < 0 ? strerror(-ret) : "status");
			return 1;
		}
		if (memcmp(w, r, LEN)) {
			fprintf(stderr, "verify: read back differs\n");
			return 1;
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	double s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;

	printf("ok %.0f ops/s\n", s > 0 ? (double)(2 * loops) / s : 0.0);
	{
		struct iovec iov = { r, LEN };
		void *m;

		if (readv(fd, &iov, 1) >= 0 || writev(fd, &iov, 1) >= 0) {
			fprintf(stderr, "readv/writev on %s moved data\n", argv[1]);
			return 1;
		}
		printf("readv/writev fail\n");
		m = mmap(NULL, LEN, PROT_READ, MAP_SHARED, fd, 0);
		if (m != MAP_FAILED) {
			fprintf(stderr, "mmap of %s succeeded\n", argv[1]);
			return 1;
		}
		printf("mmap errno %s\n", strerror(errno));
	}
	{
		struct stat st;

		if (fstat(fd, &st) || !S_ISCHR(st.st_mode)) {
			fprintf(stderr, "fstat %s: not a character device\n", argv[1]);
			return 1;
		}
	}
	if (argc > 7) {
		int bfd = open(argv[7], O_RDWR);
		off_t off = (off_t)(slba + 16) * lbs;

		struct stat st;

		if (bfd < 0) {
			fprintf(stderr, "open %s: %s\n", argv[7], strerror(errno));
			return 2;
		}
		if (fstat(bfd, &st) || !S_ISBLK(st.st_mode)) {
			fprintf(stderr, "fstat %s: not a block device\n", argv[7]);
			return 1;
		}
		for (unsigned i = 0; i < LEN; i++)
			w[i] = (unsigned char)((seed + 1) * 131 + i * 7 + (i >> 9));
		memset(r, 0, LEN);
		if (pwrite(bfd, w, LEN, off) != LEN || lseek(bfd, off, SEEK_SET) != off ||
		    read(bfd, r, LEN) != LEN || memcmp(w, r, LEN)) {
			fprintf(stderr, "%s: pwrite/read: %s\n", argv[7], strerror(errno));
			return 1;
		}
		printf("blk ok\n");
		close(bfd);
	}
	io_uring_queue_exit(&ring);
	close(fd);
	return 0;
}
