/* SPDX-License-Identifier: MIT */
/*
 * Identify: controller, namespace (common, I/O command set specific and
 * independent), namespace lists, descriptors, controller lists and the I/O
 * command set combinations. Every data structure is libnvme's and 4 KiB.
 */
#include <stdio.h>
#include <string.h>

#include "fdp.h"
#include "zns.h"

#define NSID_ALL	0xffffffffu

/* Space padded, not NUL terminated (spec strings) */
static void pad_copy(char *dst, size_t len, const char *src)
{
	size_t n = strlen(src);

	memset(dst, ' ', len);
	memcpy(dst, src, n < len ? n : len);
}

static void id_ctrl(struct ucmd_ctrl *c, struct nvme_id_ctrl *id)
{
	id->vid = htole16(0x1b36);	/* the same PCI IDs as QEMU's model */
	id->ssvid = htole16(0x1af4);
	pad_copy(id->sn, sizeof(id->sn), c->serial);
	pad_copy(id->mn, sizeof(id->mn), c->model);
	pad_copy(id->fr, sizeof(id->fr), c->firmware);
	id->rab = 6;
	id->ieee[0] = 0x00; id->ieee[1] = 0x54; id->ieee[2] = 0x52;
	id->mdts = c->p.mdts;
	id->cntlid = htole16(c->p.cntlid);
	id->ver = htole32(0x00010400);
	id->oaes = htole32(NVME_CTRL_OAES_NA | NVME_CTRL_OAES_ZD);
	/*
	 * ELBAS: the NVM Identify Namespace's ELBAF says which formats have the
	 * 64b guard; one Endurance Group (UCMD_ENDGID) holds every namespace
	 * (with FDP, the group FDP is enabled in: fdp.c adds FDPS)
	 */
	id->ctratt = htole32(NVME_CTRL_CTRATT_128_ID | NVME_CTRL_CTRATT_ELBAS |
			     NVME_CTRL_CTRATT_ENDURANCE_GROUPS);
	id->endgidmax = htole16(UCMD_ENDGID);
	id->cntrltype = 1;	/* I/O controller */
	id->oacs = htole16(NVME_CTRL_OACS_FORMAT | NVME_CTRL_OACS_FW | NVME_CTRL_OACS_NS_MGMT |
			   NVME_CTRL_OACS_SELF_TEST | NVME_CTRL_OACS_LBA_STATUS);
	id->acl = 3;
	id->aerl = UCMD_AERL;
	/* Slot 1 read-only, UCMD_FW_SLOTS slots, activation without a reset */
	id->frmw = NVME_CTRL_FRMW_1ST_RO | (UCMD_FW_SLOTS << 1) | NVME_CTRL_FRMW_FW_ACT_NO_RESET;
	id->fwug = 1;		/* 4 KiB (firmware.c) */
	id->lpa = NVME_CTRL_LPA_CMD_EFFECTS | NVME_CTRL_LPA_EXTENDED | NVME_CTRL_LPA_TELEMETRY |
		  NVME_CTRL_LPA_PERSETENT_EVENT;
	id->pels = htole32(1);	/* 64 KiB units: the log is one event (log_pel.c) */
	id->elpe = UCMD_ERRLOG_ENTRIES - 1;
	id->npss = 0;
	/* an extended self-test takes c->dst.ext_ms: in minutes, rounded up */
	id->edstt = htole16((uint16_t)((c->dst.ext_ms + 59999) / 60000));
	id->dsto = 1;		/* one self-test at a time */
	/* all three actions; No-Deallocate leaves the media as the action left it */
	id->sanicap = htole32(NVME_CTRL_SANICAP_CES | NVME_CTRL_SANICAP_BES |
			      NVME_CTRL_SANICAP_OWS | (1u << 30));
	id->wctemp = htole16(UCMD_WCTEMP);
	id->cctemp = htole16(UCMD_CCTEMP);
	id->sqes = (6 << 4) | 6;
	id->cqes = (4 << 4) | 4;
	id->maxcmd = 0;
	id->nn = htole32(UCMD_MAX_NS);
	id->oncs = htole16(NVME_CTRL_ONCS_COMPARE | NVME_CTRL_ONCS_WRITE_UNCORRECTABLE |
			   NVME_CTRL_ONCS_DSM | NVME_CTRL_ONCS_WRITE_ZEROES |
			   NVME_CTRL_ONCS_SAVE_FEATURES | NVME_CTRL_ONCS_TIMESTAMP |
			   NVME_CTRL_ONCS_VERIFY | NVME_CTRL_ONCS_COPY);
	/* Format applies to one namespace; a secure erase only to it. */
	id->fna = 0;
	/* Volatile write cache present; Flush with NSID FFFFFFFFh supported. */
	id->vwc = NVME_CTRL_VWC_PRESENT | (3 << 1);
	/* Copy source range formats 0h (16b guard) and 1h (64b guard) */
	id->ocfs = htole16(1u << 0 | 1u << 1);
	/* SGLs without alignment requirement; MPTR may be an SGL. */
	id->sgls = htole32(1 | NVME_CTRL_SGLS_OVERSIZE | NVME_CTRL_SGLS_MPTR_SGL);
	id->mnan = htole32(UCMD_MAX_NS);
	ctrl_id_ctrl_capacity(c, id);
	/* Per directory, made at creation (ctrl.c) and kept in ctrl.json */
	snprintf(id->subnqn, sizeof(id->subnqn), "%s", c->subnqn);
	id->psd[0].mp = htole16(2500);	/* 25 W, in 0.01 W */
	ctrl_fdp_id_ctrl(c, id);
	ctrl_subsys_id_ctrl(c, id);
}

