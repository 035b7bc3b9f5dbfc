/* SPDX-License-Identifier: MIT */
/*
 * Admin commands that manage the controller's own machinery: I/O queue
 * creation and deletion, Abort, and Asynchronous Event Request.
 */
#include <stdlib.h>

#include "ctrl_int.h"

#define CC_IOSQES(cc)	(((cc) >> 16) & 0xfu)
#define CC_IOCQES(cc)	(((cc) >> 20) & 0xfu)

uint16_t ctrl_admin_create_cq(struct ucmd_ctrl *c, struct ctrl_req *req)
{
	uint16_t qid = req->cmd.cdw10 & 0xffff;
	uint32_t size = (req->cmd.cdw10 >> 16) + 1;
	bool pc = req->cmd.cdw11 & 1, ien = req->cmd.cdw11 & 2;
	uint16_t iv = req->cmd.cdw11 >> 16;
	uint64_t base = req->cmd.dptr.prp1;
	void *mem;

	/* queue memory outlives the command: never from a windowed one (ctrl.h) */
	if (ctrl_dma_windowed(c, req))
		return UCMD_GEN(NVME_SC_DATA_XFER_ERROR) | UCMD_DNR;
	if (CC_IOCQES(c->cc) != 4)
		return UCMD_GEN(NVME_SC_INVALID_FIELD) | UCMD_DNR;
	if (!qid || qid > c->ncqa + 1u || c->cq[qid].valid)
		return UCMD_CMD(NVME_SC_QID_INVALID) | UCMD_DNR;
	if (size < 2 || size > c->p.mqes + 1u)
		return UCMD_CMD(NVME_SC_QUEUE_SIZE) | UCMD_DNR;
	/* CAP.CQR: only physically contiguous queues. */
	if (!pc)
		return UCMD_GEN(NVME_SC_INVALID_FIELD) | UCMD_DNR;
	if (iv > c->qmax)
		return UCMD_CMD(NVME_SC_INVALID_VECTOR) | UCMD_DNR;
	if (!base || (base & (UCMD_PAGE_SIZE - 1)))
		return UCMD_GEN(NVME_SC_PRP_INVALID_OFFSET) | UCMD_DNR;
	mem = c->dma->map(c->dma, base, (uint64_t)size * sizeof(struct ucmd_nvme_cqe));
	if (!mem)
		return UCMD_GEN(NVME_SC_DATA_XFER_ERROR) | UCMD_DNR;
	ctrl_cq_init(c, &c->cq[qid], qid, base, mem, size, ien, iv);
	c->queues_created = true;
	return 0;
}

uint16_t ctrl_admin_create_sq(struct ucmd_ctrl *c, struct ctrl_req *req)
{
	uint16_t qid = req->cmd.cdw10 & 0xffff;
	uint32_t size = (req->cmd.cdw10 >> 16) + 1;
	bool pc = req->cmd.cdw11 & 1;
	uint16_t cqid = req->cmd.cdw11 >> 16;
	uint64_t base = req->cmd.dptr.prp1;
	void *mem;

	/* queue memory outlives the command: never from a windowed one (ctrl.h) */
	if (ctrl_dma_windowed(c, req))
		return UCMD_GEN(NVME_SC_DATA_XFER_ERROR) | UCMD_DNR;
	if (CC_IOSQES(c->cc) != 6)
		return UCMD_GEN(NVME_SC_INVALID_FIELD) | UCMD_DNR;
	if (!cqid || cqid > c->qmax || !c->cq[cqid].valid)
		return UCMD_CMD(NVME_SC_CQ_INVALID) | UCMD_DNR;
	if (!qid || qid > c->nsqa + 1u || c->sq[qid].valid)
		return UCMD_CMD(NVME_SC_QID_INVALID) | UCMD_DNR;
	if (size < 2 || size > c->p.mqes + 1u)
		return UCMD_CMD(NVME_SC_QUEUE_SIZE) | UCMD_DNR;
	if (!pc)
		return UCMD_GEN(NVME_SC_INVALID_FIELD) | UCMD_DNR;
	if (!base || (base & (UCMD_PAGE_SIZE - 1)))
		return UCMD_GEN(NVME_SC_PRP_INVALID_OFFSET) | UCMD_DNR;
	mem = c->dma->map(c->dma, base, (uint64_t)size * sizeof(struct ucmd_nvme_sqe));
	if (!mem)
		return UCMD_GEN(NVME_SC_DATA_XFER_ERROR) | UCMD_DNR;
	ctrl_sq_init(c, &c->sq[qid], qid, base, mem, size, cqid);
	c->queues_created = true;
	return 0;
}

uint16_t ctrl_admin_delete_sq(struct ucmd_ctrl *c, struct ctrl_req *req)
{
	uint16_t qid = req->cmd.cdw10 & 0xffff;

	if (!qid || qid > c->qmax || !c->sq[qid].valid)
		return UCMD_CMD(NVME_SC_QID_INVALID) | UCMD_DNR;
	ctrl_sq_delete(c, qid);
	return 0;
}

uint16_t ctrl_admin_delete_cq(struct ucmd_ctrl *c, struct ctrl_req *req)
{
	uint16_t qid = req->cmd.cdw10 & 0xffff;

	if (!qid || qid > c->qmax || !c->cq[qid].valid)
		return UCMD_CMD(NVME_SC_QID_INVALID) | UCMD_DNR;
	/* SQs must go first: their completions would have nowhere to go. */
	if (c->cq[qid].nr_sqs)
		return UCMD_CMD(NVME_SC_INVALID_QUEUE) | UCMD_DNR;
	ctrl_cq_delete(c, qid);
	return 0;
}

uint16_t ctrl_admin_abort(struct ucmd_ctrl *c, struct ctrl_req *req)
{
	uint16_t sqid = req->cmd.cdw10 & 0xffff, cid = req->cmd.cdw10 >> 16;

	/* DW0 bit 0 clear: the command was aborted; set: it was not found. */
	req->dw0 = ctrl_abort_req(c, sqid, cid) ? 0 : 1;
	return 0;
}

uint16_t ctrl_admin_aer(struct ucmd_ctrl *c, struct ctrl_req *req)
{
	struct ctrl_req **pp = &c->aer_reqs;

	if (c->nr_aer_reqs > UCMD_AERL)
		return UCMD_CMD(NVME_SC_ASYNC_LIMIT) | UCMD_DNR;
	while (*pp)
		pp = &(*pp)->next;
	req->next = NULL;
	*pp = req;
	c->nr_aer_reqs++;
	ctrl_aer_flush(c);
	return UCMD_DEFERRED;
}
