/* SPDX-License-Identifier: MIT */
/*
 * A statically linked program whose children do I/O on ucmd's devices under
 * `ucmd exec` (tests/system/exec_static_forkio.sh), as they would on Linux.
 *
 *   static_forkio io BLK LBS SELF     (SELF: this program's path, for the exec)
 *   static_forkio kill BLK LBS
 *   static_forkio selfexec BLK LBS SELF
 *   static_forkio late BLK LBS
 *   static_forkio sqpoll BLK LBS
 *   static_forkio exec FD LBS BLK [K SEED]  (what the child execs; FD inherited)
 *
 * Block k of BLK (/dev/nvme0n1, LBS bytes a block) written here holds
 * pattern(k, seed): byte i is (seed * 131 + k * 7 + i) & 0xff.
 *
 * io: the parent opens BLK (fd A), writes block 0 (seed 1) with pwrite,
 * makes a ring R and seeks A to block 32, then forks. The child: preads
 * block 0 through A and compares; pwrites block 8 (seed 2) through A;
 * opens BLK anew (B) and pwrites block 16 (seed 3); BLKGETSIZE64 on A;
 * io_uring_enter on R must fail (EEXIST: the parent's ring); a ring of its
 * own writes block 24 (seed 4) through A and reads block 8 back through B;
 * write() on A (the shared position: block 32, seed 5); a thread of the
 * child pwrites and preads block 80 (seed 14) through B; a grandchild preads
 * block 16 through B, pwrites block 40 (seed 6) through A and reads block 24
 * on a ring of its own; then the child execs SELF exec A, which pwrites block
 * 48 (seed 7) on the descriptor it kept and preads block 8 on a new open.
 * The parent, once the child is gone: its position of A is block 33 (the
 * child's write moved it), write() there writes block 33 (seed 8); R still
 * serves it (reads block 40 back); it preads blocks 8, 16, 24, 32, 40 and 48
 * and compares; then posix_spawn()s SELF exec A with block 64 (seed 11)
 * and reads that back; a vfork child's pread on A must be EBADF; a thread of
 * the parent pwrites and preads block 81 (seed 15). Lines "NAME ok" or "NAME: what went wrong"; exit 0 when all
 * are ok.
 *
 * selfexec: opens BLK, pwrites block 72 (seed 12), and execs SELF exec
 * with that descriptor, block 73 (seed 13): the program's own exec.
 *
 * late: the parent opens BLK (A), pwrites block 88 (seed 16) and forks a
 * child, which forks a grandchild and exits (the grandchild an orphan),
 * and a second child; neither makes a call on A before the parent closes
 * A. Then the second child pwrites block 89 (seed 17) and the orphan preads
 * block 88 and pwrites block 90 (seed 18) through A; the parent reads both
 * blocks back on a new open.
 *
 * sqpoll: the parent opens BLK (A), makes an SQPOLL ring S and fills a
 * buffer with block 96 (seed 19) before it forks. The child queues a write
 * of that buffer to block 96 through A on S, the ring it inherited, and
 * waits for its CQE with io_uring_enter (an SQPOLL ring's requests run in
 * its maker's memory, on Linux too: its poller is a thread of the maker's;
 * the buffer is at the same address with the same bytes in both); its
 * io_uring_register on S is EEXIST. The parent, the child gone, writes
 * block 97 (seed 20) on S and reads block 96 back on it. Then a child
 * makes an SQPOLL ring of its own, forks a grandchild and exits: the
 * grandchild's io_uring_enter on the ring it inherited, its maker gone, is
 * EOWNERDEAD (Linux's answer once the poller's task is gone).
 *
 * kill: 20 times, a child opens BLK, makes a ring and keeps writing block 56
 * (seed 9) through both the inherited and its own descriptor, and is killed
 * (SIGKILL) while it does; then the parent's own descriptor and ring still
 * serve it (block 57, seed 10, written and read back), and the supervisor
 * (our parent) holds no more descriptors than before the first child.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <linux/fs.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static unsigned lbs;
static int failed;

static void pattern(unsigned char *b, unsigned k, unsigned seed)
{
	for (unsigned i = 0; i < lbs; i++)
		b[i] = (unsigned char)((seed * 131 + k * 7 + i) & 0xff);
}

static void report(const char *name, const char *why)
{
	if (why) {
		printf("%s: %s\n", name, why);
		failed = 1;
	} else {
		printf("%s ok\n", name);
	}
	fflush(stdout);
}

static const char *err(long r, long want)
{
	static char m[128];

	if (r == want)
		return NULL;
	snprintf(m, sizeof(m), "got %ld (%s), wanted %ld", r, r < 0 ? strerror(errno) : "", want);
	return m;
}

static const char *pw(int fd, unsigned k, unsigned seed)
{
	unsigned char *b = aligned_alloc(4096, lbs);

	pattern(b, k, seed);
	return err(pwrite(fd, b, lbs, (off_t)k * lbs), lbs);
}

static const char *pr(int fd, unsigned k, unsigned seed)
{
	unsigned char *b = aligned_alloc(4096, lbs), *w = malloc(lbs);
	const char *e = err(pread(fd, b, lbs, (off_t)k * lbs), lbs);

	pattern(w, k, seed);
	if (!e && memcmp(b, w, lbs))
		e = "the data differs";
	return e;
}

/* one READ or WRITE of block k on ring r through fd: NULL or why not */
static const char *ring_io(struct io_uring *r, int fd, bool write, unsigned k, unsigned seed)
{
	unsigned char *b = aligned_alloc(4096, lbs), *w = malloc(lbs);
	struct io_uring_sqe *sqe = io_uring_get_sqe(r);
	struct io_uring_cqe *cqe;
	static char m[128];
	int ret;

	pattern(w, k, seed);
	if (write)
		memcpy(b, w, lbs);
	else
		memset(b, 0, lbs);
	if (write)
		io_uring_prep_write(sqe, fd, b, lbs, (uint64_t)k * lbs);
	else
		io_uring_prep_read(sqe, fd, b, lbs, (uint64_t)k * lbs);
	ret = io_uring_submit(r);
	if (ret != 1) {
		snprintf(m, sizeof(m), "submit %d (%s)", ret, ret < 0 ? strerror(-ret) : "");
		return m;
	}
	ret = io_uring_wait_cqe(r, &cqe);
	if (ret || cqe->res != (int)lbs) {
		snprintf(m, sizeof(m), "cqe %d res %d", ret, ret ? 0 : cqe->res);
		return m;
	}
	io_uring_cqe_seen(r, cqe);
	return !write && memcmp(b, w, lbs) ? "the data differs" : NULL;
}

