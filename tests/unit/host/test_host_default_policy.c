/* SPDX-License-Identifier: MIT */
/*
 * The default policy (policy/default.ini) is the only place Linux's
 * nvme_cmd_allowed() rules live in ucmd: the driver checks nothing itself.
 * Its decisions must be Linux's. The oracle below is a C transcription of
 * nvme_cmd_allowed() (drivers/nvme/host/ioctl.c, 6.2+; ucmd's driver ran it
 * until the rules moved into the module); the test compares the two over
 * every admin and I/O opcode, every Identify CNS, both open modes, with and
 * without CAP_SYS_ADMIN, on the fixture's controller and its effects log.
 */
#include "host_fixture.h"
#include "nvme/host/host.h"
#include "security/security.h"

#include <fcntl.h>
#include <nvme/types.h>
#include <stdio.h>
#include <string.h>

/* ---- the oracle: Linux's nvme_cmd_allowed() ------------------------------- */

#define NVME_CMD_VENDOR_START	0x80
#define NVME_FABRICS_COMMAND	0x7f

static bool oracle_identify_allowed(uint8_t cns)
{
	switch (cns) {
	case NVME_IDENTIFY_CNS_NS:
	case NVME_IDENTIFY_CNS_CSI_NS:
	case NVME_IDENTIFY_CNS_CSI_INDEPENDENT_ID_NS:
	case NVME_IDENTIFY_CNS_CSI_CTRL:
	case NVME_IDENTIFY_CNS_CTRL:
		return true;
	default:
		return false;
	}
}

static bool oracle_cmd_allowed(struct nvme_host *h, bool admin, uint8_t opcode, uint32_t cdw10,
			       bool open_for_write, bool cap_sys_admin)
{
	uint32_t effects;

	if (cap_sys_admin)
		return true;
	if (opcode >= NVME_CMD_VENDOR_START || opcode == NVME_FABRICS_COMMAND)
		return false;
	if (admin)
		return opcode == nvme_admin_identify && oracle_identify_allowed(cdw10 & 0xff);
	effects = nvme_command_effects(h, false, opcode);
	if (!(effects & NVME_CMD_EFFECTS_CSUPP))
		return false;
	if (effects & ~(uint32_t)(NVME_CMD_EFFECTS_CSUPP | NVME_CMD_EFFECTS_LBCC |
				  NVME_CMD_EFFECTS_UUID_SEL | (0xfffu << 20)))
		return false;
	if (((opcode & 1) || (effects & NVME_CMD_EFFECTS_LBCC)) && !open_for_write)
		return false;
	return true;
}

/* ---- the policy's answer for the same command ----------------------------- */

static bool policy_allows(const struct ucmd_policy *p, struct nvme_host *h, struct nvme_ns *ns,
			  bool admin, uint8_t opcode, uint32_t cdw10, uint32_t cdw11,
			  unsigned f_mode, bool cap)
{
	struct ucmd_nvme_sqe c;
	struct ucmd_cmd_desc d;
	struct ucmd_cred cred = { .pid = 1, .uid = 65534, .euid = 65534, .gid = 65534,
				  .egid = 65534, .cap_sys_admin = cap };
	struct ucmd_policy_subject s = { .hook = UCMD_HOOK_URING_CMD, .cred = &cred,
					 .f_mode = f_mode, .desc = &d };
	struct ucmd_policy_verdict v;

	memset(&c, 0, sizeof(c));
	c.opcode = opcode;
	c.nsid = ns ? ns->nsid : 0;
	c.cdw10 = cdw10;
	c.cdw11 = cdw11;
	nvme_describe_cmd(h, admin ? h->name : ns->ng_name,
			  admin ? NVME_URING_CMD_ADMIN : NVME_URING_CMD_IO, admin, &c, ns, &d);
	policy_eval(p, &s, &v);
	return v.allow;
}

static void compare_all(const struct fx_opts *o);

static void test_default_policy_is_nvme_cmd_allowed(void **state)
{
	struct fx_opts o = { .mode = UCMD_CTRL_INLINE };

	(void)state;
	compare_all(&o);
}

