/* SPDX-License-Identifier: MIT */
/*
 * Zoned namespaces through the controller's queues: Identify for CSI 02h,
 * the zone state machine and its resource limits, writes at the write
 * pointer, Zone Append's LBA in the completion, Zone Management Send and
 * Receive, the Changed Zone List, bad input that changes nothing, and zone
 * state kept across a restart of a controller directory.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <nvme/types.h>

#include "host_sim.h"
#include "nvme/ctrl/zns.h"

#define SC(sct, sc)	((sct) << 8 | (sc))
#define DNR		0x4000
#define ZST(sc)		(SC(1, sc) | DNR)
#define ST_INVALID	(SC(0, 0x02) | DNR)
#define BS		512
#define ZSZE		100	/* not a power of two */
#define ZCAP		80
#define NR_ZONES	10
#define NSZE		(NR_ZONES * ZSZE + 7)	/* the 7 blocks past the last zone go */

struct fx {
	struct host h;
	uint32_t nsid;
	char dir[64];
};

static void zparams(struct ucmd_ns_params *nsp, bool cross_read)
{
	memset(nsp, 0, sizeof(*nsp));
	nsp->nsze = NSZE;
	nsp->lbaf = 0;
	nsp->store = UCMD_NS_STORE_RAM;
	nsp->attach = true;
	nsp->zoned.zone_size = ZSZE;
	nsp->zoned.zone_cap = ZCAP;
	nsp->zoned.max_open = 2;
	nsp->zoned.max_active = 3;
	nsp->zoned.zasl = 1;		/* 8 KiB: 16 blocks */
	nsp->zoned.zdes = 1;		/* 64 bytes */
	nsp->zoned.cross_read = cross_read;
}

static int setup_opts(void **state, bool cross_read, uint8_t mdts)
{
	struct fx *f = calloc(1, sizeof(*f));
	struct ucmd_ctrl_params p;
	struct ucmd_ns_params nsp;

	host_default_params(&p);
	p.mdts = mdts;
	zparams(&nsp, cross_read);
	f->nsid = host_open_ns(&f->h, &p, &nsp);
	assert_int_not_equal(f->nsid, 0);
	*state = f;
	return 0;
}

static int setup(void **state)
{
	return setup_opts(state, false, 0);
}

static int setup_mdts(void **state)
{
	return setup_opts(state, false, 1);	/* 8 KiB */
}

static int setup_cross(void **state)
{
	return setup_opts(state, true, 0);
}

static int teardown(void **state)
{
	struct fx *f = *state;

	host_close(&f->h);
	if (f->dir[0])
		host_rmdir(f->dir);
	free(f);
	return 0;
}

static uint16_t zms(struct fx *f, uint64_t slba, uint8_t zsa, bool all, void *buf, size_t len)
{
	struct ucmd_nvme_sqe sqe = { .opcode = nvme_zns_cmd_mgmt_send, .nsid = f->nsid };

	sqe.cdw10 = (uint32_t)slba;
	sqe.cdw11 = (uint32_t)(slba >> 32);
	sqe.cdw13 = zsa | (all ? 1u << 8 : 0);
	if (buf)
		host_set_prp(&f->h, &sqe, buf, len);
	return host_cmd(&f->h, 1, &sqe, NULL);
}

static uint16_t zmr(struct fx *f, uint64_t slba, uint8_t zra, uint8_t zrasf, bool partial,
		    void *buf, uint32_t len)
{
	struct ucmd_nvme_sqe sqe = { .opcode = nvme_zns_cmd_mgmt_recv, .nsid = f->nsid };

	sqe.cdw10 = (uint32_t)slba;
	sqe.cdw11 = (uint32_t)(slba >> 32);
	sqe.cdw12 = len / 4 - 1;
	sqe.cdw13 = zra | (uint32_t)zrasf << 8 | (partial ? 1u << 16 : 0);
	host_set_prp(&f->h, &sqe, buf, len);
	return host_cmd(&f->h, 1, &sqe, NULL);
}

static uint16_t append(struct fx *f, uint64_t zslba, uint32_t nlb, void *buf, uint64_t *lba)
{
	struct ucmd_nvme_sqe sqe = { .opcode = nvme_zns_cmd_append, .nsid = f->nsid };
	struct ucmd_nvme_cqe cqe;
	uint16_t st;

	sqe.cdw10 = (uint32_t)zslba;
	sqe.cdw11 = (uint32_t)(zslba >> 32);
	sqe.cdw12 = nlb - 1;
	host_set_prp(&f->h, &sqe, buf, (size_t)nlb * BS);
	st = host_cmd(&f->h, 1, &sqe, &cqe);
	if (lba)
		*lba = (uint64_t)cqe.dw1 << 32 | cqe.dw0;
	return st;
}

static uint16_t wr(struct fx *f, uint64_t slba, uint32_t nlb)
{
	uint8_t *b = host_alloc(&f->h, (size_t)nlb * BS);

	fill_pattern(b, (size_t)nlb * BS, (unsigned)slba);
	return host_io(&f->h, nvme_cmd_write, f->nsid, slba, nlb, b, (size_t)nlb * BS, NULL, 0);
}

/* One zone's descriptor from a full report */
static struct nvme_zns_desc zone(struct fx *f, uint32_t zid)
{
	uint32_t len = 64 + 64 * NR_ZONES;
	struct nvme_zone_report *r = host_alloc(&f->h, len);

	assert_int_equal(zmr(f, 0, 0, 0, false, r, len), 0);
	assert_int_equal(le64toh(r->nr_zones), NR_ZONES);
	return r->entries[zid];
}

static uint8_t zs(struct fx *f, uint32_t zid)
{
	return zone(f, zid).zs >> 4;
}

