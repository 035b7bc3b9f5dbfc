// SPDX-License-Identifier: MIT
/*
 * Descriptors open on a controller and its namespace while a sysfs control
 * file is written (argv[1], "1"): what each call on them answers before and
 * after, one line per call ("ok" or the errno's name). Built dynamic and
 * static by tests/system/exec_remove_fds.sh and exec_remove_mpath.sh, which
 * compare the lines with Linux's answers once the driver is unbound.
 *
 *   gone_fd [-w] [-r] CTLFILE [CTLFILE...]   each written in turn, the calls made after each
 *
 * With -w, each file is written again on the same descriptor after its
 * write ("1\n", then nothing): once the write removed the file's device,
 * Linux's kernfs answers ENODEV, the attribute's node gone. With -r, each
 * device is opened again through its descriptor's /dev/fd/N or
 * /proc/self/fd/N among the calls: once removed, ENXIO (no driver behind
 * the inode).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <linux/nvme_ioctl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

static const char *res(long r)
{
	static char buf[32];

	if (r >= 0)
		return "ok";
	switch (errno) {
	case ENODEV: return "ENODEV";
	case EIO: return "EIO";
	case ENXIO: return "ENXIO";
	case ENOENT: return "ENOENT";
	case EINVAL: return "EINVAL";
	default:
		snprintf(buf, sizeof(buf), "errno %d", errno);
		return buf;
	}
}

static void *buf;
static bool more;	/* -r */

/* The device open on fd opened afresh through the path naming fd (fmt's %d). */
static const char *reopen(const char *fmt, int fd, int flags)
{
	char path[64];
	int r;

	snprintf(path, sizeof(path), fmt, fd);
	r = open(path, flags);
	if (r >= 0)
		close(r);
	return res(r);
}

static void calls(int ctrl, int ng, int blk, const char *when)
{
	struct nvme_admin_cmd id = { .opcode = 0x06, .addr = (unsigned long)buf,
				     .data_len = 4096, .cdw10 = 1 };
	unsigned long long size = 0;
	const char *r;

	printf("%s nvme0 identify: %s\n", when, res(ioctl(ctrl, NVME_IOCTL_ADMIN_CMD, &id)));
	printf("%s ng0n1 ns-id: %s\n", when, res(ioctl(ng, NVME_IOCTL_ID)));
	printf("%s nvme0n1 ns-id: %s\n", when, res(ioctl(blk, NVME_IOCTL_ID)));
	printf("%s nvme0n1 pread: %s\n", when, res(pread(blk, buf, 4096, 0)));
	printf("%s nvme0n1 pwrite: %s\n", when, res(pwrite(blk, buf, 4096, 8192)));
	printf("%s nvme0n1 fsync: %s\n", when, res(fsync(blk)));
	r = res(ioctl(blk, BLKGETSIZE64, &size));
	printf("%s nvme0n1 size: %s %llu\n", when, r, size);
	if (more) {
		printf("%s nvme0 reopen: %s\n", when, reopen("/dev/fd/%d", ctrl, O_RDONLY));
		printf("%s ng0n1 reopen: %s\n", when, reopen("/proc/self/fd/%d", ng, O_RDONLY));
		printf("%s nvme0n1 reopen: %s\n", when,
		       reopen("/dev/fd/%d", blk, O_RDWR | O_DIRECT));
	}
	fflush(stdout);
}

static int put(const char *path, bool again)
{
	int fd = open(path, O_WRONLY);
	int ret = 0;

	if (fd < 0 || write(fd, "1\n", 2) != 2)
		ret = -errno;
	if (!ret)
		printf("wrote %s\n", strrchr(path, '/') + 1);
	if (!ret && again) {
		printf("%s again: %s\n", strrchr(path, '/') + 1, res(write(fd, "1\n", 2)));
		printf("%s empty: %s\n", strrchr(path, '/') + 1, res(write(fd, "", 0)));
	}
	if (fd >= 0 && close(fd))
		ret = ret ? ret : -errno;
	return ret;
}

int main(int argc, char **argv)
{
	int ctrl = open("/dev/nvme0", O_RDONLY);
	int ng = open("/dev/ng0n1", O_RDONLY);
	int blk = open("/dev/nvme0n1", O_RDWR | O_DIRECT);
	bool again = false;
	int first = 1;

	for (; first < argc && argv[first][0] == '-'; first++) {
		if (!strcmp(argv[first], "-w"))
			again = true;
		else if (!strcmp(argv[first], "-r"))
			more = true;
		else
			return 2;
	}

	if (argc <= first || ctrl < 0 || ng < 0 || blk < 0 || posix_memalign(&buf, 4096, 4096)) {
		fprintf(stderr, "gone_fd: %s\n", strerror(errno));
		return 2;
	}
	memset(buf, 0, 4096);
	calls(ctrl, ng, blk, "before");
	for (int i = first; i < argc; i++) {
		int ret = put(argv[i], again);

		if (ret) {
			fprintf(stderr, "gone_fd: %s: %s\n", argv[i], strerror(-ret));
			return 3;
		}
		calls(ctrl, ng, blk, "after");
	}
	return 0;
}
