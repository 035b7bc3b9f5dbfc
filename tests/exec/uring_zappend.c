/* SPDX-License-Identifier: MIT */
/*
 * A zone-append writer as a log-structured store is one: it resets a zone,
 * sends several Zone Appends to the zone's start at once through
 * NVME_URING_CMD_IO on a 128-byte-SQE, 32-byte-CQE ring, and learns where
 * each record landed only from the LBA the controller returns in the big
 * CQE. It then reads every record back at that LBA, checks the write
 * pointer in a zone report, and checks the statuses of an append that is
 * not at a zone start (Invalid Field) and of one to a full zone (Zone Is
 * Full).
 *
 * Built against Debian's liburing alone, knowing nothing of ucmd:
 * tests/system/exec_zappend.sh runs it under `ucmd exec` on a zoned
 * namespace. It would run the same on Linux with a ZNS drive:
 * `uring_zappend /dev/ng0n1`. It writes: a scratch namespace only.
 */
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <linux/nvme_ioctl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#define NVME_READ		0x02
#define NVME_ZONE_MGMT_SEND	0x79
#define NVME_ZONE_MGMT_RECV	0x7a
#define NVME_ZONE_APPEND	0x7d
#define ZSA_FINISH		0x02
#define ZSA_RESET		0x04
#define NR_APPENDS		8u
#define LBS			512u	/* the test's namespace: LBA format 0 */
#define ZONE			1u	/* the zone used, by index */

static int ng;
static unsigned nsid;
static struct io_uring ring;

#define FAIL(...) do { fprintf(stderr, "%s:%d: ", __func__, __LINE__); \
	fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); return 1; } while (0)

static void prep(struct io_uring_sqe *sqe, const struct nvme_uring_cmd *c, uint64_t tag)
{
	memset(sqe, 0, 2 * sizeof(*sqe));	/* a 128-byte SQE */
	sqe->opcode = IORING_OP_URING_CMD;
	sqe->fd = ng;
	sqe->cmd_op = NVME_URING_CMD_IO;
	sqe->user_data = tag;
	memcpy(sqe->cmd, c, sizeof(*c));
}

/* One command: the CQE's res, and big_cqe[0] (the command's result) in *result */
static int submit(const struct nvme_uring_cmd *c, uint64_t *result)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
	struct io_uring_cqe *cqe;
	int res;

	if (!sqe)
		return -EBUSY;
	prep(sqe, c, 0);
	if (io_uring_submit(&ring) != 1 || io_uring_wait_cqe(&ring, &cqe))
		return -EIO;
	res = cqe->res;
	if (result)
		*result = cqe->big_cqe[0];
	io_uring_cqe_seen(&ring, cqe);
	return res;
}

/* Zone Report from slba: the nth zone's (0 or 1) start, capacity and write pointer */
static int report(uint64_t slba, unsigned nth, uint64_t *zslba, uint64_t *zcap, uint64_t *wp)
{
	uint8_t buf[64 + 2 * 64] __attribute__((aligned(64))) = { 0 };
	const uint8_t *d = buf + 64 + 64 * nth;
	struct nvme_uring_cmd c = { .opcode = NVME_ZONE_MGMT_RECV, .nsid = nsid };

	c.addr = (uint64_t)(uintptr_t)buf;
	c.data_len = sizeof(buf);
	c.cdw10 = (uint32_t)slba;
	c.cdw11 = (uint32_t)(slba >> 32);
	c.cdw12 = sizeof(buf) / 4 - 1;	/* NUMD, 0's based */
	c.cdw13 = 1u << 16;		/* report zones, all states, partial report */
	if (submit(&c, NULL))
		FAIL("report zones at %#llx", (unsigned long long)slba);
	if (buf[0] < nth + 1)
		FAIL("report at %#llx: %u zones", (unsigned long long)slba, buf[0]);
	/* descriptors from byte 64: ZT, ZS, ZA, ZAI, rsvd[4], ZCAP, ZSLBA, WP (little-endian) */
	memcpy(zcap, d + 8, 8);
	memcpy(zslba, d + 16, 8);
	memcpy(wp, d + 24, 8);
	return 0;
}

static int zone_send(uint64_t zslba, unsigned zsa)
{
	struct nvme_uring_cmd c = { .opcode = NVME_ZONE_MGMT_SEND, .nsid = nsid };

	c.cdw10 = (uint32_t)zslba;
	c.cdw11 = (uint32_t)(zslba >> 32);
	c.cdw13 = zsa;
	return submit(&c, NULL);
}

static void append_cmd(struct nvme_uring_cmd *c, uint64_t zslba, void *buf)
{
	memset(c, 0, sizeof(*c));
	c->opcode = NVME_ZONE_APPEND;
	c->nsid = nsid;
	c->addr = (uint64_t)(uintptr_t)buf;
	c->data_len = LBS;
	c->cdw10 = (uint32_t)zslba;
	c->cdw11 = (uint32_t)(zslba >> 32);
	c->cdw12 = 0;			/* one block */
}

