/* SPDX-License-Identifier: MIT */
/*
 * io_uring passthrough on device descriptors the program opened with its
 * own syscall instruction (ucmd-supervise's under `ucmd exec`), where the
 * preload's ring cannot wait for an io_uring_enter to learn of them.
 * Built against Debian's liburing alone.
 *
 *   uring_rawfd_sq sqpoll NGPATH
 *     An SQPOLL ring (sq_thread_idle 100 ms), woken; the device opened
 *     with the program's own instruction after that; an SQE writing 4096
 *     bytes of pattern 1 at LBA 0 through it submitted while the poller is
 *     awake (no io_uring_enter: liburing enters only for a sleeping
 *     poller). Prints "write RES". Then the descriptor closed with the
 *     program's own instruction and a read through it submitted so:
 *     "closed RES" (EBADF as Linux). An attempt that finds the poller
 *     asleep before its submit is made again (at most 20).
 *   uring_rawfd_dup NGPATH
 *     The device opened with the program's own instruction, then copied
 *     through libc: dup, dup2 (to 100), dup3 (to 101, O_CLOEXEC),
 *     fcntl(F_DUPFD, 200), fcntl(F_DUPFD_CLOEXEC, 300); the original
 *     closed with the program's own instruction; through each copy
 *     NVME_IOCTL_ID and a ring write of 4096 bytes of pattern 2+k at LBA
 *     8*(k+1) (4096-byte blocks: LBA k+1; k the copy's index): prints
 *     "NAME RES". Each copy closed through libc, then the ring's read
 *     through it: "NAME closed RES".
 *   uring_rawfd_sq fork NGPATH
 *     The device opened with the program's own instruction; a forked
 *     child makes a ring of its own and writes pattern 7 at block 6 (4096
 *     bytes) through the descriptor it inherited ("child inherited RES"),
 *     opens the device again with its own instruction and writes pattern
 *     8 at block 7 through that ("child opened RES"), closes the inherited
 *     one with its own instruction and writes through it again ("child
 *     closed RES": EBADF). Then the parent writes pattern 9 at block 8
 *     through its descriptor on its ring ("parent RES": the child's close
 *     left it alone).
 *   uring_rawfd_sq rawdup NGPATH BLKPATH
 *     As dup, but each copy made with the program's own instruction (no
 *     interposer sees it: Go's syscall.Dup), its first call NVME_IOCTL_ID
 *     through libc, the write at block 11+k (pattern 11+k); the copy
 *     closed through libc before the ring's read through it. Then
 *     BLKPATH (/dev/nvmeXnY) opened so and copied so three times, the
 *     first call on each copy through libc: pwrite of pattern 16 at block
 *     16 ("blk write RES"), pread of it ("blk read RES same|differs"),
 *     fstat ("blk fstat RES block|other").
 *   uring_rawfd_sq sqfork NGPATH
 *     NGPATH opened through libc, an SQPOLL ring, pattern 17 written
 *     before a fork; the child writes it at block 17 through the ring it
 *     inherited (io_uring_submit_and_wait: "child sqpoll RES"). Then a
 *     child makes an SQPOLL ring, forks a grandchild and exits; the
 *     grandchild's io_uring_enter waiting for a CQE on the inherited ring
 *     ends when the daemon drops the maker's ring ("maker gone RES":
 *     EOWNERDEAD as Linux).
 *   uring_rawfd_sq pattern N
 *     Writes pattern N's 4096 bytes to stdout (what dd reads back).
 *
 * RES is ok or the errno's name. Exit 0 either way (1 on bad usage or
 * another architecture).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rawdev.h"

static unsigned char buf[4096] __attribute__((aligned(4096)));

static void pattern(unsigned n)
{
	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (unsigned char)(i * (2 * n + 5) + 13 * n + 1);
}

static const char *res_name(int res)
{
	return res < 0 ? strerrorname_np(-res) : res ? "positive" : "ok";
}

/*
 * The CQE of the SQE just queued. With entered (an SQPOLL ring), the SQE
 * is handed to the poller by the tail alone and the CQE polled for
 * without an io_uring_enter; only a poller found asleep with the SQE not
 * taken is woken by one, and *entered says so (the attempt proves nothing).
 */
