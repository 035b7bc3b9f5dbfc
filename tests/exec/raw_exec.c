/* SPDX-License-Identifier: MIT */
/*
 * Execs that go around libc's exec family, run under `ucmd exec` by
 * tests/system/exec_raw_exec.sh:
 *
 *   raw_exec probe                 open /dev/ng0n1 and print what it gave
 *                                  ("probe open ok", or its errno) and
 *                                  whether X is in the environment
 *   raw_exec execve PROG           execve(PROG) with the program's own
 *                                  syscall instruction and the environment
 *                                  {"X=1"} alone
 *   raw_exec execveat PROG         execveat(fd of PROG, "", AT_EMPTY_PATH),
 *                                  own instruction, environment {"X=1"}
 *   raw_exec spawn PROG            posix_spawn(PROG) with {"X=1"} (libc's
 *                                  execve in a child whose handlers are reset)
 *
 * An exec that fails prints "NAME errno E" and exits 3; PROG is run as
 * "PROG probe".
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "insn.h"

static const char *ename(long e)
{
	switch (e) {
	case EACCES: return "EACCES";
	case ENOENT: return "ENOENT";
	case EFAULT: return "EFAULT";
	default: return strerror((int)e);
	}
}

int main(int argc, char **argv)
{
	char *env[] = { "X=1", NULL };
	long ret;

	if (argc >= 2 && !strcmp(argv[1], "probe")) {
		int fd = open("/dev/ng0n1", O_RDONLY);

		printf("probe open %s\n", fd >= 0 ? "ok" : ename(errno));
		printf("probe X %s\n", getenv("X") ? getenv("X") : "unset");
		return 0;
	}
	if (argc < 3)
		return 2;
	char *args[] = { argv[2], "probe", NULL };

	fflush(stdout);
	if (!strcmp(argv[1], "execve")) {
		ret = insn5(__NR_execve, (long)argv[2], (long)args, (long)env, 0, 0);
	} else if (!strcmp(argv[1], "execve-badenv")) {
		ret = insn5(__NR_execve, (long)argv[2], (long)args, 16, 0, 0);
	} else if (!strcmp(argv[1], "execveat")) {
		int fd = open(argv[2], O_RDONLY | O_CLOEXEC);

		if (fd < 0)
			return 2;
		ret = insn5(__NR_execveat, fd, (long)"", (long)args, (long)env, AT_EMPTY_PATH);
	} else if (!strcmp(argv[1], "spawn")) {
		pid_t pid;
		int st, err = posix_spawn(&pid, argv[2], NULL, NULL, args, env);

		if (err) {
			printf("spawn errno %s\n", ename(err));
			return 3;
		}
		if (waitpid(pid, &st, 0) != pid)
			return 2;
		printf("spawn status %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
		return 0;
	} else {
		return 2;
	}
	printf("%s errno %s\n", argv[1], ename(-ret));
	return 3;
}
