/* SPDX-License-Identifier: MIT */
/*
 * Command dispatch. One table per command set gives the handler and the
 * Commands Supported and Effects bits; the effects log is generated from the
 * same tables, so what the log claims is exactly what the controller does.
 */
#include "fdp.h"
#include "zns.h"

#define CSUPP	NVME_CMD_EFFECTS_CSUPP
#define LBCC	NVME_CMD_EFFECTS_LBCC
#define NCC	NVME_CMD_EFFECTS_NCC
#define NIC	NVME_CMD_EFFECTS_NIC
#define CCC	NVME_CMD_EFFECTS_CCC
/* CSE 001b: no other command to the same namespace may run concurrently */
#define CSE_NS	(1u << 16)

const struct ctrl_ctrl_opdef ctrl_admin_cmds[256] = {
	[nvme_admin_delete_sq]     = { ctrl_admin_delete_sq, CSUPP },
	[nvme_admin_create_sq]     = { ctrl_admin_create_sq, CSUPP },
	[nvme_admin_get_log_page]  = { ctrl_admin_get_log, CSUPP },
	[nvme_admin_delete_cq]     = { ctrl_admin_delete_cq, CSUPP },
	[nvme_admin_create_cq]     = { ctrl_admin_create_cq, CSUPP },
	[nvme_admin_identify]      = { ctrl_admin_identify, CSUPP },
	[nvme_admin_abort_cmd]     = { ctrl_admin_abort, CSUPP },
	[nvme_admin_set_features]  = { ctrl_admin_set_features, CSUPP },
	[nvme_admin_get_features]  = { ctrl_admin_get_features, CSUPP },
	[nvme_admin_async_event]   = { ctrl_admin_aer, CSUPP },
	/* Creating/deleting namespaces changes the inventory... */
	[nvme_admin_ns_mgmt]       = { ctrl_admin_ns_mgmt, CSUPP | NIC },
	[nvme_admin_ns_attach]     = { ctrl_admin_ns_attach, CSUPP | NIC },
	/* ...formatting changes contents and capacity (LBA size). */
	[nvme_admin_format_nvm]    = { ctrl_admin_format, CSUPP | LBCC | NCC | CSE_NS },
	/* Committing changes the firmware revision Identify reports */
	[nvme_admin_fw_commit]     = { ctrl_admin_fw_commit, CSUPP | CCC },
	[nvme_admin_fw_download]   = { ctrl_admin_fw_download, CSUPP },
	[nvme_admin_dev_self_test] = { ctrl_admin_selftest, CSUPP },
	/* Every namespace's contents (and what it has allocated) change */
	[nvme_admin_sanitize_nvm]  = { ctrl_admin_sanitize, CSUPP | LBCC | NCC },	[nvme_admin_get_lba_status] = { ctrl_admin_get_lba_status, CSUPP },
};

const struct ctrl_ctrl_opdef ctrl_nvm_cmds[256] = {
	[nvme_cmd_flush]        = { ctrl_nvm_flush, CSUPP },
	[nvme_cmd_write]        = { ctrl_nvm_rw, CSUPP | LBCC },
	[nvme_cmd_read]         = { ctrl_nvm_rw, CSUPP },
	[nvme_cmd_write_uncor]  = { ctrl_nvm_write_uncor, CSUPP | LBCC },
	[nvme_cmd_compare]      = { ctrl_nvm_compare, CSUPP },
	[nvme_cmd_write_zeroes] = { ctrl_nvm_write_zeroes, CSUPP | LBCC },
	[nvme_cmd_dsm]          = { ctrl_nvm_dsm, CSUPP | LBCC },
	[nvme_cmd_verify]       = { ctrl_nvm_verify, CSUPP },
	[nvme_cmd_copy]         = { ctrl_nvm_copy, CSUPP | LBCC },
	[nvme_cmd_io_mgmt_recv] = { ctrl_fdp_io_mgmt_recv, CSUPP },
	[nvme_cmd_io_mgmt_send] = { ctrl_fdp_io_mgmt_send, CSUPP },
};

/*
 * A read-only controller (params.read_only) runs only commands that change
 * neither data nor saved state: the effects table says which change data or
 * the namespace inventory, and Set Features changes saved state with SV.
 */
static bool changes_state(const struct ctrl_req *req, const struct ctrl_ctrl_opdef *d)
{
	if (d->effects & (LBCC | NCC | NIC | CCC))
		return true;
	return req->sqid == 0 && req->cmd.opcode == nvme_admin_set_features &&
	       (req->cmd.cdw10 & (1u << 31));
}

uint32_t ctrl_opcode_effects(bool admin, uint8_t opcode)
{
	const struct ctrl_ctrl_opdef *d = &(admin ? ctrl_admin_cmds : ctrl_nvm_cmds)[opcode];

	/* the I/O opcodes of every command set the controller implements */
	if (!admin && !d->fn)
		d = ctrl_zns_op(opcode);
	return d->fn ? d->effects : 0;
}

/* An I/O opcode: the Zoned Namespace Command Set's own on a zoned (or no) namespace */
static const struct ctrl_ctrl_opdef *io_op(struct ucmd_ctrl *c, const struct ctrl_req *req)
{
	const struct ctrl_ctrl_opdef *z = ctrl_zns_op(req->cmd.opcode);
	struct ctrl_ns *ns;

	if (!z->fn)
		return &ctrl_nvm_cmds[req->cmd.opcode];
	ns = ctrl_ns_active(c, req->cmd.nsid);
	return !ns || ns->zoned ? z : &ctrl_nvm_cmds[req->cmd.opcode];
}

uint16_t ctrl_exec(struct ucmd_ctrl *c, struct ctrl_req *req)
{
	bool admin = req->sqid == 0;
	const struct ctrl_ctrl_opdef *d = admin ? &ctrl_admin_cmds[req->cmd.opcode] : io_op(c, req);
	uint8_t psdt = req->cmd.flags & UCMD_NVME_PSDT_MASK;
	uint16_t st;

	if (!d->fn)
		return UCMD_GEN(NVME_SC_INVALID_OPCODE) | UCMD_DNR;
	if (c->p.read_only && changes_state(req, d))
		return UCMD_GEN(NVME_SC_NS_WRITE_PROTECTED) | UCMD_DNR;
	/* Fused operations are not supported (FUSES = 0); bits 5:2 are reserved. */
	if (req->cmd.flags & 0x3fu)
		return UCMD_GEN(NVME_SC_INVALID_FIELD) | UCMD_DNR;
	/* PCIe admin commands use PRPs only; PSDT 11b is reserved. */
	if ((admin && psdt != UCMD_NVME_PSDT_PRP) || psdt == UCMD_NVME_PSDT_MASK)
		return UCMD_GEN(NVME_SC_INVALID_FIELD) | UCMD_DNR;
	/* firmware and device self-test are controller 1's */
	if (!ctrl_subsys_cmd_allowed(c, req))
		return UCMD_GEN(NVME_SC_INVALID_OPCODE) | UCMD_DNR;
	/* a sanitize runs on the whole subsystem (controller 1's lock is held) */
	st = ctrl_sanitize_check(ctrl_primary(c), req);
	if (st)
		return st;
	/* I/O through a controller whose ANA state leaves the namespace unreachable */
	if (!admin && (st = ctrl_subsys_ana_io(c, req)))
		return st;
	st = d->fn(c, req);
	/* user data written since the last sanitize: Global Data Erased goes */
	if (!admin && !st && (d->effects & LBCC))
		ctrl_sanitize_written(c);
	return st;
}
