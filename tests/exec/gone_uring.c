// SPDX-License-Identifier: MIT
/*
 * io_uring SQEs on descriptors open on a namespace while a sysfs control
 * file is written (argv[1..], "1"): each SQE's result before and after,
 * one line per SQE ("ok" or the errno's name). Linux, once the function
 * is removed: a passthrough command on /dev/ng0n1 ENODEV (its request on
 * the dying queue), a read or write on /dev/nvme0n1 EIO (bios to a dead
 * disk). Run by tests/system/exec_remove_fds.sh.
 *
 *   gone_uring CTLFILE [CTLFILE...]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <linux/nvme_ioctl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

static const char *res(int r)
{
	static char buf[32];

	if (r >= 0)
		return "ok";
	switch (-r) {
	case ENODEV: return "ENODEV";
	case EIO: return "EIO";
	case EINVAL: return "EINVAL";
	default:
		snprintf(buf, sizeof(buf), "errno %d", -r);
		return buf;
	}
}

static struct io_uring ring;
static void *buf;
static int ng, blk, nsid;

/* One SQE submitted and waited for: its result. */
static int one(struct io_uring_sqe *sqe)
{
	struct io_uring_cqe *cqe;
	int r;

	sqe->user_data = 7;
	r = io_uring_submit(&ring);
	if (r != 1)
		return r < 0 ? r : -EAGAIN;
	r = io_uring_wait_cqe(&ring, &cqe);
	if (r)
		return r;
	r = cqe->user_data == 7 ? cqe->res : -EBADMSG;
	io_uring_cqe_seen(&ring, cqe);
	return r;
}

static void sqes(const char *when)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
	struct nvme_uring_cmd *cmd = (struct nvme_uring_cmd *)sqe->cmd;

	memset(sqe, 0, 2 * sizeof(*sqe));
	sqe->opcode = IORING_OP_URING_CMD;
	sqe->fd = ng;
	sqe->cmd_op = NVME_URING_CMD_IO;
	cmd->opcode = 0x02;	/* Read, one block of 512 or more */
	cmd->nsid = (unsigned)nsid;
	cmd->addr = (unsigned long)buf;
	cmd->data_len = 4096;
	printf("%s ng0n1 uring_cmd: %s\n", when, res(one(sqe)));
	sqe = io_uring_get_sqe(&ring);
	io_uring_prep_read(sqe, blk, buf, 4096, 0);
	printf("%s nvme0n1 read: %s\n", when, res(one(sqe)));
	sqe = io_uring_get_sqe(&ring);
	io_uring_prep_write(sqe, blk, buf, 4096, 8192);
	printf("%s nvme0n1 write: %s\n", when, res(one(sqe)));
	fflush(stdout);
}

int main(int argc, char **argv)
{
	ng = open("/dev/ng0n1", O_RDONLY);
	blk = open("/dev/nvme0n1", O_RDWR | O_DIRECT);
	nsid = ng < 0 ? -1 : ioctl(ng, NVME_IOCTL_ID);
	if (argc < 2 || ng < 0 || blk < 0 || nsid <= 0 || posix_memalign(&buf, 4096, 4096) ||
	    io_uring_queue_init(8, &ring, IORING_SETUP_SQE128 | IORING_SETUP_CQE32)) {
		fprintf(stderr, "gone_uring: %s\n", strerror(errno));
		return 2;
	}
	memset(buf, 0, 4096);
	sqes("before");
	for (int i = 1; i < argc; i++) {
		int fd = open(argv[i], O_WRONLY);

		if (fd < 0 || write(fd, "1\n", 2) != 2 || close(fd)) {
			fprintf(stderr, "gone_uring: %s: %s\n", argv[i], strerror(errno));
			return 3;
		}
		printf("wrote %s\n", strrchr(argv[i], '/') + 1);
		sqes("after");
	}
	return 0;
}
