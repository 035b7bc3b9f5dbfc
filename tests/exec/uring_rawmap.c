/* SPDX-License-Identifier: MIT */
/*
 * io_uring by hand, as fio's engines/io_uring.c does it: io_uring_setup,
 * then three mmaps of the ring fd (IORING_OFF_SQ_RING, IORING_OFF_SQES,
 * IORING_OFF_CQ_RING, in that order, each of the size the offsets give)
 * and io_uring_enter, all raw system calls, no liburing. Built static and
 * dynamic by tests/system/exec_static_calls.sh.
 *
 *   uring_rawmap NG NSID LBA_SIZE SLBA SEED [register]
 *
 * writes 8 KiB of a pattern (from SEED) at SLBA with NVME_URING_CMD_IO,
 * reads it back and compares, then prints "ok". With "register": the ring
 * fd is registered first (IORING_REGISTER_RING_FDS, offset -1U), the index
 * given back used for every io_uring_enter (IORING_ENTER_REGISTERED_RING),
 * the ring fd closed before the I/O (the registration holds the ring), and
 * "registered N" printed. Exit 0 on success, 1 with a line on stderr.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/io_uring.h>
#include <linux/nvme_ioctl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define LEN 8192u

struct ring {
	int fd, enter_fd;
	unsigned enter_flags;
	unsigned *sq_tail, *sq_mask, *sq_array, *cq_head, *cq_tail, *cq_mask;
	struct io_uring_sqe *sqes;
	struct io_uring_cqe *cqes;
};

static int die(const char *what, long err)
{
	fprintf(stderr, "%s: %s\n", what, strerror((int)(err < 0 ? -err : err)));
	exit(1);
}

static long sys(long nr, long a, long b, long c, long d, long e, long f)
{
	long r = syscall(nr, a, b, c, d, e, f);

	return r < 0 ? -errno : r;
}

/* The ring, SQE128|CQE32 as NVMe passthrough needs, mapped as fio maps it. */
static void setup(struct ring *r)
{
	struct io_uring_params p;

	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_SQE128 | IORING_SETUP_CQE32;
	r->fd = (int)sys(__NR_io_uring_setup, 256, (long)&p, 0, 0, 0, 0);
	if (r->fd < 0)
		die("io_uring_setup", r->fd);
	/* fio: the SQ ring, the SQEs, then the CQ ring, each of its own size (pages apart at 256) */
	void *sq, *cq;
	size_t sq_len = p.sq_off.array + p.sq_entries * sizeof(unsigned);
	size_t cq_len = p.cq_off.cqes + p.cq_entries * 2 * sizeof(struct io_uring_cqe);

	sq = mmap(NULL, sq_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, r->fd,
		  IORING_OFF_SQ_RING);
	if (sq == MAP_FAILED)
		die("mmap IORING_OFF_SQ_RING", errno);
	r->sqes = mmap(NULL, p.sq_entries * 2 * sizeof(struct io_uring_sqe), PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_POPULATE, r->fd, IORING_OFF_SQES);
	if (r->sqes == MAP_FAILED)
		die("mmap IORING_OFF_SQES", errno);
	cq = mmap(NULL, cq_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, r->fd,
		  IORING_OFF_CQ_RING);
	if (cq == MAP_FAILED)
		die("mmap IORING_OFF_CQ_RING", errno);
	r->sq_tail = (unsigned *)((char *)sq + p.sq_off.tail);
	r->sq_mask = (unsigned *)((char *)sq + p.sq_off.ring_mask);
	r->sq_array = (unsigned *)((char *)sq + p.sq_off.array);
	r->cq_head = (unsigned *)((char *)cq + p.cq_off.head);
	r->cq_tail = (unsigned *)((char *)cq + p.cq_off.tail);
	r->cq_mask = (unsigned *)((char *)cq + p.cq_off.ring_mask);
	r->cqes = (struct io_uring_cqe *)((char *)cq + p.cq_off.cqes);
	r->enter_fd = r->fd;
	r->enter_flags = 0;
}

