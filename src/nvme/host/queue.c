/* SPDX-License-Identifier: MIT */
/*
 * What every transport's queues share (the part of Linux's nvme-core that
 * its transports call): a queue's common state, the request a command id
 * names, a completion, the handshake between a timeout handler and a
 * completion, ending what a disabled controller will never complete, and
 * the I/O queues' count and tag sets. The transports (pci.c, tcp.c) call
 * into this file, never into each other.
 */
#include <errno.h>
#include <string.h>

#include "host.h"

/* What every transport's queue has; the rings or the socket come on top. */
void nvme_queue_init_common(struct nvme_host *h, struct nvme_queue *q, uint16_t qid,
			    uint32_t depth, bool polled)
{
	q->host = h;
	q->qid = qid;
	q->q_depth = depth;
	q->polled = polled;
	/* The CQ vector is the qid: one interrupt line per interrupt-driven queue. */
	q->cq_vector = polled ? 0 : qid;
	q->sq_tail = q->last_sq_tail = 0;
	q->cq_head = 0;
	q->cq_phase = 1;
	pthread_mutex_init(&q->sq_lock, NULL);
	pthread_mutex_init(&q->cq_lock, NULL);
	atomic_init(&q->cq_pending, 0);
	atomic_init(&q->stale_cqes, 0);
	atomic_init(&q->win_sub, 0);
	atomic_init(&q->win_done, 0);
}

struct request *nvme_find_rq(struct nvme_queue *q, uint16_t cid)
{
	struct blk_mq_hw_ctx *hctx = q->hctx;
	struct request *rq;

	if (!hctx || (cid & NVME_TAG_MASK) >= hctx->depth)
		return NULL;
	rq = blk_mq_tag_to_rq(hctx, cid & NVME_TAG_MASK);
	if (!rq || (unsigned)(cid >> NVME_TAG_BITS) !=
		   __atomic_load_n(&nvme_req(rq)->genctr, __ATOMIC_RELAXED))
		return NULL;
	return rq;
}

static void nvme_end_req(struct request *rq)
{
	blk_mq_end_request(rq, BLK_STS_OK);
}

void nvme_handle_cqe(struct nvme_queue *q, const struct ucmd_nvme_cqe *cqe)
{
	struct request *rq = nvme_find_rq(q, cqe->cid);
	struct nvme_request *req;

	if (!rq) {
		atomic_fetch_add(&q->stale_cqes, 1);
		return;
	}
	req = nvme_req(rq);
	/* whatever the request's state, the controller is done with the command */
	if (atomic_load_explicit(&req->win_counted, memory_order_relaxed)) {
		atomic_store_explicit(&req->win_counted, false, memory_order_relaxed);
		/* one writer: the reaper, under the queue's cq_lock */
		atomic_store_explicit(&q->win_done,
				      atomic_load_explicit(&q->win_done, memory_order_relaxed) + 1,
				      memory_order_release);
	}
	if (blk_mq_complete_request_claim(rq)) {
		req->status = ucmd_nvme_cqe_status(cqe);
		req->result = (uint64_t)cqe->dw0 | (uint64_t)cqe->dw1 << 32;
		nvme_end_req(rq);
		return;
	}
	/*
	 * The timeout handler owns the request: tell it the command is back, or,
	 * once it has handed the request off (Abort sent, connection closed),
	 * finish the request ourselves.
	 */
	for (;;) {
		int s = atomic_load_explicit(&req->tstate, memory_order_acquire);

		if (s == NVME_TO_NONE || s == NVME_TO_RUNNING) {
			if (atomic_compare_exchange_strong(&req->tstate, &s, NVME_TO_CQE_SEEN))
				return;
		} else if (s == NVME_TO_ABORT_SENT) {
			if (atomic_compare_exchange_strong(&req->tstate, &s, NVME_TO_NONE)) {
				nvme_end_req(rq);
				return;
			}
		} else {
			atomic_fetch_add(&q->stale_cqes, 1);
			return;
		}
	}
}

bool nvme_timeout_begin(struct request *rq)
{
	struct nvme_request *req = nvme_req(rq);
	int s = NVME_TO_NONE;

	nvme_req_set_flag(req, NVME_REQ_CANCELLED);
	if (atomic_compare_exchange_strong(&req->tstate, &s, NVME_TO_RUNNING))
		return true;
	nvme_end_req(rq);	/* its completion arrived meanwhile */
	return false;
}