static uint64_t wp(struct fx *f, uint32_t zid)
{
	return le64toh(zone(f, zid).wp);
}

static void test_identify(void **state)
{
	struct fx *f = *state;
	uint8_t *buf = host_alloc(&f->h, 4096);
	struct nvme_zns_id_ns *zid = (void *)buf;
	struct nvme_id_ns *id = (void *)buf;
	struct nvme_ns_id_desc *d;
	bool csi_seen = false;

	assert_int_equal(host_identify(&f->h, NVME_IDENTIFY_CNS_CSI_NS, f->nsid, NVME_CSI_ZNS, buf),
			 0);
	assert_int_equal(le32toh(zid->mor), 1);		/* 0's based */
	assert_int_equal(le32toh(zid->mar), 2);
	assert_int_equal(le16toh(zid->ozcs), 0);
	assert_int_equal(le64toh(zid->lbafe[0].zsze), ZSZE);
	assert_int_equal(zid->lbafe[0].zdes, 1);
	/* the same bytes at 4 KiB blocks: 100 * 512 / 4096 is not whole, rounded down */
	assert_int_equal(le64toh(zid->lbafe[4].zsze), ZSZE * 512 / 4096);
	assert_int_equal(host_identify(&f->h, NVME_IDENTIFY_CNS_CSI_CTRL, 0, NVME_CSI_ZNS, buf), 0);
	assert_int_equal(buf[0], 1);	/* zasl */
	/* the namespace is whole zones */
	assert_int_equal(host_identify(&f->h, NVME_IDENTIFY_CNS_NS, f->nsid, 0, buf), 0);
	assert_int_equal(le64toh(id->nsze), NR_ZONES * ZSZE);
	/* no protection information on a zoned namespace (Format refuses it): none offered */
	assert_int_equal(id->dpc, 0);
	assert_int_equal(host_identify(&f->h, NVME_IDENTIFY_CNS_NS_DESC_LIST, f->nsid, 0, buf), 0);
	/* by bytes: a descriptor after the 5-byte CSI one starts at an odd offset */
	for (size_t off = 0; off + sizeof(*d) < 4096;) {
		uint8_t nidt = buf[off + offsetof(struct nvme_ns_id_desc, nidt)];
		uint8_t nidl = buf[off + offsetof(struct nvme_ns_id_desc, nidl)];

		if (!nidl)
			break;
		if (nidt == NVME_NIDT_CSI) {
			assert_int_equal(buf[off + sizeof(*d)], NVME_CSI_ZNS);
			csi_seen = true;
		}
		off += sizeof(*d) + nidl;
	}
	assert_true(csi_seen);
	/* the active list of CSI 02h names it, that of CSI 00h does not */
	assert_int_equal(host_identify(&f->h, NVME_IDENTIFY_CNS_CSI_NS_ACTIVE_LIST, 0,
				       NVME_CSI_ZNS, buf), 0);
	assert_int_equal(le32toh(((uint32_t *)buf)[0]), f->nsid);
	assert_int_equal(host_identify(&f->h, NVME_IDENTIFY_CNS_CSI_NS_ACTIVE_LIST, 0,
				       NVME_CSI_NVM, buf), 0);
	assert_int_equal(le32toh(((uint32_t *)buf)[0]), 0);
	assert_int_equal(host_identify(&f->h, NVME_IDENTIFY_CNS_COMMAND_SET_STRUCTURE, 0, 0, buf),
			 0);
	assert_int_equal(le64toh(((uint64_t *)buf)[0]), 1u << NVME_CSI_NVM | 1u << NVME_CSI_ZNS);
	/* I/O Command Set Profile: that combination, index 0, and no other */
	uint32_t v = 7;

	assert_int_equal(host_set_feature(&f->h, NVME_FEAT_FID_IOCS_PROFILE, 0, false, NULL), 0);
	assert_int_equal(host_get_feature(&f->h, NVME_FEAT_FID_IOCS_PROFILE, 0, 0, &v), 0);
	assert_int_equal(v, 0);
	assert_int_equal(host_set_feature(&f->h, NVME_FEAT_FID_IOCS_PROFILE, 1, false, NULL),
			 ZST(NVME_SC_IOCS_COMBINATION_REJECTED));
	assert_int_equal(host_set_feature(&f->h, NVME_FEAT_FID_IOCS_PROFILE, 0, true, NULL),
			 ZST(NVME_SC_FEATURE_NOT_SAVEABLE));
}

static uint16_t get_log_csi(struct fx *f, uint8_t lid, uint8_t csi, bool rae, void *buf,
			    uint32_t len)
{
	struct ucmd_nvme_sqe sqe = { .opcode = 0x02, .nsid = f->nsid };
	uint32_t numd = len / 4 - 1;

	sqe.cdw10 = lid | (rae ? 1u << 15 : 0) | (numd & 0xffff) << 16;
	sqe.cdw11 = numd >> 16;
	sqe.cdw14 = (uint32_t)csi << 24;
	host_set_prp(&f->h, &sqe, buf, len);
	return host_cmd(&f->h, 0, &sqe, NULL);
}

static void test_effects(void **state)
{
	struct fx *f = *state;
	struct nvme_cmd_effects_log *e = host_alloc(&f->h, sizeof(*e));

	assert_int_equal(get_log_csi(f, NVME_LOG_LID_CMD_EFFECTS, NVME_CSI_ZNS, false, e,
				     sizeof(*e)), 0);
	assert_true(le32toh(e->iocs[nvme_zns_cmd_append]) & NVME_CMD_EFFECTS_CSUPP);
	assert_true(le32toh(e->iocs[nvme_zns_cmd_mgmt_send]) & NVME_CMD_EFFECTS_LBCC);
	assert_true(le32toh(e->iocs[nvme_zns_cmd_mgmt_recv]) & NVME_CMD_EFFECTS_CSUPP);
	assert_true(le32toh(e->iocs[nvme_cmd_write]) & NVME_CMD_EFFECTS_CSUPP);
	assert_int_equal(get_log_csi(f, NVME_LOG_LID_CMD_EFFECTS, NVME_CSI_NVM, false, e,
				     sizeof(*e)), 0);
	assert_int_equal(le32toh(e->iocs[nvme_zns_cmd_append]), 0);
}

