/* SPDX-License-Identifier: MIT */
/*
 * Error information log entries and asynchronous events. An event completes
 * an outstanding Async Event Request; the event type then stays masked
 * until the host reads the log page the event named (spec: "Asynchronous
 * Event Information" + RAE), which is how a host avoids event storms.
 */
#include <stdlib.h>
#include <string.h>

#include "ctrl_int.h"

void ctrl_error_record(struct ucmd_ctrl *c, uint16_t sqid, uint16_t cid, uint16_t status,
			uint32_t nsid, uint64_t lba)
{
	struct nvme_error_log_page *e = &c->errlog[c->error_count % UCMD_ERRLOG_ENTRIES];

	memset(e, 0, sizeof(*e));
	e->error_count = htole64(++c->error_count);
	e->sqid = htole16(sqid);
	e->cmdid = htole16(cid);
	/* Status field as in the CQE: bits 15:1, phase bit 0 left clear. */
	e->status_field = htole16((uint16_t)(status << 1));
	e->parm_error_location = htole16(0xffff);
	e->lba = htole64(lba);
	e->nsid = htole32(nsid);
}

void ctrl_aer_flush(struct ucmd_ctrl *c)
{
	unsigned i = 0;

	while (c->aer_reqs && i < c->nr_aeq) {
		struct ctrl_aer_event ev = c->aeq[i];
		struct ctrl_req *r;

		if (c->aer_masked & (1u << ev.type)) {
			i++;
			continue;
		}
		memmove(&c->aeq[i], &c->aeq[i + 1], (c->nr_aeq - i - 1) * sizeof(ev));
		c->nr_aeq--;
		r = c->aer_reqs;
		c->aer_reqs = r->next;
		c->nr_aer_reqs--;
		c->aer_masked |= 1u << ev.type;
		r->dw0 = ev.type | (uint32_t)ev.info << 8 | (uint32_t)ev.lid << 16;
		ctrl_post_req(c, r, 0);
	}
}

void ctrl_event(struct ucmd_ctrl *c, uint8_t type, uint8_t info, uint8_t lid)
{
	for (unsigned i = 0; i < c->nr_aeq; i++)
		if (c->aeq[i].type == type && c->aeq[i].info == info)
			goto flush;	/* already queued: one report is enough */
	if (c->nr_aeq < UCMD_AEQ_MAX)
		c->aeq[c->nr_aeq++] = (struct ctrl_aer_event){ type, info, lid };
flush:
	ctrl_aer_flush(c);
}

void ctrl_event_unmask(struct ucmd_ctrl *c, uint8_t lid)
{
	switch (lid) {
	case NVME_LOG_LID_ERROR: c->aer_masked &= ~(1u << NVME_AER_ERROR); break;
	case NVME_LOG_LID_SMART: c->aer_masked &= ~(1u << NVME_AER_SMART); break;
	case NVME_LOG_LID_ANA:
	case NVME_LOG_LID_CHANGED_NS:
	case NVME_LOG_LID_ZNS_CHANGED_ZONES: c->aer_masked &= ~(1u << NVME_AER_NOTICE); break;
	default: return;
	}
	ctrl_aer_flush(c);
}

void ctrl_ns_changed_note(struct ucmd_ctrl *c, uint32_t nsid)
{
	for (unsigned i = 0; i < c->nr_changed_ns; i++)
		if (c->changed_ns[i] == nsid)
			return;
	if (c->nr_changed_ns < UCMD_MAX_NS)
		c->changed_ns[c->nr_changed_ns++] = nsid;
	else
		c->changed_ns_overflow = true;
}

void ctrl_ns_changed(struct ucmd_ctrl *c, uint32_t nsid)
{
	ctrl_ns_changed_note(c, nsid);
	/* Only when the host asked for Namespace Attribute Notices. */
	if (c->cur.async_event & NVME_CTRL_OAES_NA)
		ctrl_event(c, NVME_AER_NOTICE, NVME_AER_NOTICE_NS_CHANGED, NVME_LOG_LID_CHANGED_NS);
}
