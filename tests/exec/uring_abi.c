// SPDX-License-Identifier: MIT
/*
 * The io_uring setup flags of the current ABI, from a program that makes
 * the system calls itself (as liburing 2.9+ would): IORING_SETUP_NO_SQARRAY
 * (no index array; the SQE at head & mask is the next) and
 * IORING_SETUP_HYBRID_IOPOLL (with IOPOLL; alone it is EINVAL). On each
 * ring: NOPs twice round it, then an O_DIRECT READ of LBA 0 of the block
 * device, compared with pread. Prints one line per case, "ok" or why not.
 * Last, a ring without an SQ array again, its READs through a copy of the
 * device made with the program's own dup instruction (no interposer sees
 * it: Go's syscall.Dup), an SQE the first call on it: io_uring_enter finds
 * the copy among the SQEs' numbers before the ring takes them. Then a
 * forked child's READ on its maker's ring without an SQ array, into its own
 * memory, as on Linux.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/io_uring.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "insn.h"

#ifndef IORING_SETUP_NO_SQARRAY
#define IORING_SETUP_NO_SQARRAY (1U << 16)
#endif
#ifndef IORING_SETUP_HYBRID_IOPOLL
#define IORING_SETUP_HYBRID_IOPOLL (1U << 17)
#endif

struct ring {
	int fd;
	unsigned *sq_tail, *sq_mask, *cq_head, *cq_tail, *cq_mask;
	struct io_uring_sqe *sqes;
	struct io_uring_cqe *cqes;
};

static int setup(struct ring *r, unsigned flags)
{
	struct io_uring_params p;
	char *sq, *cq;

	memset(&p, 0, sizeof(p));
	p.flags = flags;
	r->fd = (int)syscall(__NR_io_uring_setup, 8, &p);
	if (r->fd < 0)
		return -errno;
	if ((flags & IORING_SETUP_NO_SQARRAY) && p.sq_off.array)
		return -EPROTO;	/* Linux tells of no array */
	sq = mmap(NULL, p.sq_off.array ? p.sq_off.array + p.sq_entries * 4 : 4096 * 4,
		  PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, r->fd, IORING_OFF_SQ_RING);
	cq = mmap(NULL, p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe),
		  PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, r->fd, IORING_OFF_CQ_RING);
	r->sqes = mmap(NULL, p.sq_entries * sizeof(struct io_uring_sqe), PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_POPULATE, r->fd, IORING_OFF_SQES);
	if (sq == MAP_FAILED || cq == MAP_FAILED || r->sqes == MAP_FAILED)
		return -errno;
	r->sq_tail = (unsigned *)(sq + p.sq_off.tail);
	r->sq_mask = (unsigned *)(sq + p.sq_off.ring_mask);
	r->cq_head = (unsigned *)(cq + p.cq_off.head);
	r->cq_tail = (unsigned *)(cq + p.cq_off.tail);
	r->cq_mask = (unsigned *)(cq + p.cq_off.ring_mask);
	r->cqes = (struct io_uring_cqe *)(cq + p.cq_off.cqes);
	return 0;
}

/* One SQE at tail & mask (no array written), entered and waited for: its res. */
static int one(struct ring *r, const struct io_uring_sqe *s)
{
	unsigned tail = *r->sq_tail, head;
	struct io_uring_cqe *c;
	int ret;

	r->sqes[tail & *r->sq_mask] = *s;
	__atomic_store_n(r->sq_tail, tail + 1, __ATOMIC_RELEASE);
	ret = (int)syscall(__NR_io_uring_enter, r->fd, 1, 1, IORING_ENTER_GETEVENTS, NULL, 0);
	if (ret != 1)
		return ret < 0 ? -errno : -EAGAIN;
	head = *r->cq_head;
	if (head == __atomic_load_n(r->cq_tail, __ATOMIC_ACQUIRE))
		return -ENODATA;
	c = &r->cqes[head & *r->cq_mask];
	ret = c->user_data == s->user_data ? c->res : -ENOMSG;
	__atomic_store_n(r->cq_head, head + 1, __ATOMIC_RELEASE);
	return ret;
}

/*
 * A forked child's READ on its maker's ring without an SQ array, in its own
 * memory (the child's submit is relayed: src/preload/uring_relay.c), then
 * the maker's own on it still: "ok", or why not.
 */