static int grandchild(int a, int b)
{
	struct io_uring r;

	report("grandchild pread new fd", pr(b, 16, 3));
	report("grandchild pwrite inherited", pw(a, 40, 6));
	if (io_uring_queue_init(4, &r, 0))
		report("grandchild ring", "io_uring_queue_init");
	else
		report("grandchild ring read", ring_io(&r, b, false, 24, 4));
	return failed;
}

struct thr {
	int fd;
	unsigned k, seed;
	const char *why;
};

static void *thread_io(void *arg)
{
	struct thr *t = arg;

	t->why = pw(t->fd, t->k, t->seed);
	if (!t->why)
		t->why = pr(t->fd, t->k, t->seed);
	return NULL;
}

/* pwrite and pread of block k on fd from a thread of ours (CLONE_VM | CLONE_THREAD) */
static const char *in_thread(int fd, unsigned k, unsigned seed)
{
	struct thr t = { fd, k, seed, "not run" };
	pthread_t th;

	if (pthread_create(&th, NULL, thread_io, &t) || pthread_join(th, NULL))
		return "pthread";
	return t.why;
}

static int child(int a, struct io_uring *pr_ring, const char *blk, const char *self)
{
	unsigned char *buf = aligned_alloc(4096, lbs);
	struct io_uring r;
	uint64_t size = 0;
	char fdarg[16], lbsarg[16];
	pid_t pid;
	int b, st, ret;

	report("child pread inherited", pr(a, 0, 1));
	report("child pwrite inherited", pw(a, 8, 2));
	b = open(blk, O_RDWR);
	report("child open", b < 0 ? strerror(errno) : NULL);
	if (b < 0)
		return 1;
	report("child pwrite new fd", pw(b, 16, 3));
	report("child BLKGETSIZE64", ioctl(a, BLKGETSIZE64, &size) || !size ? "failed" : NULL);
	/* the parent's ring: its SQEs name the parent's memory */
	ret = io_uring_enter(pr_ring->ring_fd, 0, 0, IORING_ENTER_GETEVENTS, NULL);
	report("child inherited ring EEXIST", ret == -EEXIST ? NULL : err(ret, -EEXIST));
	if (io_uring_queue_init(4, &r, 0)) {
		report("child ring", "io_uring_queue_init");
		return 1;
	}
	report("child ring write inherited fd", ring_io(&r, a, true, 24, 4));
	report("child ring read new fd", ring_io(&r, b, false, 8, 2));
	pattern(buf, 32, 5);
	report("child write at the shared position", err(write(a, buf, lbs), lbs));
	report("child's thread pwrite and pread", in_thread(b, 80, 14));
	fflush(stdout);
	pid = fork();
	if (pid == 0)
		_exit(grandchild(a, b));
	report("grandchild status", pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) ||
				    WEXITSTATUS(st) ? "failed" : NULL);
	io_uring_queue_exit(&r);
	if (failed)
		return 1;
	snprintf(fdarg, sizeof(fdarg), "%d", a);
	snprintf(lbsarg, sizeof(lbsarg), "%u", lbs);
	execl(self, self, "exec", fdarg, lbsarg, blk, (char *)NULL);
	report("child exec", strerror(errno));
	return 1;
}