static void test_write_pointer(void **state)
{
	struct fx *f = *state;
	uint8_t *r = host_alloc(&f->h, 8 * BS), *w = host_alloc(&f->h, 8 * BS);

	assert_int_equal(zs(f, 0), NVME_ZNS_ZS_EMPTY);
	assert_int_equal(wp(f, 0), 0);
	/* not at the write pointer */
	assert_int_equal(wr(f, 1, 1), ZST(NVME_SC_ZNS_INVALID_WRITE));
	assert_int_equal(zs(f, 0), NVME_ZNS_ZS_EMPTY);
	fill_pattern(w, 8 * BS, 9);
	assert_int_equal(host_io(&f->h, nvme_cmd_write, f->nsid, 0, 8, w, 8 * BS, NULL, 0), 0);
	assert_int_equal(zs(f, 0), NVME_ZNS_ZS_IMPL_OPEN);
	assert_int_equal(wp(f, 0), 8);
	assert_int_equal(host_io(&f->h, nvme_cmd_read, f->nsid, 0, 8, r, 8 * BS, NULL, 0), 0);
	assert_memory_equal(w, r, 8 * BS);
	/* past the zone capacity, and across into the next zone */
	assert_int_equal(wr(f, 8, ZCAP - 8 + 1), ZST(NVME_SC_ZNS_BOUNDARY_ERROR));
	assert_int_equal(wp(f, 0), 8);
	/* filling it makes it Full, which frees its resources */
	assert_int_equal(wr(f, 8, ZCAP - 8), 0);
	assert_int_equal(zs(f, 0), NVME_ZNS_ZS_FULL);
	assert_int_equal(wp(f, 0), UINT64_MAX);
	assert_int_equal(wr(f, ZCAP, 1), ZST(NVME_SC_ZNS_FULL));
	/* a read across zones is a Zone Boundary Error without RAZB */
	assert_int_equal(host_io(&f->h, nvme_cmd_read, f->nsid, ZSZE - 2, 4, r, 4 * BS, NULL, 0),
			 ZST(NVME_SC_ZNS_BOUNDARY_ERROR));
	/* Write Zeroes is a write too */
	assert_int_equal(host_io(&f->h, nvme_cmd_write_zeroes, f->nsid, ZSZE + 1, 1, NULL, 0,
				 NULL, 0), ZST(NVME_SC_ZNS_INVALID_WRITE));
	assert_int_equal(host_io(&f->h, nvme_cmd_write_zeroes, f->nsid, ZSZE, 4, NULL, 0, NULL, 0),
			 0);
	assert_int_equal(wp(f, 1), ZSZE + 4);
}

static void test_cross_read(void **state)
{
	struct fx *f = *state;
	uint8_t *r = host_alloc(&f->h, 4 * BS);
	uint8_t *buf = host_alloc(&f->h, 4096);

	assert_int_equal(host_io(&f->h, nvme_cmd_read, f->nsid, ZSZE - 2, 4, r, 4 * BS, NULL, 0), 0);
	assert_int_equal(host_identify(&f->h, NVME_IDENTIFY_CNS_CSI_NS, f->nsid, NVME_CSI_ZNS, buf),
			 0);
	assert_int_equal(le16toh(((struct nvme_zns_id_ns *)buf)->ozcs), 1);
}

static void test_append(void **state)
{
	struct fx *f = *state;
	uint8_t *b = host_alloc(&f->h, 32 * BS), *r = host_alloc(&f->h, 4 * BS);
	uint64_t lba = 0;

	fill_pattern(b, 32 * BS, 3);
	assert_int_equal(append(f, 2 * ZSZE, 4, b, &lba), 0);
	assert_int_equal(lba, 2 * ZSZE);
	assert_int_equal(append(f, 2 * ZSZE, 4, b + 4 * BS, &lba), 0);
	assert_int_equal(lba, 2 * ZSZE + 4);
	assert_int_equal(host_io(&f->h, nvme_cmd_read, f->nsid, 2 * ZSZE + 4, 4, r, 4 * BS, NULL,
				 0), 0);
	assert_memory_equal(r, b + 4 * BS, 4 * BS);
	assert_int_equal(zs(f, 2), NVME_ZNS_ZS_IMPL_OPEN);
	/* not a zone start, past the end, over ZASL (16 blocks) */
	assert_int_equal(append(f, 2 * ZSZE + 1, 1, b, NULL), ST_INVALID);
	assert_int_equal(append(f, NR_ZONES * ZSZE, 1, b, NULL), SC(0, 0x80) | DNR);
	assert_int_equal(append(f, 2 * ZSZE, 17, b, NULL), ST_INVALID);
	/* up to the capacity, then one block too many */
	for (unsigned i = 0; i < (ZCAP - 8) / 16; i++)
		assert_int_equal(append(f, 2 * ZSZE, 16, b, NULL), 0);
	assert_int_equal(wp(f, 2), 2 * ZSZE + 8 + (ZCAP - 8) / 16 * 16);
	assert_int_equal(append(f, 2 * ZSZE, ZCAP - 8 - (ZCAP - 8) / 16 * 16 + 1, b, NULL),
			 ZST(NVME_SC_ZNS_BOUNDARY_ERROR));
	assert_int_equal(append(f, 2 * ZSZE, ZCAP - 8 - (ZCAP - 8) / 16 * 16, b, &lba), 0);
	assert_int_equal(zs(f, 2), NVME_ZNS_ZS_FULL);
	assert_int_equal(append(f, 2 * ZSZE, 1, b, NULL), ZST(NVME_SC_ZNS_FULL));
	/* Zone Append means nothing to the NVM Command Set's namespaces */
	f->nsid = 9;
	assert_int_equal(append(f, 0, 1, b, NULL), SC(0, 0x0b) | DNR);
	f->nsid = 1;
}