static void id_ns_desc(const struct ctrl_ns *ns, uint8_t *buf)
{
	struct nvme_ns_id_desc *d = (void *)buf;
	uint8_t csi = NVME_CSI_NVM;

	d->nidt = NVME_NIDT_EUI64;
	d->nidl = NVME_NIDT_EUI64_LEN;
	memcpy(d->nid, ns->uuid, NVME_NIDT_EUI64_LEN);
	d = (void *)(d->nid + d->nidl);
	d->nidt = NVME_NIDT_NGUID;
	d->nidl = NVME_NIDT_NGUID_LEN;
	memcpy(d->nid, ns->uuid, NVME_NIDT_NGUID_LEN);
	d = (void *)(d->nid + d->nidl);
	d->nidt = NVME_NIDT_UUID;
	d->nidl = NVME_NIDT_UUID_LEN;
	memcpy(d->nid, ns->uuid, NVME_NIDT_UUID_LEN);
	d = (void *)(d->nid + d->nidl);
	d->nidt = NVME_NIDT_CSI;
	d->nidl = NVME_NIDT_CSI_LEN;
	if (ns->zoned)
		csi = NVME_CSI_ZNS;
	memcpy(d->nid, &csi, 1);
}

/*
 * The extended LBA formats: each one's Protection Information Format (bits
 * 8:7) and Storage Tag Size (bits 6:0; non-zero on formats 12 and 13 only).
 * PIC: 16BPISTS, which a controller with a 64b guard format sets, and
 * STCRS, Copy's STCR honoured (pi_cmd.c). LBSTM: the namespace's (none for
 * NSID FFFFFFFFh).
 */
#define PIC_16BPISTS	(1u << 0)
#define PIC_STCRS	(1u << 2)

static void nvm_id_ns(const struct ctrl_ns *ns, struct nvme_nvm_id_ns *id)
{
	id->pic = PIC_16BPISTS | PIC_STCRS;
	id->lbstm = htole64(ns ? ns->lbstm : 0);
	for (unsigned i = 0; i < UCMD_NR_LBAF; i++)
		id->elbaf[i] = htole32((uint32_t)ctrl_lbaf_pif((uint8_t)i) << 7 |
				       ctrl_lbaf_sts((uint8_t)i));
}

/* csi < 0: every command set */
static uint16_t ns_list(struct ucmd_ctrl *c, uint32_t nsid, bool allocated, int csi,
			struct nvme_ns_list *l)
{
	unsigned n = 0;

