/* SPDX-License-Identifier: MIT */
/*
 * The admin half of the differential sequence: Identify, logs and features.
 * Identify and log data are printed field by field (not one checksum), so
 * that each difference names the field and docs/compat.md can give the
 * spec's reason for it (vendor-specific, implementation-chosen, ...).
 */
#include <endian.h>
#include <nvme/types.h>
#include <stdio.h>
#include <string.h>

#include "difftest.h"

#define admin dt_admin_cmd

static uint8_t buf[4096] __attribute__((aligned(4096)));

int dt_admin_cmd(struct dt *d, uint8_t opcode, uint32_t nsid, uint32_t cdw10, uint32_t cdw11,
		 void *data, uint32_t len, uint64_t *dw0)
{
	struct nvme_uring_cmd c;

	memset(&c, 0, sizeof(c));
	c.opcode = opcode;
	c.nsid = nsid;
	c.cdw10 = cdw10;
	c.cdw11 = cdw11;
	c.addr = (uint64_t)(uintptr_t)data;
	c.data_len = len;
	return dt_cmd(d, &d->ring, d->t->ctrl_fd, NVME_URING_CMD_ADMIN, &c, 0, 0, 0, dw0);
}

static void str(const char *name, const char *s, size_t n)
{
	printf("%s value='%.*s'\n", name, (int)n, s);
}

#define U(name, v) dt_field(name, "0x%llx", (unsigned long long)(v))

static void id_ctrl(struct dt *d)
{
	struct nvme_id_ctrl *id = (void *)buf;
	uint64_t dw0;
	int res;

	memset(buf, 0, sizeof(buf));
	res = admin(d, nvme_admin_identify, 0, NVME_IDENTIFY_CNS_CTRL, 0, buf, 4096, &dw0);
	dt_line("admin.id-ctrl", res, dw0, NULL, 0);
	U("id-ctrl.vid", le16toh(id->vid));
	U("id-ctrl.ssvid", le16toh(id->ssvid));
	str("id-ctrl.sn", id->sn, sizeof(id->sn));
	str("id-ctrl.mn", id->mn, sizeof(id->mn));
	str("id-ctrl.fr", id->fr, sizeof(id->fr));
	U("id-ctrl.rab", id->rab);
	U("id-ctrl.ieee", id->ieee[0] | id->ieee[1] << 8 | id->ieee[2] << 16);
	U("id-ctrl.cmic", id->cmic);
	U("id-ctrl.mdts", id->mdts);
	U("id-ctrl.cntlid", le16toh(id->cntlid));
	U("id-ctrl.ver", le32toh(id->ver));
	U("id-ctrl.oaes", le32toh(id->oaes));
	U("id-ctrl.ctratt", le32toh(id->ctratt));
	U("id-ctrl.cntrltype", id->cntrltype);
	U("id-ctrl.oacs", le16toh(id->oacs));
	U("id-ctrl.acl", id->acl);
	U("id-ctrl.aerl", id->aerl);
	U("id-ctrl.frmw", id->frmw);
	U("id-ctrl.lpa", id->lpa);
	U("id-ctrl.elpe", id->elpe);
	U("id-ctrl.npss", id->npss);
	U("id-ctrl.avscc", id->avscc);
	U("id-ctrl.wctemp", le16toh(id->wctemp));
	U("id-ctrl.cctemp", le16toh(id->cctemp));
	U("id-ctrl.tnvmcap", le64toh(*(uint64_t *)id->tnvmcap));
	U("id-ctrl.sanicap", le32toh(id->sanicap));
	U("id-ctrl.sqes", id->sqes);
	U("id-ctrl.cqes", id->cqes);
	U("id-ctrl.nn", le32toh(id->nn));
	U("id-ctrl.oncs", le16toh(id->oncs));
	U("id-ctrl.fuses", le16toh(id->fuses));
	U("id-ctrl.fna", id->fna);
	U("id-ctrl.vwc", id->vwc);
	U("id-ctrl.awun", le16toh(id->awun));
	U("id-ctrl.awupf", le16toh(id->awupf));
	U("id-ctrl.ocfs", le16toh(id->ocfs));
	U("id-ctrl.sgls", le32toh(id->sgls));
	str("id-ctrl.subnqn", id->subnqn, sizeof(id->subnqn));
}

