/* SPDX-License-Identifier: MIT */
/*
 * The stat of a path that names an open descriptor (/dev/fd/N,
 * /proc/self/fd/N, /proc/thread-self/fd/N, /proc/<pid>/task/<tid>/fd/N,
 * /dev//fd/N, /dev/stdin), built statically and dynamically by
 * tests/system/exec_static_fdpath.sh: where the descriptor is a device
 * (DEV opened read-only, and a copy of it on descriptor 0), Linux follows
 * the link to the device, so stat, fstatat and statx say what stat of DEV
 * says; lstat says a link; a path below it is ENOTDIR.
 *
 *   static_fdpath DEV
 *
 * Prints "ok" and exits 0, or one line per difference and exits 1.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

static int bad;

static void same(const char *how, const char *path, mode_t mode, dev_t rdev, const struct stat *want)
{
	if (mode != want->st_mode || rdev != want->st_rdev) {
		printf("%s %s: mode %o rdev %u:%u, want mode %o rdev %u:%u\n", how, path,
		       (unsigned)mode, major(rdev), minor(rdev), (unsigned)want->st_mode,
		       major(want->st_rdev), minor(want->st_rdev));
		bad = 1;
	}
}

static void check(const char *path, const struct stat *want)
{
	struct stat st;
	struct statx stx;
	char below[128];

	if (stat(path, &st))
		printf("stat %s: %s\n", path, strerror(errno)), bad = 1;
	else
		same("stat", path, st.st_mode, st.st_rdev, want);
	if (fstatat(AT_FDCWD, path, &st, 0))
		printf("fstatat %s: %s\n", path, strerror(errno)), bad = 1;
	else
		same("fstatat", path, st.st_mode, st.st_rdev, want);
	if (statx(AT_FDCWD, path, 0, STATX_BASIC_STATS, &stx))
		printf("statx %s: %s\n", path, strerror(errno)), bad = 1;
	else
		same("statx", path, stx.stx_mode, makedev(stx.stx_rdev_major, stx.stx_rdev_minor), want);
	/* the link itself, not followed */
	if (lstat(path, &st) || !S_ISLNK(st.st_mode))
		printf("lstat %s: not a link\n", path), bad = 1;
	snprintf(below, sizeof(below), "%s/x", path);
	if (!stat(below, &st) || errno != ENOTDIR)
		printf("stat %s: %s, want ENOTDIR\n", below, strerror(errno)), bad = 1;
}

int main(int argc, char **argv)
{
	struct stat want;
	char path[128];
	int fd, low;

	if (argc != 2) {
		fprintf(stderr, "usage: static_fdpath DEV\n");
		return 2;
	}
	fd = open(argv[1], O_RDONLY);
	if (fd < 0 || stat(argv[1], &want)) {
		printf("open %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	if (!S_ISBLK(want.st_mode) && !S_ISCHR(want.st_mode)) {
		printf("stat %s: mode %o is no device\n", argv[1], (unsigned)want.st_mode);
		return 1;
	}
	snprintf(path, sizeof(path), "/dev/fd/%d", fd);
	check(path, &want);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	check(path, &want);
	snprintf(path, sizeof(path), "/proc/thread-self/fd/%d", fd);
	check(path, &want);
	snprintf(path, sizeof(path), "/proc/%d/task/%d/fd/%d", (int)getpid(), (int)gettid(), fd);
	check(path, &want);
	snprintf(path, sizeof(path), "/dev//fd/./%d", fd);
	check(path, &want);
	/* a copy on 0 (the shell's `<` makes one so): /dev/stdin, /dev/fd/0 */
	low = dup2(fd, 0);
	if (low != 0) {
		printf("dup2: %s\n", strerror(errno));
		return 1;
	}
	check("/dev/stdin", &want);
	check("/dev/fd/0", &want);
	/* a descriptor that is no device: the kernel's answer (a pipe) */
	{
		int p[2];
		struct stat st;

		if (pipe(p) || (snprintf(path, sizeof(path), "/dev/fd/%d", p[0]), stat(path, &st)) ||
		    !S_ISFIFO(st.st_mode))
			printf("stat of a pipe's /dev/fd/N: not a fifo\n"), bad = 1;
	}
	if (!bad)
		printf("ok\n");
	return bad;
}
