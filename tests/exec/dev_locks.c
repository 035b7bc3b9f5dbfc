/* SPDX-License-Identifier: MIT */
/*
 * Record locks and flock on PATH between two processes, as a program
 * contending for a disk would take them (QEMU's F_OFD_SETLK byte locks,
 * util-linux's flock):
 *
 *   dev_locks PATH
 *
 * Prints one line per step (what the call returned, errno's name, what
 * F_GETLK said with the holder named "parent", "none" or the pid -1 of an
 * OFD lock), so that a run on a regular file outside `ucmd exec` and one
 * on /dev/nvme0n1 under it can be compared line by line. Each contender is
 * a forked child that opens PATH itself; exit 1 on a setup failure.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *path;
static pid_t parent;

static const char *ename(int e)
{
	switch (e) {
	case EAGAIN: return "EAGAIN";
	case EBADF: return "EBADF";
	case EINVAL: return "EINVAL";
	case EACCES: return "EACCES";
	default: return strerror(e);
	}
}

static int xopen(int flags)
{
	int fd = open(path, flags);

	if (fd < 0) {
		printf("open %s: %s\n", path, strerror(errno));
		exit(1);
	}
	return fd;
}

static void say(const char *what, int ret)
{
	printf("%s: %s\n", what, ret < 0 ? ename(errno) : "ok");
	fflush(stdout);
}

static int lk(int fd, int cmd, short type, off_t start, off_t len)
{
	struct flock fl = { .l_type = type, .l_whence = SEEK_SET, .l_start = start, .l_len = len };

	return fcntl(fd, cmd, &fl);
}

static void getlk(const char *what, int fd, int cmd, off_t start, off_t len)
{
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = start, .l_len = len };
	const char *who;
	char pid[32];

	if (fcntl(fd, cmd, &fl) < 0) {
		say(what, -1);
		return;
	}
	if (fl.l_type == F_UNLCK) {
		printf("%s: none\n", what);
		fflush(stdout);
		return;
	}
	if (fl.l_pid == parent)
		who = "parent";
	else {
		snprintf(pid, sizeof(pid), "pid %d", (int)fl.l_pid);
		who = pid;
	}
	printf("%s: %s %lld+%lld by %s\n", what, fl.l_type == F_WRLCK ? "write" : "read",
	       (long long)fl.l_start, (long long)fl.l_len, who);
	fflush(stdout);
}

/* run step in a forked child (another process, its own open of PATH) */
static void in_child(void (*step)(void))
{
	pid_t pid;
	int st;

	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		perror("fork");
		exit(1);
	}
	if (!pid) {
		step();
		fflush(stdout);
		_exit(0);
	}
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st)) {
		printf("child failed\n");
		exit(1);
	}
}

static void posix_contend(void)
{
	int fd = xopen(O_RDWR);

	say("child setlk write 50+10", lk(fd, F_SETLK, F_WRLCK, 50, 10));
	getlk("child getlk 50+10", fd, F_GETLK, 50, 10);
	say("child setlk write 100+10", lk(fd, F_SETLK, F_WRLCK, 100, 10));
	getlk("child getlk 100+10 (own)", fd, F_GETLK, 100, 10);
	close(fd);
}

static void ofd_contend(void)
{
	int fd = xopen(O_RDWR);

	say("child ofd setlk write 0+1", lk(fd, F_OFD_SETLK, F_WRLCK, 0, 1));
	say("child ofd setlk read 0+1", lk(fd, F_OFD_SETLK, F_RDLCK, 0, 1));
	getlk("child ofd getlk 0+1", fd, F_OFD_GETLK, 0, 1);
	getlk("child posix getlk 0+1", fd, F_GETLK, 0, 1);
	close(fd);
}

static void flock_contend(void)
{
	int fd = xopen(O_RDWR);

	say("child flock ex nb", flock(fd, LOCK_EX | LOCK_NB));
	say("child flock sh nb", flock(fd, LOCK_SH | LOCK_NB));
	close(fd);
}

int main(int argc, char **argv)
{
	int a, b, ro, wo;

	if (argc != 2) {
		fprintf(stderr, "usage: dev_locks PATH\n");
		return 1;
	}
	path = argv[1];
	parent = getpid();

	/* access modes: a lock needs the fd opened for its kind */
	ro = xopen(O_RDONLY);
	wo = xopen(O_WRONLY);
	say("rdonly setlk write", lk(ro, F_SETLK, F_WRLCK, 0, 1));
	say("rdonly ofd setlk write", lk(ro, F_OFD_SETLK, F_WRLCK, 0, 1));
	say("wronly setlk read", lk(wo, F_SETLK, F_RDLCK, 0, 1));
	say("wronly setlkw write", lk(wo, F_SETLKW, F_WRLCK, 0, 1));
	say("rdonly setlk read", lk(ro, F_SETLK, F_RDLCK, 0, 1));
	getlk("own getlk 0+1", ro, F_GETLK, 0, 1);
	close(wo);	/* any close of PATH drops the process's POSIX locks */
	close(ro);

	/* POSIX: another process contends; any close releases */
	a = xopen(O_RDWR);
	say("parent setlk write 0+100", lk(a, F_SETLK, F_WRLCK, 0, 100));
	in_child(posix_contend);
	b = xopen(O_RDONLY);
	close(b);	/* another fd of PATH: the parent's locks go */
	in_child(posix_contend);
	say("parent setlkw write 0+100", lk(a, F_SETLKW, F_WRLCK, 0, 100));
	say("parent unlock", lk(a, F_SETLK, F_UNLCK, 0, 0));
	in_child(posix_contend);
	close(a);

	/* OFD: the description holds them; the last close of it releases */
	a = xopen(O_RDWR);
	say("parent ofd setlk write 0+0", lk(a, F_OFD_SETLK, F_WRLCK, 0, 0));
	b = dup(a);
	close(a);	/* b keeps the description, and its lock */
	in_child(ofd_contend);
	a = xopen(O_RDWR);
	close(a);	/* another description's close: nothing goes */
	in_child(ofd_contend);
	close(b);
	in_child(ofd_contend);

	/* flock: an O_RDONLY open's lock excludes an O_RDWR one's */
	a = xopen(O_RDONLY);
	say("parent flock ex", flock(a, LOCK_EX));
	in_child(flock_contend);
	say("parent flock un", flock(a, LOCK_UN));
	in_child(flock_contend);
	say("parent flock sh", flock(a, LOCK_SH));
	in_child(flock_contend);
	close(a);
	in_child(flock_contend);
	return 0;
}
