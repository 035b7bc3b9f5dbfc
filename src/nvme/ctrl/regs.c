/* SPDX-License-Identifier: MIT */
/*
 * BAR0 registers: CAP/VS are constant, CC drives enable/disable/shutdown,
 * CSTS reports them, AQA/ASQ/ACQ describe the admin queue and may only be
 * changed while the controller is disabled.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fdp.h"
#include "zns.h"

#define CC_EN(cc)	((cc) & 1u)
#define CC_CSS(cc)	(((cc) >> 4) & 7u)
#define CC_MPS(cc)	(((cc) >> 7) & 0xfu)
#define CC_AMS(cc)	(((cc) >> 11) & 7u)
#define CC_SHN(cc)	(((cc) >> UCMD_NVME_CC_SHN_SHIFT) & 3u)
#define CSS_NVM		0u
#define CSS_ALL_IOCS	6u
#define SHST_COMPLETE	(2u << UCMD_NVME_CSTS_SHST_SHIFT)
#define SHST_MASK	(3u << UCMD_NVME_CSTS_SHST_SHIFT)

void ctrl_ctrl_fatal(struct ucmd_ctrl *c)
{
	/* The host's only recourse is a controller reset. */
	c->csts |= UCMD_NVME_CSTS_CFS;
}

/* Controller Level Reset: everything the host set up after enabling is gone. */
void ctrl_ctrl_reset_locked(struct ucmd_ctrl *c)
{
	struct ctrl_req *r;

	while ((r = c->delayed)) {
		c->delayed = r->next;
		free(r);
	}
	while ((r = c->aer_reqs)) {
		c->aer_reqs = r->next;
		free(r);
	}
	c->nr_aer_reqs = 0;
	c->nr_aeq = 0;
	c->aer_masked = 0;
	ctrl_queues_free(c);
	c->nsqa = c->ncqa = (uint16_t)(c->qmax - 1);
	c->queues_created = false;
	c->cur = c->saved;
	c->ts_set = false;
	/* a Controller Level Reset closes the open zones */
	ctrl_zns_reset(c);
	/* ...and releases the persistent event log's reporting context */
	ctrl_log_dyn_reset(c);
	pthread_mutex_lock(&c->db_lock);
	memset(c->db_val, 0, 2u * (c->qmax + 1u) * sizeof(*c->db_val));
	memset(c->db_dirty, 0, 2u * (c->qmax + 1u));
	memset(c->cq_waiting, 0, c->qmax + 1u);
	memset(c->iv_cd, 0, c->qmax + 1u);	/* a feature's current value: the default again */
	__atomic_store_n(&c->db_any, false, __ATOMIC_RELAXED);
	c->db_bad_reg = 0;
	c->timer_deadline_ns = 0;
	pthread_mutex_unlock(&c->db_lock);
}

static bool ctrl_start(struct ucmd_ctrl *c)
{
	uint32_t asqs = (c->aqa & 0xfffu) + 1, acqs = ((c->aqa >> 16) & 0xfffu) + 1;
	uint32_t css = CC_CSS(c->cc);
	void *sqmem, *cqmem;

	if (asqs < 2 || acqs < 2 || asqs > c->p.mqes + 1u || acqs > c->p.mqes + 1u)
		return false;
	if (!c->asq || !c->acq || (c->asq | c->acq) & (UCMD_PAGE_SIZE - 1))
		return false;
	if (CC_MPS(c->cc) != 0 || CC_AMS(c->cc) != 0 || (css != CSS_NVM && css != CSS_ALL_IOCS))
		return false;
	sqmem = c->dma->map(c->dma, c->asq, (uint64_t)asqs * sizeof(struct ucmd_nvme_sqe));
	cqmem = c->dma->map(c->dma, c->acq, (uint64_t)acqs * sizeof(struct ucmd_nvme_cqe));
	if (!sqmem || !cqmem) {
		ctrl_ctrl_fatal(c);
		return false;
	}
	ctrl_cq_init(c, &c->cq[0], 0, c->acq, cqmem, acqs, true, 0);
	ctrl_sq_init(c, &c->sq[0], 0, c->asq, sqmem, asqs, 0);
	return true;
}

static void ctrl_shutdown(struct ucmd_ctrl *c)
{
	/*
	 * A host lets go of the device (a CLI call ends, ucmdd stops): the
	 * current feature values stay the device's until its power goes, so
	 * they are what ctrl.json keeps, not the saved ones the disable that
	 * follows brings back (docs/store.md).
	 */
	c->shn_cur = c->cur;
	c->shn_valid = true;
	for (unsigned i = 1; i <= UCMD_MAX_NS; i++)
		if (c->ns[i] && c->ns[i]->st)
			c->ns[i]->st->ops->flush(c->ns[i]->st);
	if (c->dir && ctrl_persist_save(c, true))
		ctrl_ctrl_fatal(c);
	c->csts = (c->csts & ~SHST_MASK) | SHST_COMPLETE;
}

