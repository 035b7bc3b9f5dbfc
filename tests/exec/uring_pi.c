/* SPDX-License-Identifier: MIT */
/*
 * An application that does its own end-to-end data protection through NVMe
 * passthrough, as a storage engine on a PI namespace does: it computes each
 * block's protection tuple itself (16b guard CRC-16 T10-DIF, or the 64b
 * guard's NVMe CRC-64, application tag, type 1 reference tag), writes data
 * and tuples with NVME_URING_CMD_IO and a separate metadata buffer, reads
 * them back with every PRCHK bit set, and checks that a corrupted guard,
 * application tag or reference tag is refused with End-to-end Guard (82h),
 * Application Tag (83h) or Reference Tag (84h) Check Error in the CQE, on
 * a write (nothing stored) and on a read of a block stored with a bad tag.
 *
 * Built against Debian's liburing alone, knowing nothing of ucmd:
 * tests/system/exec_uring_pi.sh runs it under `ucmd exec` on a namespace
 * that nvme-cli formatted with PI type 1 and separate metadata holding the
 * tuple alone (LBA format 1: 512 + 8, 16b guard; LBA format 8: 512 + 16,
 * 64b guard). It would run the same on a Linux machine with such a drive:
 * `uring_pi /dev/ng0n1 /dev/nvme0`. It writes: a scratch namespace only.
 */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <linux/nvme_ioctl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#define NVME_WRITE	0x01
#define NVME_READ	0x02
#define NVME_IDENTIFY	0x06
#define PRCHK_ALL	(7u << 26)	/* CDW12: guard, application tag, reference tag */
#define NLB		4u
#define APPTAG		0x5aa5
#define SLBA		0x40u

static int ng, ctrl;
static unsigned nsid, lbads, ms, pif;	/* pif 0: 16b guard, 2: 64b guard */
static struct io_uring ring;

#define FAIL(...) do { fprintf(stderr, "%s:%d: ", __func__, __LINE__); \
	fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); return 1; } while (0)

/* CRC-16 T10-DIF: polynomial 8BB7h, not reflected, initial value 0 */
static uint16_t crc16_t10dif(const uint8_t *p, size_t n)
{
	uint16_t crc = 0;

	for (size_t i = 0; i < n; i++) {
		crc ^= (uint16_t)(p[i] << 8);
		for (int b = 0; b < 8; b++)
			crc = crc & 0x8000 ? (uint16_t)(crc << 1 ^ 0x8bb7) : (uint16_t)(crc << 1);
	}
	return crc;
}

/* The NVMe 64b guard: CRC-64 polynomial AD93D23594C93659h, reflected, ~0 in and out */
static uint64_t crc64_nvme(const uint8_t *p, size_t n)
{
	const uint64_t poly = 0x9a6c9329ac4bc9b5ull;	/* the reflected polynomial */
	uint64_t crc = ~0ull;

	for (size_t i = 0; i < n; i++) {
		crc ^= p[i];
		for (int b = 0; b < 8; b++)
			crc = crc & 1 ? crc >> 1 ^ poly : crc >> 1;
	}
	return ~crc;
}

static size_t tuple_size(void)
{
	return pif == 2 ? 16 : 8;
}

/* Block i's tuple (big-endian fields), the type 1 reference tag being the LBA's low bits */
static void make_tuple(const uint8_t *data, uint64_t lba, uint16_t apptag, uint8_t *t)
{
	memset(t, 0, ms);
	if (pif == 2) {
		uint64_t g = crc64_nvme(data, lbads);

		for (int i = 0; i < 8; i++)
			t[i] = (uint8_t)(g >> (56 - 8 * i));
		t[8] = (uint8_t)(apptag >> 8);
		t[9] = (uint8_t)apptag;
		for (int i = 0; i < 6; i++)
			t[10 + i] = (uint8_t)(lba >> (40 - 8 * i));
	} else {
		uint16_t g = crc16_t10dif(data, lbads);

		t[0] = (uint8_t)(g >> 8);
		t[1] = (uint8_t)g;
		t[2] = (uint8_t)(apptag >> 8);
		t[3] = (uint8_t)apptag;
		for (int i = 0; i < 4; i++)
			t[4 + i] = (uint8_t)(lba >> (24 - 8 * i));
	}
}

static void *xalloc(size_t len)
{
	void *p = NULL;

	return posix_memalign(&p, 4096, len) ? NULL : memset(p, 0, len);
}

/* One command on fd (admin or I/O) through the ring: the CQE's res */
static int submit(int fd, unsigned op, const struct nvme_uring_cmd *c)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
	struct io_uring_cqe *cqe;
	int res;

	if (!sqe)
		return -EBUSY;
	memset(sqe, 0, 2 * sizeof(*sqe));
	sqe->opcode = IORING_OP_URING_CMD;
	sqe->fd = fd;
	sqe->cmd_op = op;
	memcpy(sqe->cmd, c, sizeof(*c));
	if (io_uring_submit(&ring) != 1 || io_uring_wait_cqe(&ring, &cqe))
		return -EIO;
	res = cqe->res;
	io_uring_cqe_seen(&ring, cqe);
	return res;
}

