/* SPDX-License-Identifier: MIT */
/*
 * Flexible Data Placement through the controller's queues: Identify
 * (CTRATT FDPS, ENDGID, the endurance group list), logs 20h-23h, writes
 * with a placement identifier (a bad one fails and writes nothing), I/O
 * Management Receive and Send, Features 1Dh and 1Eh and their rules, the
 * media model's write amplification (hot and cold data through one handle
 * against two, sequential overwrites), and everything kept across a restart.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>
#include <nvme/types.h>

#include "host_sim.h"
#include "nvme/ctrl/fdp.h"

#define SC(sct, sc)	((sct) << 8 | (sc))
#define DNR		0x4000
#define ST_INVALID	(SC(0, 0x02) | DNR)
#define ST_SEQ		(SC(0, 0x0c) | DNR)
#define ST_FDP_DIS	(SC(0, 0x29) | DNR)
#define BS		4096
#define NSZE		4096u	/* 16 MiB */
#define RU		(64u * 1024)	/* 16 blocks */
#define PASSES		8

struct fx {
	struct host h;
	uint32_t nsid;
	char dir[64];
	uint8_t *buf;
};

static void params(struct ucmd_ctrl_params *p, struct ucmd_ns_params *nsp, const char *dir)
{
	host_default_params(p);
	p->dir = dir;
	p->fdp.enable = true;
	p->fdp.ru_size = RU;
	memset(nsp, 0, sizeof(*nsp));
	nsp->nsze = NSZE;
	nsp->lbaf = 4;
	nsp->store = dir ? UCMD_NS_STORE_FILE : UCMD_NS_STORE_RAM;
	nsp->attach = true;
}

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	struct ucmd_ctrl_params p;
	struct ucmd_ns_params nsp;

	params(&p, &nsp, NULL);
	f->nsid = host_open_ns(&f->h, &p, &nsp);
	assert_int_not_equal(f->nsid, 0);
	f->buf = host_alloc(&f->h, 8 * BS);
	*state = f;
	return 0;
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

static uint16_t write_pid(struct fx *f, uint8_t opcode, uint64_t lba, uint32_t nlb, uint8_t dtype,
			  uint16_t pid)
{
	struct ucmd_nvme_sqe sqe = { .opcode = opcode, .nsid = f->nsid };

	sqe.cdw10 = (uint32_t)lba;
	sqe.cdw11 = (uint32_t)(lba >> 32);
	sqe.cdw12 = (nlb - 1) | (uint32_t)dtype << 20;
	sqe.cdw13 = (uint32_t)pid << 16;
	if (opcode == nvme_cmd_write)
		host_set_prp(&f->h, &sqe, f->buf, (size_t)nlb * BS);
	return host_cmd(&f->h, 1, &sqe, NULL);
}

static uint16_t get_log(struct fx *f, uint8_t lid, uint8_t lsp, uint16_t lsi, void *buf,
			uint32_t len, uint64_t off)
{
	struct ucmd_nvme_sqe sqe = { .opcode = 0x02 };
	uint32_t numd = len / 4 - 1;

	sqe.cdw10 = lid | (uint32_t)lsp << 8 | (numd & 0xffff) << 16;
	sqe.cdw11 = numd >> 16 | (uint32_t)lsi << 16;
	sqe.cdw12 = (uint32_t)off;
	sqe.cdw13 = (uint32_t)(off >> 32);
	host_set_prp(&f->h, &sqe, buf, len);
	return host_cmd(&f->h, 0, &sqe, NULL);
}

static void stats(struct fx *f, uint64_t *hbmw, uint64_t *mbmw, uint64_t *mbe)
{
	struct nvme_fdp_stats_log *s = host_alloc(&f->h, 4096);

	assert_int_equal(get_log(f, NVME_LOG_LID_FDP_STATS, 0, 1, s, sizeof(*s), 0), 0);
	memcpy(hbmw, s->hbmw, 8);
	memcpy(mbmw, s->mbmw, 8);
	memcpy(mbe, s->mbe, 8);
}

static void test_identify(void **state)
{
	struct fx *f = *state;
	struct nvme_id_ctrl *id = host_alloc(&f->h, 4096);
	struct nvme_id_ns *ns = host_alloc(&f->h, 4096);
	struct nvme_id_endurance_group_list *l = host_alloc(&f->h, 4096);

	assert_int_equal(host_identify(&f->h, NVME_IDENTIFY_CNS_CTRL, 0, 0, id), 0);
	assert_true(le32toh(id->ctratt) & NVME_CTRL_CTRATT_FDPS);
	assert_int_equal(le16toh(id->endgidmax), 1);
	assert_int_equal(host_identify(&f->h, NVME_IDENTIFY_CNS_NS, f->nsid, 0, ns), 0);
	assert_int_equal(le16toh(ns->endgid), 1);
	assert_int_equal(host_identify(&f->h, NVME_IDENTIFY_CNS_ENDURANCE_GROUP_ID, 0, 0, l), 0);
	assert_int_equal(le16toh(l->num), 1);
	assert_int_equal(le16toh(l->identifier[0]), 1);
}

