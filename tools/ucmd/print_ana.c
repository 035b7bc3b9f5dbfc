/* SPDX-License-Identifier: MIT */
/*
 * ana-log: the Asymmetric Namespace Access log page (0Ch) as nvme-cli 2.3
 * prints it (normal, json with its keys, binary), walking the variable
 * length descriptors only within the len bytes read.
 */
#include <inttypes.h>
#include <stdio.h>

#include <nvme/types.h>

#include "print_priv.h"

static const char *ana_state_name(uint8_t s)
{
	switch (s) {
	case NVME_ANA_STATE_OPTIMIZED: return "optimized";
	case NVME_ANA_STATE_NONOPTIMIZED: return "non-optimized";
	case NVME_ANA_STATE_INACCESSIBLE: return "inaccessible";
	case NVME_ANA_STATE_PERSISTENT_LOSS: return "persistent-loss";
	case NVME_ANA_STATE_CHANGE: return "change";
	}
	return "invalid state";
}

void print_ana_log(const void *buf, size_t len, const char *devname, enum out_fmt f)
{
	const uint8_t *b = buf;
	struct json_object *root = NULL, *list = NULL;
	size_t off = sizeof(struct nvme_ana_log);
	unsigned ngrps;

	if (f == OUT_BINARY)
		return p_raw(buf, len);
	if (len < off)
		return;
	ngrps = pl16(b + 8);
	if (f == OUT_JSON) {
		root = json_object_new_object();
		list = json_object_new_array();
		pj_str(root, "Asymmetric Namespace Access Log for NVMe device", devname);
		pj_u64(root, "chgcnt", pl64(b));
		pj_int(root, "ngrps", ngrps);
	} else {
		printf("Asymmetric Namespace Access Log for NVMe device: %s\n", devname);
		printf("ANA LOG HEADER :-\n");
		printf("chgcnt\t:\t%" PRIu64 "\n", pl64(b));
		printf("ngrps\t:\t%u\n", ngrps);
		printf("ANA Log Desc :-\n");
	}
	for (unsigned i = 0; i < ngrps; i++) {
		const uint8_t *d = b + off;
		struct json_object *desc = NULL, *nsids = NULL;
		uint32_t nn;

		/* a descriptor, and its namespace list, must be within what was read */
		if (len - off < sizeof(struct nvme_ana_group_desc))
			break;
		nn = pl32(d + 4);
		if ((len - off - sizeof(struct nvme_ana_group_desc)) / 4 < nn)
			break;
		off += sizeof(struct nvme_ana_group_desc) + (size_t)nn * 4;
		if (root) {
			desc = json_object_new_object();
			nsids = json_object_new_array();
			pj_int(desc, "grpid", pl32(d));
			pj_int(desc, "nnsids", nn);
			pj_u64(desc, "chgcnt", pl64(d + 8));
			pj_str(desc, "state", ana_state_name(d[16]));
		} else {
			printf("grpid\t:\t%u\n", pl32(d));
			printf("nnsids\t:\t%u\n", nn);
			printf("chgcnt\t:\t%" PRIu64 "\n", pl64(d + 8));
			printf("state\t:\t%s\n", ana_state_name(d[16]));
		}
		for (uint32_t j = 0; j < nn; j++) {
			uint32_t nsid = pl32(d + sizeof(struct nvme_ana_group_desc) + 4 * j);

			if (nsids) {
				struct json_object *o = json_object_new_object();

				pj_int(o, "nsid", nsid);
				json_object_array_add(nsids, o);
			} else {
				printf("\tnsid\t:\t%u\n", nsid);
			}
		}
		if (desc) {
			json_object_object_add(desc, "NSIDS", nsids);
			json_object_array_add(list, desc);
		} else {
			printf("\n");
		}
	}
	if (root) {
		json_object_object_add(root, "ANA DESC LIST ", list);
		pj_print(root);
	}
}
