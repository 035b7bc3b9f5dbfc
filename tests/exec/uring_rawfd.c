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
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <linux/nvme_ioctl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifdef __x86_64__
/* openat with this program's own syscall instruction: no libc, no preload */
static long own_openat(const char *path, int flags)
{
	register long r10 __asm__("r10") = 0;
	long ret;

	__asm__ volatile("syscall" : "=a"(ret)
			 : "0"((long)SYS_openat), "D"((long)AT_FDCWD), "S"(path), "d"((long)flags),
			   "r"(r10)
			 : "rcx", "r11", "memory");
	return ret;
}

static long own_close(long fd)
{
	long ret;

	__asm__ volatile("syscall" : "=a"(ret) : "0"((long)SYS_close), "D"(fd)
			 : "rcx", "r11", "memory");
	return ret;
}

static int cmd(struct io_uring *ring, int fd, uint8_t op, uint32_t nsid, void *buf,
	       unsigned len, unsigned nlb)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
	struct nvme_uring_cmd *c;
	struct io_uring_cqe *cqe;
	int res;

	if (!sqe)
		return -EBUSY;
	c = (struct nvme_uring_cmd *)sqe->cmd;
	memset((void *)sqe, 0, 2 * sizeof(*sqe));
	sqe->opcode = IORING_OP_URING_CMD;
	sqe->fd = fd;
	sqe->cmd_op = NVME_URING_CMD_IO;
	c->opcode = op;
	c->nsid = nsid;
	c->addr = (uint64_t)(uintptr_t)buf;
	c->data_len = len;
	c->cdw12 = nlb - 1;
	if (io_uring_submit(ring) != 1 || io_uring_wait_cqe(ring, &cqe))
		return -EIO;
	res = cqe->res;
	io_uring_cqe_seen(ring, cqe);
	return res;
}
#endif

int main(int argc, char **argv)
{
#ifdef __x86_64__
	static unsigned char wbuf[4096] __attribute__((aligned(4096)));
	static unsigned char rbuf[4096] __attribute__((aligned(4096)));
	struct io_uring ring;
	long fd, nsid;
	pid_t child;
	int res, ret;

	if (argc != 2) {
		fprintf(stderr, "usage: uring_rawfd NGPATH\n");
		return 1;
	}
	fd = own_openat(argv[1], O_RDWR);
	if (fd < 0) {
		printf("open: %s\n", strerror((int)-fd));
		return 0;
	}
	/* through libc: the supervisor's (a number it gave) */
	nsid = ioctl((int)fd, NVME_IOCTL_ID);
	if (nsid <= 0) {
		printf("nsid: %s\n", strerror(errno));
		return 0;
	}
	ret = io_uring_queue_init(8, &ring, IORING_SETUP_SQE128 | IORING_SETUP_CQE32);
	if (ret) {
		printf("setup: %s\n", strerror(-ret));
		return 0;
	}
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
		own_close(fd);
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
	own_close(fd);
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
