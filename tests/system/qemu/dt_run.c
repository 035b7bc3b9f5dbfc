/* SPDX-License-Identifier: MIT */
/*
 * The I/O half of the differential sequence and the error cases: what the
 * NVMe and io_uring specs (and Linux's driver) define, so both targets must
 * answer the same way.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>

#include "difftest.h"

#define rw dt_rw
#define io dt_io

enum { OP_FLUSH = 0x00, OP_WRITE = 0x01, OP_READ = 0x02, OP_COMPARE = 0x05,
       OP_WRITE_ZEROES = 0x08, OP_DSM = 0x09, OP_VERIFY = 0x0c };

static uint8_t wbuf[65536] __attribute__((aligned(4096)));
static uint8_t rbuf[65536] __attribute__((aligned(4096)));
static uint8_t fixbuf[65536] __attribute__((aligned(4096)));
static uint8_t mdbuf[4096] __attribute__((aligned(4096)));

uint32_t dt_sum(const void *p, size_t len)
{
	const uint8_t *b = p;
	uint32_t h = 2166136261u;	/* FNV-1a: any change of any byte shows */

	for (size_t i = 0; i < len; i++)
		h = (h ^ b[i]) * 16777619u;
	return h;
}

void dt_line(const char *name, int res, uint64_t dw0, const void *data, size_t len)
{
	printf("%s res=%d dw0=0x%llx", name, res, (unsigned long long)dw0);
	if (data)
		printf(" sum=%08x", dt_sum(data, len));
	printf("\n");
	fflush(stdout);
}

void dt_field(const char *name, const char *fmt, ...)
{
	va_list ap;

	printf("%s value=", name);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
}

int dt_cmd(struct dt *d, struct ucmd_ring *ring, int fd, uint32_t op, const struct nvme_uring_cmd *c,
	   unsigned sqe_flags, unsigned uring_flags, unsigned buf_index, uint64_t *dw0)
{
	struct io_uring_sqe *sqe = ucmd_get_sqe(ring);
	struct io_uring_cqe *cqe;
	int ret;

	*dw0 = 0;
	if (!sqe) {
		d->failed++;
		return -EBUSY;
	}
	if (ring->flags & IORING_SETUP_SQE128) {
		ucmd_prep_nvme_cmd(sqe, fd, op, c);
	} else {
		/* a 64-byte SQE holds only the first 16 bytes of the command */
		ucmd_prep_uring_cmd(sqe, (int)op, fd);
		memcpy(ucmd_sqe_cmd(sqe), c, 16);
	}
	sqe->flags = (uint8_t)sqe_flags;
	sqe->uring_cmd_flags = uring_flags;
	sqe->buf_index = (uint16_t)buf_index;
	ret = ucmd_submit_and_wait(ring, 1);
	if (ret >= 0)
		ret = ucmd_wait_cqe(ring, &cqe);
	if (ret < 0) {
		d->failed++;
		return ret;
	}
	ret = cqe->res;
	if (ring->flags & IORING_SETUP_CQE32)
		*dw0 = cqe->big_cqe[0];
	ucmd_cqe_seen(ring, cqe);
	return ret;
}

static void fill(uint8_t *b, size_t len, unsigned seed)
{
	for (size_t i = 0; i < len; i++)
		b[i] = (uint8_t)(seed * 31 + i * 7 + (i >> 9));
}

void dt_hex(const char *name, const void *p, size_t len)
{
	const uint8_t *b = p;

	printf("%s value=", name);
	for (size_t i = 0; i < len; i++)
		printf("%02x", b[i]);
	printf("\n");
	fflush(stdout);
}

struct nvme_uring_cmd dt_rw(uint8_t opcode, uint32_t nsid, uint64_t slba, uint32_t nlb,
			    void *buf, uint32_t len)
{
	struct nvme_uring_cmd c;

	memset(&c, 0, sizeof(c));
	c.opcode = opcode;
	c.nsid = nsid;
	c.addr = (uint64_t)(uintptr_t)buf;
	c.data_len = len;
	c.cdw10 = (uint32_t)slba;
	c.cdw11 = (uint32_t)(slba >> 32);
	c.cdw12 = nlb ? nlb - 1 : 0;
	return c;
}

int dt_io(struct dt *d, const char *name, int i, struct nvme_uring_cmd c, const void *out,
	  size_t outlen)
{
	uint64_t dw0;
	int res = dt_cmd(d, &d->ring, d->t->ns_fd[i], NVME_URING_CMD_IO, &c, 0, 0, 0, &dw0);

	dt_line(name, res, dw0, out, outlen);
	return res;
}