/* One passthrough command, submitted and waited for with one io_uring_enter: its result. */
static int one(struct ring *r, int fd, unsigned nsid, unsigned shift, uint64_t slba, void *buf,
	       int write)
{
	unsigned tail = *r->sq_tail, idx = tail & *r->sq_mask, head;
	struct io_uring_sqe *sqe = &r->sqes[2 * idx];
	struct nvme_uring_cmd *cmd = (struct nvme_uring_cmd *)sqe->cmd;
	struct io_uring_cqe *cqe;
	long ret;
	int res;

	memset(sqe, 0, 2 * sizeof(*sqe));
	sqe->opcode = IORING_OP_URING_CMD;
	sqe->fd = fd;
	sqe->cmd_op = NVME_URING_CMD_IO;
	cmd->opcode = write ? 0x01 : 0x02;
	cmd->nsid = nsid;
	cmd->addr = (uint64_t)(uintptr_t)buf;
	cmd->data_len = LEN;
	cmd->cdw10 = (uint32_t)slba;
	cmd->cdw11 = (uint32_t)(slba >> 32);
	cmd->cdw12 = (LEN >> shift) - 1;
	r->sq_array[idx] = idx;
	__atomic_store_n(r->sq_tail, tail + 1, __ATOMIC_RELEASE);
	ret = sys(__NR_io_uring_enter, r->enter_fd, 1, 1, IORING_ENTER_GETEVENTS | r->enter_flags,
		  0, 0);
	if (ret != 1)
		die("io_uring_enter", ret < 0 ? ret : -EIO);
	head = *r->cq_head;
	if (head == __atomic_load_n(r->cq_tail, __ATOMIC_ACQUIRE))
		die("no CQE after io_uring_enter", EIO);
	cqe = &r->cqes[2 * (head & *r->cq_mask)];
	res = cqe->res;
	__atomic_store_n(r->cq_head, head + 1, __ATOMIC_RELEASE);
	return res;
}

int main(int argc, char **argv)
{
	struct ring r;
	unsigned nsid, lbs, shift = 0, seed;
	unsigned char *w, *rd;
	uint64_t slba;
	int fd, ret;

	if (argc < 6) {
		fprintf(stderr, "usage: uring_rawmap NG NSID LBA_SIZE SLBA SEED [register]\n");
		return 1;
	}
	nsid = (unsigned)strtoul(argv[2], NULL, 0);
	lbs = (unsigned)strtoul(argv[3], NULL, 0);
	slba = strtoull(argv[4], NULL, 0);
	seed = (unsigned)strtoul(argv[5], NULL, 0);
	while ((1u << shift) < lbs)
		shift++;
	fd = open(argv[1], O_RDWR);
	if (fd < 0)
		die(argv[1], errno);
	setup(&r);
	if (argc > 6 && !strcmp(argv[6], "register")) {
		struct io_uring_rsrc_update u = { .offset = -1U, .data = (uint64_t)r.fd };

		ret = (int)sys(__NR_io_uring_register, r.fd, IORING_REGISTER_RING_FDS, (long)&u, 1,
			       0, 0);
		if (ret != 1)
			die("IORING_REGISTER_RING_FDS", ret < 0 ? ret : -EIO);
		printf("registered %u\n", u.offset);
		r.enter_fd = (int)u.offset;
		r.enter_flags = IORING_ENTER_REGISTERED_RING;
		/* the registration holds the ring, as Linux's file reference */
		close(r.fd);
	}
	if (posix_memalign((void **)&w, 4096, LEN) || posix_memalign((void **)&rd, 4096, LEN))
		return 1;
	for (unsigned i = 0; i < LEN; i++)
		w[i] = (unsigned char)(seed * 131 + i * 7 + (i >> 9));
	memset(rd, 0, LEN);
	ret = one(&r, fd, nsid, shift, slba, w, 1);
	if (ret)
		die("write", ret < 0 ? ret : -EIO);
	ret = one(&r, fd, nsid, shift, slba, rd, 0);
	if (ret)
		die("read", ret < 0 ? ret : -EIO);
	if (memcmp(w, rd, LEN)) {
		fprintf(stderr, "verify: read back differs\n");
		return 1;
	}
	printf("ok\n");
	return 0;
}
