/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: sequences of zoned commands (Zone Management Send and
 * Receive, Zone Append, and the NVM writes and reads a zoned namespace
 * checks against its write pointers) through the real path -- ring,
 * uring_cmd, the host driver, the emulated controller -- on a fresh zoned
 * RAM namespace per input (8 zones of 24 blocks, 20 writable, at most 2
 * open and 3 active, 64-byte descriptor extensions).
 *
 * After every command the zone state must be consistent (resource counts
 * equal the states, within the limits, write pointers inside their zones,
 * the implicitly opened list exactly the implicitly opened zones), and a
 * command that failed must have changed no zone: any violation aborts.
 *
 * Input: records of 12 bytes: op, zone, LBA offset in the zone, block count,
 * CDW13 (4 bytes, raw), data length (2 bytes), flags (2 bytes).
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <nvme/types.h>

#include "nvme/ctrl/zns.h"
#include "ucmd/nvme.h"
#include "ucmd/ucmd.h"

#define ZSZE	24
#define ZCAP	20
#define NR_Z	8
#define BUF	(64u * 1024)
#define REC	12

static uint8_t *data_buf;

struct rig {
	struct ucmd_engine *e;
	struct ucmd_ctrl *c;
	struct ucmd_nvme_host *host;
	struct ucmd_ring ring;
	int ng;
};

static void rig_up(struct rig *r)
{
	struct ucmd_ctrl_params cp = { .mdts = 2 };
	struct ucmd_ns_params np = {
		.nsze = NR_Z * ZSZE, .store = UCMD_NS_STORE_RAM, .attach = true,
		.zoned = { .zone_size = ZSZE, .zone_cap = ZCAP, .max_open = 2, .max_active = 3,
			   .zasl = 0, .zdes = 1 },
	};
	struct io_uring_params p = { .flags = IORING_SETUP_SQE128 | IORING_SETUP_CQE32 };

	r->e = ucmd_engine_new();
	if (!r->e || ucmd_ctrl_create(&cp, &r->c) || ucmd_ctrl_ns_create(r->c, &np) != 1 ||
	    ucmd_nvme_attach(r->e, r->c, NULL, &r->host) ||
	    ucmd_queue_init_engine(r->e, 8, &r->ring, &p))
		abort();
	r->ng = ucmd_open(r->e, "ng0n1", O_RDWR);
	if (r->ng < 0)
		abort();
}

static void rig_down(struct rig *r)
{
	ucmd_queue_exit(&r->ring);
	ucmd_close(r->e, r->ng);
	ucmd_nvme_detach(r->host);
	ucmd_engine_free(r->e);
	ucmd_ctrl_destroy(r->c);
}

static struct ctrl_zoned *zones(struct rig *r)
{
	return r->c->ns[1]->zoned;
}

static bool is_open(uint8_t zs)
{
	return zs == NVME_ZNS_ZS_IMPL_OPEN || zs == NVME_ZNS_ZS_EXPL_OPEN;
}

/* Every invariant of the zone state; abort() on a violation */
static void check(struct rig *r)
{
	struct ctrl_zoned *zn = zones(r);
	uint32_t open = 0, active = 0, imp = 0, listed = 0;

	for (uint32_t z = 0; z < zn->nr_zones; z++) {
		uint8_t zs = zn->z[z].zs;
		uint64_t wp = le64toh(zn->z[z].wp), zslba = (uint64_t)z * ZSZE;

		open += is_open(zs);
		active += is_open(zs) || zs == NVME_ZNS_ZS_CLOSED;
		imp += zs == NVME_ZNS_ZS_IMPL_OPEN;
		if ((zs == NVME_ZNS_ZS_EMPTY || is_open(zs) || zs == NVME_ZNS_ZS_CLOSED) &&
		    (wp < zslba || wp >= zslba + ZCAP))
			abort();
		if (zs == NVME_ZNS_ZS_EMPTY && wp != zslba)
			abort();
	}
	for (uint32_t z = zn->imp_head; z != CTRL_ZONE_NONE; z = zn->imp_next[z]) {
		if (z >= zn->nr_zones || zn->z[z].zs != NVME_ZNS_ZS_IMPL_OPEN || ++listed > imp)
			abort();
	}
	if (open != zn->nr_open || active != zn->nr_active || listed != imp || open > 2 ||
	    active > 3)
		abort();
}

static int submit(struct rig *r, struct nvme_uring_cmd *c)
{
	struct io_uring_cqe *cqe;
	int res;

	c->nsid = 1;
	ucmd_prep_nvme_cmd(ucmd_get_sqe(&r->ring), r->ng, NVME_URING_CMD_IO, c);
	if (ucmd_submit_and_wait(&r->ring, 1) != 1 || ucmd_wait_cqe(&r->ring, &cqe))
		abort();
	res = cqe->res;
	ucmd_cqe_seen(&r->ring, cqe);
	if (res < -4095 || res > 0x7fff)
		abort();
	return res;
}

static void step(struct rig *r, const uint8_t *in)
{
	static const uint8_t ops[] = { nvme_zns_cmd_mgmt_send, nvme_zns_cmd_mgmt_recv,
		nvme_zns_cmd_append, nvme_cmd_write, nvme_cmd_read, nvme_cmd_write_zeroes,
		nvme_cmd_copy, 0 };
	struct ctrl_zoned *zn = zones(r);
	struct nvme_uring_cmd c = { 0 };
	uint8_t before[NR_Z * sizeof(struct ctrl_zone_rec)];
	uint64_t slba = (uint64_t)(in[1] % (NR_Z + 1)) * ZSZE + (int8_t)in[2];
	uint32_t cdw13, len = in[8] | (uint32_t)in[9] << 8;
	uint16_t flags = in[10] | (uint16_t)in[11] << 8;
	int res;

	memcpy(&cdw13, in + 4, 4);
	c.opcode = ops[in[0] % 8];
	if (!c.opcode) {
		/* the media fails a zone: Read Only or Offline (the test knob) */
		ctrl_zns_fail_zone(r->c, 1, in[1] % NR_Z, in[2] & 1);
		check(r);
		return;
	}
	c.cdw10 = (uint32_t)slba;
	c.cdw11 = (uint32_t)(slba >> 32);
	c.cdw12 = in[3] | (uint32_t)(flags & 0xff00) << 16;	/* NLB, then control bits */
	c.cdw13 = cdw13;
	if (c.opcode == nvme_cmd_copy) {
		struct nvme_copy_range *cr = (void *)data_buf;

		memset(cr, 0, sizeof(*cr));
		cr->slba = htole64((uint64_t)(in[5] % NR_Z) * ZSZE + in[6] % ZSZE);
		cr->nlb = htole16(in[7] % 8);
		c.cdw12 = 0;		/* one range, format 0 */
		len = sizeof(*cr);
	}
	c.addr = (uint64_t)(uintptr_t)data_buf;
	c.data_len = len % (BUF + 1);
	memcpy(before, zn->z, sizeof(before));
	res = submit(r, &c);
	check(r);
	/* a command that failed changed no zone */
	if (res && memcmp(before, zn->z, sizeof(before)))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *in, size_t size)
{
	struct rig r;

	if (!data_buf && !(data_buf = aligned_alloc(4096, BUF)))
		abort();
	memset(data_buf, 0x5a, BUF);
	rig_up(&r);
	check(&r);
	for (size_t off = 0; off + REC <= size && off < 64 * REC; off += REC)
		step(&r, in + off);
	rig_down(&r);
	return 0;
}