static void test_state_machine(void **state)
{
	struct fx *f = *state;

	/* explicit open, close, open again, finish, reset */
	assert_int_equal(zms(f, 0, NVME_ZNS_ZSA_OPEN, false, NULL, 0), 0);
	assert_int_equal(zs(f, 0), NVME_ZNS_ZS_EXPL_OPEN);
	assert_int_equal(zms(f, 0, NVME_ZNS_ZSA_CLOSE, false, NULL, 0), 0);
	assert_int_equal(zs(f, 0), NVME_ZNS_ZS_CLOSED);
	assert_int_equal(wr(f, 0, 2), 0);
	assert_int_equal(zs(f, 0), NVME_ZNS_ZS_IMPL_OPEN);
	assert_int_equal(zms(f, 0, NVME_ZNS_ZSA_FINISH, false, NULL, 0), 0);
	assert_int_equal(zs(f, 0), NVME_ZNS_ZS_FULL);
	/* a Full zone can be neither opened nor closed */
	assert_int_equal(zms(f, 0, NVME_ZNS_ZSA_OPEN, false, NULL, 0),
			 ZST(NVME_SC_ZNS_INVAL_TRANSITION));
	assert_int_equal(zms(f, 0, NVME_ZNS_ZSA_CLOSE, false, NULL, 0),
			 ZST(NVME_SC_ZNS_INVAL_TRANSITION));
	assert_int_equal(zms(f, 0, NVME_ZNS_ZSA_RESET, false, NULL, 0), 0);
	assert_int_equal(zs(f, 0), NVME_ZNS_ZS_EMPTY);
	assert_int_equal(wp(f, 0), 0);
	/* Offline only from Read Only */
	assert_int_equal(zms(f, 0, NVME_ZNS_ZSA_OFFLINE, false, NULL, 0),
			 ZST(NVME_SC_ZNS_INVAL_TRANSITION));
	assert_int_equal(ctrl_zns_fail_zone(f->h.ctrl, f->nsid, 5, false), 0);
	assert_int_equal(zs(f, 5), NVME_ZNS_ZS_READ_ONLY);
	assert_int_equal(wr(f, 5 * ZSZE, 1), ZST(NVME_SC_ZNS_READ_ONLY));
	assert_int_equal(zms(f, 5 * ZSZE, NVME_ZNS_ZSA_RESET, false, NULL, 0),
			 ZST(NVME_SC_ZNS_INVAL_TRANSITION));
	assert_int_equal(zms(f, 0, NVME_ZNS_ZSA_OFFLINE, true, NULL, 0), 0);
	assert_int_equal(zs(f, 5), NVME_ZNS_ZS_OFFLINE);
	assert_int_equal(wr(f, 5 * ZSZE, 1), ZST(NVME_SC_ZNS_OFFLINE));
	/* the reset of every zone leaves the offline one alone */
	assert_int_equal(wr(f, ZSZE, 1), 0);
	assert_int_equal(zms(f, 0, NVME_ZNS_ZSA_RESET, true, NULL, 0), 0);
	assert_int_equal(zs(f, 1), NVME_ZNS_ZS_EMPTY);
	assert_int_equal(zs(f, 5), NVME_ZNS_ZS_OFFLINE);
}

static void test_limits(void **state)
{
	struct fx *f = *state;

	/* max_open 2, max_active 3: two explicit opens hold both open resources */
	assert_int_equal(zms(f, 0, NVME_ZNS_ZSA_OPEN, false, NULL, 0), 0);
	assert_int_equal(zms(f, ZSZE, NVME_ZNS_ZSA_OPEN, false, NULL, 0), 0);
	assert_int_equal(zms(f, 2 * ZSZE, NVME_ZNS_ZSA_OPEN, false, NULL, 0),
			 ZST(NVME_SC_ZNS_TOO_MANY_OPENS));
	assert_int_equal(wr(f, 2 * ZSZE, 1), ZST(NVME_SC_ZNS_TOO_MANY_OPENS));
	assert_int_equal(zs(f, 2), NVME_ZNS_ZS_EMPTY);
	/* a closed zone keeps an active resource: the third active one */
	assert_int_equal(zms(f, ZSZE, NVME_ZNS_ZSA_CLOSE, false, NULL, 0), 0);
	assert_int_equal(wr(f, 2 * ZSZE, 1), 0);
	assert_int_equal(zs(f, 2), NVME_ZNS_ZS_IMPL_OPEN);
	assert_int_equal(wr(f, 3 * ZSZE, 1), ZST(NVME_SC_ZNS_TOO_MANY_ACTIVE));
	assert_int_equal(zms(f, 3 * ZSZE, NVME_ZNS_ZSA_OPEN, false, NULL, 0),
			 ZST(NVME_SC_ZNS_TOO_MANY_ACTIVE));
	/* reopening the closed zone closes the implicitly opened one for room */
	assert_int_equal(zms(f, ZSZE, NVME_ZNS_ZSA_OPEN, false, NULL, 0), 0);
	assert_int_equal(zs(f, 1), NVME_ZNS_ZS_EXPL_OPEN);
	assert_int_equal(zs(f, 2), NVME_ZNS_ZS_CLOSED);
	/* select-all open of 1 closed zone with 0 open resources left: nothing changes */
	assert_int_equal(zms(f, 0, NVME_ZNS_ZSA_OPEN, true, NULL, 0),
			 ZST(NVME_SC_ZNS_TOO_MANY_OPENS));
	assert_int_equal(zs(f, 2), NVME_ZNS_ZS_CLOSED);
	/* finishing frees both kinds; then the 4th zone may open */
	assert_int_equal(zms(f, 0, NVME_ZNS_ZSA_FINISH, true, NULL, 0), 0);
	assert_int_equal(zs(f, 0), NVME_ZNS_ZS_FULL);
	assert_int_equal(zs(f, 2), NVME_ZNS_ZS_FULL);
	assert_int_equal(wr(f, 3 * ZSZE, 1), 0);
}

