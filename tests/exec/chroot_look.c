/* SPDX-License-Identifier: MIT */
/*
 * Looks at ucmd's /dev and /sys after the program changed its root or its
 * mount namespace, with its own syscall instruction (insn.h: a dynamic
 * program's reach ucmd-supervise, as a static program's all do):
 *
 *   chroot_look chroot DIR     chroot(DIR), chdir("/")
 *   chroot_look unshare        unshare(CLONE_NEWNS), a tmpfs over /dev
 *                              and /sys (its own, empty)
 *   chroot_look keep           unshare(CLONE_NEWNS), nothing mounted
 *
 * With --libc first, the looks go through libc instead (stat(3), open(3)...:
 * a dynamic program's are the preload's own, which must agree with
 * ucmd-supervise's; a static program's reach ucmd-supervise all the same).
 *
 * then stat, lstat and statx of /dev/ng0n1, access of /dev/nvme0n1,
 * readlink of /sys/block/nvme0n1, an open of /sys/block/nvme0n1/size, and
 * after chdir("/dev") a stat of the relative "ng0n1" (after chdir("/") and
 * "dev/ng0n1" if there is no /dev). One line each: "CALL: ok KIND" (KIND
 * c, b, d, l, r: the file's type; readlink and open print "ok") or
 * "CALL: ERRNO-NAME". Exit 0 unless the set-up failed (1).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "insn.h"

static const char *err_name(long e)
{
	switch (e) {
	case ENOENT: return "ENOENT";
	case EACCES: return "EACCES";
	case ENOTDIR: return "ENOTDIR";
	case EPERM: return "EPERM";
	default: return strerror((int)e);
	}
}

static char kind(unsigned mode)
{
	return S_ISCHR(mode) ? 'c' : S_ISBLK(mode) ? 'b' : S_ISDIR(mode) ? 'd' :
	       S_ISLNK(mode) ? 'l' : S_ISREG(mode) ? 'r' : '?';
}

static void show_stat(const char *what, long ret, unsigned mode)
{
	if (ret < 0)
		printf("%s: %s\n", what, err_name(-ret));
	else
		printf("%s: ok %c\n", what, kind(mode));
}

static bool use_libc;

static long libc_ret(long r)
{
	return r < 0 ? -errno : r;
}

static long do_stat(long nr, const char *p, struct stat *st)
{
	if (!use_libc)
		return insn3(nr, (long)p, (long)st, 0);
	return libc_ret(nr == SYS_lstat ? lstat(p, st) : stat(p, st));
}

static long do_statx(const char *p, struct statx *stx)
{
	if (!use_libc)
		return insn5(SYS_statx, AT_FDCWD, (long)p, 0, STATX_BASIC_STATS, (long)stx);
	return libc_ret(statx(AT_FDCWD, p, 0, STATX_BASIC_STATS, stx));
}

static long do_access(const char *p)
{
	return use_libc ? libc_ret(access(p, F_OK)) : insn3(SYS_access, (long)p, F_OK, 0);
}

static long do_readlink(const char *p, char *buf, size_t len)
{
	if (!use_libc)
		return insn3(SYS_readlink, (long)p, (long)buf, (long)len);
	return libc_ret(readlink(p, buf, len));
}

static long do_open(const char *p)
{
	if (!use_libc)
		return insn4(SYS_openat, AT_FDCWD, (long)p, O_RDONLY | O_CLOEXEC, 0);
	return libc_ret(open(p, O_RDONLY | O_CLOEXEC));
}

static void looks(void)
{
	struct stat st;
	struct statx stx;
	char buf[256];
	long ret;

	ret = do_stat(SYS_stat, "/dev/ng0n1", &st);
	show_stat("stat /dev/ng0n1", ret, st.st_mode);
	ret = do_stat(SYS_lstat, "/dev/ng0n1", &st);
	show_stat("lstat /dev/ng0n1", ret, st.st_mode);
	ret = do_statx("/dev/ng0n1", &stx);
	show_stat("statx /dev/ng0n1", ret, stx.stx_mode);
	ret = do_access("/dev/nvme0n1");
	printf("access /dev/nvme0n1: %s\n", ret < 0 ? err_name(-ret) : "ok");
	ret = do_readlink("/sys/block/nvme0n1", buf, sizeof(buf));
	printf("readlink /sys/block/nvme0n1: %s\n", ret < 0 ? err_name(-ret) : "ok");
	ret = do_open("/sys/block/nvme0n1/size");
	if (ret >= 0) {
		ssize_t n = read((int)ret, buf, sizeof(buf) - 1);

		close((int)ret);
		printf("open /sys/block/nvme0n1/size: %s\n", n > 0 ? "ok" : "empty");
	} else {
		printf("open /sys/block/nvme0n1/size: %s\n", err_name(-ret));
	}
	if (!chdir("/dev")) {
		ret = do_stat(SYS_stat, "ng0n1", &st);
		show_stat("stat ng0n1 from /dev", ret, st.st_mode);
	} else if (!chdir("/")) {
		ret = do_stat(SYS_stat, "dev/ng0n1", &st);
		show_stat("stat dev/ng0n1 from /", ret, st.st_mode);
	}
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "--libc")) {
		use_libc = true;
		argc--;
		argv++;
	}
	if (argc > 2 && !strcmp(argv[1], "chroot")) {
		if (chroot(argv[2]) || chdir("/")) {
			perror("chroot");
			return 1;
		}
	} else if (argc > 1 && (!strcmp(argv[1], "unshare") || !strcmp(argv[1], "keep"))) {
		if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL)) {
			perror("unshare");
			return 1;
		}
		if (!strcmp(argv[1], "unshare") &&
		    (mount("none", "/dev", "tmpfs", 0, NULL) ||
		     mount("none", "/sys", "tmpfs", 0, NULL))) {
			perror("mount");
			return 1;
		}
	} else {
		fprintf(stderr, "usage: chroot_look chroot DIR | unshare | keep\n");
		return 1;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	looks();
	return 0;
}
