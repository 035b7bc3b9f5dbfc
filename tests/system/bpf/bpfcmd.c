// SPDX-License-Identifier: MIT
/*
 * The guest's NVMe client for tests/system/bpf_lsm.sh: one command through
 * io_uring (IORING_OP_URING_CMD on a 128-byte SQE) or through the passthrough
 * ioctl, and the racing-SQE measurement.
 *
 *   bpfcmd uring|ioctl io|admin DEV OPCODE [nsid=N] [cdw10=X] [cdw11=X]
 *          [cdw12=X] [len=BYTES]
 *       prints "allow RES" (the kernel ran it: RES is 0 or an NVMe status)
 *       or "deny" (-EACCES), "error -ERRNO" otherwise; exit 0, 1 (deny), 2.
 *   bpfcmd race DEV N SLBA
 *       N reads of one block at SLBA+i through uring_cmd while a thread
 *       flips the SQE's opcode between Read and Write in the shared ring;
 *       the data buffer of command i holds a marker. Prints how many were
 *       denied, allowed and failed.
 *   bpfcmd marks DEV N SLBA
 *       (ioctl reads) prints how many of the N blocks hold a race marker:
 *       each is a flipped Write that the driver executed.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/nvme_ioctl.h>
#include <liburing.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#define MARK "UCMD-RACE-FLIP"

struct cmd {
	uint8_t opcode;
	uint32_t nsid, cdw10, cdw11, cdw12, len;
};

static int parse_kv(const char *s, struct cmd *c)
{
	static const struct { const char *k; size_t off; } keys[] = {
		{ "nsid=", offsetof(struct cmd, nsid) }, { "cdw10=", offsetof(struct cmd, cdw10) },
		{ "cdw11=", offsetof(struct cmd, cdw11) }, { "cdw12=", offsetof(struct cmd, cdw12) },
		{ "len=", offsetof(struct cmd, len) },
	};

	for (unsigned i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		size_t n = strlen(keys[i].k);
		char *end;
		unsigned long v;

		if (strncmp(s, keys[i].k, n))
			continue;
		v = strtoul(s + n, &end, 0);
		if (*end || end == s + n || v > 0xffffffffUL)
			return -1;
		*(uint32_t *)((char *)c + keys[i].off) = (uint32_t)v;
		return 0;
	}
	return -1;
}

static void fill(struct nvme_uring_cmd *u, const struct cmd *c, void *buf)
{
	memset(u, 0, sizeof(*u));
	u->opcode = c->opcode;
	u->nsid = c->nsid;
	u->cdw10 = c->cdw10;
	u->cdw11 = c->cdw11;
	u->cdw12 = c->cdw12;
	u->addr = (uint64_t)(uintptr_t)buf;
	u->data_len = c->len;
}

static int ring_setup(struct io_uring *ring)
{
	int ret = io_uring_queue_init(8, ring, IORING_SETUP_SQE128 | IORING_SETUP_CQE32);

	if (ret)
		fprintf(stderr, "io_uring_queue_init: %s\n", strerror(-ret));
	return ret;
}

static int uring_one(int fd, bool admin, const struct cmd *c, void *buf)
{
	struct io_uring ring;
	struct io_uring_sqe *sqe;
	struct io_uring_cqe *cqe;
	int ret;

	if (ring_setup(&ring))
		return -EIO;
	sqe = io_uring_get_sqe(&ring);
	if (!sqe) {
		io_uring_queue_exit(&ring);
		return -EBUSY;
	}
	memset(sqe, 0, 2 * sizeof(*sqe));
	sqe->opcode = IORING_OP_URING_CMD;
	sqe->fd = fd;
	sqe->cmd_op = admin ? NVME_URING_CMD_ADMIN : NVME_URING_CMD_IO;
	fill((struct nvme_uring_cmd *)sqe->cmd, c, buf);
	ret = io_uring_submit(&ring);
	if (ret == 1)
		ret = io_uring_wait_cqe(&ring, &cqe);
	else if (ret >= 0)
		ret = -EIO;
	if (!ret) {
		ret = cqe->res;
		io_uring_cqe_seen(&ring, cqe);
	}
	io_uring_queue_exit(&ring);
	return ret;
}

static int ioctl_one(int fd, bool admin, const struct cmd *c, void *buf)
{
	struct nvme_passthru_cmd p = { 0 };
	int ret;

	p.opcode = c->opcode;
	p.nsid = c->nsid;
	p.cdw10 = c->cdw10;
	p.cdw11 = c->cdw11;
	p.cdw12 = c->cdw12;
	p.addr = (uint64_t)(uintptr_t)buf;
	p.data_len = c->len;
	ret = ioctl(fd, admin ? NVME_IOCTL_ADMIN_CMD : NVME_IOCTL_IO_CMD, &p);
	return ret < 0 ? -errno : ret;
}

static int one(int argc, char **argv)
{
	struct cmd c = { 0 };
	bool uring = !strcmp(argv[1], "uring"), admin = !strcmp(argv[2], "admin");
	void *buf = NULL;
	int fd, ret;

	c.opcode = (uint8_t)strtoul(argv[4], NULL, 0);
	for (int i = 5; i < argc; i++)
		if (parse_kv(argv[i], &c)) {
			fprintf(stderr, "bpfcmd: bad argument %s\n", argv[i]);
			return 2;
		}
	if (c.len && posix_memalign(&buf, 4096, c.len))
		return 2;
	if (buf)
		memset(buf, 0, c.len);
	fd = open(argv[3], O_RDWR);
	if (fd < 0) {
		fprintf(stderr, "bpfcmd: %s: %s\n", argv[3], strerror(errno));
		return 2;
	}
	ret = uring ? uring_one(fd, admin, &c, buf) : ioctl_one(fd, admin, &c, buf);
	close(fd);
	free(buf);
	if (ret == -EACCES) {
		printf("deny\n");
		return 1;
	}
	if (ret < 0) {
		printf("error %d\n", ret);
		return 2;
	}
	printf("allow %d\n", ret);
	return 0;
}

/* ---- the racing SQE ---------------------------------------------------------- */

