/* SPDX-License-Identifier: MIT */
/*
 * Admin commands that change the namespace inventory or layout: Format NVM,
 * Namespace Management (create/delete) and Namespace Attachment. Any
 * controller of a subsystem runs them (c); what they change is the
 * subsystem's, controller 1's (p, whose lock is held), and every
 * controller the namespace is attached to hears of it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fdp.h"
#include "zns.h"

#define NSID_ALL	0xffffffffu
#define ST_INVALID	(UCMD_GEN(NVME_SC_INVALID_FIELD) | UCMD_DNR)
#define ST_INVALID_NS	(UCMD_GEN(NVME_SC_INVALID_NS) | UCMD_DNR)
#define ST_FORMAT	(UCMD_CMD(NVME_SC_INVALID_FORMAT) | UCMD_DNR)

static uint16_t format_ns(struct ucmd_ctrl *c, struct ctrl_ns *ns, uint8_t lbaf, bool mset,
			  uint8_t dps)
{
	/* Keep the capacity in bytes; the block count follows the block size. */
	uint64_t nsze = ns->nsze * ctrl_ns_ds(ns) / ctrl_lbaf_ds(lbaf);
	uint32_t old_ds = ctrl_ns_ds(ns);
	struct store *st = ns->st;
	int ret;

	if (!nsze)
		return ST_FORMAT;
	/* a zone must stay a whole number of blocks of the new size */
	if (ns->zoned && ((ns->zoned->zsze * old_ds) % ctrl_lbaf_ds(lbaf) ||
			  (ns->zoned->zcap * old_ds) % ctrl_lbaf_ds(lbaf)))
		return ST_FORMAT;
	/*
	 * protection needs metadata to hold the tuple; and the protected I/O
	 * path (pi_io.c) does not move write pointers: no PI on a zoned
	 * namespace
	 */
	if (dps && (!ctrl_lbaf_pi_fits(lbaf) || ns->zoned))
		return ST_FORMAT;
	/*
	 * Format NVM changes no Storage Tag Size from 0 or to another non-zero
	 * one (NVM Command Set, Host Considerations when Formatting with
	 * Storage Tag): that takes a new namespace, with its own LBSTM
	 */
	if (ctrl_lbaf_sts(lbaf) && ctrl_lbaf_sts(lbaf) != ctrl_lbaf_sts(ns->lbaf))
		return ST_FORMAT;
	/* the media model has a map entry per block: within its bound */
	if (ns->fdpm && nsze > UCMD_FDP_MAX_BLOCKS)
		return ST_FORMAT;
	ret = st->ops->deallocate(st, 0, st->size);
	if (!ret)
		ret = st->ops->resize(st, ctrl_ns_store_size(nsze, lbaf));
	if (ret)
		return ctrl_store_status(ret);
	ns->nsze = nsze;
	ctrl_ns_set_lbaf(ns, lbaf);
	ns->extended = mset && ctrl_lbaf_ms(lbaf);
	ns->dps = dps;
	if (!ctrl_lbaf_sts(lbaf))
		ns->lbstm = 0;
	ctrl_ranges_clear(&ns->uncor);
	ctrl_zns_format(ctrl_primary(c), ns, old_ds);
	/* the FDP configuration stays; the reclaim units start empty */
	ctrl_fdp_ns_erase(ctrl_primary(c), ns);
	ctrl_subsys_ns_changed_all(c, ns->attached, ns->nsid);
	return 0;
}

/* After a change of the inventory: c's view of it, controller 1's table */
static void ns_sync(struct ucmd_ctrl *c)
{
	if (c->primary)
		memcpy(c->ns, c->primary->ns, sizeof(c->ns));
}