/*
 * Select-all open needing the room of two implicitly opened zones: opens
 * the zone that was Closed and closes the implicitly opened ones, and opens
 * none of those it closed (a zone-by-zone loop did, then failed with Too
 * Many Open Zones with three zones already changed).
 */
static void test_open_all_makes_room_once(void **state)
{
	struct fx *f = *state;

	assert_int_equal(wr(f, 0, 1), 0);
	assert_int_equal(wr(f, ZSZE, 1), 0);
	assert_int_equal(zms(f, 0, NVME_ZNS_ZSA_CLOSE, false, NULL, 0), 0);
	assert_int_equal(wr(f, 2 * ZSZE, 1), 0);
	/* zone 0 Closed, zones 1 and 2 implicitly open: max_open 2, max_active 3 */
	assert_int_equal(zms(f, 0, NVME_ZNS_ZSA_OPEN, true, NULL, 0), 0);
	assert_int_equal(zs(f, 0), NVME_ZNS_ZS_EXPL_OPEN);
	assert_int_equal(zs(f, 1), NVME_ZNS_ZS_CLOSED);	/* the oldest implicit one */
	assert_int_equal(zs(f, 2), NVME_ZNS_ZS_IMPL_OPEN);
	/* again: zone 1 opens, zone 2 (the only implicit one) closes for it */
	assert_int_equal(zms(f, 0, NVME_ZNS_ZSA_OPEN, true, NULL, 0), 0);
	assert_int_equal(zs(f, 1), NVME_ZNS_ZS_EXPL_OPEN);
	assert_int_equal(zs(f, 2), NVME_ZNS_ZS_CLOSED);
	/* now both open resources are explicit: nothing may change */
	assert_int_equal(zms(f, 0, NVME_ZNS_ZSA_OPEN, true, NULL, 0),
			 ZST(NVME_SC_ZNS_TOO_MANY_OPENS));
	assert_int_equal(zs(f, 0), NVME_ZNS_ZS_EXPL_OPEN);
	assert_int_equal(zs(f, 1), NVME_ZNS_ZS_EXPL_OPEN);
	assert_int_equal(zs(f, 2), NVME_ZNS_ZS_CLOSED);
	assert_int_equal(wp(f, 2), 2 * ZSZE + 1);
}

static void test_report(void **state)
{
	struct fx *f = *state;
	uint32_t len = 64 + 64 * NR_ZONES;
	struct nvme_zone_report *r = host_alloc(&f->h, 4096);
	uint8_t *ext = host_alloc(&f->h, 64);

	assert_int_equal(wr(f, ZSZE, 3), 0);
	assert_int_equal(zms(f, 4 * ZSZE, NVME_ZNS_ZSA_FINISH, false, NULL, 0), 0);
	/* from the middle of zone 1: zones 1..9 */
	assert_int_equal(zmr(f, ZSZE + 5, 0, 0, false, r, len), 0);
	assert_int_equal(le64toh(r->nr_zones), NR_ZONES - 1);
	assert_int_equal(le64toh(r->entries[0].zslba), ZSZE);
	assert_int_equal(le64toh(r->entries[0].wp), ZSZE + 3);
	assert_int_equal(le64toh(r->entries[0].zcap), ZCAP);
	assert_int_equal(r->entries[0].zt, NVME_ZONE_TYPE_SEQWRITE_REQ);
	assert_int_equal(r->entries[0].zs >> 4, NVME_ZNS_ZS_IMPL_OPEN);
	/* the filter; a buffer for two entries: all counted unless partial */
	assert_int_equal(zmr(f, 0, 0, NVME_ZNS_ZRAS_REPORT_FULL, false, r, len), 0);
	assert_int_equal(le64toh(r->nr_zones), 1);
	assert_int_equal(le64toh(r->entries[0].zslba), 4 * ZSZE);
	assert_int_equal(zmr(f, 0, 0, NVME_ZNS_ZRAS_REPORT_EMPTY, false, r, 64 + 2 * 64), 0);
	assert_int_equal(le64toh(r->nr_zones), NR_ZONES - 2);
	assert_int_equal(zmr(f, 0, 0, NVME_ZNS_ZRAS_REPORT_EMPTY, true, r, 64 + 2 * 64), 0);
	assert_int_equal(le64toh(r->nr_zones), 2);
	/* the extension: set on an Empty zone, which it makes Closed */
	memset(ext, 0xa5, 64);
	assert_int_equal(zms(f, 6 * ZSZE, NVME_ZNS_ZSA_SET_DESC_EXT, false, ext, 64), 0);
	assert_int_equal(zms(f, ZSZE, NVME_ZNS_ZSA_SET_DESC_EXT, false, ext, 64),
			 ZST(NVME_SC_ZNS_INVAL_TRANSITION));
	assert_int_equal(zmr(f, 6 * ZSZE, 1, 0, true, r, 64 + 128), 0);
	assert_int_equal(le64toh(r->nr_zones), 1);
	assert_int_equal(r->entries[0].zs >> 4, NVME_ZNS_ZS_CLOSED);
	assert_true(r->entries[0].za & NVME_ZNS_ZA_ZDEV);
	assert_memory_equal((uint8_t *)r + 64 + 64, ext, 64);
	/* bad input */
	assert_int_equal(zmr(f, 0, 2, 0, false, r, len), ST_INVALID);
	assert_int_equal(zmr(f, 0, 0, 8, false, r, len), ST_INVALID);
	assert_int_equal(zmr(f, 0, 0, 0, false, r, 32), ST_INVALID);
	assert_int_equal(zmr(f, NR_ZONES * ZSZE, 0, 0, false, r, len), SC(0, 0x80) | DNR);
}