static _Atomic int flipping;
static volatile uint8_t *flip_at;

static void *flipper(void *arg)
{
	(void)arg;
	while (atomic_load(&flipping) >= 0) {
		if (atomic_load(&flipping) == 1) {
			volatile uint8_t *p = flip_at;

			*p = 0x01;	/* Write */
			*p = 0x02;	/* Read */
		}
	}
	return NULL;
}

static int race(const char *dev, unsigned n, unsigned slba)
{
	unsigned denied = 0, allowed = 0, failed = 0;
	struct io_uring ring;
	pthread_t t;
	char *buf;
	int fd;

	fd = open(dev, O_RDWR);
	if (fd < 0 || ring_setup(&ring) || posix_memalign((void **)&buf, 4096, 512))
		return 2;
	pthread_create(&t, NULL, flipper, NULL);
	for (unsigned i = 0; i < n; i++) {
		struct cmd c = { .opcode = 0x02, .nsid = 1, .cdw10 = slba + i, .len = 512 };
		struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
		struct io_uring_cqe *cqe;
		int ret;

		if (!sqe) {
			failed++;
			continue;
		}
		memset(buf, 0, 512);
		snprintf(buf, 512, MARK " %u", i);
		memset(sqe, 0, 2 * sizeof(*sqe));
		sqe->opcode = IORING_OP_URING_CMD;
		sqe->fd = fd;
		sqe->cmd_op = NVME_URING_CMD_IO;
		fill((struct nvme_uring_cmd *)sqe->cmd, &c, buf);
		flip_at = (volatile uint8_t *)sqe->cmd;
		atomic_store(&flipping, 1);
		ret = io_uring_submit(&ring);
		atomic_store(&flipping, 0);
		if (ret != 1 || io_uring_wait_cqe(&ring, &cqe)) {
			failed++;
			continue;
		}
		if (cqe->res == -EACCES)
			denied++;
		else if (cqe->res == 0)
			allowed++;
		else
			failed++;
		io_uring_cqe_seen(&ring, cqe);
	}
	atomic_store(&flipping, -1);
	pthread_join(t, NULL);
	printf("race: %u submitted, %u denied, %u allowed, %u failed\n", n, denied, allowed,
	       failed);
	return 0;
}

static int marks(const char *dev, unsigned n, unsigned slba)
{
	unsigned found = 0;
	char *buf;
	int fd = open(dev, O_RDWR);

	if (fd < 0 || posix_memalign((void **)&buf, 4096, 512))
		return 2;
	for (unsigned i = 0; i < n; i++) {
		struct cmd c = { .opcode = 0x02, .nsid = 1, .cdw10 = slba + i, .len = 512 };

		if (ioctl_one(fd, false, &c, buf))
			return 2;
		found += !strncmp(buf, MARK, strlen(MARK));
	}
	printf("marks: %u of %u blocks written by flipped commands\n", found, n);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 5 && !strcmp(argv[1], "race"))
		return race(argv[2], (unsigned)strtoul(argv[3], NULL, 0),
			    (unsigned)strtoul(argv[4], NULL, 0));
	if (argc == 5 && !strcmp(argv[1], "marks"))
		return marks(argv[2], (unsigned)strtoul(argv[3], NULL, 0),
			     (unsigned)strtoul(argv[4], NULL, 0));
	if (argc >= 5 && (!strcmp(argv[1], "uring") || !strcmp(argv[1], "ioctl")) &&
	    (!strcmp(argv[2], "io") || !strcmp(argv[2], "admin")))
		return one(argc, argv);
	fprintf(stderr, "usage: bpfcmd uring|ioctl io|admin DEV OPCODE [nsid=N] [cdw10=X] "
			"[cdw11=X] [cdw12=X] [len=BYTES]\n"
			"       bpfcmd race DEV N SLBA | bpfcmd marks DEV N SLBA\n");
	return 2;
}
