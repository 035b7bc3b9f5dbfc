/* SPDX-License-Identifier: MIT */
/*
 * A statically linked program that forks under `ucmd exec`
 * (tests/system/exec_static_fork.sh): its children keep the supervision,
 * so none of their calls reaches the host's /dev (and those on ucmd's
 * devices are served).
 *
 *   static_fork BLK NG OUT
 *
 * Opens BLK (/dev/nvme0n1) and reads its first block, then forks: the
 * child prints what pread on the inherited descriptor and an open of NG
 * (/dev/ng0n1) give it, and so does a grandchild; then a last child waits
 * for this process to exit and writes what its open of NG gives to the
 * file OUT, opened before (the supervisor is gone by then, and with it
 * every open). Lines: "parent pread N",
 * "child pread E", "child open E", "grandchild open E"; in OUT "orphan open
 * E" (an errno name, or "ok").
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static char buf[4096] __attribute__((aligned(4096)));

static const char *res(long r)
{
	if (r >= 0)
		return "ok";
	switch (errno) {
	case EBADF: return "EBADF";
	case EOPNOTSUPP: return "EOPNOTSUPP";
	case ENOSYS: return "ENOSYS";
	case ENOENT: return "ENOENT";
	default: return strerror(errno);
	}
}

static void child(const char *who, int fd, const char *ng)
{
	if (fd >= 0)
		printf("%s pread %s\n", who, res(pread(fd, buf, 512, 0)));
	printf("%s open %s\n", who, res(open(ng, O_RDWR)));
	fflush(stdout);
}

int main(int argc, char **argv)
{
	pid_t pid, parent = getpid();
	int fd, st;

	if (argc < 4)
		return 2;
	fd = open(argv[1], O_RDWR);
	if (fd < 0) {
		perror(argv[1]);
		return 1;
	}
	printf("parent pread %ld\n", (long)pread(fd, buf, 512, 0));
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		child("child", fd, argv[2]);
		pid = fork();
		if (pid == 0) {
			child("grandchild", -1, argv[2]);
			_exit(0);
		}
		waitpid(pid, &st, 0);
		_exit(0);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return 1;
	int ready[2];
	char c = 0;

	if (pipe(ready))
		return 1;
	pid = fork();
	if (pid == 0) {
		/* opened now: once the supervisor is gone, no open succeeds */
		FILE *f = fopen(argv[3], "w");

		if (!f || write(ready[1], &c, 1) != 1)
			_exit(1);
		/* until the program (and so the supervisor's service) is gone */
		while (getppid() == parent)
			usleep(10000);
		usleep(300000);
		fprintf(f, "orphan open %s\n", res(open(argv[2], O_RDWR)));
		fclose(f);
		_exit(0);
	}
	/* the last child is ready: exit, and the supervisor with us */
	return pid > 0 && read(ready[0], &c, 1) == 1 ? 0 : 1;
}
