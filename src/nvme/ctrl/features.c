/* SPDX-License-Identifier: MIT */
/*
 * Get/Set Features. A table says which features exist and which can be
 * saved; saved values are persisted with the controller's configuration and
 * become the current values at power on and after a controller reset.
 */
#include <string.h>

#include "fdp.h"

#define SEL_CURRENT	0
#define SEL_DEFAULT	1
#define SEL_SAVED	2
#define SEL_SUPPORTED	3
#define CAP_SAVEABLE	(1u << 0)
#define CAP_NS		(1u << 1)
#define CAP_CHANGEABLE	(1u << 2)
/* Async events we can generate: SMART temperature/spare, ns attribute, zone descriptor */
#define AEC_SUPPORTED	(NVME_SMART_CRIT_SPARE | NVME_SMART_CRIT_TEMPERATURE | NVME_CTRL_OAES_NA | \
			 NVME_CTRL_OAES_ZD)

static const struct {
	bool supported, saveable;
} feats[256] = {
	[NVME_FEAT_FID_ARBITRATION]  = { true, true },
	[NVME_FEAT_FID_POWER_MGMT]   = { true, true },
	[NVME_FEAT_FID_TEMP_THRESH]  = { true, true },
	[NVME_FEAT_FID_ERR_RECOVERY] = { true, true },
	[NVME_FEAT_FID_VOLATILE_WC]  = { true, true },
	[NVME_FEAT_FID_NUM_QUEUES]   = { true, false },
	[NVME_FEAT_FID_IRQ_COALESCE] = { true, true },
	[NVME_FEAT_FID_IRQ_CONFIG]   = { true, false },
	[NVME_FEAT_FID_WRITE_ATOMIC] = { true, true },
	[NVME_FEAT_FID_ASYNC_EVENT]  = { true, true },
	[NVME_FEAT_FID_TIMESTAMP]    = { true, false },
	/* the I/O Command Set Combination in use: index 0, the only one (identify.c) */
	[NVME_FEAT_FID_IOCS_PROFILE] = { true, false },
};

void ctrl_features_defaults(struct ctrl_feat_vals *f)
{
	memset(f, 0, sizeof(*f));
	f->arbitration = 0;		/* burst 1, round robin */
	f->vwc = 1;			/* write cache enabled */
	f->tmpth_over = UCMD_WCTEMP;
	f->tmpth_under = 0;
}

uint32_t ctrl_aec_supported(struct ucmd_ctrl *c)
{
	/* ANA Change notices from a controller of several (OAES says so: subsys.c) */
	return AEC_SUPPORTED | (ctrl_multi(c) ? NVME_CTRL_OAES_ANA : 0);
}

uint8_t ctrl_critical_warning(struct ucmd_ctrl *c)
{
	uint8_t w = 0;

	if (UCMD_TEMP_KELVIN > c->cur.tmpth_over || UCMD_TEMP_KELVIN < c->cur.tmpth_under)
		w |= NVME_SMART_CRIT_TEMPERATURE;
	return w;
}

static uint64_t timestamp_ms(struct ucmd_ctrl *c)
{
	uint64_t since = c->ts_set ? c->ts_set_at_ns : c->created_ns;

	return (c->ts_set ? c->ts_host_ms : 0) + (ktime_get_ns() - since) / 1000000ull;
}

static uint16_t get_value(struct ucmd_ctrl *c, const struct ctrl_feat_vals *f, uint8_t fid,
			  uint32_t cdw11, uint32_t *dw0)
{
	switch (fid) {
	case NVME_FEAT_FID_ARBITRATION: *dw0 = f->arbitration; break;
	case NVME_FEAT_FID_POWER_MGMT: *dw0 = f->power_mgmt; break;
	case NVME_FEAT_FID_TEMP_THRESH: {
		uint8_t tmpsel = (cdw11 >> 16) & 0xf, thsel = (cdw11 >> 20) & 3;

		if (tmpsel != 0 || thsel > 1)
			return UCMD_GEN(NVME_SC_INVALID_FIELD) | UCMD_DNR;
		*dw0 = (thsel ? f->tmpth_under : f->tmpth_over) | (uint32_t)thsel << 20;
		break;
	}
	case NVME_FEAT_FID_ERR_RECOVERY: *dw0 = f->err_recovery; break;
	case NVME_FEAT_FID_VOLATILE_WC: *dw0 = f->vwc; break;
	case NVME_FEAT_FID_NUM_QUEUES: *dw0 = (uint32_t)c->ncqa << 16 | c->nsqa; break;
	case NVME_FEAT_FID_IRQ_COALESCE: *dw0 = f->irq_coalesce; break;
	case NVME_FEAT_FID_WRITE_ATOMIC: *dw0 = f->write_atomic; break;
	case NVME_FEAT_FID_ASYNC_EVENT: *dw0 = f->async_event; break;
	case NVME_FEAT_FID_IOCS_PROFILE: *dw0 = 0; break;
	default: return UCMD_GEN(NVME_SC_INVALID_FIELD) | UCMD_DNR;
	}
	return 0;
}

