/* SPDX-License-Identifier: MIT */
/*
 * A zoned block device's geometry as Linux's queue limits say it: the zone
 * size (chunk_sectors), the zone count, the open/active limits and the
 * largest zone append, from the ZNS Identify Namespace and Controller
 * (CNS 05h / 06h with CSI 02h). A namespace that answers neither is not
 * zoned: its block device says "none".
 */
#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <nvme/types.h>

#include "lib/nvme_desc.h"
#include "preload/preload.h"

/* Linux's max_hw_sectors for these controllers (queue/max_hw_sectors_kb 2048) */
#define PL_MAX_HW_BYTES	(2048u * 1024u)

int pl_zone_info(const struct pl_devinfo *ctrl, const struct pl_devinfo *d, struct pl_zone_info *zi)
{
	struct nvme_id_ns *id = aligned_alloc(4096, NVME_IDENTIFY_DATA_SIZE);
	struct nvme_zns_id_ns *z = aligned_alloc(4096, NVME_IDENTIFY_DATA_SIZE);
	struct nvme_zns_id_ctrl *zc = aligned_alloc(4096, NVME_IDENTIFY_DATA_SIZE);
	uint64_t zsze;
	unsigned f;
	int ret = -ENOMEM;

	memset(zi, 0, sizeof(*zi));
	if (!id || !z || !zc || !ctrl || !d->lba_size)
		goto out;
	/*
	 * Its command set first (as Linux's scan): a CSI 02h Identify of a
	 * namespace of another set fails, and leaves an error log entry that
	 * no program under exec asked for.
	 */
	ret = pl_identify(ctrl, d->nsid, NVME_IDENTIFY_CNS_NS_DESC_LIST, NVME_CSI_NVM, z);
	if (ret)
		goto out;
	if (nvme_ns_csi_from_desc((const uint8_t *)z, NVME_IDENTIFY_DATA_SIZE) != NVME_CSI_ZNS) {
		ret = 0;	/* not zoned: zi says so */
		goto out;
	}
	ret = pl_identify(ctrl, d->nsid, NVME_IDENTIFY_CNS_CSI_NS, NVME_CSI_ZNS, z);
	if (ret)
		goto out;
	memset(id, 0, NVME_IDENTIFY_DATA_SIZE);
	{
		struct nvme_passthru_cmd64 cmd = {
			.opcode = nvme_admin_identify, .nsid = d->nsid,
			.addr = (uintptr_t)id, .data_len = NVME_IDENTIFY_DATA_SIZE,
			.cdw10 = NVME_IDENTIFY_CNS_NS,
		};

		ret = pl_admin(ctrl, &cmd);
		if (ret)
			goto out;
	}
	f = (id->flbas & 0xf) | ((id->flbas >> 5 & 3u) << 4);
	zsze = le64toh(z->lbafe[f & 63].zsze);
	if (!zsze) {
		ret = -EINVAL;
		goto out;
	}
	zi->zoned = true;
	zi->zone_sectors = zsze * d->lba_size / 512;
	zi->nr_zones = (uint32_t)(d->nlba / zsze);
	zi->max_open = le32toh(z->mor) + 1;	/* all ones (no limit) is 0 */
	zi->max_active = le32toh(z->mar) + 1;
	zi->append_max_bytes = PL_MAX_HW_BYTES;
	if (pl_identify(ctrl, 0, NVME_IDENTIFY_CNS_CSI_CTRL, NVME_CSI_ZNS, zc) == 0 && zc->zasl &&
	    zc->zasl < 20 && (4096ull << zc->zasl) < zi->append_max_bytes)
		zi->append_max_bytes = 4096u << zc->zasl;
	/* an append never crosses a zone */
	if (zsze * d->lba_size < zi->append_max_bytes)
		zi->append_max_bytes = (uint32_t)(zsze * d->lba_size);
	ret = 0;
out:
	free(id);
	free(z);
	free(zc);
	return ret;
}