uint16_t ctrl_admin_format(struct ucmd_ctrl *c, struct ctrl_req *req)
{
	uint32_t cdw10 = req->cmd.cdw10;
	uint8_t lbaf = (cdw10 & 0xf) | ((cdw10 >> 12) & 3) << 4;
	bool mset = cdw10 & (1u << 4);
	uint8_t pi = (cdw10 >> 5) & 7, ses = (cdw10 >> 9) & 7;
	/* PIL (bit 8): the tuple is the first bytes of the metadata */
	uint8_t dps = pi | (pi && (cdw10 & (1u << 8)) ? NVME_NS_DPS_PI_FIRST : 0);
	uint16_t st = 0;

	if (lbaf >= UCMD_NR_LBAF)
		return ST_FORMAT;
	if (pi > NVME_NS_DPS_PI_TYPE3)
		return ST_INVALID;
	/* User data erase and no erase are the same here: format zeroes. */
	if (ses > 1)
		return ST_INVALID;
	if (req->cmd.nsid == NSID_ALL) {
		for (uint32_t i = 1; i <= UCMD_MAX_NS && !st; i++)
			if (ctrl_ns_active(c, i))
				st = format_ns(c, c->ns[i], lbaf, mset, dps);
	} else {
		struct ctrl_ns *ns = ctrl_ns_active(c, req->cmd.nsid);

		if (!ns)
			return ST_INVALID_NS;
		st = format_ns(c, ns, lbaf, mset, dps);
	}
	/* a format ends a self-test running on what it erased (result 4h) */
	struct ucmd_ctrl *p = ctrl_primary(c);

	if (!st && p->dst.op && (p->dst.nsid == 0xffffffffu || p->dst.nsid == req->cmd.nsid ||
				 req->cmd.nsid == 0xffffffffu))
		ctrl_selftest_abort(p, NVME_ST_RESULT_ABORTED_FORMAT);
	ctrl_persist(c);
	return st;
}

static uint16_t ns_create(struct ucmd_ctrl *x, struct ctrl_req *req)
{
	/* made in controller 1's table; the data comes through x, which runs it */
	struct ucmd_ctrl *c = ctrl_primary(x);
	struct nvme_id_ns *id = malloc(sizeof(*id));
	struct ucmd_ns_params p = { .store = c->dir ? UCMD_NS_STORE_FILE : UCMD_NS_STORE_RAM };
	uint8_t csi = req->cmd.cdw11 >> 24;
	uint16_t st, nph, ph[UCMD_FDP_MAX_RUH];
	uint8_t dps;
	int nsid;

	if (!id)
		return UCMD_GEN(NVME_SC_INTERNAL);
	if (csi != NVME_CSI_NVM && csi != NVME_CSI_ZNS) {
		st = UCMD_CMD(NVME_SC_IOCS_NOT_SUPPORTED) | UCMD_DNR;
		goto out;
	}
	st = ctrl_data_from_host(x, req, id, sizeof(*id));
	if (st)
		goto out;
	p.nsze = le64toh(id->nsze);
	p.lbaf = (id->flbas & NVME_NS_FLBAS_LOWER_MASK) | ((id->flbas & NVME_NS_FLBAS_HIGHER_MASK) >> 1);
	p.extended = id->flbas & NVME_NS_FLBAS_META_EXT;
	if (!p.nsze || !id->ncap || le64toh(id->ncap) > p.nsze) {
		st = ST_INVALID;
		goto out;
	}
	if (p.lbaf >= UCMD_NR_LBAF) {
		st = ST_FORMAT;
		goto out;
	}
	/*
	 * End-to-end protection as a format gives it (DPS: a PI type, 1..3, and
	 * whether the tuple comes first): reserved bits or types are an invalid
	 * field; protection where the metadata cannot hold the tuple, or on a
	 * zoned namespace, an invalid format, as format_ns answers.
	 */
	dps = id->dps;
	if ((dps & ~(NVME_NS_DPS_PI_MASK | NVME_NS_DPS_PI_FIRST)) ||
	    (dps & NVME_NS_DPS_PI_MASK) > NVME_NS_DPS_PI_TYPE3 ||
	    (dps && !(dps & NVME_NS_DPS_PI_MASK))) {
		st = ST_INVALID;
		goto out;
	}
	if (dps && (!ctrl_lbaf_pi_fits(p.lbaf) || csi == NVME_CSI_ZNS)) {
		st = ST_FORMAT;
		goto out;
	}
	if (csi == NVME_CSI_ZNS) {
		/* QEMU's zoned defaults: 128 MiB zones, all writable, no limits */
		p.zoned.zone_size = (128ull << 20) / ctrl_lbaf_ds(p.lbaf);
		if (p.nsze < p.zoned.zone_size) {
			st = ST_INVALID;
			goto out;
		}
	}
	if ((st = ctrl_fdp_phndl_check(c, (const uint8_t *)id, &nph, ph)))
		goto out;
	if (!ctrl_capacity_fits(c, p.nsze, p.lbaf)) {
		st = UCMD_CMD(NVME_SC_NS_INSUFFICIENT_CAP) | UCMD_DNR;
		goto out;
	}
	nsid = ctrl_ns_add(c, &p, 0);
	if (nsid == -ENOSPC)
		st = UCMD_CMD(NVME_SC_NS_ID_UNAVAILABLE) | UCMD_DNR;
	else if (nsid < 0)
		st = UCMD_CMD(NVME_SC_NS_INSUFFICIENT_CAP) | UCMD_DNR;
	else {
		req->dw0 = (uint32_t)nsid;
		c->ns[nsid]->dps = dps;
		/* LBSTM as the host gives it, over the format's storage tag bits */
		c->ns[nsid]->lbstm = ctrl_lbaf_sts(p.lbaf) ?
			le64toh(id->lbstm) & ((1ull << ctrl_lbaf_sts(p.lbaf)) - 1) : 0;
		c->ns[nsid]->nphndl = nph;
		memcpy(c->ns[nsid]->phndl, ph, nph * sizeof(ph[0]));
	}
out:
	free(id);
	return st;
}

