/* SPDX-License-Identifier: MIT */
/*
 * Requests carrying an NVMe command: allocation (with the command id
 * stamped), attaching already-checked data, release, and synchronous
 * execution for the ioctl path and the driver's own admin commands.
 */
#include <errno.h>
#include <string.h>

#include "host.h"

struct request *nvme_alloc_request_nocmd(struct request_queue *q, unsigned rq_flags,
					 unsigned blk_flags, int *err)
{
	struct request *rq = blk_mq_alloc_request(q, rq_flags, blk_flags, err);
	struct nvme_request *req;
	uint8_t gen;

	if (!rq)
		return NULL;
	req = nvme_req(rq);
	req->nvmeq = rq->hctx->driver_data;
	req->result = 0;
	req->status = 0;
	/* ours alone since the tag was taken (its acquire): no other thread looks yet */
	atomic_store_explicit(&req->flags, 0, memory_order_relaxed);
	req->dma_list = NULL;
	req->bounce = NULL;
	/* req->data is read only while has_data says it holds something. */
	req->has_data = false;
	req->sgl_only = false;
	req->dma_window = false;
	atomic_store_explicit(&req->win_counted, false, memory_order_relaxed);
	atomic_store_explicit(&req->tstate, NVME_TO_NONE, memory_order_relaxed);
	/*
	 * The command id is the tag plus a generation bumped on every use, so a
	 * CQE for an earlier life of this tag is recognised and dropped.
	 */
	gen = (uint8_t)((__atomic_load_n(&req->genctr, __ATOMIC_RELAXED) + 1) & NVME_GENCTR_MASK);
	__atomic_store_n(&req->genctr, gen, __ATOMIC_RELAXED);
	req->cmd.cid = (uint16_t)((unsigned)gen << NVME_TAG_BITS | (unsigned)rq->tag);
	return rq;
}

struct request *nvme_alloc_request(struct request_queue *q,
				   const struct ucmd_nvme_sqe *cmd, unsigned rq_flags,
				   unsigned blk_flags, int *err)
{
	struct request *rq = nvme_alloc_request_nocmd(q, rq_flags, blk_flags, err);
	struct nvme_request *req;
	uint16_t cid;

	if (!rq)
		return NULL;
	req = nvme_req(rq);
	cid = req->cmd.cid;
	req->cmd = *cmd;
	req->cmd.cid = cid;
	return rq;
}

void nvme_rq_release(struct request *rq)
{
	struct nvme_request *req = nvme_req(rq);

	nvme_unmap_data(rq);
	nvme_rq_bounce_free(rq);
	if (req->has_data)
		iov_iter_release(&req->data);
	req->has_data = false;
}

/* Linux's rule: cancelled → -EINTR, else the NVMe status, else the block error. */
int nvme_end_status(struct request *rq, blk_status_t err)
{
	struct nvme_request *req = nvme_req(rq);

	if (nvme_req_test_flag(req, NVME_REQ_CANCELLED))
		return -EINTR;
	if (req->status)
		return req->status;
	return err;
}

struct nvme_sync {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool done;
	int status;
	uint64_t result;
};

static enum rq_end_io_ret nvme_sync_end_io(struct request *rq, blk_status_t err)
{
	struct nvme_sync *s = rq->end_io_data;
	int status = nvme_rq_bounce_out(rq, nvme_end_status(rq, err));

	nvme_rq_release(rq);
	pthread_mutex_lock(&s->lock);
	s->status = status;
	s->result = nvme_req(rq)->result;
	s->done = true;
	pthread_cond_signal(&s->cond);
	pthread_mutex_unlock(&s->lock);
	return RQ_END_IO_FREE;
}

int nvme_execute_rq(struct request *rq, uint64_t *result)
{
	struct nvme_sync s = { .done = false };
	struct blk_plug *plug;

	pthread_mutex_init(&s.lock, NULL);
	pthread_cond_init(&s.cond, NULL);
	rq->end_io = nvme_sync_end_io;
	rq->end_io_data = &s;
	blk_execute_rq_nowait(rq, false);
	/* Waiting on a request parked in our own plug would never end. */
	plug = blk_current_plug();
	if (plug)
		blk_mq_flush_plug_list(plug);
	pthread_mutex_lock(&s.lock);
	while (!s.done)
		pthread_cond_wait(&s.cond, &s.lock);
	pthread_mutex_unlock(&s.lock);
	pthread_cond_destroy(&s.cond);
	pthread_mutex_destroy(&s.lock);
	if (result)
		*result = s.result;
	return s.status;
}

int nvme_submit_sync_cmd(struct nvme_host *h, struct ucmd_nvme_sqe *cmd, void *buf,
			 uint32_t len, uint64_t *result)
{
	bool write = cmd->opcode & 1;
	struct request *rq;
	int err;

	/*
	 * The controller writes what the command transfers, up to the end of
	 * each page its PRPs name: a buffer of whole pages is the one it can
	 * never overrun, whatever the command (Identify is 4 KiB whatever len
	 * says). The driver's buffers come from page_alloc().
	 */
	if (buf && len && (((uintptr_t)buf | len) & (NVME_PAGE_SIZE - 1)))
		return -EINVAL;
	rq = nvme_alloc_request(&h->admin_q, cmd, write ? REQ_OP_DRV_OUT : REQ_OP_DRV_IN, 0, &err);
	if (!rq)
		return err;
	if (buf && len) {
		struct iov_iter it;

		err = import_ubuf(write ? UCMD_WRITE : UCMD_READ, (uint64_t)(uintptr_t)buf,
				  len, &it);
		if (!err) {
			nvme_rq_set_data(rq, &it);
			err = nvme_map_data(h, rq);
		}
		if (err) {
			nvme_rq_release(rq);
			blk_mq_free_request(rq);
			return err;
		}
	}
	return nvme_execute_rq(rq, result);
}
