/* SPDX-License-Identifier: MIT */
/*
 * A ring without SQPOLL that a forked child inherited: what Linux lets the
 * child do on it, and what it refuses (tests/system/exec_uring_inherit.sh).
 *
 *   uring_inherit wait NGPATH
 *     The parent writes a pattern at 4 KiB block 24 through its ring and forks.
 *     The child looks (io_uring_enter with nothing to submit and no
 *     GETEVENTS: 0) and waits for two CQEs the parent submits after the
 *     fork on the same ring (a NOP, then an NVMe Read of block 24): Linux's
 *     io_cqring_wait serves any task holding the ring. The child reaps them
 *     from the CQ both share and says what it got; the parent, the child
 *     gone, compares what its Read brought with the pattern.
 *   uring_inherit single NGPATH
 *     IORING_SETUP_SINGLE_ISSUER: the child's submit and its
 *     io_uring_register (an eventfd) are EEXIST, Linux's answer to any task
 *     but the ring's submitter; its wait for the parent's CQE is served.
 *   uring_inherit defer NGPATH
 *     IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN: the child's
 *     wait is EEXIST too (io_cqring_wait: only the submitter runs the
 *     ring's task work).
 *   uring_inherit submit NGPATH
 *     Both submit on the ring they share, at once: the child writes 4 KiB
 *     blocks 40..47 from buffers of its own (byte value 0xc0 + i, written
 *     after the fork: the parent's pages at those addresses stay zero),
 *     the parent blocks 48..55 (0x50 + i), one SQE per enter, each under a
 *     lock both hold in turn around filling and submitting (the SQ is one,
 *     as on Linux; liburing's own idea of the tail is re-read from it). The
 *     parent reaps all 16 CQEs from the CQ both share: the child's come
 *     with its user_data (100 + i) and the result of its write. The script
 *     reads the blocks with dd.
 *   uring_inherit regring NGPATH
 *     The parent registers its ring's fd (IORING_REGISTER_RING_FDS) and
 *     forks. Registered indexes are a task's own: the child's enter by
 *     the parent's index is EINVAL (it has no io_uring task yet); it
 *     registers the inherited ring itself (served: a plain ring's register
 *     of ring fds needs nothing of the maker's), enters by its own index
 *     (0), and by one it never registered (EBADF).
 *   uring_inherit flags NGPATH
 *     The child submits on the shared ring a NOP whose CQE carries flags
 *     (IORING_CQE_F_MORE | IORING_CQE_F_SOCK_NONEMPTY, through ucmd's own
 *     nop_flags bit UCMD_NOP_CQE_FLAGS, 1u << 31, flags from addr3: no op
 *     ucmd's core runs posts flags otherwise; Linux answers -EINVAL to the
 *     bit) and result 7; the parent reaps it from the CQ both share with
 *     its user_data, result and flags, as the CQE Linux posts there.
 *   uring_inherit exit|_exit|exit_group NGPATH
 *     The child submits on the shared ring a TIMEOUT of an hour (user_data
 *     300) and an NVMe Read of block 0 into a buffer of its own (301), and
 *     leaves at once, by exit(0), _exit(0) or syscall(SYS_exit_group, 0).
 *     Linux's ring outlives the task: its requests complete into the
 *     shared CQ or end -ECANCELED, never vanish. The parent, the child
 *     reaped, finds both CQEs: the TIMEOUT -ECANCELED (Linux would post
 *     -ETIME an hour on; ucmd cancels at the exit, docs/compat.md), the
 *     Read its result. A wait of 30 s guards against a CQE that never
 *     comes (printed EINTR), not against a slow one.
 *   uring_inherit sigkill|raw_exit_group NGPATH
 *     The same, the child leaving by a SIGKILL of its own or by an
 *     exit_group instruction of its own (no libc, no preload sees it): its
 *     requests are the ring's, and their CQEs post all the same (Linux
 *     cancels the dying task's TIMEOUT, -ECANCELED, and waits for the
 *     Read). The parent checks the child died as asked.
 *   uring_inherit register
 *     The child's io_uring_register on the plain ring it inherited. Linux's
 *     registrations belong to the ring, whoever makes them: the probe is
 *     the ring's (URING_CMD supported); an eventfd the child registers is
 *     signalled for the ring's CQEs (the child's NOP, user_data 600, which
 *     the parent reaps once the child exited); the child unregisters it.
 *     Files and buffers, which Linux would register too, are EOPNOTSUPP
 *     under ucmd (the daemon's ring acts in the maker's memory and file
 *     table; docs/compat.md).
 *   uring_inherit sqfull
 *     The child submits 48 NOPs, one per enter, on a plain ring of 4 SQ
 *     entries, and exits; the parent reaps nothing before the child has
 *     exited (as a program that waits for its child first). On Linux the
 *     CQEs beyond the CQ wait in its overflow list and the child's exit
 *     waits for nobody; the parent then reaps all 48. A child's exit that
 *     waits for the parent's reap is seen as the parent's wait ending
 *     EINTR after 30 s.
 *
 * Each line printed is "what: RES", RES ok or the errno's name; the script
 * compares the lines. Exit 0 unless the usage is wrong.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rawdev.h"

static unsigned char wbuf[4096] __attribute__((aligned(4096)));
static unsigned char rbuf[4096] __attribute__((aligned(4096)));

static const char *res_name(int res)
{
	return res < 0 ? strerrorname_np(-res) : "ok";
}

static void pattern(void)
{
	for (size_t i = 0; i < sizeof(wbuf); i++)
		wbuf[i] = (unsigned char)(i * 7 + 29);
}

/* the child: reap want CQEs, each user_data in 1..want with res 0; 0 when so */
static int child_reap(struct io_uring *ring, unsigned want)
{
	unsigned seen = 0, all = (1u << want) - 1;

	while (seen != all) {
		struct io_uring_cqe *cqe;
		int ret = io_uring_wait_cqe(ring, &cqe);

		if (ret) {
			printf("child wait: %s\n", res_name(ret));
			return -1;
		}
		if (cqe->user_data < 1 || cqe->user_data > want || cqe->res) {
			printf("child cqe %llu: %s\n", (unsigned long long)cqe->user_data,
			       res_name(cqe->res));
			return -1;
		}
		seen |= 1u << (cqe->user_data - 1);
		io_uring_cqe_seen(ring, cqe);
	}
	printf("child reaped %u: ok\n", want);
	return 0;
}