static int reap(struct io_uring *ring, bool *entered)
{
	struct io_uring_cqe *cqe;
	int res;

	if (!entered) {
		if (io_uring_submit(ring) != 1 || io_uring_wait_cqe(ring, &cqe))
			return -EIO;
	} else {
		ring->sq.sqe_head = ring->sq.sqe_tail;
		io_uring_smp_store_release(ring->sq.ktail, ring->sq.sqe_tail);
		*entered = false;
		for (int i = 0; io_uring_peek_cqe(ring, &cqe); i++) {
			if (i > 20000 || (IO_URING_READ_ONCE(*ring->sq.kflags) & IORING_SQ_NEED_WAKEUP &&
					  *ring->sq.khead != *ring->sq.ktail)) {
				*entered = true;
				if (io_uring_enter(ring->ring_fd, 0, 1,
						   IORING_ENTER_SQ_WAKEUP | IORING_ENTER_GETEVENTS, NULL) < 0 ||
				    io_uring_wait_cqe(ring, &cqe))
					return -EIO;
				break;
			}
			usleep(100);
		}
	}
	res = cqe->res;
	io_uring_cqe_seen(ring, cqe);
	return res;
}

/* one passthrough command on fd (entered: reap's) */
static int cmd_e(struct io_uring *ring, int fd, uint8_t op, uint32_t nsid, uint64_t slba,
		 unsigned lbsz, bool *entered)
{
	if (!rawdev_sqe(ring, fd, op, nsid, buf, sizeof(buf), slba, sizeof(buf) / lbsz))
		return -EBUSY;
	return reap(ring, entered);
}

static int cmd(struct io_uring *ring, int fd, uint8_t op, uint32_t nsid, uint64_t slba,
	       unsigned lbsz)
{
	return cmd_e(ring, fd, op, nsid, slba, lbsz, NULL);
}

/* the LBA size: a read of 8 LBAs of 512 at 0, else 4096 */
static unsigned lba_size(struct io_uring *ring, int fd, uint32_t nsid)
{
	int res = cmd(ring, fd, 0x02, nsid, 0, 512);

	return res == -EINVAL || res > 0 ? 4096 : 512;
}

static int sqpoll(const char *path)
{
	struct io_uring_params p = { .flags = IORING_SETUP_SQPOLL, .sq_thread_idle = 100 };
	struct io_uring ring;
	bool entered = true;
	unsigned lbsz;
	long fd, nsid;
	int res = 0;

	if (rawdev_ring(&ring, &p) || (fd = rawdev_open(path)) < 0 || (nsid = rawdev_nsid(fd)) < 0)
		return 0;
	lbsz = lba_size(&ring, (int)fd, (uint32_t)nsid);
	insn3(SYS_close, fd, 0, 0);
	pattern(1);
	/* each attempt's descriptor kept open: the next one's number is new to the ring */
	for (int i = 0; i < 20 && entered; i++) {
		/* the poller awake: this enter is the ring's last before the open */
		io_uring_enter(ring.ring_fd, 0, 0, IORING_ENTER_SQ_WAKEUP, NULL);
		fd = insn3(SYS_openat, AT_FDCWD, (long)path, O_RDWR);
		if (fd < 0) {
			printf("open: %s\n", strerror((int)-fd));
			return 0;
		}
		res = cmd_e(&ring, (int)fd, 0x01 /* Write */, (uint32_t)nsid, 0, lbsz, &entered);
	}
	printf("write %s%s\n", res_name(res), entered ? " (entered)" : "");
	entered = true;
	for (int i = 0; i < 20 && entered; i++) {
		/* mirrored at this enter on any code; then closed */
		io_uring_enter(ring.ring_fd, 0, 0, IORING_ENTER_SQ_WAKEUP, NULL);
		insn3(SYS_close, fd, 0, 0);
		res = cmd_e(&ring, (int)fd, 0x02 /* Read */, (uint32_t)nsid, 0, lbsz, &entered);
		fd = insn3(SYS_openat, AT_FDCWD, (long)path, O_RDWR);	/* the same number */
		if (fd < 0)
			break;
	}
	printf("closed %s%s\n", res_name(res), entered ? " (entered)" : "");
	io_uring_queue_exit(&ring);
	return 0;
}

static int dups(const char *path)
{
	static const char *const names[] = { "dup", "dup2", "dup3", "F_DUPFD", "F_DUPFD_CLOEXEC" };
	struct io_uring ring;
	int copy[5], res;
	unsigned lbsz;
	long fd, nsid;

	if ((fd = rawdev_open(path)) < 0 || (nsid = rawdev_nsid(fd)) < 0 || rawdev_ring(&ring, NULL))
		return 0;
	lbsz = lba_size(&ring, (int)fd, (uint32_t)nsid);
	copy[0] = dup((int)fd);
	copy[1] = dup2((int)fd, 100);
	copy[2] = dup3((int)fd, 101, O_CLOEXEC);
	copy[3] = fcntl((int)fd, F_DUPFD, 200);
	copy[4] = fcntl((int)fd, F_DUPFD_CLOEXEC, 300);
	insn3(SYS_close, fd, 0, 0);
	for (unsigned k = 0; k < 5; k++) {
		long id;

		if (copy[k] < 0) {
			printf("%s: %s\n", names[k], strerrorname_np(errno));
			continue;
		}
		id = ioctl(copy[k], NVME_IOCTL_ID);
		if (id != nsid) {
			printf("%s id %s\n", names[k], id < 0 ? strerrorname_np(errno) : "other");
			continue;
		}
		pattern(2 + k);
		res = cmd(&ring, copy[k], 0x01, (uint32_t)nsid, 4096 / lbsz * (k + 1), lbsz);
		printf("%s %s\n", names[k], res_name(res));
	}
	for (unsigned k = 0; k < 5; k++) {
		if (copy[k] < 0)
			continue;
		close(copy[k]);
		res = cmd(&ring, copy[k], 0x02, (uint32_t)nsid, 0, lbsz);
		printf("%s closed %s\n", names[k], res_name(res));
	}
	io_uring_queue_exit(&ring);
	return 0;
}