static void test_configs_log(void **state)
{
	struct fx *f = *state;
	uint8_t *b = host_alloc(&f->h, 4096);
	struct nvme_fdp_config_log *l = (void *)b;
	struct nvme_fdp_config_desc *d = l->configs;
	uint32_t *lids = host_alloc(&f->h, 1024);

	assert_int_equal(get_log(f, NVME_LOG_LID_FDP_CONFIGS, 0, 1, b, 4096, 0), 0);
	assert_int_equal(le16toh(l->n), 0);
	assert_int_equal(le32toh(l->size), 16 + 64 + 8 * 4);
	assert_int_equal(le16toh(d->size), 64 + 8 * 4);
	assert_true(d->fdpa & 0x80);
	assert_int_equal(le16toh(d->nruh), UCMD_FDP_DFLT_RUH);
	assert_int_equal(le32toh(d->nrg), 1);
	assert_int_equal(le64toh(d->runs), RU);
	assert_int_equal(d->ruhs[0].ruht, NVME_FDP_RUHT_PERSISTENTLY_ISOLATED);
	/* another endurance group, an offset past the end: Invalid Field */
	assert_int_equal(get_log(f, NVME_LOG_LID_FDP_CONFIGS, 0, 2, b, 4096, 0), ST_INVALID);
	assert_int_equal(get_log(f, NVME_LOG_LID_FDP_CONFIGS, 0, 1, b, 4096, 4096), ST_INVALID);
	/* a window: the same bytes from offset 16 */
	assert_int_equal(get_log(f, NVME_LOG_LID_FDP_CONFIGS, 0, 1, b, 8, 16), 0);
	assert_int_equal(le16toh(((struct nvme_fdp_config_desc *)b)->size), 64 + 8 * 4);
	assert_int_equal(host_get_log(&f->h, 0, 0, lids, 1024), 0);
	for (unsigned lid = 0x20; lid <= 0x23; lid++)
		assert_int_equal(le32toh(lids[lid]) & 1, 1);
}

static void test_placement(void **state)
{
	struct fx *f = *state;
	uint8_t *rd = host_alloc(&f->h, BS);
	uint64_t h0, m0, e0, h1, m1, e1;

	stats(f, &h0, &m0, &e0);
	fill_pattern(f->buf, BS, 7);
	assert_int_equal(write_pid(f, nvme_cmd_write, 10, 1, 2, 3), 0);
	/* handle 8 of 8, and a reclaim group that does not exist: nothing written */
	fill_pattern(f->buf, BS, 8);
	assert_int_equal(write_pid(f, nvme_cmd_write, 10, 1, 2, 8), ST_INVALID);
	assert_int_equal(write_pid(f, nvme_cmd_write, 10, 1, 2, 0x8000), ST_INVALID);
	assert_int_equal(write_pid(f, nvme_cmd_write_zeroes, 10, 1, 2, 9), ST_INVALID);
	assert_int_equal(host_io(&f->h, nvme_cmd_read, f->nsid, 10, 1, rd, BS, NULL, 0), 0);
	fill_pattern(f->buf, BS, 7);
	assert_memory_equal(rd, f->buf, BS);
	stats(f, &h1, &m1, &e1);
	assert_int_equal(h1 - h0, BS);
	assert_int_equal(m1 - m0, BS);
}

/* Write Zeroes is a host write in log 22h; deallocating is not; zeroes take no media */
static void test_write_zeroes_stats(void **state)
{
	struct fx *f = *state;
	struct ucmd_nvme_sqe sqe = { .opcode = nvme_cmd_write_zeroes, .nsid = f->nsid };
	uint64_t h0, m0, e0, h1, m1, e1;

	assert_int_equal(write_pid(f, nvme_cmd_write, 16, 8, 2, 1), 0);
	stats(f, &h0, &m0, &e0);
	assert_int_equal(write_pid(f, nvme_cmd_write_zeroes, 16, 4, 2, 1), 0);
	stats(f, &h1, &m1, &e1);
	assert_int_equal(h1 - h0, 4 * BS);
	assert_int_equal(m1, m0);
	/* Deallocate set: the blocks are deallocated, nothing is written */
	sqe.cdw10 = 20;
	sqe.cdw12 = 3 | 1u << 25;
	assert_int_equal(host_cmd(&f->h, 1, &sqe, NULL), 0);
	stats(f, &h0, &m0, &e0);
	assert_int_equal(h0, h1);
	assert_int_equal(m0, m1);
}

/* Namespace Management Create with NPHNDLS (offset 392) and PHNDL (512) */
static uint16_t create_ns(struct fx *f, uint16_t n, const uint16_t *ph, uint32_t *nsid)
{
	uint8_t *d = host_alloc(&f->h, 4096);
	struct nvme_id_ns *id = (void *)d;
	struct ucmd_nvme_sqe sqe = { .opcode = nvme_admin_ns_mgmt };
	struct ucmd_nvme_cqe cqe = { 0 };
	uint16_t st;

	memset(d, 0, 4096);
	id->nsze = id->ncap = htole64(NSZE);
	id->flbas = 4;
	memcpy(d + 392, &n, 2);
	memcpy(d + 512, ph, 2u * n);
	host_set_prp(&f->h, &sqe, d, 4096);
	st = host_cmd(&f->h, 0, &sqe, &cqe);
	*nsid = cqe.dw0;
	return st;
}