int main(int argc, char **argv)
{
	static uint8_t rec[NR_APPENDS][LBS] __attribute__((aligned(4096)));
	static uint8_t back[LBS] __attribute__((aligned(4096)));
	uint64_t zslba, zcap, wp, lba[NR_APPENDS], seen = 0, res;
	struct nvme_uring_cmd c;
	int ret;

	if (argc != 2) {
		fprintf(stderr, "usage: uring_zappend /dev/ngXnY\n");
		return 2;
	}
	ng = open(argv[1], O_RDWR);
	if (ng < 0)
		FAIL("open %s: %s", argv[1], strerror(errno));
	ret = ioctl(ng, NVME_IOCTL_ID);
	if (ret <= 0)
		FAIL("NVME_IOCTL_ID: %d", ret);
	nsid = (unsigned)ret;
	ret = io_uring_queue_init(16, &ring, IORING_SETUP_SQE128 | IORING_SETUP_CQE32);
	if (ret)
		FAIL("io_uring_queue_init: %s", strerror(-ret));

	/* the second zone, as a report from LBA 0 lists it */
	if (report(0, ZONE, &zslba, &zcap, &wp))
		return 1;
	if (!zslba || zcap < NR_APPENDS)
		FAIL("zone %u at %#llx, capacity %llu", ZONE, (unsigned long long)zslba,
		     (unsigned long long)zcap);
	if (zone_send(zslba, ZSA_RESET))
		FAIL("reset zone at %#llx", (unsigned long long)zslba);
	printf("zone at %#llx, capacity %llu: reset: ok\n", (unsigned long long)zslba,
	       (unsigned long long)zcap);

	/* NR_APPENDS appends in flight at once, each to the zone's start */
	for (unsigned i = 0; i < NR_APPENDS; i++) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);

		for (unsigned b = 0; b < LBS; b++)
			rec[i][b] = (uint8_t)(i * 37 + b * 3 + 1);
		append_cmd(&c, zslba, rec[i]);
		prep(sqe, &c, i);
	}
	if (io_uring_submit(&ring) != (int)NR_APPENDS)
		FAIL("submit %u appends", NR_APPENDS);
	for (unsigned n = 0; n < NR_APPENDS; n++) {
		struct io_uring_cqe *cqe;
		unsigned i;

		if (io_uring_wait_cqe(&ring, &cqe))
			FAIL("wait");
		i = (unsigned)cqe->user_data;
		if (cqe->res != 0 || i >= NR_APPENDS)
			FAIL("append %u: res %d", i, cqe->res);
		lba[i] = cqe->big_cqe[0];
		io_uring_cqe_seen(&ring, cqe);
		if (lba[i] < zslba || lba[i] >= zslba + NR_APPENDS || seen & 1ull << (lba[i] - zslba))
			FAIL("append %u landed at %#llx", i, (unsigned long long)lba[i]);
		seen |= 1ull << (lba[i] - zslba);
	}
	printf("%u appends in flight: each at its own LBA of the zone's first %u: ok\n",
	       NR_APPENDS, NR_APPENDS);

	/* every record is where its CQE said */
	for (unsigned i = 0; i < NR_APPENDS; i++) {
		memset(&c, 0, sizeof(c));
		c.opcode = NVME_READ;
		c.nsid = nsid;
		c.addr = (uint64_t)(uintptr_t)back;
		c.data_len = LBS;
		c.cdw10 = (uint32_t)lba[i];
		c.cdw11 = (uint32_t)(lba[i] >> 32);
		if ((ret = submit(&c, NULL)))
			FAIL("read %#llx: %d", (unsigned long long)lba[i], ret);
		if (memcmp(back, rec[i], LBS))
			FAIL("record %u is not at %#llx", i, (unsigned long long)lba[i]);
	}
	printf("each record reads back at the LBA its CQE gave: ok\n");

	if (report(zslba, 0, &zslba, &zcap, &wp) || wp != zslba + NR_APPENDS)
		FAIL("write pointer %#llx, want %#llx", (unsigned long long)wp,
		     (unsigned long long)(zslba + NR_APPENDS));
	printf("the write pointer moved past the appends: ok\n");

	/* not a zone start: Invalid Field (SCT 0, SC 02h), nothing written */
	append_cmd(&c, zslba + 1, rec[0]);
	ret = submit(&c, &res);
	if (ret <= 0 || (ret & 0x7ff) != 0x002)
		FAIL("append off a zone start: res %#x", ret);
	if (report(zslba, 0, &zslba, &zcap, &wp) || wp != zslba + NR_APPENDS)
		FAIL("a refused append moved the write pointer to %#llx", (unsigned long long)wp);
	printf("an append off a zone start: Invalid Field, nothing written: ok\n");

	/* a full zone: Zone Is Full (SCT 1, SC B9h) */
	if (zone_send(zslba, ZSA_FINISH))
		FAIL("finish zone");
	append_cmd(&c, zslba, rec[0]);
	ret = submit(&c, &res);
	if (ret <= 0 || (ret & 0x7ff) != 0x1b9)
		FAIL("append to a full zone: res %#x", ret);
	printf("an append to a full zone: Zone Is Full: ok\n");
	if (zone_send(zslba, ZSA_RESET))
		FAIL("reset zone");
	io_uring_queue_exit(&ring);
	close(ng);
	return 0;
}