/* The format in use: data and metadata sizes, separate metadata, PI type 1, the guard */
static int identify(void)
{
	uint8_t *id = xalloc(4096), *nvm = xalloc(4096);
	struct nvme_uring_cmd c = { .opcode = NVME_IDENTIFY, .nsid = nsid, .data_len = 4096 };
	unsigned fmt;
	uint32_t elbaf;

	c.addr = (uint64_t)(uintptr_t)id;
	c.cdw10 = 0;	/* CNS 0: the namespace */
	if (submit(ctrl, NVME_URING_CMD_ADMIN, &c))
		FAIL("identify namespace");
	fmt = (id[26] & 0xf) | (id[26] >> 5 & 3) << 4;
	ms = id[128 + 4 * fmt] | id[128 + 4 * fmt + 1] << 8;
	lbads = 1u << id[128 + 4 * fmt + 2];
	if ((id[29] & 7) != 1 || (id[26] & 0x10))
		FAIL("want PI type 1 with separate metadata: dps %#x flbas %#x", id[29], id[26]);
	c.addr = (uint64_t)(uintptr_t)nvm;
	c.cdw10 = 5;			/* CNS 05h: I/O command set specific */
	c.cdw11 = 0;			/* CSI 0: NVM */
	if (submit(ctrl, NVME_URING_CMD_ADMIN, &c))
		FAIL("NVM identify namespace");
	memcpy(&elbaf, nvm + 16 + 4 * fmt, 4);
	pif = (le32toh(elbaf) >> 7) & 3;
	if (ms != tuple_size() || (pif != 0 && pif != 2))
		FAIL("want metadata that is the tuple alone: ms %u, pif %u", ms, pif);
	free(id);
	free(nvm);
	return 0;
}

/* Read or Write of NLB blocks at SLBA, PRCHK as asked, the reference tag from ILBRT */
static int rw(bool write, uint32_t prchk, uint16_t lbat, uint64_t ilbrt, void *data, void *md)
{
	struct nvme_uring_cmd c = { .opcode = write ? NVME_WRITE : NVME_READ, .nsid = nsid };

	c.addr = (uint64_t)(uintptr_t)data;
	c.data_len = NLB * lbads;
	c.metadata = (uint64_t)(uintptr_t)md;
	c.metadata_len = NLB * ms;
	c.cdw10 = SLBA;
	c.cdw12 = (NLB - 1) | prchk;
	c.cdw14 = (uint32_t)ilbrt;
	c.cdw3 = (uint32_t)(ilbrt >> 32) & 0xffff;	/* the 64b guard's bits 47:32 */
	c.cdw15 = lbat | 0xffffu << 16;			/* LBATM: every bit compared */
	return submit(ng, NVME_URING_CMD_IO, &c);
}

static void tuples(const uint8_t *data, uint8_t *md, uint16_t apptag)
{
	for (unsigned i = 0; i < NLB; i++)
		make_tuple(data + i * lbads, SLBA + i, apptag, md + i * ms);
}

/* The CQE's status: Media and Data Integrity Errors (SCT 2), code sc */
static bool is_status(int res, unsigned sc)
{
	return res > 0 && (res & 0x7ff) == (0x200 | sc);
}

static int test_good(uint8_t *d, uint8_t *m, uint8_t *rd, uint8_t *rm)
{
	int res;

	for (unsigned i = 0; i < NLB * lbads; i++)
		d[i] = (uint8_t)(i * 7 + (i >> 9) + 3);
	tuples(d, m, APPTAG);
	if ((res = rw(true, PRCHK_ALL, APPTAG, SLBA, d, m)))
		FAIL("write with good tuples: %#x", res);
	if ((res = rw(false, PRCHK_ALL, APPTAG, SLBA, rd, rm)))
		FAIL("read with every check: %#x", res);
	if (memcmp(d, rd, NLB * lbads) || memcmp(m, rm, NLB * ms))
		FAIL("read back other data or tuples");
	return 0;
}