static void attach_ns(struct fx *f, uint32_t nsid)
{
	struct nvme_id_ctrl *id = host_alloc(&f->h, 4096);
	struct nvme_ctrl_list *cl = host_alloc(&f->h, 4096);
	struct ucmd_nvme_sqe sqe = { .opcode = nvme_admin_ns_attach, .nsid = nsid };

	assert_int_equal(host_identify(&f->h, NVME_IDENTIFY_CNS_CTRL, 0, 0, id), 0);
	cl->num = htole16(1);
	cl->identifier[0] = id->cntlid;
	host_set_prp(&f->h, &sqe, cl, 4096);
	assert_int_equal(host_cmd(&f->h, 0, &sqe, NULL), 0);
}

static void ruh_status(struct fx *f, uint32_t nsid, struct nvme_fdp_ruh_status *s)
{
	struct ucmd_nvme_sqe sqe = { .opcode = nvme_cmd_io_mgmt_recv, .nsid = nsid,
		.cdw10 = 1, .cdw11 = 4096 / 4 - 1 };

	host_set_prp(&f->h, &sqe, s, 4096);
	assert_int_equal(host_cmd(&f->h, 1, &sqe, NULL), 0);
}

static void test_ns_phndl(void **state)
{
	struct fx *f = *state;
	struct nvme_fdp_ruh_status *s = host_alloc(&f->h, 4096);
	const uint16_t bad_dup[] = { 3, 3 }, bad_range[] = { 1, 8 }, good[] = { 5, 2 };
	uint16_t nine[9] = { 0, 1, 2, 3, 4, 5, 6, 7, 0 };
	uint32_t nsid = 0, ns1 = f->nsid;

	/* a bad list is Invalid Placement Handle List and creates nothing */
	assert_int_equal(create_ns(f, 2, bad_dup, &nsid), SC(1, 0x2a) | DNR);
	assert_int_equal(create_ns(f, 2, bad_range, &nsid), SC(1, 0x2a) | DNR);
	assert_int_equal(create_ns(f, 9, nine, &nsid), SC(1, 0x2a) | DNR);
	assert_int_equal(create_ns(f, 2, good, &nsid), 0);
	assert_int_equal(nsid, 2);	/* the first free identifier: nothing took it */
	attach_ns(f, nsid);

	/* its RUH status lists its two handles, placement handles 0 and 1 */
	ruh_status(f, nsid, s);
	assert_int_equal(le16toh(s->nruhsd), 2);
	assert_int_equal(le16toh(s->ruhss[0].pid), 0);
	assert_int_equal(le16toh(s->ruhss[0].ruhid), 5);
	assert_int_equal(le16toh(s->ruhss[1].pid), 1);
	assert_int_equal(le16toh(s->ruhss[1].ruhid), 2);
	/* placement handle 1 writes through RUH 2; handle 2 is not in the list */
	f->nsid = nsid;
	assert_int_equal(write_pid(f, nvme_cmd_write, 0, 3, 2, 1), 0);
	assert_int_equal(write_pid(f, nvme_cmd_write, 0, 1, 2, 2), ST_INVALID);
	ruh_status(f, nsid, s);
	assert_int_equal(le64toh(s->ruhss[1].ruamw), RU / BS - 3);
	assert_int_equal(le64toh(s->ruhss[0].ruamw), RU / BS);
	/* namespace 1 still has every handle */
	f->nsid = ns1;
	ruh_status(f, ns1, s);
	assert_int_equal(le16toh(s->nruhsd), UCMD_FDP_DFLT_RUH);
}

