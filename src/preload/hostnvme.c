/* SPDX-License-Identifier: MIT */
/*
 * Is a file just opened one of the host's NVMe devices, by its device
 * number? The path checks (paths.c, sv_open.c) catch /dev/nvme* and
 * /dev/ng* by name; a root program could mknod a node with an NVMe
 * device's numbers elsewhere, or bind-mount one, and reach the real drive.
 * So every open that yields a character or block device is judged by what
 * it is: a character device whose major /proc/devices names "nvme" or
 * "nvme-generic" (the controllers and the generic namespace nodes), a
 * block device whose /sys/dev/block/MAJ:MIN is an NVMe namespace or one
 * of its partitions (their major is blkext, shared with others). The
 * answer is read at each such open (the driver may load later); opens of
 * devices are few (/dev/null, /dev/tty...).
 *
 * UCMD_TEST_NVME_MAJORS ("c:1,b:7"), for tests only: majors to take as
 * NVMe's besides those, so that a machine without NVMe still exercises
 * the check. It can only refuse more, never less.
 *
 * Raw system calls (syscall()): the preload's interposers are not wanted
 * here, and the supervisor has none.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "preload/preload.h"

/* The whole of a small file (a NUL after it): its length, or -1. */
static long read_small(const char *path, char *buf, size_t size)
{
	long fd = syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC, 0), n, got = 0;

	if (fd < 0)
		return -1;
	while ((size_t)got < size - 1 &&
	       (n = syscall(SYS_read, fd, buf + got, size - 1 - (size_t)got)) > 0)
		got += n;
	syscall(SYS_close, fd);
	buf[got] = '\0';
	return got;
}

bool pl_host_nvme_rdev(const struct stat *st)
{
	bool blk = S_ISBLK(st->st_mode);
	unsigned maj = major(st->st_rdev), min = minor(st->st_rdev);
	char text[8192], path[64];
	long n;

	if (!blk && !S_ISCHR(st->st_mode))
		return false;
	if (pl_test_majors_has(getenv("UCMD_TEST_NVME_MAJORS"), blk, maj))
		return true;
	if (read_small("/proc/devices", text, sizeof(text)) > 0 &&
	    pl_proc_devices_nvme(text, blk, maj))
		return true;
	if (!blk)
		return false;
	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u", maj, min);
	/* the host's link: the trampoline's call, which ucmd-supervise does not answer from the tree */
	n = pl_raw_syscall(SYS_readlinkat, AT_FDCWD, (long)path, (long)text, sizeof(text) - 1, 0, 0);
	if (n <= 0)
		return false;	/* no such block device on the host: nothing to reach */
	text[n] = '\0';
	return pl_sysfs_block_nvme(text);
}
