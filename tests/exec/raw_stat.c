/* SPDX-License-Identifier: MIT */
/*
 * The looks by path (stat, access, readlink and their family), made with
 * the program's own syscall instruction (x86-64), as Go's os.Stat,
 * os.Readlink and filepath.EvalSymlinks make them; or through libc
 * (`libc` first), which the preload interposes: the two must print the same.
 *
 *   raw_stat [libc] stat|lstat|fstatat|statx PATH   type, mode, rdev, size, nlink, ino
 *   raw_stat [libc] access|faccessat|faccessat2 PATH r|w
 *   raw_stat [libc] readlink|readlinkat PATH        the target (readlinkat: relative to
 *                                                   PATH's directory, opened raw)
 *   raw_stat fstat PATH                             raw openat + fstat, as stat prints it
 *   raw_stat cat PATH                               raw openat + read: the bytes
 *   raw_stat write PATH                             raw openat O_WRONLY: "ok" or the errno
 *   raw_stat [libc] bench N PATH                    N newfstatat (libc: stat): microseconds per call
 *   raw_stat [libc] looks N PATH                    N newfstatat and N faccessat R_OK (libc: stat,
 *                                                   access): "ok", or the first error and how
 *                                                   many of the 2N calls failed
 *
 * "-u UID" before it all first takes on that user (setgroups(0),
 * setresgid and setresuid: the whole process, as a root service that drops
 * privileges), so that access answers for it. An error prints
 * "err <strerror>". Exit 0 unless the usage is wrong (or the user cannot be
 * taken on: 1).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <grp.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "insn.h"
#include "ftype.h"

static int use_libc;

static long err_of(long r)
{
	return use_libc ? (r < 0 ? -errno : r) : r;
}

static int show(long r, const struct stat *st)
{
	if (r < 0)
		return printf("err %s\n", strerror((int)-r)), 0;
	printf("type=%c mode=%04o rdev=%u:%u size=%lld nlink=%lu ino=%llu\n", type_of(st->st_mode),
	       st->st_mode & 07777, major(st->st_rdev), minor(st->st_rdev),
	       (long long)st->st_size, (unsigned long)st->st_nlink, (unsigned long long)st->st_ino);
	return 0;
}

int main(int argc, char **argv)
{
	struct stat st;
	const char *op, *path;
	long r;

	if (argc > 2 && !strcmp(argv[1], "-u")) {
		unsigned id = (unsigned)strtoul(argv[2], NULL, 10);

		if (setgroups(0, NULL) || setresgid(id, id, id) || setresuid(id, id, id))
			return perror("raw_stat: taking on the user"), 1;
		argv += 2;
		argc -= 2;
	}
	if (argc > 1 && !strcmp(argv[1], "libc")) {
		use_libc = 1;
		argv++;
		argc--;
	}
	if (argc < 3)
		return fprintf(stderr, "usage: raw_stat [libc] OP PATH [ARG]\n"), 1;
	op = argv[1];
	path = argv[2];
	if (!strcmp(op, "bench")) {
		long n = atol(argv[2]);
		struct timespec a, b;

		if (argc < 4 || n <= 0)
			return 1;
		clock_gettime(CLOCK_MONOTONIC, &a);
		for (long i = 0; i < n; i++)
			if (use_libc)
				stat(argv[3], &st);
			else
				insn4(SYS_newfstatat, AT_FDCWD, (long)argv[3], (long)&st, 0);
		clock_gettime(CLOCK_MONOTONIC, &b);
		printf("%.2f\n", ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / 1e3 / n);
		return 0;
	}
	if (!strcmp(op, "looks")) {
		long n = atol(argv[2]), bad = 0, first = 0;

		if (argc < 4 || n <= 0)
			return 1;
		for (long i = 0; i < n; i++) {
			long e[2];

			e[0] = use_libc ? err_of(stat(argv[3], &st))
					: insn4(SYS_newfstatat, AT_FDCWD, (long)argv[3], (long)&st, 0);
			e[1] = use_libc ? err_of(access(argv[3], R_OK))
					: insn4(SYS_faccessat, AT_FDCWD, (long)argv[3], R_OK, 0);
			for (int k = 0; k < 2; k++)
				if (e[k] < 0) {
					first = first ? first : e[k];
					bad++;
				}
		}
		if (bad)
			printf("err %s (%ld of %ld)\n", strerror((int)-first), bad, 2 * n);
		else
			printf("ok\n");
		return 0;
	}
	if (!strcmp(op, "stat"))
		r = use_libc ? err_of(stat(path, &st)) : insn3(SYS_stat, (long)path, (long)&st, 0);
	else if (!strcmp(op, "lstat"))
		r = use_libc ? err_of(lstat(path, &st)) : insn3(SYS_lstat, (long)path, (long)&st, 0);
	else if (!strcmp(op, "fstatat"))
		r = use_libc ? err_of(fstatat(AT_FDCWD, path, &st, AT_SYMLINK_NOFOLLOW))
			     : insn4(SYS_newfstatat, AT_FDCWD, (long)path, (long)&st,
				     AT_SYMLINK_NOFOLLOW);
	else if (!strcmp(op, "statx")) {
		struct statx sx;

		r = use_libc ? err_of(statx(AT_FDCWD, path, 0, STATX_BASIC_STATS, &sx))
			     : insn5(SYS_statx, AT_FDCWD, (long)path, 0, STATX_BASIC_STATS, (long)&sx);
		memset(&st, 0, sizeof(st));
		st.st_mode = sx.stx_mode;
		st.st_rdev = makedev(sx.stx_rdev_major, sx.stx_rdev_minor);
		st.st_size = (off_t)sx.stx_size;
		st.st_nlink = sx.stx_nlink;
		st.st_ino = sx.stx_ino;
	} else if (!strncmp(op, "access", 6) || !strncmp(op, "faccessat", 9)) {
		int mode = argc > 3 && argv[3][0] == 'w' ? W_OK : R_OK;

		if (!strcmp(op, "access"))
			r = use_libc ? err_of(access(path, mode)) : insn3(SYS_access, (long)path, mode, 0);
		else if (!strcmp(op, "faccessat"))
			r = use_libc ? err_of(faccessat(AT_FDCWD, path, mode, 0))
				     : insn3(SYS_faccessat, AT_FDCWD, (long)path, mode);
		else
			r = use_libc ? err_of(faccessat(AT_FDCWD, path, mode, AT_EACCESS))
				     : insn4(SYS_faccessat2, AT_FDCWD, (long)path, mode, AT_EACCESS);
		printf(r < 0 ? "err %s\n" : "ok\n", strerror((int)-r));
		return 0;
	} else if (!strcmp(op, "readlink") || !strcmp(op, "readlinkat")) {
		char buf[4096], dir[4096], name[4096];
		long dfd = AT_FDCWD;
		const char *p = path;

		if (!strcmp(op, "readlinkat")) {
			snprintf(dir, sizeof(dir), "%s", path);
			snprintf(name, sizeof(name), "%s", path);
			dfd = use_libc ? open(dirname(dir), O_RDONLY | O_DIRECTORY)
				       : insn4(SYS_openat, AT_FDCWD, (long)dirname(dir),
					       O_RDONLY | O_DIRECTORY, 0);
			if (dfd < 0)
				return printf("err open: %s\n", strerror(use_libc ? errno : (int)-dfd)), 0;
			p = basename(name);
		}
		r = use_libc ? err_of(readlinkat((int)dfd, p, buf, sizeof(buf) - 1))
			     : (dfd == AT_FDCWD ? insn3(SYS_readlink, (long)p, (long)buf, sizeof(buf) - 1)
						: insn4(SYS_readlinkat, dfd, (long)p, (long)buf,
							sizeof(buf) - 1));
		if (r < 0)
			return printf("err %s\n", strerror((int)-r)), 0;
		buf[r] = '\0';
		printf("%s\n", buf);
		return 0;
	} else if (!strcmp(op, "fstat")) {
		long fd = insn4(SYS_openat, AT_FDCWD, (long)path, O_RDONLY, 0);

		if (fd < 0)
			return printf("err %s\n", strerror((int)-fd)), 0;
		r = insn3(SYS_fstat, fd, (long)&st, 0);
	} else if (!strcmp(op, "cat") || !strcmp(op, "write")) {
		char buf[65536];
		int w = op[0] == 'w';
		long fd = insn4(SYS_openat, AT_FDCWD, (long)path, w ? O_WRONLY : O_RDONLY, 0);

		if (fd < 0)
			return printf("err %s\n", strerror((int)-fd)), 0;
		if (w)
			return printf("ok\n"), 0;
		r = insn3(SYS_read, fd, (long)buf, sizeof(buf));
		if (r < 0)
			return printf("err read: %s\n", strerror((int)-r)), 0;
		fwrite(buf, 1, (size_t)r, stdout);
		return 0;
	} else {
		return fprintf(stderr, "raw_stat: unknown op %s\n", op), 1;
	}
	return show(r, &st);
}
