/* SPDX-License-Identifier: MIT */
/*
 * NVME_IOCTL_ADMIN_CMD and NVME_IOCTL_IO_CMD (struct nvme_passthru_cmd, a
 * 32-bit result) on a static program's device: what libnvme 1.x sends for
 * every Identify and log page. The daemon serves the 64-bit forms, reading
 * the command from the memory its connection acts in; the program's
 * struct is 8 bytes too short for one, and there is no room of the
 * program's to build one in. So the command is built here, as the kernel
 * builds it (the preload's ioctl.c does the same), and sent on our own
 * connection (sv_own.c) with the data and metadata in a buffer of ours
 * shared with the daemon: copied from the program first for a command
 * that transfers to the controller (opcode bit 0, nvme_is_write), back to
 * it after one that transfers from it, and the result's low 32 bits
 * written to the program's struct, whatever the command's status, as
 * Linux writes them. A buffer the program cannot read is EFAULT before the
 * command; one it cannot write is EFAULT after it, the command done (as
 * through ucmdd for any read: docs/compat.md).
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <linux/nvme_ioctl.h>

#include <ucmd/daemon.h>

#include "preload/passthru32.h"
#include "preload/sv.h"

#define SV_PASS_MAX (16u << 20)	/* past any MDTS the daemon takes: EINVAL, as the kernel's limit */

int64_t sv_passthru32(struct sv *s, pid_t pid, struct sv_fd *f, unsigned long cmd, uint64_t arg)
{
	struct nvme_passthru_cmd c;
	struct nvme_passthru_cmd64 c64;
	uint64_t meta_at = 0;
	bool to_dev, data, meta;
	size_t total;
	void *buf = NULL;
	int ret, fd;

	if (sv_mem_in(pid, &c, arg, sizeof(c)))
		return -EFAULT;
	data = c.addr && c.data_len;
	meta = c.metadata && c.metadata_len;
	total = (data ? (size_t)c.data_len : 0) + (meta ? (size_t)c.metadata_len + 8 : 0);
	if (total > SV_PASS_MAX)
		return -EINVAL;
	fd = sv_own_dev_fd(s, f);
	if (fd < 0)
		return fd;
	if (total) {
		buf = ucmd_buf_alloc(s->own, total);
		if (!buf)
			return -ENOMEM;
		memset(buf, 0, total);
	}
	to_dev = c.opcode & 1;
	meta_at = data ? ((uint64_t)c.data_len + 7) & ~7ull : 0;
	if (to_dev && ((data && sv_mem_in(pid, buf, c.addr, c.data_len)) ||
		       (meta && sv_mem_in(pid, (char *)buf + meta_at, c.metadata, c.metadata_len)))) {
		ucmd_buf_free(s->own, buf);
		return -EFAULT;
	}
	pl_passthru_widen(&c, &c64);
	/* an address without a length moves nothing: none of the program's reaches our connection */
	c64.addr = data ? (uint64_t)(uintptr_t)buf : 0;
	c64.metadata = meta ? (uint64_t)(uintptr_t)((char *)buf + meta_at) : 0;
	ret = ucmd_ioctl(s->own, fd, cmd == NVME_IOCTL_ADMIN_CMD ? NVME_IOCTL_ADMIN64_CMD :
				   NVME_IOCTL_IO64_CMD, &c64);
	if (ret >= 0) {
		uint32_t res = (uint32_t)c64.result;

		if (sv_mem_out(pid, arg + offsetof(struct nvme_passthru_cmd, result), &res,
			       sizeof(res)) ||
		    (!to_dev && data && sv_mem_out(pid, c.addr, buf, c.data_len)) ||
		    (!to_dev && meta &&
		     sv_mem_out(pid, c.metadata, (char *)buf + meta_at, c.metadata_len)))
			ret = -EFAULT;
	}
	ucmd_buf_free(s->own, buf);
	return ret == -ENOTCONN ? -EIO : ret;
}
