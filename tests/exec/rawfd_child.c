/* SPDX-License-Identifier: MIT */
/*
 * A device descriptor opened with the program's own syscall instruction
 * (ucmd-supervise's under `ucmd exec`, numbered 960..), copied with the
 * program's own dup3 to a child's stdin or stdout before the child execs
 * dd (as Go's os/exec gives a child an *os.File): dd, a program of its
 * own, reads or writes the device there as on Linux.
 *
 *   rawfd_child BLKPATH IN OUT
 *
 * Opens BLKPATH (/dev/nvmeXnY) read-write with its own instruction, twice
 * (each child's dd seeks from the file position, which a shared
 * description would carry from one to the other, as on Linux); a
 * child copies the first to 1 and execs `dd if=IN bs=4096 seek=10 count=1
 * conv=notrunc` (block 10 of 4096 bytes written from IN through its
 * stdout); another copies the second to 0 and execs `dd of=OUT bs=4096 skip=10
 * count=1` (read back through its stdin). Prints "write: STATUS" and
 * "read: STATUS", dd's exit status (or "signal N"). Exit 0 either way (1
 * on bad usage).
 *
 *   rawfd_child alone BLKPATH IN
 *
 * The copy outlives every number the supervisor gave for the file: opens
 * BLKPATH so, copies it to 1 with its own dup3, closes the original with
 * its own close and execs `dd if=IN bs=4096 seek=12 count=1 conv=notrunc`
 * itself (dd's exit status is the program's; 125 if the copy failed).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "insn.h"

static void run(const char *what, long fd, int to, char *const argv[])
{
	pid_t c;
	int st;

	fflush(stdout);
	c = fork();
	if (c == 0) {
		/* the program's own dup3: neither libc nor the preload sees it */
		if (insn3(SYS_dup3, fd, to, 0) != to)
			_exit(125);
		execvp(argv[0], argv);
		_exit(127);
	}
	if (c < 0 || waitpid(c, &st, 0) != c) {
		printf("%s: fork or wait failed\n", what);
		return;
	}
	if (WIFEXITED(st))
		printf("%s: %d\n", what, WEXITSTATUS(st));
	else
		printf("%s: signal %d\n", what, WTERMSIG(st));
}

int main(int argc, char **argv)
{
	char in[4200], out[4200];
	long fd, fd2;

	if (argc == 4 && !strcmp(argv[1], "alone")) {
		fd = insn3(SYS_openat, AT_FDCWD, (long)argv[2], O_RDWR);
		if (fd < 0 || insn3(SYS_dup3, fd, 1, 0) != 1)
			return 125;
		insn3(SYS_close, fd, 0, 0);
		snprintf(in, sizeof(in), "if=%s", argv[3]);
		execvp("dd", (char *const[]){ "dd", in, "bs=4096", "seek=12", "count=1",
					      "conv=notrunc", "status=none", NULL });
		return 127;
	}
	if (argc != 4) {
		fprintf(stderr, "usage: rawfd_child BLKPATH IN OUT\n");
		return 1;
	}
	fd = insn3(SYS_openat, AT_FDCWD, (long)argv[1], O_RDWR);
	fd2 = insn3(SYS_openat, AT_FDCWD, (long)argv[1], O_RDWR);
	if (fd < 0 || fd2 < 0) {
		printf("open: %s\n", strerror((int)-(fd < 0 ? fd : fd2)));
		return 0;
	}
	snprintf(in, sizeof(in), "if=%s", argv[2]);
	snprintf(out, sizeof(out), "of=%s", argv[3]);
	run("write", fd, 1,
	    (char *const[]){ "dd", in, "bs=4096", "seek=10", "count=1", "conv=notrunc",
			     "status=none", NULL });
	run("read", fd2, 0,
	    (char *const[]){ "dd", out, "bs=4096", "skip=10", "count=1", "status=none", NULL });
	return 0;
}