static void ns_delete_one(struct ucmd_ctrl *c, struct ctrl_ns *ns)
{
	uint32_t nsid = ns->nsid;
	uint8_t was_attached = ns->attached;

	ctrl_ns_free(ctrl_primary(c), ns, true);
	ctrl_subsys_ns_changed_all(c, was_attached, nsid);
}

uint16_t ctrl_admin_ns_mgmt(struct ucmd_ctrl *c, struct ctrl_req *req)
{
	struct ucmd_ctrl *p = ctrl_primary(c);
	uint8_t sel = req->cmd.cdw10 & 0xf;
	uint32_t nsid = req->cmd.nsid;
	uint16_t st = 0;

	switch (sel) {
	case 0:
		st = ns_create(c, req);
		break;
	case 1:
		if (nsid == NSID_ALL) {
			for (uint32_t i = 1; i <= UCMD_MAX_NS; i++)
				if (p->ns[i])
					ns_delete_one(c, p->ns[i]);
		} else if (!nsid || nsid > UCMD_MAX_NS || !p->ns[nsid]) {
			return ST_INVALID_NS;
		} else {
			ns_delete_one(c, p->ns[nsid]);
		}
		break;
	default:
		return ST_INVALID;
	}
	ns_sync(c);
	if (!st)
		ctrl_persist(c);
	return st;
}

/*
 * The controllers a Namespace Attachment names (IDs of the subsystem's
 * controllers, each once, at least one) as a mask; 0: an invalid list.
 */
static uint8_t ctrl_list_mask(struct ucmd_ctrl *c, const struct nvme_ctrl_list *l)
{
	struct ucmd_ctrl *p = ctrl_primary(c);
	unsigned num = le16toh(l->num), nr = p->nr_ctrls ? p->nr_ctrls : 1;
	uint8_t mask = 0;

	if (!num || num > nr)
		return 0;
	for (unsigned i = 0; i < num; i++) {
		uint16_t id = le16toh(l->identifier[i]);
		uint8_t bit;

		if (id < p->p.cntlid || id - p->p.cntlid >= (int)nr)
			return 0;
		bit = (uint8_t)(1u << (id - p->p.cntlid));
		if (mask & bit)
			return 0;
		mask |= bit;
	}
	return mask;
}

uint16_t ctrl_admin_ns_attach(struct ucmd_ctrl *c, struct ctrl_req *req)
{
	uint8_t sel = req->cmd.cdw10 & 0xf;
	uint32_t nsid = req->cmd.nsid;
	struct nvme_ctrl_list *list;
	struct ctrl_ns *ns;
	uint8_t mask;
	uint16_t st;

	if (sel > 1)
		return ST_INVALID;
	if (nsid == NSID_ALL)
		return ST_INVALID;
	if (!nsid || nsid > UCMD_MAX_NS || !(ns = ctrl_primary(c)->ns[nsid]))
		return ST_INVALID_NS;
	list = malloc(sizeof(*list));
	if (!list)
		return UCMD_GEN(NVME_SC_INTERNAL);
	st = ctrl_data_from_host(c, req, list, sizeof(*list));
	/* controllers of this subsystem, each once (one controller: exactly it) */
	mask = st ? 0 : ctrl_list_mask(c, list);
	if (!st && !mask)
		st = UCMD_CMD(NVME_SC_CTRL_LIST_INVALID) | UCMD_DNR;
	free(list);
	if (st)
		return st;
	/* all or nothing: one named controller in the wrong state refuses the command */
	if (sel == 0 && (ns->attached & mask))
		return UCMD_CMD(NVME_SC_NS_ALREADY_ATTACHED) | UCMD_DNR;
	if (sel == 1 && (ns->attached & mask) != mask)
		return UCMD_CMD(NVME_SC_NS_NOT_ATTACHED) | UCMD_DNR;
	if (sel == 0)
		ns->attached |= mask;
	else
		ns->attached &= (uint8_t)~mask;
	ctrl_persist(c);
	/* each controller it came to or left: a Namespace Attribute notice */
	ctrl_subsys_ns_changed_all(c, mask, nsid);
	return 0;
}
