/* SPDX-License-Identifier: MIT */
/*
 * What nvme-cli's own tests and users reach: Get/Set Features 09h
 * (Interrupt Vector Configuration) per vector, TNVMCAP/UNVMCAP that agree
 * with Namespace Management, and the Supported Log Pages log (00h).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <nvme/types.h>

#include "host_sim.h"

#define SC(sct, sc) ((sct) << 8 | (sc))
#define DNR 0x4000

static void test_irq_config_per_vector(void **state)
{
	struct ucmd_ctrl_params p;
	struct host h;
	uint32_t dw0;

	(void)state;
	host_default_params(&p);	/* 4 I/O queues: vectors 0..4 */
	assert_int_equal(host_open(&h, &p), 0);
	for (uint32_t iv = 0; iv <= 4; iv++) {
		assert_int_equal(host_get_feature(&h, NVME_FEAT_FID_IRQ_CONFIG, 0, iv, &dw0), 0);
		assert_int_equal(dw0, iv);
	}
	assert_int_equal(host_get_feature(&h, NVME_FEAT_FID_IRQ_CONFIG, 0, 5, &dw0),
			 SC(0, NVME_SC_INVALID_FIELD) | DNR);
	/* Coalescing Disable on vector 2 only */
	assert_int_equal(host_set_feature(&h, NVME_FEAT_FID_IRQ_CONFIG, 2 | 1u << 16, false, &dw0), 0);
	assert_int_equal(host_get_feature(&h, NVME_FEAT_FID_IRQ_CONFIG, 0, 2, &dw0), 0);
	assert_int_equal(dw0, 2 | 1u << 16);
	assert_int_equal(host_get_feature(&h, NVME_FEAT_FID_IRQ_CONFIG, 0, 3, &dw0), 0);
	assert_int_equal(dw0, 3);
	/* the default, and capabilities: changeable, not saveable */
	assert_int_equal(host_get_feature(&h, NVME_FEAT_FID_IRQ_CONFIG, 1, 2, &dw0), 0);
	assert_int_equal(dw0, 2);
	assert_int_equal(host_get_feature(&h, NVME_FEAT_FID_IRQ_CONFIG, 3, 0, &dw0), 0);
	assert_int_equal(dw0, 1u << 2);
	assert_int_equal(host_set_feature(&h, NVME_FEAT_FID_IRQ_CONFIG, 2, true, &dw0),
			 SC(1, NVME_SC_FEATURE_NOT_SAVEABLE) | DNR);
	assert_int_equal(host_set_feature(&h, NVME_FEAT_FID_IRQ_CONFIG, 9 | 1u << 16, false, &dw0),
			 SC(0, NVME_SC_INVALID_FIELD) | DNR);
	host_close(&h);
}

static uint16_t ns_create(struct host *h, uint64_t nsze, uint32_t *nsid)
{
	struct nvme_id_ns *id = host_alloc(h, 4096);
	struct ucmd_nvme_sqe s = { .opcode = nvme_admin_ns_mgmt };
	struct ucmd_nvme_cqe cqe;
	uint16_t st;

	memset(id, 0, 4096);
	id->nsze = htole64(nsze);
	id->ncap = htole64(nsze);
	host_set_prp(h, &s, id, 4096);
	st = host_cmd(h, 0, &s, &cqe);
	*nsid = cqe.dw0;
	return st;
}

/* Namespace Management create with a format and protection (nvme create-ns --flbas --dps). */
static uint16_t ns_create_pi(struct host *h, uint64_t nsze, uint8_t flbas, uint8_t dps,
			     uint32_t *nsid)
{
	struct nvme_id_ns *id = host_alloc(h, 4096);
	struct ucmd_nvme_sqe s = { .opcode = nvme_admin_ns_mgmt };
	struct ucmd_nvme_cqe cqe;
	uint16_t st;

	memset(id, 0, 4096);
	id->nsze = htole64(nsze);
	id->ncap = htole64(nsze);
	id->flbas = flbas;
	id->dps = dps;
	host_set_prp(h, &s, id, 4096);
	st = host_cmd(h, 0, &s, &cqe);
	*nsid = cqe.dw0;
	return st;
}

/*
 * DPS at creation, as a format takes it: PI type 1 on the 8-byte metadata
 * format (what nvme-cli's format test asks of every format with metadata),
 * refused where the metadata cannot hold the tuple or the field is reserved.
 */
static void test_create_with_pi(void **state)
{
	struct ucmd_ctrl_params p;
	struct nvme_id_ns *id;
	struct host h;
	uint32_t nsid;

	(void)state;
	host_default_params(&p);
	p.ram_capacity = 1 << 24;
	assert_int_equal(host_open(&h, &p), 0);
	assert_int_equal(ns_create_pi(&h, 1024, 1, NVME_NS_DPS_PI_TYPE1, &nsid), 0);
	id = host_alloc(&h, 4096);
	assert_int_equal(host_identify(&h, NVME_IDENTIFY_CNS_ALLOCATED_NS, nsid, 0, id), 0);
	assert_int_equal(id->dps, NVME_NS_DPS_PI_TYPE1);
	assert_int_equal(id->flbas & 0xf, 1);
	assert_int_equal(ns_create_pi(&h, 1024, 1, NVME_NS_DPS_PI_TYPE3 | NVME_NS_DPS_PI_FIRST, &nsid),
			 0);
	/* no metadata to hold the tuple */
	assert_int_equal(ns_create_pi(&h, 1024, 0, NVME_NS_DPS_PI_TYPE1, &nsid),
			 SC(1, NVME_SC_INVALID_FORMAT) | DNR);
	/* reserved: type 4, bits 7:4, PI first without a type */
	assert_int_equal(ns_create_pi(&h, 1024, 1, 4, &nsid), SC(0, NVME_SC_INVALID_FIELD) | DNR);
	assert_int_equal(ns_create_pi(&h, 1024, 1, 0x11, &nsid), SC(0, NVME_SC_INVALID_FIELD) | DNR);
	assert_int_equal(ns_create_pi(&h, 1024, 1, NVME_NS_DPS_PI_FIRST, &nsid),
			 SC(0, NVME_SC_INVALID_FIELD) | DNR);
	host_close(&h);
}