static int do_io(const char *blk, const char *self)
{
	unsigned char *buf = aligned_alloc(4096, lbs);
	struct io_uring r;
	pid_t pid;
	int a, st;
	off_t pos;

	a = open(blk, O_RDWR);
	if (a < 0) {
		report("parent open", strerror(errno));
		return 1;
	}
	report("parent pwrite", pw(a, 0, 1));
	if (io_uring_queue_init(4, &r, 0)) {
		report("parent ring", "io_uring_queue_init");
		return 1;
	}
	report("parent lseek", err(lseek(a, 32 * (off_t)lbs, SEEK_SET), 32 * (long)lbs));
	pid = fork();
	if (pid == 0)
		_exit(child(a, &r, blk, self));
	report("child status", pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) ||
			       WEXITSTATUS(st) ? "failed" : NULL);
	pos = lseek(a, 0, SEEK_CUR);
	report("parent position moved by the child", err(pos, 33 * (long)lbs));
	pattern(buf, 33, 8);
	report("parent write at the shared position", err(write(a, buf, lbs), lbs));
	report("parent ring after the fork", ring_io(&r, a, false, 40, 6));
	report("child's pwrite", pr(a, 8, 2));
	report("child's new fd pwrite", pr(a, 16, 3));
	report("child's ring write", pr(a, 24, 4));
	report("child's write", pr(a, 32, 5));
	report("grandchild's pwrite", pr(a, 40, 6));
	report("exec'd image's pwrite", pr(a, 48, 7));
	/* posix_spawn: a vfork child (the parent's memory) until it execs */
	{
		char fdarg[16], lbsarg[16];
		char *args[] = { (char *)self, "exec", fdarg, lbsarg, (char *)blk, "64", "11", NULL };
		extern char **environ;

		snprintf(fdarg, sizeof(fdarg), "%d", a);
		snprintf(lbsarg, sizeof(lbsarg), "%u", lbs);
		fflush(stdout);
		st = posix_spawn(&pid, self, NULL, NULL, args, environ);
		report("spawned status", st || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) ||
					 WEXITSTATUS(st) ? "failed" : NULL);
		report("spawned image's pwrite", pr(a, 64, 11));
	}
	{
		/*
		 * vfork: the child runs in our memory until it execs or exits,
		 * where no device call of its own can be served: refused, never
		 * made in the wrong memory
		 */
		static volatile long vr, verr;

		pid = vfork();
		if (pid == 0) {
			vr = pread(a, buf, lbs, 0);
			verr = errno;
			_exit(0);
		}
		report("vfork child pread EBADF", pid > 0 && waitpid(pid, &st, 0) == pid && vr == -1 &&
						  verr == EBADF ? NULL : "not refused");
	}
	report("parent's thread pwrite and pread", in_thread(a, 81, 15));
	return failed;
}

