/* SPDX-License-Identifier: MIT */
/* Persistence: namespaces, data, write-uncorrectable state, saved features,
 * SMART counters and identity survive destroy + create on the same dir. */
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

#define SC(sct, sc) ((sct) << 8 | (sc))
#define DNR 0x4000

static uint64_t u64at(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

static void test_persist(void **state)
{
	char dir[] = "/tmp/ucmd-ctrl-persist-XXXXXX";
	struct ucmd_ctrl_params p;
	struct ucmd_ns_params nsp = { .nsze = 4096, .lbaf = 1, .store = UCMD_NS_STORE_FILE, .attach = true };
	struct host h;
	uint32_t nsid, v;
	uint8_t *w, *r, *m, *buf;

	(void)state;
	assert_non_null(mkdtemp(dir));
	host_default_params(&p);
	p.dir = dir;
	p.serial = "PERSIST1";
	nsid = host_open_ns(&h, &p, &nsp);
	assert_int_equal(nsid, 1);
	nsp.store = UCMD_NS_STORE_RAM;
	nsp.lbaf = 4;
	nsp.extended = false;
	nsp.attach = false;
	assert_int_equal(ucmd_ctrl_ns_create(h.ctrl, &nsp), 2);
	w = host_alloc(&h, 8 * 512);
	m = host_alloc(&h, 64);
	fill_pattern(w, 8 * 512, 42);
	fill_pattern(m, 64, 43);
	assert_int_equal(host_io(&h, nvme_cmd_write, nsid, 100, 8, w, 8 * 512, m, 0), 0);
	assert_int_equal(host_io(&h, nvme_cmd_write_uncor, nsid, 200, 3, NULL, 0, NULL, 0), 0);
	assert_int_equal(host_set_feature(&h, NVME_FEAT_FID_ARBITRATION, 0x0102, true, NULL), 0);
	assert_int_equal(host_set_feature(&h, NVME_FEAT_FID_IRQ_COALESCE, 0x0203, false, NULL), 0);
	host_close(&h);

	/* Reopen with other parameters: the directory's identity wins. */
	host_default_params(&p);
	p.dir = dir;
	p.serial = "OTHER";
	assert_int_equal(host_open(&h, &p), 0);
	assert_int_equal(host_create_io_queue(&h, 1, 16, true, 1), 0);
	assert_int_equal(ucmd_ctrl_ns_count(h.ctrl), 2);
	buf = host_alloc(&h, 4096);
	assert_int_equal(host_identify(&h, NVME_IDENTIFY_CNS_CTRL, 0, 0, buf), 0);
	assert_memory_equal(((struct nvme_id_ctrl *)buf)->sn, "PERSIST1", 8);
	assert_int_equal(host_identify(&h, NVME_IDENTIFY_CNS_NS, 1, 0, buf), 0);
	assert_int_equal(((struct nvme_id_ns *)buf)->nsze, 4096);
	assert_int_equal(((struct nvme_id_ns *)buf)->flbas & 0xf, 1);
	assert_int_equal(host_identify(&h, NVME_IDENTIFY_CNS_ALLOCATED_NS, 2, 0, buf), 0);
	assert_int_equal(((struct nvme_id_ns *)buf)->flbas & 0xf, 4);
	assert_int_equal(host_identify(&h, NVME_IDENTIFY_CNS_NS, 2, 0, buf), 0);
	assert_int_equal(((struct nvme_id_ns *)buf)->nsze, 0);	/* still detached */

	r = host_alloc(&h, 8 * 512);
	uint8_t *rm = host_alloc(&h, 64);
	assert_int_equal(host_io(&h, nvme_cmd_read, 1, 100, 8, r, 8 * 512, rm, 0), 0);
	/* the first host's buffers are gone: regenerate the patterns */
	uint8_t ew[8 * 512], em[64];
	fill_pattern(ew, sizeof(ew), 42);
	fill_pattern(em, sizeof(em), 43);
	assert_memory_equal(ew, r, 8 * 512);
	assert_memory_equal(em, rm, 64);
	assert_int_equal(host_io(&h, nvme_cmd_read, 1, 201, 1, r, 512, rm, 0), SC(2, 0x81) | DNR);
	assert_int_equal(host_get_feature(&h, NVME_FEAT_FID_ARBITRATION, 0, 0, &v), 0);
	assert_int_equal(v, 0x0102);
	assert_int_equal(host_get_feature(&h, NVME_FEAT_FID_IRQ_COALESCE, 0, 0, &v), 0);
	assert_int_equal(v, 0x0203);	/* not saved, but the device stayed powered */
	assert_int_equal(host_get_log(&h, NVME_LOG_LID_SMART, 0, buf, 512), 0);
	struct nvme_smart_log *s = (void *)buf;
	assert_int_equal(u64at(s->host_writes), 2);
	assert_int_equal(u64at(s->host_reads), 1);
	/* the same host boot, shut down cleanly: not a power cycle */
	assert_int_equal(u64at(s->power_cycles), 1);
	assert_int_equal(u64at(s->unsafe_shutdowns), 0);
	/* clear the uncorrectable blocks; that too persists */
	assert_int_equal(host_io(&h, nvme_cmd_write_zeroes, 1, 200, 3, NULL, 0, NULL, 0), 0);
	host_close(&h);

	/* powered on (as ucmdd says at its start): the volatile value is gone */
	p.power_on = true;
	assert_int_equal(host_open(&h, &p), 0);
	buf = host_alloc(&h, 4096);
	s = (void *)buf;
	assert_int_equal(host_get_feature(&h, NVME_FEAT_FID_IRQ_COALESCE, 0, 0, &v), 0);
	assert_int_equal(v, 0);
	assert_int_equal(host_get_feature(&h, NVME_FEAT_FID_ARBITRATION, 0, 0, &v), 0);
	assert_int_equal(v, 0x0102);
	assert_int_equal(host_get_log(&h, NVME_LOG_LID_SMART, 0, buf, 512), 0);
	assert_int_equal(u64at(s->power_cycles), 2);
	assert_int_equal(host_create_io_queue(&h, 1, 16, true, 1), 0);
	r = host_alloc(&h, 3 * 512);
	rm = host_alloc(&h, 24);
	assert_int_equal(host_io(&h, nvme_cmd_read, 1, 200, 3, r, 3 * 512, rm, 0), 0);
	host_close(&h);

	assert_int_equal(host_rmdir(dir), 0);
}

static void test_volatile(void **state)
{
	struct ucmd_ctrl_params p;
	struct ucmd_ns_params nsp = { .nsze = 64, .store = UCMD_NS_STORE_FILE, .attach = true };
	struct host h;

	(void)state;
	host_default_params(&p);
	/* FILE without a directory falls back to RAM */
	assert_int_not_equal(host_open_ns(&h, &p, &nsp), 0);
	host_close(&h);
	assert_int_equal(host_open(&h, &p), 0);
	assert_int_equal(ucmd_ctrl_ns_count(h.ctrl), 0);
	host_close(&h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_persist),
		cmocka_unit_test(test_volatile),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