	/* FFFFFFFEh/FFFFFFFFh leave no namespace to list above them. */
	if (nsid >= 0xfffffffeu)
		return UCMD_GEN(NVME_SC_INVALID_NS) | UCMD_DNR;
	for (uint32_t i = nsid + 1; i <= UCMD_MAX_NS; i++)
		if (c->ns[i] && (allocated || (c->ns[i]->attached & ctrl_bit(c))) &&
		    (csi < 0 || csi == (c->ns[i]->zoned ? NVME_CSI_ZNS : NVME_CSI_NVM)))
			l->ns[n++] = htole32(i);
	return 0;
}

uint16_t ctrl_admin_identify(struct ucmd_ctrl *c, struct ctrl_req *req)
{
	uint8_t cns = req->cmd.cdw10 & 0xff;
	uint8_t csi = req->cmd.cdw11 >> 24;
	uint32_t nsid = req->cmd.nsid;
	union {
		uint8_t raw[4096];
		struct nvme_id_ctrl ctrl;
		struct nvme_id_ns ns;
		struct nvme_ns_list list;
		struct nvme_ctrl_list clist;
		struct nvme_nvm_id_ns nvm_ns;
		struct nvme_id_ctrl_nvm nvm_ctrl;
		struct nvme_id_independent_id_ns ind;
		struct nvme_id_iocs iocs;
		struct nvme_zns_id_ns zns_ns;
		struct nvme_zns_id_ctrl zns_ctrl;
		struct nvme_id_endurance_group_list eglist;
	} u;
	struct ctrl_ns *ns;
	uint16_t st = 0;

	_Static_assert(sizeof(u) == 4096, "identify data is 4 KiB");
	memset(&u, 0, sizeof(u));
	/* Namespace-scoped CNS values need an allocated nsid (or the broadcast). */
	bool valid_nsid = nsid && (nsid <= UCMD_MAX_NS);
	ns = valid_nsid ? c->ns[nsid] : NULL;
	/* attached to this controller: active here */
	bool on = ns && (ns->attached & ctrl_bit(c));

	switch (cns) {
	case NVME_IDENTIFY_CNS_NS:
		if (nsid == NSID_ALL)
			ctrl_ns_fill_id(c, NULL, &u.ns);
		else if (!valid_nsid)
			st = UCMD_GEN(NVME_SC_INVALID_NS) | UCMD_DNR;
		else if (on) {
			ctrl_ns_fill_id(c, ns, &u.ns);
			ctrl_subsys_id_ns(c, &u.ns);
		}
		/* an inactive nsid returns zeros */
		break;
	case NVME_IDENTIFY_CNS_ALLOCATED_NS:
		if (!valid_nsid)
			st = UCMD_GEN(NVME_SC_INVALID_NS) | UCMD_DNR;
		else if (ns) {
			ctrl_ns_fill_id(c, ns, &u.ns);
			ctrl_subsys_id_ns(c, &u.ns);
		}
		break;
	case NVME_IDENTIFY_CNS_CTRL:
		id_ctrl(c, &u.ctrl);
		break;
	case NVME_IDENTIFY_CNS_NS_ACTIVE_LIST:
		st = ns_list(c, nsid, false, -1, &u.list);
		break;
	case NVME_IDENTIFY_CNS_CSI_NS_ACTIVE_LIST:
		st = csi != NVME_CSI_NVM && csi != NVME_CSI_ZNS
			? (UCMD_GEN(NVME_SC_INVALID_FIELD) | UCMD_DNR)
			: ns_list(c, nsid, false, csi, &u.list);
		break;
	case NVME_IDENTIFY_CNS_ALLOCATED_NS_LIST:
		st = ns_list(c, nsid, true, -1, &u.list);
		break;
	case NVME_IDENTIFY_CNS_NS_DESC_LIST:
		if (!valid_nsid || !on)
			st = UCMD_GEN(NVME_SC_INVALID_NS) | UCMD_DNR;
		else
			id_ns_desc(ns, u.raw);
		break;
	case NVME_IDENTIFY_CNS_CSI_NS:
		if (csi == NVME_CSI_ZNS && nsid != NSID_ALL && valid_nsid && ns && ns->zoned) {
			if (on)
				ctrl_zns_id_ns(c, ns, &u.zns_ns);
			break;
		}
		if (csi != NVME_CSI_NVM)
			st = UCMD_GEN(NVME_SC_INVALID_FIELD) | UCMD_DNR;
		else if (nsid != NSID_ALL && (!valid_nsid))
			st = UCMD_GEN(NVME_SC_INVALID_NS) | UCMD_DNR;
		else if (nsid == NSID_ALL || on)
			nvm_id_ns(nsid == NSID_ALL ? NULL : ns, &u.nvm_ns);
		break;
	case NVME_IDENTIFY_CNS_CSI_CTRL:
		if (csi == NVME_CSI_ZNS) {
			ctrl_zns_id_ctrl(c, &u.zns_ctrl);
			break;
		}
		if (csi != NVME_CSI_NVM) {
			st = UCMD_GEN(NVME_SC_INVALID_FIELD) | UCMD_DNR;
			break;
		}
		/* Size limits as MDTS (0 = no limit beyond MDTS) */
		u.nvm_ctrl.vsl = c->p.mdts;
		u.nvm_ctrl.wzsl = c->p.mdts;
		u.nvm_ctrl.wusl = c->p.mdts;
		u.nvm_ctrl.dmrl = 0xff;		/* 0's based: 256 ranges */
		u.nvm_ctrl.dmrsl = htole32(0xffffffff);
		break;
	case NVME_IDENTIFY_CNS_CSI_INDEPENDENT_ID_NS:
		if (!valid_nsid)
			st = UCMD_GEN(NVME_SC_INVALID_NS) | UCMD_DNR;
		else if (on) {
			u.ind.nsfeat = NVME_NS_FEAT_THIN;
			u.ind.nstat = 1;	/* namespace ready */
			u.ind.endgid = htole16(UCMD_ENDGID);
		}
		break;
	case NVME_IDENTIFY_CNS_NS_CTRL_LIST:
		if (!valid_nsid)
			st = UCMD_GEN(NVME_SC_INVALID_NS) | UCMD_DNR;
		else if (ns)	/* the controllers it is attached to */
			ctrl_subsys_ctrl_list(c, (uint16_t)(req->cmd.cdw10 >> 16), ns->attached,
					      &u.clist);
		break;
	case NVME_IDENTIFY_CNS_CTRL_LIST:
		ctrl_subsys_ctrl_list(c, (uint16_t)(req->cmd.cdw10 >> 16), 0xff, &u.clist);
		break;
	case NVME_IDENTIFY_CNS_NS_USER_DATA_FORMAT:
		/* the capabilities a namespace of that LBA format would have: NSID FFFFFFFFh's */
		if ((req->cmd.cdw11 & 0xffff) >= UCMD_NR_LBAF) {
			st = UCMD_GEN(NVME_SC_INVALID_FIELD) | UCMD_DNR;
			break;
		}
		ctrl_ns_fill_id(c, NULL, &u.ns);
		break;
	case NVME_IDENTIFY_CNS_CSI_NS_USER_DATA_FORMAT:
		/*
		 * The NVM Command Set's for a namespace of that format: the
		 * extended LBA formats (PIF, STS) and PIC, as NSID FFFFFFFFh's
		 * CNS 05h. A zoned namespace's zone sizes belong to a zoned
		 * namespace only.
		 */
		if ((req->cmd.cdw11 & 0xffff) >= UCMD_NR_LBAF || csi != NVME_CSI_NVM)
			st = UCMD_GEN(NVME_SC_INVALID_FIELD) | UCMD_DNR;
		else
			nvm_id_ns(NULL, &u.nvm_ns);
		break;
	case NVME_IDENTIFY_CNS_ENDURANCE_GROUP_ID:
		/* the groups from CNS Specific Identifier on: the one there is */
		if ((req->cmd.cdw11 & 0xffff) <= UCMD_ENDGID) {
			u.eglist.num = htole16(1);
			u.eglist.identifier[0] = htole16(UCMD_ENDGID);
		}
		break;
	case NVME_IDENTIFY_CNS_COMMAND_SET_STRUCTURE:
		/* One combination: NVM and Zoned Namespace */
		u.iocs.iocsc[0] = htole64(1ull << NVME_CSI_NVM | 1ull << NVME_CSI_ZNS);
		break;
	default:
		st = UCMD_GEN(NVME_SC_INVALID_FIELD) | UCMD_DNR;
	}
	if (st)
		return st;
	return ctrl_data_to_host(c, req, &u, sizeof(u));
}