static int do_exec(int a, const char *blk, unsigned k, unsigned seed)
{
	int b;

	report("exec'd pwrite kept fd", pw(a, k, seed));
	b = open(blk, O_RDONLY);
	report("exec'd open", b < 0 ? strerror(errno) : NULL);
	if (b >= 0)
		report("exec'd pread new fd", pr(b, 8, 2));
	return failed;
}

static int count_fds(pid_t pid)
{
	char path[64];
	struct dirent *de;
	DIR *d;
	int n = 0;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	d = opendir(path);
	if (!d)
		return -1;
	while ((de = readdir(d)))
		n += de->d_name[0] != '.';
	closedir(d);
	return n;
}

static void busy_child(int a, const char *blk)
{
	unsigned char *b = aligned_alloc(4096, lbs);
	struct io_uring r;
	int fd = open(blk, O_RDWR);

	if (fd < 0 || io_uring_queue_init(4, &r, 0))
		_exit(3);
	pattern(b, 56, 9);
	for (;;) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(&r);
		struct io_uring_cqe *cqe;

		if (pwrite(a, b, lbs, 56 * (off_t)lbs) != (ssize_t)lbs)
			_exit(4);
		io_uring_prep_write(sqe, fd, b, lbs, 56 * (uint64_t)lbs);
		if (io_uring_submit(&r) != 1 || io_uring_wait_cqe(&r, &cqe))
			_exit(5);
		io_uring_cqe_seen(&r, cqe);
	}
}

static int do_kill(const char *blk)
{
	struct timespec ts = { 0, 100 * 1000 * 1000 };
	int a = open(blk, O_RDWR), before = -1, after, st, bad = 0;
	struct io_uring r;

	if (a < 0 || io_uring_queue_init(4, &r, 0)) {
		report("parent open", "failed");
		return 1;
	}
	/* what the supervisor makes on first need for us is made before counting */
	report("parent pwrite before the kills", pw(a, 57, 10));
	report("parent ring before the kills", ring_io(&r, a, false, 57, 10));
	for (int i = 0; i < 20; i++) {
		pid_t pid = fork();

		if (pid == 0)
			busy_child(a, blk);
		nanosleep(&ts, NULL);
		if (kill(pid, SIGKILL) || waitpid(pid, &st, 0) != pid)
			bad = 1;
		else if (!WIFSIGNALED(st))
			bad = 2 + WEXITSTATUS(st) * 0;	/* it stopped by itself: its I/O failed */
		if (i == 0)
			before = count_fds(getppid());
	}
	report("children killed mid-I/O", bad ? "a child's I/O failed before the kill" : NULL);
	report("parent pwrite after the kills", pw(a, 57, 10));
	report("parent ring after the kills", ring_io(&r, a, false, 57, 10));
	/* the supervisor's descriptors after 19 more children: none left behind */
	after = count_fds(getppid());
	{
		char m[64];

		snprintf(m, sizeof(m), "%d descriptors after, %d after the first", after, before);
		report("supervisor released the children", before > 0 && after <= before ? NULL : m);
	}
	return failed;
}

/*
 * A child that has made no call we see yet, and an orphan (its parent gone,
 * so the supervisor's), still hold the parent's descriptor after the parent
 * closed it: both use it then.
 */
