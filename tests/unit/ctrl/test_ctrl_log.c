/* SPDX-License-Identifier: MIT */
/* Get Log Page: error ring, SMART counters, firmware slot, effects. */
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

static uint64_t u128(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

static void test_logs(void **state)
{
	struct ucmd_ctrl_params p;
	struct ucmd_ns_params nsp = { .nsze = 10000, .store = UCMD_NS_STORE_RAM, .attach = true };
	struct host h;
	uint32_t nsid;

	(void)state;
	host_default_params(&p);
	p.firmware = "FW1.2";
	nsid = host_open_ns(&h, &p, &nsp);
	uint8_t *buf = host_alloc(&h, 4096);
	struct nvme_smart_log *s = (void *)buf;

	/* SMART: 2000 blocks written = 2000 units of 512 bytes = 2 data units;
	 * 1 block read rounds up to 1 data unit. */
	uint8_t *d = host_alloc(&h, 1000 * 512);
	assert_int_equal(host_io(&h, nvme_cmd_write, nsid, 0, 1000, d, 1000 * 512, NULL, 0), 0);
	assert_int_equal(host_io(&h, nvme_cmd_write, nsid, 1000, 1000, d, 1000 * 512, NULL, 0), 0);
	assert_int_equal(host_io(&h, nvme_cmd_read, nsid, 0, 1, d, 512, NULL, 0), 0);
	assert_int_equal(host_get_log(&h, NVME_LOG_LID_SMART, 0xffffffff, buf, 512), 0);
	assert_int_equal(u128(s->data_units_written), 2);
	assert_int_equal(u128(s->data_units_read), 1);
	assert_int_equal(u128(s->host_writes), 2);
	assert_int_equal(u128(s->host_reads), 1);
	assert_int_equal(s->temperature[0] | s->temperature[1] << 8, 313);
	assert_int_equal(s->avail_spare, 100);
	assert_int_equal(s->percent_used, 0);
	assert_int_equal(u128(s->power_cycles), 1);
	assert_int_equal(s->critical_warning, 0);
	/* per-namespace SMART not supported */
	assert_int_equal(host_get_log(&h, NVME_LOG_LID_SMART, nsid, buf, 512), SC(0, 0x02) | DNR);

	/* Error log: newest first */
	assert_int_equal(host_io(&h, nvme_cmd_read, 77, 0, 1, d, 512, NULL, 0), SC(0, 0x0b) | DNR);
	assert_int_equal(host_io(&h, nvme_cmd_read, nsid, 10000, 1, d, 512, NULL, 0), SC(0, 0x80) | DNR);
	assert_int_equal(host_get_log(&h, NVME_LOG_LID_ERROR, 0, buf, 4096), 0);
	struct nvme_error_log_page *e = (void *)buf;
	assert_true(e[0].error_count > e[1].error_count);
	assert_int_equal(e[0].status_field >> 1, SC(0, 0x80) | DNR);
	assert_int_equal(e[0].sqid, 1);
	assert_int_equal(e[1].status_field >> 1, SC(0, 0x0b) | DNR);
	assert_int_equal(e[1].nsid, 77);
	assert_int_equal(host_get_log(&h, NVME_LOG_LID_SMART, 0, buf, 512), 0);
	assert_true(u128(s->num_err_log_entries) >= 3);	/* incl. the per-ns SMART one */

	/* Firmware slot */
	assert_int_equal(host_get_log(&h, NVME_LOG_LID_FW_SLOT, 0, buf, 512), 0);
	struct nvme_firmware_slot *fw = (void *)buf;
	assert_int_equal(fw->afi & 7, 1);
	assert_memory_equal(fw->frs[0], "FW1.2   ", 8);

	/* Effects: admin and I/O opcodes, from the dispatch tables */
	assert_int_equal(host_get_log(&h, NVME_LOG_LID_CMD_EFFECTS, 0, buf, 4096), 0);
	struct nvme_cmd_effects_log *ef = (void *)buf;
	assert_int_equal(ef->acs[nvme_admin_identify], NVME_CMD_EFFECTS_CSUPP);
	assert_true(ef->acs[nvme_admin_format_nvm] & NVME_CMD_EFFECTS_LBCC);
	assert_true(ef->acs[nvme_admin_ns_mgmt] & NVME_CMD_EFFECTS_NIC);
	assert_int_equal(ef->acs[nvme_admin_fw_commit], NVME_CMD_EFFECTS_CSUPP | NVME_CMD_EFFECTS_CCC);
	assert_int_equal(ef->acs[nvme_admin_sanitize_nvm],
			 NVME_CMD_EFFECTS_CSUPP | NVME_CMD_EFFECTS_LBCC | NVME_CMD_EFFECTS_NCC);
	assert_int_equal(ef->acs[nvme_admin_dev_self_test], NVME_CMD_EFFECTS_CSUPP);
	assert_int_equal(ef->acs[nvme_admin_security_send], 0);
	assert_int_equal(ef->iocs[nvme_cmd_read], NVME_CMD_EFFECTS_CSUPP);
	assert_int_equal(ef->iocs[nvme_cmd_write], NVME_CMD_EFFECTS_CSUPP | NVME_CMD_EFFECTS_LBCC);
	assert_int_equal(ef->iocs[nvme_cmd_flush], NVME_CMD_EFFECTS_CSUPP);
	assert_int_equal(ef->iocs[nvme_cmd_dsm], NVME_CMD_EFFECTS_CSUPP | NVME_CMD_EFFECTS_LBCC);
	assert_int_equal(ef->iocs[nvme_cmd_compare], NVME_CMD_EFFECTS_CSUPP);
	assert_int_equal(ef->iocs[nvme_cmd_resv_register], 0);
	/* Offset into a log */
	struct ucmd_nvme_sqe q = { .opcode = nvme_admin_get_log_page };
	q.cdw10 = NVME_LOG_LID_CMD_EFFECTS | (1023u << 16);
	q.cdw12 = 1024;
	host_set_prp(&h, &q, buf, 4096);
	assert_int_equal(host_cmd(&h, 0, &q, NULL), 0);
	assert_int_equal(((uint32_t *)buf)[nvme_cmd_write], NVME_CMD_EFFECTS_CSUPP | NVME_CMD_EFFECTS_LBCC);
	q.cdw12 = 2;	/* not dword aligned */
	assert_int_equal(host_cmd(&h, 0, &q, NULL), SC(0, 0x02) | DNR);
	/* unknown log */
	assert_int_equal(host_get_log(&h, 0x7e, 0, buf, 512), SC(1, 0x09) | DNR);
	host_close(&h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_logs),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