static void io_ns1(struct dt *d)
{
	uint32_t nsid = d->t->nsid[0];
	int fd = d->t->ns_fd[0];
	struct nvme_uring_cmd c;
	struct iovec iov[3];
	uint64_t dw0;
	int res;

	fill(wbuf, 4096, 1);
	io(d, "io.write", 0, rw(OP_WRITE, nsid, 0, 8, wbuf, 4096), NULL, 0);
	memset(rbuf, 0xee, 4096);
	io(d, "io.read", 0, rw(OP_READ, nsid, 0, 8, rbuf, 4096), rbuf, 4096);

	/* vectored: addr is the iovec array, data_len its length */
	fill(wbuf, 4096, 2);
	iov[0] = (struct iovec){ wbuf, 1024 };
	iov[1] = (struct iovec){ wbuf + 1024, 2048 };
	iov[2] = (struct iovec){ wbuf + 3072, 1024 };
	c = rw(OP_WRITE, nsid, 16, 8, iov, 3);
	res = dt_cmd(d, &d->ring, fd, NVME_URING_CMD_IO_VEC, &c, 0, 0, 0, &dw0);
	dt_line("io.writev", res, dw0, NULL, 0);
	memset(rbuf, 0xee, 4096);
	iov[0] = (struct iovec){ rbuf, 2048 };
	iov[1] = (struct iovec){ rbuf + 2048, 2048 };
	c = rw(OP_READ, nsid, 16, 8, iov, 2);
	res = dt_cmd(d, &d->ring, fd, NVME_URING_CMD_IO_VEC, &c, 0, 0, 0, &dw0);
	dt_line("io.readv", res, dw0, rbuf, 4096);
	dt_line("io.readv-matches-writev", !memcmp(rbuf, wbuf, 4096), 0, NULL, 0);

	/* fixed buffer 0 (fixbuf) with IORING_URING_CMD_FIXED */
	fill(fixbuf, 4096, 3);
	c = rw(OP_WRITE, nsid, 32, 8, fixbuf, 4096);
	res = dt_cmd(d, &d->ring, fd, NVME_URING_CMD_IO, &c, 0, IORING_URING_CMD_FIXED, 0, &dw0);
	dt_line("io.write-fixed", res, dw0, NULL, 0);
	memset(fixbuf, 0xee, 8192);
	c = rw(OP_READ, nsid, 32, 8, fixbuf + 4096, 4096);
	res = dt_cmd(d, &d->ring, fd, NVME_URING_CMD_IO, &c, 0, IORING_URING_CMD_FIXED, 0, &dw0);
	dt_line("io.read-fixed", res, dw0, fixbuf + 4096, 4096);
	c = rw(OP_READ, nsid, 32, 8, fixbuf, 4096);
	res = dt_cmd(d, &d->ring, fd, NVME_URING_CMD_IO, &c, 0, IORING_URING_CMD_FIXED, 5, &dw0);
	dt_line("io.fixed-bad-index", res, dw0, NULL, 0);

	/* registered file 0 is ns 1 */
	memset(rbuf, 0xee, 4096);
	c = rw(OP_READ, nsid, 0, 8, rbuf, 4096);
	res = dt_cmd(d, &d->ring, 0, NVME_URING_CMD_IO, &c, IOSQE_FIXED_FILE, 0, 0, &dw0);
	dt_line("io.fixed-file", res, dw0, rbuf, 4096);

	fill(wbuf, 4096, 1);
	io(d, "io.compare-match", 0, rw(OP_COMPARE, nsid, 0, 8, wbuf, 4096), NULL, 0);
	wbuf[777] ^= 1;
	io(d, "io.compare-mismatch", 0, rw(OP_COMPARE, nsid, 0, 8, wbuf, 4096), NULL, 0);

	io(d, "io.write-zeroes", 0, rw(OP_WRITE_ZEROES, nsid, 0, 8, NULL, 0), NULL, 0);
	io(d, "io.read-after-write-zeroes", 0, rw(OP_READ, nsid, 0, 8, rbuf, 4096), rbuf, 4096);

	/* Dataset Management, Attribute Deallocate, one range: LBA 16, 8 blocks */
	struct { uint32_t cattr, nlb; uint64_t slba; } range = { 0, 8, 16 };
	memcpy(wbuf, &range, sizeof(range));
	c = rw(OP_DSM, nsid, 0, 0, wbuf, 16);
	c.cdw10 = 0;		/* NR: one range */
	c.cdw11 = 1u << 2;	/* AD */
	c.cdw12 = 0;
	io(d, "io.dsm-deallocate", 0, c, NULL, 0);
	io(d, "io.read-after-deallocate", 0, rw(OP_READ, nsid, 16, 8, rbuf, 4096), rbuf, 4096);

	io(d, "io.flush", 0, rw(OP_FLUSH, nsid, 0, 0, NULL, 0), NULL, 0);
	io(d, "io.verify", 0, rw(OP_VERIFY, nsid, 32, 8, NULL, 0), NULL, 0);
}

