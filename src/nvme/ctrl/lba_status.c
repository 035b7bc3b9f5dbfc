/* SPDX-License-Identifier: MIT */
/*
 * Get LBA Status (86h) and the LBA Status Information log (0Eh): where the
 * host finds the blocks that would fail a read. This controller's media
 * never decays; the only blocks that read as Unrecovered Read Error are the
 * ones the host marked with Write Uncorrectable, which it tracks exactly
 * (each namespace's range table), so both action types report them:
 * 10h (scan) finds just what 11h (tracked) lists.
 */
#include <stdlib.h>
#include <string.h>

#include "lib/crc32c.h"
#include "ctrl_int.h"

#define ATYPE_SCAN	0x10
#define ATYPE_TRACKED	0x11
#define CMPC_MORE	1	/* more descriptors than MNDW leaves room for */
#define CMPC_ALL	2	/* the whole range, every descriptor */
#define DESC_NLB_MAX	0xffffffffull	/* a descriptor's NLB is 32 bits */

/* Descriptors for the marks inside [slba, end): n of them, the first max filled */
static uint64_t lba_descs(const struct ctrl_ranges *rs, uint64_t slba, uint64_t end,
			  struct nvme_lba_status_desc *d, uint64_t max)
{
	uint64_t n = 0;

	for (size_t i = 0; i < rs->n; i++) {
		uint64_t s = rs->r[i].slba, e = s + rs->r[i].nlb;

		if (e <= slba || s >= end)
			continue;
		s = s < slba ? slba : s;
		e = e > end ? end : e;
		while (s < e) {
			uint64_t nlb = e - s > DESC_NLB_MAX ? DESC_NLB_MAX : e - s;

			if (n < max) {
				d[n].dslba = htole64(s);
				d[n].nlb = htole32((uint32_t)nlb);
			}
			n++;
			s += nlb;
		}
	}
	return n;
}

uint16_t ctrl_admin_get_lba_status(struct ucmd_ctrl *c, struct ctrl_req *req)
{
	uint64_t slba = (uint64_t)req->cmd.cdw11 << 32 | req->cmd.cdw10;
	uint64_t len = ((uint64_t)req->cmd.cdw12 + 1) * 4;	/* MNDW, 0's based */
	uint32_t rl = req->cmd.cdw13 & 0xffff;
	uint8_t atype = req->cmd.cdw13 >> 24;
	struct ctrl_ns *ns = ctrl_ns_active(c, req->cmd.nsid);
	struct nvme_lba_status *h;
	uint64_t end, max, n, built;
	uint16_t st;

	if (!ns)
		return UCMD_GEN(NVME_SC_INVALID_NS) | UCMD_DNR;
	if (atype != ATYPE_SCAN && atype != ATYPE_TRACKED)
		return UCMD_GEN(NVME_SC_INVALID_FIELD) | UCMD_DNR;
	if (slba >= ns->nsze)
		return UCMD_GEN(NVME_SC_LBA_RANGE) | UCMD_DNR;
	/* RL 0: no limit, through the namespace's last block */
	end = rl && slba + rl < ns->nsze ? slba + rl : ns->nsze;
	max = len < sizeof(*h) ? 0 : (len - sizeof(*h)) / sizeof(struct nvme_lba_status_desc);
	/* a whole table's worth at most: what does not fit is counted, not built */
	if (max > UCMD_MAX_UNCOR_RANGES)
		max = UCMD_MAX_UNCOR_RANGES;
	h = calloc(1, sizeof(*h) + max * sizeof(struct nvme_lba_status_desc));
	if (!h)
		return UCMD_GEN(NVME_SC_INTERNAL);
	n = lba_descs(&ns->uncor, slba, end, h->descs, max);
	h->nlsd = htole32((uint32_t)(n < max ? n : max));
	h->cmpc = n > max ? CMPC_MORE : CMPC_ALL;
	built = sizeof(*h) + max * sizeof(h->descs[0]);
	st = ctrl_data_to_host(c, req, h, len < built ? len : built);
	free(h);
	return st;
}

/*
 * The log: one namespace element per active namespace with marks, whose
 * range descriptors cover them (the host asks Get LBA Status about each,
 * with the action type the element recommends).
 */
uint16_t ctrl_log_lba_status(struct ucmd_ctrl *c, const struct ctrl_req *req, uint8_t **buf,
			      size_t *size)
{
	struct nvme_lba_status_log *l;
	uint64_t unrec = 0, len = sizeof(*l);
	uint32_t nel = 0, crc = 0;
	uint8_t *p;

	(void)req;
	for (uint32_t i = 1; i <= UCMD_MAX_NS; i++) {
		struct ctrl_ns *ns = ctrl_ns_active(c, i);
		uint64_t n;

		if (!ns || !ns->uncor.n)
			continue;
		n = lba_descs(&ns->uncor, 0, ns->nsze, NULL, 0);
		len += sizeof(struct nvme_lbas_ns_element) + n * sizeof(struct nvme_lba_rd);
	}
	p = calloc(1, len);
	if (!p)
		return UCMD_GEN(NVME_SC_INTERNAL);
	l = (void *)p;
	p += sizeof(*l);
	for (uint32_t i = 1; i <= UCMD_MAX_NS; i++) {
		struct ctrl_ns *ns = ctrl_ns_active(c, i);
		struct nvme_lbas_ns_element *el = (void *)p;
		uint32_t nrd = 0;

		if (!ns || !ns->uncor.n)
			continue;
		el->neid = htole32(i);
		crc = crc32c(crc, &i, sizeof(i));
		crc = crc32c(crc, ns->uncor.r, ns->uncor.n * sizeof(ns->uncor.r[0]));
		el->ratype = ATYPE_TRACKED;
		for (size_t k = 0; k < ns->uncor.n; k++) {
			uint64_t s = ns->uncor.r[k].slba, left = ns->uncor.r[k].nlb;

			unrec += left;
			while (left) {
				uint64_t nlb = left > DESC_NLB_MAX ? DESC_NLB_MAX : left;

				el->lba_rd[nrd].rslba = htole64(s);
				el->lba_rd[nrd].rnlb = htole32((uint32_t)nlb);
				nrd++;
				s += nlb;
				left -= nlb;
			}
		}
		el->nlrd = htole32(nrd);
		p += sizeof(*el) + nrd * sizeof(struct nvme_lba_rd);
		nel++;
	}
	l->lslplen = htole32((uint32_t)len);
	l->nlslne = htole32(nel);
	l->estulb = htole32(unrec > 0xffffffffu ? 0xffffffffu : (uint32_t)unrec);
	/*
	 * The generation is the log's content folded to 16 bits: it changes
	 * when the content does, and a controller made again from the same
	 * state (a new process) reports the same one for the same log.
	 */
	l->lsgc = htole16((uint16_t)(crc ^ crc >> 16));
	*buf = (uint8_t *)l;
	*size = len;
	return 0;
}
