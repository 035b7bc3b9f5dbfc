/* SPDX-License-Identifier: MIT */
/*
 * UCMDD_IOCTL: the synchronous path for a client. The engine runs ioctls
 * on memory it can touch, so the daemon does for it what the kernel's
 * ioctl path does with copy_from_user: reads the argument struct from the
 * client once, bounces every buffer the command names into daemon memory,
 * hands the engine a copy whose pointers are daemon pointers, and writes
 * back what Linux writes back (the result field, the data read).
 *
 * Only ioctls the daemon knows the argument of are passed on: the engine
 * would otherwise dereference a client address in the daemon's address
 * space. Those are the ones its devices accept (src/nvme/host/ioctl.c;
 * Linux's 32-bit NVME_IOCTL_ADMIN_CMD/IO_CMD are not among them, nor is
 * any block device ioctl): everything else is -ENOTTY, as from a driver
 * that does not know it, without the engine seeing it.
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "server/server.h"

/*
 * NVMe passthrough: struct nvme_passthru_cmd64 at carg. addr/data_len is
 * the data (vec: an iovec array of data_len entries), metadata/
 * metadata_len the separate metadata; the device reads them for a write
 * (opcode bit 0) and fills them otherwise.
 */
static int ioctl_passthru64(struct srv_client *c, int efd, unsigned long cmd, uint64_t carg,
			    bool vec)
{
	struct nvme_passthru_cmd64 u, k;
	struct srv_bounce data = { 0 }, meta = { 0 };
	struct srv_bounce_vec dvec = { 0 };
	bool write, has_data;
	size_t data_bytes = 0;
	int ret, put;

	if (srv_copy_from(c, &u, carg, sizeof(u)))
		return -EFAULT;
	k = u;
	write = u.opcode & 1;
	has_data = u.data_len != 0;
	/*
	 * The bounces start as a copy of the client's buffers even for a
	 * read: what the device does not write then reads back unchanged, as
	 * with Linux's pinned pages.
	 */
	k.addr = 0;
	if (has_data && vec) {
		ret = srv_bounce_vec_get(c, &dvec, u.addr, u.data_len, true);
		if (ret)
			return ret;
		k.addr = (uint64_t)(uintptr_t)dvec.div;
		for (unsigned i = 0; i < dvec.nr; i++)
			data_bytes += dvec.civ[i].iov_len;
	} else if (has_data) {
		ret = srv_bounce_get(c, &data, u.addr, u.data_len, true);
		if (ret)
			return ret;
		k.addr = (uint64_t)(uintptr_t)data.daddr;
		data_bytes = u.data_len;
	}
	/* the engine reads metadata only with data (nvme_build_user_request) */
	k.metadata = 0;
	if (has_data && u.metadata && u.metadata_len) {
		ret = srv_bounce_get(c, &meta, u.metadata, u.metadata_len, true);
		if (ret)
			goto out;
		k.metadata = (uint64_t)(uintptr_t)meta.daddr;
	}
	k.result = 0;
	ret = ucmd_ioctl(c->d->e, efd, cmd, &k);
	/* Linux's put_user() of the result: the command ran, the caller may still hear -EFAULT */
	if (ret >= 0 && srv_copy_to(c, carg + offsetof(struct nvme_passthru_cmd64, result),
				    &k.result, sizeof(k.result)))
		ret = -EFAULT;
out:
	/* data the device filled goes back when the command completed */
	put = srv_bounce_put(c, &meta, ret >= 0 && !write ? meta.len : 0);
	if (vec)
		put |= srv_bounce_vec_put(c, &dvec, ret >= 0 && !write ? data_bytes : 0);
	else
		put |= srv_bounce_put(c, &data, ret >= 0 && !write ? data_bytes : 0);
	if (put && ret >= 0)
		ret = -EFAULT;
	return ret;
}

int srv_ioctl(struct srv_client *c, int cfd, unsigned long cmd, uint64_t carg)
{
	int efd = srv_fd_get(c, cfd);

	if (efd < 0)
		return efd;
	switch (cmd) {
	case NVME_IOCTL_ID:
	case NVME_IOCTL_RESET:
		/* no argument: nothing of the client's reaches the engine */
		return ucmd_ioctl(c->d->e, efd, cmd, NULL);
	case NVME_IOCTL_ADMIN64_CMD:
	case NVME_IOCTL_IO64_CMD:
		return ioctl_passthru64(c, efd, cmd, carg, false);
	case NVME_IOCTL_IO64_CMD_VEC:
		return ioctl_passthru64(c, efd, cmd, carg, true);
	default:
		return -ENOTTY;
	}
}
