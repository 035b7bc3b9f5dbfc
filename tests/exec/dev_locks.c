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

static void kept_contend(void)
{
	int fd = xopen(O_RDWR);

	getlk("child getlk 0+100", fd, F_GETLK, 0, 100);
	getlk("child ofd getlk 200+10", fd, F_OFD_GETLK, 200, 10);
	say("child flock ex nb", flock(fd, LOCK_EX | LOCK_NB));
	close(fd);
}

static int exec_kept(int argc, char **argv)
{
	char fds[3][16];
	int a, o, f;

	if (argc == 3) {
		a = xopen(O_RDWR);
		o = xopen(O_RDWR);
		f = xopen(O_RDONLY);
		say("setlk write 0+100", lk(a, F_SETLK, F_WRLCK, 0, 100));
		say("ofd setlk write 200+10", lk(o, F_OFD_SETLK, F_WRLCK, 200, 10));
		say("flock ex", flock(f, LOCK_EX));
		in_child(kept_contend);
		snprintf(fds[0], sizeof(fds[0]), "%d", a);
		snprintf(fds[1], sizeof(fds[1]), "%d", o);
		snprintf(fds[2], sizeof(fds[2]), "%d", f);
		execl("/proc/self/exe", "dev_locks", "exec", path, fds[0], fds[1], fds[2],
		      (char *)NULL);
		say("exec", -1);
		return 1;
	}
	a = atoi(argv[3]);
	o = atoi(argv[4]);
	f = atoi(argv[5]);
	printf("after exec\n");
	in_child(kept_contend);
	close(f);	/* the flock's description's last fd */
	in_child(kept_contend);
	close(o);	/* the OFD lock's */
	in_child(kept_contend);
	close(a);	/* any close drops the POSIX locks */
	in_child(kept_contend);
	return 0;
}

int main(int argc, char **argv)
{
	int a, b, ro, wo;

	if (argc >= 3 && !strcmp(argv[1], "exec")) {
		path = argv[2];
		parent = getpid();
		return exec_kept(argc, argv);
	}
	if (argc != 2) {
		fprintf(stderr, "usage: dev_locks PATH | dev_locks exec PATH\n");
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