static void test_report_mdts(void **state)
{
	struct fx *f = *state;
	struct ucmd_nvme_sqe sqe = { .opcode = nvme_zns_cmd_mgmt_recv, .nsid = f->nsid };
	uint8_t *r = host_alloc(&f->h, 4096);

	/* a report buffer past MDTS fails before anything is mapped */
	sqe.cdw12 = 0xffffffffu;
	host_set_prp(&f->h, &sqe, r, 4096);
	assert_int_equal(host_cmd(&f->h, 1, &sqe, NULL), ST_INVALID);
	sqe.cdw12 = 8192 / 4;
	assert_int_equal(host_cmd(&f->h, 1, &sqe, NULL), ST_INVALID);
	sqe.cdw12 = 4096 / 4 - 1;
	assert_int_equal(host_cmd(&f->h, 1, &sqe, NULL), 0);
	assert_int_equal(le64toh(((struct nvme_zone_report *)r)->nr_zones), NR_ZONES);
}

/* Every malformed command: its status, and the zones exactly as before */
static void test_bad_input_changes_nothing(void **state)
{
	struct fx *f = *state;
	uint32_t len = 64 + 64 * NR_ZONES;
	uint8_t *before = host_alloc(&f->h, len), *after = host_alloc(&f->h, len);
	uint8_t *b = host_alloc(&f->h, 32 * BS);

	assert_int_equal(wr(f, 0, 5), 0);
	assert_int_equal(zms(f, 0, NVME_ZNS_ZSA_OPEN, false, NULL, 0), 0);
	assert_int_equal(zms(f, ZSZE, NVME_ZNS_ZSA_OPEN, false, NULL, 0), 0);
	assert_int_equal(zmr(f, 0, 0, 0, false, before, len), 0);
	assert_int_equal(zms(f, 1, NVME_ZNS_ZSA_RESET, false, NULL, 0), ST_INVALID);
	assert_int_equal(zms(f, ZSZE / 2, NVME_ZNS_ZSA_FINISH, false, NULL, 0), ST_INVALID);
	assert_int_equal(zms(f, NR_ZONES * ZSZE, NVME_ZNS_ZSA_OPEN, false, NULL, 0),
			 SC(0, 0x80) | DNR);
	assert_int_equal(zms(f, 0, 0x7, false, NULL, 0), ST_INVALID);
	assert_int_equal(zms(f, 0, 0, true, NULL, 0), ST_INVALID);
	assert_int_equal(zms(f, 0, NVME_ZNS_ZSA_ZRWA_FLUSH, false, NULL, 0), ST_INVALID);
	assert_int_equal(zms(f, 0, NVME_ZNS_ZSA_SET_DESC_EXT, true, b, 64), ST_INVALID);
	assert_int_equal(zms(f, 2 * ZSZE, NVME_ZNS_ZSA_OPEN, false, NULL, 0),
			 ZST(NVME_SC_ZNS_TOO_MANY_OPENS));
	assert_int_equal(append(f, 5, 1, b, NULL), ST_INVALID);
	assert_int_equal(append(f, 0, ZCAP, b, NULL), ST_INVALID);	/* over ZASL */
	assert_int_equal(wr(f, 4, 1), ZST(NVME_SC_ZNS_INVALID_WRITE));
	assert_int_equal(wr(f, 5, ZSZE), ZST(NVME_SC_ZNS_BOUNDARY_ERROR));
	assert_int_equal(zmr(f, 0, 0, 0, false, after, len), 0);
	assert_memory_equal(before, after, len);
}

static void test_changed_zones(void **state)
{
	struct fx *f = *state;
	struct nvme_zns_changed_zone_log *l = host_alloc(&f->h, sizeof(*l));
	struct ucmd_nvme_sqe aer = { .opcode = nvme_admin_async_event };
	struct ucmd_nvme_cqe cqe;
	uint16_t cid;

	assert_int_equal(host_set_feature(&f->h, NVME_FEAT_FID_ASYNC_EVENT, NVME_CTRL_OAES_ZD,
					  false, NULL), 0);
	cid = host_push(&f->h, 0, &aer);
	host_ring(&f->h, 0);
	assert_int_equal(ctrl_zns_fail_zone(f->h.ctrl, f->nsid, 3, true), 0);
	assert_true(host_wait(&f->h, 0, &cqe));
	assert_int_equal(cqe.cid, cid);
	assert_int_equal(cqe.dw0 & 7, NVME_AER_NOTICE);
	assert_int_equal((cqe.dw0 >> 8) & 0xff, 0xef);
	assert_int_equal((cqe.dw0 >> 16) & 0xff, NVME_LOG_LID_ZNS_CHANGED_ZONES);
	host_ack(&f->h, 0);
	/* CSI 02h only: for the NVM Command Set it is an unsupported log */
	assert_int_equal(get_log_csi(f, NVME_LOG_LID_ZNS_CHANGED_ZONES, 0, true, l, sizeof(*l)),
			 SC(1, NVME_SC_INVALID_LOG_PAGE) | DNR);
	assert_int_equal(get_log_csi(f, NVME_LOG_LID_ZNS_CHANGED_ZONES, NVME_CSI_ZNS, false, l,
				     sizeof(*l)), 0);
	assert_int_equal(le16toh(l->nrzid), 1);
	assert_int_equal(le64toh(l->zid[0]), 3 * ZSZE);
	/* read: cleared */
	assert_int_equal(get_log_csi(f, NVME_LOG_LID_ZNS_CHANGED_ZONES, NVME_CSI_ZNS, false, l,
				     sizeof(*l)), 0);
	assert_int_equal(le16toh(l->nrzid), 0);
	assert_int_equal(zs(f, 3), NVME_ZNS_ZS_OFFLINE);
}

