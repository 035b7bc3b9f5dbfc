// SPDX-License-Identifier: MIT
/*
 * Registered files naming the program's own descriptors, registered and
 * unregistered again and again, as a server changing its file set does:
 *
 *   uring_regfiles_churn [ROUNDS]
 *
 * Under `ucmd exec` each table naming an own descriptor makes the preload
 * a table of its own (src/preload/uring_own.c: which indexes are the
 * kernel ring's); before, each old one was kept forever, so the heap grew
 * by about a table (NR bytes) per round. Between the first rounds and the
 * last the heap in use (mallinfo2) must not grow by more than a few
 * tables' worth, and a fixed-file READ on the pipe still works after.
 * Prints "heap ok" and "read ok", or what grew; exit 1 on a failure.
 */
#include <errno.h>
#include <liburing.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NR 1000		/* below the default RLIMIT_NOFILE, which the kernel ring's table obeys */

int main(int argc, char **argv)
{
	unsigned rounds = argc > 1 ? (unsigned)atoi(argv[1]) : 4000;
	struct io_uring ring;
	struct io_uring_sqe *sqe;
	struct io_uring_cqe *cqe;
	static int fds[NR];
	size_t before = 0, after;
	char buf[8];
	int pfd[2], ret;

	if (pipe(pfd) || io_uring_queue_init(8, &ring, 0)) {
		printf("setup failed\n");
		return 1;
	}
	for (unsigned i = 0; i < NR; i++)
		fds[i] = -1;
	fds[3] = pfd[0];
	for (unsigned i = 0; i < rounds; i++) {
		ret = io_uring_register_files(&ring, fds, NR);
		if (ret) {
			printf("round %u: register: %s\n", i, strerror(-ret));
			return 1;
		}
		ret = io_uring_unregister_files(&ring);
		if (ret) {
			printf("round %u: unregister: %s\n", i, strerror(-ret));
			return 1;
		}
		/* after a warm-up: the allocator's own first growth is not ours to judge */
		if (i == 16)
			before = mallinfo2().uordblks;
	}
	after = mallinfo2().uordblks;
	/* a table per round would be (rounds - 17) * NR bytes: allow 64 tables */
	if (after > before + 64 * NR) {
		printf("heap grew by %zu bytes over %u rounds\n", after - before, rounds - 17);
		return 1;
	}
	printf("heap ok\n");
	ret = io_uring_register_files(&ring, fds, NR);
	if (ret || write(pfd[1], "churned", 8) != 8) {
		printf("last register: %d\n", ret);
		return 1;
	}
	sqe = io_uring_get_sqe(&ring);
	io_uring_prep_read(sqe, 3, buf, sizeof(buf), 0);
	sqe->flags |= IOSQE_FIXED_FILE;
	if (io_uring_submit(&ring) != 1 || io_uring_wait_cqe(&ring, &cqe)) {
		printf("read: not submitted\n");
		return 1;
	}
	if (cqe->res != 8 || memcmp(buf, "churned", 8)) {
		printf("read: res %d\n", cqe->res);
		return 1;
	}
	io_uring_cqe_seen(&ring, cqe);
	printf("read ok\n");
	io_uring_queue_exit(&ring);
	return 0;
}