/*
 * Interrupt Vector Configuration (09h), one per vector: CDW11 bits 15:0
 * name the vector (every queue's, 0 to qmax, Invalid Field past them),
 * bit 16 its Coalescing Disable. Not saveable; the default is 0.
 */
static uint16_t irq_config(struct ucmd_ctrl *c, struct ctrl_req *req, bool set, uint8_t sel)
{
	uint32_t iv = req->cmd.cdw11 & 0xffff;

	if (iv > c->qmax)
		return UCMD_GEN(NVME_SC_INVALID_FIELD) | UCMD_DNR;
	if (set)
		c->iv_cd[iv] = (req->cmd.cdw11 >> 16) & 1;
	req->dw0 = iv | (uint32_t)(sel == SEL_CURRENT && c->iv_cd[iv]) << 16;
	return 0;
}

uint16_t ctrl_admin_get_features(struct ucmd_ctrl *c, struct ctrl_req *req)
{
	uint8_t fid = req->cmd.cdw10 & 0xff, sel = (req->cmd.cdw10 >> 8) & 7;
	struct ctrl_feat_vals dflt;

	if (ctrl_fdp_is_feature(fid) && c->fdp)
		return ctrl_fdp_get_feature(c, req);
	if (!feats[fid].supported || sel > SEL_SUPPORTED)
		return UCMD_GEN(NVME_SC_INVALID_FIELD) | UCMD_DNR;
	if (sel == SEL_SUPPORTED) {
		req->dw0 = CAP_CHANGEABLE | (feats[fid].saveable ? CAP_SAVEABLE : 0);
		return 0;
	}
	if (fid == NVME_FEAT_FID_IRQ_CONFIG)
		return irq_config(c, req, false, sel);
	if (fid == NVME_FEAT_FID_TIMESTAMP) {
		struct nvme_timestamp ts = { 0 };
		uint64_t ms = sel == SEL_CURRENT ? timestamp_ms(c) : 0;

		memcpy(ts.timestamp, &ms, sizeof(ts.timestamp));
		/* Origin 001b when the host set it; the clock keeps running. */
		ts.attr = (sel == SEL_CURRENT && c->ts_set) ? (1 << 1) : 0;
		return ctrl_data_to_host(c, req, &ts, sizeof(ts));
	}
	ctrl_features_defaults(&dflt);
	switch (sel) {
	case SEL_DEFAULT:
		if (fid == NVME_FEAT_FID_NUM_QUEUES) {
			req->dw0 = (uint32_t)(c->qmax - 1) << 16 | (uint32_t)(c->qmax - 1);
			return 0;
		}
		return get_value(c, &dflt, fid, req->cmd.cdw11, &req->dw0);
	case SEL_SAVED:
		return get_value(c, feats[fid].saveable ? &c->saved : &dflt, fid, req->cmd.cdw11,
				 &req->dw0);
	default:
		return get_value(c, &c->cur, fid, req->cmd.cdw11, &req->dw0);
	}
}