/* Namespace Management creates a zoned namespace with CSI 02h (QEMU's 128 MiB zones) */
static void test_ns_create_csi(void **state)
{
	struct fx *f = *state;
	struct ucmd_nvme_sqe sqe = { .opcode = nvme_admin_ns_mgmt, .cdw11 = 2u << 24 };
	struct nvme_id_ns *id = host_alloc(&f->h, 4096);
	struct nvme_zns_id_ns *z = host_alloc(&f->h, 4096);
	struct ucmd_nvme_cqe cqe;

	id->nsze = id->ncap = htole64(3 * 262144 + 5);
	host_set_prp(&f->h, &sqe, id, 4096);
	assert_int_equal(host_cmd(&f->h, 0, &sqe, &cqe), 0);
	assert_int_equal(cqe.dw0, 2);
	assert_int_equal(host_identify(&f->h, NVME_IDENTIFY_CNS_ALLOCATED_NS, 2, 0, id), 0);
	assert_int_equal(le64toh(id->nsze), 3 * 262144);
	/* attached, it answers CNS 05h for CSI 02h */
	{
		struct ucmd_nvme_sqe at = { .opcode = nvme_admin_ns_attach, .nsid = 2 };
		struct nvme_ctrl_list *cl = host_alloc(&f->h, 4096);

		cl->num = htole16(1);
		cl->identifier[0] = htole16(f->h.params.cntlid ? f->h.params.cntlid : 1);
		host_set_prp(&f->h, &at, cl, 4096);
		assert_int_equal(host_cmd(&f->h, 0, &at, NULL), 0);
	}
	assert_int_equal(host_identify(&f->h, NVME_IDENTIFY_CNS_CSI_NS, 2, NVME_CSI_ZNS, z), 0);
	assert_int_equal(le64toh(z->lbafe[0].zsze), 262144);
	/* smaller than one zone: Invalid Field; another command set: not supported */
	id->nsze = id->ncap = htole64(1000);
	host_set_prp(&f->h, &sqe, id, 4096);
	assert_int_equal(host_cmd(&f->h, 0, &sqe, NULL), ST_INVALID);
	sqe.cdw11 = 1u << 24;
	assert_int_equal(host_cmd(&f->h, 0, &sqe, NULL), SC(1, NVME_SC_IOCS_NOT_SUPPORTED) | DNR);
}

/* A Controller Level Reset closes the open zones, which keep their write pointers */
static void test_controller_reset(void **state)
{
	struct fx *f = *state;

	assert_int_equal(wr(f, 0, 3), 0);
	assert_int_equal(zms(f, ZSZE, NVME_ZNS_ZSA_OPEN, false, NULL, 0), 0);
	assert_int_equal(zs(f, 0), NVME_ZNS_ZS_IMPL_OPEN);
	host_disable(&f->h);
	assert_int_equal(host_enable(&f->h, HOST_ADMIN_QD), 0);
	assert_int_equal(host_create_io_queue(&f->h, 1, 64, true, 1), 0);
	assert_int_equal(zs(f, 0), NVME_ZNS_ZS_CLOSED);
	assert_int_equal(wp(f, 0), 3);
	assert_int_equal(zs(f, 1), NVME_ZNS_ZS_CLOSED);
	/* still three active zones at most: two are Closed, one more may open */
	assert_int_equal(wr(f, 2 * ZSZE, 1), 0);
	assert_int_equal(wr(f, 3 * ZSZE, 1), ZST(NVME_SC_ZNS_TOO_MANY_ACTIVE));
	assert_int_equal(wr(f, 3, 1), 0);
	assert_int_equal(wp(f, 0), 4);
}