static void test_ruh_status_update(void **state)
{
	struct fx *f = *state;
	struct nvme_fdp_ruh_status *s = host_alloc(&f->h, 4096);
	struct ucmd_nvme_sqe sqe = { .opcode = nvme_cmd_io_mgmt_recv, .nsid = f->nsid };
	uint16_t *pids = host_alloc(&f->h, 4096);
	struct nvme_fdp_events_log *ev = host_alloc(&f->h, 4096);
	uint8_t *types = host_alloc(&f->h, 4096);

	/* the events of handle 2: Reclaim Unit Not Fully Written */
	types[0] = NVME_FDP_EVENT_RUNFW;
	sqe = (struct ucmd_nvme_sqe){ .opcode = 0x09, .nsid = f->nsid,
		.cdw10 = NVME_FEAT_FID_FDP_EVENTS, .cdw11 = 2 | 1u << 16, .cdw12 = 1 };
	host_set_prp(&f->h, &sqe, types, 1);
	assert_int_equal(host_cmd(&f->h, 0, &sqe, NULL), 0);

	assert_int_equal(write_pid(f, nvme_cmd_write, 0, 4, 2, 2), 0);
	sqe = (struct ucmd_nvme_sqe){ .opcode = nvme_cmd_io_mgmt_recv, .nsid = f->nsid,
		.cdw10 = 1, .cdw11 = 4096 / 4 - 1 };
	host_set_prp(&f->h, &sqe, s, 4096);
	assert_int_equal(host_cmd(&f->h, 1, &sqe, NULL), 0);
	assert_int_equal(le16toh(s->nruhsd), 8);
	assert_int_equal(le16toh(s->ruhss[2].pid), 2);
	assert_int_equal(le64toh(s->ruhss[2].ruamw), RU / BS - 4);
	assert_int_equal(le64toh(s->ruhss[1].ruamw), RU / BS);
	/* one bad identifier in the list: nothing is updated */
	pids[0] = htole16(2);
	pids[1] = htole16(99);
	sqe = (struct ucmd_nvme_sqe){ .opcode = nvme_cmd_io_mgmt_send, .nsid = f->nsid,
		.cdw10 = 1 | 1u << 16 };
	host_set_prp(&f->h, &sqe, pids, 4);
	assert_int_equal(host_cmd(&f->h, 1, &sqe, NULL), ST_INVALID);
	pids[1] = htole16(2);
	assert_int_equal(host_cmd(&f->h, 1, &sqe, NULL), 0);
	sqe = (struct ucmd_nvme_sqe){ .opcode = nvme_cmd_io_mgmt_recv, .nsid = f->nsid,
		.cdw10 = 1, .cdw11 = 4096 / 4 - 1 };
	host_set_prp(&f->h, &sqe, s, 4096);
	assert_int_equal(host_cmd(&f->h, 1, &sqe, NULL), 0);
	assert_int_equal(le64toh(s->ruhss[2].ruamw), RU / BS);
	/* the partly written unit left behind is a host event */
	assert_int_equal(get_log(f, NVME_LOG_LID_FDP_EVENTS, 1, 1, ev, 4096, 0), 0);
	assert_int_equal(le32toh(ev->n), 1);
	assert_int_equal(ev->events[0].type, NVME_FDP_EVENT_RUNFW);
	assert_int_equal(le16toh(ev->events[0].pid), 2);
	assert_int_equal(le32toh(ev->events[0].nsid), f->nsid);
	assert_int_equal(get_log(f, NVME_LOG_LID_FDP_EVENTS, 0, 1, ev, 4096, 0), 0);
	assert_int_equal(le32toh(ev->n), 0);
	/* an unknown management operation */
	sqe.cdw10 = 2;
	assert_int_equal(host_cmd(&f->h, 1, &sqe, NULL), ST_INVALID);
}

static void test_feature_rules(void **state)
{
	struct fx *f = *state;
	struct ucmd_nvme_sqe sqe = { .opcode = 0x09, .cdw10 = NVME_FEAT_FID_FDP, .cdw11 = 1 };
	struct ucmd_nvme_cqe cqe;
	struct nvme_fdp_supported_event_desc *d = host_alloc(&f->h, 4096);

	assert_int_equal(host_get_feature(&f->h, NVME_FEAT_FID_FDP, 0, 1, &cqe.dw0), 0);
	assert_int_equal(cqe.dw0 & 1, 1);
	/* a namespace exists: FDP cannot be turned off, and nothing changes */
	assert_int_equal(host_cmd(&f->h, 0, &sqe, NULL), ST_SEQ);
	assert_int_equal(host_get_feature(&f->h, NVME_FEAT_FID_FDP, 0, 1, &cqe.dw0), 0);
	assert_int_equal(cqe.dw0 & 1, 1);
	sqe.cdw11 = 2;	/* another endurance group */
	assert_int_equal(host_cmd(&f->h, 0, &sqe, NULL), ST_INVALID);
	/* Get 1Eh: the supported event types of a handle, none enabled yet */
	sqe = (struct ucmd_nvme_sqe){ .opcode = 0x0a, .nsid = f->nsid,
		.cdw10 = NVME_FEAT_FID_FDP_EVENTS, .cdw11 = 0 | 16u << 16 };
	host_set_prp(&f->h, &sqe, d, 4096);
	assert_int_equal(host_cmd(&f->h, 0, &sqe, &cqe), 0);
	assert_int_equal(cqe.dw0, 6);
	assert_int_equal(d[0].evt, NVME_FDP_EVENT_RUNFW);
	assert_int_equal(d[0].evta, 0);
	assert_int_equal(d[4].evt, NVME_FDP_EVENT_RUTLE);
	assert_int_equal(d[5].evt, NVME_FDP_EVENT_RESET);
	sqe.cdw11 = 8 | 16u << 16;	/* handle 8 of 8 */
	assert_int_equal(host_cmd(&f->h, 0, &sqe, &cqe), ST_INVALID);
	/* once the namespace is gone, FDP goes off; its logs then say so */
	sqe = (struct ucmd_nvme_sqe){ .opcode = 0x0d, .nsid = f->nsid, .cdw10 = 1 };
	assert_int_equal(host_cmd(&f->h, 0, &sqe, NULL), 0);
	sqe = (struct ucmd_nvme_sqe){ .opcode = 0x09, .cdw10 = NVME_FEAT_FID_FDP, .cdw11 = 1 };
	assert_int_equal(host_cmd(&f->h, 0, &sqe, NULL), 0);
	assert_int_equal(get_log(f, NVME_LOG_LID_FDP_STATS, 0, 1, d, 64, 0), ST_FDP_DIS);
	sqe.cdw12 = 1 | 1u << 8;	/* configuration 1 does not exist */
	assert_int_equal(host_cmd(&f->h, 0, &sqe, NULL), ST_INVALID);
	sqe.cdw12 = 1;
	assert_int_equal(host_cmd(&f->h, 0, &sqe, NULL), 0);
	assert_int_equal(get_log(f, NVME_LOG_LID_FDP_STATS, 0, 1, d, 64, 0), 0);
}

