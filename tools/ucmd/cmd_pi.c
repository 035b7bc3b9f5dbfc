/* SPDX-License-Identifier: MIT */
/*
 * The protection information fields of read, write, compare, verify and
 * write-zeroes as nvme-cli 2.3 fills them: PRINFO in CDW12 bits 29:26, STC
 * in bit 24, LBAT
 * and LBATM in CDW15, and the reference and storage tags laid out by the
 * namespace's format (NVM Identify Namespace's ELBAF: PIF and STS) over
 * CDW14 and, with the 64b guard, CDW3.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include <nvme/types.h>

#include "cli.h"
#include "print_priv.h"

/* The format in use: its PIF and STS; both 0 where the controller has no ELBAF */
static void pi_format(struct cli *cli, unsigned *pif, unsigned *sts)
{
	struct nvme_nvm_id_ns *id = aligned_alloc(4096, sizeof(*id));
	struct nvme_uring_cmd c = { .opcode = nvme_admin_identify, .nsid = cli->s.nsid };

	*pif = *sts = 0;
	if (!id)
		return;
	c.addr = (uint64_t)(uintptr_t)id;
	c.data_len = sizeof(*id);
	c.cdw10 = NVME_IDENTIFY_CNS_CSI_NS;
	c.cdw11 = (uint32_t)NVME_CSI_NVM << 24;
	if (!session_passthru(&cli->s, true, &c, NULL)) {
		uint32_t e = le32toh(id->elbaf[cli->s.lbaf]);

		*pif = (e & NVME_NVM_ELBAF_PIF_MASK) >> 7;
		*sts = e & NVME_NVM_ELBAF_STS_MASK;
	}
	free(id);
}

unsigned cli_pi_tuple_size(struct cli *cli)
{
	unsigned pif, sts;

	pi_format(cli, &pif, &sts);
	return pif == 2 ? 16 : 8;
}

int cli_pi_fields(struct cli *cli, const char *what, struct nvme_uring_cmd *c)
{
	const struct cmd_args *a = &cli->a;
	unsigned pif, sts, width;
	uint64_t field;

	if (a->prinfo > 0xf) {
		fprintf(stderr, "%s: invalid value for prinfo: %#x (0 to 0xf)\n", what, a->prinfo);
		return -EINVAL;
	}
	c->cdw12 |= a->prinfo << 26;
	/* STC, CDW12 bit 24: the controller ignores it where the format has no storage tag */
	if (a->stag_check)
		c->cdw12 |= 1u << 24;
	c->cdw15 = a->lbat | a->lbatm << 16;
	if (!a->ref_tag && !a->storage_tag)
		return 0;
	pi_format(cli, &pif, &sts);
	if (pif != 0 && pif != 2) {
		fprintf(stderr, "%s: protection information format %u is not supported\n", what, pif);
		return -EINVAL;
	}
	/* reference tag below, storage tag above: 32 bits (16b guard) or 48 (64b) */
	width = pif == 2 ? 48 : 32;
	if (sts > width || (a->ref_tag >> (width - sts)) ||
	    (sts < 64 && (a->storage_tag >> sts))) {
		fprintf(stderr, "%s: storage tag and reference tag don't fit (%u-bit reference tag, "
			"%u-bit storage tag)\n", what, width - sts, sts);
		return -EINVAL;
	}
	field = a->ref_tag | (sts ? a->storage_tag << (width - sts) : 0);
	c->cdw14 = (uint32_t)field;
	if (pif == 2)
		c->cdw3 = (uint32_t)(field >> 32) & 0xffff;
	return 0;
}

/* nvm-id-ns: the NVM Command Set Identify Namespace as nvme-cli 2.3 prints it */
int cmd_nvm_id_ns(struct cli *cli, int argc, char **argv)
{
	struct nvme_nvm_id_ns *nvm;
	struct nvme_id_ns *id;
	unsigned inuse;

	(void)argc;
	(void)argv;
	id = cli_identify(cli, "nvm-id-ns", NVME_IDENTIFY_CNS_NS, cli->s.nsid);
	if (!id)
		return 1;
	nvm = cli_identify_csi(cli, "nvm-id-ns", NVME_IDENTIFY_CNS_CSI_NS, NVME_CSI_NVM,
			       cli->s.nsid);
	if (!nvm) {
		free(id);
		return 1;
	}
	inuse = (id->flbas & NVME_NS_FLBAS_LOWER_MASK) | ((id->flbas & NVME_NS_FLBAS_HIGHER_MASK) >> 1);
	if (cli->a.fmt == OUT_BINARY) {
		p_raw(nvm, sizeof(*nvm));
	} else if (cli->a.fmt == OUT_JSON) {
		struct json_object *o = json_object_new_object(), *a = json_object_new_array();

		pj_int(o, "lbstm", (int64_t)le64toh(nvm->lbstm));
		pj_int(o, "pic", nvm->pic);
		for (unsigned i = 0; i <= id->nlbaf && i < 64; i++) {
			struct json_object *l = json_object_new_object();
			uint32_t e = le32toh(nvm->elbaf[i]);

			pj_int(l, "sts", e & NVME_NVM_ELBAF_STS_MASK);
			pj_int(l, "pif", (e & NVME_NVM_ELBAF_PIF_MASK) >> 7);
			json_object_array_add(a, l);
		}
		json_object_object_add(o, "elbafs", a);
		pj_print(o);
	} else {
		printf("NVMe NVM Identify Namespace %u:\n", cli->s.nsid);
		printf("lbstm : %#" PRIx64 "\n", (uint64_t)le64toh(nvm->lbstm));
		printf("pic   : %#x\n", nvm->pic);
		for (unsigned i = 0; i <= id->nlbaf && i < 64; i++) {
			uint32_t e = le32toh(nvm->elbaf[i]);

			/* nvme-cli 2.3 labels the storage tag size "lbads" */
			printf("elbaf %2u : pif:%u lbads:%-2u %s\n", i,
			       (e & NVME_NVM_ELBAF_PIF_MASK) >> 7, e & NVME_NVM_ELBAF_STS_MASK,
			       i == inuse ? "(in use)" : "");
		}
	}
	free(nvm);
	free(id);
	return 0;
}