/* Format and Sanitize erase the zones: Empty, the failed one Offline */
static void test_format_sanitize(void **state)
{
	struct fx *f = *state;
	struct ucmd_nvme_sqe fmt = { .opcode = nvme_admin_format_nvm, .nsid = f->nsid };
	struct ucmd_nvme_sqe san = { .opcode = nvme_admin_sanitize_nvm,
				     .cdw10 = NVME_SANITIZE_SANACT_START_BLOCK_ERASE };
	struct nvme_sanitize_log_page *l = host_alloc(&f->h, sizeof(*l));
	unsigned i;

	assert_int_equal(wr(f, 0, 3), 0);
	assert_int_equal(zms(f, ZSZE, NVME_ZNS_ZSA_FINISH, false, NULL, 0), 0);
	assert_int_equal(ctrl_zns_fail_zone(f->h.ctrl, f->nsid, 2, false), 0);
	assert_int_equal(host_cmd(&f->h, 0, &fmt, NULL), 0);
	assert_int_equal(zs(f, 0), NVME_ZNS_ZS_EMPTY);
	assert_int_equal(wp(f, 0), 0);
	assert_int_equal(zs(f, 1), NVME_ZNS_ZS_EMPTY);
	assert_int_equal(zs(f, 2), NVME_ZNS_ZS_OFFLINE);
	/* 4 KiB blocks: 100 blocks of 512 bytes are no whole number of them */
	fmt.cdw10 = 4;
	assert_int_equal(host_cmd(&f->h, 0, &fmt, NULL), SC(1, NVME_SC_INVALID_FORMAT) | DNR);
	/* protection information (type 1, 8 bytes of metadata): not on a zoned namespace */
	fmt.cdw10 = 1 | NVME_NS_DPS_PI_TYPE1 << 5;
	assert_int_equal(host_cmd(&f->h, 0, &fmt, NULL), SC(1, NVME_SC_INVALID_FORMAT) | DNR);
	fmt.cdw10 = 1;	/* the same format without it is fine */
	assert_int_equal(host_cmd(&f->h, 0, &fmt, NULL), 0);
	fmt.cdw10 = 0;
	assert_int_equal(host_cmd(&f->h, 0, &fmt, NULL), 0);
	assert_int_equal(wr(f, 3 * ZSZE, 5), 0);
	assert_int_equal(host_cmd(&f->h, 0, &san, NULL), 0);
	for (i = 0; i < 1000; i++) {
		assert_int_equal(host_get_log(&f->h, NVME_LOG_LID_SANITIZE, 0, l, sizeof(*l)), 0);
		if ((l->sstat & 7) != NVME_SANITIZE_SSTAT_STATUS_IN_PROGESS)
			break;
	}
	assert_int_equal(l->sstat & 7, NVME_SANITIZE_SSTAT_STATUS_COMPLETE_SUCCESS);
	assert_int_equal(zs(f, 3), NVME_ZNS_ZS_EMPTY);
	assert_int_equal(wp(f, 3), 3 * ZSZE);
	assert_int_equal(zs(f, 2), NVME_ZNS_ZS_OFFLINE);
	/* and the zones work: written from their start */
	assert_int_equal(wr(f, 3 * ZSZE, 1), 0);
}

/* A controller directory: write pointers and states come back after a restart */
static void test_persist(void **state)
{
	struct fx *f = *state;
	struct ucmd_ctrl_params p;
	struct ucmd_ns_params nsp;
	uint8_t *b;
	uint64_t lba;

	host_close(&f->h);
	memset(&f->h, 0, sizeof(f->h));
	strcpy(f->dir, "/tmp/ucmd-zns-XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	host_default_params(&p);
	p.dir = f->dir;
	zparams(&nsp, false);
	nsp.store = UCMD_NS_STORE_FILE;
	f->nsid = host_open_ns(&f->h, &p, &nsp);
	assert_int_not_equal(f->nsid, 0);
	b = host_alloc(&f->h, 16 * BS);
	assert_int_equal(append(f, 0, 7, b, &lba), 0);
	assert_int_equal(append(f, 0, 7, b, &lba), 0);
	assert_int_equal(lba, 7);
	assert_int_equal(zms(f, 3 * ZSZE, NVME_ZNS_ZSA_FINISH, false, NULL, 0), 0);
	assert_int_equal(wr(f, 4 * ZSZE, 2), 0);
	assert_int_equal(zms(f, 4 * ZSZE, NVME_ZNS_ZSA_CLOSE, false, NULL, 0), 0);
	host_close(&f->h);
	memset(&f->h, 0, sizeof(f->h));
	assert_int_equal(host_open(&f->h, &p), 0);
	assert_int_equal(host_create_io_queue(&f->h, 1, 64, true, 1), 0);
	/* the implicitly opened zone comes back Closed, at the same write pointer */
	assert_int_equal(zs(f, 0), NVME_ZNS_ZS_CLOSED);
	assert_int_equal(wp(f, 0), 14);
	assert_int_equal(zs(f, 3), NVME_ZNS_ZS_FULL);
	assert_int_equal(zs(f, 4), NVME_ZNS_ZS_CLOSED);
	assert_int_equal(wp(f, 4), 4 * ZSZE + 2);
	b = host_alloc(&f->h, 16 * BS);
	assert_int_equal(append(f, 0, 1, b, &lba), 0);
	assert_int_equal(lba, 14);
	/* and the resources were counted again: zones 0 and 4 are active, 1 more fits */
	assert_int_equal(wr(f, 5 * ZSZE, 1), 0);
	assert_int_equal(wr(f, 6 * ZSZE, 1), ZST(NVME_SC_ZNS_TOO_MANY_ACTIVE));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_identify, setup, teardown),
		cmocka_unit_test_setup_teardown(test_effects, setup, teardown),
		cmocka_unit_test_setup_teardown(test_write_pointer, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cross_read, setup_cross, teardown),
		cmocka_unit_test_setup_teardown(test_append, setup, teardown),
		cmocka_unit_test_setup_teardown(test_state_machine, setup, teardown),
		cmocka_unit_test_setup_teardown(test_limits, setup, teardown),
		cmocka_unit_test_setup_teardown(test_open_all_makes_room_once, setup, teardown),
		cmocka_unit_test_setup_teardown(test_report, setup, teardown),
		cmocka_unit_test_setup_teardown(test_report_mdts, setup_mdts, teardown),
		cmocka_unit_test_setup_teardown(test_bad_input_changes_nothing, setup, teardown),
		cmocka_unit_test_setup_teardown(test_changed_zones, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ns_create_csi, setup, teardown),
		cmocka_unit_test_setup_teardown(test_controller_reset, setup, teardown),
		cmocka_unit_test_setup_teardown(test_format_sanitize, setup, teardown),
		cmocka_unit_test_setup_teardown(test_persist, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
