/* SPDX-License-Identifier: MIT */
/*
 * NVME_IOCTL_ADMIN_CMD / NVME_IOCTL_IO_CMD carry struct nvme_passthru_cmd
 * (a 32-bit result); the daemon serves the 64-bit forms. The preload
 * (ioctl.c) and ucmd-supervise (sv_pass32.c) both widen the one into the
 * other, field by field as the kernel's nvme_user_cmd() reads it.
 */
#ifndef UCMD_PRELOAD_PASSTHRU32_H
#define UCMD_PRELOAD_PASSTHRU32_H

#include <string.h>

#include <linux/nvme_ioctl.h>

static inline void pl_passthru_widen(const struct nvme_passthru_cmd *c,
				     struct nvme_passthru_cmd64 *c64)
{
	memset(c64, 0, sizeof(*c64));
	c64->opcode = c->opcode;
	c64->flags = c->flags;
	c64->rsvd1 = c->rsvd1;
	c64->nsid = c->nsid;
	c64->cdw2 = c->cdw2;
	c64->cdw3 = c->cdw3;
	c64->metadata = c->metadata;
	c64->addr = c->addr;
	c64->metadata_len = c->metadata_len;
	c64->data_len = c->data_len;
	c64->cdw10 = c->cdw10;
	c64->cdw11 = c->cdw11;
	c64->cdw12 = c->cdw12;
	c64->cdw13 = c->cdw13;
	c64->cdw14 = c->cdw14;
	c64->cdw15 = c->cdw15;
	c64->timeout_ms = c->timeout_ms;
}

#endif
