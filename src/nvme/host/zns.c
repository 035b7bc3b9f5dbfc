/* SPDX-License-Identifier: MIT */
/*
 * What a namespace's command set means for its block device. A zoned
 * namespace (CSI 02h) gets nvmeXnY only where Linux gives it one: no zone
 * operation characteristics it cannot honour (zoc 0) and a zone size that is
 * a power of two (the block layer's zones are chunk_sectors, a power of two),
 * and a controller that answers the ZNS Identify Controller (CNS 06h: Linux
 * reads its zone append limit before it sets up the first zoned disk, and
 * gives up on the disk when that fails). Otherwise only the generic device
 * ngXnY is there, as Linux hides the disk.
 */
#include <endian.h>
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "host.h"
#include "lib/nvme_desc.h"

#define NVME_CNS_NS_DESC_LIST	0x03
#define NVME_CNS_CSI_NS		0x05
#define NVME_CNS_CSI_CTRL	0x06

static int nvme_identify_csi(struct nvme_host *h, uint8_t cns, uint8_t csi, uint32_t nsid,
			     void *buf)
{
	struct ucmd_nvme_sqe c = { .opcode = nvme_admin_identify, .nsid = nsid };
	int st;

	c.cdw10 = cns;
	c.cdw11 = (uint32_t)csi << 24;
	st = nvme_submit_sync_cmd(h, &c, buf, NVME_IDENTIFY_DATA_SIZE, NULL);
	return st > 0 ? -EIO : st;
}

void nvme_ns_pi(struct nvme_host *h, struct nvme_ns *ns, const struct nvme_id_ns *id, unsigned lbaf)
{
	struct nvme_nvm_id_ns *nvm;

	ns->pi_type = id->dps & NVME_NS_DPS_PI_MASK;
	ns->pi_size = 8;
	if (!ns->pi_type)
		return;
	nvm = aligned_alloc(NVME_PAGE_SIZE, NVME_IDENTIFY_DATA_SIZE);
	if (!nvm)
		return;
	memset(nvm, 0, NVME_IDENTIFY_DATA_SIZE);
	/* PIF 2h: the 64b guard; a controller without this Identify has 16b guards only */
	if (!nvme_identify_csi(h, NVME_CNS_CSI_NS, NVME_CSI_NVM, ns->nsid, nvm) &&
	    (le32toh(nvm->elbaf[lbaf & 63]) & NVME_NVM_ELBAF_PIF_MASK) >> 7 == 2)
		ns->pi_size = 16;
	free(nvm);
}

int nvme_zns_ns_info(struct nvme_ns *ns, const struct nvme_zns_id_ns *z, unsigned lbaf)
{
	uint64_t zsze = le64toh(z->lbafe[lbaf & 63].zsze);

	ns->zoned = true;
	ns->zone_blocks = zsze;
	/* 0-based counts; all ones (no limit) wraps to 0, Linux's "no limit" */
	ns->max_open_zones = le32toh(z->mor) + 1;
	ns->max_active_zones = le32toh(z->mar) + 1;
	ns->no_bdev = le16toh(z->zoc) != 0 || !zsze || (zsze & (zsze - 1)) != 0;
	return ns->no_bdev ? -ENODEV : 0;
}

int nvme_ns_query_csi(struct nvme_host *h, struct nvme_ns *ns, unsigned lbaf)
{
	uint8_t *buf = aligned_alloc(NVME_PAGE_SIZE, NVME_IDENTIFY_DATA_SIZE);
	uint8_t csi;
	int ret;

	if (!buf)
		return -ENOMEM;
	memset(buf, 0, NVME_IDENTIFY_DATA_SIZE);
	ns->zoned = false;
	ns->no_bdev = false;
	/* a controller without the list (before NVMe 1.3) has only NVM namespaces */
	ret = nvme_identify_csi(h, NVME_CNS_NS_DESC_LIST, 0, ns->nsid, buf);
	if (ret == -EIO)
		ret = 0;
	if (ret)
		goto out;
	csi = nvme_ns_csi_from_desc(buf, NVME_IDENTIFY_DATA_SIZE);
	if (csi == NVME_CSI_NVM)
		goto out;
	if (csi != NVME_CSI_ZNS) {
		/* a command set the block layer cannot present: the generic device only */
		ns->no_bdev = true;
		goto out;
	}
	memset(buf, 0, NVME_IDENTIFY_DATA_SIZE);
	ret = nvme_identify_csi(h, NVME_CNS_CSI_NS, NVME_CSI_ZNS, ns->nsid, buf);
	if (ret == -EIO) {
		ns->zoned = true;
		ns->no_bdev = true;
		ret = 0;
		goto out;
	}
	if (!ret)
		nvme_zns_ns_info(ns, (const struct nvme_zns_id_ns *)buf, lbaf);
	if (!ret && !ns->no_bdev) {
		memset(buf, 0, NVME_IDENTIFY_DATA_SIZE);
		ret = nvme_identify_csi(h, NVME_CNS_CSI_CTRL, NVME_CSI_ZNS, 0, buf);
		if (ret == -EIO) {
			ns->no_bdev = true;	/* refused: the namespace stays, the disk does not */
			ret = 0;
		}
	}
out:
	free(buf);
	return ret;
}
