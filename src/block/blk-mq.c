/* SPDX-License-Identifier: MIT */
/*
 * Dispatch: direct (->queue_rq, doorbell on the last) or through the
 * submitter's plug, flushed as one batch through ->queue_rqs (seed 004).
 * Also the completion claim; timeouts are in blk-timeout.c.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>

#include "block/blk.h"

static __thread struct blk_plug *current_plug;

struct blk_plug *blk_current_plug(void)
{
	return current_plug;
}

/*
 * The deadline is set before the request is marked in flight, so that the
 * timer never sees it in flight with a stale one, and the timer is armed
 * after, so that when it fires for this deadline it finds it in flight.
 */
static void blk_mq_start_request(struct request *rq)
{
	uint64_t deadline = 0;

	if (!rq->timeout_ms)
		rq->timeout_ms = rq->q->set->timeout_ms;
	if (rq->timeout_ms && rq->q->set->ops->timeout) {
		deadline = ktime_get_ns() + (uint64_t)rq->timeout_ms * NSEC_PER_MSEC;
		atomic_store_explicit(&rq->deadline_ns, deadline, memory_order_relaxed);
	}
	atomic_store_explicit(&rq->state, MQ_RQ_IN_FLIGHT, memory_order_release);
	if (deadline)
		blk_add_timer(rq, deadline);
}

/* One request straight to the driver; the driver rings the doorbell on last. */
static blk_status_t blk_mq_issue_direct(struct request *rq, bool last)
{
	struct blk_mq_hw_ctx *h = rq->hctx;
	struct blk_mq_queue_data bd = { .rq = rq, .last = last };

	blk_mq_start_request(rq);
	atomic_fetch_add_explicit(&h->nr_dispatched, 1, memory_order_relaxed);
	blk_status_t st = h->set->ops->queue_rq(h, &bd);
	if (st != BLK_STS_OK && blk_mq_complete_request_claim(rq))
		blk_mq_end_request(rq, st);
	return st;
}

void blk_execute_rq_nowait(struct request *rq, bool at_head)
{
	struct blk_plug *plug = current_plug;

	(void)at_head;
	blk_account_io_start(rq);
	if (!plug) {
		blk_mq_issue_direct(rq, true);
		atomic_fetch_add_explicit(&rq->hctx->nr_batches, 1, memory_order_relaxed);
		return;
	}
	/* Flush first if this plug is full or its last request was large. */
	if (plug->rq_count) {
		unsigned max = plug->multiple_queues ? 2 * BLK_MAX_REQUEST_COUNT
						     : BLK_MAX_REQUEST_COUNT;
		struct request *last = (struct request *)
			((char *)plug->mq_tail - offsetof(struct request, rq_next));
		if (plug->rq_count >= max || last->data_len >= BLK_PLUG_FLUSH_SIZE) {
			plug->flushes++;
			blk_mq_flush_plug_list(plug);
		}
	}
	if (!plug->rq_count)
		plug->q = rq->q;
	else if (plug->q != rq->q || plug->mq_list->hctx != rq->hctx)
		plug->multiple_queues = true;
	rq->rq_next = NULL;
	*plug->mq_tail = rq;
	plug->mq_tail = &rq->rq_next;
	plug->rq_count++;
}

void blk_start_plug(struct blk_plug *plug)
{
	plug->mq_list = NULL;
	plug->mq_tail = &plug->mq_list;
	plug->rq_count = 0;
	plug->multiple_queues = false;
	plug->q = NULL;
	plug->flushes = 0;
	plug->cur_ktime = 0;
	/* Nested plugs collapse into the outermost, as in Linux. */
	if (!current_plug)
		current_plug = plug;
}

/*
 * Issue a list one by one with one commit (doorbell) per hardware queue:
 * as Linux's blk_mq_dispatch_plug_list, the requests of one hctx are taken
 * out together (in their order), so that interleaved submissions to several
 * queues still ring each doorbell once, not once per request.
 */
static void blk_mq_dispatch_list(struct request *list)
{
	while (list) {
		struct blk_mq_hw_ctx *h = list->hctx;
		struct request *run = NULL, **run_tail = &run;
		struct request *rest = NULL, **rest_tail = &rest;

		while (list) {
			struct request *rq = list;
			list = rq->rq_next;
			rq->rq_next = NULL;
			if (rq->hctx == h) {
				*run_tail = rq;
				run_tail = &rq->rq_next;
			} else {
				*rest_tail = rq;
				rest_tail = &rq->rq_next;
			}
		}
		list = rest;
		/*
		 * Requests queued with last=false wait for a doorbell; if the
		 * run's last request then fails, ->commit_rqs rings it.
		 */
		bool pending = false;
		while (run) {
			struct request *rq = run;
			run = rq->rq_next;
			rq->rq_next = NULL;
			blk_status_t st = blk_mq_issue_direct(rq, !run);
			if (st == BLK_STS_OK)
				pending = run != NULL;
		}
		if (pending && h->set->ops->commit_rqs)
			h->set->ops->commit_rqs(h);
		atomic_fetch_add_explicit(&h->nr_batches, 1, memory_order_relaxed);
	}
}

void blk_mq_flush_plug_list(struct blk_plug *plug)
{
	struct request *list = plug->mq_list;

	if (!list)
		return;
	plug->mq_list = NULL;
	plug->mq_tail = &plug->mq_list;
	plug->rq_count = 0;
	const struct blk_mq_ops *ops = list->q->set->ops;
	if (!plug->multiple_queues && ops->queue_rqs) {
		struct blk_mq_hw_ctx *h = list->hctx;
		unsigned n = 0;
		for (struct request *rq = list; rq; rq = rq->rq_next) {
			blk_mq_start_request(rq);
			n++;
		}
		atomic_fetch_add_explicit(&h->nr_dispatched, n, memory_order_relaxed);
		atomic_fetch_add_explicit(&h->nr_batches, 1, memory_order_relaxed);
		ops->queue_rqs(&list);
		/* What the driver could not take goes the slow way. */
		for (struct request *rq = list; rq; rq = rq->rq_next) {
			atomic_store(&rq->state, MQ_RQ_IDLE);
			atomic_fetch_sub_explicit(&h->nr_dispatched, 1, memory_order_relaxed);
		}
	}
	plug->multiple_queues = false;
	blk_mq_dispatch_list(list);
}

void blk_finish_plug(struct blk_plug *plug)
{
	if (plug != current_plug)
		return;
	blk_mq_flush_plug_list(plug);
	current_plug = NULL;
}

bool blk_mq_complete_request_claim(struct request *rq)
{
	int expected = MQ_RQ_IN_FLIGHT;

	return atomic_compare_exchange_strong_explicit(&rq->state, &expected, MQ_RQ_COMPLETE,
						       memory_order_acq_rel,
						       memory_order_acquire);
}
