/* SPDX-License-Identifier: MIT */
/*
 * Who may send which passthrough command: Linux's nvme_cmd_allowed()
 * (drivers/nvme/host/ioctl.c, 6.2+), decided from the command, the
 * controller's Commands Supported and Effects log and the file's open mode.
 * Anything not allowed here needs CAP_SYS_ADMIN.
 */
#include "host.h"

/* Opcodes at or above this are vendor specific in both command sets. */
#define NVME_CMD_VENDOR_START	0x80
#define NVME_FABRICS_COMMAND	0x7f

/* Identify data needed to build I/O commands, and nothing sensitive. */
static bool nvme_identify_allowed(uint8_t cns)
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

static bool nvme_unprivileged_ok(struct nvme_host *h, struct nvme_ns *ns,
				 const struct ucmd_nvme_sqe *c, bool open_for_write)
{
	uint32_t effects;

	/* Vendor specific and fabrics commands: their effects are unknowable. */
	if (c->opcode >= NVME_CMD_VENDOR_START || c->opcode == NVME_FABRICS_COMMAND)
		return false;
	/* Admin commands (no namespace): only a subset of Identify. */
	if (!ns)
		return c->opcode == nvme_admin_identify && nvme_identify_allowed(c->cdw10 & 0xff);
	effects = nvme_command_effects(h, ns, c->opcode);
	if (!(effects & NVME_CMD_EFFECTS_CSUPP))
		return false;
	/* Intrusive or unknown effects */
	if (effects & ~(uint32_t)(NVME_CMD_EFFECTS_CSUPP | NVME_CMD_EFFECTS_LBCC |
				  NVME_CMD_EFFECTS_UUID_SEL | (0xfffu << 20)))
		return false;
	/* Data to the device or changed LBA contents need a file open for writing. */
	if (((c->opcode & 1) || (effects & NVME_CMD_EFFECTS_LBCC)) && !open_for_write)
		return false;
	return true;
}

bool nvme_cmd_allowed(struct nvme_host *h, struct nvme_ns *ns, const struct ucmd_nvme_sqe *c,
		      bool open_for_write, const struct ucmd_cred *cred)
{
	if (nvme_unprivileged_ok(h, ns, c, open_for_write))
		return true;
	return cred && cred->cap_sys_admin;
}