bool nvme_timeout_hand_off(struct request *rq)
{
	int s = NVME_TO_RUNNING;

	if (atomic_compare_exchange_strong(&nvme_req(rq)->tstate, &s, NVME_TO_ABORT_SENT))
		return true;
	nvme_end_req(rq);	/* its completion came meanwhile */
	return false;
}

bool nvme_end_abandoned(struct request *rq, int err)
{
	int s = NVME_TO_ABORT_SENT;

	if (!atomic_compare_exchange_strong(&nvme_req(rq)->tstate, &s, NVME_TO_NONE))
		return false;
	blk_mq_end_request(rq, err);
	return true;
}

/* Detach or reset: the controller is disabled, nothing will complete on its own. */
void nvme_cancel_inflight(struct nvme_host *h)
{
	struct blk_mq_tag_set *sets[] = { &h->admin_set, &h->io_set, &h->poll_set };

	for (unsigned s = 0; s < 3; s++) {
		struct blk_mq_tag_set *set = sets[s];

		for (unsigned i = 0; set->hctxs && i < set->nr_hw_queues; i++) {
			struct blk_mq_hw_ctx *hctx = &set->hctxs[i];

			for (unsigned t = 0; t < hctx->depth; t++) {
				struct request *rq = hctx->rqs[t];

				if (blk_mq_complete_request_claim(rq)) {
					nvme_req_set_flag(nvme_req(rq), NVME_REQ_CANCELLED);
					nvme_end_req(rq);
				} else {
					nvme_end_abandoned(rq, BLK_STS_OK);
				}
			}
		}
	}
}

int nvme_init_hctx(struct blk_mq_hw_ctx *hctx, void *driver_data, unsigned idx)
{
	struct nvme_queue *qs = driver_data;

	hctx->driver_data = &qs[idx];
	qs[idx].hctx = hctx;
	return 0;
}

int nvme_set_queue_count(struct nvme_host *h, unsigned *count)
{
	struct ucmd_nvme_sqe c = { .opcode = nvme_admin_set_features };
	uint64_t res = 0;
	unsigned n = *count;
	int st;

	c.cdw10 = NVME_FEAT_FID_NUM_QUEUES;
	c.cdw11 = (n - 1) << 16 | (n - 1);
	st = nvme_submit_sync_cmd(h, &c, NULL, 0, &res);
	if (st < 0)
		return st;
	if (st > 0)
		return -EIO;
	unsigned nsqa = (unsigned)(res & 0xffff) + 1, ncqa = (unsigned)((res >> 16) & 0xffff) + 1;
	if (nsqa < n)
		n = nsqa;
	if (ncqa < n)
		n = ncqa;
	*count = n;
	return 0;
}

static int nvme_init_tag_set(struct nvme_host *h, struct blk_mq_tag_set *set, unsigned first,
			     unsigned nr)
{
	memset(set, 0, sizeof(*set));
	set->ops = h->ops->mq_ops;
	set->nr_hw_queues = nr;
	set->queue_depth = h->opts.queue_depth;
	set->cmd_size = sizeof(struct nvme_request);
	set->driver_data = &h->queues[first];
	set->timeout_ms = h->io_timeout_ms;
	return blk_mq_alloc_tag_set(set);
}

int nvme_create_io_queues(struct nvme_host *h)
{
	unsigned want = h->opts.nr_io_queues + h->opts.nr_poll_queues, got = want;
	int ret = nvme_set_queue_count(h, &got);

	if (ret)
		return ret;
	/* Fewer granted: interrupt-driven queues first, polled ones get the rest. */
	if (got < want) {
		if (got <= h->opts.nr_io_queues) {
			h->opts.nr_io_queues = got;
			h->opts.nr_poll_queues = 0;
		} else {
			h->opts.nr_poll_queues = got - h->opts.nr_io_queues;
		}
	}
	for (unsigned i = 1; i <= got; i++) {
		bool polled = i > h->opts.nr_io_queues;

		nvme_queue_init_common(h, &h->queues[i], (uint16_t)i, h->opts.queue_depth + 1,
				       polled);
		ret = h->ops->setup_io_queue(h, &h->queues[i]);
		if (ret)
			return ret;
		/* The interrupt handler walks the queues: publish the new one. */
		__atomic_store_n(&h->nr_queues, i + 1, __ATOMIC_RELEASE);
	}
	ret = nvme_init_tag_set(h, &h->io_set, 1, h->opts.nr_io_queues);
	if (ret)
		return ret;
	if (h->opts.nr_poll_queues)
		ret = nvme_init_tag_set(h, &h->poll_set, 1 + h->opts.nr_io_queues,
					h->opts.nr_poll_queues);
	return ret;
}
