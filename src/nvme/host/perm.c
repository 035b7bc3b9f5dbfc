/* SPDX-License-Identifier: MIT */
/*
 * Who may send which passthrough command: Linux's nvme_cmd_allowed()
 * (drivers/nvme/host/ioctl.c, 6.2+), decided from the command, the
 * controller's Commands Supported and Effects log and the file's open mode.
 * Anything not allowed here needs CAP_SYS_ADMIN.
 */
#include <string.h>

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

/*
 * Linux's rule for one command. Only the admin rule needs more than the
 * opcode (Identify's CNS in CDW10); an I/O command's answer depends on the
 * opcode, the effects log and the open mode alone.
 */
static bool nvme_unprivileged_ok(struct nvme_host *h, bool admin, uint8_t opcode,
				 uint32_t cdw10, bool open_for_write)
{
	uint32_t effects;

	/* Vendor specific and fabrics commands: their effects are unknowable. */
	if (opcode >= NVME_CMD_VENDOR_START || opcode == NVME_FABRICS_COMMAND)
		return false;
	/* Admin commands (no namespace): only a subset of Identify. */
	if (admin)
		return opcode == nvme_admin_identify && nvme_identify_allowed(cdw10 & 0xff);
	effects = nvme_command_effects(h, false, opcode);
	if (!(effects & NVME_CMD_EFFECTS_CSUPP))
		return false;
	/* Intrusive or unknown effects */
	if (effects & ~(uint32_t)(NVME_CMD_EFFECTS_CSUPP | NVME_CMD_EFFECTS_LBCC |
				  NVME_CMD_EFFECTS_UUID_SEL | (0xfffu << 20)))
		return false;
	/* Data to the device or changed LBA contents need a file open for writing. */
	if (((opcode & 1) || (effects & NVME_CMD_EFFECTS_LBCC)) && !open_for_write)
		return false;
	return true;
}

/*
 * The effects log is read once, before any namespace exists, and never
 * changes after: the I/O answers for every opcode and both open modes are
 * computed here, by the rule above, so a command looks its answer up.
 */
void nvme_init_io_perms(struct nvme_host *h)
{
	memset(h->io_unpriv, 0, sizeof(h->io_unpriv));
	for (unsigned wr = 0; wr < 2; wr++)
		for (unsigned op = 0; op < 256; op++)
			if (nvme_unprivileged_ok(h, false, (uint8_t)op, 0, wr))
				h->io_unpriv[wr][op / 64] |= 1ull << (op % 64);
}

bool nvme_cmd_allowed(struct nvme_host *h, struct nvme_ns *ns, uint8_t opcode, uint32_t cdw10,
		      bool open_for_write, const struct ucmd_cred *cred)
{
	if (ns ? (h->io_unpriv[open_for_write][opcode / 64] >> (opcode % 64)) & 1
	       : nvme_unprivileged_ok(h, true, opcode, cdw10, open_for_write))
		return true;
	return cred && cred->cap_sys_admin;
}
