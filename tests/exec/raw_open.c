/* SPDX-License-Identifier: MIT */
/*
 * Opens a file with a syscall instruction of its own (x86-64), as Go's
 * os.Open does: no libc, so no preload sees the call.
 *
 *   raw_open PATH [DIRFD]
 *
 * openat(DIRFD or AT_FDCWD, PATH, O_RDONLY), then on the descriptor, with its own
 * instructions too: NVME_IOCTL_ID ("nsid N", or "nsid: <strerror>"), and a
 * read of 4096 bytes at offset 0 ("data: " and the first 8 bytes in hex,
 * or "read: <strerror>"). "open: <strerror>" when the open fails. Exit 0
 * either way (1 on bad usage or another architecture).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>

#include <linux/nvme_ioctl.h>

#include "insn.h"


int main(int argc, char **argv)
{
#ifdef __x86_64__
	static unsigned char buf[4096] __attribute__((aligned(4096)));
	long fd, ret;

	if (argc != 2 && argc != 3) {
		fprintf(stderr, "usage: raw_open PATH [DIRFD]\n");
		return 1;
	}
	fd = insn4(SYS_openat, argc == 3 ? atol(argv[2]) : AT_FDCWD, (long)argv[1], O_RDONLY, 0);
	if (fd < 0) {
		printf("open: %s\n", strerror((int)-fd));
		return 0;
	}
	ret = insn3(SYS_ioctl, fd, NVME_IOCTL_ID, 0);
	if (ret < 0)
		printf("nsid: %s\n", strerror((int)-ret));
	else
		printf("nsid %ld\n", ret);
	ret = insn3(SYS_read, fd, (long)buf, sizeof(buf));
	if (ret < 0)
		printf("read: %s\n", strerror((int)-ret));
	else if (ret < 8)
		printf("read: %ld bytes\n", ret);
	else
		printf("data: %02x%02x%02x%02x%02x%02x%02x%02x\n", buf[0], buf[1], buf[2], buf[3],
		       buf[4], buf[5], buf[6], buf[7]);
	insn3(SYS_close, fd, 0, 0);
	return 0;
#else
	(void)argc;
	(void)argv;
	fprintf(stderr, "raw_open: x86-64 only\n");
	return 1;
#endif
}
