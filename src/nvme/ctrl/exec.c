/* SPDX-License-Identifier: MIT */
/*
 * Command dispatch. One table per command set gives the handler and the
 * Commands Supported and Effects bits; the effects log is generated from the
 * same tables, so what the log claims is exactly what the controller does.
 */
#include "ctrl_int.h"

#define CSUPP	NVME_CMD_EFFECTS_CSUPP
#define LBCC	NVME_CMD_EFFECTS_LBCC
#define NCC	NVME_CMD_EFFECTS_NCC
#define NIC	NVME_CMD_EFFECTS_NIC
#define CCC	NVME_CMD_EFFECTS_CCC
/* CSE 001b: no other command to the same namespace may run concurrently */
#define CSE_NS	(1u << 16)

const struct ucmd_ctrl_opdef ucmd_admin_cmds[256] = {
	[nvme_admin_delete_sq]     = { ucmd_admin_delete_sq, CSUPP },
	[nvme_admin_create_sq]     = { ucmd_admin_create_sq, CSUPP },
	[nvme_admin_get_log_page]  = { ucmd_admin_get_log, CSUPP },
	[nvme_admin_delete_cq]     = { ucmd_admin_delete_cq, CSUPP },
	[nvme_admin_create_cq]     = { ucmd_admin_create_cq, CSUPP },
	[nvme_admin_identify]      = { ucmd_admin_identify, CSUPP },
	[nvme_admin_abort_cmd]     = { ucmd_admin_abort, CSUPP },
	[nvme_admin_set_features]  = { ucmd_admin_set_features, CSUPP },
	[nvme_admin_get_features]  = { ucmd_admin_get_features, CSUPP },
	[nvme_admin_async_event]   = { ucmd_admin_aer, CSUPP },
	/* Creating/deleting namespaces changes the inventory... */
	[nvme_admin_ns_mgmt]       = { ucmd_admin_ns_mgmt, CSUPP | NIC },
	[nvme_admin_ns_attach]     = { ucmd_admin_ns_attach, CSUPP | NIC },
	/* ...formatting changes contents and capacity (LBA size). */
	[nvme_admin_format_nvm]    = { ucmd_admin_format, CSUPP | LBCC | NCC | CSE_NS },
};

const struct ucmd_ctrl_opdef ucmd_nvm_cmds[256] = {
	[nvme_cmd_flush]        = { ucmd_nvm_flush, CSUPP },
	[nvme_cmd_write]        = { ucmd_nvm_rw, CSUPP | LBCC },
	[nvme_cmd_read]         = { ucmd_nvm_rw, CSUPP },
	[nvme_cmd_write_uncor]  = { ucmd_nvm_write_uncor, CSUPP | LBCC },
	[nvme_cmd_compare]      = { ucmd_nvm_compare, CSUPP },
	[nvme_cmd_write_zeroes] = { ucmd_nvm_write_zeroes, CSUPP | LBCC },
	[nvme_cmd_dsm]          = { ucmd_nvm_dsm, CSUPP | LBCC },
	[nvme_cmd_verify]       = { ucmd_nvm_verify, CSUPP },
	[nvme_cmd_copy]         = { ucmd_nvm_copy, CSUPP | LBCC },
};

/*
 * A read-only controller (params.read_only) runs only commands that change
 * neither data nor saved state: the effects table says which change data or
 * the namespace inventory, and Set Features changes saved state with SV.
 */
static bool changes_state(const struct ucmd_req *req, const struct ucmd_ctrl_opdef *d)
{
	if (d->effects & (LBCC | NCC | NIC | CCC))
		return true;
	return req->sqid == 0 && req->cmd.opcode == nvme_admin_set_features &&
	       (req->cmd.cdw10 & (1u << 31));
}

uint32_t ucmd_ctrl_opcode_effects(bool admin, uint8_t opcode)
{
	const struct ucmd_ctrl_opdef *d = &(admin ? ucmd_admin_cmds : ucmd_nvm_cmds)[opcode];

	return d->fn ? d->effects : 0;
}

uint16_t ucmd_exec(struct ucmd_ctrl *c, struct ucmd_req *req)
{
	bool admin = req->sqid == 0;
	const struct ucmd_ctrl_opdef *d = &(admin ? ucmd_admin_cmds : ucmd_nvm_cmds)[req->cmd.opcode];
	uint8_t psdt = req->cmd.flags & UCMD_NVME_PSDT_MASK;

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
	return d->fn(c, req);
}
