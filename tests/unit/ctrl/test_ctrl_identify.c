/* SPDX-License-Identifier: MIT */
/* Identify: every CNS the controller supports, and the invalid ones. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <nvme/types.h>

#include "host_sim.h"

#define SC(sct, sc) ((sct) << 8 | (sc))
#define DNR 0x4000

static void test_identify(void **state)
{
	struct ucmd_ctrl_params p;
	struct ucmd_ns_params nsp = { .nsze = 1000, .lbaf = 4, .store = UCMD_NS_STORE_RAM, .attach = true };
	struct host h;
	uint32_t nsid;
	uint8_t *buf;

	(void)state;
	host_default_params(&p);
	p.mdts = 5;
	p.cntlid = 7;
	nsid = host_open_ns(&h, &p, &nsp);
	nsp.attach = false;
	assert_int_equal(ucmd_ctrl_ns_create(h.ctrl, &nsp), 2);
	nsp.attach = true;
	assert_int_equal(ucmd_ctrl_ns_create(h.ctrl, &nsp), 3);
	buf = host_alloc(&h, 4096);

	assert_int_equal(host_identify(&h, NVME_IDENTIFY_CNS_CTRL, 0, 0, buf), 0);
	struct nvme_id_ctrl *c = (void *)buf;
	assert_int_equal(c->vid, 0x1b36);
	assert_memory_equal(c->sn, "TESTSN01    ", 12);
	assert_int_equal(c->mdts, 5);
	assert_int_equal(c->cntlid, 7);
	assert_int_equal(c->ver, 0x00010400);
	assert_true(c->oacs & NVME_CTRL_OACS_FORMAT);
	assert_true(c->oacs & NVME_CTRL_OACS_NS_MGMT);
	assert_int_equal(c->oncs & 0x18f, NVME_CTRL_ONCS_COMPARE | NVME_CTRL_ONCS_WRITE_UNCORRECTABLE |
			 NVME_CTRL_ONCS_DSM | NVME_CTRL_ONCS_WRITE_ZEROES | NVME_CTRL_ONCS_VERIFY |
			 NVME_CTRL_ONCS_COPY);
	assert_true(c->sgls & 1);
	assert_int_equal(c->sqes, 0x66);
	assert_int_equal(c->cqes, 0x44);
	assert_true(c->vwc & NVME_CTRL_VWC_PRESENT);
	assert_true(c->lpa & NVME_CTRL_LPA_CMD_EFFECTS);
	assert_int_equal(c->elpe, 63);
	assert_int_equal(c->aerl, 3);
	assert_true(c->nn >= 3);
	assert_int_equal(c->ocfs, 3);	/* Copy descriptor formats 0h and 1h */
	assert_true(c->wctemp && c->cctemp > c->wctemp);
	assert_true(strlen(c->subnqn) > 0);

	assert_int_equal(host_identify(&h, NVME_IDENTIFY_CNS_NS, nsid, 0, buf), 0);
	struct nvme_id_ns *ns = (void *)buf;
	assert_int_equal(ns->nsze, 1000);
	assert_int_equal(ns->flbas & 0xf, 4);
	assert_int_equal(ns->nlbaf, 13);
	assert_int_equal(ns->lbaf[0].ds, 9);
	assert_int_equal(ns->lbaf[7].ms, 64);
	assert_int_equal(ns->dlfeat & 7, 1);
	/* allocated but not attached: zeros */
	assert_int_equal(host_identify(&h, NVME_IDENTIFY_CNS_NS, 2, 0, buf), 0);
	assert_int_equal(ns->nsze, 0);
	assert_int_equal(host_identify(&h, NVME_IDENTIFY_CNS_ALLOCATED_NS, 2, 0, buf), 0);
	assert_int_equal(ns->nsze, 1000);
	assert_int_equal(host_identify(&h, NVME_IDENTIFY_CNS_NS, 0, 0, buf), SC(0, 0x0b) | DNR);
	assert_int_equal(host_identify(&h, NVME_IDENTIFY_CNS_NS, 1000, 0, buf), SC(0, 0x0b) | DNR);

	assert_int_equal(host_identify(&h, NVME_IDENTIFY_CNS_NS_ACTIVE_LIST, 0, 0, buf), 0);
	uint32_t *l = (void *)buf;
	assert_int_equal(l[0], 1);
	assert_int_equal(l[1], 3);
	assert_int_equal(l[2], 0);
	assert_int_equal(host_identify(&h, NVME_IDENTIFY_CNS_NS_ACTIVE_LIST, 1, 0, buf), 0);
	assert_int_equal(l[0], 3);
	assert_int_equal(host_identify(&h, NVME_IDENTIFY_CNS_ALLOCATED_NS_LIST, 0, 0, buf), 0);
	assert_int_equal(l[1], 2);

	assert_int_equal(host_identify(&h, NVME_IDENTIFY_CNS_NS_DESC_LIST, nsid, 0, buf), 0);
	struct nvme_ns_id_desc *d = (void *)buf;
	assert_int_equal(d->nidt, NVME_NIDT_EUI64);
	d = (void *)(d->nid + d->nidl);
	assert_int_equal(d->nidt, NVME_NIDT_NGUID);
	d = (void *)(d->nid + d->nidl);
	assert_int_equal(d->nidt, NVME_NIDT_UUID);
	d = (void *)(d->nid + d->nidl);
	assert_int_equal(d->nidt, NVME_NIDT_CSI);
	assert_int_equal(d->nid[0], NVME_CSI_NVM);
	assert_int_equal(host_identify(&h, NVME_IDENTIFY_CNS_NS_DESC_LIST, 2, 0, buf), SC(0, 0x0b) | DNR);

	assert_int_equal(host_identify(&h, NVME_IDENTIFY_CNS_CSI_NS, nsid, NVME_CSI_NVM, buf), 0);
	assert_int_equal(host_identify(&h, NVME_IDENTIFY_CNS_CSI_NS, nsid, NVME_CSI_ZNS, buf),
			 SC(0, 0x02) | DNR);
	assert_int_equal(host_identify(&h, NVME_IDENTIFY_CNS_CSI_CTRL, 0, NVME_CSI_NVM, buf), 0);
	assert_int_equal(((struct nvme_id_ctrl_nvm *)buf)->wzsl, 5);
	assert_int_equal(host_identify(&h, NVME_IDENTIFY_CNS_CSI_INDEPENDENT_ID_NS, nsid, 0, buf), 0);
	assert_int_equal(((struct nvme_id_independent_id_ns *)buf)->nstat, 1);
	assert_int_equal(host_identify(&h, NVME_IDENTIFY_CNS_COMMAND_SET_STRUCTURE, 0, 0, buf), 0);
	/* one combination: NVM with the Zoned Namespace Command Set */
	assert_int_equal(((struct nvme_id_iocs *)buf)->iocsc[0], 1 | 1 << NVME_CSI_ZNS);
	assert_int_equal(host_identify(&h, NVME_IDENTIFY_CNS_CTRL_LIST, 0, 0, buf), 0);
	assert_int_equal(((struct nvme_ctrl_list *)buf)->num, 1);
	assert_int_equal(((struct nvme_ctrl_list *)buf)->identifier[0], 7);
	assert_int_equal(host_identify(&h, 0x55, 0, 0, buf), SC(0, 0x02) | DNR);
	host_close(&h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_identify),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