static void errors(struct dt *d)
{
	uint32_t nsid = d->t->nsid[0];
	int fd = d->t->ns_fd[0];
	struct nvme_uring_cmd c;
	struct io_uring_sqe *sqe;
	struct io_uring_cqe *cqe;
	uint64_t dw0;
	int res;

	io(d, "err.lba-out-of-range", 0, rw(OP_READ, nsid, DT_NS1_BLOCKS, 1, rbuf, 512), NULL, 0);
	io(d, "err.lba-straddles-end", 0, rw(OP_READ, nsid, DT_NS1_BLOCKS - 1, 2, rbuf, 1024),
	   NULL, 0);
	io(d, "err.invalid-io-opcode", 0, rw(0x7e, nsid, 0, 0, NULL, 0), NULL, 0);
	io(d, "err.bad-nsid", 0, rw(OP_READ, 99, 0, 1, rbuf, 512), NULL, 0);
	c = rw(OP_READ, nsid, 0, 1, rbuf, 512);
	c.flags = 1;
	io(d, "err.cmd-flags", 0, c, NULL, 0);

	c = rw(OP_READ, nsid, 0, 1, rbuf, 512);
	res = dt_cmd(d, &d->ring, fd, _IOWR('N', 0x90, struct nvme_uring_cmd), &c, 0, 0, 0, &dw0);
	dt_line("err.unknown-cmd-op", res, dw0, NULL, 0);
	res = dt_cmd(d, &d->ring, fd, NVME_URING_CMD_ADMIN, &c, 0, 0, 0, &dw0);
	dt_line("err.admin-on-namespace", res, dw0, NULL, 0);
	c.opcode = 0x06;	/* Identify controller */
	c.nsid = 0;
	c.cdw10 = 1;
	c.data_len = 4096;
	res = dt_cmd(d, &d->ring, d->t->ctrl_fd, NVME_URING_CMD_IO, &c, 0, 0, 0, &dw0);
	dt_line("err.io-on-controller", res, dw0, NULL, 0);
	c = rw(OP_READ, nsid, 0, 1, rbuf, 512);
	res = dt_cmd(d, &d->ring, fd, NVME_URING_CMD_IO, &c, 0, 1u << 7, 0, &dw0);
	dt_line("err.uring-cmd-flags", res, dw0, NULL, 0);

	/* __pad1 (the word after cmd_op) is reserved */
	sqe = ucmd_get_sqe(&d->ring);
	ucmd_prep_nvme_cmd(sqe, fd, NVME_URING_CMD_IO, &c);
	sqe->__pad1 = 1;
	res = ucmd_submit_and_wait(&d->ring, 1);
	if (res >= 0 && (res = ucmd_wait_cqe(&d->ring, &cqe)) == 0) {
		res = cqe->res;
		ucmd_cqe_seen(&d->ring, cqe);
	}
	dt_line("err.sqe-pad1", res, 0, NULL, 0);
}

/* A ring with other setup flags, one command on it. */
static void other_ring(struct dt *d, const char *name, unsigned flags, int fd, uint32_t op,
		       struct nvme_uring_cmd c, const void *out, size_t outlen)
{
	struct io_uring_params p = { .flags = flags, .sq_thread_idle = 50 };
	struct ucmd_ring ring;
	uint64_t dw0;
	int res = ucmd_queue_init_engine(d->t->e, 4, &ring, &p);

	if (res) {
		printf("%s setup=%d\n", name, res);
		return;
	}
	res = dt_cmd(d, &ring, fd, op, &c, 0, 0, 0, &dw0);
	dt_line(name, res, dw0, out, outlen);
	ucmd_queue_exit(&ring);
}