static void write_cc(struct ucmd_ctrl *c, uint32_t val)
{
	uint32_t old = c->cc;

	c->cc = val;
	if (CC_EN(val) && !CC_EN(old)) {
		if (ctrl_start(c))
			c->csts |= UCMD_NVME_CSTS_RDY;
	} else if (!CC_EN(val) && CC_EN(old)) {
		/*
		 * After a shutdown notification the host is letting go (a CLI
		 * call ends, a daemon stops): the device stays powered for the
		 * next one, so this is not the reset that ends a short
		 * self-test, discards a download or activates firmware. A
		 * disable without one is (Linux's nvme reset: NVME_IOCTL_RESET).
		 */
		bool host_left = c->shn_valid;

		if (!host_left && c->dst.op == NVME_ST_CODE_SHORT)
			ctrl_selftest_abort(c, NVME_ST_RESULT_CLR);
		ctrl_ctrl_reset_locked(c);
		if (!host_left) {
			ctrl_fw_reset(c, false);
			ctrl_fdp_reset(c);
		}
		c->csts = 0;
	}
	if (CC_EN(val) && !CC_EN(old))
		c->shn_valid = false;	/* enabled again: its values are live */
	if (CC_SHN(val) && !CC_SHN(old))
		ctrl_shutdown(c);
	else if (!CC_SHN(val))
		c->csts &= ~SHST_MASK;
}

uint32_t ctrl_read32(struct ucmd_ctrl *c, uint32_t off)
{
	uint32_t v = 0;

	if (off & 3)
		return 0;
	pthread_mutex_lock(&c->lock);
	switch (off) {
	case UCMD_NVME_REG_CAP: v = (uint32_t)c->cap; break;
	case UCMD_NVME_REG_CAP + 4: v = (uint32_t)(c->cap >> 32); break;
	case UCMD_NVME_REG_VS: v = 0x00010400; break;
	case UCMD_NVME_REG_INTMS:
	case UCMD_NVME_REG_INTMC: v = c->intms; break;
	case UCMD_NVME_REG_CC: v = c->cc; break;
	case UCMD_NVME_REG_CSTS: v = c->csts; break;
	case UCMD_NVME_REG_AQA: v = c->aqa; break;
	case UCMD_NVME_REG_ASQ: v = (uint32_t)c->asq; break;
	case UCMD_NVME_REG_ASQ + 4: v = (uint32_t)(c->asq >> 32); break;
	case UCMD_NVME_REG_ACQ: v = (uint32_t)c->acq; break;
	case UCMD_NVME_REG_ACQ + 4: v = (uint32_t)(c->acq >> 32); break;
	default: break;	/* doorbells and reserved space read as 0 */
	}
	pthread_mutex_unlock(&c->lock);
	return v;
}

uint64_t ctrl_read64(struct ucmd_ctrl *c, uint32_t off)
{
	return ctrl_read32(c, off) | ((uint64_t)ctrl_read32(c, off + 4) << 32);
}

void ctrl_write32(struct ucmd_ctrl *c, uint32_t off, uint32_t val)
{
	bool enabled;

	if (off & 3)
		return;
	if (off >= UCMD_NVME_REG_DBS) {
		ctrl_db_write(c, off, val);
		return;
	}
	pthread_mutex_lock(&c->lock);
	/* a shutdown flushes the namespaces, a reset looks at them */
	ctrl_subsys_enter(c);
	enabled = CC_EN(c->cc);
	switch (off) {
	case UCMD_NVME_REG_INTMS: c->intms |= val; break;
	case UCMD_NVME_REG_INTMC: c->intms &= ~val; break;
	case UCMD_NVME_REG_CC: write_cc(c, val); break;
	/* The admin queue attributes are fixed while the controller runs. */
	case UCMD_NVME_REG_AQA: if (!enabled) c->aqa = val & 0x0fff0fffu; break;
	case UCMD_NVME_REG_ASQ: if (!enabled) c->asq = (c->asq & ~0xffffffffull) | val; break;
	case UCMD_NVME_REG_ASQ + 4: if (!enabled) c->asq = (c->asq & 0xffffffffull) | ((uint64_t)val << 32); break;
	case UCMD_NVME_REG_ACQ: if (!enabled) c->acq = (c->acq & ~0xffffffffull) | val; break;
	case UCMD_NVME_REG_ACQ + 4: if (!enabled) c->acq = (c->acq & 0xffffffffull) | ((uint64_t)val << 32); break;
	default: break;	/* read-only or reserved */
	}
	ctrl_subsys_leave(c);
	pthread_mutex_unlock(&c->lock);
}

void ctrl_write64(struct ucmd_ctrl *c, uint32_t off, uint64_t val)
{
	ctrl_write32(c, off, (uint32_t)val);
	ctrl_write32(c, off + 4, (uint32_t)(val >> 32));
}

int ucmd_ctrl_regs_read(struct ucmd_ctrl *c, uint32_t off, void *buf, size_t len)
{
	uint8_t *out = buf;

	if (!c || !buf || (off | len) & 3 || off > UCMD_NVME_REG_DBS ||
	    len > UCMD_NVME_REG_DBS - off)
		return -EINVAL;
	for (size_t i = 0; i < len; i += 4) {
		uint32_t v = htole32(ctrl_read32(c, off + (uint32_t)i));

		memcpy(out + i, &v, 4);
	}
	return 0;
}
