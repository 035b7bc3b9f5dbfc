/* SPDX-License-Identifier: MIT */
/*
 * Lists a directory with the getdents64 call, not readdir, as a program
 * with its own directory walker does:
 *
 *   raw_getdents DIR [syscall|insn|orphan|old|oldinsn]
 *
 * through glibc's getdents64(), with "syscall" through
 * syscall(SYS_getdents64, ...), with "insn" through a syscall instruction
 * of its own (x86-64), as Go's runtime lists directories: no libc at all,
 * and a SIGSYS handler of its own, as Go's (a SIGSYS is "sigsys" on stderr,
 * exit 99). "orphan" kills its parent (under `ucmd exec`, the supervisor)
 * first, waits to be reparented, then lists with its own instruction.
 * "old" lists with x86-64's old getdents call (struct linux_dirent: d_type
 * the record's last byte) through syscall(SYS_getdents, ...), "oldinsn"
 * with that call made by its own instruction (glibc has no function for
 * it). Prints "NAME TYPE" per entry (TYPE: b, c,
 * d, l, r or ?), "." and ".." left out, reading with a 512-byte buffer
 * (several calls); then rewinds (lseek 0) and lists again, which must give
 * the same count ("again N" on stderr otherwise, exit 1). Exit 0; 1 with
 * the errno on stderr.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "insn.h"

static int use_syscall, use_insn, use_old;

/* getdents64 with our own instruction: -errno or the bytes */
static long insn_getdents64(int fd, void *buf, unsigned long len)
{
	return insn3(SYS_getdents64, fd, (long)buf, (long)len);
}

static long raw_getdents64(int fd, void *buf, unsigned long len)
{
	long ret;

	if (use_old && use_insn)
		return insn3(SYS_getdents, fd, (long)buf, (long)len);
	if (use_old) {
		ret = syscall(SYS_getdents, fd, buf, len);
		return ret < 0 ? -errno : ret;
	}
	if (use_insn)
		return insn_getdents64(fd, buf, len);
	ret = use_syscall ? syscall(SYS_getdents64, fd, buf, len) : getdents64(fd, buf, len);
	return ret < 0 ? -errno : ret;
}

static int list(int fd, int print)
{
	_Alignas(8) char buf[512];
	int count = 0;

	for (;;) {
		long n = raw_getdents64(fd, buf, sizeof(buf));

		if (n < 0) {
			fprintf(stderr, "getdents64: %s\n", strerror((int)-n));
			return -1;
		}
		if (!n)
			return count;
		for (long off = 0; off < n;) {
			const char *rec = buf + off;
			unsigned short reclen;
			unsigned char type;
			/* linux_dirent64: type then name; linux_dirent: name, then type last */
			const char *name = rec + (use_old ? 18 : 19);

			memcpy(&reclen, rec + 16, 2);
			type = (unsigned char)rec[use_old ? reclen - 1 : 18];
			off += reclen;
			if (!strcmp(name, ".") || !strcmp(name, ".."))
				continue;
			count++;
			if (print)
				printf("%s %c\n", name, type == DT_BLK ? 'b' : type == DT_CHR ? 'c' :
					type == DT_DIR ? 'd' : type == DT_LNK ? 'l' : type == DT_REG ? 'r' :
					'?');
		}
	}
}

static void on_sigsys(int sig)
{
	(void)sig;
	write(2, "sigsys\n", 7);
	_exit(99);
}

int main(int argc, char **argv)
{
	int fd, first, again;
	int orphan = argc > 2 && !strcmp(argv[2], "orphan");

	if (argc < 2) {
		fprintf(stderr, "usage: raw_getdents DIR [syscall|insn]\n");
		return 1;
	}
	use_syscall = argc > 2 && !strcmp(argv[2], "syscall");
	use_old = argc > 2 && !strncmp(argv[2], "old", 3);
	use_insn = orphan || (argc > 2 && (!strcmp(argv[2], "insn") || !strcmp(argv[2], "oldinsn")));
	if (use_insn)
		signal(SIGSYS, on_sigsys);
	if (orphan) {
		pid_t parent = getppid();

		kill(parent, SIGKILL);
		while (getppid() == parent)
			usleep(1000);
	}
	fd = open(argv[1], O_RDONLY | O_DIRECTORY);
	if (fd < 0) {
		fprintf(stderr, "%s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	first = list(fd, 1);
	if (first < 0 || lseek(fd, 0, SEEK_SET) != 0)
		return 1;
	again = list(fd, 0);
	if (again != first) {
		fprintf(stderr, "again %d, first %d\n", again, first);
		return 1;
	}
	return 0;
}
