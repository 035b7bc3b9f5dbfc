/* SPDX-License-Identifier: MIT */
/* Namespace management and attachment, Format NVM, namespace change events. */
#include <setjmp.h>
#include <stdarg.h>
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <nvme/types.h>

#include "host_sim.h"

#define SC(sct, sc) ((sct) << 8 | (sc))
#define DNR 0x4000

static uint16_t ns_create(struct host *h, uint64_t nsze, uint8_t flbas, uint32_t *nsid)
{
	struct nvme_id_ns *id = host_alloc(h, 4096);
	struct ucmd_nvme_sqe s = { .opcode = nvme_admin_ns_mgmt };
	struct ucmd_nvme_cqe cqe;
	uint16_t st;

	id->nsze = nsze;
	id->ncap = nsze;
	id->flbas = flbas;
	host_set_prp(h, &s, id, 4096);
	st = host_cmd(h, 0, &s, &cqe);
	*nsid = cqe.dw0;
	return st;
}

static uint16_t ns_attach(struct host *h, uint32_t nsid, bool detach, uint16_t cntlid)
{
	struct nvme_ctrl_list *l = host_alloc(h, 4096);
	struct ucmd_nvme_sqe s = { .opcode = nvme_admin_ns_attach, .nsid = nsid, .cdw10 = detach };

	l->num = 1;
	l->identifier[0] = cntlid;
	host_set_prp(h, &s, l, 4096);
	return host_cmd(h, 0, &s, NULL);
}

static void test_ns_lifecycle(void **state)
{
	struct ucmd_ctrl_params p;
	struct host h;
	struct ucmd_nvme_cqe cqe;
	uint32_t nsid, v;

	(void)state;
	host_default_params(&p);
	assert_int_equal(host_open(&h, &p), 0);
	assert_int_equal(host_create_io_queue(&h, 1, 16, true, 1), 0);
	/* Namespace attribute notices on, one AER outstanding */
	assert_int_equal(host_set_feature(&h, NVME_FEAT_FID_ASYNC_EVENT, NVME_CTRL_OAES_NA, false, &v), 0);
	struct ucmd_nvme_sqe aer = { .opcode = nvme_admin_async_event };
	host_push(&h, 0, &aer);
	host_ring(&h, 0);

	assert_int_equal(ns_create(&h, 2048, 0, &nsid), 0);
	assert_int_equal(nsid, 1);
	assert_int_equal(ucmd_ctrl_ns_count(h.ctrl), 1);
	uint8_t *b = host_alloc(&h, 4096);
	/* not attached: I/O fails with Invalid Namespace */
	assert_int_equal(host_io(&h, nvme_cmd_read, nsid, 0, 1, b, 512, NULL, 0), SC(0, 0x0b) | DNR);
	assert_int_equal(ns_attach(&h, nsid, false, 2), SC(1, 0x1c) | DNR);
	assert_int_equal(ns_attach(&h, nsid, false, 1), 0);
	assert_int_equal(ns_attach(&h, nsid, false, 1), SC(1, 0x18) | DNR);
	/* AER: notice, namespace attribute changed, changed ns list */
	assert_true(host_pop(&h, 0, &cqe));
	assert_int_equal(cqe.dw0, NVME_AER_NOTICE | NVME_AER_NOTICE_NS_CHANGED << 8 |
			 NVME_LOG_LID_CHANGED_NS << 16);
	assert_int_equal(host_get_log(&h, NVME_LOG_LID_CHANGED_NS, 0, b, 4096), 0);
	assert_int_equal(((uint32_t *)b)[0], nsid);
	assert_int_equal(((uint32_t *)b)[1], 0);
	assert_int_equal(host_io(&h, nvme_cmd_read, nsid, 0, 1, b, 512, NULL, 0), 0);

	/* Format to 4 KiB blocks: capacity in bytes is kept */
	struct ucmd_nvme_sqe f = { .opcode = nvme_admin_format_nvm, .nsid = nsid, .cdw10 = 4 | 1u << 9 };
	assert_int_equal(host_cmd(&h, 0, &f, NULL), 0);
	assert_int_equal(host_identify(&h, 0, nsid, 0, b), 0);
	assert_int_equal(((struct nvme_id_ns *)b)->nsze, 256);
	assert_int_equal(((struct nvme_id_ns *)b)->flbas & 0xf, 4);
	/* I/O moves the new block size (the namespace's lba_shift follows Format) */
	uint8_t *w = host_alloc(&h, 2 * 4096), *r = host_alloc(&h, 2 * 4096);
	fill_pattern(w, 2 * 4096, 3);
	assert_int_equal(host_io(&h, nvme_cmd_write, nsid, 254, 2, w, 2 * 4096, NULL, 0), 0);
	assert_int_equal(host_io(&h, nvme_cmd_read, nsid, 255, 1, r, 4096, NULL, 0), 0);
	assert_memory_equal(r, w + 4096, 4096);
	assert_int_equal(host_io(&h, nvme_cmd_read, nsid, 255, 2, r, 2 * 4096, NULL, 0),
			 SC(0, 0x80) | DNR);
	f.cdw10 = 12;		/* no such LBA format */
	assert_int_equal(host_cmd(&h, 0, &f, NULL), SC(1, 0x0a) | DNR);
	f.cdw10 = 0 | 1u << 5;	/* protection information without metadata (test_ctrl_pi_io) */
	assert_int_equal(host_cmd(&h, 0, &f, NULL), SC(1, 0x0a) | DNR);
	f.cdw10 = 0 | 2u << 9;	/* cryptographic erase */
	assert_int_equal(host_cmd(&h, 0, &f, NULL), SC(0, 0x02) | DNR);

	/* Detach, delete */
	assert_int_equal(ns_attach(&h, nsid, true, 1), 0);
	assert_int_equal(ns_attach(&h, nsid, true, 1), SC(1, 0x1a) | DNR);
	assert_int_equal(host_io(&h, nvme_cmd_read, nsid, 0, 1, b, 4096, NULL, 0), SC(0, 0x0b) | DNR);
	struct ucmd_nvme_sqe d = { .opcode = nvme_admin_ns_mgmt, .nsid = nsid, .cdw10 = 1 };
	assert_int_equal(host_cmd(&h, 0, &d, NULL), 0);
	assert_int_equal(host_cmd(&h, 0, &d, NULL), SC(0, 0x0b) | DNR);
	assert_int_equal(ucmd_ctrl_ns_count(h.ctrl), 0);
	/* Invalid create parameters */
	assert_int_equal(ns_create(&h, 0, 0, &nsid), SC(0, 0x02) | DNR);
	assert_int_equal(ns_create(&h, 100, UCMD_NR_LBAF, &nsid), SC(1, 0x0a) | DNR);
	/* Key Value (CSI 01h): a command set the controller does not have */
	struct ucmd_nvme_sqe c = { .opcode = nvme_admin_ns_mgmt, .cdw11 = 1u << 24 };
	assert_int_equal(host_cmd(&h, 0, &c, NULL), SC(1, 0x29) | DNR);
	/* Namespace ids run out at NN */
	for (int i = 0; i < 64; i++)
		assert_int_equal(ns_create(&h, 8, 0, &nsid), 0);
	assert_int_equal(ns_create(&h, 8, 0, &nsid), SC(1, 0x16) | DNR);
	d.nsid = 0xffffffff;
	assert_int_equal(host_cmd(&h, 0, &d, NULL), 0);
	assert_int_equal(ucmd_ctrl_ns_count(h.ctrl), 0);
	host_close(&h);
}

