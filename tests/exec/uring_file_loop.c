// SPDX-License-Identifier: MIT
/*
 * io_uring on files that are not ucmd's, as a program that uses io_uring
 * for its own files does:
 *
 *   uring_file_loop N FILE
 *
 * N reads of FILE's first 512 bytes through a ring (IORING_OP_READ), one
 * io_uring_enter each (liburing's submit_and_wait), then one read of a
 * pipe's end. Prints how many reads gave what read(2) gives and the
 * pipe's result (under `ucmd exec` a ring is the daemon's, which serves
 * ucmd's devices only: EBADF, docs/compat.md); exit 1 when a submit or
 * wait fails. The test counts the system calls the preload adds per enter
 * (strace -c).
 */
#include <fcntl.h>
#include <liburing.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int one_read(struct io_uring *ring, int fd, char *buf, unsigned len)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
	struct io_uring_cqe *cqe;
	int res;

	io_uring_prep_read(sqe, fd, buf, len, 0);
	if (io_uring_submit_and_wait(ring, 1) != 1 || io_uring_wait_cqe(ring, &cqe)) {
		fprintf(stderr, "submit or wait failed\n");
		exit(1);
	}
	res = cqe->res;
	io_uring_cqe_seen(ring, cqe);
	return res;
}

int main(int argc, char **argv)
{
	char want[512], buf[512];
	struct io_uring ring;
	int n, fd, p[2], same = 0, res;
	ssize_t len;

	if (argc != 3) {
		fprintf(stderr, "usage: uring_file_loop N FILE\n");
		return 2;
	}
	n = atoi(argv[1]);
	fd = open(argv[2], O_RDONLY);
	if (fd < 0 || (len = pread(fd, want, sizeof(want), 0)) < 0 || io_uring_queue_init(8, &ring, 0)) {
		perror("setup");
		return 1;
	}
	for (int i = 0; i < n; i++) {
		res = one_read(&ring, fd, buf, sizeof(buf));
		same += res == len && !memcmp(buf, want, (size_t)len);
	}
	if (pipe(p) || write(p[1], "x", 1) != 1) {
		perror("pipe");
		return 1;
	}
	res = one_read(&ring, p[0], buf, 1);
	printf("%d of %d reads as read(2)'s; pipe %d\n", same, n, res);
	io_uring_queue_exit(&ring);
	return 0;
}