static const char *child_run(int dev, const char *want)
{
	static char why[64];
	struct io_uring_sqe s;
	struct ring r;
	int ret = setup(&r, IORING_SETUP_NO_SQARRAY), st;
	void *buf;
	pid_t pid;

	if (ret) {
		snprintf(why, sizeof(why), "setup: %s", strerror(-ret));
		return why;
	}
	if (posix_memalign(&buf, 4096, 4096))
		return "no memory";
	memset(&s, 0, sizeof(s));
	s.opcode = IORING_OP_READ;
	s.fd = dev;
	s.addr = (unsigned long)buf;
	s.len = 4096;
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return "fork failed";
	if (!pid) {
		memset(buf, 0, 4096);
		s.user_data = 21;
		ret = one(&r, &s);
		_exit(ret == 4096 && !memcmp(buf, want, 4096) ? 0 : ret < 0 ? -ret : 255);
	}
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st)) {
		snprintf(why, sizeof(why), "child: %s",
			 WIFEXITED(st) && WEXITSTATUS(st) < 255 ? strerror(WEXITSTATUS(st))
								 : "wrong data");
		return why;
	}
	memset(buf, 0, 4096);
	s.user_data = 22;
	ret = one(&r, &s);
	if (ret != 4096 || memcmp(buf, want, 4096)) {
		snprintf(why, sizeof(why), "maker's read after: %d", ret);
		return why;
	}
	free(buf);
	close(r.fd);
	return "ok";
}

static const char *run(unsigned flags, int dev, const char *want)
{
	static char why[64];
	struct io_uring_sqe s;
	struct ring r;
	void *buf;
	int ret = setup(&r, flags);

	if (ret) {
		snprintf(why, sizeof(why), "setup: %s", strerror(-ret));
		return why;
	}
	for (unsigned i = 0; i < 20 && !(flags & IORING_SETUP_IOPOLL); i++) {
		memset(&s, 0, sizeof(s));
		s.opcode = IORING_OP_NOP;
		s.user_data = 1000 + i;
		ret = one(&r, &s);
		if (ret) {
			snprintf(why, sizeof(why), "nop %u: %d", i, ret);
			return why;
		}
	}
	if (posix_memalign(&buf, 4096, 4096))
		return "no memory";
	for (unsigned i = 0; i < 3; i++) {
		memset(&s, 0, sizeof(s));
		memset(buf, 0, 4096);
		s.opcode = IORING_OP_READ;
		s.fd = dev;
		s.addr = (unsigned long)buf;
		s.len = 4096;
		s.user_data = 7 + i;
		ret = one(&r, &s);
		if (ret != 4096 || memcmp(buf, want, 4096)) {
			snprintf(why, sizeof(why), "read: %d%s", ret, ret == 4096 ? " (wrong data)" : "");
			return why;
		}
	}
	free(buf);
	close(r.fd);
	return "ok";
}

int main(int argc, char **argv)
{
	struct io_uring_params p;
	char *want;
	int dev;

	if (argc != 2)
		return 2;
	dev = open(argv[1], O_RDONLY | O_DIRECT);
	if (dev < 0 || posix_memalign((void **)&want, 4096, 4096) || pread(dev, want, 4096, 0) != 4096) {
		perror(argv[1]);
		return 1;
	}
	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_HYBRID_IOPOLL;
	printf("hybrid_alone %s\n",
	       syscall(__NR_io_uring_setup, 8, &p) < 0 && errno == EINVAL ? "EINVAL" : "accepted");
	printf("no_sqarray %s\n", run(IORING_SETUP_NO_SQARRAY, dev, want));
	printf("hybrid_iopoll %s\n", run(IORING_SETUP_IOPOLL | IORING_SETUP_HYBRID_IOPOLL, dev, want));
	printf("hybrid_iopoll_no_sqarray %s\n",
	       run(IORING_SETUP_IOPOLL | IORING_SETUP_HYBRID_IOPOLL | IORING_SETUP_NO_SQARRAY, dev,
		   want));
	{
		long copy = insn3(__NR_dup, dev, 0, 0);

		printf("no_sqarray_rawdup %s\n",
		       copy < 0 ? "dup failed" : run(IORING_SETUP_NO_SQARRAY, (int)copy, want));
	}
	printf("no_sqarray_child %s\n", child_run(dev, want));
	return 0;
}