/* A bad tuple on block 2: the write is refused with sc and stores nothing */
static int test_bad_write(uint8_t *d, uint8_t *m, uint8_t *rd, uint8_t *rm, unsigned sc)
{
	uint8_t *d2 = xalloc(NLB * lbads), *m2 = xalloc(NLB * ms);
	uint8_t *t = m2 + 2 * ms;
	int res;

	for (unsigned i = 0; i < NLB * lbads; i++)
		d2[i] = (uint8_t)~d[i];
	tuples(d2, m2, APPTAG);
	if (sc == 0x82)
		t[1] ^= 1;			/* a guard bit */
	else if (sc == 0x83)
		t[pif == 2 ? 9 : 3] ^= 1;	/* an application tag bit */
	else
		t[pif == 2 ? 15 : 7] ^= 1;	/* a reference tag bit */
	res = rw(true, PRCHK_ALL, APPTAG, SLBA, d2, m2);
	if (!is_status(res, sc))
		FAIL("write with a bad tag: CQE res %#x, want %#x", res, 0x200 | sc);
	if ((res = rw(false, PRCHK_ALL, APPTAG, SLBA, rd, rm)))
		FAIL("read after the refused write: %#x", res);
	if (memcmp(d, rd, NLB * lbads) || memcmp(m, rm, NLB * ms))
		FAIL("the refused write changed the blocks");
	free(d2);
	free(m2);
	return 0;
}

/* A block stored with a bad tag (no checks on that write): the read with checks is refused */
static int test_bad_read(uint8_t *d, uint8_t *m, uint8_t *rd, uint8_t *rm, unsigned sc)
{
	uint8_t *m2 = xalloc(NLB * ms), *t = m2 + ms;
	int res;

	memcpy(m2, m, NLB * ms);
	if (sc == 0x82)
		t[0] ^= 0x80;
	else if (sc == 0x83)
		t[pif == 2 ? 8 : 2] ^= 0x80;
	else
		t[pif == 2 ? 14 : 6] ^= 0x80;
	if ((res = rw(true, 0, 0, SLBA, d, m2)))
		FAIL("write without checks: %#x", res);
	res = rw(false, PRCHK_ALL, APPTAG, SLBA, rd, rm);
	if (!is_status(res, sc))
		FAIL("read of a bad tag: CQE res %#x, want %#x", res, 0x200 | sc);
	/* with that check off, the block reads back as stored */
	res = rw(false, PRCHK_ALL & ~((sc == 0x82 ? 4u : sc == 0x83 ? 2u : 1u) << 26), APPTAG,
		 SLBA, rd, rm);
	if (res || memcmp(rm, m2, NLB * ms))
		FAIL("read with that check off: %#x", res);
	if ((res = rw(true, PRCHK_ALL, APPTAG, SLBA, d, m)))
		FAIL("rewrite with good tuples: %#x", res);
	free(m2);
	return 0;
}

/* The guards against known values: the NVM Command Set's 64b guard test vector, CRC-16's check */
static int test_crcs(void)
{
	uint8_t *z = xalloc(4096);

	if (crc16_t10dif((const uint8_t *)"123456789", 9) != 0xd0db)
		FAIL("CRC-16 T10-DIF check value");
	if (crc64_nvme(z, 4096) != 0x6482d367eb22b64eull)
		FAIL("CRC-64 of 4 KiB of zeroes");
	memset(z, 0xff, 4096);
	if (crc64_nvme(z, 4096) != 0xc0ddba7302eca3acull)
		FAIL("CRC-64 of 4 KiB of FFh");
	free(z);
	return 0;
}

int main(int argc, char **argv)
{
	uint8_t *d, *m, *rd, *rm;
	int fails = 0;

	if (argc != 3) {
		fprintf(stderr, "usage: %s /dev/ngXnY /dev/nvmeX\n", argv[0]);
		return 2;
	}
	ng = open(argv[1], O_RDWR);
	ctrl = open(argv[2], O_RDWR);
	if (ng < 0 || ctrl < 0 || io_uring_queue_init(8, &ring, IORING_SETUP_SQE128 |
						      IORING_SETUP_CQE32)) {
		fprintf(stderr, "setup: %s\n", strerror(errno));
		return 1;
	}
	nsid = (unsigned)ioctl(ng, NVME_IOCTL_ID);
	if (test_crcs() || identify())
		return 1;
	printf("namespace %u: %u + %u, %s guard\n", nsid, lbads, ms, pif == 2 ? "64b" : "16b");
	d = xalloc(NLB * lbads);
	rd = xalloc(NLB * lbads);
	m = xalloc(NLB * ms);
	rm = xalloc(NLB * ms);
#define CASE(name, call) do { int r_ = (call); fails += r_; \
	printf("%s: %s\n", name, r_ ? "FAILED" : "ok"); } while (0)
	CASE("good tuples", test_good(d, m, rd, rm));
	CASE("write, bad guard", test_bad_write(d, m, rd, rm, 0x82));
	CASE("write, bad application tag", test_bad_write(d, m, rd, rm, 0x83));
	CASE("write, bad reference tag", test_bad_write(d, m, rd, rm, 0x84));
	CASE("read, bad guard", test_bad_read(d, m, rd, rm, 0x82));
	CASE("read, bad application tag", test_bad_read(d, m, rd, rm, 0x83));
	CASE("read, bad reference tag", test_bad_read(d, m, rd, rm, 0x84));
	io_uring_queue_exit(&ring);
	return fails ? 1 : 0;
}