/*
 * A zoned namespace: the same comparison (Linux judges its commands by the
 * zoned command set's effects log), and what that means for Zone Append and
 * the zone reports of a user without CAP_SYS_ADMIN.
 */
static void test_default_policy_zoned(void **state)
{
	struct fx_opts o = { .mode = UCMD_CTRL_INLINE, .nsze = 4096, .zone_size = 512 };
	struct ucmd_policy *p;
	struct nvme_host *h;
	struct fx f;
	char err[256];

	(void)state;
	compare_all(&o);
	assert_int_equal(fx_setup(&f, &o), 0);
	h = (struct nvme_host *)f.host;
	assert_int_equal(ucmd_policy_load_default(&p, err, sizeof(err)), 0);
	/* writers may append and manage zones, readers may report them */
	assert_true(policy_allows(p, h, h->ns[0], false, nvme_zns_cmd_append, 0, 0,
				  FMODE_READ | FMODE_WRITE, false));
	assert_false(policy_allows(p, h, h->ns[0], false, nvme_zns_cmd_append, 0, 0, FMODE_READ,
				   false));
	assert_true(policy_allows(p, h, h->ns[0], false, nvme_zns_cmd_mgmt_send, 0, 0,
				  FMODE_READ | FMODE_WRITE, false));
	assert_false(policy_allows(p, h, h->ns[0], false, nvme_zns_cmd_mgmt_send, 0, 0,
				   FMODE_READ, false));
	assert_true(policy_allows(p, h, h->ns[0], false, nvme_zns_cmd_mgmt_recv, 0, 0, FMODE_READ,
				  false));
	ucmd_policy_put(p);
	fx_teardown(&f);
}

static void compare_all(const struct fx_opts *o)
{
	struct fx f;
	struct ucmd_policy *p;
	struct nvme_host *h;
	struct nvme_ns *ns;
	char err[256];
	unsigned checked = 0, mismatches = 0;

	assert_int_equal(fx_setup(&f, o), 0);
	h = (struct nvme_host *)f.host;
	assert_true(h->nr_ns >= 1);
	ns = h->ns[0];
	assert_int_equal(ucmd_policy_load_default(&p, err, sizeof(err)), 0);
	for (unsigned cap = 0; cap < 2; cap++) {
		for (unsigned wr = 0; wr < 2; wr++) {
			unsigned f_mode = FMODE_READ | (wr ? FMODE_WRITE : 0);

			for (unsigned op = 0; op < 256; op++) {
				/* admin: every opcode; Identify with every CNS */
				for (unsigned cns = 0; cns < (op == nvme_admin_identify ? 256u : 1u);
				     cns++) {
					bool want = oracle_cmd_allowed(h, true, (uint8_t)op, cns, wr,
								       cap);
					bool got = policy_allows(p, h, NULL, true, (uint8_t)op, cns,
								 0, f_mode, cap);

					checked++;
					if (want != got && mismatches++ < 10)
						print_message("admin op %#x cns %#x wr %u cap %u: "
							      "Linux %d policy %d\n", op, cns, wr,
							      cap, want, got);
				}
				/* I/O: DSM with and without the Deallocate attribute */
				for (unsigned ad = 0; ad < (op == nvme_cmd_dsm ? 2u : 1u); ad++) {
					bool want = oracle_cmd_allowed(h, false, (uint8_t)op, 0, wr,
								       cap);
					bool got = policy_allows(p, h, ns, false, (uint8_t)op, 0,
								 ad ? 1u << 2 : 0, f_mode, cap);

					checked++;
					if (want != got && mismatches++ < 10)
						print_message("io op %#x ad %u wr %u cap %u: Linux %d "
							      "policy %d\n", op, ad, wr, cap, want,
							      got);
				}
			}
		}
	}
	assert_true(checked > 4 * 512);
	assert_int_equal(mismatches, 0);
	ucmd_policy_put(p);
	fx_teardown(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_default_policy_is_nvme_cmd_allowed),
		cmocka_unit_test(test_default_policy_zoned),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