/* the parent's one SQE, submitted and waited for; its CQE's res */
static int parent_io(struct io_uring *ring, int fd, uint8_t op, uint32_t nsid, void *buf,
		     uint64_t slba, unsigned nlb)
{
	struct io_uring_sqe *sqe = rawdev_sqe(ring, fd, op, nsid, buf, 4096, slba, nlb);
	int ret;

	if (!sqe)
		return -EBUSY;
	ret = io_uring_submit(ring);
	return ret < 0 ? ret : rawdev_reap(ring);
}

/* fork, the output so far flushed first (the child's copy must not repeat it) */
static pid_t fork_flushed(void)
{
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid < 0)
		printf("fork: %s\n", strerror(errno));
	return pid;
}

static int wait_child(pid_t pid)
{
	int st;

	fflush(stdout);
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st)) {
		printf("child: did not exit\n");
		return -1;
	}
	return WEXITSTATUS(st);
}

static int run(const char *path, const char *mode)
{
	bool single = strcmp(mode, "wait"), defer = !strcmp(mode, "defer");
	struct io_uring_params p = { 0 };
	struct io_uring ring;
	struct io_uring_sqe *sqe;
	unsigned nlb;
	long nsid;
	pid_t pid;
	int fd, ret;

	fd = open(path, O_RDWR);
	if (fd < 0) {
		printf("open: %s\n", strerror(errno));
		return 0;
	}
	nsid = rawdev_nsid(fd);
	if (single)
		p.flags |= IORING_SETUP_SINGLE_ISSUER;
	if (defer)
		p.flags |= IORING_SETUP_DEFER_TASKRUN;
	if (nsid < 0 || rawdev_ring(&ring, &p))
		return 0;
	/* 4096 bytes as 8 blocks: EINVAL where a block is 4096 bytes */
	nlb = parent_io(&ring, fd, 0x02, (uint32_t)nsid, rbuf, 0, 8) == -EINVAL ? 1 : 8;
	pattern();
	printf("parent write: %s\n",
	       res_name(parent_io(&ring, fd, 0x01, (uint32_t)nsid, wbuf, 24 * nlb, nlb)));
	pid = fork_flushed();
	if (pid < 0)
		return 0;
	if (pid == 0) {
		int efd = eventfd(0, EFD_CLOEXEC);

		printf("child look: %s\n", res_name((int)syscall(SYS_io_uring_enter, ring.ring_fd,
								 0, 0, 0, NULL, 0) < 0 ? -errno : 0));
		if (single) {
			/* no SQE written: the SQ is the parent's too, which submits next */
			ret = (int)syscall(SYS_io_uring_enter, ring.ring_fd, 1, 0, 0, NULL, 0);
			printf("child submit: %s\n", res_name(ret < 0 ? -errno : 0));
			printf("child register eventfd: %s\n",
			       res_name(io_uring_register_eventfd(&ring, efd)));
		}
		if (defer) {
			struct io_uring_cqe *cqe;

			printf("child wait: %s\n", res_name(io_uring_wait_cqe(&ring, &cqe)));
			fflush(stdout);
			_exit(0);
		}
		ret = child_reap(&ring, single ? 1 : 2);
		fflush(stdout);
		_exit(ret ? 1 : 0);
	}
	if (defer)
		return wait_child(pid), 0;
	/* submitted after the fork: the child's wait sees them come */
	sqe = io_uring_get_sqe(&ring);
	io_uring_prep_nop(sqe);
	sqe->user_data = 1;
	if (!single) {
		memset(rbuf, 0, sizeof(rbuf));
		sqe = rawdev_sqe(&ring, fd, 0x02, (uint32_t)nsid, rbuf, 4096, 24 * nlb, nlb);
		sqe->user_data = 2;
	}
	ret = io_uring_submit(&ring);
	printf("parent submit: %s\n", res_name(ret < 0 ? ret : 0));
	if (wait_child(pid) != 0)
		return 0;
	if (!single) {
		/* the child reaped the Read's CQE: its data is in the parent's buffer by then */
		printf("parent read back: %s\n", memcmp(rbuf, wbuf, sizeof(wbuf)) ? "EIO" : "ok");
	}
	return 0;
}