static void test_format(void **state)
{
	struct fx *f = *state;
	struct nvme_fdp_ruh_status *s = host_alloc(&f->h, 4096);
	uint8_t *cfg = host_alloc(&f->h, 4096);
	struct ucmd_nvme_sqe sqe;
	uint64_t h0, m0, e0, h1, m1, e1;

	assert_int_equal(write_pid(f, nvme_cmd_write, 0, 5, 2, 4), 0);
	stats(f, &h0, &m0, &e0);
	/* to 512-byte blocks: the configuration stays, the units start empty */
	sqe = (struct ucmd_nvme_sqe){ .opcode = 0x80, .nsid = f->nsid, .cdw10 = 0 };
	assert_int_equal(host_cmd(&f->h, 0, &sqe, NULL), 0);
	assert_int_equal(get_log(f, NVME_LOG_LID_FDP_CONFIGS, 0, 1, cfg, 4096, 0), 0);
	assert_int_equal(le16toh(((struct nvme_fdp_config_log *)cfg)->configs[0].nruh), 8);
	sqe = (struct ucmd_nvme_sqe){ .opcode = nvme_cmd_io_mgmt_recv, .nsid = f->nsid,
		.cdw10 = 1, .cdw11 = 4096 / 4 - 1 };
	host_set_prp(&f->h, &sqe, s, 4096);
	assert_int_equal(host_cmd(&f->h, 1, &sqe, NULL), 0);
	assert_int_equal(le64toh(s->ruhss[4].ruamw), RU / 512);
	stats(f, &h1, &m1, &e1);
	assert_int_equal(h1, h0);
	assert_int_equal(m1, m0);
}

/* A small, fixed random sequence */
static uint32_t rnd(uint64_t *s)
{
	*s = *s * 6364136223846793005ull + 1442695040888963407ull;
	return (uint32_t)(*s >> 33);
}

enum workload { HOTCOLD_ONE, HOTCOLD_TWO, SEQUENTIAL };

/* Fill the namespace, then overwrite it PASSES times over: the overwrites' WAF */
static double waf(struct fx *f, enum workload w)
{
	uint64_t h0, m0, e0, h1, m1, e1, seed = 42;
	uint32_t hot = NSZE / 5;

	for (uint32_t lba = 0; lba < NSZE; lba += 8)
		assert_int_equal(write_pid(f, nvme_cmd_write, lba, 8, 2,
					   w == HOTCOLD_TWO && lba >= hot), 0);
	stats(f, &h0, &m0, &e0);
	for (uint32_t i = 0; i < PASSES * NSZE; i++) {
		uint32_t lba;

		if (w == SEQUENTIAL)
			lba = i % NSZE;
		else if (rnd(&seed) % 100 < 80)
			lba = rnd(&seed) % hot;
		else
			lba = hot + rnd(&seed) % (NSZE - hot);
		assert_int_equal(write_pid(f, nvme_cmd_write, lba, 1, 2,
					   w == HOTCOLD_TWO && lba >= hot), 0);
	}
	stats(f, &h1, &m1, &e1);
	assert_int_equal(h1 - h0, (uint64_t)PASSES * NSZE * BS);
	return (double)(m1 - m0) / (double)(h1 - h0);
}

static void test_waf(void **state)
{
	struct fx *f = *state;
	double one, two, seq;

	one = waf(f, HOTCOLD_ONE);
	teardown(state);
	setup(state);
	f = *state;
	two = waf(f, HOTCOLD_TWO);
	teardown(state);
	setup(state);
	f = *state;
	seq = waf(f, SEQUENTIAL);
	print_message("WAF: hot/cold one handle %.2f, two handles %.2f, sequential %.2f\n",
		      one, two, seq);
	assert_true(one > 1.5);
	assert_true(two < one * 0.85);
	assert_true(seq < 1.05);
}

