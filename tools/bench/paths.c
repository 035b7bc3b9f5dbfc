/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <string.h>

#include "paths.h"

enum { NVME_OP_WRITE = 0x01, NVME_OP_READ = 0x02 };

static void nvme_rw(const struct bench_opts *o, const struct bench_target *t,
		    const struct io_unit *u, uint8_t *opcode, uint32_t *cdw10, uint32_t *cdw11,
		    uint32_t *cdw12, uint32_t *cdw13)
{
	unsigned shift = (unsigned)__builtin_ctz(t->lba_size);
	uint64_t slba = u->off >> shift;

	*opcode = u->write ? NVME_OP_WRITE : NVME_OP_READ;
	*cdw10 = (uint32_t)slba;
	*cdw11 = (uint32_t)(slba >> 32);
	*cdw12 = (u->len >> shift) - 1;		/* NLB is 0-based */
	if (u->write && o->plid >= 0) {
		*cdw12 |= 2u << 20;			/* DTYPE: data placement */
		*cdw13 = (uint32_t)o->plid << 16;	/* DSPEC: the identifier */
	}
}

void path_prep(const struct bench_opts *o, const struct bench_target *t,
	       struct io_uring_sqe *sqe, struct io_unit *u)
{
	if (o->path == PATH_PASSTHRU) {
		struct nvme_uring_cmd c = { .nsid = t->nsid };

		nvme_rw(o, t, u, &c.opcode, &c.cdw10, &c.cdw11, &c.cdw12, &c.cdw13);
		if (o->vectored) {
			c.addr = (uint64_t)(uintptr_t)&u->iov;
			c.data_len = 1;		/* _VEC: number of iovecs */
		} else {
			c.addr = (uint64_t)(uintptr_t)u->buf;
			c.data_len = u->len;
		}
		ucmd_prep_nvme_cmd(sqe, 0, o->vectored ? NVME_URING_CMD_IO_VEC : NVME_URING_CMD_IO,
				   &c);
		if (o->fixedbufs) {
			sqe->uring_cmd_flags = IORING_URING_CMD_FIXED;
			sqe->buf_index = (uint16_t)u->idx;
		}
	} else if (o->fixedbufs) {
		if (u->write)
			ucmd_prep_write_fixed(sqe, 0, u->buf, u->len, u->off, (int)u->idx);
		else
			ucmd_prep_read_fixed(sqe, 0, u->buf, u->len, u->off, (int)u->idx);
	} else if (o->vectored) {
		if (u->write)
			ucmd_prep_writev(sqe, 0, &u->iov, 1, u->off);
		else
			ucmd_prep_readv(sqe, 0, &u->iov, 1, u->off);
	} else {
		if (u->write)
			ucmd_prep_write(sqe, 0, u->buf, u->len, u->off);
		else
			ucmd_prep_read(sqe, 0, u->buf, u->len, u->off);
	}
	sqe->flags = IOSQE_FIXED_FILE;
	sqe->user_data = (uint64_t)(uintptr_t)u;
}

int path_expected_res(const struct bench_opts *o, const struct io_unit *u)
{
	return o->path == PATH_BLOCK ? (int)u->len : 0;
}

long path_sync(const struct bench_opts *o, const struct bench_target *t, int fd,
	       struct io_unit *u)
{
	struct nvme_passthru_cmd64 c = { .nsid = t->nsid };

	nvme_rw(o, t, u, &c.opcode, &c.cdw10, &c.cdw11, &c.cdw12, &c.cdw13);
	if (o->vectored) {
		c.addr = (uint64_t)(uintptr_t)&u->iov;
		c.data_len = 1;
	} else {
		c.addr = (uint64_t)(uintptr_t)u->buf;
		c.data_len = u->len;
	}
	unsigned long cmd = o->vectored ? NVME_IOCTL_IO64_CMD_VEC : NVME_IOCTL_IO64_CMD;
	/* ioctl(2) on a kernel engine, the device's ->ioctl on ucmd's own */
	return ucmd_ioctl(t->engine, fd, cmd, &c);
}

/* splitmix64: cheap, and every bit depends on every input bit */
static inline uint64_t mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

void pattern_fill(void *buf, uint32_t len, uint64_t off, uint64_t seed)
{
	uint64_t *w = buf;

	for (uint32_t i = 0; i < len / 8; i++)
		w[i] = mix(seed ^ (off + 8ull * i));
}

uint64_t pattern_check(const void *buf, uint32_t len, uint64_t off, uint64_t seed)
{
	const uint64_t *w = buf;
	uint64_t bad = 0;

	for (uint32_t i = 0; i < len / 8; i++)
		bad += w[i] != mix(seed ^ (off + 8ull * i));
	return bad;
}
