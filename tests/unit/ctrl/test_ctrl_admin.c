/* SPDX-License-Identifier: MIT */
/* Abort and Asynchronous Event Request. */
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

static void test_aer_limit_and_abort(void **state)
{
	struct ucmd_ctrl_params p;
	struct host h;
	struct ucmd_nvme_cqe cqe;
	uint16_t cids[4];

	(void)state;
	host_default_params(&p);
	assert_int_equal(host_open(&h, &p), 0);
	for (int i = 0; i < 4; i++) {
		struct ucmd_nvme_sqe s = { .opcode = nvme_admin_async_event };
		cids[i] = host_push(&h, 0, &s);
	}
	host_ring(&h, 0);
	assert_false(host_pop(&h, 0, &cqe));	/* all held */
	struct ucmd_nvme_sqe s = { .opcode = nvme_admin_async_event };
	assert_int_equal(host_cmd(&h, 0, &s, NULL), SC(1, 0x05) | DNR);

	/* Abort a held AER: it completes with Abort Requested, Abort's DW0 bit 0 = 0 */
	struct ucmd_nvme_sqe a = { .opcode = nvme_admin_abort_cmd };
	a.cdw10 = (uint32_t)cids[1] << 16 | 0;
	uint16_t acid = host_push(&h, 0, &a);
	host_ring(&h, 0);
	bool got_aer = false, got_abort = false;
	while (host_pop(&h, 0, &cqe)) {
		if (cqe.cid == cids[1]) {
			assert_int_equal(ucmd_nvme_cqe_status(&cqe), SC(0, 0x07));
			got_aer = true;
		} else if (cqe.cid == acid) {
			assert_int_equal(ucmd_nvme_cqe_status(&cqe), 0);
			assert_int_equal(cqe.dw0 & 1, 0);
			got_abort = true;
		}
	}
	assert_true(got_aer && got_abort);
	/* Abort something that does not exist: DW0 bit 0 set */
	a.cdw10 = 0x7777u << 16 | 1;
	assert_int_equal(host_cmd(&h, 0, &a, &cqe), 0);
	assert_int_equal(cqe.dw0 & 1, 1);
	host_close(&h);
}

static void test_aer_masking(void **state)
{
	struct ucmd_ctrl_params p;
	struct ucmd_ns_params nsp = { .nsze = 64, .store = UCMD_NS_STORE_RAM, .attach = true };
	struct host h;
	struct ucmd_nvme_cqe cqe;
	uint32_t nsid;

	(void)state;
	host_default_params(&p);
	nsid = host_open_ns(&h, &p, &nsp);
	(void)nsid;
	struct ucmd_nvme_sqe s = { .opcode = nvme_admin_async_event };
	host_push(&h, 0, &s);
	host_push(&h, 0, &s);
	host_ring(&h, 0);
	/* Two invalid doorbells: only one error event until the log is read */
	ctrl_write32(h.ctrl, ucmd_nvme_db_offset(1, 0, 0), 999);
	assert_true(host_pop(&h, 0, &cqe));
	ctrl_write32(h.ctrl, ucmd_nvme_db_offset(2, 0, 0), 1);
	assert_false(host_pop(&h, 0, &cqe));
	uint8_t *log = host_alloc(&h, 4096);
	assert_int_equal(host_get_log(&h, NVME_LOG_LID_ERROR, 0, log, 4096), 0);
	/* reading the log unmasks: the queued event is delivered now */
	assert_true(host_pop(&h, 0, &cqe));
	assert_int_equal(cqe.dw0 & 0xffff, 0 | NVME_AER_ERROR_INVALID_DB_REG << 8);
	host_close(&h);
}

/*
 * A CQ head doorbell nobody waits for is staged, not run: the controller
 * reads it at its next pass. So a bad head value is reported then, by the
 * next SQ doorbell, and not lost.
 */
static void test_bad_cq_head_reported_at_next_pass(void **state)
{
	struct ucmd_ctrl_params p;
	struct ucmd_ns_params nsp = { .nsze = 64, .store = UCMD_NS_STORE_RAM, .attach = true };
	struct ucmd_nvme_sqe s = { .opcode = nvme_admin_async_event };
	struct ucmd_nvme_cqe cqe;
	struct host h;

	(void)state;
	host_default_params(&p);
	(void)host_open_ns(&h, &p, &nsp);
	host_push(&h, 0, &s);
	host_ring(&h, 0);
	ctrl_write32(h.ctrl, ucmd_nvme_db_offset(0, 1, 0), 9999);
	assert_false(host_pop(&h, 0, &cqe));
	host_ring(&h, 0);	/* the same tail: nothing new, but a pass */
	assert_true(host_pop(&h, 0, &cqe));
	assert_int_equal(cqe.dw0 & 0xffff, 0 | NVME_AER_ERROR_INVALID_DB_VAL << 8);
	host_close(&h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_aer_limit_and_abort),
		cmocka_unit_test(test_aer_masking),
		cmocka_unit_test(test_bad_cq_head_reported_at_next_pass),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