static int do_late(const char *blk)
{
	int a = open(blk, O_RDWR), go[2], res[2], st;	/* go: one byte for each waiter */
	char line[128];
	pid_t pid;
	ssize_t n;

	if (a < 0 || pipe(go) || pipe(res)) {
		report("late setup", "failed");
		return 1;
	}
	report("late pwrite", pw(a, 88, 16));
	pid = fork();
	if (pid == 0) {
		char c;
		pid_t g = fork();

		if (g == 0) {
			/* the orphan: waits (no call of ours) until its parent and the fd's opener let go */
			if (read(go[0], &c, 1) != 1)
				_exit(1);
			const char *why = pr(a, 88, 16);

			if (!why)
				why = pw(a, 90, 18);
			n = snprintf(line, sizeof(line), "orphan pread and pwrite %s\n", why ? why : "ok");
			_exit(write(res[1], line, (size_t)n) == n ? 0 : 1);
		}
		_exit(g < 0);
	}
	/* a second child: waits for the close the same way, then uses the fd */
	pid_t late = fork();

	if (late == 0) {
		char c;

		if (read(go[0], &c, 1) != 1)
			_exit(1);
		const char *why = pw(a, 89, 17);

		n = snprintf(line, sizeof(line), "late child pwrite %s\n", why ? why : "ok");
		_exit(write(res[1], line, (size_t)n) == n ? 0 : 1);
	}
	/* the first child goes (its child now the supervisor's); then the fd closes here */
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st))
		report("late first child", "failed");
	report("late close", err(close(a), 0));
	if (write(go[1], "xx", 2) != 2 || waitpid(late, &st, 0) != late)
		report("late second child", "failed");
	close(res[1]);
	while ((n = read(res[0], line, sizeof(line) - 1)) > 0) {
		line[n] = '\0';
		fputs(line, stdout);
		failed |= !strstr(line, " ok\n");
	}
	a = open(blk, O_RDONLY);
	report("late child's data", pr(a, 89, 17));
	report("orphan's data", pr(a, 90, 18));
	return failed;
}

/* the program itself execs, its descriptor kept: the new image is served too */
static int do_selfexec(const char *blk, const char *self)
{
	char fdarg[16], lbsarg[16];
	int a = open(blk, O_RDWR);

	if (a < 0) {
		report("selfexec open", strerror(errno));
		return 1;
	}
	report("selfexec pwrite", pw(a, 72, 12));
	snprintf(fdarg, sizeof(fdarg), "%d", a);
	snprintf(lbsarg, sizeof(lbsarg), "%u", lbs);
	execl(self, self, "exec", fdarg, lbsarg, blk, "73", "13", (char *)NULL);
	report("selfexec exec", strerror(errno));
	return 1;
}

/* the grandchild's enter on an SQPOLL ring whose maker (its parent) exited */
static int sqpoll_orphan(void)
{
	struct io_uring_params p = { .flags = IORING_SETUP_SQPOLL, .sq_thread_idle = 10 };
	int res[2], ret = -1;
	char v = 1;
	pid_t c;

	if (pipe(res))
		return 1;
	fflush(stdout);
	c = fork();
	if (c == 0) {
		struct io_uring s;
		pid_t maker = getpid();

		close(res[0]);
		if (io_uring_queue_init_params(4, &s, &p))
			_exit(1);
		if (fork() == 0) {
			struct timespec ts = { 0, 200 * 1000 * 1000 };

			/* reparented once the maker is gone; then the supervisor has seen it go */
			while (getppid() == maker)
				nanosleep(&(struct timespec){ 0, 1000 * 1000 }, NULL);
			nanosleep(&ts, NULL);
			ret = io_uring_enter(s.ring_fd, 0, 0, IORING_ENTER_SQ_WAKEUP, NULL);
			v = ret == -EOWNERDEAD ? 0 : 1;
			if (v)
				printf("grandchild enter on the SQPOLL ring of a maker gone: %d\n", ret);
			fflush(stdout);
			if (write(res[1], &v, 1) != 1)
				_exit(1);
			_exit(0);
		}
		_exit(0);
	}
	close(res[1]);
	if (c < 0 || waitpid(c, NULL, 0) != c || read(res[0], &v, 1) != 1)
		v = 1;
	close(res[0]);
	report("grandchild enter on the SQPOLL ring of a maker gone EOWNERDEAD",
	       v ? "not EOWNERDEAD" : NULL);
	return v;
}