/* Log 09h: media units written are what the model wrote, in billions of bytes */
static void test_endgrp_log(void **state)
{
	struct fx *f = *state;
	struct nvme_endurance_group_log *e = host_alloc(&f->h, sizeof(*e));
	uint64_t h, m, x, duw, muw, dur, hwc, seed = 7, n = 0;
	uint32_t hot = NSZE / 5 / 8;

	/* hot and cold 32 KiB overwrites through one handle until GC has moved enough */
	do {
		uint32_t chunk = rnd(&seed) % 100 < 80 ? rnd(&seed) % hot
						       : hot + rnd(&seed) % (NSZE / 8 - hot);

		assert_int_equal(write_pid(f, nvme_cmd_write, chunk * 8ull, 8, 2, 0), 0);
		n++;
		if (n % 1024 == 0)
			stats(f, &h, &m, &x);
	} while (n % 1024 || m < 1050000000ull);
	/* no metadata: HBMW and MBMW are the data bytes */
	assert_true(h < 1000000000ull);
	assert_int_equal(get_log(f, NVME_LOG_LID_ENDURANCE_GROUP, 0, 1, e, sizeof(*e), 0), 0);
	memcpy(&dur, e->data_units_read, 8);
	memcpy(&duw, e->data_units_written, 8);
	memcpy(&muw, e->media_units_written, 8);
	memcpy(&hwc, e->host_write_cmds, 8);
	print_message("host %.3f GB, media %.3f GB: DUW %llu, MUW %llu\n", h / 1e9, m / 1e9,
		      (unsigned long long)duw, (unsigned long long)muw);
	assert_int_equal(dur, 0);
	assert_int_equal(duw, (h + 999999999ull) / 1000000000ull);
	assert_int_equal(muw, (m + 999999999ull) / 1000000000ull);
	assert_true(muw > duw);
	assert_int_equal(hwc, n);
	/* another endurance group: Invalid Field */
	assert_int_equal(get_log(f, NVME_LOG_LID_ENDURANCE_GROUP, 0, 2, e, sizeof(*e), 0),
			 ST_INVALID);
}