#define SUB_N 8u

static unsigned char sbuf[SUB_N][4096] __attribute__((aligned(4096)));

/* one write of sbuf[i] at 4 KiB block blk, filled and submitted under m; its enter's result */
static int shared_write(struct io_uring *ring, pthread_mutex_t *m, int fd, uint32_t nsid,
			unsigned i, unsigned blk, unsigned nlb, uint64_t ud)
{
	struct io_uring_sqe *sqe;
	int ret = -EBUSY;

	pthread_mutex_lock(m);
	/* the other process moved the SQ tail both share since liburing last looked */
	ring->sq.sqe_head = ring->sq.sqe_tail = *ring->sq.ktail;
	sqe = rawdev_sqe(ring, fd, 0x01, nsid, sbuf[i], 4096, (uint64_t)blk * nlb, nlb);
	if (sqe) {
		sqe->user_data = ud;
		ret = io_uring_submit(ring);
	}
	pthread_mutex_unlock(m);
	return ret;
}

static int submit_both(const char *path)
{
	struct io_uring ring;
	pthread_mutexattr_t ma;
	pthread_mutex_t *m;
	int c2p[2], p2c[2], fd, ret;
	unsigned nlb, got = 0, child_n = 0, parent_n = 0, seen_c = 0, seen_p = 0;
	long nsid;
	pid_t pid;

	fd = open(path, O_RDWR);
	if (fd < 0) {
		printf("open: %s\n", strerror(errno));
		return 0;
	}
	nsid = rawdev_nsid(fd);
	if (nsid < 0 || rawdev_ring(&ring, NULL))
		return 0;
	nlb = parent_io(&ring, fd, 0x02, (uint32_t)nsid, rbuf, 0, 8) == -EINVAL ? 1 : 8;
	m = mmap(NULL, sizeof(*m), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED || pipe(c2p) || pipe(p2c)) {
		printf("setup: %s\n", strerror(errno));
		return 0;
	}
	pthread_mutexattr_init(&ma);
	pthread_mutexattr_setpshared(&ma, PTHREAD_PROCESS_SHARED);
	pthread_mutex_init(m, &ma);
	pid = fork_flushed();
	if (pid < 0)
		return 0;
	if (pid == 0) {
		unsigned n = 0;
		char c;

		for (unsigned i = 0; i < SUB_N; i++)
			memset(sbuf[i], 0xc0 + (int)i, sizeof(sbuf[i]));
		for (unsigned i = 0; i < SUB_N; i++) {
			ret = shared_write(&ring, m, fd, (uint32_t)nsid, i, 40 + i, nlb, 100 + i);
			if (ret != 1) {
				printf("child submit %u: %s\n", i, res_name(ret < 0 ? ret : -EIO));
				break;
			}
			n++;
			sched_yield();
		}
		if (n == SUB_N)
			printf("child submitted %u: ok\n", n);
		fflush(stdout);
		/* what it submitted is in flight until the parent says it reaped it all */
		if (write(c2p[1], &n, sizeof(n)) != sizeof(n) || read(p2c[0], &c, 1) != 1)
			_exit(1);
		_exit(0);
	}
	for (unsigned i = 0; i < SUB_N; i++)
		memset(sbuf[i], 0x50 + (int)i, sizeof(sbuf[i]));
	/* what its enters took: a child's SQE left published in the SQ is taken with its own */
	for (unsigned i = 0; i < SUB_N; i++) {
		ret = shared_write(&ring, m, fd, (uint32_t)nsid, i, 48 + i, nlb, 200 + i);
		if (ret < 0) {
			printf("parent submit %u: %s\n", i, res_name(ret));
			break;
		}
		parent_n += (unsigned)ret;
		sched_yield();
	}
	if (read(c2p[0], &child_n, sizeof(child_n)) != sizeof(child_n))
		child_n = 0;
	while (got < parent_n + child_n) {
		struct io_uring_cqe *cqe;

		ret = io_uring_wait_cqe(&ring, &cqe);
		if (ret) {
			printf("parent wait: %s\n", res_name(ret));
			break;
		}
		if (cqe->res)
			printf("parent cqe %llu: %s\n", (unsigned long long)cqe->user_data,
			       res_name(cqe->res));
		else if (cqe->user_data >= 100 && cqe->user_data < 100 + SUB_N)
			seen_c |= 1u << (cqe->user_data - 100);
		else if (cqe->user_data >= 200 && cqe->user_data < 200 + SUB_N)
			seen_p |= 1u << (cqe->user_data - 200);
		else
			printf("parent cqe %llu: unexpected\n", (unsigned long long)cqe->user_data);
		io_uring_cqe_seen(&ring, cqe);
		got++;
	}
	printf("parent reaped child's %u, its own %u: %s\n", (unsigned)__builtin_popcount(seen_c),
	       (unsigned)__builtin_popcount(seen_p),
	       seen_c == (1u << SUB_N) - 1 && seen_p == (1u << SUB_N) - 1 ? "ok" : "EIO");
	if (write(p2c[1], "x", 1) != 1)
		printf("pipe: %s\n", strerror(errno));
	wait_child(pid);
	return 0;
}