/*
 * Copies made with the program's own instruction, which no interposer
 * sees (Go's syscall.Dup): found by the preload at their first call
 * through libc, each of which fails on the bare placeholder.
 */
static int rawdups(const char *path, const char *blkpath)
{
	static const char *const names[] = { "dup", "dup2", "dup3", "F_DUPFD", "F_DUPFD_CLOEXEC" };
	static unsigned char back[4096] __attribute__((aligned(4096)));
	struct io_uring ring;
	long fd, nsid, copy[5], c;
	unsigned lbsz;
	struct stat st;
	int res;

	if ((fd = rawdev_open(path)) < 0 || (nsid = rawdev_nsid(fd)) < 0 || rawdev_ring(&ring, NULL))
		return 0;
	lbsz = lba_size(&ring, (int)fd, (uint32_t)nsid);
	copy[0] = insn3(SYS_dup, fd, 0, 0);
	copy[1] = insn3(SYS_dup2, fd, 100, 0);
	copy[2] = insn3(SYS_dup3, fd, 101, O_CLOEXEC);
	copy[3] = insn3(SYS_fcntl, fd, F_DUPFD, 200);
	copy[4] = insn3(SYS_fcntl, fd, F_DUPFD_CLOEXEC, 300);
	insn3(SYS_close, fd, 0, 0);
	for (unsigned k = 0; k < 5; k++) {
		long id;

		if (copy[k] < 0) {
			printf("%s: %s\n", names[k], strerrorname_np((int)-copy[k]));
			continue;
		}
		/* the first call on the copy, through libc */
		id = ioctl((int)copy[k], NVME_IOCTL_ID);
		if (id != nsid) {
			printf("%s id %s\n", names[k], id < 0 ? strerrorname_np(errno) : "other");
			continue;
		}
		pattern(11 + k);
		res = cmd(&ring, (int)copy[k], 0x01, (uint32_t)nsid, 4096 / lbsz * (11 + k), lbsz);
		printf("%s %s\n", names[k], res_name(res));
		close((int)copy[k]);
		res = cmd(&ring, (int)copy[k], 0x02, (uint32_t)nsid, 0, lbsz);
		printf("%s closed %s\n", names[k], res_name(res));
	}
	io_uring_queue_exit(&ring);
	/* the block device: a write, a read and an fstat as the first call on a copy each */
	if ((fd = rawdev_open(blkpath)) < 0)
		return 0;
	pattern(16);
	c = insn3(SYS_dup, fd, 0, 0);
	res = c < 0 ? (int)c : pwrite((int)c, buf, sizeof(buf), 16 * 4096) == sizeof(buf) ? 0 : -errno;
	printf("blk write %s\n", res_name(res));
	c = insn3(SYS_dup, fd, 0, 0);
	res = c < 0 ? (int)c : pread((int)c, back, sizeof(back), 16 * 4096) == sizeof(back) ? 0 : -errno;
	printf("blk read %s %s\n", res_name(res), memcmp(buf, back, sizeof(buf)) ? "differs" : "same");
	c = insn3(SYS_dup, fd, 0, 0);
	res = c < 0 ? (int)c : fstat((int)c, &st) ? -errno : 0;
	printf("blk fstat %s %s\n", res_name(res), S_ISBLK(st.st_mode) ? "block" : "other");
	return 0;
}

/*
 * An SQPOLL ring inherited through fork: its maker's, whose poller takes
 * the child's SQEs (their buffers in the maker's memory, as Linux's poller
 * reads them: the pattern is written before the fork, so both hold it).
 */