static void test_persist(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	struct ucmd_ctrl_params p;
	struct ucmd_ns_params nsp;
	uint64_t h0, m0, e0, h1, m1, e1;
	struct nvme_fdp_ruh_status *s;
	struct ucmd_nvme_sqe sqe;

	*state = f;
	snprintf(f->dir, sizeof(f->dir), "/tmp/ucmd-fdp-XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	params(&p, &nsp, f->dir);
	f->nsid = host_open_ns(&f->h, &p, &nsp);
	assert_int_not_equal(f->nsid, 0);
	f->buf = host_alloc(&f->h, 8 * BS);
	for (uint32_t i = 0; i < 3 * NSZE / 8; i++)
		assert_int_equal(write_pid(f, nvme_cmd_write, (i * 8) % NSZE, 8, 2, 1), 0);
	assert_int_equal(write_pid(f, nvme_cmd_write, 0, 3, 2, 5), 0);
	stats(f, &h0, &m0, &e0);
	assert_true(e0 > 0);
	/* a namespace with its own placement handle list */
	const uint16_t list[] = { 6, 1, 4 };
	uint32_t ns2;

	assert_int_equal(create_ns(f, 3, list, &ns2), 0);
	attach_ns(f, ns2);
	host_close(&f->h);
	/* the directory's own configuration wins over the params of a reopen */
	p.fdp.nruh = 4;
	assert_int_equal(host_open(&f->h, &p), 0);
	assert_int_equal(host_create_io_queue(&f->h, 1, 64, true, 1), 0);
	f->buf = host_alloc(&f->h, 8 * BS);
	stats(f, &h1, &m1, &e1);
	assert_int_equal(h1, h0);
	assert_int_equal(m1, m0);
	assert_int_equal(e1, e0);
	s = host_alloc(&f->h, 4096);
	sqe = (struct ucmd_nvme_sqe){ .opcode = nvme_cmd_io_mgmt_recv, .nsid = f->nsid,
		.cdw10 = 1, .cdw11 = 4096 / 4 - 1 };
	host_set_prp(&f->h, &sqe, s, 4096);
	assert_int_equal(host_cmd(&f->h, 1, &sqe, NULL), 0);
	assert_int_equal(le16toh(s->nruhsd), 8);
	ruh_status(f, ns2, s);
	assert_int_equal(le16toh(s->nruhsd), 3);
	for (unsigned i = 0; i < 3; i++)
		assert_int_equal(le16toh(s->ruhss[i].ruhid), list[i]);
	ruh_status(f, f->nsid, s);
	/* handle 5's unit holds the 3 blocks written before the restart */
	assert_int_equal(le64toh(s->ruhss[5].ruamw), RU / BS - 3);
	/* overwrites after the restart invalidate what the model kept */
	for (uint32_t i = 0; i < NSZE / 8; i++)
		assert_int_equal(write_pid(f, nvme_cmd_write, i * 8, 8, 2, 1), 0);
	stats(f, &h1, &m1, &e1);
	assert_int_equal(h1 - h0, (uint64_t)NSZE * BS);
	host_close(&f->h);

	/* a damaged model only counts: the device opens, its units start empty */
	char path[128];
	FILE *fp;

	snprintf(path, sizeof(path), "%s/ns1.fdp", f->dir);
	fp = fopen(path, "r+");
	assert_non_null(fp);
	fseek(fp, 200, SEEK_SET);
	fputc(0x5a, fp);
	fclose(fp);
	assert_int_equal(host_open(&f->h, &p), 0);
	assert_int_equal(host_create_io_queue(&f->h, 1, 64, true, 1), 0);
	s = host_alloc(&f->h, 4096);
	sqe = (struct ucmd_nvme_sqe){ .opcode = nvme_cmd_io_mgmt_recv, .nsid = f->nsid,
		.cdw10 = 1, .cdw11 = 4096 / 4 - 1 };
	host_set_prp(&f->h, &sqe, s, 4096);
	assert_int_equal(host_cmd(&f->h, 1, &sqe, NULL), 0);
	assert_int_equal(le64toh(s->ruhss[5].ruamw), RU / BS);
}

/* Set Features 1Eh: enable the event types of placement handle ph of nsid */
static void set_events(struct fx *f, uint32_t nsid, uint16_t ph, const uint8_t *t, unsigned n)
{
	uint8_t *types = host_alloc(&f->h, 4096);
	struct ucmd_nvme_sqe sqe = { .opcode = 0x09, .nsid = nsid,
		.cdw10 = NVME_FEAT_FID_FDP_EVENTS, .cdw11 = ph | n << 16, .cdw12 = 1 };

	memcpy(types, t, n);
	host_set_prp(&f->h, &sqe, types, n);
	assert_int_equal(host_cmd(&f->h, 0, &sqe, NULL), 0);
}

static void ruh_update(struct fx *f, uint32_t nsid, uint16_t pid)
{
	uint16_t *pids = host_alloc(&f->h, 4096);
	struct ucmd_nvme_sqe sqe = { .opcode = nvme_cmd_io_mgmt_send, .nsid = nsid, .cdw10 = 1 };

	pids[0] = htole16(pid);
	host_set_prp(&f->h, &sqe, pids, 2);
	assert_int_equal(host_cmd(&f->h, 1, &sqe, NULL), 0);
}

/*
 * A namespace with its own handle list: its events name its placement
 * handle (PID) and the reclaim unit handle (RUHID); log 21h reports the
 * handles no namespace lists as Unused.
 */
static void test_ns_handles_events_usage(void **state)
{
	struct fx *f = *state;
	struct nvme_fdp_events_log *ev = host_alloc(&f->h, 4096);
	struct nvme_fdp_ruhu_log *u = host_alloc(&f->h, 4096);
	const uint16_t list[] = { 5, 2 };
	const uint8_t runfw = NVME_FDP_EVENT_RUNFW;
	struct ucmd_nvme_sqe sqe = { .opcode = nvme_admin_ns_mgmt, .nsid = f->nsid, .cdw10 = 1 };
	uint32_t nsid;

	/* namespace 1 (every handle) gone, namespace 2 with RUHs 5 and 2 */
	assert_int_equal(host_cmd(&f->h, 0, &sqe, NULL), 0);
	assert_int_equal(get_log(f, NVME_LOG_LID_FDP_RUH_USAGE, 0, 1, u, 4096, 0), 0);
	assert_int_equal(le16toh(u->nruh), UCMD_FDP_DFLT_RUH);
	for (unsigned i = 0; i < UCMD_FDP_DFLT_RUH; i++)
		assert_int_equal(u->ruhus[i].ruha, 0);	/* Unused: no namespace */
	assert_int_equal(create_ns(f, 2, list, &nsid), 0);
	attach_ns(f, nsid);
	f->nsid = nsid;
	assert_int_equal(get_log(f, NVME_LOG_LID_FDP_RUH_USAGE, 0, 1, u, 4096, 0), 0);
	for (unsigned i = 0; i < UCMD_FDP_DFLT_RUH; i++)
		assert_int_equal(u->ruhus[i].ruha, i == 5 || i == 2 ? NVME_FDP_RUHA_HOST_MASK : 0);

	/* placement handle 0 is RUH 5: its event says PID 0, RUHID 5 */
	set_events(f, nsid, 0, &runfw, 1);
	assert_int_equal(write_pid(f, nvme_cmd_write, 0, 2, 2, 0), 0);
	ruh_update(f, nsid, 0);
	assert_int_equal(get_log(f, NVME_LOG_LID_FDP_EVENTS, 1, 1, ev, 4096, 0), 0);
	assert_int_equal(le32toh(ev->n), 1);
	assert_int_equal(ev->events[0].type, NVME_FDP_EVENT_RUNFW);
	assert_int_equal(ev->events[0].flags, NVME_FDP_EVENT_F_PIV | NVME_FDP_EVENT_F_NSIDV);
	assert_int_equal(le16toh(ev->events[0].pid), 0);
	assert_int_equal(ev->events[0].ruhid, 5);
	assert_int_equal(le32toh(ev->events[0].nsid), nsid);
}

/*
 * A Controller Level Reset the host asks for (a disable without shutdown)
 * closes the handles' partly written units: event 02h, a fresh unit each.
 */
static void test_reset_event(void **state)
{
	struct fx *f = *state;
	struct nvme_fdp_events_log *ev;
	struct nvme_fdp_ruh_status *s;
	const uint8_t reset = NVME_FDP_EVENT_RESET;

	set_events(f, f->nsid, 1, &reset, 1);
	set_events(f, f->nsid, 4, &reset, 1);
	assert_int_equal(write_pid(f, nvme_cmd_write, 0, 2, 2, 1), 0);
	assert_int_equal(write_pid(f, nvme_cmd_write, 8, 3, 2, 4), 0);
	host_disable(&f->h);
	assert_int_equal(host_enable(&f->h, 16), 0);
	assert_int_equal(host_create_io_queue(&f->h, 1, 64, true, 1), 0);
	ev = host_alloc(&f->h, 4096);
	s = host_alloc(&f->h, 4096);
	assert_int_equal(get_log(f, NVME_LOG_LID_FDP_EVENTS, 1, 1, ev, 4096, 0), 0);
	assert_int_equal(le32toh(ev->n), 2);
	for (unsigned i = 0; i < 2; i++) {
		assert_int_equal(ev->events[i].type, NVME_FDP_EVENT_RESET);
		assert_int_equal(ev->events[i].flags, NVME_FDP_EVENT_F_PIV | NVME_FDP_EVENT_F_NSIDV);
		assert_int_equal(le32toh(ev->events[i].nsid), f->nsid);
	}
	assert_int_equal(le16toh(ev->events[0].pid), 1);
	assert_int_equal(le16toh(ev->events[1].pid), 4);
	ruh_status(f, f->nsid, s);
	assert_int_equal(le64toh(s->ruhss[1].ruamw), RU / BS);
	assert_int_equal(le64toh(s->ruhss[4].ruamw), RU / BS);
}

static uint64_t wall_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/*
 * The reclaim unit time limit (ERUTL, 1 s here) by the wall clock: once
 * more than that has passed since a handle's unit was first written, the
 * next look finds the handle on a new unit and event 01h. The test waits
 * longer than the limit and asserts states, never how long anything took.
 */
static void test_time_limit(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	struct ucmd_ctrl_params p;
	struct ucmd_ns_params nsp;
	struct nvme_fdp_events_log *ev;
	struct nvme_fdp_config_log *cl;
	struct nvme_fdp_ruh_status *s;
	const uint8_t rutle = NVME_FDP_EVENT_RUTLE;
	uint64_t t0;

	*state = f;
	params(&p, &nsp, NULL);
	p.fdp.ru_time_limit = 1;
	f->nsid = host_open_ns(&f->h, &p, &nsp);
	assert_int_not_equal(f->nsid, 0);
	f->buf = host_alloc(&f->h, 8 * BS);
	ev = host_alloc(&f->h, 4096);
	cl = host_alloc(&f->h, 4096);
	s = host_alloc(&f->h, 4096);
	assert_int_equal(get_log(f, NVME_LOG_LID_FDP_CONFIGS, 0, 1, cl, 4096, 0), 0);
	assert_int_equal(le32toh(cl->configs[0].erutl), 1);
	set_events(f, f->nsid, 3, &rutle, 1);
	t0 = wall_ms();
	assert_int_equal(write_pid(f, nvme_cmd_write, 0, 2, 2, 3), 0);
	ruh_status(f, f->nsid, s);
	/* only when the machine was quick enough to look within the limit */
	if (wall_ms() - t0 < 900) {
		assert_int_equal(le64toh(s->ruhss[3].ruamw), RU / BS - 2);
		assert_int_equal(le32toh(s->ruhss[3].earutr), 1);	/* rounded up */
	}
	assert_int_equal(le32toh(s->ruhss[0].earutr), 1);	/* not active: the whole limit */
	usleep(1200 * 1000);
	ruh_status(f, f->nsid, s);
	assert_int_equal(le64toh(s->ruhss[3].ruamw), RU / BS);
	assert_int_equal(get_log(f, NVME_LOG_LID_FDP_EVENTS, 1, 1, ev, 4096, 0), 0);
	assert_int_equal(le32toh(ev->n), 1);
	assert_int_equal(ev->events[0].type, NVME_FDP_EVENT_RUTLE);
	assert_int_equal(le16toh(ev->events[0].pid), 3);
	assert_int_equal(le32toh(ev->events[0].nsid), f->nsid);
	/* a handle whose unit was never written has no active unit to expire */
	assert_int_equal(le64toh(s->ruhss[0].ruamw), RU / BS);
	/* the next write through handle 3 starts a new unit, active from now */
	assert_int_equal(write_pid(f, nvme_cmd_write, 4, 1, 2, 3), 0);
	ruh_status(f, f->nsid, s);
	assert_int_equal(le64toh(s->ruhss[3].ruamw), RU / BS - 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_identify, setup, teardown),
		cmocka_unit_test_setup_teardown(test_configs_log, setup, teardown),
		cmocka_unit_test_setup_teardown(test_placement, setup, teardown),
		cmocka_unit_test_setup_teardown(test_write_zeroes_stats, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ruh_status_update, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ns_phndl, setup, teardown),
		cmocka_unit_test_setup_teardown(test_feature_rules, setup, teardown),
		cmocka_unit_test_setup_teardown(test_format, setup, teardown),
		cmocka_unit_test_setup_teardown(test_waf, setup, teardown),
		cmocka_unit_test_setup_teardown(test_endgrp_log, setup, teardown),
		cmocka_unit_test_teardown(test_persist, teardown),
		cmocka_unit_test_setup_teardown(test_ns_handles_events_usage, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reset_event, setup, teardown),
		cmocka_unit_test_teardown(test_time_limit, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