static void on_alarm(int sig)
{
	(void)sig;	/* only to interrupt the wait */
}

/*
 * The parent's reap of one CQE; a wait of 30 s ends EINTR (an alarm: a
 * timed wait of liburing's may submit a TIMEOUT in the SQ the child shares).
 */
static int reap_one(struct io_uring *ring, struct io_uring_cqe *out)
{
	struct sigaction sa = { .sa_handler = on_alarm };
	struct io_uring_cqe *cqe;
	int ret;

	sigaction(SIGALRM, &sa, NULL);
	alarm(30);
	ret = io_uring_wait_cqe(ring, &cqe);
	alarm(0);
	if (ret)
		return ret;
	*out = *cqe;
	io_uring_cqe_seen(ring, cqe);
	return 0;
}

/* a plain ring on NGPATH, its fd, nsid and blocks per 4 KiB; 0 when so */
static int plain_ring(const char *path, struct io_uring *ring, int *fd, long *nsid, unsigned *nlb)
{
	*fd = open(path, O_RDWR);
	if (*fd < 0) {
		printf("open: %s\n", strerror(errno));
		return -1;
	}
	*nsid = rawdev_nsid(*fd);
	if (*nsid < 0 || rawdev_ring(ring, NULL))
		return -1;
	*nlb = parent_io(ring, *fd, 0x02, (uint32_t)*nsid, rbuf, 0, 8) == -EINVAL ? 1 : 8;
	return 0;
}

