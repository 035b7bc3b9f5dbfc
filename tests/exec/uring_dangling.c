// SPDX-License-Identifier: MIT
/*
 * A link that dangles at the end of a submission ends there (Linux's
 * io_submit_state_end), whatever comes next in the ring:
 *
 *   uring_dangling /dev/nvme0n1 [ROUNDS [posted]]
 *
 * Each round, on one ring (liburing, nothing of ucmd's): a READ on a pipe
 * (the program's own descriptor: under `ucmd exec` it runs on the
 * preload's kernel ring, its CQE posted into this ring by the daemon as a
 * NOP) that completes as the program writes the pipe; then, each in a
 * submission of its own, a device READ into a bad address with
 * IOSQE_IO_LINK (-EFAULT: it fails its chain) and a good device READ.
 * Every CQE must come once with its own result: the pipe read 64, the bad
 * read -EFAULT, the good one 4096 ("posted": no good read, so that only
 * the posted CQE may follow the dangling link). Under ucmd before, the daemon took
 * what was published in one pass as one submission: the bad read's link
 * could take in the posted NOP or the next submission's read, which then
 * completed -ECANCELED. First the same on the preload's kernel ring (an
 * own READ dangling before a CQE the preload queues there). Prints "rounds N ok", or the first wrong CQE and
 * exits 1.
 */
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum { UD_PIPE = 1, UD_BAD = 2, UD_GOOD = 3 };

static const int want[] = { [UD_PIPE] = 64, [UD_BAD] = -EFAULT, [UD_GOOD] = 4096 };

int main(int argc, char **argv)
{
	struct io_uring ring;
	struct io_uring_sqe *sqe;
	struct io_uring_cqe *cqe;
	char pbuf[64], wbuf[64];
	unsigned rounds = argc > 2 ? (unsigned)atoi(argv[2]) : 2000;
	bool posted = argc > 3 && !strcmp(argv[3], "posted");
	void *good;
	int dev, pfd[2], ret;

	if (argc < 2) {
		fprintf(stderr, "usage: %s DEVICE [ROUNDS]\n", argv[0]);
		return 2;
	}
	dev = open(argv[1], O_RDONLY | O_DIRECT);
	if (dev < 0 || pipe(pfd) || posix_memalign(&good, 4096, 4096)) {
		perror("setup");
		return 1;
	}
	ret = io_uring_queue_init(64, &ring, 0);
	if (ret) {
		fprintf(stderr, "queue_init: %s\n", strerror(-ret));
		return 1;
	}
	/*
	 * On the preload's kernel ring too: an own READ that links to nothing
	 * (on the pipe's write end: -EBADF, which fails its chain) after a
	 * STATX the preload runs itself, whose CQE it queues on that ring
	 * after the READ. Before, the CQE joined the chain: -ECANCELED.
	 */
	{
		struct statx stx;
		int res[2] = { 1, 1 };

		sqe = io_uring_get_sqe(&ring);
		io_uring_prep_statx(sqe, AT_FDCWD, ".", 0, STATX_TYPE, &stx);
		sqe->user_data = 10;
		sqe = io_uring_get_sqe(&ring);
		io_uring_prep_read(sqe, pfd[1], pbuf, sizeof(pbuf), 0);
		sqe->user_data = 11;
		sqe->flags |= IOSQE_IO_LINK;
		if (io_uring_submit(&ring) != 2) {
			fprintf(stderr, "own: not submitted\n");
			return 1;
		}
		for (unsigned n = 0; n < 2; n++) {
			if (io_uring_wait_cqe(&ring, &cqe) || cqe->user_data < 10 ||
			    cqe->user_data > 11) {
				fprintf(stderr, "own: no CQE\n");
				return 1;
			}
			res[cqe->user_data - 10] = cqe->res;
			io_uring_cqe_seen(&ring, cqe);
		}
		if (res[0] != 0 || res[1] != -EBADF) {
			printf("own: statx %d (want 0), read %d (want %d)\n", res[0], res[1], -EBADF);
			return 1;
		}
	}
	memset(wbuf, 'p', sizeof(wbuf));
	for (unsigned i = 0; i < rounds; i++) {
		int seen[4] = { 0 };

		sqe = io_uring_get_sqe(&ring);
		io_uring_prep_read(sqe, pfd[0], pbuf, sizeof(pbuf), 0);
		sqe->user_data = UD_PIPE;
		if (io_uring_submit(&ring) != 1) {
			fprintf(stderr, "round %u: pipe read not submitted\n", i);
			return 1;
		}
		/* its completion is posted while the next two are submitted */
		if (write(pfd[1], wbuf, sizeof(wbuf)) != (ssize_t)sizeof(wbuf)) {
			perror("write");
			return 1;
		}
		sqe = io_uring_get_sqe(&ring);
		io_uring_prep_read(sqe, dev, (void *)(uintptr_t)4096, 4096, 0);
		sqe->user_data = UD_BAD;
		sqe->flags |= IOSQE_IO_LINK;	/* dangling: the submission ends after it */
		if (io_uring_submit(&ring) != 1) {
			fprintf(stderr, "round %u: bad read not submitted\n", i);
			return 1;
		}
		if (!posted) {
			sqe = io_uring_get_sqe(&ring);
			io_uring_prep_read(sqe, dev, good, 4096, 0);
			sqe->user_data = UD_GOOD;
			if (io_uring_submit(&ring) != 1) {
				fprintf(stderr, "round %u: good read not submitted\n", i);
				return 1;
			}
		}
		for (unsigned n = 0; n < (posted ? 2u : 3u); n++) {
			ret = io_uring_wait_cqe(&ring, &cqe);
			if (ret) {
				fprintf(stderr, "round %u: wait: %s\n", i, strerror(-ret));
				return 1;
			}
			if (cqe->user_data < UD_PIPE || cqe->user_data > UD_GOOD ||
			    seen[cqe->user_data]++ || cqe->res != want[cqe->user_data]) {
				printf("round %u: CQE user_data %llu res %d (want %d)\n", i,
				       (unsigned long long)cqe->user_data, cqe->res,
				       cqe->user_data <= UD_GOOD ? want[cqe->user_data] : 0);
				return 1;
			}
			io_uring_cqe_seen(&ring, cqe);
		}
	}
	/* nothing more: no CQE came twice */
	if (io_uring_peek_cqe(&ring, &cqe) == 0) {
		printf("an extra CQE: user_data %llu res %d\n", (unsigned long long)cqe->user_data,
		       cqe->res);
		return 1;
	}
	printf("rounds %u ok\n", rounds);
	io_uring_queue_exit(&ring);
	return 0;
}