static void id_ns(struct dt *d, const char *pfx, uint32_t nsid)
{
	struct nvme_id_ns *ns = (void *)buf;
	char name[64];
	uint64_t dw0;
	int res;

#define F(f, v) (snprintf(name, sizeof(name), "%s.%s", pfx, f), U(name, v))
	memset(buf, 0, sizeof(buf));
	res = admin(d, nvme_admin_identify, nsid, NVME_IDENTIFY_CNS_NS, 0, buf, 4096, &dw0);
	dt_line(pfx, res, dw0, NULL, 0);
	if (res)
		return;
	F("nsze", le64toh(ns->nsze));
	F("ncap", le64toh(ns->ncap));
	F("nsfeat", ns->nsfeat);
	F("nlbaf", ns->nlbaf);
	F("flbas", ns->flbas);
	F("mc", ns->mc);
	F("dpc", ns->dpc);
	F("dps", ns->dps);
	F("nmic", ns->nmic);
	F("dlfeat", ns->dlfeat);
	F("mssrl", le16toh(ns->mssrl));
	F("mcl", le32toh(ns->mcl));
	F("msrc", ns->msrc);
	unsigned f = ns->flbas & 0xf;
	F("lbaf.cur.ds", ns->lbaf[f].ds);
	F("lbaf.cur.ms", le16toh(ns->lbaf[f].ms));
	F("nguid", le64toh(*(uint64_t *)ns->nguid) ^ le64toh(*(uint64_t *)(ns->nguid + 8)));
	F("eui64", le64toh(*(uint64_t *)ns->eui64));
#undef F
}

static void logs(struct dt *d)
{
	uint64_t dw0;
	int res;

	/* Get Log Page: cdw10 = NUMDL << 16 | LID, NUMD zero-based dwords */
#define GETLOG(lid, len) (((((len) / 4) - 1) << 16) | (lid))
	memset(buf, 0, sizeof(buf));
	res = admin(d, nvme_admin_get_log_page, NVME_NSID_ALL, GETLOG(NVME_LOG_LID_SMART, 512), 0,
		    buf, 512, &dw0);
	dt_line("log.smart", res, dw0, NULL, 0);
	struct nvme_smart_log *s = (void *)buf;
	U("log.smart.critical_warning", s->critical_warning);
	U("log.smart.avail_spare", s->avail_spare);
	U("log.smart.spare_thresh", s->spare_thresh);
	U("log.smart.percent_used", s->percent_used);
	U("log.smart.temperature", s->temperature[0] | s->temperature[1] << 8);

	memset(buf, 0, sizeof(buf));
	res = admin(d, nvme_admin_get_log_page, 0, GETLOG(NVME_LOG_LID_ERROR, 64), 0, buf, 64,
		    &dw0);
	dt_line("log.error", res, dw0, NULL, 0);

	memset(buf, 0, sizeof(buf));
	res = admin(d, nvme_admin_get_log_page, 0, GETLOG(NVME_LOG_LID_FW_SLOT, 512), 0, buf, 512,
		    &dw0);
	dt_line("log.fw-slot", res, dw0, NULL, 0);
	U("log.fw-slot.afi", ((struct nvme_firmware_slot *)buf)->afi);

	memset(buf, 0, sizeof(buf));
	res = admin(d, nvme_admin_get_log_page, 0, GETLOG(NVME_LOG_LID_CMD_EFFECTS, 4096), 0, buf,
		    4096, &dw0);
	dt_line("log.effects", res, dw0, NULL, 0);
	struct nvme_cmd_effects_log *e = (void *)buf;
	U("log.effects.acs.identify", le32toh(e->acs[nvme_admin_identify]));
	U("log.effects.acs.format", le32toh(e->acs[nvme_admin_format_nvm]));
	U("log.effects.iocs.read", le32toh(e->iocs[nvme_cmd_read]));
	U("log.effects.iocs.write", le32toh(e->iocs[nvme_cmd_write]));
	U("log.effects.iocs.dsm", le32toh(e->iocs[nvme_cmd_dsm]));

	res = admin(d, nvme_admin_get_log_page, 0, GETLOG(0xbf, 512), 0, buf, 512, &dw0);
	dt_line("log.unknown-lid", res, dw0, NULL, 0);
#undef GETLOG
}