#define NOP_INJECT_RESULT 1u		/* Linux's IORING_NOP_INJECT_RESULT */
#define NOP_CQE_FLAGS (1u << 31)	/* ucmd's UCMD_NOP_CQE_FLAGS (src/core/backend.h) */

static int relay_flags(const char *path)
{
	const unsigned want = IORING_CQE_F_MORE | IORING_CQE_F_SOCK_NONEMPTY;
	struct io_uring_cqe cqe;
	struct io_uring ring;
	unsigned nlb;
	long nsid;
	int p2c[2], fd, ret;
	pid_t pid;

	if (plain_ring(path, &ring, &fd, &nsid, &nlb) || pipe(p2c))
		return 0;
	pid = fork_flushed();
	if (pid < 0)
		return 0;
	if (pid == 0) {
		struct io_uring_sqe *sqe;
		char c;

		ring.sq.sqe_head = ring.sq.sqe_tail = *ring.sq.ktail;
		sqe = io_uring_get_sqe(&ring);
		io_uring_prep_nop(sqe);
		sqe->rw_flags = (int)(NOP_INJECT_RESULT | NOP_CQE_FLAGS);
		sqe->len = 7;
		sqe->addr3 = want;
		sqe->user_data = 400;
		ret = io_uring_submit(&ring);
		printf("child submit: %s\n", res_name(ret == 1 ? 0 : ret < 0 ? ret : -EIO));
		fflush(stdout);
		/* alive until the parent reaped: its exit is another test's */
		_exit(read(p2c[0], &c, 1) == 1 ? 0 : 1);
	}
	ret = reap_one(&ring, &cqe);
	if (ret)
		printf("parent wait: %s\n", res_name(ret));
	else
		printf("parent cqe %llu: res %d flags %#x: %s\n", (unsigned long long)cqe.user_data,
		       cqe.res, cqe.flags,
		       cqe.user_data == 400 && cqe.res == 7 && cqe.flags == want ? "ok" : "EIO");
	if (write(p2c[1], "x", 1) != 1)
		printf("pipe: %s\n", strerror(errno));
	wait_child(pid);
	return 0;
}

static unsigned char cbuf[4096] __attribute__((aligned(4096)));

/* exit_group by the program's own instruction: no libc, no preload sees it */
static void raw_exit_group(int code)
{
#if defined(__x86_64__)
	__asm__ volatile("syscall" : : "a"(SYS_exit_group), "D"(code) : "rcx", "r11", "memory");
#else
	syscall(SYS_exit_group, code);
#endif
}

/* the child gone: exited 0, or killed by SIGKILL when killed; 0 when so */
static int wait_gone(pid_t pid, bool killed)
{
	int st;

	fflush(stdout);
	if (waitpid(pid, &st, 0) != pid ||
	    (killed ? !WIFSIGNALED(st) || WTERMSIG(st) != SIGKILL
		    : !WIFEXITED(st) || WEXITSTATUS(st))) {
		printf("child: not gone as asked (status %#x)\n", st);
		return -1;
	}
	return 0;
}

static int relay_exit(const char *path, const char *how)
{
	struct io_uring_cqe cqe;
	struct io_uring ring;
	int fd, ret, res[2] = { 1, 1 };
	unsigned nlb;
	long nsid;
	pid_t pid;

	if (plain_ring(path, &ring, &fd, &nsid, &nlb))
		return 0;
	pid = fork_flushed();
	if (pid < 0)
		return 0;
	if (pid == 0) {
		static struct __kernel_timespec hour = { .tv_sec = 3600 };
		struct io_uring_sqe *sqe;

		ring.sq.sqe_head = ring.sq.sqe_tail = *ring.sq.ktail;
		sqe = io_uring_get_sqe(&ring);
		io_uring_prep_timeout(sqe, &hour, 0, 0);
		sqe->user_data = 300;
		sqe = rawdev_sqe(&ring, fd, 0x02, (uint32_t)nsid, cbuf, 4096, 0, nlb);
		sqe->user_data = 301;
		ret = io_uring_submit(&ring);
		printf("child submitted 2: %s\n", res_name(ret == 2 ? 0 : ret < 0 ? ret : -EIO));
		fflush(stdout);
		if (!strcmp(how, "exit"))
			exit(0);
		if (!strcmp(how, "_exit"))
			_exit(0);
		if (!strcmp(how, "sigkill"))
			kill(getpid(), SIGKILL);
		else if (!strcmp(how, "raw_exit_group"))
			raw_exit_group(0);
		syscall(SYS_exit_group, 0);
		_exit(1);	/* not reached */
	}
	if (wait_gone(pid, !strcmp(how, "sigkill")))
		return 0;
	for (int i = 0; i < 2; i++) {
		ret = reap_one(&ring, &cqe);
		if (ret) {
			printf("parent wait: %s\n", res_name(ret));
			break;
		}
		if (cqe.user_data == 300 || cqe.user_data == 301)
			res[cqe.user_data - 300] = cqe.res;
		else
			printf("parent cqe %llu: unexpected\n", (unsigned long long)cqe.user_data);
	}
	printf("parent timeout: %s\n", res[0] == 1 ? "none" : res_name(res[0]));
	printf("parent read: %s\n", res[1] == 1 ? "none" : res_name(res[1]));
	return 0;
}