static int sqfork(const char *path)
{
	struct io_uring_params p = { .flags = IORING_SETUP_SQPOLL, .sq_thread_idle = 100 };
	struct io_uring ring;
	int fd, done[2], res;
	unsigned lbsz;
	long nsid;
	pid_t child, maker;
	char c;

	fd = open(path, O_RDWR);
	if (fd < 0 || (nsid = rawdev_nsid(fd)) < 0 || rawdev_ring(&ring, &p))
		return 0;
	lbsz = lba_size(&ring, fd, (uint32_t)nsid);
	pattern(17);
	fflush(stdout);
	child = fork();
	if (child == 0) {
		struct io_uring_cqe *cqe;

		/* the SQE by the tail; an enter that waits for its CQE, always made */
		if (!rawdev_sqe(&ring, fd, 0x01, (uint32_t)nsid, buf, sizeof(buf), 4096 / lbsz * 17,
				sizeof(buf) / lbsz))
			_exit(0);
		res = io_uring_submit_and_wait(&ring, 1);
		if (res >= 0)
			res = io_uring_peek_cqe(&ring, &cqe) ? -EIO : cqe->res;
		printf("child sqpoll %s\n", res_name(res));
		fflush(stdout);
		_exit(0);
	}
	if (child < 0 || waitpid(child, NULL, 0) != child) {
		printf("fork: %s\n", strerror(errno));
		return 0;
	}
	io_uring_queue_exit(&ring);
	/* the maker gone: a grandchild's wait on its ring ends when the daemon drops the ring */
	if (pipe(done))
		return 0;
	maker = fork();
	if (maker == 0) {
		if (rawdev_ring(&ring, &p))
			_exit(0);
		if (fork() == 0) {
			close(done[0]);
			res = io_uring_enter(ring.ring_fd, 0, 1, IORING_ENTER_GETEVENTS, NULL);
			printf("maker gone %s\n", res_name(res));
			fflush(stdout);
			_exit(0);
		}
		_exit(0);
	}
	close(done[1]);
	if (maker < 0 || waitpid(maker, NULL, 0) != maker) {
		printf("fork: %s\n", strerror(errno));
		return 0;
	}
	/* EOF once the grandchild has exited */
	while (read(done[0], &c, 1) > 0)
		;
	return 0;
}

static int forked(const char *path)
{
	struct io_uring ring;
	unsigned lbsz;
	long fd, nsid;
	pid_t child;
	int res, st;

	if ((fd = rawdev_open(path)) < 0 || (nsid = rawdev_nsid(fd)) < 0)
		return 0;
	fflush(stdout);
	child = fork();
	if (child == 0) {
		long fd2;

		if (rawdev_ring(&ring, NULL)) {
			fflush(stdout);
			_exit(0);
		}
		lbsz = lba_size(&ring, (int)fd, (uint32_t)nsid);
		pattern(7);
		res = cmd(&ring, (int)fd, 0x01, (uint32_t)nsid, 4096 / lbsz * 6, lbsz);
		printf("child inherited %s\n", res_name(res));
		fd2 = insn3(SYS_openat, AT_FDCWD, (long)path, O_RDWR);
		pattern(8);
		res = fd2 < 0 ? (int)fd2 : cmd(&ring, (int)fd2, 0x01, (uint32_t)nsid, 4096 / lbsz * 7, lbsz);
		printf("child opened %s\n", res_name(res));
		insn3(SYS_close, fd, 0, 0);
		res = cmd(&ring, (int)fd, 0x01, (uint32_t)nsid, 4096 / lbsz * 7, lbsz);
		printf("child closed %s\n", res_name(res));
		fflush(stdout);
		_exit(0);
	}
	if (child < 0 || waitpid(child, &st, 0) != child) {
		printf("fork: %s\n", strerror(errno));
		return 0;
	}
	if (rawdev_ring(&ring, NULL))
		return 0;
	lbsz = lba_size(&ring, (int)fd, (uint32_t)nsid);
	pattern(9);
	res = cmd(&ring, (int)fd, 0x01, (uint32_t)nsid, 4096 / lbsz * 8, lbsz);
	printf("parent %s\n", res_name(res));
	io_uring_queue_exit(&ring);
	return 0;
}

int main(int argc, char **argv)
{
#ifdef __x86_64__
	if (argc == 3 && !strcmp(argv[1], "pattern")) {
		pattern((unsigned)atoi(argv[2]));
		return fwrite(buf, sizeof(buf), 1, stdout) == 1 ? 0 : 1;
	}
	if (argc == 3 && !strcmp(argv[1], "sqpoll"))
		return sqpoll(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "dup"))
		return dups(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "fork"))
		return forked(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "sqfork"))
		return sqfork(argv[2]);
	if (argc == 4 && !strcmp(argv[1], "rawdup"))
		return rawdups(argv[2], argv[3]);
	fprintf(stderr, "usage: uring_rawfd_sq sqpoll|dup|fork|sqfork NGPATH | rawdup NGPATH BLKPATH | "
		"pattern N\n");
	return 1;
#else
	(void)argc;
	(void)argv;
	fprintf(stderr, "uring_rawfd_sq: x86-64 only\n");
	return 1;
#endif
}
