/* SPDX-License-Identifier: MIT */
/*
 * The preamble of the tests that open an NVMe device with their own
 * syscall instruction (ucmd-supervise's under `ucmd exec`, as Go's
 * os.Open) and use it through liburing's ring (the preload's): the open,
 * its namespace id through libc's ioctl, a ring of 128-byte SQEs and
 * 32-byte CQEs, and one passthrough SQE. Each step that fails prints a
 * line saying which (the tests compare their output) and returns -1.
 * Built against Debian's liburing alone.
 */
#ifndef UCMD_TESTS_EXEC_RAWDEV_H
#define UCMD_TESTS_EXEC_RAWDEV_H

#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <linux/nvme_ioctl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>

#include "insn.h"

/* path opened read-write with the program's own instruction: the descriptor, or -1 */
static inline long rawdev_open(const char *path)
{
	long fd = insn3(SYS_openat, AT_FDCWD, (long)path, O_RDWR);

	if (fd < 0) {
		printf("open: %s\n", strerror((int)-fd));
		return -1;
	}
	return fd;
}

/* fd's namespace id through libc (the supervisor's answer for a number it gave), or -1 */
static inline long rawdev_nsid(long fd)
{
	long nsid = ioctl((int)fd, NVME_IOCTL_ID);

	if (nsid <= 0) {
		printf("nsid: %s\n", strerror(errno));
		return -1;
	}
	return nsid;
}

/* a ring for passthrough (p: more setup flags and their fields, or NULL): 0 or -1 */
static inline int rawdev_ring(struct io_uring *ring, struct io_uring_params *p)
{
	struct io_uring_params none = { 0 };
	int ret;

	if (!p)
		p = &none;
	p->flags |= IORING_SETUP_SQE128 | IORING_SETUP_CQE32;
	ret = io_uring_queue_init_params(8, ring, p);
	if (ret) {
		printf("setup: %s\n", strerror(-ret));
		return -1;
	}
	return 0;
}

/* the next SQE made an NVMe I/O command op of nlb blocks at slba (buf, len), or NULL */
static inline struct io_uring_sqe *rawdev_sqe(struct io_uring *ring, int fd, uint8_t op,
					      uint32_t nsid, void *buf, unsigned len,
					      uint64_t slba, unsigned nlb)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
	struct nvme_uring_cmd *c;

	if (!sqe)
		return NULL;
	c = (struct nvme_uring_cmd *)sqe->cmd;
	memset((void *)sqe, 0, 2 * sizeof(*sqe));
	sqe->opcode = IORING_OP_URING_CMD;
	sqe->fd = fd;
	sqe->cmd_op = NVME_URING_CMD_IO;
	c->opcode = op;
	c->nsid = nsid;
	c->addr = (uint64_t)(uintptr_t)buf;
	c->data_len = len;
	c->cdw10 = (uint32_t)slba;
	c->cdw11 = (uint32_t)(slba >> 32);
	c->cdw12 = nlb - 1;
	return sqe;
}

/* wait for the ring's next CQE and reap it: its res, or the wait's -errno */
static inline int rawdev_reap(struct io_uring *ring)
{
	struct io_uring_cqe *cqe;
	int ret = io_uring_wait_cqe(ring, &cqe);

	if (ret)
		return ret;
	ret = cqe->res;
	io_uring_cqe_seen(ring, cqe);
	return ret;
}

#endif
