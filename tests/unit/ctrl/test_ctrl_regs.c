/* SPDX-License-Identifier: MIT */
/* Registers: CAP/VS, enable validation, disable, shutdown. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "host_sim.h"

#define CC_ENABLE (4u << 20 | 6u << 16 | 1u)

static void test_cap_vs(void **state)
{
	struct ucmd_ctrl_params p;
	struct host h;
	uint64_t cap;

	(void)state;
	host_default_params(&p);
	p.mqes = 127;
	assert_int_equal(host_create(&h, &p), 0);
	cap = ctrl_read64(h.ctrl, UCMD_NVME_REG_CAP);
	assert_int_equal(cap & 0xffff, 127);		/* MQES */
	assert_true(cap & (1ull << 16));		/* CQR */
	assert_int_equal((cap >> 32) & 0xf, 0);		/* DSTRD */
	assert_true((cap >> 24) & 0xff);		/* TO */
	assert_true((cap >> 37) & 1);			/* CSS NVM */
	assert_int_equal((cap >> 48) & 0xf, 0);		/* MPSMIN 4 KiB */
	assert_int_equal(ctrl_read32(h.ctrl, UCMD_NVME_REG_VS), 0x00010400);
	assert_int_equal(ctrl_read32(h.ctrl, UCMD_NVME_REG_CSTS), 0);
	host_close(&h);
}

static void try_enable(uint32_t aqa, uint64_t asq, uint64_t acq, uint32_t cc, bool expect_rdy)
{
	struct ucmd_ctrl_params p;
	struct host h;

	host_default_params(&p);
	assert_int_equal(host_create(&h, &p), 0);
	ctrl_write32(h.ctrl, UCMD_NVME_REG_AQA, aqa);
	if (asq == 1)
		asq = (uintptr_t)host_alloc(&h, 4096);
	if (acq == 1)
		acq = (uintptr_t)host_alloc(&h, 4096);
	ctrl_write64(h.ctrl, UCMD_NVME_REG_ASQ, asq);
	ctrl_write64(h.ctrl, UCMD_NVME_REG_ACQ, acq);
	ctrl_write32(h.ctrl, UCMD_NVME_REG_CC, cc);
	assert_int_equal(!!(ctrl_read32(h.ctrl, UCMD_NVME_REG_CSTS) & UCMD_NVME_CSTS_RDY),
			 expect_rdy);
	host_close(&h);
}

static void test_enable_validation(void **state)
{
	(void)state;
	try_enable(0x000f000f, 1, 1, CC_ENABLE, true);
	try_enable(0x000f0000, 1, 1, CC_ENABLE, false);		/* ASQS 1 entry */
	try_enable(0x0000000f, 1, 1, CC_ENABLE, false);		/* ACQS 1 entry */
	try_enable(0x0fff0fff, 1, 1, CC_ENABLE, false);		/* > MQES */
	try_enable(0x000f000f, 0, 1, CC_ENABLE, false);		/* no ASQ */
	try_enable(0x000f000f, 1, 0, CC_ENABLE, false);		/* no ACQ */
	try_enable(0x000f000f, 0x10008, 1, CC_ENABLE, false);	/* unaligned ASQ */
	try_enable(0x000f000f, 1, 1, CC_ENABLE | 1u << 7, false);	/* MPS 8 KiB */
	try_enable(0x000f000f, 1, 1, CC_ENABLE | 1u << 4, false);	/* CSS reserved */
}

static void test_enable_disable(void **state)
{
	struct ucmd_ctrl_params p;
	struct host h;
	uint32_t aqa;
	char id[4096];

	(void)state;
	host_default_params(&p);
	assert_int_equal(host_open(&h, &p), 0);
	aqa = ctrl_read32(h.ctrl, UCMD_NVME_REG_AQA);
	/* Admin queue attributes are frozen while enabled. */
	ctrl_write32(h.ctrl, UCMD_NVME_REG_AQA, 0x00030003);
	assert_int_equal(ctrl_read32(h.ctrl, UCMD_NVME_REG_AQA), aqa);
	assert_int_equal(host_identify(&h, 1, 0, 0, id), 0);
	assert_int_equal(host_create_io_queue(&h, 1, 16, true, 1), 0);
	host_disable(&h);
	assert_int_equal(ctrl_read32(h.ctrl, UCMD_NVME_REG_CSTS) & UCMD_NVME_CSTS_RDY, 0);
	/* Re-enable: I/O queues are gone, so qid 1 can be created again. */
	assert_int_equal(host_enable(&h, 16), 0);
	assert_int_equal(host_identify(&h, 1, 0, 0, id), 0);
	assert_int_equal(host_create_io_queue(&h, 1, 16, true, 1), 0);
	host_close(&h);
}

static void test_shutdown(void **state)
{
	struct ucmd_ctrl_params p;
	struct host h;
	uint32_t cc;

	(void)state;
	host_default_params(&p);
	assert_int_equal(host_open(&h, &p), 0);
	cc = ctrl_read32(h.ctrl, UCMD_NVME_REG_CC);
	ctrl_write32(h.ctrl, UCMD_NVME_REG_CC, cc | 1u << UCMD_NVME_CC_SHN_SHIFT);
	assert_int_equal((ctrl_read32(h.ctrl, UCMD_NVME_REG_CSTS) >> 2) & 3, 2);
	host_close(&h);
}

static void test_bad_register_access(void **state)
{
	struct ucmd_ctrl_params p;
	struct host h;

	(void)state;
	host_default_params(&p);
	assert_int_equal(host_open(&h, &p), 0);
	/* Unaligned, read-only, reserved and past-the-doorbells writes are ignored. */
	ctrl_write32(h.ctrl, 0x15, 0xffffffff);
	ctrl_write32(h.ctrl, UCMD_NVME_REG_CAP, 0);
	ctrl_write32(h.ctrl, UCMD_NVME_REG_VS, 0);
	ctrl_write32(h.ctrl, 0x800, 1);
	ctrl_write32(h.ctrl, ucmd_nvme_db_offset(1000, 0, 0), 1);
	assert_int_equal(ctrl_read32(h.ctrl, UCMD_NVME_REG_VS), 0x00010400);
	assert_true(ctrl_read32(h.ctrl, UCMD_NVME_REG_CSTS) & UCMD_NVME_CSTS_RDY);
	host_close(&h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cap_vs),
		cmocka_unit_test(test_enable_validation),
		cmocka_unit_test(test_enable_disable),
		cmocka_unit_test(test_shutdown),
		cmocka_unit_test(test_bad_register_access),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
