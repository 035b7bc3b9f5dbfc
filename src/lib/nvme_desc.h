/* SPDX-License-Identifier: MIT */
/*
 * The Namespace Identification Descriptor list (Identify CNS 03h), read by
 * the host driver (which namespaces get a block device) and by
 * libucmd-preload (which disks are zoned): header only, a pure function.
 */
#ifndef UCMD_LIB_NVME_DESC_H
#define UCMD_LIB_NVME_DESC_H

#include <stddef.h>
#include <stdint.h>

#include <nvme/types.h>

/*
 * The command set its CSI descriptor names; NVM if it has none. By bytes: a
 * descriptor follows the one before it without padding (a CSI one is 5
 * bytes), so it may start at an odd offset, where struct nvme_ns_id_desc
 * (2-byte aligned) must not be used in place.
 */
static inline uint8_t nvme_ns_csi_from_desc(const uint8_t *list, size_t len)
{
	size_t off = 0;

	while (off + sizeof(struct nvme_ns_id_desc) <= len) {
		const uint8_t nidt = list[off + offsetof(struct nvme_ns_id_desc, nidt)];
		const uint8_t nidl = list[off + offsetof(struct nvme_ns_id_desc, nidl)];
		const size_t nid = off + offsetof(struct nvme_ns_id_desc, nid);

		if (!nidl)
			break;	/* a zero length ends the list */
		if (nid + nidl > len)
			break;
		if (nidt == NVME_NIDT_CSI && nidl == NVME_NIDT_CSI_LEN)
			return list[nid];
		off = nid + nidl;
	}
	return NVME_CSI_NVM;
}

#endif /* UCMD_LIB_NVME_DESC_H */
