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
 *   uring_inherit regring NGPATH
 *     The parent registers its ring's fd (IORING_REGISTER_RING_FDS) and
 *     forks. Registered indexes are a task's own: the child's enter by
 *     the parent's index is EINVAL (it has no io_uring task yet); it
 *     registers the inherited ring itself (served: a plain ring's register
 *     of ring fds needs nothing of the maker's), enters by its own index
 *     (0), and by one it never registered (EBADF).
 *
 * Each line printed is "what: RES", RES ok or the errno's name; the script
 * compares the lines. Exit 0 unless the usage is wrong.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdlib.h>
#include <sys/eventfd.h>
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
	if (argc == 3 && (!strcmp(argv[1], "wait") || !strcmp(argv[1], "single") ||
			  !strcmp(argv[1], "defer")))
		return run(argv[2], argv[1]);
	fprintf(stderr, "usage: uring_inherit wait|single|defer|regring NGPATH\n");
	return 1;
}