static int do_sqpoll(const char *blk)
{
	struct io_uring_params p = { .flags = IORING_SETUP_SQPOLL, .sq_thread_idle = 10 };
	unsigned char *b = aligned_alloc(4096, lbs);
	struct io_uring_cqe *cqe;
	struct io_uring s;
	int a = open(blk, O_RDWR | O_CLOEXEC), ret, st;
	pid_t c;

	if (a < 0 || !b || (ret = io_uring_queue_init_params(8, &s, &p))) {
		report("sqpoll setup", strerror(errno));
		return 1;
	}
	pattern(b, 96, 19);
	c = fork();
	if (c == 0) {
		static char m[128];
		struct io_uring_sqe *sqe = io_uring_get_sqe(&s);
		struct io_uring_probe *probe;

		io_uring_prep_write(sqe, a, b, lbs, 96ull * lbs);
		ret = io_uring_submit(&s);
		report("child queues on the inherited SQPOLL ring", err(ret, 1));
		/* an enter of the child's own on the parent's ring, whatever liburing did */
		ret = io_uring_enter(s.ring_fd, 0, 1, IORING_ENTER_GETEVENTS | IORING_ENTER_SQ_WAKEUP,
				     NULL);
		report("child enter on the inherited SQPOLL ring", ret < 0 ? strerror(-ret) : NULL);
		ret = io_uring_peek_cqe(&s, &cqe);
		if (!ret && cqe->res != (int)lbs)
			snprintf(m, sizeof(m), "res %d", cqe->res);
		report("child write on the inherited SQPOLL ring", ret ? strerror(-ret) :
			cqe->res != (int)lbs ? m : NULL);
		if (!ret)
			io_uring_cqe_seen(&s, cqe);
		probe = calloc(1, sizeof(*probe) + 4 * sizeof(probe->ops[0]));
		ret = probe ? io_uring_register_probe(&s, probe, 4) : -ENOMEM;
		report("child register on the inherited SQPOLL ring EEXIST", err(ret, -EEXIST));
		_exit(failed);
	}
	if (c < 0 || waitpid(c, &st, 0) != c || !WIFEXITED(st) || WEXITSTATUS(st))
		failed = 1;
	/* the child moved the shared SQ tail; liburing's copy of it here is the parent's */
	s.sq.sqe_head = s.sq.sqe_tail = io_uring_smp_load_acquire(s.sq.ktail);
	report("parent SQPOLL ring after the child", ring_io(&s, a, true, 97, 20));
	report("parent SQPOLL ring reads the child's block", ring_io(&s, a, false, 96, 19));
	return failed | sqpoll_orphan();
}

int main(int argc, char **argv)
{
	if (argc < 4)
		return 2;
	lbs = (unsigned)strtoul(argv[3], NULL, 0);
	if (!strcmp(argv[1], "io") && argc == 5)
		return do_io(argv[2], argv[4]);
	if (!strcmp(argv[1], "selfexec") && argc == 5)
		return do_selfexec(argv[2], argv[4]);
	if (!strcmp(argv[1], "late"))
		return do_late(argv[2]);
	if (!strcmp(argv[1], "kill"))
		return do_kill(argv[2]);
	if (!strcmp(argv[1], "sqpoll"))
		return do_sqpoll(argv[2]);
	if (!strcmp(argv[1], "exec") && argc == 5)
		return do_exec(atoi(argv[2]), argv[4], 48, 7);
	if (!strcmp(argv[1], "exec") && argc == 7)
		return do_exec(atoi(argv[2]), argv[4], (unsigned)atoi(argv[5]), (unsigned)atoi(argv[6]));
	return 2;
}