static void rings(struct dt *d)
{
	uint32_t nsid = d->t->nsid[0];
	const unsigned big = IORING_SETUP_SQE128 | IORING_SETUP_CQE32;
	struct nvme_uring_cmd id;

	other_ring(d, "ring.sqe64", IORING_SETUP_CQE32, d->t->ns_fd[0], NVME_URING_CMD_IO,
		   rw(OP_READ, nsid, 0, 1, rbuf, 512), NULL, 0);
	other_ring(d, "ring.cqe16", IORING_SETUP_SQE128, d->t->ns_fd[0], NVME_URING_CMD_IO,
		   rw(OP_READ, nsid, 0, 1, rbuf, 512), NULL, 0);
	fill(wbuf, 4096, 4);
	other_ring(d, "ring.iopoll-write", big | IORING_SETUP_IOPOLL, d->t->ns_fd[0],
		   NVME_URING_CMD_IO, rw(OP_WRITE, nsid, 64, 8, wbuf, 4096), NULL, 0);
	memset(rbuf, 0xee, 4096);
	other_ring(d, "ring.iopoll-read", big | IORING_SETUP_IOPOLL, d->t->ns_fd[0],
		   NVME_URING_CMD_IO, rw(OP_READ, nsid, 64, 8, rbuf, 4096), rbuf, 4096);
	memset(&id, 0, sizeof(id));
	id.opcode = 0x06;
	id.cdw10 = 1;
	id.addr = (uint64_t)(uintptr_t)rbuf;
	id.data_len = 4096;
	other_ring(d, "ring.iopoll-admin", big | IORING_SETUP_IOPOLL, d->t->ctrl_fd,
		   NVME_URING_CMD_ADMIN, id, NULL, 0);
	memset(rbuf, 0xee, 4096);
	other_ring(d, "ring.sqpoll-read", big | IORING_SETUP_SQPOLL, d->t->ns_fd[0],
		   NVME_URING_CMD_IO, rw(OP_READ, nsid, 64, 8, rbuf, 4096), rbuf, 4096);
}

/* nsid 2: 4096-byte blocks with 8 bytes of separate metadata per block */
static void metadata(struct dt *d)
{
	uint32_t nsid = d->t->nsid[1];
	struct nvme_uring_cmd c;

	fill(wbuf, 8192, 5);
	fill(mdbuf, 16, 6);
	c = rw(OP_WRITE, nsid, 0, 2, wbuf, 8192);
	c.metadata = (uint64_t)(uintptr_t)mdbuf;
	c.metadata_len = 16;
	io(d, "md.write", 1, c, NULL, 0);
	memset(rbuf, 0xee, 8192);
	memset(mdbuf, 0xee, 16);
	c = rw(OP_READ, nsid, 0, 2, rbuf, 8192);
	c.metadata = (uint64_t)(uintptr_t)mdbuf;
	c.metadata_len = 16;
	io(d, "md.read", 1, c, rbuf, 8192);
	dt_line("md.read-metadata", 0, 0, mdbuf, 16);
	io(d, "md.write-zeroes", 1, rw(OP_WRITE_ZEROES, nsid, 0, 2, NULL, 0), NULL, 0);
	memset(mdbuf, 0xee, 16);
	c = rw(OP_READ, nsid, 0, 2, rbuf, 8192);
	c.metadata = (uint64_t)(uintptr_t)mdbuf;
	c.metadata_len = 16;
	io(d, "md.read-after-write-zeroes", 1, c, rbuf, 8192);
	dt_line("md.read-after-write-zeroes-metadata", 0, 0, mdbuf, 16);
	c = rw(OP_READ, nsid, DT_NS2_BLOCKS, 1, rbuf, 4096);
	c.metadata = (uint64_t)(uintptr_t)mdbuf;
	c.metadata_len = 8;
	io(d, "md.lba-out-of-range", 1, c, NULL, 0);
}

int dt_run(struct dt_target *t)
{
	struct io_uring_params p = { .flags = IORING_SETUP_SQE128 | IORING_SETUP_CQE32 };
	struct dt d = { .t = t };
	struct iovec fix = { fixbuf, sizeof(fixbuf) };
	int ret = ucmd_queue_init_engine(t->e, 8, &d.ring, &p);

	if (ret) {
		printf("setup res=%d\n", ret);
		return 1;
	}
	if ((ret = ucmd_register_files(&d.ring, &t->ns_fd[0], 1)) != 0 ||
	    (ret = ucmd_register_buffers(&d.ring, &fix, 1)) != 0) {
		printf("register res=%d\n", ret);
		return 1;
	}
	io_ns1(&d);
	metadata(&d);
	errors(&d);
	rings(&d);
	dt_admin(&d);
	ucmd_queue_exit(&d.ring);
	return d.failed;
}

int dt_run_zp(struct dt_target *t)
{
	struct io_uring_params p = { .flags = IORING_SETUP_SQE128 | IORING_SETUP_CQE32 };
	struct dt d = { .t = t };
	int ret = ucmd_queue_init_engine(t->e, 8, &d.ring, &p);

	if (ret) {
		printf("zp.setup res=%d\n", ret);
		return 1;
	}
	dt_zns(&d);
	dt_pi(&d);
	ucmd_queue_exit(&d.ring);
	return d.failed;
}