static uint16_t set_value(struct ucmd_ctrl *c, struct ctrl_feat_vals *f, uint8_t fid, uint32_t v)
{
	switch (fid) {
	case NVME_FEAT_FID_ARBITRATION: f->arbitration = v; break;
	case NVME_FEAT_FID_POWER_MGMT:
		if ((v & 0x1f) != 0)	/* only power state 0 (NPSS = 0) */
			return UCMD_GEN(NVME_SC_INVALID_FIELD) | UCMD_DNR;
		f->power_mgmt = v & 0xff;
		break;
	case NVME_FEAT_FID_TEMP_THRESH: {
		uint8_t tmpsel = (v >> 16) & 0xf, thsel = (v >> 20) & 3;

		if (tmpsel != 0 || thsel > 1)
			return UCMD_GEN(NVME_SC_INVALID_FIELD) | UCMD_DNR;
		if (thsel)
			f->tmpth_under = v & 0xffff;
		else
			f->tmpth_over = v & 0xffff;
		break;
	}
	case NVME_FEAT_FID_ERR_RECOVERY:
		/* DULBE needs deallocated-block errors, which we do not report. */
		if (v & (1u << 16))
			return UCMD_GEN(NVME_SC_INVALID_FIELD) | UCMD_DNR;
		f->err_recovery = v & 0xffff;
		break;
	case NVME_FEAT_FID_VOLATILE_WC: f->vwc = v & 1; break;
	case NVME_FEAT_FID_IRQ_COALESCE: f->irq_coalesce = v & 0xffff; break;
	case NVME_FEAT_FID_WRITE_ATOMIC: f->write_atomic = v & 1; break;
	case NVME_FEAT_FID_ASYNC_EVENT: f->async_event = v & ctrl_aec_supported(c); break;
	case NVME_FEAT_FID_IOCS_PROFILE:
		/* IOCSCI names a combination; only index 0 (NVM and Zoned) exists */
		if (v & 0x1ff)
			return UCMD_CMD(NVME_SC_IOCS_COMBINATION_REJECTED) | UCMD_DNR;
		break;
	default: return UCMD_GEN(NVME_SC_INVALID_FIELD) | UCMD_DNR;
	}
	(void)c;
	return 0;
}

static uint16_t set_num_queues(struct ucmd_ctrl *c, struct ctrl_req *req)
{
	uint32_t nsqr = req->cmd.cdw11 & 0xffff, ncqr = req->cmd.cdw11 >> 16;

	if (nsqr == 0xffff || ncqr == 0xffff)
		return UCMD_GEN(NVME_SC_INVALID_FIELD) | UCMD_DNR;
	/* The allocation is fixed once I/O queues exist. */
	if (c->queues_created)
		return UCMD_GEN(NVME_SC_CMD_SEQ_ERROR) | UCMD_DNR;
	c->nsqa = (uint16_t)(nsqr < c->qmax - 1u ? nsqr : c->qmax - 1u);
	c->ncqa = (uint16_t)(ncqr < c->qmax - 1u ? ncqr : c->qmax - 1u);
	req->dw0 = (uint32_t)c->ncqa << 16 | c->nsqa;
	return 0;
}

uint16_t ctrl_admin_set_features(struct ucmd_ctrl *c, struct ctrl_req *req)
{
	uint8_t fid = req->cmd.cdw10 & 0xff;
	bool save = req->cmd.cdw10 & (1u << 31);
	uint16_t st;

	if (ctrl_fdp_is_feature(fid) && c->fdp)
		return save ? UCMD_CMD(NVME_SC_FEATURE_NOT_SAVEABLE) | UCMD_DNR
			    : ctrl_fdp_set_feature(c, req);
	if (!feats[fid].supported)
		return UCMD_GEN(NVME_SC_INVALID_FIELD) | UCMD_DNR;
	if (save && !feats[fid].saveable)
		return UCMD_CMD(NVME_SC_FEATURE_NOT_SAVEABLE) | UCMD_DNR;
	if (fid == NVME_FEAT_FID_NUM_QUEUES)
		return set_num_queues(c, req);
	if (fid == NVME_FEAT_FID_IRQ_CONFIG)
		return irq_config(c, req, true, SEL_CURRENT);
	if (fid == NVME_FEAT_FID_TIMESTAMP) {
		struct nvme_timestamp ts;
		uint64_t ms = 0;

		st = ctrl_data_from_host(c, req, &ts, sizeof(ts));
		if (st)
			return st;
		memcpy(&ms, ts.timestamp, sizeof(ts.timestamp));
		c->ts_host_ms = ms;
		c->ts_set_at_ns = ktime_get_ns();
		c->ts_set = true;
		return 0;
	}
	st = set_value(c, &c->cur, fid, req->cmd.cdw11);
	if (st)
		return st;
	if (save) {
		set_value(c, &c->saved, fid, req->cmd.cdw11);
		/* another controller's are kept in controller 1's state (its lock is held) */
		if (c->primary)
			c->primary->sib_saved[c->idx - 1] = c->saved;
		ctrl_persist(c);
	}
	if (fid == NVME_FEAT_FID_TEMP_THRESH && (ctrl_critical_warning(c) & NVME_SMART_CRIT_TEMPERATURE) &&
	    (c->cur.async_event & NVME_SMART_CRIT_TEMPERATURE))
		ctrl_event(c, NVME_AER_SMART, NVME_AER_SMART_TEMPERATURE_THRESHOLD,
			    NVME_LOG_LID_SMART);
	return 0;
}
