/* SPDX-License-Identifier: MIT */
/*
 * NVM capacity as Identify Controller reports it and Namespace Management
 * spends it. TNVMCAP is what namespaces may take in all: the controller's
 * ram_capacity when it has no directory (every namespace lives in memory,
 * ns.c bounds them by it), else what the filesystem holding the directory
 * holds (its size: the images are thin-provisioned files, which a
 * filesystem cannot make larger than itself in any case; ext4's 16 TiB
 * file limit would refuse a larger one), at most 1 PiB, the largest
 * namespace a store holds. Promising more would have a host that divides
 * TNVMCAP among its namespaces (nvme-cli's own tests do) refused with
 * Insufficient Capacity. UNVMCAP is TNVMCAP less every namespace's size,
 * attached or not (data and separate metadata), and a namespace that would
 * not fit in it is refused with Namespace Insufficient Capacity.
 */
#include <string.h>
#include <sys/statvfs.h>

#include "ctrl_int.h"

#define UCMD_TNVMCAP_STORE	(1ull << 50)

uint64_t ctrl_tnvmcap(const struct ucmd_ctrl *c)
{
	struct statvfs fs;
	uint64_t size;

	/* the subsystem's capacity: controller 1's directory, through any controller */
	if (c->primary)
		c = c->primary;
	if (!c->dir)
		return c->p.ram_capacity ? c->p.ram_capacity : UCMD_TNVMCAP_STORE;
	if (c->dirfd < 0 || fstatvfs(c->dirfd, &fs) ||
	    __builtin_mul_overflow((uint64_t)fs.f_blocks, (uint64_t)fs.f_frsize, &size))
		return UCMD_TNVMCAP_STORE;
	return size < UCMD_TNVMCAP_STORE ? size : UCMD_TNVMCAP_STORE;
}

uint64_t ctrl_unvmcap(const struct ucmd_ctrl *c)
{
	uint64_t total = ctrl_tnvmcap(c), used = 0;

	for (uint32_t i = 1; i <= UCMD_MAX_NS; i++) {
		const struct ctrl_ns *ns = c->ns[i];

		if (ns && __builtin_add_overflow(used, ctrl_ns_store_size(ns->nsze, ns->lbaf), &used))
			return 0;
	}
	return used >= total ? 0 : total - used;
}

bool ctrl_capacity_fits(const struct ucmd_ctrl *c, uint64_t nsze, uint8_t lbaf)
{
	uint64_t need;

	if (__builtin_mul_overflow(nsze, (uint64_t)ctrl_lbaf_ds(lbaf) + ctrl_lbaf_ms(lbaf), &need))
		return false;
	return need <= ctrl_unvmcap(c);
}

/* The two 128-bit little-endian fields of Identify Controller. */
void ctrl_id_ctrl_capacity(const struct ucmd_ctrl *c, struct nvme_id_ctrl *id)
{
	uint64_t t = htole64(ctrl_tnvmcap(c)), u = htole64(ctrl_unvmcap(c));

	memset(id->tnvmcap, 0, sizeof(id->tnvmcap));
	memset(id->unvmcap, 0, sizeof(id->unvmcap));
	memcpy(id->tnvmcap, &t, sizeof(t));
	memcpy(id->unvmcap, &u, sizeof(u));
}