static void caps(struct host *h, uint64_t *t, uint64_t *u)
{
	struct nvme_id_ctrl *id = host_alloc(h, 4096);

	assert_int_equal(host_identify(h, NVME_IDENTIFY_CNS_CTRL, 0, 0, id), 0);
	memcpy(t, id->tnvmcap, 8);
	memcpy(u, id->unvmcap, 8);
	for (int i = 8; i < 16; i++)
		assert_int_equal(id->tnvmcap[i] | id->unvmcap[i], 0);
}

static void test_capacity(void **state)
{
	struct ucmd_ctrl_params p;
	struct host h;
	uint64_t t, u;
	uint32_t nsid;

	(void)state;
	host_default_params(&p);
	p.ram_capacity = 1 << 20;	/* no directory: every namespace is RAM */
	assert_int_equal(host_open(&h, &p), 0);
	caps(&h, &t, &u);
	assert_int_equal(t, 1 << 20);
	assert_int_equal(u, 1 << 20);
	/* 1024 blocks of 512 B: half of it */
	assert_int_equal(ns_create(&h, 1024, &nsid), 0);
	caps(&h, &t, &u);
	assert_int_equal(t, 1 << 20);
	assert_int_equal(u, 512 << 10);
	/* more than is left: Namespace Insufficient Capacity, UNVMCAP unchanged */
	assert_int_equal(ns_create(&h, 1025, &nsid), SC(1, NVME_SC_NS_INSUFFICIENT_CAP) | DNR);
	caps(&h, &t, &u);
	assert_int_equal(u, 512 << 10);
	/* exactly what is left fits, and leaves none */
	assert_int_equal(ns_create(&h, 1024, &nsid), 0);
	caps(&h, &t, &u);
	assert_int_equal(u, 0);
	/* deleting gives it back */
	struct ucmd_nvme_sqe d = { .opcode = nvme_admin_ns_mgmt, .nsid = nsid, .cdw10 = 1 };
	assert_int_equal(host_cmd(&h, 0, &d, NULL), 0);
	caps(&h, &t, &u);
	assert_int_equal(u, 512 << 10);
	host_close(&h);

	/* no bound given: the store's 1 PiB */
	host_default_params(&p);
	assert_int_equal(host_open(&h, &p), 0);
	caps(&h, &t, &u);
	assert_int_equal(t, 1ull << 50);
	assert_true(u <= t);
	host_close(&h);
}

static void test_supported_log_pages(void **state)
{
	struct ucmd_ctrl_params p;
	struct host h;
	uint32_t *lids;
	uint8_t *b;

	(void)state;
	host_default_params(&p);
	assert_int_equal(host_open(&h, &p), 0);
	lids = host_alloc(&h, 1024);
	b = host_alloc(&h, 4096);
	assert_int_equal(host_get_log(&h, NVME_LOG_LID_SUPPORTED_LOG_PAGES, 0, lids, 1024), 0);
	/*
	 * every LID it lists reads, every other is Invalid Log Page; two need
	 * a field of their own: the Endurance Group (LSI 0 names none) and
	 * the Persistent Event log's reporting context (none established)
	 */
	for (unsigned lid = 0; lid < 256; lid++) {
		uint16_t st = host_get_log(&h, (uint8_t)lid, 0, b, 512);

		if (lid == NVME_LOG_LID_ENDURANCE_GROUP)
			assert_int_equal(st, SC(0, NVME_SC_INVALID_FIELD) | DNR);
		else if (lid == NVME_LOG_LID_PERSISTENT_EVENT)
			assert_int_equal(st, SC(0, NVME_SC_CMD_SEQ_ERROR) | DNR);
		else if (le32toh(lids[lid]) & 1)
			assert_int_equal(st, 0);
		else
			assert_int_equal(st, SC(1, NVME_SC_INVALID_LOG_PAGE) | DNR);
	}
	assert_true(le32toh(lids[NVME_LOG_LID_SUPPORTED_LOG_PAGES]) & 1);
	assert_true(le32toh(lids[NVME_LOG_LID_SMART]) & 1);
	assert_true(le32toh(lids[NVME_LOG_LID_CMD_EFFECTS]) & 1);
	for (unsigned lid = NVME_LOG_LID_TELEMETRY_HOST; lid <= NVME_LOG_LID_ENDURANCE_GROUP; lid++)
		assert_true(le32toh(lids[lid]) & 1);
	assert_true(le32toh(lids[NVME_LOG_LID_PERSISTENT_EVENT]) & 1);
	assert_true(le32toh(lids[NVME_LOG_LID_LBA_STATUS]) & 1);
	host_close(&h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_irq_config_per_vector),
		cmocka_unit_test(test_capacity),
		cmocka_unit_test(test_supported_log_pages),
		cmocka_unit_test(test_create_with_pi),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
