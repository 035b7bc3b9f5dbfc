/* SPDX-License-Identifier: MIT */
/* describe(): NVMe commands in generic terms, table by table. */
#include "host_fixture.h"
#include "nvme/host/host.h"
#include "security/desc.h"

#include <string.h>

struct row {
	bool admin;
	uint8_t opcode;
	uint32_t cdw10, cdw11, cdw12;
	enum ucmd_verb verb;
	enum ucmd_dir dir;
	bool range, destructive;
};

static const struct row rows[] = {
	{ false, nvme_cmd_flush, 0, 0, 0, UCMD_VERB_FLUSH, UCMD_DIR_NONE, false, false },
	{ false, nvme_cmd_write, 10, 0, 7, UCMD_VERB_WRITE, UCMD_DIR_TO_DEVICE, true, true },
	{ false, nvme_cmd_read, 10, 0, 7, UCMD_VERB_READ, UCMD_DIR_FROM_DEVICE, true, false },
	{ false, nvme_cmd_write_uncor, 10, 0, 7, UCMD_VERB_WRITE_UNCOR, UCMD_DIR_NONE, true, true },
	{ false, nvme_cmd_compare, 10, 0, 7, UCMD_VERB_COMPARE, UCMD_DIR_TO_DEVICE, true, false },
	{ false, nvme_cmd_write_zeroes, 10, 0, 7, UCMD_VERB_WRITE_ZEROES, UCMD_DIR_NONE, true, true },
	{ false, nvme_cmd_dsm, 0, 1u << 2, 0, UCMD_VERB_TRIM, UCMD_DIR_TO_DEVICE, false, true },
	{ false, nvme_cmd_dsm, 0, 1u << 0, 0, UCMD_VERB_UNKNOWN, UCMD_DIR_TO_DEVICE, false, false },
	{ false, nvme_cmd_verify, 10, 0, 7, UCMD_VERB_VERIFY, UCMD_DIR_NONE, true, false },
	{ false, nvme_cmd_copy, 0, 0, 0, UCMD_VERB_COPY, UCMD_DIR_TO_DEVICE, false, true },
	{ false, nvme_cmd_resv_report, 0, 0, 0, UCMD_VERB_UNKNOWN, UCMD_DIR_FROM_DEVICE, false, false },
	{ false, 0x81, 0, 0, 0, UCMD_VERB_VENDOR, UCMD_DIR_TO_DEVICE, false, false },
	{ true, nvme_admin_identify, 1, 0, 0, UCMD_VERB_IDENTIFY, UCMD_DIR_FROM_DEVICE, false, false },
	{ true, nvme_admin_get_log_page, 2, 0, 0, UCMD_VERB_GET_LOG, UCMD_DIR_FROM_DEVICE, false, false },
	{ true, nvme_admin_get_features, 7, 0, 0, UCMD_VERB_GET_FEATURE, UCMD_DIR_FROM_DEVICE, false, false },
	{ true, nvme_admin_set_features, 7, 0, 0, UCMD_VERB_SET_FEATURE, UCMD_DIR_TO_DEVICE, false, false },
	{ true, nvme_admin_format_nvm, 0, 0, 0, UCMD_VERB_FORMAT, UCMD_DIR_NONE, false, true },
	{ true, nvme_admin_sanitize_nvm, 0, 0, 0, UCMD_VERB_SANITIZE, UCMD_DIR_NONE, false, true },
	/* Get LBA Status: a report about blocks, as the 0Eh log (not unknown, not a block read) */
	{ true, nvme_admin_get_lba_status, 0, 0, 0, UCMD_VERB_GET_LOG, UCMD_DIR_FROM_DEVICE, false,
	  false },
	{ true, nvme_admin_fw_download, 0, 0, 0, UCMD_VERB_FIRMWARE, UCMD_DIR_TO_DEVICE, false, false },
	{ true, nvme_admin_fw_commit, 0, 0, 0, UCMD_VERB_FIRMWARE, UCMD_DIR_NONE, false, false },
	{ true, nvme_admin_ns_mgmt, 0, 0, 0, UCMD_VERB_NS_MANAGE, UCMD_DIR_TO_DEVICE, false, false },
	{ true, nvme_admin_ns_mgmt, 1, 0, 0, UCMD_VERB_NS_MANAGE, UCMD_DIR_TO_DEVICE, false, true },
	{ true, nvme_admin_ns_attach, 0, 0, 0, UCMD_VERB_NS_ATTACH, UCMD_DIR_TO_DEVICE, false, false },
	{ true, nvme_admin_create_sq, 0, 0, 0, UCMD_VERB_QUEUE_MANAGE, UCMD_DIR_TO_DEVICE, false, false },
	{ true, nvme_admin_delete_cq, 0, 0, 0, UCMD_VERB_QUEUE_MANAGE, UCMD_DIR_NONE, false, false },
	{ true, nvme_admin_abort_cmd, 0, 0, 0, UCMD_VERB_ABORT, UCMD_DIR_NONE, false, false },
	{ true, nvme_admin_async_event, 0, 0, 0, UCMD_VERB_ASYNC_EVENT, UCMD_DIR_NONE, false, false },
	{ true, nvme_admin_security_send, 0, 0, 0, UCMD_VERB_UNKNOWN, UCMD_DIR_TO_DEVICE, false, false },
	{ true, 0xc1, 0, 0, 0, UCMD_VERB_VENDOR, UCMD_DIR_TO_DEVICE, false, false },
	{ true, 0x3c, 0, 0, 0, UCMD_VERB_UNKNOWN, UCMD_DIR_NONE, false, false },
};