#define SQFULL_N 48u

/*
 * The child submits SQFULL_N NOPs on a ring of 4 entries that the parent
 * does not reap until the child has exited: the shared CQ, what the daemon
 * holds beyond it, and the shared SQ its CQEs are relayed through fill. Its
 * exit must not wait for the parent's reap. The parent's wait for the child
 * ends EINTR after 30 s (printed) when it does; then it reaps every CQE.
 */
static int sqfull(void)
{
	struct sigaction sa = { .sa_handler = on_alarm };
	struct io_uring ring;
	unsigned n = 0, got = 0, bad = 0;
	pid_t pid;
	int st, ret;

	ret = io_uring_queue_init(4, &ring, 0);
	if (ret) {
		printf("setup: %s\n", strerror(-ret));
		return 0;
	}
	pid = fork_flushed();
	if (pid < 0)
		return 0;
	if (pid == 0) {
		ring.sq.sqe_head = ring.sq.sqe_tail = *ring.sq.ktail;
		for (; n < SQFULL_N; n++) {
			struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);

			if (!sqe)
				break;
			io_uring_prep_nop(sqe);
			sqe->user_data = 500 + n;
			if (io_uring_submit(&ring) != 1)
				break;
		}
		printf("child submitted %u: %s\n", n, n == SQFULL_N ? "ok" : "EAGAIN");
		fflush(stdout);
		_exit(0);
	}
	sigaction(SIGALRM, &sa, NULL);
	alarm(30);
	ret = waitpid(pid, &st, 0) == pid ? 0 : -errno;
	alarm(0);
	printf("parent wait for the child: %s\n", res_name(ret));
	if (ret) {
		kill(pid, SIGKILL);
		waitpid(pid, &st, 0);
	}
	while (got < SQFULL_N) {
		struct io_uring_cqe cqe;

		if (reap_one(&ring, &cqe))
			break;
		if (cqe.user_data < 500 || cqe.user_data >= 500 + SQFULL_N || cqe.res) {
			printf("parent cqe %llu: %s\n", (unsigned long long)cqe.user_data,
			       res_name(cqe.res));
			bad++;
		}
		got++;
	}
	printf("parent reaped %u: %s\n", got, got == SQFULL_N && !bad ? "ok" : "EIO");
	return 0;
}

/*
 * The child's io_uring_register on the ring it inherited: what Linux makes
 * the ring's (the probe, an eventfd signalled for the ring's CQEs, its
 * unregister), and what ucmd refuses (files, buffers: EOPNOTSUPP).
 */