static void features(struct dt *d)
{
	static const struct { const char *name; uint8_t fid; } get[] = {
		{ "feat.arbitration", NVME_FEAT_FID_ARBITRATION },
		{ "feat.power-mgmt", NVME_FEAT_FID_POWER_MGMT },
		{ "feat.temp-thresh", NVME_FEAT_FID_TEMP_THRESH },
		{ "feat.err-recovery", NVME_FEAT_FID_ERR_RECOVERY },
		{ "feat.volatile-wc", NVME_FEAT_FID_VOLATILE_WC },
		{ "feat.num-queues", NVME_FEAT_FID_NUM_QUEUES },
		{ "feat.irq-coalesce", NVME_FEAT_FID_IRQ_COALESCE },
		{ "feat.write-atomic", NVME_FEAT_FID_WRITE_ATOMIC },
		{ "feat.async-event", NVME_FEAT_FID_ASYNC_EVENT },
		{ "feat.unknown-fid", 0x7f },
	};
	uint64_t dw0;
	int res;

	for (unsigned i = 0; i < sizeof(get) / sizeof(get[0]); i++) {
		/* error recovery is namespace-specific */
		uint32_t nsid = get[i].fid == NVME_FEAT_FID_ERR_RECOVERY ? d->t->nsid[0] : 0;
		res = admin(d, nvme_admin_get_features, nsid, get[i].fid, 0, NULL, 0, &dw0);
		dt_line(get[i].name, res, dw0, NULL, 0);
	}
	res = admin(d, nvme_admin_set_features, 0, NVME_FEAT_FID_TEMP_THRESH, 0x150, NULL, 0, &dw0);
	dt_line("feat.set-temp-thresh", res, dw0, NULL, 0);
	res = admin(d, nvme_admin_get_features, 0, NVME_FEAT_FID_TEMP_THRESH, 0, NULL, 0, &dw0);
	dt_line("feat.get-temp-thresh-after-set", res, dw0, NULL, 0);
	res = admin(d, nvme_admin_set_features, 0, NVME_FEAT_FID_NUM_QUEUES, 0x00030003, NULL, 0,
		    &dw0);
	dt_line("feat.set-num-queues-after-init", res, dw0, NULL, 0);
}

void dt_admin(struct dt *d)
{
	uint64_t dw0;
	int res;

	id_ctrl(d);
	id_ns(d, "id-ns1", d->t->nsid[0]);
	id_ns(d, "id-ns2", d->t->nsid[1]);
	memset(buf, 0xee, sizeof(buf));
	res = admin(d, nvme_admin_identify, 3, NVME_IDENTIFY_CNS_NS, 0, buf, 4096, &dw0);
	dt_line("id-ns3-unallocated", res, dw0, res ? NULL : buf, 4096);
	memset(buf, 0xee, sizeof(buf));
	res = admin(d, nvme_admin_identify, 0, NVME_IDENTIFY_CNS_NS_ACTIVE_LIST, 0, buf, 4096,
		    &dw0);
	dt_line("id-active-ns-list", res, dw0, buf, 4096);
	res = admin(d, nvme_admin_identify, 0, 0xfe, 0, buf, 4096, &dw0);
	dt_line("id-unknown-cns", res, dw0, NULL, 0);
	res = admin(d, 0xfe, 0, 0, 0, NULL, 0, &dw0);
	dt_line("err.invalid-admin-opcode", res, dw0, NULL, 0);
	logs(d);
	features(d);
}