static void test_table(void **state)
{
	struct nvme_ns ns = { .nsid = 1, .lba_shift = 12 };

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct row *r = &rows[i];
		struct ucmd_nvme_sqe c = { .opcode = r->opcode, .nsid = 1, .cdw10 = r->cdw10,
					   .cdw11 = r->cdw11, .cdw12 = r->cdw12 };
		struct ucmd_cmd_desc d;

		nvme_describe_cmd(NULL, r->admin ? "nvme0" : "ng0n1", 0, r->admin, &c,
				  r->admin ? NULL : &ns, &d);
		assert_int_equal(d.verb, r->verb);
		assert_int_equal(d.dir, r->dir);
		assert_int_equal(d.has_range, r->range);
		assert_int_equal(d.destructive, r->destructive);
		assert_int_equal(d.admin, r->admin);
		assert_int_equal(d.nsid, 1);
		if (r->range) {
			assert_int_equal(d.slba, 10);
			assert_int_equal(d.nlb, 8);
			assert_int_equal(d.offset, 10 * 4096);
			assert_int_equal(d.length, 8 * 4096);
		}
	}
}

/*
 * With the controller's effects log: the sub-selector policies match on,
 * and "intrusive" exactly where nvme_cmd_allowed() would need CAP_SYS_ADMIN.
 */
static void test_select_and_effects(void **state)
{
	struct fx f;
	struct ucmd_file *file;
	struct ucmd_cmd_desc d;

	(void)state;
	assert_int_equal(fx_setup(&f, NULL), 0);
	file = fget(f.e, f.ng);
	struct nvme_ns *ns = file->private_data;
	struct nvme_host *h = ns->host;
	struct {
		bool admin;
		uint8_t opcode;
		uint32_t cdw10;
		bool has_select;
		uint32_t select;
		bool intrusive;
	} rows[] = {
		{ true, nvme_admin_identify, 0x01, true, 0x01, false },
		{ true, nvme_admin_get_log_page, (0x3ffu << 16) | 0x02, true, 0x02, false },
		{ true, nvme_admin_get_features, 0x07, true, 0x07, false },
		{ true, nvme_admin_format_nvm, 0, false, 0, true },	/* NCC, CSE */
		{ false, nvme_cmd_read, 0, false, 0, false },
		{ false, nvme_cmd_write, 0, false, 0, false },		/* LBCC only */
		{ false, 0x7c, 0, false, 0, true },			/* not supported */
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct ucmd_nvme_sqe c = { .opcode = rows[i].opcode, .nsid = 1,
					   .cdw10 = rows[i].cdw10 };
		nvme_describe_cmd(h, rows[i].admin ? "nvme0" : "ng0n1", 0, rows[i].admin, &c,
				  rows[i].admin ? NULL : ns, &d);
		assert_int_equal(d.has_select, rows[i].has_select);
		assert_int_equal(d.select, rows[i].select);
		assert_int_equal(d.intrusive, rows[i].intrusive);
	}
	/* a write changes logical blocks: destructive from LBCC as well */
	struct ucmd_nvme_sqe w = { .opcode = nvme_cmd_write, .nsid = 1 };
	nvme_describe_cmd(h, "ng0n1", 0, false, &w, ns, &d);
	assert_true(d.destructive);
	fput(file);
	fx_teardown(&f);
}

/* Through the devices' ops, as the security hook chain calls them. */
static void test_ops(void **state)
{
	struct fx f;
	struct ucmd_file *file;

	(void)state;
	assert_int_equal(fx_setup(&f, NULL), 0);
	file = fget(f.e, f.ng);
	assert_non_null(file->ops->describe);
	assert_non_null(file->ops->ioctl);
	fput(file);
	file = fget(f.e, f.bdev);
	assert_non_null(file->ops->describe_rw);
	fput(file);
	fx_teardown(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_select_and_effects),
		cmocka_unit_test(test_ops),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
