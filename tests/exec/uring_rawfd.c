/* SPDX-License-Identifier: MIT */
/*
 * io_uring passthrough on a device descriptor that the program opened with
 * a syscall instruction of its own (as Go's os.Open, or any program that
 * does not go through libc's open): under `ucmd exec` such an open is made
 * by ucmd-supervise, not by the preload, while the ring is the preload's
 * (liburing through libc). Built against Debian's liburing alone.
 *
 *   uring_rawfd NGPATH
 *
 * Opens NGPATH (/dev/ngXnY) read-write with its own instruction, writes
 * 4096 bytes of a pattern at LBA 0 and reads them back with
 * IORING_OP_URING_CMD (NVME_URING_CMD_IO; 8 LBAs of 512 bytes, or one of
 * 4096 when the first is refused), then prints
 * "write RES", "read RES" (ok, or the errno's name) and "same" or "differs"
 * (a forked child closes its inherited copy with its own instruction
 * between the two: the parent's descriptor stays);
 * then closes it with its own instruction and reads on the same number
 * again ("closed RES": EBADF as Linux, the number names no file). Exit 0 either way
 * (1 on bad usage or another architecture).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rawdev.h"

static int cmd(struct io_uring *ring, int fd, uint8_t op, uint32_t nsid, void *buf,
	       unsigned len, unsigned nlb)
{
	struct io_uring_cqe *cqe;
	int res;

	if (!rawdev_sqe(ring, fd, op, nsid, buf, len, 0, nlb))
		return -EBUSY;
	if (io_uring_submit(ring) != 1 || io_uring_wait_cqe(ring, &cqe))
		return -EIO;
	res = cqe->res;
	io_uring_cqe_seen(ring, cqe);
	return res;
}

int main(int argc, char **argv)
{
#ifdef __x86_64__
	static unsigned char wbuf[4096] __attribute__((aligned(4096)));
	static unsigned char rbuf[4096] __attribute__((aligned(4096)));
	struct io_uring ring;
	long fd, nsid;
	pid_t child;
	int res;

	if (argc != 2) {
		fprintf(stderr, "usage: uring_rawfd NGPATH\n");
		return 1;
	}
	if ((fd = rawdev_open(argv[1])) < 0 || (nsid = rawdev_nsid(fd)) < 0 ||
	    rawdev_ring(&ring, NULL))
		return 0;
	for (size_t i = 0; i < sizeof(wbuf); i++)
		wbuf[i] = (unsigned char)(i * 7 + 13);
	/* 4096 bytes at LBA 0: 8 LBAs of 512 or 1 of 4096 (NVME_IOCTL_ID says nothing of it) */
	res = cmd(&ring, (int)fd, 0x01 /* Write */, (uint32_t)nsid, wbuf, sizeof(wbuf), 8);
	if (res == -EINVAL || res > 0)
		res = cmd(&ring, (int)fd, 0x01, (uint32_t)nsid, wbuf, sizeof(wbuf), 1);
	printf("write %s\n", res < 0 ? strerrorname_np(-res) : res ? "positive" : "ok");
	/* a child's close of its inherited copy leaves the parent's descriptor alone */
	child = fork();
	if (child == 0) {
		insn3(SYS_close, fd, 0, 0);
		_exit(0);
	}
	if (child < 0 || waitpid(child, NULL, 0) != child)
		printf("fork: %s\n", strerror(errno));
	res = cmd(&ring, (int)fd, 0x02 /* Read */, (uint32_t)nsid, rbuf, sizeof(rbuf), 8);
	if (res == -EINVAL || res > 0)
		res = cmd(&ring, (int)fd, 0x02, (uint32_t)nsid, rbuf, sizeof(rbuf), 1);
	printf("read %s\n", res < 0 ? strerrorname_np(-res) : res ? "positive" : "ok");
	printf("%s\n", memcmp(wbuf, rbuf, sizeof(wbuf)) ? "differs" : "same");
	/* closed with its own instruction: the number names nothing any more */
	insn3(SYS_close, fd, 0, 0);
	res = cmd(&ring, (int)fd, 0x02, (uint32_t)nsid, rbuf, sizeof(rbuf), 1);
	printf("closed %s\n", res < 0 ? strerrorname_np(-res) : res ? "positive" : "ok");
	io_uring_queue_exit(&ring);
	return 0;
#else
	(void)argc;
	(void)argv;
	fprintf(stderr, "uring_rawfd: x86-64 only\n");
	return 1;
#endif
}