static void test_oob_create(void **state)
{
	struct ucmd_ctrl_params p;
	struct host h;
	struct ucmd_ns_params nsp = { .nsze = 8, .store = UCMD_NS_STORE_RAM };

	(void)state;
	host_default_params(&p);
	assert_int_equal(host_create(&h, &p), 0);
	assert_int_equal(ucmd_ctrl_ns_create(h.ctrl, &nsp), 1);
	assert_int_equal(ucmd_ctrl_ns_create(h.ctrl, &nsp), 2);
	nsp.lbaf = UCMD_NR_LBAF;
	assert_true(ucmd_ctrl_ns_create(h.ctrl, &nsp) < 0);
	nsp.lbaf = 0;
	nsp.nsze = 0;
	assert_true(ucmd_ctrl_ns_create(h.ctrl, &nsp) < 0);
	nsp.nsze = 8;
	nsp.store = UCMD_NS_STORE_DEVICE;	/* needs a path */
	assert_true(ucmd_ctrl_ns_create(h.ctrl, &nsp) < 0);
	assert_int_equal(ucmd_ctrl_ns_count(h.ctrl), 2);
	host_close(&h);
}

/*
 * RAM namespaces keep every block written in memory: ram_capacity bounds
 * them together (a sanitize overwrite of a 1 PiB namespace made by
 * Namespace Management took the fuzzer's process past 2 GiB).
 */
static void test_ram_capacity(void **state)
{
	struct ucmd_ctrl_params p;
	struct host h;
	struct ucmd_ns_params nsp = { .nsze = 4096, .store = UCMD_NS_STORE_RAM };	/* 2 MiB */
	uint32_t nsid;

	(void)state;
	host_default_params(&p);
	p.ram_capacity = 4u << 20;
	assert_int_equal(host_open(&h, &p), 0);
	assert_int_equal(ucmd_ctrl_ns_create(h.ctrl, &nsp), 1);
	nsp.nsze = 4097;	/* 2 MiB + 512 B more: past 4 MiB */
	assert_int_equal(ucmd_ctrl_ns_create(h.ctrl, &nsp), -EDQUOT);
	/* through Namespace Management: Namespace Insufficient Capacity, nothing made */
	assert_int_equal(ns_create(&h, 4097, 0, &nsid), SC(1, 0x15) | DNR);
	assert_int_equal(ns_create(&h, UINT64_MAX / 512, 0, &nsid), SC(1, 0x15) | DNR);
	assert_int_equal(ucmd_ctrl_ns_count(h.ctrl), 1);
	/* exactly the rest fits: 4096 more blocks of 512 bytes */
	assert_int_equal(ns_create(&h, 4096, 0, &nsid), 0);
	assert_int_equal(nsid, 2);
	assert_int_equal(ns_create(&h, 1, 0, &nsid), SC(1, 0x15) | DNR);
	host_close(&h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ns_lifecycle),
		cmocka_unit_test(test_oob_create),
		cmocka_unit_test(test_ram_capacity),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