static int child_register(void)
{
	struct io_uring ring;
	pid_t pid;

	if (rawdev_ring(&ring, NULL))
		return 0;
	pid = fork_flushed();
	if (pid < 0)
		return 0;
	if (pid == 0) {
		static unsigned char buf[4096];
		struct iovec iov = { .iov_base = buf, .iov_len = sizeof(buf) };
		struct pollfd pfd = { .events = POLLIN };
		struct io_uring_probe *probe;
		struct io_uring_sqe *sqe;
		uint64_t v = 0;
		int ret;

		probe = io_uring_get_probe_ring(&ring);
		printf("child probe: %s\n",
		       probe && io_uring_opcode_supported(probe, IORING_OP_URING_CMD) ? "ok" : "EINVAL");
		pfd.fd = eventfd(0, EFD_CLOEXEC);
		printf("child register eventfd: %s\n", res_name(io_uring_register_eventfd(&ring, pfd.fd)));
		ring.sq.sqe_head = ring.sq.sqe_tail = *ring.sq.ktail;
		sqe = io_uring_get_sqe(&ring);
		io_uring_prep_nop(sqe);
		sqe->user_data = 600;
		ret = io_uring_submit(&ring);
		printf("child submit: %s\n", res_name(ret == 1 ? 0 : ret < 0 ? ret : -EIO));
		/* the NOP's CQE, posted in the ring both share, signals the ring's eventfd */
		ret = poll(&pfd, 1, 30000);
		printf("child eventfd signalled: %s\n",
		       ret == 1 && read(pfd.fd, &v, sizeof(v)) == sizeof(v) && v ? "ok" : "ETIME");
		printf("child unregister eventfd: %s\n", res_name(io_uring_unregister_eventfd(&ring)));
		printf("child register files: %s\n", res_name(io_uring_register_files(&ring, &pfd.fd, 1)));
		printf("child register buffers: %s\n", res_name(io_uring_register_buffers(&ring, &iov, 1)));
		fflush(stdout);
		_exit(0);
	}
	if (wait_gone(pid, false) == 0) {
		struct io_uring_cqe cqe;
		int ret = reap_one(&ring, &cqe);

		if (ret)
			printf("parent wait: %s\n", res_name(ret));
		else
			printf("parent cqe %llu: %s\n", (unsigned long long)cqe.user_data,
			       res_name(cqe.res));
	}
	return 0;
}

static const char *enter_reg(unsigned idx)
{
	long ret = syscall(SYS_io_uring_enter, idx, 0, 0, IORING_ENTER_REGISTERED_RING, NULL, 0);

	return res_name(ret < 0 ? -errno : 0);
}

static int regring(void)
{
	struct io_uring_rsrc_update up = { .offset = -1U };
	struct io_uring ring;
	unsigned idx;
	long ret;
	pid_t pid;

	if (rawdev_ring(&ring, NULL))
		return 0;
	ret = io_uring_register_ring_fd(&ring);
	printf("parent register ring fd: %s\n", res_name(ret == 1 ? 0 : (int)ret));
	idx = (unsigned)ring.enter_ring_fd;
	printf("parent enter by its index: %s\n", enter_reg(idx));
	pid = fork_flushed();
	if (pid < 0)
		return 0;
	if (pid == 0) {
		printf("child enter by the parent's index: %s\n", enter_reg(idx));
		up.data = (unsigned)ring.ring_fd;
		ret = syscall(SYS_io_uring_register, ring.ring_fd, IORING_REGISTER_RING_FDS, &up, 1);
		printf("child register ring fd: %s\n", res_name(ret == 1 ? 0 : ret < 0 ? -errno : -EIO));
		printf("child enter by its index: %s\n", enter_reg(up.offset));
		printf("child enter by an index not its: %s\n", enter_reg(up.offset == 15 ? 14 : 15));
		fflush(stdout);
		_exit(0);
	}
	wait_child(pid);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "regring"))
		return regring();
	if (argc == 2 && !strcmp(argv[1], "sqfull"))
		return sqfull();
	if (argc == 2 && !strcmp(argv[1], "register"))
		return child_register();
	if (argc == 3 && !strcmp(argv[1], "flags"))
		return relay_flags(argv[2]);
	if (argc == 3 && (!strcmp(argv[1], "exit") || !strcmp(argv[1], "_exit") ||
			  !strcmp(argv[1], "exit_group") || !strcmp(argv[1], "sigkill") ||
			  !strcmp(argv[1], "raw_exit_group")))
		return relay_exit(argv[2], argv[1]);
	if (argc == 3 && !strcmp(argv[1], "submit"))
		return submit_both(argv[2]);
	if (argc == 3 && (!strcmp(argv[1], "wait") || !strcmp(argv[1], "single") ||
			  !strcmp(argv[1], "defer")))
		return run(argv[2], argv[1]);
	fprintf(stderr, "usage: uring_inherit wait|single|defer|regring|submit|flags|exit|_exit|exit_group|sigkill|raw_exit_group NGPATH | sqfull|register\n");
	return 1;
}
