// SPDX-License-Identifier: MIT
/*
 * Descriptors open on a controller and its namespace while a sysfs control
 * file is written (argv[1], "1"): what each call on them answers before and
 * after, one line per call ("ok" or the errno's name). Built dynamic and
 * static by tests/system/exec_remove_fds.sh and exec_remove_mpath.sh, which
 * compare the lines with Linux's answers once the driver is unbound.
 *
 *   gone_fd CTLFILE [CTLFILE...]   each written in turn, the calls made after each
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <linux/nvme_ioctl.h>
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
	fflush(stdout);
}

static int put(const char *path)
{
	int fd = open(path, O_WRONLY);
	int ret = 0;

	if (fd < 0 || write(fd, "1\n", 2) != 2)
		ret = -errno;
	if (fd >= 0 && close(fd))
		ret = ret ? ret : -errno;
	return ret;
}

int main(int argc, char **argv)
{
	int ctrl = open("/dev/nvme0", O_RDONLY);
	int ng = open("/dev/ng0n1", O_RDONLY);
	int blk = open("/dev/nvme0n1", O_RDWR | O_DIRECT);

	if (argc < 2 || ctrl < 0 || ng < 0 || blk < 0 || posix_memalign(&buf, 4096, 4096)) {
		fprintf(stderr, "gone_fd: %s\n", strerror(errno));
		return 2;
	}
	memset(buf, 0, 4096);
	calls(ctrl, ng, blk, "before");
	for (int i = 1; i < argc; i++) {
		int ret = put(argv[i]);

		if (ret) {
			fprintf(stderr, "gone_fd: %s: %s\n", argv[i], strerror(-ret));
			return 3;
		}
		printf("wrote %s\n", strrchr(argv[i], '/') + 1);
		calls(ctrl, ng, blk, "after");
	}
	return 0;
}
