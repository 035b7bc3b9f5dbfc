// SPDX-License-Identifier: MIT
/*
 * io_uring requests that ucmd does not serve, on ucmd's devices, from a
 * plain liburing program: each must complete with an error (never reach
 * the placeholder file behind the fd), and a WRITE that ucmd does serve
 * must reach the namespace. Prints one "name res" line per request; the
 * test (tests/system/exec_fail_closed.sh) compares them and checks the
 * placeholders and the namespace.
 */
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static struct io_uring ring;

static int run(const char *name, struct io_uring_sqe *sqe)
{
	struct io_uring_cqe *cqe;
	int ret, res;

	(void)sqe;
	ret = io_uring_submit(&ring);
	if (ret != 1) {
		printf("%s submit %d\n", name, ret);
		return -1;
	}
	ret = io_uring_wait_cqe(&ring, &cqe);
	if (ret) {
		printf("%s wait %d\n", name, ret);
		return -1;
	}
	res = cqe->res;
	io_uring_cqe_seen(&ring, cqe);
	printf("%s %s\n", name, res < 0 ? strerrorname_np(-res) : res > 0 ? "positive" : "0");
	return res;
}

int main(int argc, char **argv)
{
	int blk, ng, ctrl, p[2];
	void *buf;

	if (argc != 4) {
		fprintf(stderr, "usage: %s /dev/nvme0n1 /dev/ng0n1 /dev/nvme0\n", argv[0]);
		return 2;
	}
	blk = open(argv[1], O_RDWR | O_DIRECT);
	ng = open(argv[2], O_RDWR);
	ctrl = open(argv[3], O_RDWR);
	if (blk < 0 || ng < 0 || ctrl < 0 || pipe(p) || posix_memalign(&buf, 4096, 4096) ||
	    io_uring_queue_init(8, &ring, 0)) {
		perror("setup");
		return 1;
	}
	memset(buf, 0xf6, 4096);
	io_uring_prep_fallocate(io_uring_get_sqe(&ring), blk, 0, 0, 4096);
	run("fallocate_blk", NULL);
	io_uring_prep_splice(io_uring_get_sqe(&ring), p[0], -1, blk, 0, 4096, 0);
	run("splice_blk", NULL);
	io_uring_prep_write(io_uring_get_sqe(&ring), ng, buf, 4096, 0);
	run("write_ng", NULL);
	io_uring_prep_write(io_uring_get_sqe(&ring), ctrl, buf, 4096, 0);
	run("write_ctrl", NULL);
	io_uring_prep_read(io_uring_get_sqe(&ring), ng, buf, 4096, 0);
	run("read_ng", NULL);
	io_uring_prep_write_fixed(io_uring_get_sqe(&ring), blk, buf, 4096, 0, 0);
	run("write_fixed_unregistered", NULL);
	io_uring_prep_sync_file_range(io_uring_get_sqe(&ring), blk, 4096, 0, 0);
	run("sync_file_range_blk", NULL);
	/* no descriptor: the kernel's, as on Linux (src/preload/uring_own.c) */
	io_uring_prep_madvise(io_uring_get_sqe(&ring), buf, 4096, 0);
	run("madvise", NULL);
	/* served: LBA 9040 of the namespace gets 0xf6 */
	io_uring_prep_write(io_uring_get_sqe(&ring), blk, buf, 4096, 9040 * 512);
	run("write_blk", NULL);
	io_uring_queue_exit(&ring);
	return 0;
}
